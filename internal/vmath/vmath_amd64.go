//go:build amd64 && gc && !purego

package vmath

import "github.com/ktune/ktune/internal/cpu"

// expAsm runs the widest available kernel on the bulk of src and returns
// how many elements it did.
func expAsm(dst, src []float32) int {
	switch {
	case cpu.Has(cpu.AVX512F):
		expAVX512(dst, src)
		return len(src) &^ 15
	case cpu.HasAll(cpu.NewSet(cpu.AVX2, cpu.FMA)):
		// the AVX2 kernel clamps: keep exp's semantics outside its range
		return clampedExp(dst, src, 8)
	}
	return 0
}

// clampKernel is clampedExp's kernel: AVX2 (len(src) a multiple of 8).
func clampKernel(dst, src []float32) { expAVX2(dst, src) }
