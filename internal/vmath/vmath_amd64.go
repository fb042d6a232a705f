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

// dotAsm sums the bulk of a·b on the widest vectors and returns the sum
// and how many elements it did.
func dotAsm(a, b []float32) (float32, int) {
	switch {
	case cpu.Has(cpu.AVX512F):
		return dotAVX512(a, b), len(a) &^ 15
	case cpu.HasAll(cpu.NewSet(cpu.AVX2, cpu.FMA)):
		return dotAVX2(a, b), len(a) &^ 7
	}
	return 0, 0
}

// axpyAsm does y += alpha·x on the bulk and returns how many elements it did.
func axpyAsm(alpha float32, x, y []float32) int {
	switch {
	case cpu.Has(cpu.AVX512F):
		axpyAVX512(alpha, x, y)
		return len(y) &^ 15
	case cpu.HasAll(cpu.NewSet(cpu.AVX2, cpu.FMA)):
		axpyAVX2(alpha, x, y)
		return len(y) &^ 7
	}
	return 0
}

// mulAddAsm does dst += a⊙b on the bulk and returns how many elements it did.
func mulAddAsm(dst, a, b []float32) int {
	switch {
	case cpu.Has(cpu.AVX512F):
		mulAddAVX512(dst, a, b)
		return len(dst) &^ 15
	case cpu.Has(cpu.AVX2):
		mulAddAVX2(dst, a, b)
		return len(dst) &^ 7
	}
	return 0
}

// scaleAsm does x ·= alpha on the bulk and returns how many elements it did.
func scaleAsm(alpha float32, x []float32) int {
	switch {
	case cpu.Has(cpu.AVX512F):
		scaleAVX512(alpha, x)
		return len(x) &^ 15
	case cpu.Has(cpu.AVX2):
		scaleAVX2(alpha, x)
		return len(x) &^ 7
	}
	return 0
}

// scaleMulAsm does dst = dst·alpha·a·b on the bulk and returns how many
// elements it did.
func scaleMulAsm(dst []float32, alpha float32, a, b []float32) int {
	switch {
	case cpu.Has(cpu.AVX512F):
		scaleMulAVX512(dst, alpha, a, b)
		return len(dst) &^ 15
	case cpu.Has(cpu.AVX2):
		scaleMulAVX2(dst, alpha, a, b)
		return len(dst) &^ 7
	}
	return 0
}

// softplusAsm runs softplusAVX512 on the bulk of src (a multiple of 16
// elements) and returns how many it did.
func softplusAsm(dst, src []float32, scale float32) int {
	if !cpu.Has(cpu.AVX512F) {
		return 0
	}
	softplusAVX512(dst, src, scale)
	return len(src) &^ 15
}

// actAsm runs an activation's AVX-512 kernel on the bulk of src (a
// multiple of 16 elements) and returns how many it did; without AVX-512
// the Go loop (over vector exp) does them all.
func actAsm(mode int, dst, src, u []float32) int {
	if !cpu.Has(cpu.AVX512F) {
		return 0
	}
	n := len(src) &^ 15
	if n == 0 {
		return 0
	}
	switch mode {
	case actSigmoid:
		sigmoidAVX512(dst[:n], src[:n])
	case actSiLU:
		siluAVX512(dst[:n], src[:n])
	default:
		siluMulAVX512(dst[:n], src[:n], u[:n])
	}
	return n
}
