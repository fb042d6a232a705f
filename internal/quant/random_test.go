package quant

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ktune/ktune/internal/kernel"
)

func TestRandom(t *testing.T) {
	for _, c := range []struct {
		dt     kernel.DType
		hasMin bool
	}{{kernel.F32, false}, {kernel.BF16, false}, {kernel.Q8, false}, {kernel.Q4, false}, {kernel.Q4, true}} {
		n, k := 37, 100 // a partial panel and a partial group
		m, err := Random(rand.New(rand.NewPCG(1, 2)), c.dt, n, k, c.hasMin, 0.1)
		if err != nil {
			t.Fatal(err)
		}
		w := m.Dequantize()
		var sum, sq float64
		for _, v := range w {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("%s: non-finite weight", c.dt)
			}
			sum += float64(v)
			sq += float64(v) * float64(v)
		}
		mean, sd := sum/float64(len(w)), math.Sqrt(sq/float64(len(w)))
		if math.Abs(mean) > 0.02 || sd < 0.07 || sd > 0.13 {
			t.Errorf("%s min=%v: mean %.4f sd %.4f, want ≈ 0 and ≈ 0.1", c.dt, c.hasMin, mean, sd)
		}
		if c.dt == kernel.Q8 || (c.dt == kernel.Q4 && !c.hasMin) {
			// padded rows dequantize to zero
			row := make([]float32, m.Kp)
			for r := n; r < m.Np; r++ {
				m.DequantizeRow(r, row)
				for _, v := range row {
					if v != 0 {
						t.Fatalf("%s: padded row %d not zero", c.dt, r)
					}
				}
			}
		}
	}
}
