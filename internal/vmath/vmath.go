// Package vmath holds vectorised elementwise math shared by the kernel
// families (exp for softmax, gates and decays), dispatched on the effective
// CPU features at call time.
package vmath

import "math"

// Exp writes exp(src[i]) into dst[i] (len(dst) ≥ len(src)), within 2 ulp
// of math.Exp for src ∈ [−87.3, 88.3]. Outside that range it follows exp
// (overflow to +Inf, gradual underflow to 0): the AVX-512 kernel itself,
// the AVX2 and NEON kernels (which clamp) by redoing those elements with
// math.Exp.
func Exp(dst, src []float32) {
	dst = dst[:len(src)]
	done := expAsm(dst, src)
	for i := done; i < len(src); i++ {
		dst[i] = float32(math.Exp(float64(src[i])))
	}
}
