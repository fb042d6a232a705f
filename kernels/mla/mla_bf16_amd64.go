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

// decodeAVX512BF16 is decodeAsm over BF16 rows and queries (decodeTiles
// with mlaScoresAVX512BF16_576 and mlaAccumAVX512BF16_576); shapes other
// than R = 512, DR = 64 with a multiple of 4 heads take the generic path
// (f32, so more accurate than the class asks).
func decodeAVX512BF16(d *Decode, threads int, prm kernel.Values) {
	if d.R != asmR || d.R+d.DR != asmW || d.NH%4 != 0 {
		decodeGeneric(d, threads, prm)
		return
	}
	qb := make([]uint16, len(d.Q)) // len(d.Q) = B·NH·576, a multiple of 32
	mlaToBF16AVX512BF16(&qb[0], &d.Q[0], len(d.Q))
	decodeTiles(d, qb, threads, prm, bf16Rows, mlaScoresAVX512BF16_576, mlaAccumAVX512BF16_576)
}

// bf16Rows: a BF16 cache in place (or copied, for a block that crosses a
// page or needs padding), an f32 cache rounded from its pages in place,
// a q8 cache dequantised into ftile and rounded.
func bf16Rows(c *Cache, k0, cnt, pad int, tile []uint16, ftile []float32) []uint16 {
	if c.DType == kernel.BF16 {
		if rows, ok := c.ViewBF16(k0, pad); ok && pad == cnt {
			return rows
		}
		c.BlockBF16(k0, cnt, tile)
	} else {
		src, ok := c.View(k0, cnt)
		if !ok {
			c.Block(k0, cnt, ftile)
			src = ftile
		}
		mlaToBF16AVX512BF16(&tile[0], &src[0], cnt*asmW) // asmW = 18·32
	}
	clear(tile[cnt*asmW : pad*asmW])
	return tile
}
