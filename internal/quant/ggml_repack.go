package quant

import (
	"fmt"

	"github.com/ktune/ktune/internal/gguf"
)

// GGMLRepack selects how FromGGML packs a ggml type that has no exact
// repack into our formats.
type GGMLRepack int

const (
	// RepackExact keeps the values DequantizeGGML gives: an exact repack
	// into Q8, Q4, Q4 with min, BF16 or F32 where one exists, else F32.
	RepackExact GGMLRepack = iota
	// RepackFast packs into the nearest of our quantized formats, which may
	// round (e.g. Q4_K → Q4 with min, group scales rounded to f16; Q5_K and
	// Q6_K → Q8 requantized): what runs at our speed on a 48B model.
	RepackFast
)

// DequantizeGGML widens ggml type t (raw: whole blocks, row-major) into dst
// (len = elements), computing each value as ggml's dequantize_row_* does in
// float32, so the results are bit-identical to ggml's CPU reference.
func DequantizeGGML(t gguf.Type, raw []byte, dst []float32) error {
	return fmt.Errorf("quant: ggml %s: not implemented yet", t)
}

// FromGGML packs an n×k matrix stored as ggml type t (k = row length =
// ggml ne[0], raw = n rows of k/BlockSize blocks) into one of our formats,
// and reports whether the packed values equal DequantizeGGML's exactly.
func FromGGML(t gguf.Type, raw []byte, n, k int, mode GGMLRepack) (m *Matrix, exact bool, err error) {
	return nil, false, fmt.Errorf("quant: ggml %s: not implemented yet", t)
}
