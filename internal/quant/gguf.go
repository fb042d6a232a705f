// The GGUF formats (kernel.GGUFQ4_K, …): a matrix held in a ggml block
// type exactly as a GGUF file stores it, so that the engine reads a
// file's weights in place from its mapping, at their own bits.

package quant

import (
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
