//go:build arm64 && gc && !purego

// arm64 compute ceilings: NEON and SVE f32 FMA, NEON BF16 (BFDOT, BFMMLA)
// and SVE BFDOT throughput kernels (peak_arm64.s) for the roofline.
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

// bf16DotNEON runs iters rounds of 24 independent BFDOT chains (vector
// form: 4 f32 lanes += 2 BF16 products each, 16 FLOPs per instruction) of
// 1.0·1.0 and returns the last chain's lane 0, which equals 2·iters
// (exactly, up to 2²⁴):
//
//	for i < iters, c < 24, l < 4: acc[c][l] += a[2l]*b[2l] + a[2l+1]*b[2l+1]
//
//go:noescape
func bf16DotNEON(iters int) float32

// bf16MMLANEON is bf16DotNEON with BFMMLA (a 2×4 by 4×2 BF16 matrix
// product into 2×2 f32, 32 FLOPs per instruction); lane 0 of the last
// chain equals 4·iters:
//
//	for i < iters, c < 24, r < 2, s < 2: acc[c][2r+s] += Σ_{j<4} a[4r+j]*b[4s+j]
//
//go:noescape
func bf16MMLANEON(iters int) float32

// bf16DotSVE is bf16DotNEON with SVE's BFDOT (vector form) at the full
// vector length (bits/32 lanes, 4 FLOPs each); lane 0 of the last chain
// equals 2·iters.
//
//go:noescape
func bf16DotSVE(iters int) float32

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
