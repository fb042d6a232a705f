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

// TestFillRandom: FillRandom's weights have mean 0 and the asked standard
// deviation in every format (a partial panel and group included), no
// stored code is the unbalanced u = 0, each other code is about equally
// frequent (zero twice as often), and padded rows and columns are zero.
func TestFillRandom(t *testing.T) {
	for _, c := range []struct {
		dt     kernel.DType
		hasMin bool
		bits   int // of a stored code (0: a float format)
	}{{kernel.F32, false, 0}, {kernel.BF16, false, 0}, {kernel.Q8, false, 8}, {kernel.Q4, false, 4},
		{kernel.Q4, true, 4}, {kernel.Q3, false, 3}, {kernel.Q6, false, 6}, {kernel.Q5, false, 5}, {kernel.Q2, false, 2}} {
		n, k := 300, 1000 // a partial panel and a partial group
		m, err := New(c.dt, n, k, c.hasMin)
		if err != nil {
			t.Fatal(err)
		}
		for p := 0; p < m.Panels(); p += 3 { // three panels per source, as a synthetic file is drawn
			FillRandom(rand.New(rand.NewPCG(7, uint64(p))), m, p, min(p+3, m.Panels()), 0.1)
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
		if math.Abs(mean) > 0.0015 || math.Abs(sd/0.1-1) > 0.03 {
			t.Errorf("%s min=%v: mean %.5f sd %.4f, want 0 and 0.1", c.dt, c.hasMin, mean, sd)
		}
		row := make([]float32, m.Kp)
		for r := 0; r < m.Np; r++ {
			m.DequantizeRow(r, row)
			for j, v := range row {
				if (r >= n || j >= k) && v != 0 {
					t.Fatalf("%s: padded weight (%d, %d) is %v", c.dt, r, j, v)
				}
			}
		}
		if c.bits == 0 {
			continue
		}
		count := make([]int, 1<<c.bits)
		gb := m.GroupBytes()
		for p := 0; p < m.Panels(); p++ {
			for g := 0; g < m.Groups(); g++ {
				rec := m.Panel(p)[g*gb : (g+1)*gb]
				for pr := 0; pr < PanelRows; pr++ {
					for j := 0; j < GroupK && g*GroupK+j < k; j++ {
						var u int
						switch c.dt {
						case kernel.Q8:
							u = int(rec[q8Offset(pr, j)])
						case kernel.Q4:
							u = nibble(rec, pr, j)
						case kernel.Q3:
							u = q3At(rec, pr, j)
						case kernel.Q6:
							u = q6At(rec, pr, j)
						case kernel.Q5:
							u = q5At(rec, pr, j)
						case kernel.Q2:
							u = q2At(rec, pr, j)
						}
						count[u]++
					}
				}
			}
		}
		total := m.Np * k
		zero := 1 << (c.bits - 1)
		for u, got := range count {
			want := float64(total) / float64(len(count))
			switch {
			case c.dt == kernel.Q2: // uniform codes about the offset 1.5
			case u == 0:
				want = 0
			case u == zero:
				want *= 2
			}
			if math.Abs(float64(got)-want) > 6*math.Sqrt(want)+0.5 {
				t.Errorf("%s: code %d stored %d times, want about %.0f", c.dt, u, got, want)
			}
		}
	}
}
