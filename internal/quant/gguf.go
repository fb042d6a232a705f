// The GGUF formats (kernel.GGUFQ4_K, …): a matrix held in a ggml block
// type exactly as a GGUF file stores it, so that the engine reads a
// file's weights in place from its mapping, at their own bits.

package quant

import (
	"encoding/binary"
	"fmt"

	"github.com/ktune/ktune/internal/gguf"
	"github.com/ktune/ktune/internal/kernel"
)

// A GGUF-format Matrix holds N rows of K/BlockSize ggml blocks each, row
// after row (ggml-common.h's block layouts; see ggml_dequant.go), with no
// padding: Data is N·RowBytes bytes, typically a slice of a GGUF file's
// mapping. Kp = K (K is a multiple of the block size); Np = N rounded up to
// PanelRows, because the kernels hand out work in panels of 16 rows (the
// last panel's missing rows are neither stored nor written).

var ggufTypes = map[kernel.DType]gguf.Type{
	kernel.GGUFQ8_0: gguf.TypeQ8_0, kernel.GGUFQ4_0: gguf.TypeQ4_0, kernel.GGUFQ4_1: gguf.TypeQ4_1,
	kernel.GGUFQ5_0: gguf.TypeQ5_0, kernel.GGUFQ5_1: gguf.TypeQ5_1, kernel.GGUFQ2_K: gguf.TypeQ2_K,
	kernel.GGUFQ3_K: gguf.TypeQ3_K, kernel.GGUFQ4_K: gguf.TypeQ4_K, kernel.GGUFQ5_K: gguf.TypeQ5_K,
	kernel.GGUFQ6_K: gguf.TypeQ6_K, kernel.GGUFIQ4_NL: gguf.TypeIQ4_NL, kernel.GGUFIQ4_XS: gguf.TypeIQ4_XS,
	kernel.GGUFMXFP4: gguf.TypeMXFP4, kernel.GGUFF16: gguf.TypeF16, kernel.GGUFBF16: gguf.TypeBF16,
	kernel.GGUFF32: gguf.TypeF32,
}

var ggufDTypes = func() map[gguf.Type]kernel.DType {
	m := map[gguf.Type]kernel.DType{}
	for dt, t := range ggufTypes {
		m[t] = dt
	}
	return m
}()

// IsGGUF reports whether dt is one of the GGUF formats.
func IsGGUF(dt kernel.DType) bool { _, ok := ggufTypes[dt]; return ok }

// GGUFType is the ggml type of a GGUF format (false for any other dtype).
func GGUFType(dt kernel.DType) (gguf.Type, bool) { t, ok := ggufTypes[dt]; return t, ok }

// GGUFDType is the GGUF format that runs ggml type t in place (false for
// a type the engine cannot run as stored: the other IQ types, the TQ
// types, the activation formats).
func GGUFDType(t gguf.Type) (kernel.DType, bool) { dt, ok := ggufDTypes[t]; return dt, ok }

// ggufRowBytes is the bytes of one row of k values in GGUF format dt.
func ggufRowBytes(dt kernel.DType, k int) int {
	t := ggufTypes[dt]
	return k / t.BlockSize() * t.BlockBytes()
}

// RowBytes is the size of one stored row of a GGUF-format matrix (0 for a
// panel format, whose rows are interleaved).
func (m *Matrix) RowBytes() int {
	if !IsGGUF(m.DType) {
		return 0
	}
	return ggufRowBytes(m.DType, m.K)
}

// Row returns the stored bytes of row r of a GGUF-format matrix.
func (m *Matrix) Row(r int) []byte {
	rb := m.RowBytes()
	return m.Data[r*rb : (r+1)*rb : (r+1)*rb]
}

// Rows returns the stored bytes of rows [r0, r1) of a GGUF-format matrix.
func (m *Matrix) Rows(r0, r1 int) []byte {
	rb := m.RowBytes()
	return m.Data[r0*rb : r1*rb : r1*rb]
}

// GGUFView wraps n rows of ggml type t (k values each) without copying:
// the GGUF format of t over data, which must be exactly n rows.
func GGUFView(t gguf.Type, n, k int, data []byte) (*Matrix, error) {
	dt, ok := GGUFDType(t)
	if !ok {
		return nil, fmt.Errorf("quant: ggml type %s cannot be run in place", t)
	}
	return View(dt, n, k, false, data)
}

// checkGGUFShape refuses a row length that is not whole blocks.
func checkGGUFShape(dt kernel.DType, k int) error {
	if bs := ggufTypes[dt].BlockSize(); k%bs != 0 {
		return fmt.Errorf("quant: %s needs rows of whole %d-value blocks, got k = %d", dt, bs, k)
	}
	return nil
}

// dequantizeGGUFRow writes row r's values: ggml's own dequantization
// (bit-identical to dequantize_row_* of ggml-quants.c).
func (m *Matrix) dequantizeGGUFRow(r int, dst []float32) {
	ggmlRow(ggufTypes[m.DType], m.Row(r), dst[:m.K])
}

// GGUFSub is the sub-block size of GGUFBlockInts' scales: 16 values.
const GGUFSub = 16

// GGUFBlockInts writes a quantized ggml block b of type t in the integer
// form the int8-activation kernels compute with: for element e of the
// block,
//
//	w[e] = s[e/16]·float32(v[e]) − mn[e/16]   (one product, one difference)
//
// with v a signed integer of at most 8 bits (the type's stored integer
// less its zero point, or its codebook value), and per sub-block of 16
// the f32 scale s and min mn (0 for the types without one). Each w is
// DequantizeGGML's value bit for bit (the products are exact; see
// ggml_dequant.go). t must be a quantized type GGUFDType runs; v and s,
// mn hold BlockSize and BlockSize/16 entries.
func GGUFBlockInts(t gguf.Type, b []byte, v []int8, s, mn []float32) {
	subs := t.BlockSize() / GGUFSub
	clear(mn[:subs])
	set32 := func(g int, sc, m float32) { // the two sub-blocks of group g of 32
		s[2*g], s[2*g+1], mn[2*g], mn[2*g+1] = sc, sc, m, m
	}
	switch t {
	case gguf.TypeQ8_0:
		set32(0, f16At(b, 0), 0)
		for j, q := range b[2:34] {
			v[j] = int8(q)
		}
	case gguf.TypeQ4_0, gguf.TypeIQ4_NL:
		set32(0, f16At(b, 0), 0)
		nibbles(b[2:18], v, t == gguf.TypeIQ4_NL, &IQ4NLValues, -8)
	case gguf.TypeMXFP4:
		set32(0, MXFP4Scale(b[0]), 0)
		nibbles(b[1:17], v, true, &MXFP4Values, 0)
	case gguf.TypeQ4_1:
		set32(0, f16At(b, 0), -f16At(b, 2))
		nibbles(b[4:20], v, false, nil, 0)
	case gguf.TypeQ5_0, gguf.TypeQ5_1:
		var q [32]int
		off, z := 2, -16
		if t == gguf.TypeQ5_1 {
			set32(0, f16At(b, 0), -f16At(b, 2))
			off, z = 4, 0
		} else {
			set32(0, f16At(b, 0), 0)
		}
		q5Quants(binary.LittleEndian.Uint32(b[off:]), b[off+4:off+20], &q)
		for j, x := range q {
			v[j] = int8(x + z)
		}
	case gguf.TypeQ2_K:
		d, dmin := f16At(b, 80), f16At(b, 82)
		for sb := 0; sb < 16; sb++ {
			s[sb], mn[sb] = d*float32(b[sb]&15), dmin*float32(b[sb]>>4)
		}
		for e := 0; e < 256; e++ {
			h, j, l := e/128, e%128/32, e%32
			v[e] = int8(b[16+32*h+l] >> (2 * j) & 3)
		}
	case gguf.TypeQ3_K:
		d := f16At(b, 108)
		for sb := 0; sb < 16; sb++ {
			s[sb] = d * float32(q3KScale(b[96:108], sb))
		}
		for e := 0; e < 256; e++ {
			v[e] = int8(q3KQuant(b[0:32], b[32:96], e/128, e%128/32, e%32))
		}
	case gguf.TypeQ4_K, gguf.TypeQ5_K:
		d, dmin := f16At(b, 0), f16At(b, 2)
		qs, five := b[16:144], t == gguf.TypeQ5_K
		if five {
			qs = b[48:176]
		}
		for g := 0; g < 8; g++ {
			sc, m := q4KScaleMin(b[4:16], g)
			set32(g, d*float32(sc), dmin*float32(m))
			for l := 0; l < 32; l++ {
				q := qs[32*(g/2)+l] >> (4 * (g % 2)) & 15
				if five {
					q |= (b[16+l] >> g & 1) << 4
				}
				v[32*g+l] = int8(q)
			}
		}
	case gguf.TypeQ6_K:
		d := f16At(b, 208)
		for sb := 0; sb < 16; sb++ {
			s[sb] = d * float32(int8(b[192+sb]))
		}
		for e := 0; e < 256; e++ {
			v[e] = int8(q6KQuant(b[0:128], b[128:192], e/128, e%128/32, e%32))
		}
	case gguf.TypeIQ4_XS:
		d := f16At(b, 0)
		for g := 0; g < 8; g++ {
			set32(g, d*float32(IQ4XSScale(b, g)-32), 0)
			nibbles(b[8+16*g:24+16*g], v[32*g:], true, &IQ4NLValues, 0)
		}
	default:
		panic("quant: GGUFBlockInts: " + t.String() + " is not an integer block type")
	}
}

// nibbles writes the 32 values of 16 bytes of nibbles in ggml's order
// (byte j: element j low, j+16 high): the codebook's values, or the
// nibble plus z.
func nibbles(qs []byte, v []int8, book bool, values *[16]int8, z int) {
	for j, q := range qs[:16] {
		if book {
			v[j], v[j+16] = values[q&15], values[q>>4]
		} else {
			v[j], v[j+16] = int8(int(q&15)+z), int8(int(q>>4)+z)
		}
	}
}

// CheckGGML reports the first block of raw (whole blocks of ggml type t)
// whose values are not all finite: a NaN or infinite f16 scale (or min),
// an mxfp4 exponent above MXFP4MaxExp, or for f32, f16 and bf16 a NaN or
// infinite value; the error names the block (element) and the cause.
func CheckGGML(t gguf.Type, raw []byte) error {
	info, err := ggmlType(t)
	if err != nil {
		return err
	}
	if blk, msg := ggmlNonFinite(t, info, raw); blk >= 0 {
		if t.BlockSize() == 1 {
			return fmt.Errorf("element %d: %s", blk, msg)
		}
		return fmt.Errorf("block %d (elements %d..%d): %s", blk, blk*t.BlockSize(), (blk+1)*t.BlockSize()-1, msg)
	}
	return nil
}

// IsFloat reports whether dt stores its weights as floats (F32, BF16 and
// the GGUF f32, f16 and bf16 formats) rather than integers under scales.
func IsFloat(dt kernel.DType) bool {
	switch dt {
	case kernel.F32, kernel.BF16, kernel.GGUFF32, kernel.GGUFF16, kernel.GGUFBF16:
		return true
	}
	return false
}
