//go:build arm64 && gc && !purego

// arm64 stubs and registration of the hand-written NEON BF16 MLA decode
// kernels (mla_neonbf16_arm64.s, FEAT_BF16): class bf16act, the twin of
// amd64's avx512_bf16 on the same driver (decodeBF16, mla_asm.go). q̃ and
// q_pe are rounded to BF16 once per call; a BF16 cache is read in place,
// an f32 cache is rounded key block by key block (BFCVTN, nearest even
// under Go's FPCR: the same bits as the cache's own rounding, so an f32
// cache gives exactly what the BF16 cache of the same tokens gives), a
// q8 cache dequantised and then rounded. Scores are BFDOT dot products
// (f32 accumulation; BFDOT without FEAT_EBF16 rounds its intermediate
// sums to odd and flushes denormals, < 1 f32 ulp per addition, far below
// the BF16 rounding of q and k); the latent accumulation widens the same
// BF16 rows exactly to f32 (SHLL #16) and uses f32 FMLA.
package mla

import (
	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/kernel"
)

// mlaScoresNEONBF16_576 computes scaled dot products of nh BF16 query rows
// with nk BF16 key rows, both of stride 576 (nh and nk multiples of 4), by
// BFDOT:
//
//	for h < nh, j < nk: s[h*lds+j] = scale * Σ_{d<576} bf16(q[h*576+d])*bf16(k[j*576+d])
//
//go:noescape
func mlaScoresNEONBF16_576(q *uint16, k *uint16, s *float32, lds int, nh int, nk int, scale float32)

// mlaAccumNEONBF16_576 rescales and accumulates nh latent outputs z
// (stride 512, nh a multiple of 4) from nk BF16 value rows v (stride 576),
// widened exactly to f32, with the probabilities transposed, pt[j*ldpt+h]:
//
//	for h < nh, d < 512: z[h*512+d] = corr[h]*z[h*512+d] + Σ_{j<nk} pt[j*ldpt+h]*bf16(v[j*576+d])
//
//go:noescape
func mlaAccumNEONBF16_576(z *float32, pt *float32, v *uint16, corr *float32, nh int, nk int, ldpt int)

// mlaToBF16NEONBF16 rounds n f32 values (n a multiple of 16) to BF16 by
// BFCVTN/BFCVTN2 (the FPCR's rounding: nearest even, denormals kept, NaNs
// quieted, as half.F32ToBF16):
//
//	for i < n: dst[i] = bf16(src[i])
//
//go:noescape
func mlaToBF16NEONBF16(dst *uint16, src *float32, n int)

func init() {
	kb := kernel.Param{Name: "kb", Doc: "keys per block", Values: []int{16, 32, 64, 128}, Default: 64}
	// Class bf16act (opt-in), as amd64's avx512_bf16.
	register(OpDecode, kernel.Variant{Name: "neon_bf16", Doc: "hand-written NEON BF16 (FEAT_BF16): BF16 queries and rows (a BF16 cache in place, others rounded per key block by BFCVTN), BFDOT 4×4 score tiles, BF16 rows widened by SHLL for the f32-FMLA latent accumulation (WORD-encoded; R=512, DR=64; other widths run the generic code)",
		Priority: 22, Class: kernel.ClassBF16Act, Requires: cpu.NewSet(cpu.ASIMD, cpu.BF16),
		Threaded: true, Params: []kernel.Param{kb, splitParam}}, decodeFn(decodeNEONBF16))
}

// decodeNEONBF16 is decodeBF16 (mla_asm.go) over the NEON BF16 kernels.
func decodeNEONBF16(d *Decode, threads int, prm kernel.Values) {
	decodeBF16(d, threads, prm, mlaToBF16NEONBF16, mlaScoresNEONBF16_576, mlaAccumNEONBF16_576)
}
