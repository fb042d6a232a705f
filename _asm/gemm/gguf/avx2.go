// The AVX2 kernels of the GGUF formats (-isa avx2): the row kernels for
// 1…4 activation rows on ymm registers 0–15 (VEX encodings only).
//
//	ggufY{T}_{M}, M = 1…4
//
// Per unit of 256 values and group of 32 (one ymm of unsigned or signed
// bytes, in order), each activation row takes VPMADDUBSW (unsigned weights
// times signed activations, pairs summed to int16; the int8 types q8_0,
// iq4_nl, iq4_xs and mxfp4 as |v| against the activations' signs flipped
// where v < 0, as ggml does) and VPMADDWD against ones (int32 sums of 4),
// converted to f32 and added, times the group's (or, for q2_K, q3_K and
// q6_K, each 16 values') weight scale times activation scale, into the
// row's accumulator. Per unit a type with a min subtracts (q4_1, q5_1:
// adds) its mins times A = xs·Σxq per 16 values; a type whose unsigned
// weights carry a zero point z subtracts z times its scales times A.
//
// The prepared activations (kernels/gemm: ggufPrepY), per row and unit of
// 256 values, 416 bytes: xq[256] (int8, in order), XS[8] (f32, each
// group's scale), XS16[16] (f32, each 16 values' group scale), A[16] (f32,
// xs·Σxq of each 16 values).

package main

import (
	"fmt"
	"log"
	"math"
	"os"
	"regexp"

	"github.com/ktune/ktune/_asm/internal/rows"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

const (
	yUnit = 416
	yXS   = 256
	yXS16 = 288
	yA    = 352
	yMaxM = 4
)

// yConsts are the AVX2 kernels' constants (32 bytes each unless noted).
var yConsts struct {
	nib, c03, c04, c10, c01, ones16, bits, spreadBits Mem
	books                                             map[string]Mem
	gather                                            map[int]Mem
	lo16, hi16                                        [2]Mem // [0,0,1,1,2,2,3,3] and [4,4,5,5,6,6,7,7]
	pairs                                             [4]Mem // [2g ×4, 2g+1 ×4] within a half of 8 (g = 0…3)
	one, two, den, sub32, lowWords                    Mem
	z                                                 map[int]Mem // f32 ×8 of each zero point
}

// yMakeConsts emits the AVX2 kernels' constants, in the file's order.
func yMakeConsts() {
	c := &yConsts
	yByteConsts()
	c.gather = gatherConsts("ggufy_gather%d")
	c.lo16[0] = dwords8("ggufy_lo16", 0, 0, 1, 1, 2, 2, 3, 3)
	c.lo16[1] = dwords8("ggufy_hi16", 4, 4, 5, 5, 6, 6, 7, 7)
	for g := 0; g < 4; g++ {
		v := make([]uint32, 8)
		for l := range v {
			v[l] = uint32(2*g + l/4)
		}
		c.pairs[g] = dwords8(fmt.Sprintf("ggufy_pairs%d", g), v...)
	}
	c.one = dwords8("ggufy_one", 1)
	c.two = dwords8("ggufy_two", 2)
	c.den = dwords8("ggufy_den", 0x00200000)
	c.sub32 = dwords8("ggufy_sub32", 32)
	c.lowWords = bytes32("ggufy_lowwords", 0, 1, 4, 5, 8, 9, 12, 13, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80)
	c.z = map[int]Mem{}
	for _, t := range types {
		z := yZero(t)
		if _, ok := c.z[z]; z != 0 && !ok {
			c.z[z] = dwords8(fmt.Sprintf("ggufy_z%d", z), f32bits(float32(z)))
		}
	}
}

// yByteConsts emits the AVX2 kernels' byte masks, word ones, qh bit
// spreads and codebooks (signed values).
func yByteConsts() {
	c := &yConsts
	c.nib = bytes32("ggufy_nib", 0x0f)
	c.c03 = bytes32("ggufy_c03", 0x03)
	c.c04 = bytes32("ggufy_c04", 0x04)
	c.c10 = bytes32("ggufy_c10", 0x10)
	c.c01 = bytes32("ggufy_c01", 0x01)
	c.ones16 = GLOBL("ggufy_ones16", RODATA|NOPTR)
	for i := 0; i < 32; i += 2 {
		DATA(i, U16(1))
	}
	// ggml's bytes_from_bits_32: byte i selects bit i%8 of its qh byte
	c.bits = bytes32("ggufy_bits", 0xfe, 0xfd, 0xfb, 0xf7, 0xef, 0xdf, 0xbf, 0x7f)
	sb := make([]byte, 32)
	for i := range sb {
		sb[i] = byte(i / 8)
	}
	c.spreadBits = bytes32("ggufy_spreadbits", sb...)
	c.books = map[string]Mem{}
	for _, nb := range codebooks {
		var bs []byte
		for _, v := range nb.b {
			bs = append(bs, byte(int8(v)))
		}
		c.books[nb.name] = bytes32("ggufy_book_"+nb.name, bs...)
	}
}

// bytes32 is a 32-byte constant of repeating bytes b.
func bytes32(name string, b ...byte) Mem {
	m := GLOBL(name, RODATA|NOPTR)
	for i := 0; i < 32; i++ {
		DATA(i, U8(b[i%len(b)]))
	}
	return m
}

// dwords8 is a constant of 8 dwords, v repeated.
func dwords8(name string, v ...uint32) Mem {
	m := GLOBL(name, RODATA|NOPTR)
	for i := 0; i < 8; i++ {
		DATA(4*i, U32(v[i%len(v)]))
	}
	return m
}

func f32bits(f float32) uint32 { return math.Float32bits(f) }

// ySigned reports whether t's AVX2 weights are signed bytes v (the int8
// and codebook types), taken as |v| against sign-flipped activations.
func ySigned(t gtype) bool { return t.name == "Q8_0" || t.book != nil }

// yZero is the zero point of t's AVX2 unsigned weights (0 for the signed).
func yZero(t gtype) int {
	if ySigned(t) {
		return 0
	}
	return t.z
}

// ---- scales --------------------------------------------------------------

// yHalfBcast widens the f16 at m and broadcasts it to a ymm.
func yHalfBcast(m Mem) VecVirtual { return halfBcast(m, YMM) }

// yBytesF32 widens the 8 unsigned bytes of g to f32 (sub: less 32).
func yBytesF32(g Register, sub bool) VecVirtual {
	x := XMM()
	VMOVQ(g, x)
	y := YMM()
	VPMOVZXBD(x, y)
	if sub {
		VPSUBD(yConsts.sub32, y, y)
	}
	VCVTDQ2PS(y, y)
	return y
}

// yZeros and yOnes are a kernel's all-zero and all-ones registers, set
// once at its top: an idiom like VPXOR r, r, r on a fresh virtual register
// reads it, so avo would keep it live from the function's entry (and,
// out of the 16 ymm VEX encodes, allocate one of the EVEX-only 16–31).
var yZeros, yOnes VecVirtual

func yInitConsts() {
	yZeros, yOnes = YMM(), YMM()
	VPXOR(yZeros, yZeros, yZeros)
	VPCMPEQD(yOnes, yOnes, yOnes)
}

// yGather8 loads the dword at byte off of each of the unit's 8 blocks
// (the first nblk of them, the others 0, where nblk is a register).
func yGather8(t gtype, wp Register, off int, nblk Register) VecVirtual {
	idx, mask, d := YMM(), YMM(), YMM()
	VMOVDQU(yConsts.gather[t.bb], idx)
	VMOVDQU(yOnes, mask)
	if nblk != nil {
		// lanes < nblk: (lane index < nblk) from the gather offsets
		// (lane·bb < nblk·bb)
		lim := GP64()
		IMUL3Q(U32(t.bb), nblk, lim)
		l := YMM()
		VMOVQ(lim, l.AsX())
		VPBROADCASTD(l.AsX(), l)
		VPCMPGTD(idx, l, mask) // lim > lane·bb
	}
	VMOVDQU(yZeros, d)
	VPGATHERDD(mask, Mem{Base: wp, Index: idx, Scale: 1, Disp: off}, d)
	return d
}

// yHalf8 widens the low (hi: high) f16 of each of 8 dwords to f32.
func yHalf8(d VecVirtual, hi bool) VecVirtual {
	src := d
	if hi {
		src = YMM()
		VPSRLD(U8(16), d, src)
	}
	w := YMM()
	VPSHUFB(yConsts.lowWords, src, w) // words 0, 2, 4, 6 of each 128-bit lane
	VPERMQ(U8(0x08), w, w)            // the two lanes' low qwords side by side
	y := YMM()
	VCVTPH2PS(w.AsX(), y)
	return y
}

// yScales emits the unit's weight scales: sc (8 f32) or, for the types
// with 16, sc and sc2 (values 0–127, 128–255); and mn as 16 f32 in two
// ymm (natural order per 16 values): the mins, or z times the scales.
func yScales(t gtype, wp, nblk Register) (sc, sc2 VecVirtual, mn [2]VecVirtual) {
	var m8 VecVirtual // 8 mins, spread to 16 below
	switch t.name {
	case "Q8_0", "Q4_0", "Q5_0", "IQ4NL":
		sc = yHalf8(yGather8(t, wp, 0, nblk), false)
	case "Q4_1", "Q5_1":
		d := yGather8(t, wp, 0, nblk)
		sc, m8 = yHalf8(d, false), yHalf8(d, true)
	case "MXFP4":
		sc = yMXFP4Scales(t, wp, nblk)
	case "Q4K", "Q5K":
		d, dm := yHalfBcast(Mem{Base: wp}), yHalfBcast(Mem{Base: wp, Disp: 2})
		s0, m0 := kScalarCodes(wp)
		sc = yBytesF32(s0, false)
		VMULPS(d, sc, sc)
		m8 = yBytesF32(m0, false)
		VMULPS(dm, m8, m8)
	case "IQ4XS":
		d := yHalfBcast(Mem{Base: wp})
		sc = yBytesF32(iq4xsCodes(wp), true)
		VMULPS(d, sc, sc)
	case "Q2K":
		return yQ2KScales(wp)
	case "Q3K", "Q6K":
		sc, sc2 = yScales16(t, wp)
	default:
		panic(t.name)
	}
	return sc, sc2, yMins(t, sc, sc2, m8)
}

// yMins emits the unit's 16 mins (natural order per 16 values, two ymm):
// for a zero point z·s (sc, sc2: the scales), else the 8 mins m8 spread
// to 16 (none where m8 is nil).
func yMins(t gtype, sc, sc2, m8 VecVirtual) (mn [2]VecVirtual) {
	if z := yZero(t); z != 0 {
		zc := YMM()
		VMOVUPS(yConsts.z[z], zc)
		if sc2 != nil {
			mn[0], mn[1] = YMM(), YMM()
			VMULPS(zc, sc, mn[0])
			VMULPS(zc, sc2, mn[1])
			return mn
		}
		m8 = YMM()
		VMULPS(zc, sc, m8)
	}
	if m8 != nil {
		for h := 0; h < 2; h++ {
			mn[h] = YMM()
			idx := YMM()
			VMOVDQU(yConsts.lo16[h], idx)
			VPERMPS(m8, idx, mn[h])
		}
	}
	return mn
}

// yMXFP4Scales emits 2^(e−128) for the unit's 8 exponent bytes, as
// mxfp4UnitScales: (e−1)<<23, or 0x00200000<<e for e < 2.
func yMXFP4Scales(t gtype, wp, nblk Register) VecVirtual {
	g := yGather8(t, wp, 0, nblk)
	e := YMM()
	VPSLLD(U8(24), g, e)
	VPSRLD(U8(24), e, e)
	a, b, lt := YMM(), YMM(), YMM()
	VPSUBD(yConsts.one, e, a)
	VPSLLD(U8(23), a, a)
	VMOVDQU(yConsts.den, b)
	VPSLLVD(e, b, b)
	VMOVDQU(yConsts.two, lt)
	VPCMPGTD(e, lt, lt) // 2 > e
	VBLENDVPS(lt, b, a, a)
	return a
}

// yQ2KScales emits a q2_K unit's 16 scales d·(low nibble) and mins
// dm·(high nibble) of its scale bytes.
func yQ2KScales(wp Register) (sc, sc2 VecVirtual, mn [2]VecVirtual) {
	d, dm := yHalfBcast(Mem{Base: wp, Disp: 80}), yHalfBcast(Mem{Base: wp, Disp: 82})
	sc, sc2 = YMM(), YMM()
	VPMOVZXBD(Mem{Base: wp}, sc)
	VPMOVZXBD(Mem{Base: wp, Disp: 8}, sc2)
	mn[0], mn[1] = YMM(), YMM()
	for i, v := range []VecVirtual{sc, sc2} {
		VPSRLD(U8(4), v, mn[i])
		VCVTDQ2PS(mn[i], mn[i])
		VMULPS(dm, mn[i], mn[i])
		VPAND(yConsts.nib, v, v)
		VCVTDQ2PS(v, v)
		VMULPS(d, v, v)
	}
	return sc, sc2, mn
}

// yScales16 emits q3_K's (d·(code − 32)) or q6_K's (d·code) 16 scales.
func yScales16(t gtype, wp Register) (sc, sc2 VecVirtual) {
	if t.name == "Q3K" {
		d := yHalfBcast(Mem{Base: wp, Disp: 108})
		lo0, lo1 := q3Codes(wp)
		sc, sc2 = yBytesF32(lo0, true), yBytesF32(lo1, true)
		VMULPS(d, sc, sc)
		VMULPS(d, sc2, sc2)
		return sc, sc2
	}
	d := yHalfBcast(Mem{Base: wp, Disp: 208})
	sc, sc2 = YMM(), YMM()
	VPMOVSXBD(Mem{Base: wp, Disp: 192}, sc)
	VPMOVSXBD(Mem{Base: wp, Disp: 200}, sc2)
	VCVTDQ2PS(sc, sc)
	VCVTDQ2PS(sc2, sc2)
	VMULPS(d, sc, sc)
	VMULPS(d, sc2, sc2)
	return sc, sc2
}

// kScalarCodes decodes a q4_K/q5_K block's 8 scale and 8 min codes (bytes
// of two GP registers), ggml's get_scale_min_k4 by 32-bit words.
func kScalarCodes(wp Register) (s0, m0 Register) {
	a, b, c := GP64(), GP64(), GP64()
	MOVL(Mem{Base: wp, Disp: 4}, a.As32())
	MOVL(Mem{Base: wp, Disp: 8}, b.As32())
	MOVL(Mem{Base: wp, Disp: 12}, c.As32())
	s, t0 := GP64(), GP64()
	MOVL(a.As32(), s.As32())
	ANDL(U32(0x3f3f3f3f), s.As32())
	MOVL(a.As32(), t0.As32())
	SHRL(U8(6), t0.As32())
	ANDL(U32(0x03030303), t0.As32())
	SHLL(U8(4), t0.As32())
	s1 := GP64()
	MOVL(c.As32(), s1.As32())
	ANDL(U32(0x0f0f0f0f), s1.As32())
	ORL(t0.As32(), s1.As32())
	SHLQ(U8(32), s1)
	ORQ(s1, s)
	m, t1 := GP64(), GP64()
	MOVL(b.As32(), m.As32())
	ANDL(U32(0x3f3f3f3f), m.As32())
	MOVL(b.As32(), t1.As32())
	SHRL(U8(6), t1.As32())
	ANDL(U32(0x03030303), t1.As32())
	SHLL(U8(4), t1.As32())
	SHRL(U8(4), c.As32())
	ANDL(U32(0x0f0f0f0f), c.As32())
	ORL(t1.As32(), c.As32())
	SHLQ(U8(32), c)
	ORQ(c, m)
	return s, m
}

// q3Codes decodes a q3_K block's 16 6-bit scale codes into the bytes of two
// GP registers (codes 0–7, 8–15).
func q3Codes(wp Register) (lo0, lo1 Register) {
	q, h := GP64(), GP64()
	MOVQ(Mem{Base: wp, Disp: 96}, q)
	MOVL(Mem{Base: wp, Disp: 104}, h.As32())
	m := GP64()
	MOVQ(U64(0x0f0f0f0f0f0f0f0f), m)
	lo0, lo1 = GP64(), GP64()
	MOVQ(q, lo0)
	ANDQ(m, lo0)
	MOVQ(q, lo1)
	SHRQ(U8(4), lo1)
	ANDQ(m, lo1)
	hb := func(shift int) Register {
		r := GP64()
		MOVL(h.As32(), r.As32())
		if shift > 0 {
			SHRL(U8(shift), r.As32())
		}
		ANDL(U32(0x03030303), r.As32())
		return r
	}
	h0, h1, h2, h3 := hb(0), hb(2), hb(4), hb(6)
	SHLQ(U8(32), h1)
	ORQ(h1, h0)
	SHLQ(U8(4), h0)
	ORQ(h0, lo0)
	SHLQ(U8(32), h3)
	ORQ(h3, h2)
	SHLQ(U8(4), h2)
	ORQ(h2, lo1)
	return lo0, lo1
}

// ---- weights ---------------------------------------------------------------

// yState is what a unit's groups share.
type yState struct {
	q, hm VecVirtual // a loaded stripe (q2_K/q3_K/q4_K/q5_K/q6_K), q3_K's hmask, q5_K's qh
	qh    VecVirtual
}

// yNibbles16 unpacks the 16 bytes of nibbles at m: the low nibbles, then
// the high ones.
func yNibbles16(m Mem) VecVirtual {
	// (whole-register writes only: avo takes a write of a ymm's low half
	// for a read of the rest, live from the function's entry)
	y, h := YMM(), YMM()
	VBROADCASTI128(m, y)
	VPSRLW(U8(4), y, h)
	VPBLENDD(U8(0xf0), h, y, y)
	VPAND(yConsts.nib, y, y)
	return y
}

// yGroup emits group g's 32 weights: unsigned bytes u, or for a signed
// type the values v.
func yGroup(t gtype, wp Register, g int, st *yState) VecVirtual {
	var y VecVirtual
	switch t.name {
	case "Q8_0":
		y = YMM()
		VMOVDQU(Mem{Base: wp, Disp: g*t.bb + t.qs}, y)
	case "Q4_0", "Q4_1", "IQ4NL", "MXFP4", "Q5_0", "Q5_1":
		y = yNibbles16(Mem{Base: wp, Disp: g*t.bb + t.qs})
		if t.name == "Q5_0" || t.name == "Q5_1" {
			yQ5FifthBits(Mem{Base: wp, Disp: g*t.bb + t.qs - 4}, y)
		}
	case "IQ4XS":
		y = yNibbles16(Mem{Base: wp, Disp: 8 + 16*g})
	case "Q4K", "Q5K":
		y = yGroupQ45K(t, wp, g, st)
	case "Q2K", "Q3K":
		y = yGroupQ23K(t, wp, g, st)
	case "Q6K":
		y = yGroupQ6K(wp, g, st)
	default:
		panic(t.name)
	}
	if t.book != nil {
		b := YMM()
		name := "iq4nl"
		if t.name == "MXFP4" {
			name = "mxfp4"
		}
		VMOVDQU(yConsts.books[name], b)
		VPSHUFB(y, b, y)
	}
	return y
}

// yQ5FifthBits ors 16 into the bytes of y whose fifth bit is set: qh bit
// e (of the dword at qh) → value e (ggml's bytes_from_bits_32).
func yQ5FifthBits(qh Mem, y VecVirtual) {
	q := YMM()
	VPBROADCASTD(qh, q)
	VPSHUFB(yConsts.spreadBits, q, q)
	VPOR(yConsts.bits, q, q)
	VPCMPEQB(yOnes, q, q)
	VPAND(yConsts.c10, q, q)
	VPOR(q, y, y)
}

// yGroupQ45K emits a q4_K/q5_K group: the low (even g) or high nibbles of
// a 32-byte stripe, and for q5_K the qh bit g of each byte (the unit's qh
// loaded at group 0) at bit 4.
func yGroupQ45K(t gtype, wp Register, g int, st *yState) VecVirtual {
	off := 16
	if t.name == "Q5K" {
		off = 48
	}
	if g%2 == 0 {
		st.q = YMM()
		VMOVDQU(Mem{Base: wp, Disp: off + 16*g}, st.q)
	}
	y := YMM()
	if g%2 == 0 {
		VPAND(yConsts.nib, st.q, y)
	} else {
		VPSRLW(U8(4), st.q, y)
		VPAND(yConsts.nib, y, y)
	}
	if t.name != "Q5K" {
		return y
	}
	if g == 0 {
		st.qh = YMM()
		VMOVDQU(Mem{Base: wp, Disp: 16}, st.qh)
	}
	f := YMM()
	if g > 0 {
		VPSRLW(U8(g), st.qh, f)
		VPAND(yConsts.c01, f, f)
	} else {
		VPAND(yConsts.c01, st.qh, f)
	}
	VPSLLW(U8(4), f, f)
	VPOR(f, y, y)
	return y
}

// yGroupQ23K emits a q2_K/q3_K group: two-bit field j = g%4 of a 32-byte
// stripe, and for q3_K 4 where hmask bit 4h+j is set (the unit's hmask
// loaded at group 0).
func yGroupQ23K(t gtype, wp Register, g int, st *yState) VecVirtual {
	off := 16
	if t.name == "Q3K" {
		off = 32
	}
	h, j := g/4, g%4
	if j == 0 {
		st.q = YMM()
		VMOVDQU(Mem{Base: wp, Disp: off + 32*h}, st.q)
	}
	y := YMM()
	if j > 0 {
		VPSRLW(U8(2*j), st.q, y)
		VPAND(yConsts.c03, y, y)
	} else {
		VPAND(yConsts.c03, st.q, y)
	}
	if t.name != "Q3K" {
		return y
	}
	if g == 0 {
		st.hm = YMM()
		VMOVDQU(Mem{Base: wp}, st.hm)
	}
	sel := YMM()
	b := GP32()
	MOVL(U32(uint32(1)<<(4*h+j)*0x01010101), b)
	VMOVD(b, sel.AsX())
	VPBROADCASTD(sel.AsX(), sel)
	f := YMM()
	VPAND(st.hm, sel, f)
	VPCMPEQB(sel, f, f)
	VPAND(yConsts.c04, f, f)
	VPADDB(f, y, y)
	return y
}

// yGroupQ6K emits a q6_K group: a nibble of its ql stripe and the two
// high bits 2tq, 2tq+1 of its qh stripe (loaded at tq = 0) at bits 4–5.
func yGroupQ6K(wp Register, g int, st *yState) VecVirtual {
	h, tq := g/4, g%4
	y := YMM()
	ql := Mem{Base: wp, Disp: 64*h + 32*(tq&1)}
	VMOVDQU(ql, y)
	if tq >= 2 {
		VPSRLW(U8(4), y, y)
	}
	VPAND(yConsts.nib, y, y)
	if tq == 0 {
		st.qh = YMM()
		VMOVDQU(Mem{Base: wp, Disp: 128 + 32*h}, st.qh)
	}
	f := YMM()
	if tq > 0 {
		VPSRLW(U8(2*tq), st.qh, f)
		VPAND(yConsts.c03, f, f)
	} else {
		VPAND(yConsts.c03, st.qh, f)
	}
	VPSLLW(U8(4), f, f)
	VPOR(f, y, y)
	return y
}

// ---- the kernel ------------------------------------------------------------

// yRowKernel is what the steps of an AVX2 row kernel ggufY{T}_{M} share.
type yRowKernel struct {
	t     gtype
	m     int
	name  string
	slots Mem // each row's combined scales of the unit (64 bytes a row)
	wp    Register
	ra    rows.Addr
	f     []VecVirtual // each row's f32 sum
}

// kernelY generates ggufY{T}_{M}: M activation rows against nrows weight
// rows of t, group by group.
func kernelY(t gtype, m int) {
	k := &yRowKernel{t: t, m: m, name: fmt.Sprintf("ggufY%s_%d", t.name, m)}
	TEXT(k.name, NOSPLIT, signature)
	k.doc()
	k.slots = AllocLocal(64 * m)
	yInitConsts()
	Label(k.name + "_row")
	k.wp = Load(Param("w"), GP64())
	k.ra = loadRows(m)
	k.f = make([]VecVirtual, m)
	for r := range k.f {
		k.f[r] = YMM()
		VPXOR(k.f[r], k.f[r], k.f[r])
	}
	unitLoop(k.name, t, k.wp, k.ra, yUnit, func() { k.unit(8, nil) }, func(tail Register) { k.unit(6, tail) })
	rowEpilogue(k.name, m, func(r int) VecVirtual { return yHsum(k.f[r]) })
}

// doc emits the kernel's doc comment.
func (k *yRowKernel) doc() {
	rowWord := "rows"
	if k.m == 1 {
		rowWord = "row"
	}
	Doc(fmt.Sprintf("%s computes %d activation %s against nrows %s rows at w (rowBytes apart), units of", k.name, k.m, rowWord, k.t.name),
		"256 values each (then tail chunks of 64), from the activations prepared at xa (rows ldx bytes",
		"apart; ggufPrepY), per group of 32 values (sub-blocks of 16: scales s, mins mn):",
		"",
		fmt.Sprintf("\tfor i < nrows, r < %d:", k.m),
		"\t\ty[r·ldy+i] (+)= Σ_groups Σ_{16 values} s·xs·Σ_j w_j·xq[r,j] − mn·A[r]",
		"",
		"(see the generator, _asm/gemm/gguf/avx2.go).")
}

// unit emits a unit of ng groups (tail != nil: a part unit, ng its most):
// its scales, each group's products, then the mins.
func (k *yRowKernel) unit(ng int, tail Register) {
	t, m := k.t, k.m
	var nblk Register
	if tail != nil {
		nblk = GP64()
		MOVQ(tail, nblk)
		SHLQ(U8(1), nblk) // 2 blocks per chunk
	}
	sc, sc2, mn := yScales(t, k.wp, nblk)
	k.rowScales(sc, sc2)
	var st yState
	for g := 0; g < ng; g++ {
		if tail != nil && g > 0 && g%2 == 0 {
			CMPQ(tail, U8(g/2))
			JE(LabelRef(k.name + "_tailmins"))
		}
		k.groupDots(g, sc2 != nil, &st)
	}
	if tail != nil {
		Label(k.name + "_tailmins")
	}
	if mn[0] == nil {
		return
	}
	for r := 0; r < m; r++ {
		for h := 0; h < 2; h++ {
			if t.min > 0 {
				VFMADD231PS(k.ra.At(r, yA+32*h), mn[h], k.f[r])
			} else {
				VFNMADD231PS(k.ra.At(r, yA+32*h), mn[h], k.f[r])
			}
		}
	}
}

// rowScales stores each row's s·xs in its slots: 8 per group, or (sc2
// != nil) 16 per 16 values.
func (k *yRowKernel) rowScales(sc, sc2 VecVirtual) {
	ra, slots := k.ra, k.slots
	for r := 0; r < k.m; r++ {
		p := YMM()
		if sc2 == nil {
			VMULPS(ra.At(r, yXS), sc, p)
			VMOVUPS(p, slots.Offset(64*r))
		} else {
			VMULPS(ra.At(r, yXS16), sc, p)
			VMOVUPS(p, slots.Offset(64*r))
			VMULPS(ra.At(r, yXS16+32), sc2, p)
			VMOVUPS(p, slots.Offset(64*r+32))
		}
	}
}

// groupDots emits group g: its weights and, per row, the VPMADDUBSW and
// VPMADDWD sums converted and added into f times the row's scales from
// the slots (per 16 values: spread by VPERMPS).
func (k *yRowKernel) groupDots(g int, per16 bool, st *yState) {
	t, ra := k.t, k.ra
	w := yGroup(t, k.wp, g, st)
	var u VecVirtual = w
	if ySigned(t) {
		u = YMM()
		VPSIGNB(w, w, u) // |v|
	}
	for r := 0; r < k.m; r++ {
		p := YMM()
		if ySigned(t) {
			VMOVDQU(ra.At(r, 32*g), p)
			VPSIGNB(w, p, p) // the activations' signs flipped where v < 0
			VPMADDUBSW(p, u, p)
		} else {
			VPMADDUBSW(ra.At(r, 32*g), u, p)
		}
		VPMADDWD(yConsts.ones16, p, p)
		VCVTDQ2PS(p, p)
		ws := YMM()
		if !per16 {
			VBROADCASTSS(k.slots.Offset(64*r+4*g), ws)
		} else {
			idx := YMM()
			VMOVDQU(yConsts.pairs[g%4], idx)
			VPERMPS(k.slots.Offset(64*r+32*(g/4)), idx, ws)
		}
		VFMADD231PS(ws, p, k.f[r])
	}
}

// yHsum adds the 8 lanes of f into the low lane of an xmm.
func yHsum(f VecVirtual) VecVirtual {
	x := XMM()
	VEXTRACTF128(U8(1), f, x)
	VADDPS(f.AsX(), x, x)
	z := XMM()
	VMOVHLPS(x, x, z)
	VADDPS(z, x, x)
	VMOVSHDUP(x, z)
	VADDSS(z, x, x)
	return x
}

// mainAVX2 generates the AVX2 kernels.
func mainAVX2() {
	ConstraintExpr("amd64,gc,!purego")
	yMakeConsts()
	for _, t := range types {
		for m := 1; m <= yMaxM; m++ {
			kernelY(t, m)
		}
	}
	Generate()
}

// checkVEX fails if the generated file uses a register only EVEX encodes
// (x/y/zmm16–31) or a zmm: an AVX2 machine would fault on it.
func checkVEX(path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	if m := regexp.MustCompile(`\b([XY](1[6-9]|2[0-9]|3[01])|Z[0-9]+|K[1-7])\b`).Find(b); m != nil {
		log.Fatalf("%s: %s is not AVX2 (VEX) code", path, m)
	}
}
