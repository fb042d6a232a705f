//go:build (amd64 || arm64) && gc && !purego

// The MLA decode driver shared by the assembly variants of every ISA
// (amd64 AVX-512, arm64 NEON and SVE): 4×4 score tiles and 4-head latent
// accumulation at R = 512, DR = 64.
package mla

import (
	"math"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/vmath"
)

const (
	asmR = 512 // the assembly kernels' latent width
	asmW = 576 // and row width (R + DR)
)

// scoresFn: for h < nh, j < nk: s[h*lds+j] = scale * Σ_{d<576} q[h*576+d]*k[j*576+d]
// (nh, nk multiples of 4).
type scoresFn func(q *float32, k *float32, s *float32, lds int, nh int, nk int, scale float32)

// accumFn: for h < nh, d < 512: z[h*512+d] = corr[h]*z[h*512+d] + Σ_{j<nk} pt[j*ldpt+h]*v[j*576+d]
// (nh a multiple of 4).
type accumFn func(z *float32, pt *float32, v *float32, corr *float32, nh int, nk int, ldpt int)

// decodeAsm is decodeGeneric with the two inner products in assembly
// (scores: see mlaScoresAVX512_576, accum: mlaAccumAVX512_576); shapes
// other than R = 512, DR = 64 with a multiple of 4 heads take the generic
// path.
func decodeAsm(d *Decode, threads int, prm kernel.Values, scores scoresFn, accum accumFn) {
	if d.R != asmR || d.R+d.DR != asmW || d.NH%4 != 0 {
		decodeGeneric(d, threads, prm)
		return
	}
	kb, split := max(prm["kb"], 4), max(prm["split"], 1)
	kb = (kb + 3) &^ 3
	NH, B := d.NH, len(d.Caches)
	items := B * split
	ms := make([]float32, items*NH)
	ls := make([]float32, items*NH)
	zs := make([]float32, items*NH*asmR)
	for i := range ms {
		ms[i] = float32(math.Inf(-1))
	}
	forRanges(threads, items, func(_, lo, hi int) {
		tile := make([]float32, kb*asmW)
		s := make([]float32, NH*kb)
		pt := make([]float32, kb*NH)
		corr := make([]float32, NH)
		for it := lo; it < hi; it++ {
			b, sp := it/split, it%split
			c := d.Caches[b]
			n := c.Len()
			j0, j1 := n*sp/split, n*(sp+1)/split
			q := d.Q[b*NH*asmW:]
			m, l, z := ms[it*NH:(it+1)*NH], ls[it*NH:(it+1)*NH], zs[it*NH*asmR:(it+1)*NH*asmR]
			for k0 := j0; k0 < j1; k0 += kb {
				cnt := min(kb, j1-k0)
				pad := (cnt + 3) &^ 3
				rows, ok := c.View(k0, pad)
				if !ok || pad != cnt {
					c.Block(k0, cnt, tile)
					clear(tile[cnt*asmW : pad*asmW])
					rows = tile
				}
				scores(&q[0], &rows[0], &s[0], kb, NH, pad, d.Scale)
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
				accum(&z[0], &pt[0], &rows[0], &corr[0], NH, cnt, NH)
			}
		}
	})
	parts := make([]softmaxState, items*NH)
	for i := range parts {
		parts[i] = softmaxState{m: ms[i], l: ls[i], acc: zs[i*asmR : (i+1)*asmR]}
	}
	for b := 0; b < B; b++ {
		for h := 0; h < NH; h++ {
			mergeInto(d.Z[(b*NH+h)*asmR:(b*NH+h+1)*asmR], parts, b*split, split, NH, h)
		}
	}
}
