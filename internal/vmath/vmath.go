// Package vmath holds vectorised elementwise math shared by the kernel
// families (exp for softmax, gates and decays), dispatched on the effective
// CPU features at call time.
package vmath

import "math"

// Exp writes exp(src[i]) into dst[i] (len(dst) ≥ len(src)), within 2 ulp
// of math.Exp for src ∈ [−87.3, 88.3]. Beyond that range the AVX-512 path
// follows exp (overflow to +Inf, gradual underflow to 0) and the AVX2 path
// clamps to the range's ends (the NEON path clamps too, and Go redoes
// the elements outside the range with math.Exp); callers use it for x ≤ 0 (decays, softmax
// with the maximum subtracted), where both agree with exp to within
// 1.2e-38.
func Exp(dst, src []float32) {
	dst = dst[:len(src)]
	done := expAsm(dst, src)
	for i := done; i < len(src); i++ {
		dst[i] = float32(math.Exp(float64(src[i])))
	}
}
