// Q6: 6-bit weights, one f16 scale per row and group of 32 (6.5 bits per
// weight), in the canonical panel layout.

package quant

import (
	"encoding/binary"

	"github.com/ktune/ktune/internal/half"
)

// Q6 group record (one panel, 32 k): six 64-byte lines, then [16]f16
// scales = 416 B. Each weight is stored as u = q+32 ∈ [0, 63] (q ∈
// [−32, 31], w = d·(u−32), ggml Q4_0's rule with 6 bits). In line c, byte
// 4r+j of row r (j < 4) holds
//
//	bits 0–5  u of k = 4c+j                          (k-quad c, c < 6)
//	bits 6–7  bits 2(c%3) and 2(c%3)+1 of u at k = 24+4(c/3)+j
//
// so the six full k-quads come out of their lines with one mask (L_c &
// 63), and quad 6 (lines 0–2) and 7 (lines 3–5) gather their three 2-bit
// pieces with three shifts and two bit selects:
//
//	k = 24…27: ((L0 >> 6) & 3) | ((L1 >> 4) & 12) | ((L2 >> 2) & 48)
//	k = 28…31: ((L3 >> 6) & 3) | ((L4 >> 4) & 12) | ((L5 >> 2) & 48)
const (
	Q6Lines      = 6
	Q6GroupBytes = Q6Lines*LineBytes + 2*PanelRows // 416
	// Q6Zero is the stored value of a zero weight.
	Q6Zero = 32
)

// The Q6 search grids (see search.go): the largest |w| at −30 … −34
// or +29 … +32 steps. With six bits a Gaussian group's best step is
// close to max-abs's (finer or wider grids: within 0.3% of the error).
var (
	q6GridA = gridSteps(-32, -0.5, -4, 4)
	q6GridB = gridSteps(31, 0.5, -4, 2)
)

// slackQ6: as for Q4, the asymmetric range lets max-abs put the extreme
// opposite the largest value one step outside.
const slackQ6 = 1

// setQ6 stores u (0…63) at row pr, group element j of a Q6 record.
func setQ6(rec []byte, pr, j, u int) {
	b := 4*pr + j%4
	if q := j / 4; q < 6 {
		off := q*LineBytes + b
		rec[off] = rec[off]&0xc0 | byte(u)
		return
	}
	for t := 0; t < 3; t++ {
		off := (3*(j/4-6)+t)*LineBytes + b
		rec[off] = rec[off]&0x3f | byte(u>>uint(2*t))<<6
	}
}

// q6At is the u (0…63) stored at row pr, group element j of a Q6 record.
func q6At(rec []byte, pr, j int) int {
	b := 4*pr + j%4
	if q := j / 4; q < 6 {
		return int(rec[q*LineBytes+b] & 63)
	}
	u := 0
	for t := 0; t < 3; t++ {
		u |= int(rec[(3*(j/4-6)+t)*LineBytes+b]>>6) << uint(2*t)
	}
	return u
}

// q6Scale is the f16 scale of row pr in a Q6 record, widened.
func q6Scale(rec []byte, pr int) float32 {
	return half.F16ToF32(binary.LittleEndian.Uint16(rec[Q6Lines*LineBytes+2*pr:]))
}

// packQ6 writes row pr of one Q6 group record from 32 values: max-abs
// (d = −(the w of largest |w|)/32, q = round(w/d) ∈ [−32, 31]) or the
// weighted scale search.
func packQ6(rec []byte, pr int, x, wt *[GroupK]float32, search bool) {
	packQ6Hint(rec, pr, x, wt, search, 0)
}

// packQ6Hint is packQ6 with one more candidate scale, hint (0: none): it
// replaces the chosen scale if, rounded to f16, its squared error is
// strictly smaller and it keeps every weight within max-abs's bound. A
// ggml Q6_K group is two sub-blocks of 16 with scales d·sc₁, d·sc₂ and
// the same 6-bit range, so the larger one represents its half exactly
// (up to the f16 rounding of d·sc) where max-abs or the search may not.
func packQ6Hint(rec []byte, pr int, x, wt *[GroupK]float32, search bool, hint float32) {
	var big float32
	for _, v := range x {
		if abs32(v) > abs32(big) {
			big = v
		}
	}
	dh := scaleSym(x, wt, search, -big/32, big, -32, 31, slackQ6, q6GridA, q6GridB)
	if hh := half.F32ToF16(hint); hint != 0 && finiteF16(hh) && hh != dh && finiteF16(dh) && big != 0 {
		e, _ := symError(x, wt, dh, -32, 31, slackQ6)
		if eh, ok := symError(x, wt, hh, -32, 31, slackQ6); ok && better(eh, e) {
			dh, search = hh, true // pack as symError evaluated it
		}
	}
	d := half.F16ToF32(dh)
	id := 1 / d
	binary.LittleEndian.PutUint16(rec[Q6Lines*LineBytes+2*pr:], dh)
	for j, v := range x {
		u := Q6Zero
		if d != 0 {
			u = int(qPack(v, d, id, search, -32, 31)) + Q6Zero
		}
		setQ6(rec, pr, j, u)
	}
}

// dequantizeQ6Row writes row pr's K values of a Q6 panel into dst.
func dequantizeQ6Row(panel []byte, pr int, dst []float32) {
	for k := range dst {
		rec := panel[(k/GroupK)*Q6GroupBytes:]
		dst[k] = q6Scale(rec, pr) * float32(q6At(rec, pr, k%GroupK)-Q6Zero)
	}
}
