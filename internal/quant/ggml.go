package quant

import (
	"encoding/binary"
	"fmt"

	"github.com/ktune/ktune/internal/half"
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
	m, err := New(kernel.Q8, n, k, false)
	if err != nil {
		return nil, err
	}
	for r := 0; r < n; r++ {
		panel, pr := m.Panel(r/PanelRows), r%PanelRows
		for g := 0; g < k/32; g++ {
			b := blocks[(r*(k/32)+g)*GGMLQ8_0Bytes:]
			rec := panel[g*Q8GroupBytes:]
			copy(rec[8*LineBytes+2*pr:], b[0:2])
			for j := 0; j < 32; j++ {
				rec[q8Offset(pr, j)] = b[2+j] ^ 0x80 // int8 → offset binary
			}
		}
	}
	return m, nil
}

// FromGGMLQ4_0 repacks ggml Q4_0 blocks into Q4 (no min), exactly.
func FromGGMLQ4_0(blocks []byte, n, k int) (*Matrix, error) {
	if err := ggmlShape(len(blocks), n, k, 32, GGMLQ4_0Bytes, "q4_0"); err != nil {
		return nil, err
	}
	m, err := New(kernel.Q4, n, k, false)
	if err != nil {
		return nil, err
	}
	for r := 0; r < n; r++ {
		panel, pr := m.Panel(r/PanelRows), r%PanelRows
		for g := 0; g < k/32; g++ {
			b := blocks[(r*(k/32)+g)*GGMLQ4_0Bytes:]
			rec := panel[g*Q4GroupBytes:]
			copy(rec[4*LineBytes+2*pr:], b[0:2])
			for j := 0; j < 16; j++ {
				setNibble(rec, pr, j, int(b[2+j]&0x0f))
				setNibble(rec, pr, j+16, int(b[2+j]>>4))
			}
		}
	}
	return m, nil
}

// FromGGMLQ4_K repacks ggml Q4_K super-blocks into Q4 with a min. The
// nibbles are kept; each group's effective scale d·sc and min −dmin·m
// (an f16 times a 6-bit integer) are rounded to f16, a relative change of
// at most 2⁻¹¹ of the scale.
func FromGGMLQ4_K(blocks []byte, n, k int) (*Matrix, error) {
	if err := ggmlShape(len(blocks), n, k, 256, GGMLQ4_KBytes, "q4_K"); err != nil {
		return nil, err
	}
	m, err := New(kernel.Q4, n, k, true)
	if err != nil {
		return nil, err
	}
	for r := 0; r < n; r++ {
		panel, pr := m.Panel(r/PanelRows), r%PanelRows
		for sb := 0; sb < k/256; sb++ {
			b := blocks[(r*(k/256)+sb)*GGMLQ4_KBytes:]
			d := half.F16ToF32(binary.LittleEndian.Uint16(b[0:]))
			dmin := half.F16ToF32(binary.LittleEndian.Uint16(b[2:]))
			scales, qs := b[4:16], b[16:144]
			for sub := 0; sub < 8; sub++ {
				sc, mn := q4KScaleMin(scales, sub)
				rec := panel[(sb*8+sub)*Q4MinGroupBytes:]
				binary.LittleEndian.PutUint16(rec[4*LineBytes+2*pr:], half.F32ToF16(d*float32(sc)))
				binary.LittleEndian.PutUint16(rec[4*LineBytes+2*PanelRows+2*pr:], half.F32ToF16(-dmin*float32(mn)))
				// sub-blocks come in pairs over 32 bytes: low nibbles
				// are sub-block 2i, high nibbles 2i+1.
				q := qs[32*(sub/2):]
				for j := 0; j < 32; j++ {
					v := q[j] & 0x0f
					if sub%2 == 1 {
						v = q[j] >> 4
					}
					setNibble(rec, pr, j, int(v))
				}
			}
		}
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
