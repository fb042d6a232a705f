//go:build arm64 && gc && !purego

// arm64 compute ceilings: NEON and SVE f32 FMA throughput kernels
// (peak_arm64.s) for the roofline.
package roofline

import "github.com/ktune/ktune/internal/cpu"

// fmaNEON runs iters rounds of 24 independent 4-lane FMLA chains
// (acc += 1·1) and returns the last chain's lane 0, which equals iters
// (exactly, up to 2²⁴).
//
//go:noescape
func fmaNEON(iters int) float32

// fmaSVE is fmaNEON with 24 SVE FMLA chains of the full vector length.
//
//go:noescape
func fmaSVE(iters int) float32

// PeakFMANEON runs the NEON FMA ceiling kernel for iters rounds and
// returns the f32 FLOPs it executed (time it to get FLOP/s).
func PeakFMANEON(iters int) float64 {
	fmaNEON(iters)
	return float64(iters) * 24 * 4 * 2
}

// PeakFMASVE runs the SVE FMA ceiling kernel (vector-length agnostic) and
// returns the FLOPs executed; ok is false (nothing run) without SVE.
func PeakFMASVE(iters int) (flops float64, ok bool) {
	info := cpu.Get()
	if !cpu.Has(cpu.SVE) || info.SVEBits == 0 {
		return 0, false
	}
	fmaSVE(iters)
	return float64(iters) * 24 * float64(info.SVEBits/32) * 2, true
}
