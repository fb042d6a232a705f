//go:build (amd64 || arm64) && gc && !purego

// The strip driver shared by the assembly recurrences of every ISA
// (amd64 AVX2/AVX-512, arm64 NEON): the asm runs the strips of whole
// vectors, Go the V mod strip tail columns; the predicated arm64 SVE
// kernel runs the tail too (recurrentCols).
package kda

import (
	"strconv"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/vmath"
)

type stripsFn func(s *float32, lds, k int, alpha, kk, qs, v *float32, beta float32, o *float32, nstrips int)

// recurrentAsm is recurrentGeneric with the strips of whole vectors in
// assembly; the V mod strip tail columns go through the generic strip code.
func recurrentAsm(fns map[int]stripsFn) headFn {
	return func(o, state, q, k, v, g, beta []float32, T, K, V, sq, sv, sb int, scale float32, prm kernel.Values, scratch *[]float32) {
		strip := prm["strip"]
		fn := fns[strip]
		if fn == nil {
			panic("kda: no strip kernel of width " + strconv.Itoa(strip))
		}
		recurrentStrips(fn, strip, o, state, q, k, v, g, beta, T, K, V, sq, sv, sb, scale, scratch)
	}
}

func recurrentStrips(fn stripsFn, strip int, o, state, q, k, v, g, beta []float32, T, K, V, sq, sv, sb int, scale float32, scratch *[]float32) {
	nfull := V / strip
	tail := V - nfull*strip
	recurrentTokens(o, state, q, k, v, g, beta, T, K, V, sq, sv, sb, scale, scratch, func(alpha, kt, qs, vt, ot []float32, b float32) {
		if nfull > 0 {
			fn(&state[0], V, K, &alpha[0], &kt[0], &qs[0], &vt[0], b, &ot[0], nfull)
		}
		if tail > 0 {
			j0 := nfull * strip
			for left := tail; left > 0; left -= min(left, 64) {
				w := min(left, 64)
				tailStrip(state, alpha, kt, qs, vt, ot, b, K, V, j0, w)
				j0 += w
			}
		}
	})
}

// colsFn is a predicated (SVE) recurrence: one KDA token on columns
// [0, ncols) of the state in strips of strip columns, the last one
// partial; strip is capped by the kernel at what its registers hold.
type colsFn func(s *float32, lds, k int, alpha, kk, qs, v *float32, beta float32, o *float32, ncols, strip int)

// recurrentCols is recurrentGeneric with every column, the V mod strip
// tail included, in a predicated kernel.
func recurrentCols(fn colsFn) headFn {
	return func(o, state, q, k, v, g, beta []float32, T, K, V, sq, sv, sb int, scale float32, prm kernel.Values, scratch *[]float32) {
		strip := prm["strip"]
		if strip <= 0 {
			panic("kda: strip width " + strconv.Itoa(strip))
		}
		recurrentTokens(o, state, q, k, v, g, beta, T, K, V, sq, sv, sb, scale, scratch, func(alpha, kt, qs, vt, ot []float32, b float32) {
			fn(&state[0], V, K, &alpha[0], &kt[0], &qs[0], &vt[0], b, &ot[0], V, strip)
		})
	}
}

// recurrentTokens runs step on each token with the decays alpha = exp(g)
// and the scaled query qs = scale·q.
func recurrentTokens(o, state, q, k, v, g, beta []float32, T, K, V, sq, sv, sb int, scale float32, scratch *[]float32,
	step func(alpha, kt, qs, vt, ot []float32, b float32)) {
	buf := grow(scratch, 2*K+3*16)
	alpha, qs := buf[:K], buf[K:2*K]
	_ = state[K*V-1]
	for t := 0; t < T; t++ {
		qt, kt, gt := q[t*sq:t*sq+K], k[t*sq:t*sq+K], g[t*sq:t*sq+K]
		vt, ot, b := v[t*sv:t*sv+V], o[t*sv:t*sv+V], beta[t*sb]
		vmath.Exp(alpha, gt)
		for i := range qs {
			qs[i] = scale * qt[i]
		}
		step(alpha, kt, qs, vt, ot, b)
	}
}

// tailStrip runs both phases on columns [j0, j0+w) (w ≤ 64) in Go.
func tailStrip(state, alpha, kt, qs, vt, ot []float32, b float32, K, V, j0, w int) {
	var p, u, oo [64]float32
	for i := 0; i < K; i++ {
		row := state[i*V+j0 : i*V+j0+w]
		for j := range row {
			row[j] *= alpha[i]
			p[j] += kt[i] * row[j]
		}
	}
	for j := 0; j < w; j++ {
		u[j] = b * (vt[j0+j] - p[j])
	}
	for i := 0; i < K; i++ {
		row := state[i*V+j0 : i*V+j0+w]
		for j := range row {
			row[j] += kt[i] * u[j]
			oo[j] += qs[i] * row[j]
		}
	}
	copy(ot[j0:j0+w], oo[:w])
}
