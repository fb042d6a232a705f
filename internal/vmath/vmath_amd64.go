//go:build amd64 && gc && !purego

package vmath

import (
	"math"

	"github.com/ktune/ktune/internal/cpu"
)

// expAsm runs the widest available kernel on the bulk of src and returns
// how many elements it did.
func expAsm(dst, src []float32) int {
	switch {
	case cpu.Has(cpu.AVX512F):
		expAVX512(dst, src)
		return len(src) &^ 15
	case cpu.HasAll(cpu.NewSet(cpu.AVX2, cpu.FMA)):
		n := len(src) &^ 7
		expAVX2(dst, src)
		for i := 0; i < n; i++ { // the AVX2 kernel clamps: keep exp's semantics outside its range
			if x := src[i]; x < -87.3 || x > 88.3 {
				dst[i] = float32(math.Exp(float64(x)))
			}
		}
		return n
	}
	return 0
}
