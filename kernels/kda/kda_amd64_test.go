//go:build amd64 && gc && !purego

package kda

import (
	"math"
	"testing"

	"github.com/ktune/ktune/internal/cpu"
)

// TestExpAVX512 holds the vector exp within 2 ulp of math.Exp over the
// range KDA gates use (and past it: clamping, subnormals, zero).
func TestExpAVX512(t *testing.T) {
	if !cpu.Has(cpu.AVX512F) {
		t.Skip("needs avx512f")
	}
	var src []float32
	for x := -110.0; x <= 90; x += 0.0137 {
		src = append(src, float32(x))
	}
	src = append(src, 0, -0, 1e-30, -1e-30, -1000, 1000)
	dst := make([]float32, len(src))
	vexp(dst, src)
	for i, x := range src {
		want := math.Exp(float64(x))
		got := float64(dst[i])
		if want > math.MaxFloat32 {
			want = math.Inf(1)
		}
		tol := 2.5e-7 * want
		if math.IsInf(want, 1) {
			if !math.IsInf(got, 1) {
				t.Fatalf("exp(%v) = %v, want +Inf", x, got)
			}
			continue
		}
		if want < 1.2e-38 { // subnormal results: absolute error
			tol = 1.5e-45 * 4
		}
		if math.IsNaN(got) || math.Abs(got-want) > tol {
			t.Fatalf("exp(%v) = %v, want %v (error %g)", x, got, want, math.Abs(got-want)/want)
		}
	}
}
