//go:build arm64 && gc && !purego

// arm64 stub and dispatch of the hand-written NEON exp.
package vmath

import "github.com/ktune/ktune/internal/cpu"

// expNEON computes exp elementwise for the first len(src) rounded down to a
// multiple of 4 elements, for inputs in [−87.3, 88.3] (clamped outside; the
// algorithm of expAVX2); the caller finishes the tail:
//
//	for i := 0; i < len(src)&^3; i++ { dst[i] = float32(math.Exp(float64(src[i]))) }
//
//go:noescape
func expNEON(dst, src []float32)

// expAsm runs the NEON kernel on the bulk of src and returns how many
// elements it did; outside the clamp range it keeps exp's semantics.
func expAsm(dst, src []float32) int {
	if !cpu.Has(cpu.ASIMD) {
		return 0
	}
	return clampedExp(dst, src, 4)
}

// clampKernel is clampedExp's kernel: NEON (len(src) a multiple of 4).
func clampKernel(dst, src []float32) { expNEON(dst, src) }

func dotAsm(a, b []float32) (float32, int)                         { return 0, 0 }
func axpyAsm(alpha float32, x, y []float32) int                    { return 0 }
func scaleAsm(alpha float32, x []float32) int                      { return 0 }
func scaleMulAsm(dst []float32, alpha float32, a, b []float32) int { return 0 }
func mulAddAsm(dst, a, b []float32) int                            { return 0 }

func softplusAsm(dst, src []float32, scale float32) int { return 0 }

func actAsm(mode int, dst, src, u []float32) int { return 0 }
