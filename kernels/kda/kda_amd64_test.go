//go:build amd64 && gc && !purego

package kda

import (
	"math"
	"testing"

	"github.com/ktune/ktune/internal/cpu"
)

// TestVectorExp holds the vector exps within 2 ulp of math.Exp over the
// range KDA gates use and past it (AVX-512: overflow to Inf, subnormals,
// zero; AVX2: clamped to [−87.3, 88.3] as documented).
func TestVectorExp(t *testing.T) {
	for _, tc := range []struct {
		name   string
		need   cpu.Feature
		fn     func(dst, src []float32)
		lo, hi float64
	}{
		{"avx512", cpu.AVX512F, vexp512, math.Inf(-1), math.Inf(1)},
		{"avx2", cpu.AVX2, vexp2, -87.3, 88.3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !cpu.Has(tc.need) {
				t.Skipf("needs %s", tc.need)
			}
			var src []float32
			for x := -110.0; x <= 90; x += 0.0137 {
				src = append(src, float32(x))
			}
			src = append(src, 0, -0, 1e-30, -1e-30, -1000, 1000)
			dst := make([]float32, len(src))
			tc.fn(dst, src)
			for i, x := range src {
				xc := math.Min(math.Max(float64(x), float64(float32(tc.lo))), float64(float32(tc.hi)))
				want := math.Exp(xc)
				got := float64(dst[i])
				if want > math.MaxFloat32 {
					if !math.IsInf(got, 1) {
						t.Fatalf("exp(%v) = %v, want +Inf", x, got)
					}
					continue
				}
				tol := 2.5e-7 * want
				if want < 1.2e-38 { // subnormal results: absolute error
					tol = 6e-45
				}
				if math.IsNaN(got) || math.Abs(got-want) > tol {
					t.Fatalf("exp(%v) = %v, want %v (relative error %g)", x, got, want, math.Abs(got-want)/want)
				}
			}
		})
	}
}
