package kda

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestLog1p: within 0.51 ulp of log(1+y) on [0, 1], tiny y and 1 included.
func TestLog1p(t *testing.T) {
	worst, at := 0.0, float32(0)
	check := func(y float32) {
		want := math.Log1p(float64(y))
		got := float64(log1p(y))
		if want == 0 {
			if got != 0 {
				t.Fatalf("log1p(0) = %g", got)
			}
			return
		}
		w32 := float32(want)
		ulp := float64(math.Nextafter32(w32, 2) - w32)
		if e := math.Abs(got-want) / ulp; e > worst || math.IsNaN(e) {
			worst, at = e, y
		}
	}
	for y := float32(0); y <= 1; y = math.Nextafter32(y, 2)*1.00003 + 0 {
		check(y)
		if y == 0 {
			y = math.SmallestNonzeroFloat32
			check(y)
		}
	}
	check(1)
	if !(worst <= 0.51) {
		t.Fatalf("log1p: %.3f ulp at y = %g", worst, at)
	}
}

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
