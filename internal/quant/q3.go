// Q3: 3-bit weights, one f16 scale per row and group of 32 (3.5 bits per
// weight), in the canonical panel layout.

package quant

import (
	"encoding/binary"

	"github.com/ktune/ktune/internal/half"
)

// Q3 group record (one panel, 32 k): three 64-byte lines, then [16]f16
// scales = 224 B. Each weight is stored as u = q+4 ∈ [0, 7] (q ∈ [−4, 3],
// w = d·(u−4), ggml Q4_0's rule with 3 bits). In line c, byte 4r+j of row
// r (j < 4) holds
//
//	bits 0–2  u of k = 8c+j
//	bits 3–5  u of k = 8c+4+j
//	bits 6–7  line 0: the low two bits of u at k = 24+j
//	          line 1: the low two bits of u at k = 28+j
//	          line 2: bit 6 the high bit of u at k = 24+j, bit 7 that at k = 28+j
//
// so that a kernel gets each of the eight k-quads of a group (the u8
// operand of a VPDPBUSD/SDOT for 16 rows × 4 k) from one line with a
// shift and a mask — (L_c >> 3·h) & 7 for the first six — and the last two
// with two shifts and two logic operations:
//
//	k = 24…27: ((L0 >> 6) & 3) | ((L2 >> 4) & 4)
//	k = 28…31: ((L1 >> 6) & 3) | ((L2 >> 5) & 4)
const (
	Q3Lines      = 3
	Q3GroupBytes = Q3Lines*LineBytes + 2*PanelRows // 224
	// Q3Zero is the stored value of a zero weight.
	Q3Zero = 4
)

// The Q3 search grids (see search.go): the largest |w| at −3.25 … −4.6
// or +2.4 … +3.6 steps. Three bits clip harder than four: a Gaussian
// group's best step is about max|w|/3.6.
var (
	q3GridA = gridSteps(-4, -0.15, -5, 4)
	q3GridB = gridSteps(3, 0.15, -4, 4)
)

// slackQ3: as for Q4, the asymmetric range lets max-abs put the extreme
// opposite the largest value one step outside.
const slackQ3 = 1

// setQ3 stores u (0…7) at row pr, group element j of a Q3 record.
func setQ3(rec []byte, pr, j, u int) {
	b := 4*pr + j%4
	switch q := j / 4; {
	case q < 6:
		off, sh := (q/2)*LineBytes+b, uint(3*(q%2))
		rec[off] = rec[off]&^(7<<sh) | byte(u)<<sh
	default: // q = 6, 7: low bits in line q−6, high bit in line 2
		lo, hi := (q-6)*LineBytes+b, 2*LineBytes+b
		rec[lo] = rec[lo]&0x3f | byte(u&3)<<6
		sh := uint(q)
		rec[hi] = rec[hi]&^(1<<sh) | byte(u>>2)<<sh
	}
}

// q3At is the u (0…7) stored at row pr, group element j of a Q3 record.
func q3At(rec []byte, pr, j int) int {
	b := 4*pr + j%4
	switch q := j / 4; {
	case q < 6:
		return int(rec[(q/2)*LineBytes+b]>>uint(3*(q%2))) & 7
	default:
		lo := int(rec[(q-6)*LineBytes+b] >> 6)
		hi := int(rec[2*LineBytes+b]>>uint(q)) & 1
		return lo | hi<<2
	}
}

// q3Scale is the f16 scale of row pr in a Q3 record, widened.
func q3Scale(rec []byte, pr int) float32 {
	return half.F16ToF32(binary.LittleEndian.Uint16(rec[Q3Lines*LineBytes+2*pr:]))
}

// packQ3 writes row pr of one Q3 group record from 32 values: max-abs
// (d = −(the w of largest |w|)/4, q = round(w/d) ∈ [−4, 3]) or the
// weighted scale search.
func packQ3(rec []byte, pr int, x, wt *[GroupK]float32, search bool) {
	var big float32
	for _, v := range x {
		if abs32(v) > abs32(big) {
			big = v
		}
	}
	dh := scaleSym(x, wt, search, -big/4, big, -4, 3, slackQ3, q3GridA, q3GridB)
	d := half.F16ToF32(dh)
	id := 1 / d
	binary.LittleEndian.PutUint16(rec[Q3Lines*LineBytes+2*pr:], dh)
	for j, v := range x {
		u := Q3Zero
		if d != 0 {
			u = int(qPack(v, d, id, search, -4, 3)) + Q3Zero
		}
		setQ3(rec, pr, j, u)
	}
}

// dequantizeQ3Row writes row pr's K values of a Q3 panel into dst.
func dequantizeQ3Row(panel []byte, pr int, dst []float32) {
	for k := range dst {
		rec := panel[(k/GroupK)*Q3GroupBytes:]
		dst[k] = q3Scale(rec, pr) * float32(q3At(rec, pr, k%GroupK)-Q3Zero)
	}
}
