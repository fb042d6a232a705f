package safetensors

import (
	"encoding/binary"
	"fmt"
	"math"
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

// BF16ToF32 widens a bfloat16 (the upper 16 bits of a float32) to float32.
// The conversion is exact.
func BF16ToF32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// F32ToBF16 rounds f to the nearest bfloat16, ties to even. NaNs stay NaNs
// (quiet) and values beyond the bfloat16 range become infinities.
func F32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 { // NaN: keep sign and top payload, force quiet
		return uint16(b>>16) | 0x0040
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// F16ToF32 converts an IEEE 754 half-precision value to float32, exactly,
// including subnormals, infinities and NaNs.
func F16ToF32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // infinity or NaN; the payload is kept
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case exp != 0: // normal
		return math.Float32frombits(sign | (exp+127-15)<<23 | man<<13)
	case man == 0: // signed zero
		return math.Float32frombits(sign)
	}
	// Subnormal: man·2^-24. Normalise so that the implicit bit is set.
	e := uint32(127 - 15 + 1)
	for man&0x400 == 0 {
		man <<= 1
		e--
	}
	return math.Float32frombits(sign | e<<23 | (man&0x3ff)<<13)
}

// F32ToF16 rounds f to the nearest IEEE 754 half-precision value, ties to
// even, producing subnormals for tiny values and infinities on overflow.
// NaNs stay NaNs (quiet).
func F32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	man := b & 0x7fffff
	if exp == 0xff {
		if man == 0 {
			return sign | 0x7c00
		}
		return sign | 0x7e00 | uint16(man>>13)
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 { // the result is subnormal or zero
		if e < -10 {
			return sign
		}
		m := man | 0x800000
		shift := uint32(14 - e)
		return sign | uint16(roundShift(m, shift))
	}
	// A carry out of the mantissa correctly bumps the exponent (to infinity
	// at the top of the range).
	return sign | uint16(roundShift(uint32(e)<<23|man, 13))
}

// roundShift returns v >> shift rounded to the nearest integer, ties to even.
func roundShift(v, shift uint32) uint32 {
	q := v >> shift
	rem := v & (1<<shift - 1)
	half := uint32(1) << (shift - 1)
	if rem > half || (rem == half && q&1 == 1) {
		q++
	}
	return q
}

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
