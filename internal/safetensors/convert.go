package safetensors

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/ktune/ktune/internal/half"
)

// DecodeFloat32 converts little-endian src of dtype dt (F32, F16 or BF16)
// into dst. len(src) must be len(dst)*dt.Size().
func DecodeFloat32(dst []float32, dt DType, src []byte) error {
	if !dt.IsFloat() {
		return fmt.Errorf("dtype %s is not a float type", dt)
	}
	if len(src) != len(dst)*dt.Size() {
		return fmt.Errorf("%d bytes of %s do not hold %d elements", len(src), dt, len(dst))
	}
	switch dt {
	case F32:
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
		}
	case BF16:
		for i := range dst {
			dst[i] = BF16ToF32(binary.LittleEndian.Uint16(src[2*i:]))
		}
	case F16:
		for i := range dst {
			dst[i] = F16ToF32(binary.LittleEndian.Uint16(src[2*i:]))
		}
	}
	return nil
}

// DecodeInt64 converts little-endian src of dtype dt (I32 or I64) into dst.
// len(src) must be len(dst)*dt.Size().
func DecodeInt64(dst []int64, dt DType, src []byte) error {
	if !dt.IsInt() {
		return fmt.Errorf("dtype %s is not an integer type", dt)
	}
	if len(src) != len(dst)*dt.Size() {
		return fmt.Errorf("%d bytes of %s do not hold %d elements", len(src), dt, len(dst))
	}
	switch dt {
	case I32:
		for i := range dst {
			dst[i] = int64(int32(binary.LittleEndian.Uint32(src[4*i:])))
		}
	case I64:
		for i := range dst {
			dst[i] = int64(binary.LittleEndian.Uint64(src[8*i:]))
		}
	}
	return nil
}

// BF16ToF32 widens a BF16 value (exact).
func BF16ToF32(h uint16) float32 { return half.BF16ToF32(h) }

// F32ToBF16 rounds to BF16, nearest even; NaN stays NaN.
func F32ToBF16(f float32) uint16 { return half.F32ToBF16(f) }

// F16ToF32 widens an IEEE half (exact, subnormals, Inf and NaN included).
func F16ToF32(h uint16) float32 { return half.F16ToF32(h) }

// F32ToF16 rounds to an IEEE half, nearest even, overflowing to Inf.
func F32ToF16(f float32) uint16 { return half.F32ToF16(f) }

// F32Bytes encodes v as little-endian F32 data.
func F32Bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// BF16Bytes encodes v as little-endian BF16 data, rounding to nearest even.
func BF16Bytes(v []float32) []byte {
	b := make([]byte, 2*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint16(b[2*i:], F32ToBF16(x))
	}
	return b
}

// F16Bytes encodes v as little-endian F16 data, rounding to nearest even.
func F16Bytes(v []float32) []byte {
	b := make([]byte, 2*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint16(b[2*i:], F32ToF16(x))
	}
	return b
}

// I32Bytes encodes v as little-endian I32 data.
func I32Bytes(v []int32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return b
}

// I64Bytes encodes v as little-endian I64 data.
func I64Bytes(v []int64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
	}
	return b
}
