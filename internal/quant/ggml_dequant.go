package quant

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/ktune/ktune/internal/gguf"
	"github.com/ktune/ktune/internal/half"
)

// ggml's reference dequantization (ggml-quants.c, dequantize_row_*), one
// block at a time, with ggml's float32 operations in ggml's order. Every
// product here of an f16 scale (11 significant bits) and the integers of
// a block is exact in float32: at most 7 more bits for a scale (q6_K's
// int8) and 5 for a quant make 23 ≤ 24. So each value is an exact product,
// or one rounding of the difference of two (the types with a min), and
// neither the order of operations nor an FMA can change it; the explicit
// float32 conversions keep ggml's order all the same.
//
// Block layouts (ggml-common.h; all f16 little-endian, q the stored
// integer, e the element index inside the block):
//
//	q4_0  18 B: d, qs[16]          q = qs[e%16] nibble (low for e<16)  w = (q−8)·d
//	q4_1  20 B: d, m, qs[16]       q as q4_0                           w = q·d + m
//	q5_0  22 B: d, qh u32, qs[16]  q = nibble | (qh>>e&1)<<4           w = (q−16)·d
//	q5_1  24 B: d, m, qh, qs[16]   q as q5_0                           w = q·d + m
//	q8_0  34 B: d, qs[32] int8                                         w = q·d
//	q2_K  84 B: scales[16], qs[64], d, dmin; sub-block s = e/16:
//	      sc = scales[s]&15, mn = scales[s]>>4, q = qs[32h+l]>>2j & 3
//	      (h = e/128, j = e%128/32, l = e%32)      w = (d·sc)·q − dmin·mn
//	q3_K 110 B: hmask[32], qs[64], scales[12] (16 × 6 bits), d; s = e/16:
//	      q = (qs[32h+l]>>2j & 3) − (hmask[l]>>(4h+j)&1 ? 0 : 4)
//	                                               w = (d·(sc−32))·q
//	q4_K 144 B: d, dmin, scales[12] (8 × 6-bit sc and mn), qs[128];
//	      s = e/32, q = qs[32(s/2)+l] nibble (high for odd s)
//	                                               w = (d·sc)·q − dmin·mn
//	q5_K 176 B: d, dmin, scales[12], qh[32], qs[128]; q4_K's nibble
//	      + 16·(qh[l]>>s & 1)                      w = (d·sc)·q − dmin·mn
//	q6_K 210 B: ql[128], qh[64], scales[16] int8, d; s = e/16, t = e%128/32:
//	      q = (ql[64h+32(t&1)+l] nibble (high for t≥2) | (qh[32h+l]>>2t&3)<<4) − 32
//	                                               w = (d·sc)·q
//	iq4_nl 18 B: d, qs[16]        v = IQ4NLValues[q4_0's nibble]      w = d·v
//	iq4_xs 136 B: d, scales_h u16, scales_l[4], qs[128]; s = e/32:
//	      ls = scales_l[s/2] nibble (high for odd s) | (scales_h>>2s&3)<<4,
//	      v = IQ4NLValues[qs[16s+l] nibble (high for l ≥ 16)], l = e%32
//	                                               w = (d·(ls−32))·v
//	mxfp4  17 B: e (E8M0), qs[16]  v = MXFP4Values[q4_0's nibble]     w = v·2^(e−128)
//
// The codebook types' products are exact as well: an iq4_xs group scale
// d·(ls−32) has at most 17 significant bits and a codebook value 7; an
// mxfp4 scale is a power of two (2^(e−128), ggml_e8m0_to_fp32_half: the
// subnormals 2^−128 and 2^−127 for e = 0 and 1; never NaN).

// ggmlBlockFunc dequantizes one block b into y (BlockSize values).
type ggmlBlockFunc func(b []byte, y []float32)

// ggmlTypeInfo describes how this package handles a ggml type.
type ggmlTypeInfo struct {
	block   ggmlBlockFunc
	scales  []int // byte offsets of the f16 scales inside a block (quantized types)
	refusal string
}

func f16At(b []byte, off int) float32 { return half.F16ToF32(binary.LittleEndian.Uint16(b[off:])) }

var ggmlTypes = map[gguf.Type]ggmlTypeInfo{
	gguf.TypeF32:  {block: dequantF32},
	gguf.TypeF16:  {block: dequantF16},
	gguf.TypeBF16: {block: dequantBF16},
	gguf.TypeQ4_0: {block: dequantQ4_0, scales: []int{0}},
	gguf.TypeQ4_1: {block: dequantQ4_1, scales: []int{0, 2}},
	gguf.TypeQ5_0: {block: dequantQ5_0, scales: []int{0}},
	gguf.TypeQ5_1: {block: dequantQ5_1, scales: []int{0, 2}},
	gguf.TypeQ8_0: {block: dequantQ8_0, scales: []int{0}},
	gguf.TypeQ2_K: {block: dequantQ2_K, scales: []int{80, 82}},
	gguf.TypeQ3_K: {block: dequantQ3_K, scales: []int{108}},
	gguf.TypeQ4_K: {block: dequantQ4_K, scales: []int{0, 2}},
	gguf.TypeQ5_K: {block: dequantQ5_K, scales: []int{0, 2}},
	gguf.TypeQ6_K: {block: dequantQ6_K, scales: []int{208}},

	gguf.TypeIQ4_NL: {block: dequantIQ4_NL, scales: []int{0}},
	gguf.TypeIQ4_XS: {block: dequantIQ4_XS, scales: []int{0}},
	gguf.TypeMXFP4:  {block: dequantMXFP4}, // E8M0 scales: every byte is a finite power of two

	gguf.TypeQ8_1: {refusal: "is an activation format (ggml's vec_dot_type for q4_1/q5_1) that model files do not hold"},
	gguf.TypeQ8_K: {refusal: "is an activation format (ggml's vec_dot_type for the K-quants) that model files do not hold"},
}

// ggmlType returns the handling of t, or an error naming the type.
func ggmlType(t gguf.Type) (ggmlTypeInfo, error) {
	info, ok := ggmlTypes[t]
	switch {
	case ok && info.refusal != "":
		return info, fmt.Errorf("quant: ggml type %s %s", t, info.refusal)
	case ok:
		return info, nil
	case !t.Known():
		return info, fmt.Errorf("quant: unknown ggml type %s", t)
	}
	return info, fmt.Errorf("quant: ggml type %s is not supported (supported: f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, q8_0, q2_K, q3_K, q4_K, q5_K, q6_K, iq4_nl, iq4_xs, mxfp4); requantize the model with one of them", t)
}

// DequantizeGGML widens ggml type t (raw: whole blocks, row-major) into dst
// (len = elements), computing each value as ggml's dequantize_row_* does in
// float32 (the same operations in the same order), so the results are
// bit-identical to ggml's CPU reference dequantization. It refuses the
// types in ggmlTypes' refusals, the IQ types but iq4_nl and iq4_xs, and the TQ
// types, naming the
// type, a size mismatch, and blocks whose f16 scales (or, for f32, f16 and
// bf16, whose values) are infinite or NaN, naming the block and elements.
func DequantizeGGML(t gguf.Type, raw []byte, dst []float32) error {
	info, err := ggmlType(t)
	if err != nil {
		return err
	}
	bs, bb := t.BlockSize(), t.BlockBytes()
	if len(dst)%bs != 0 {
		return fmt.Errorf("quant: ggml %s: %d elements is not a whole number of %d-element blocks", t, len(dst), bs)
	}
	if want := len(dst) / bs * bb; len(raw) != want {
		return fmt.Errorf("quant: ggml %s: %d elements need %d bytes, got %d", t, len(dst), want, len(raw))
	}
	if blk, msg := ggmlNonFinite(t, info, raw); blk >= 0 {
		if bs == 1 {
			return fmt.Errorf("quant: ggml %s element %d: %s", t, blk, msg)
		}
		return fmt.Errorf("quant: ggml %s block %d (elements %d..%d): %s", t, blk, blk*bs, (blk+1)*bs-1, msg)
	}
	if t == gguf.TypeF32 || t == gguf.TypeF16 || t == gguf.TypeBF16 {
		info.block(raw, dst) // the plain types take any number of elements at once
		return nil
	}
	for i := 0; i < len(dst)/bs; i++ {
		info.block(raw[i*bb:(i+1)*bb], dst[i*bs:(i+1)*bs])
	}
	return nil
}

// ggmlNonFinite returns the first block (element, for the plain types) of
// raw whose scale or value is infinite or NaN, and a description, or −1.
// Every output of a quantized block is a product with each of its f16
// scales, so finite scales give finite values (the largest, q6_K's
// 65504·128·32, is far inside float32).
func ggmlNonFinite(t gguf.Type, info ggmlTypeInfo, raw []byte) (int, string) {
	switch t {
	case gguf.TypeF32:
		for i := 0; i+4 <= len(raw); i += 4 {
			if v := binary.LittleEndian.Uint32(raw[i:]); v&0x7f800000 == 0x7f800000 {
				return i / 4, fmt.Sprintf("non-finite value %v (0x%08x)", math.Float32frombits(v), v)
			}
		}
	case gguf.TypeF16:
		for i := 0; i+2 <= len(raw); i += 2 {
			if h := binary.LittleEndian.Uint16(raw[i:]); h&0x7c00 == 0x7c00 {
				return i / 2, fmt.Sprintf("non-finite value %v (f16 0x%04x)", half.F16ToF32(h), h)
			}
		}
	case gguf.TypeBF16:
		for i := 0; i+2 <= len(raw); i += 2 {
			if h := binary.LittleEndian.Uint16(raw[i:]); h&0x7f80 == 0x7f80 {
				return i / 2, fmt.Sprintf("non-finite value %v (bf16 0x%04x)", half.BF16ToF32(h), h)
			}
		}
	case gguf.TypeMXFP4:
		for i := 0; i+t.BlockBytes() <= len(raw); i += t.BlockBytes() {
			if e := raw[i]; e > MXFP4MaxExp {
				return i / t.BlockBytes(), fmt.Sprintf("scale exponent %d: its weights (up to 12·2^%d) overflow float32", e, int(e)-128)
			}
		}
	default:
		bb := t.BlockBytes()
		for i := 0; i+bb <= len(raw); i += bb {
			for _, off := range info.scales {
				if h := binary.LittleEndian.Uint16(raw[i+off:]); h&0x7c00 == 0x7c00 {
					return i / bb, fmt.Sprintf("non-finite scale %v (f16 0x%04x at block byte %d)", half.F16ToF32(h), h, off)
				}
			}
		}
	}
	return -1, ""
}

// ---- the plain types (any number of elements) ----

func dequantF32(b []byte, y []float32) {
	for i := range y {
		y[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
}

func dequantF16(b []byte, y []float32) {
	for i := range y {
		y[i] = half.F16ToF32(binary.LittleEndian.Uint16(b[2*i:]))
	}
}

func dequantBF16(b []byte, y []float32) {
	for i := range y {
		y[i] = half.BF16ToF32(binary.LittleEndian.Uint16(b[2*i:]))
	}
}

// ---- 32-element blocks ----

// dequantQ4_0: w = (q−8)·d.
func dequantQ4_0(b []byte, y []float32) {
	d, qs := f16At(b, 0), b[2:18]
	for j, q := range qs {
		y[j] = float32(int(q&15)-8) * d
		y[j+16] = float32(int(q>>4)-8) * d
	}
}

// dequantQ4_1: w = q·d + m.
func dequantQ4_1(b []byte, y []float32) {
	d, m, qs := f16At(b, 0), f16At(b, 2), b[4:20]
	for j, q := range qs {
		y[j] = float32(float32(q&15)*d) + m
		y[j+16] = float32(float32(q>>4)*d) + m
	}
}

// q5Quants unpacks the 32 5-bit integers of a q5_0/q5_1 block: the
// nibbles of qs and bit e of the little-endian qh.
func q5Quants(qh uint32, qs []byte, q *[32]int) {
	for j := 0; j < 16; j++ {
		q[j] = int(qs[j]&15) | int(qh>>j&1)<<4
		q[j+16] = int(qs[j]>>4) | int(qh>>(j+16)&1)<<4
	}
}

// dequantQ5_0: w = (q−16)·d.
func dequantQ5_0(b []byte, y []float32) {
	var q [32]int
	d := f16At(b, 0)
	q5Quants(binary.LittleEndian.Uint32(b[2:]), b[6:22], &q)
	for j, v := range q {
		y[j] = float32(v-16) * d
	}
}

// dequantQ5_1: w = q·d + m.
func dequantQ5_1(b []byte, y []float32) {
	var q [32]int
	d, m := f16At(b, 0), f16At(b, 2)
	q5Quants(binary.LittleEndian.Uint32(b[4:]), b[8:24], &q)
	for j, v := range q {
		y[j] = float32(float32(v)*d) + m
	}
}

// dequantQ8_0: w = q·d.
func dequantQ8_0(b []byte, y []float32) {
	d := f16At(b, 0)
	for j, q := range b[2:34] {
		y[j] = float32(int8(q)) * d
	}
}

// ---- 256-element super-blocks (K-quants) ----

// dequantQ2_K: 16 sub-blocks of 16; w = (d·sc)·q − dmin·mn.
func dequantQ2_K(b []byte, y []float32) {
	scales, qs := b[0:16], b[16:80]
	d, dmin := f16At(b, 80), f16At(b, 82)
	for s := 0; s < 16; s++ {
		dl := d * float32(scales[s]&15)
		ml := dmin * float32(scales[s]>>4)
		h, j, half := s/8, s%8/2, s%2
		q := qs[32*h+16*half:]
		for l := 0; l < 16; l++ {
			y[16*s+l] = float32(dl*float32(q[l]>>(2*j)&3)) - ml
		}
	}
}

// q3KScale returns the 6-bit scale of sub-block s (0..15) of a q3_K
// super-block, unbiased: the low 4 bits are nibbles of bytes 0..7 (low
// nibbles for s < 8), the high 2 bits a crumb of bytes 8..11.
func q3KScale(sc []byte, s int) int {
	lo := sc[s%8] & 15
	if s >= 8 {
		lo = sc[s%8] >> 4
	}
	hi := sc[8+s%4] >> (2 * (s / 4)) & 3
	return int(lo|hi<<4) - 32
}

// q3KQuant returns element l (0..31) of column j (0..3) of half h of a
// q3_K super-block: the 2 low bits from qs, minus 4 when the hmask bit is
// clear.
func q3KQuant(hmask, qs []byte, h, j, l int) int {
	q := int(qs[32*h+l] >> (2 * j) & 3)
	if hmask[l]>>(4*h+j)&1 == 0 {
		q -= 4
	}
	return q
}

// dequantQ3_K: 16 sub-blocks of 16; w = (d·(sc−32))·q.
func dequantQ3_K(b []byte, y []float32) {
	hmask, qs, scales := b[0:32], b[32:96], b[96:108]
	d := f16At(b, 108)
	for s := 0; s < 16; s++ {
		dl := d * float32(q3KScale(scales, s))
		h, j, half := s/8, s%8/2, s%2
		for l := 0; l < 16; l++ {
			y[16*s+l] = dl * float32(q3KQuant(hmask, qs, h, j, 16*half+l))
		}
	}
}

// dequantQ4_K: 8 sub-blocks of 32; w = (d·sc)·q − dmin·mn.
func dequantQ4_K(b []byte, y []float32) {
	d, dmin, scales, qs := f16At(b, 0), f16At(b, 2), b[4:16], b[16:144]
	for s := 0; s < 8; s++ {
		sc, mn := q4KScaleMin(scales, s)
		d1, m1 := d*float32(sc), dmin*float32(mn)
		q := qs[32*(s/2) : 32*(s/2)+32]
		shift := 4 * (s % 2)
		for l, v := range q {
			y[32*s+l] = float32(d1*float32(v>>shift&15)) - m1
		}
	}
}

// dequantQ5_K: 8 sub-blocks of 32; w = (d·sc)·q − dmin·mn, q of 5 bits.
func dequantQ5_K(b []byte, y []float32) {
	d, dmin, scales, qh, qs := f16At(b, 0), f16At(b, 2), b[4:16], b[16:48], b[48:176]
	for s := 0; s < 8; s++ {
		sc, mn := q4KScaleMin(scales, s)
		d1, m1 := d*float32(sc), dmin*float32(mn)
		q := qs[32*(s/2) : 32*(s/2)+32]
		shift := 4 * (s % 2)
		for l, v := range q {
			y[32*s+l] = float32(d1*float32(int(v>>shift&15)+int(qh[l]>>s&1)*16)) - m1
		}
	}
}

// q6KQuant returns element l (0..31) of quarter t (0..3) of half h of a
// q6_K super-block, unbiased (−32..31).
func q6KQuant(ql, qh []byte, h, t, l int) int {
	lo := ql[64*h+32*(t&1)+l]
	if t >= 2 {
		lo >>= 4
	}
	return int(lo&15|(qh[32*h+l]>>(2*t)&3)<<4) - 32
}

// dequantQ6_K: 16 sub-blocks of 16; w = (d·sc)·q.
func dequantQ6_K(b []byte, y []float32) {
	ql, qh, scales := b[0:128], b[128:192], b[192:208]
	d := f16At(b, 208)
	for h := 0; h < 2; h++ {
		for t := 0; t < 4; t++ {
			for l := 0; l < 32; l++ {
				sc := int8(scales[8*h+2*t+l/16])
				y[128*h+32*t+l] = float32(d*float32(sc)) * float32(q6KQuant(ql, qh, h, t, l))
			}
		}
	}
}

// ---- the codebook types ----

// IQ4NLValues is ggml's kvalues_iq4nl: the 16 values a 4-bit code of
// iq4_nl and iq4_xs stands for, before the block scale.
var IQ4NLValues = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// MXFP4Values is ggml's kvalues_mxfp4: twice the E2M1 value of each 4-bit
// code (the scale is halved to match: MXFP4Scale).
var MXFP4Values = [16]int8{0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12}

// MXFP4MaxExp is the largest E8M0 exponent whose weights are finite
// (12·2^(e−128) < 2^128); a larger one is refused as non-finite.
const MXFP4MaxExp = 252

// MXFP4Scale is ggml_e8m0_to_fp32_half: 2^(e−128) as the bits ggml builds.
func MXFP4Scale(e byte) float32 {
	if e < 2 {
		return math.Float32frombits(0x00200000 << e)
	}
	return math.Float32frombits(uint32(e-1) << 23)
}

// IQ4XSScale is the 6-bit scale code ls of group s (0…7) of an iq4_xs
// block b; the group's scale is d·(ls−32).
func IQ4XSScale(b []byte, s int) int {
	lo := int(b[4+s/2]>>(4*(s%2))) & 15
	hi := int(binary.LittleEndian.Uint16(b[2:])>>(2*s)) & 3
	return lo | hi<<4
}

// dequantIQ4_NL: w = d·v.
func dequantIQ4_NL(b []byte, y []float32) {
	d, qs := f16At(b, 0), b[2:18]
	for j, q := range qs {
		y[j] = d * float32(IQ4NLValues[q&15])
		y[j+16] = d * float32(IQ4NLValues[q>>4])
	}
}

// dequantIQ4_XS: 8 groups of 32; w = (d·(ls−32))·v.
func dequantIQ4_XS(b []byte, y []float32) {
	d := f16At(b, 0)
	for s := 0; s < 8; s++ {
		dl := d * float32(IQ4XSScale(b, s)-32)
		qs := b[8+16*s : 8+16*(s+1)]
		for j, q := range qs {
			y[32*s+j] = dl * float32(IQ4NLValues[q&15])
			y[32*s+j+16] = dl * float32(IQ4NLValues[q>>4])
		}
	}
}

// dequantMXFP4: w = v·2^(e−128).
func dequantMXFP4(b []byte, y []float32) {
	d, qs := MXFP4Scale(b[0]), b[1:17]
	for j, q := range qs {
		y[j] = float32(MXFP4Values[q&15]) * d
		y[j+16] = float32(MXFP4Values[q>>4]) * d
	}
}
