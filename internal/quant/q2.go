// Q2: 2-bit weights with one f16 scale and a 4-bit offset per row and
// group of 32 (2.5 bits per weight), in the canonical panel layout.

package quant

import (
	"encoding/binary"
	"math"

	"github.com/ktune/ktune/internal/half"
)

// Q2 group record (one panel, 32 k): two 64-byte lines, then [16]u16
// scale words = 160 B. Each weight is stored as u ∈ [0, 3] and
//
//	w = d·(u − t),  t = (c − 1)/4 ∈ {−0.25, 0, 0.25, …, 3.5}
//
// where the scale word h of the row holds both: d = f16(h &^ 15) (an f16
// whose four low mantissa bits are zero: 7 significant bits, plenty for
// 2-bit steps) and the offset code c = h & 15. The offset makes the four
// levels asymmetric per group (t = 1.5: ±0.5, ±1.5 steps; t = 1 or 2: a
// zero level and one more on one side), which on Gaussian rows cuts the
// error of a fixed mid-rise or mid-tread grid by 9–19% and on outlier
// channels by 14–44% (docs/quant-error.md) at no cost in bits: the four
// bits come out of the scale's mantissa. In line c, byte 4r+j of row r
// (j < 4) holds
//
//	bits 2h, 2h+1  u of k = 16c + 4h + j   (k-quad 4c+h)
//
// so a kernel gets each of the eight k-quads of a group (the u8 operand
// of a VPDPBUSD/SDOT for 16 rows × 4 k) with one shift and one mask:
// (L_c >> 2h) & 3. With int8 activations x (scale s, group sum Σx) a row's
// group contributes s·d·(Σ u·x − t·Σx): Q4-with-a-min's form, the min
// −d·t computed from the scale word.
const (
	Q2Lines      = 2
	Q2GroupBytes = Q2Lines*LineBytes + 2*PanelRows // 160
	// Q2CodeMask selects the offset code in a Q2 scale word.
	Q2CodeMask = 15
)

// setQ2 stores u (0…3) at row pr, group element j of a Q2 record.
func setQ2(rec []byte, pr, j, u int) {
	off, sh := (j/16)*LineBytes+4*pr+j%4, uint(2*(j%16/4))
	rec[off] = rec[off]&^(3<<sh) | byte(u)<<sh
}

// q2At is the u (0…3) stored at row pr, group element j of a Q2 record.
func q2At(rec []byte, pr, j int) int {
	return int(rec[(j/16)*LineBytes+4*pr+j%4]>>uint(2*(j%16/4))) & 3
}

// q2Word is the scale word of row pr in a Q2 record.
func q2Word(rec []byte, pr int) uint16 {
	return binary.LittleEndian.Uint16(rec[Q2Lines*LineBytes+2*pr:])
}

// Q2Scale splits a Q2 scale word into the scale d and the offset code c.
func Q2Scale(h uint16) (d float32, c int) {
	return half.F16ToF32(h &^ Q2CodeMask), int(h & Q2CodeMask)
}

// q2Value is d·(u − (c−1)/4), computed exactly: (d/4)·(4u − c + 1) has at
// most 7 + 4 significant bits.
func q2Value(d float32, c, u int) float32 { return d * 0.25 * float32(4*u-c+1) }

// q2Offset is the offset t = (c−1)/4 of code c.
func q2Offset(c int) float32 { return float32(c-1) * 0.25 }

// q2Grid rounds a positive scale to the nearest f16 with four zero low
// mantissa bits (Inf past 65280); up rounds up instead.
func q2Grid(d float32, up bool) uint16 {
	h := half.F32ToF16(d)
	if h >= 0x7c00 {
		return 0x7c00
	}
	h = (h + 8) &^ Q2CodeMask
	if up && h < 0x7c00 && half.F16ToF32(h) < d {
		h += 16
	}
	return h
}

// The Q2 search: scales (max−min)·f for f on q2Grid's steps, each with
// the offsets around the centred one.
var q2Factors = gridSteps(0.18, 0.02, 0, 11) // 0.18 … 0.40

// q2Quant is the u stored for w under scale inverse id and offset t.
func q2Quant(w, id, t float32) int32 { return min(max(rne(w*id+t), 0), 3) }

// q2Error is Σ wt·(x − d·(u − t))² of a group under the scale word h,
// and whether every x/d + t lies in [−1, 4] (within a step of the range:
// the per-weight bound the round-trip tests hold, error ≤ d).
func q2Error(x, wt *[GroupK]float32, h uint16) (float32, bool) {
	d, c := Q2Scale(h)
	if d == 0 {
		var e float32
		for i, v := range x {
			e += wt[i] * v * v
		}
		return e, true
	}
	id, t := 1/d, q2Offset(c)
	var e0, e1 float32
	out := false
	for i := 0; i < GroupK; i += 2 {
		z0, z1 := x[i]*id+t, x[i+1]*id+t
		out = out || z0 < -1 || z0 > 4 || z1 < -1 || z1 > 4
		r0 := x[i] - q2Value(d, c, int(min(max(rne(z0), 0), 3)))
		r1 := x[i+1] - q2Value(d, c, int(min(max(rne(z1), 0), 3)))
		e0 += wt[i] * r0 * r0
		e1 += wt[i+1] * r1 * r1
	}
	return e0 + e1, !out
}

// q2Code is the offset code nearest t, in [0, 15].
func q2Code(t float32) int {
	return int(min(max(rne(4*t+1), 0), 15))
}

// q2MinMax is the cheap rule (Quantize): the range [lo, hi] over four
// steps, d = (hi − lo)/4, with lo half a step below level 0 (t nearest
// −lo/d − 1/2), d enlarged where the offset's clamp would put a weight
// more than a step outside the range. Four steps rather than three
// (ggml Q4_1's rule) clip the extremes by up to half a step, which
// halves the step of the bulk of a Gaussian group: 25% lower error.
func q2MinMax(lo, hi float32) uint16 {
	d := (hi - lo) / 4
	if d == 0 {
		d = max(hi, -lo) / 2
	}
	if d == 0 {
		return 0
	}
	c := q2Code(-lo/d - 0.5)
	t := q2Offset(c)
	if hi > 0 {
		d = max(d, hi/(4-t))
	}
	if lo < 0 {
		d = max(d, -lo/(1+t))
	}
	return q2Grid(d, true) | uint16(c)
}

// q2Choose chooses a row's scale word for one group: q2MinMax, or (search)
// the best by weighted squared error of it and the candidates of
// q2Factors, each scale with the five offset codes around the centred
// one, then one least-squares refit of the winner's scale (its integers
// and offset fixed) with the codes around it. A candidate must keep every
// weight within a step of the range (q2Error), as q2MinMax does.
func q2Choose(x, wt *[GroupK]float32, search bool) uint16 {
	lo, hi := x[0], x[0]
	for _, v := range x {
		lo, hi = min(lo, v), max(hi, v)
	}
	best := q2MinMax(lo, hi)
	if !search || best&^Q2CodeMask == 0 || best&^Q2CodeMask >= 0x7c00 {
		return best
	}
	bestErr, _ := q2Error(x, wt, best)
	try := func(h uint16) {
		if h&^Q2CodeMask == 0 || h&^Q2CodeMask >= 0x7c00 || h == best {
			return
		}
		if e, ok := q2Error(x, wt, h); ok && better(e, bestErr) {
			best, bestErr = h, e
		}
	}
	around := func(dh uint16) {
		d := half.F16ToF32(dh)
		c0 := q2Code(1.5 - (lo+hi)/(2*d))
		for c := max(c0-2, 0); c <= min(c0+2, 15); c++ {
			try(dh | uint16(c))
		}
	}
	for _, f := range q2Factors {
		around(q2Grid((hi-lo)*f, false))
	}
	// refit: d = Σ wt·x·l / Σ wt·l², l = u − t
	d, c := Q2Scale(best)
	id, t := 1/d, q2Offset(c)
	var sxl, sll float32
	for i, v := range x {
		l := float32(q2Quant(v, id, t)) - t
		sxl += wt[i] * v * l
		sll += wt[i] * l * l
	}
	if sll > 0 && sxl > 0 {
		dh := q2Grid(sxl/sll, false)
		for cc := max(c-1, 0); cc <= min(c+1, 15); cc++ {
			try(dh | uint16(cc))
		}
	}
	return best
}

// packQ2 writes row pr of one Q2 group record from 32 values.
func packQ2(rec []byte, pr int, x, wt *[GroupK]float32, search bool) {
	h := q2Choose(x, wt, search)
	binary.LittleEndian.PutUint16(rec[Q2Lines*LineBytes+2*pr:], h)
	d, c := Q2Scale(h)
	id, t := 1/d, q2Offset(c)
	for j, v := range x {
		u := 0
		if d != 0 && !math.IsInf(float64(d), 0) {
			u = int(q2Quant(v, id, t))
		}
		setQ2(rec, pr, j, u)
	}
}

// dequantizeQ2Row writes row pr's K values of a Q2 panel into dst.
func dequantizeQ2Row(panel []byte, pr int, dst []float32) {
	for k := range dst {
		rec := panel[(k/GroupK)*Q2GroupBytes:]
		d, c := Q2Scale(q2Word(rec, pr))
		dst[k] = q2Value(d, c, q2At(rec, pr, k%GroupK))
	}
}
