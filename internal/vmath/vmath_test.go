package vmath

import (
	"math"
	"testing"

	"github.com/ktune/ktune/internal/cpu"
)

// TestExp holds Exp within 2 ulp of math.Exp on every ISA path (masking
// the wider ones), including tails, overflow and underflow.
func TestExp(t *testing.T) {
	var src []float32
	for x := -110.0; x <= 90; x += 0.0137 {
		src = append(src, float32(x))
	}
	src = append(src, 0, -0, 1e-30, -1e-30, -1000, 1000, -87.4, 88.5)
	for _, mask := range [][]cpu.Feature{nil, {cpu.AVX512F}, {cpu.AVX512F, cpu.AVX2}, {cpu.ASIMD}} {
		restore := cpu.Disable(mask...)
		for _, n := range []int{len(src), 1, 7, 8, 15, 17} {
			dst := make([]float32, n)
			Exp(dst, src[len(src)-n:])
			for i, x := range src[len(src)-n:] {
				want := math.Exp(float64(x))
				got := float64(dst[i])
				if want > math.MaxFloat32 {
					if !math.IsInf(got, 1) {
						t.Fatalf("mask %v: exp(%v) = %v, want +Inf", mask, x, got)
					}
					continue
				}
				tol := 2.5e-7 * want
				if want < 1.2e-38 {
					tol = 1.2e-38 // subnormal range: absolute
				}
				if math.IsNaN(got) || math.Abs(got-want) > tol {
					t.Fatalf("mask %v: exp(%v) = %v, want %v", mask, x, got, want)
				}
			}
		}
		restore()
	}
}

func TestDotAxpy(t *testing.T) {
	a := []float32{1, 2, 3, 4, 5, 6, 7}
	b := []float32{7, 6, 5, 4, 3, 2, 1, 99}
	if got := Dot(a, b); got != 84 {
		t.Errorf("Dot = %v, want 84", got)
	}
	y := []float32{1, 1, 1}
	Axpy(2, a, y)
	if y[0] != 3 || y[1] != 5 || y[2] != 7 {
		t.Errorf("Axpy = %v", y)
	}
}
