// Q5: 5-bit weights, one f16 scale per row and group of 32 (5.5 bits per
// weight), in the canonical panel layout.

package quant

import (
	"encoding/binary"

	"github.com/ktune/ktune/internal/half"
)

// Q5 group record (one panel, 32 k): five 64-byte lines, then [16]f16
// scales = 352 B. Each weight is stored as u = q+16 ∈ [0, 31] (q ∈
// [−16, 15], w = d·(u−16): ggml Q5_0's rule, so a Q5_0 block repacks
// exactly). Lines 0–3 hold the low four bits of u exactly as Q4 holds its
// nibbles — in line c, byte 4r+j of row r (j < 4) holds
//
//	bits 0–3  bits 0–3 of u at k = 8c+j      (k-quad 2c)
//	bits 4–7  bits 0–3 of u at k = 8c+4+j    (k-quad 2c+1)
//
// — and line 4 the fifth bits: byte 4r+j holds
//
//	bit h     bit 4 of u at k = 4h+j          (k-quad h, h < 8)
//
// so a kernel decodes the nibbles as Q4's do and adds each k-quad's high
// bits with one shift and one mask: ((L4 << (4−h)) & 16) for h ≤ 4, or
// ((L4 >> (h−4)) & 16) (a 16- or 32-bit shift moves no neighbouring
// byte's bit into bit 4 of a byte, for shifts up to 4).
const (
	Q5Lines      = 5
	Q5GroupBytes = Q5Lines*LineBytes + 2*PanelRows // 352
	// Q5Zero is the stored value of a zero weight.
	Q5Zero = 16
)

// The Q5 search grids (see search.go): the largest |w| at −14.8 … −17.2
// or +13.8 … +15.6 steps.
var (
	q5GridA = gridSteps(-16, -0.3, -4, 4)
	q5GridB = gridSteps(15, 0.3, -4, 2)
)

// slackQ5: as for Q4, the asymmetric range lets max-abs put the extreme
// opposite the largest value one step outside.
const slackQ5 = 1

// setQ5 stores u (0…31) at row pr, group element j of a Q5 record.
func setQ5(rec []byte, pr, j, u int) {
	setNibble(rec, pr, j, u&15)
	off, sh := 4*LineBytes+4*pr+j%4, uint(j/4)
	rec[off] = rec[off]&^(1<<sh) | byte(u>>4&1)<<sh
}

// q5At is the u (0…31) stored at row pr, group element j of a Q5 record.
func q5At(rec []byte, pr, j int) int {
	return nibble(rec, pr, j) | int(rec[4*LineBytes+4*pr+j%4]>>uint(j/4)&1)<<4
}

// q5Scale is the f16 scale of row pr in a Q5 record, widened.
func q5Scale(rec []byte, pr int) float32 {
	return half.F16ToF32(binary.LittleEndian.Uint16(rec[Q5Lines*LineBytes+2*pr:]))
}

// packQ5 writes row pr of one Q5 group record from 32 values: max-abs
// (d = −(the w of largest |w|)/16, q = round(w/d) ∈ [−16, 15], ggml
// Q5_0's rule) or the weighted scale search.
func packQ5(rec []byte, pr int, x, wt *[GroupK]float32, search bool) {
	var big float32
	for _, v := range x {
		if abs32(v) > abs32(big) {
			big = v
		}
	}
	dh := scaleSym(x, wt, search, -big/16, big, -16, 15, slackQ5, q5GridA, q5GridB)
	d := half.F16ToF32(dh)
	id := 1 / d
	binary.LittleEndian.PutUint16(rec[Q5Lines*LineBytes+2*pr:], dh)
	for j, v := range x {
		u := Q5Zero
		if d != 0 {
			u = int(qPack(v, d, id, search, -16, 15)) + Q5Zero
		}
		setQ5(rec, pr, j, u)
	}
}

// dequantizeQ5Row writes row pr's K values of a Q5 panel into dst.
func dequantizeQ5Row(panel []byte, pr int, dst []float32) {
	for k := range dst {
		rec := panel[(k/GroupK)*Q5GroupBytes:]
		dst[k] = q5Scale(rec, pr) * float32(q5At(rec, pr, k%GroupK)-Q5Zero)
	}
}
