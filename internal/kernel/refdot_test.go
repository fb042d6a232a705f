package kernel

import (
	"math/rand/v2"
	"testing"
)

// Dot64x4 gives each sum the bits of Dot64 (the references must not change
// with the blocking).
func TestDot64x4(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 7, 333} {
		v := func() []float32 {
			a := make([]float32, n)
			for i := range a {
				a[i] = float32(r.NormFloat64() * 1e3)
			}
			return a
		}
		w, x0, x1, x2, x3 := v(), v(), v(), v(), v()
		s0, s1, s2, s3 := Dot64x4(w, x0, x1, x2, x3)
		for i, p := range [][2]float64{{s0, Dot64(x0, w)}, {s1, Dot64(x1, w)}, {s2, Dot64(x2, w)}, {s3, Dot64(x3, w)}} {
			if p[0] != p[1] {
				t.Errorf("n=%d sum %d: %v, Dot64 %v", n, i, p[0], p[1])
			}
		}
	}
}
