package quant

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/ktune/ktune/internal/half"
	"github.com/ktune/ktune/internal/kernel"
)

// Quantize packs a row-major f32 matrix w [n×k] into dt (hasMin: Q4 with a
// per-group min). Scales are chosen per row and group of 32 from the
// group's extremes (max-abs), rounded to f16, and the weights rounded to
// the nearest integer in range under the rounded scale:
//
//	Q8: d = max|w|/127,                  q = round(w/d) ∈ [−127, 127]
//	Q4: d = −(the w of largest |w|)/8,   q = round(w/d)+8 ∈ [0, 15]   (ggml Q4_0)
//	Q4 with min: d = (max−min)/15, m = min, q = round((w−m)/d) ∈ [0, 15]
//	Q5: d = −(the w of largest |w|)/16,  q = round(w/d)+16 ∈ [0, 31] (ggml Q5_0)
//	Q2: d = (max−min)/4, t ≈ −min/d − 1/2, u = round(w/d + t) ∈ [0, 3]  (q2.go)
//
// QuantizeWeighted searches each group's scale instead (4–10% lower
// error, several times slower; see docs/quant-error.md).
func Quantize(dt kernel.DType, w []float32, n, k int, hasMin bool) (*Matrix, error) {
	return quantize(dt, w, n, k, hasMin, nil, false)
}

// QuantizeWeighted is Quantize with each Q8/Q4 group's f16 scale (and
// min) searched to minimise Σₖ importance[k]·(w − ŵ)² over the group
// (see search.go); it is never worse than Quantize's max-abs choice on
// any group in that measure, and keeps every weight within max-abs's
// per-weight bound (half a step; one step for Q4 without a min and for
// Q2, whose scale word also carries the searched offset: see q2.go).
// importance (length k, finite, ≥ 0; nil = uniform) is the weight of input
// channel k, e.g. the mean square of its activation, which makes the sum
// the expected squared error of the outputs when the activations are
// uncorrelated. F32 and BF16 ignore it.
func QuantizeWeighted(dt kernel.DType, w []float32, n, k int, hasMin bool, importance []float32) (*Matrix, error) {
	if importance != nil {
		if len(importance) != k {
			return nil, fmt.Errorf("quant: %d importances for %d input channels", len(importance), k)
		}
		for i, v := range importance {
			if !(v >= 0) || math.IsInf(float64(v), 0) {
				return nil, fmt.Errorf("quant: importance %v of input channel %d is not finite and ≥ 0", v, i)
			}
		}
	}
	return quantize(dt, w, n, k, hasMin, importance, true)
}

func quantize(dt kernel.DType, w []float32, n, k int, hasMin bool, importance []float32, search bool) (*Matrix, error) {
	m, err := New(dt, n, k, hasMin)
	if err != nil {
		return nil, err
	}
	if len(w) != n*k {
		return nil, fmt.Errorf("quant: %d values for a %d×%d matrix", len(w), n, k)
	}
	for i, v := range w {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, fmt.Errorf("quant: non-finite weight %v at row %d, column %d", v, i/k, i%k)
		}
	}
	row := make([]float32, m.Kp)
	imp := rowImportance(m, importance)
	for r := 0; r < n; r++ {
		copy(row, w[r*k:(r+1)*k])
		clear(row[k:])
		m.packRowWith(r, row, imp, search)
	}
	return m, nil
}

// rowImportance is the per-column weight of a row's squared error for
// Q8/Q4: importance, or 1, and 0 on the padded columns.
func rowImportance(m *Matrix, importance []float32) []float32 {
	if m.DType != kernel.Q8 && m.DType != kernel.Q4 && m.DType != kernel.Q3 && m.DType != kernel.Q6 && m.DType != kernel.Q2 && m.DType != kernel.Q5 && !IsK(m.DType) {
		return nil
	}
	imp := make([]float32, m.Kp)
	if importance != nil {
		copy(imp, importance)
	} else {
		copy(imp, ones[:]) // stretch below
		for i := GroupK; i < m.K; i *= 2 {
			copy(imp[i:m.K], imp[:i])
		}
	}
	clear(imp[m.K:])
	return imp
}

// FromBF16 packs a row-major BF16 matrix (raw uint16 values, as stored in a
// checkpoint) into dt, widening each value exactly first.
func FromBF16(dt kernel.DType, w []uint16, n, k int, hasMin bool) (*Matrix, error) {
	f := make([]float32, len(w))
	for i, h := range w {
		f[i] = half.BF16ToF32(h)
	}
	return Quantize(dt, f, n, k, hasMin)
}

// packRow writes row r (Kp values, zero-padded) into the packed layout
// with Quantize's rule.
func (m *Matrix) packRow(r int, row []float32) {
	m.packRowWith(r, row, rowImportance(m, nil), false)
}

// packRowWith writes row r (Kp values, zero-padded) into the packed
// layout; Q8/Q4 choose each group's scale by search (imp: Kp column
// weights) or max-abs.
func (m *Matrix) packRowWith(r int, row, imp []float32, search bool) {
	panel, pr := m.Panel(r/PanelRows), r%PanelRows
	switch m.DType {
	case kernel.F32:
		for k, v := range row {
			binary.LittleEndian.PutUint32(panel[4*(k*PanelRows+pr):], math.Float32bits(v))
		}
	case kernel.BF16:
		for k, v := range row {
			off := 2 * ((k/2)*2*PanelRows + 2*pr + k%2)
			binary.LittleEndian.PutUint16(panel[off:], half.F32ToBF16(v))
		}
	case kernel.Q8:
		for g := 0; g < m.Groups(); g++ {
			rec := panel[g*Q8GroupBytes:]
			x := (*[GroupK]float32)(row[g*GroupK:])
			wt := (*[GroupK]float32)(imp[g*GroupK:])
			var amax float32
			for _, v := range x {
				amax = max(amax, abs32(v))
			}
			dh := scaleSym(x, wt, search, amax/127, amax, -127, 127, slackQ8, q8Grid)
			d := half.F16ToF32(dh)
			id := 1 / d
			binary.LittleEndian.PutUint16(rec[8*LineBytes+2*pr:], dh)
			for j, v := range x {
				var q int32
				if d != 0 {
					q = qPack(v, d, id, search, -127, 127)
				}
				rec[q8Offset(pr, j)] = byte(q + 128)
			}
		}
	case kernel.Q4:
		gb := m.GroupBytes()
		for g := 0; g < m.Groups(); g++ {
			rec := panel[g*gb:]
			x := (*[GroupK]float32)(row[g*GroupK:])
			wt := (*[GroupK]float32)(imp[g*GroupK:])
			var qs [GroupK]int32
			if m.HasMin {
				dh, mh := scaleMin(x, wt, search)
				d, mn := half.F16ToF32(dh), half.F16ToF32(mh)
				id := 1 / d
				binary.LittleEndian.PutUint16(rec[4*LineBytes+2*pr:], dh)
				binary.LittleEndian.PutUint16(rec[4*LineBytes+2*PanelRows+2*pr:], mh)
				for j, v := range x {
					if d != 0 {
						qs[j] = qPack(v-mn, d, id, search, 0, 15)
					}
				}
			} else {
				var big float32
				for _, v := range x {
					if abs32(v) > abs32(big) {
						big = v
					}
				}
				dh := scaleSym(x, wt, search, -big/8, big, -8, 7, slackQ4, q4GridA, q4GridB)
				d := half.F16ToF32(dh)
				id := 1 / d
				binary.LittleEndian.PutUint16(rec[4*LineBytes+2*pr:], dh)
				for j, v := range x {
					qs[j] = 8
					if d != 0 {
						qs[j] = qPack(v, d, id, search, -8, 7) + 8
					}
				}
			}
			for j, q := range qs {
				setNibble(rec, pr, j, int(q))
			}
		}
	case kernel.Q3:
		for g := 0; g < m.Groups(); g++ {
			packQ3(panel[g*Q3GroupBytes:], pr, (*[GroupK]float32)(row[g*GroupK:]), (*[GroupK]float32)(imp[g*GroupK:]), search)
		}
	case kernel.Q6:
		for g := 0; g < m.Groups(); g++ {
			packQ6(panel[g*Q6GroupBytes:], pr, (*[GroupK]float32)(row[g*GroupK:]), (*[GroupK]float32)(imp[g*GroupK:]), search)
		}
	case kernel.Q5:
		for g := 0; g < m.Groups(); g++ {
			packQ5(panel[g*Q5GroupBytes:], pr, (*[GroupK]float32)(row[g*GroupK:]), (*[GroupK]float32)(imp[g*GroupK:]), search)
		}
	case kernel.Q3K, kernel.Q4K, kernel.Q5K, kernel.Q6K:
		sbb := KSuperBytes(m.DType)
		for s := 0; s < m.Kp/SuperK; s++ {
			packKSuper(m.DType, panel[s*sbb:], pr, row[s*SuperK:(s+1)*SuperK], imp[s*SuperK:(s+1)*SuperK], search)
		}
	case kernel.Q2:
		for g := 0; g < m.Groups(); g++ {
			packQ2(panel[g*Q2GroupBytes:], pr, (*[GroupK]float32)(row[g*GroupK:]), (*[GroupK]float32)(imp[g*GroupK:]), search)
		}
	}
}

// qPack is the integer stored for w under the scale d (id = 1/d): w·id
// as the search evaluated it, or w/d as max-abs always has (the two differ
// only on a rounding tie).
func qPack(w, d, id float32, search bool, lo, hi float32) int32 {
	if search {
		return qSym(w, id, lo, hi)
	}
	return rne(min(max(w/d, lo), hi))
}

// q8Offset is the byte of row pr, group element j inside a Q8 record.
func q8Offset(pr, j int) int { return (j/4)*LineBytes + 4*pr + j%4 }

// q4Offset is the byte (and whether the high nibble) of row pr, group
// element j inside a Q4 record: line c = j/8 holds k = 8c+0..3 in the low
// nibbles and 8c+4..7 in the high ones.
func q4Offset(pr, j int) (int, bool) { return (j/8)*LineBytes + 4*pr + j%4, j%8 >= 4 }

func setNibble(rec []byte, pr, j, q int) {
	off, high := q4Offset(pr, j)
	if high {
		rec[off] = rec[off]&0x0f | byte(q)<<4
	} else {
		rec[off] = rec[off]&0xf0 | byte(q)
	}
}

func nibble(rec []byte, pr, j int) int {
	off, high := q4Offset(pr, j)
	if high {
		return int(rec[off] >> 4)
	}
	return int(rec[off] & 0x0f)
}

// DequantizeRow writes row r's K values (the exact values the packed data
// represents) into dst.
func (m *Matrix) DequantizeRow(r int, dst []float32) {
	if IsGGUF(m.DType) {
		m.dequantizeGGUFRow(r, dst)
		return
	}
	panel, pr := m.Panel(r/PanelRows), r%PanelRows
	dst = dst[:m.K]
	switch m.DType {
	case kernel.F32:
		for k := range dst {
			dst[k] = math.Float32frombits(binary.LittleEndian.Uint32(panel[4*(k*PanelRows+pr):]))
		}
	case kernel.BF16:
		for k := range dst {
			dst[k] = half.BF16ToF32(binary.LittleEndian.Uint16(panel[2*((k/2)*2*PanelRows+2*pr+k%2):]))
		}
	case kernel.Q8:
		for k := range dst {
			rec := panel[(k/GroupK)*Q8GroupBytes:]
			d := half.F16ToF32(binary.LittleEndian.Uint16(rec[8*LineBytes+2*pr:]))
			dst[k] = d * float32(int(rec[q8Offset(pr, k%GroupK)])-128)
		}
	case kernel.Q4:
		gb := m.GroupBytes()
		for k := range dst {
			rec := panel[(k/GroupK)*gb:]
			d := half.F16ToF32(binary.LittleEndian.Uint16(rec[4*LineBytes+2*pr:]))
			q := nibble(rec, pr, k%GroupK)
			if m.HasMin {
				mn := half.F16ToF32(binary.LittleEndian.Uint16(rec[4*LineBytes+2*PanelRows+2*pr:]))
				dst[k] = d*float32(q) + mn
			} else {
				dst[k] = d * float32(q-8)
			}
		}
	case kernel.Q3:
		dequantizeQ3Row(panel, pr, dst)
	case kernel.Q6:
		dequantizeQ6Row(panel, pr, dst)
	case kernel.Q5:
		dequantizeQ5Row(panel, pr, dst)
	case kernel.Q2:
		dequantizeQ2Row(panel, pr, dst)
	case kernel.Q3K, kernel.Q4K, kernel.Q5K, kernel.Q6K:
		dequantizeKRow(m.DType, panel, pr, dst)
	}
}

// Dequantize returns the whole matrix as row-major f32 [N×K].
func (m *Matrix) Dequantize() []float32 {
	out := make([]float32, m.N*m.K)
	for r := 0; r < m.N; r++ {
		m.DequantizeRow(r, out[r*m.K:(r+1)*m.K])
	}
	return out
}

// Scale returns the f16 scale of (row, group) for Q8/Q4/Q3/Q6/Q5/Q2, widened
// (Q2: without its offset code). Not for the K formats, whose group scale is
// d·sc of their super-block (KScaleMin).
func (m *Matrix) Scale(r, g int) float32 {
	rec := m.Panel(r / PanelRows)[g*m.GroupBytes():]
	if m.DType == kernel.Q2 {
		d, _ := Q2Scale(q2Word(rec, r%PanelRows))
		return d
	}
	off := 8 * LineBytes
	switch m.DType {
	case kernel.Q4:
		off = 4 * LineBytes
	case kernel.Q3:
		off = Q3Lines * LineBytes
	case kernel.Q6:
		off = Q6Lines * LineBytes
	case kernel.Q5:
		off = Q5Lines * LineBytes
	}
	return half.F16ToF32(binary.LittleEndian.Uint16(rec[off+2*(r%PanelRows):]))
}

func abs32(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }
