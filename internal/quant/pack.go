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
// group's values, rounded to f16, and the weights rounded with the rounded
// scale:
//
//	Q8: d = max|w|/127,                  q = round(w/d) ∈ [−127, 127]
//	Q4: d = −(the w of largest |w|)/8,   q = round(w/d)+8 ∈ [0, 15]   (ggml Q4_0)
//	Q4 with min: d = (max−min)/15, m = min, q = round((w−m)/d) ∈ [0, 15]
func Quantize(dt kernel.DType, w []float32, n, k int, hasMin bool) (*Matrix, error) {
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
	for r := 0; r < n; r++ {
		copy(row, w[r*k:(r+1)*k])
		clear(row[k:])
		m.packRow(r, row)
	}
	return m, nil
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

// packRow writes row r (Kp values, zero-padded) into the packed layout.
func (m *Matrix) packRow(r int, row []float32) {
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
			vals := row[g*GroupK : (g+1)*GroupK]
			var amax float32
			for _, v := range vals {
				amax = max(amax, abs32(v))
			}
			dh := half.F32ToF16(amax / 127)
			d := half.F16ToF32(dh)
			binary.LittleEndian.PutUint16(rec[8*LineBytes+2*pr:], dh)
			for j, v := range vals {
				q := 0
				if d != 0 {
					q = clampInt(int(math.RoundToEven(float64(v/d))), -127, 127)
				}
				rec[q8Offset(pr, j)] = byte(q + 128)
			}
		}
	case kernel.Q4:
		gb := m.GroupBytes()
		for g := 0; g < m.Groups(); g++ {
			rec := panel[g*gb:]
			vals := row[g*GroupK : (g+1)*GroupK]
			var qs [GroupK]int
			if m.HasMin {
				lo, hi := vals[0], vals[0]
				for _, v := range vals {
					lo, hi = min(lo, v), max(hi, v)
				}
				dh, mh := half.F32ToF16((hi-lo)/15), half.F32ToF16(lo)
				d, mn := half.F16ToF32(dh), half.F16ToF32(mh)
				binary.LittleEndian.PutUint16(rec[4*LineBytes+2*pr:], dh)
				binary.LittleEndian.PutUint16(rec[4*LineBytes+2*PanelRows+2*pr:], mh)
				for j, v := range vals {
					if d != 0 {
						qs[j] = clampInt(int(math.RoundToEven(float64((v-mn)/d))), 0, 15)
					}
				}
			} else {
				var big float32
				for _, v := range vals {
					if abs32(v) > abs32(big) {
						big = v
					}
				}
				dh := half.F32ToF16(-big / 8)
				d := half.F16ToF32(dh)
				binary.LittleEndian.PutUint16(rec[4*LineBytes+2*pr:], dh)
				for j, v := range vals {
					qs[j] = 8
					if d != 0 {
						qs[j] = clampInt(int(math.RoundToEven(float64(v/d)))+8, 0, 15)
					}
				}
			}
			for j, q := range qs {
				setNibble(rec, pr, j, q)
			}
		}
	}
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

// Scale returns the f16 scale of (row, group) for Q8/Q4, widened.
func (m *Matrix) Scale(r, g int) float32 {
	rec := m.Panel(r / PanelRows)[g*m.GroupBytes():]
	off := 8 * LineBytes
	if m.DType == kernel.Q4 {
		off = 4 * LineBytes
	}
	return half.F16ToF32(binary.LittleEndian.Uint16(rec[off+2*(r%PanelRows):]))
}

func abs32(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }

func clampInt(x, lo, hi int) int { return min(max(x, lo), hi) }
