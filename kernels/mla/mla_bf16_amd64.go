//go:build amd64 && gc && !purego

// amd64 driver of the generated AVX512_BF16 MLA decode kernels
// (mla_avx512bf16_amd64.s, from _asm/mla -isa avx512bf16): class bf16act.
// q̃ and q_pe are rounded to BF16 once per call; the cache rows must be
// BF16: a BF16 cache is read in place, an f32 cache is rounded key block
// by key block into a scratch tile (VCVTNE2PS2BF16), a q8 cache is
// dequantised and then rounded. Scores are VDPBF16PS dot products (f32
// accumulation); the latent accumulation widens the same BF16 rows to f32
// (exact) and uses f32 FMAs. So with an f32 cache both the keys and the
// values are seen at BF16 precision: the same as a BF16 cache.
package mla

import (
	"github.com/ktune/ktune/internal/kernel"
)

// decodeAVX512BF16 is decodeBF16 (mla_asm.go) with mlaToBF16AVX512BF16,
// mlaScoresAVX512BF16_576 and mlaAccumAVX512BF16_576.
func decodeAVX512BF16(d *Decode, threads int, prm kernel.Values) {
	decodeBF16(d, threads, prm, mlaToBF16AVX512BF16, mlaScoresAVX512BF16_576, mlaAccumAVX512BF16_576)
}
