//go:build (amd64 || arm64) && gc && !purego

// The MLA decode driver shared by the assembly variants of every ISA
// (amd64 AVX-512, AVX512_BF16 and AVX2, arm64 NEON, NEON BF16 and SVE):
// score tiles of 4 heads × 4 tokens (AVX2: 4 × 2) and 4-head latent
// accumulation at R = 512, DR = 64, over f32 rows or (the bf16act
// variants, AVX512_BF16 and NEON BF16) BF16 rows.
package mla

import (
	"math"
	"unsafe"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/scratch"
	"github.com/ktune/ktune/internal/vmath"
)

const (
	asmR = 512 // the assembly kernels' latent width
	asmW = 576 // and row width (R + DR)
)

// scoresFn: for h < nh, j < nk: s[h*lds+j] = scale * Σ_{d<576} q[h*576+d]*k[j*576+d]
// (nh, nk multiples of 4; the driver pads every key block to a multiple of
// 4 tokens, which covers any kernel whose token tile divides 4). T is the
// element type of queries and rows: float32, or uint16 for BF16.
type scoresFn[T float32 | uint16] func(q *T, k *T, s *float32, lds int, nh int, nk int, scale float32)

// accumFn: for h < nh, d < 512: z[h*512+d] = corr[h]*z[h*512+d] + Σ_{j<nk} pt[j*ldpt+h]*v[j*576+d]
// (nh a multiple of 4).
type accumFn[T float32 | uint16] func(z *float32, pt *float32, v *T, corr *float32, nh int, nk int, ldpt int)

// rowsFn returns cache rows [k0, k0+cnt) of c as asmW-wide rows of T,
// padded with zero rows to pad tokens: in place when it can, else in
// tile (pad·asmW values; ftile, the same in f32, is scratch for
// conversions).
type rowsFn[T float32 | uint16] func(c *Cache, k0, cnt, pad int, tile []T, ftile []float32, conv toBF16Fn) []T

// f32Rows: an F32 cache in place, any other through Cache.Block.
func f32Rows(c *Cache, k0, cnt, pad int, tile []float32, _ []float32, _ toBF16Fn) []float32 {
	if rows, ok := c.View(k0, pad); ok && pad == cnt {
		return rows
	}
	c.Block(k0, cnt, tile)
	clear(tile[cnt*asmW : pad*asmW])
	return tile
}

// toBF16Fn rounds n f32 values (n a multiple of 32) to BF16, nearest
// even: for i < n: dst[i] = bf16(src[i]). The bf16act variants convert
// with their ISA's instruction (VCVTNE2PS2BF16, BFCVTN).
type toBF16Fn func(dst *uint16, src *float32, n int)

// bf16Rows returns the rowsFn of a bf16act variant: a BF16 cache in place
// (or copied, for a block that crosses a page or needs padding), an f32
// cache rounded from its pages in place, a q8 cache dequantised into
// ftile and rounded, all by conv.
func bf16Rows(c *Cache, k0, cnt, pad int, tile []uint16, ftile []float32, conv toBF16Fn) []uint16 {
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
		conv(&tile[0], &src[0], cnt*asmW) // asmW = 18·32
	}
	clear(tile[cnt*asmW : pad*asmW])
	return tile
}

// decodeBF16 is decodeAsm for a bf16act variant: q̃ and q_pe rounded to
// BF16 once per call (conv), BF16 cache rows from bf16Rows(conv), scores
// and latent accumulation over BF16 rows. Shapes other than R = 512,
// DR = 64 with a multiple of 4 heads take the generic path (f32, so more
// accurate than the class asks).
func decodeBF16(d *Decode, threads int, prm kernel.Values, conv toBF16Fn, scores scoresFn[uint16], accum accumFn[uint16]) {
	if d.R != asmR || d.R+d.DR != asmW || d.NH%4 != 0 {
		decodeGeneric(d, threads, prm)
		return
	}
	n := len(d.Caches) * d.NH * asmW // a multiple of 32
	qbuf := scratch.Get(n / 2)
	defer scratch.Put(qbuf)
	qb := unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(qbuf))), n)
	conv(&qb[0], &d.Q[0], n)
	decodeTiles(d, qb, threads, prm, bf16Rows, conv, scores, accum)
}

// decodeAsm is decodeGeneric with the two inner products in assembly
// (scores: see mlaScoresAVX512_576, accum: mlaAccumAVX512_576, or their
// AVX2 and NEON twins); shapes other than R = 512, DR = 64 with a multiple
// of 4 heads take the generic path.
func decodeAsm(d *Decode, threads int, prm kernel.Values, scores scoresFn[float32], accum accumFn[float32]) {
	if d.R != asmR || d.R+d.DR != asmW || d.NH%4 != 0 {
		decodeGeneric(d, threads, prm)
		return
	}
	decodeTiles(d, d.Q, threads, prm, f32Rows, nil, scores, accum)
}

// decodeTiles runs the key-block loop of decodeAsm for queries q (d.Q in
// the element type T) and rows from rows (R = 512, DR = 64, NH%4 == 0).
func decodeTiles[T float32 | uint16](d *Decode, q []T, threads int, prm kernel.Values, rows rowsFn[T], conv toBF16Fn, scores scoresFn[T], accum accumFn[T]) {
	kb, split := max(prm["kb"], 4), max(prm["split"], 1)
	kb = (kb + 3) &^ 3
	NH, B := d.NH, len(d.Caches)
	items := B * split
	// the buffers come from internal/scratch: fresh ones were hundreds of
	// KiB of page faults per layer and token
	ms, ls, zs := scratch.Get(items*NH), scratch.Zeroed(items*NH), scratch.Zeroed(items*NH*asmR)
	defer scratch.Put(ms, ls, zs)
	for i := range ms {
		ms[i] = float32(math.Inf(-1))
	}
	pl := tilesPool[T]()
	t := pl.GetOr(newTilesTask[T])
	t.d, t.q, t.kb, t.split, t.rows, t.conv, t.scores, t.accum = d, q, kb, split, rows, conv, scores, accum
	t.ms, t.ls, t.zs = ms, ls, zs
	forRanges(threads, items, t.body)
	parts := t.parts[:0]
	for i := 0; i < items*NH; i++ {
		parts = append(parts, softmaxState{m: ms[i], l: ls[i], acc: zs[i*asmR : (i+1)*asmR]})
	}
	for b := 0; b < B; b++ {
		for h := 0; h < NH; h++ {
			mergeInto(d.Z[(b*NH+h)*asmR:(b*NH+h+1)*asmR], parts, b*split, split, NH, h)
		}
	}
	clear(parts)
	*t = tilesTask[T]{parts: parts[:0], body: t.body}
	pl.Put(t)
}

// tilesTask is decodeTiles' call, pooled with its loop body bound once,
// so that a call allocates nothing.
type tilesTask[T float32 | uint16] struct {
	d          *Decode
	q          []T
	kb, split  int
	rows       rowsFn[T]
	conv       toBF16Fn
	scores     scoresFn[T]
	accum      accumFn[T]
	ms, ls, zs []float32
	parts      []softmaxState
	body       func(w, lo, hi int)
}

var (
	tilesF32  scratch.Keep[*tilesTask[float32]]
	tilesBF16 scratch.Keep[*tilesTask[uint16]]
)

// tilesPool is the pool of tilesTask[T].
func tilesPool[T float32 | uint16]() *scratch.Keep[*tilesTask[T]] {
	var z T
	if _, ok := any(z).(float32); ok {
		return any(&tilesF32).(*scratch.Keep[*tilesTask[T]])
	}
	return any(&tilesBF16).(*scratch.Keep[*tilesTask[T]])
}

func newTilesTask[T float32 | uint16]() *tilesTask[T] {
	t := &tilesTask[T]{}
	t.body = t.run
	return t
}

// run walks work items [lo, hi) (sequence, context range).
func (t *tilesTask[T]) run(_, lo, hi int) {
	d, q, kb, split := t.d, t.q, t.kb, t.split
	NH := d.NH
	tbuf := scratch.Get(kb * asmW) // T is at most 4 bytes
	defer scratch.Put(tbuf)
	tile := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(tbuf))), kb*asmW)
	var ftile []float32
	if _, bf := any(tile).([]uint16); bf {
		ftile = scratch.Get(kb * asmW)
		defer scratch.Put(ftile)
	}
	s, pt, corr := scratch.Get(NH*kb), scratch.Get(kb*NH), scratch.Get(NH)
	defer scratch.Put(s, pt, corr)
	for it := lo; it < hi; it++ {
		b, sp := it/split, it%split
		c := d.Caches[b]
		n := c.Len()
		j0, j1 := n*sp/split, n*(sp+1)/split
		qb := q[b*NH*asmW:]
		m, l, z := t.ms[it*NH:(it+1)*NH], t.ls[it*NH:(it+1)*NH], t.zs[it*NH*asmR:(it+1)*NH*asmR]
		for k0 := j0; k0 < j1; k0 += kb {
			cnt := min(kb, j1-k0)
			pad := (cnt + 3) &^ 3
			rows := t.rows(c, k0, cnt, pad, tile, ftile, t.conv)
			t.scores(&qb[0], &rows[0], &s[0], kb, NH, pad, d.Scale)
			for h := 0; h < NH; h++ {
				row := s[h*kb : h*kb+cnt]
				mx := m[h]
				for _, x := range row {
					mx = max(mx, x)
				}
				for j := range row {
					row[j] -= mx
				}
				vmath.Exp(row, row)
				var sum float32
				for j, p := range row {
					sum += p
					pt[j*NH+h] = p
				}
				cr := float32(math.Exp(float64(m[h] - mx)))
				corr[h] = cr
				l[h] = l[h]*cr + sum
				m[h] = mx
			}
			t.accum(&z[0], &pt[0], &rows[0], &corr[0], NH, cnt, NH)
		}
	}
}
