// Per-group scale choice for Q8 and Q4: max-abs, and a search that
// minimises the (importance-weighted) squared error.

package quant

import (
	"math"

	"github.com/ktune/ktune/internal/half"
)

// A group's scale (and min) is chosen one of two ways.
//
// Max-abs (round to nearest under the scale the extremes give):
//
//	Q8:          d = max|w|/127,                q = round(w/d) ∈ [−127, 127]
//	Q4:          d = −(the w of largest |w|)/8, q = round(w/d) ∈ [−8, 7]   (ggml Q4_0)
//	Q4 with min: d = (max−min)/15, m = min,     q = round((w−m)/d) ∈ [0, 15]  (ggml Q4_1)
//
// Search (QuantizeWeighted): the max-abs scale is the first candidate; then, as
// ggml's make_qx_quants and make_qkx2_quants do for its K-quants, a grid of
// inverse scales around it (for Q4 without a min, both orientations: the
// largest |w| at −8 and at +7) each gives integers l = clamp(round(w/s)),
// and for those integers the least-squares scale (and min),
//
//	d = Σ iₖ·w·l / Σ iₖ·l²
//	(d, m) = argmin Σ iₖ·(w − d·l − m)²                              (with a min)
//
// whose error Σ iₖ·w² − d·Σ iₖ·w·l (− m·Σ iₖ·w) ranks the candidate (iₖ:
// the importance of input channel k, 1 by default). The best few are
// rounded to f16 and quantized again with the stored scale, q =
// clamp(round(w/d)) (the nearest integer in range, optimal for that d),
// and one least-squares refit of those integers is tried as well. A
// candidate replaces max-abs only if its weighted squared error, computed
// on the values the packed data represents, is strictly smaller, so the
// search is never worse than max-abs on any group, and a group max-abs
// represents exactly keeps its max-abs scale and integers. A group whose
// max-abs scale overflows f16 keeps it (the caller reports the overflow).

// The grids, inverse scales in units of 1/ref (ref: max|w| for Q8, the w
// of largest |w| for Q4, max−min for Q4 with a min). Halving them loses
// little (Gaussian rows: Q8 9.7% → 7.9% lower error, Q4 5.9% → 5.8%,
// Q4 with a min 9.9% → 9.5%) and gains little time: the exact evaluations
// of the chosen candidates cost as much as the grid.
var (
	q8Grid  = gridSteps(127.5, -1, 0, 6) // 127.5 … 121.5
	q4GridA = gridSteps(-8, -0.2, -4, 4) // largest |w| at −7.2 … −8.8
	q4GridB = gridSteps(7, 0.2, -4, 2)   // largest |w| at +6.2 … +7.4
	q4mGrid = gridSteps(14, 0.2, 0, 10)  // max−min over 14 … 16 steps
)

// slack is how far (in steps) beyond the integer range a candidate may
// put a weight: half a step for Q8 and Q4 with a min, one for Q4 — the
// worst case of max-abs itself (Q4's range is asymmetric), so the search
// keeps every weight's error within max-abs's bound.
const (
	slackQ8    = 0.5
	slackQ4    = 1
	slackQ4Min = 0.5
)

func gridSteps(base, step float32, from, to int) []float32 {
	var g []float32
	for i := from; i <= to; i++ {
		g = append(g, base+step*float32(i))
	}
	return g
}

// ones is the uniform importance of a group.
var ones = func() (o [GroupK]float32) {
	for i := range o {
		o[i] = 1
	}
	return
}()

// rne rounds x (|x| < 2²²) to the nearest integer, ties to even, as
// math.RoundToEven does, with one float32 addition (ggml's nearest_int).
func rne(x float32) int32 {
	const magic = 12582912 // 1.5·2²³
	return int32(math.Float32bits(x+magic)&0x7fffff) - 0x400000
}

// qSym is the integer a group stores for w under the scale d, whose
// inverse is id = 1/d: the nearest to w·id in [lo, hi]. Packing and every
// error evaluation use it, so the error the search ranks is the packed one.
func qSym(w, id, lo, hi float32) int32 { return rne(min(max(w*id, lo), hi)) }

// better reports whether error e beats best by more than float32
// accumulation can blur (a relative 1e-5), so that a search's choice is
// also better in exact arithmetic.
func better(e, best float32) bool { return e < best*(1-1e-5) }

// finiteF16 reports whether an f16 is finite.
func finiteF16(h uint16) bool { return h&0x7c00 != 0x7c00 }

// symError is Σ wt·(x − d·q)² for the q that Q8/Q4 store under the f16
// scale dh, and whether every x/d lies within slack of [lo, hi].
func symError(x, wt *[GroupK]float32, dh uint16, lo, hi, slack float32) (float32, bool) {
	d := half.F16ToF32(dh)
	if d == 0 {
		var e float32
		for i, v := range x {
			e += wt[i] * v * v
		}
		return e, true
	}
	id := 1 / d
	var e0, e1 float32
	tlo, thi := lo-slack, hi+slack
	out := false
	for i := 0; i < GroupK; i += 2 {
		t0, t1 := x[i]*id, x[i+1]*id
		out = out || t0 < tlo || t0 > thi || t1 < tlo || t1 > thi
		r0 := x[i] - d*float32(rne(min(max(t0, lo), hi)))
		r1 := x[i+1] - d*float32(rne(min(max(t1, lo), hi)))
		e0 += wt[i] * r0 * r0
		e1 += wt[i+1] * r1 * r1
	}
	return e0 + e1, !out
}

// rankSym returns Σ wt·x·l and Σ wt·l² for l = clamp(round(x·is), lo, hi)
// (|x·is| < 2²²).
func rankSym(x, wt *[GroupK]float32, is float32, lo, hi int32) (float32, float32) {
	var a0, a1, b0, b1 float32
	for i := 0; i < GroupK; i += 2 {
		v0, v1 := x[i], x[i+1]
		l0 := float32(min(max(rne(v0*is), lo), hi))
		l1 := float32(min(max(rne(v1*is), lo), hi))
		w0, w1 := wt[i]*l0, wt[i+1]*l1
		a0 += w0 * v0
		a1 += w1 * v1
		b0 += w0 * l0
		b1 += w1 * l1
	}
	return a0 + a1, b0 + b1
}

// scaleSym chooses the f16 scale of a symmetric group, w ≈ d·q with q ∈
// [lo, hi]: max-abs d0, or (search) the best of d0 and the grids'
// least-squares scales.
func scaleSym(x, wt *[GroupK]float32, search bool, d0, ref float32, lo, hi int32, slack float32, grids ...[]float32) uint16 {
	best := half.F32ToF16(d0)
	if !search || d0 == 0 || !finiteF16(best) {
		return best
	}
	flo, fhi := float32(lo), float32(hi)
	bestErr, _ := symError(x, wt, best, flo, fhi, slack)
	if bestErr == 0 {
		return best
	}
	var cand [2]float32 // the two best least-squares scales
	var score [2]float32
	for _, g := range grids {
		for _, f := range g {
			sxl, sll := rankSym(x, wt, f/ref, lo, hi)
			if !(sll > 0) {
				continue
			}
			// the least-squares error is Σ wt·x² − sxl²/sll
			switch s := sxl * sxl / sll; {
			case s > score[0]:
				cand[1], score[1] = cand[0], score[0]
				cand[0], score[0] = sxl/sll, s
			case s > score[1]:
				cand[1], score[1] = sxl/sll, s
			}
		}
	}
	try := func(d float32) {
		h := half.F32ToF16(d)
		if d == 0 || !finiteF16(h) || h == best {
			return
		}
		if e, ok := symError(x, wt, h, flo, fhi, slack); ok && better(e, bestErr) {
			best, bestErr = h, e
		}
	}
	try(cand[0])
	try(cand[1])
	// one least-squares refit of the best one's integers
	if d := half.F16ToF32(best); d != 0 {
		id := 1 / d
		var sxl, sll float32
		for i, v := range x {
			l := float32(qSym(v, id, flo, fhi))
			sxl += wt[i] * v * l
			sll += wt[i] * l * l
		}
		if sll > 0 {
			try(sxl / sll)
		}
	}
	return best
}

// minError is Σ wt·(x − (d·q + m))² for the q that Q4 with a min stores
// under the f16 scale dh and min mh, and whether every (x−m)/d lies
// within slackQ4Min of [0, 15].
func minError(x, wt *[GroupK]float32, dh, mh uint16) (float32, bool) {
	d, m := half.F16ToF32(dh), half.F16ToF32(mh)
	if d == 0 {
		var e float32
		for i, v := range x {
			e += wt[i] * (v - m) * (v - m)
		}
		return e, true
	}
	id := 1 / d
	var e0, e1 float32
	out := false
	for i := 0; i < GroupK; i += 2 {
		t0, t1 := (x[i]-m)*id, (x[i+1]-m)*id
		out = out || t0 < -slackQ4Min || t0 > 15+slackQ4Min || t1 < -slackQ4Min || t1 > 15+slackQ4Min
		r0 := x[i] - (d*float32(rne(min(max(t0, 0), 15))) + m)
		r1 := x[i+1] - (d*float32(rne(min(max(t1, 0), 15))) + m)
		e0 += wt[i] * r0 * r0
		e1 += wt[i+1] * r1 * r1
	}
	return e0 + e1, !out
}

// rankMin returns Σ wt·l, Σ wt·l² and Σ wt·x·l for l =
// clamp(round((x−lo)·is), 0, 15).
func rankMin(x, wt *[GroupK]float32, lo, is float32) (sl, sll, sxl float32) {
	var a0, a1, b0, b1, c0, c1 float32
	for i := 0; i < GroupK; i += 2 {
		v0, v1 := x[i], x[i+1]
		l0 := float32(min(max(rne((v0-lo)*is), 0), 15))
		l1 := float32(min(max(rne((v1-lo)*is), 0), 15))
		w0, w1 := wt[i]*l0, wt[i+1]*l1
		a0 += w0
		a1 += w1
		b0 += w0 * l0
		b1 += w1 * l1
		c0 += w0 * v0
		c1 += w1 * v1
	}
	return a0 + a1, b0 + b1, c0 + c1
}

// scaleMin chooses the f16 scale and min of a Q4 group with a min, w ≈
// d·q + m with q ∈ [0, 15]: max-abs, or (search) the best of max-abs and
// the grid's least-squares fits.
func scaleMin(x, wt *[GroupK]float32, search bool) (uint16, uint16) {
	lo, hi := x[0], x[0]
	for _, v := range x {
		lo, hi = min(lo, v), max(hi, v)
	}
	bd, bm := half.F32ToF16((hi-lo)/15), half.F32ToF16(lo)
	if !search || hi == lo || !finiteF16(bd) || !finiteF16(bm) {
		return bd, bm
	}
	bestErr, _ := minError(x, wt, bd, bm)
	if bestErr == 0 {
		return bd, bm
	}
	var sw, sx float32
	for i, v := range x {
		sw += wt[i]
		sx += wt[i] * v
	}
	// fit solves the 2×2 least-squares problem for (d, m) given Σ wt·l,
	// Σ wt·l², Σ wt·x·l; the error is Σ wt·x² − gain.
	fit := func(sl, sll, sxl float32) (d, m, gain float32, ok bool) {
		det := sw*sll - sl*sl
		if !(det > 0) {
			return 0, 0, 0, false
		}
		d = (sw*sxl - sx*sl) / det
		m = (sll*sx - sl*sxl) / det
		return d, m, d*sxl + m*sx, true
	}
	var cd, cm, score [2]float32
	nc := 0
	for _, f := range q4mGrid {
		d, m, g, ok := fit(rankMin(x, wt, lo, f/(hi-lo)))
		if !ok {
			continue
		}
		switch {
		case nc == 0 || g > score[0]:
			cd[1], cm[1], score[1] = cd[0], cm[0], score[0]
			cd[0], cm[0], score[0] = d, m, g
		case nc == 1 || g > score[1]:
			cd[1], cm[1], score[1] = d, m, g
		}
		nc++
	}
	try := func(d, m float32) {
		dh, mh := half.F32ToF16(d), half.F32ToF16(m)
		if !(d > 0) || !finiteF16(dh) || !finiteF16(mh) || (dh == bd && mh == bm) {
			return
		}
		if e, ok := minError(x, wt, dh, mh); ok && better(e, bestErr) {
			bd, bm, bestErr = dh, mh, e
		}
	}
	for i := range min(nc, 2) {
		try(cd[i], cm[i])
	}
	// one least-squares refit of the best one's integers
	if d, m := half.F16ToF32(bd), half.F16ToF32(bm); d != 0 {
		id := 1 / d
		var sl, sll, sxl float32
		for i, v := range x {
			l := float32(qSym(v-m, id, 0, 15))
			sl += wt[i] * l
			sll += wt[i] * l * l
			sxl += wt[i] * l * v
		}
		if d, m, _, ok := fit(sl, sll, sxl); ok {
			try(d, m)
		}
	}
	return bd, bm
}
