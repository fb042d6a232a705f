package quant

import (
	"fmt"

	"github.com/ktune/ktune/internal/gguf"
	"github.com/ktune/ktune/internal/kernel"
)

// ggml block formats (ggml-common.h), as stored in GGUF files, row-major,
// k/blockSize blocks per row.
const (
	// GGMLQ8_0Bytes: f16 d, then 32 int8 q; w = d·q.
	GGMLQ8_0Bytes = 34
	// GGMLQ4_0Bytes: f16 d, then 16 bytes; byte j holds element j (low
	// nibble) and j+16 (high nibble); w = d·(q−8).
	GGMLQ4_0Bytes = 18
	// GGMLQ4_KBytes: a 256-weight super-block: f16 d, f16 dmin, 12 bytes of
	// 6-bit scales and mins for 8 sub-blocks of 32, then 128 bytes of
	// nibbles; w = d·sc·q − dmin·m.
	GGMLQ4_KBytes = 144
)

// FromGGMLQ8_0 repacks ggml Q8_0 blocks (n rows × k/32 blocks) into Q8,
// exactly: the same scales and the same integers.
func FromGGMLQ8_0(blocks []byte, n, k int) (*Matrix, error) {
	if err := ggmlShape(len(blocks), n, k, 32, GGMLQ8_0Bytes, "q8_0"); err != nil {
		return nil, err
	}
	m, _, _ := runGGMLPlan(gguf.TypeQ8_0, ggmlPlan{kernel.Q8, false, rowQ8_0}, blocks, n, k)
	return m, nil
}

// FromGGMLQ4_0 repacks ggml Q4_0 blocks into Q4 (no min), exactly.
func FromGGMLQ4_0(blocks []byte, n, k int) (*Matrix, error) {
	if err := ggmlShape(len(blocks), n, k, 32, GGMLQ4_0Bytes, "q4_0"); err != nil {
		return nil, err
	}
	m, _, _ := runGGMLPlan(gguf.TypeQ4_0, ggmlPlan{kernel.Q4, false, rowQ4_0}, blocks, n, k)
	return m, nil
}

// FromGGMLQ4_K repacks ggml Q4_K super-blocks into Q4 with a min. The
// nibbles are kept; each group's effective scale d·sc and min −dmin·mn
// (an f16 times a 6-bit integer) are rounded to f16, a relative change of
// at most 2⁻¹¹ of the scale. A scale beyond the f16 range is an error.
func FromGGMLQ4_K(blocks []byte, n, k int) (*Matrix, error) {
	if err := ggmlShape(len(blocks), n, k, 256, GGMLQ4_KBytes, "q4_K"); err != nil {
		return nil, err
	}
	m, _, overflow := runGGMLPlan(gguf.TypeQ4_K, ggmlPlan{kernel.Q4, true, rowQ4_K}, blocks, n, k)
	if overflow {
		return nil, fmt.Errorf("quant: ggml q4_K %d×%d: a group scale or min exceeds the f16 range", n, k)
	}
	return m, nil
}

// q4KScaleMin unpacks the 6-bit scale and min of sub-block j from the 12
// packed bytes of a Q4_K super-block.
func q4KScaleMin(s []byte, j int) (sc, mn int) {
	if j < 4 {
		return int(s[j] & 63), int(s[j+4] & 63)
	}
	return int(s[j+4]&0x0f | (s[j-4]>>6)<<4), int(s[j+4]>>4 | (s[j]>>6)<<4)
}

func ggmlShape(size, n, k, block, blockBytes int, name string) error {
	if n < 1 || k < 1 || k%block != 0 {
		return fmt.Errorf("quant: ggml %s needs k a multiple of %d, got %d×%d", name, block, n, k)
	}
	if want := n * (k / block) * blockBytes; size != want {
		return fmt.Errorf("quant: ggml %s %d×%d needs %d bytes, got %d", name, n, k, want, size)
	}
	return nil
}
