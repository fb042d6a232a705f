package kda

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSoftplusGate compares the gate with float64 arithmetic for head
// widths that do and do not divide the 128-element chunk, so that each
// element takes its own head's −exp(A_log).
func TestSoftplusGate(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, D := range []int{1, 7, 48, 128, 200} {
		H := 5
		f, bias, negA := make([]float32, H*D), make([]float32, H*D), make([]float32, H)
		for i := range f {
			f[i] = float32(r.NormFloat64() * 6)
			bias[i] = float32(r.NormFloat64())
		}
		for h := range negA {
			negA[h] = -float32(h + 1)
		}
		want := make([]float64, len(f))
		for i, x := range f {
			z := float64(x) + float64(bias[i])
			want[i] = float64(negA[i/D]) * (math.Max(z, 0) + math.Log1p(math.Exp(-math.Abs(z))))
		}
		softplusGate(f, bias, negA, D)
		for i, g := range f {
			if e := math.Abs(float64(g) - want[i]); !(e <= 1e-5*math.Max(1, math.Abs(want[i]))) {
				t.Fatalf("D=%d: element %d (head %d): %g, want %g", D, i, i/D, g, want[i])
			}
		}
	}
}
