//go:generate go run . -isa avx512 -out ../../../kernels/gemm/gemm_gguf_avx512_amd64.s -stubs ../../../kernels/gemm/gemm_gguf_avx512_stubs_amd64.go -pkg gemm
//go:generate go run . -isa avx2 -out ../../../kernels/gemm/gemm_gguf_avx2_amd64.s -stubs ../../../kernels/gemm/gemm_gguf_avx2_stubs_amd64.go -pkg gemm

// Command gguf generates the AVX-512 VNNI kernels of kernels/gemm for the
// GGUF formats: a matrix's ggml blocks read where they lie, row after row,
// against int8 activations prepared per call (kernels/gemm/gemm_gguf_amd64.go,
// ggufPrep).
//
//	ggufZ{T}_{M}, M = 1…8, T = Q8_0 Q4_0 Q4_1 Q5_0 Q5_1 IQ4NL MXFP4 Q2K Q3K Q4K Q5K Q6K IQ4XS
//
// One call computes, for nrows consecutive weight rows (rowBytes apart)
// and M activation rows, the dot products along units of 256 values (8
// blocks of 32, or one super-block of 256). A unit is 4 chunks of 64
// values; a chunk's weights are unpacked into 64 unsigned bytes u (the
// stored integer, or its codebook value plus 128) in the order of the
// activations the prep wrote for the type (layout A: the values in order;
// layout B, the types whose block stores a group's two halves as the low
// and high nibbles of 16 bytes: [group 2c values 0–15, group 2c+1 values
// 0–15, group 2c values 16–31, group 2c+1 values 16–31]). Per chunk and
// activation row one VPDPBUSD gives 16 int32 lanes of 4 products each,
// converted to f32, multiplied by the lanes' activation scales xs and
// added, times the lanes' weight scales, into the row's accumulator. Once
// per unit a type with a min subtracts (adds, for q4_1 and q5_1's m) its
// per-quad mins times A = xs·Σxq, and a type whose u carries a zero point
// z subtracts its per-quad scales times A = z·xs·Σxq. The scales come per unit: 8 (one
// per group of 32) or 16 (q2_K, q3_K, q6_K: one per 16 values), widened
// to f32 and spread over a chunk's lanes by VPERMPS.
//
// Per activation row and unit the prep writes 832 bytes: xq[256] (int8,
// the layout's order), xs[64] (f32, one per lane), XSI[16] (f32, the
// scale of each of the unit's weight-scale indices: 8 groups or 16
// sub-blocks; a one-row kernel multiplies it into the weight scales once
// per unit instead of xs into each chunk), 192 unused bytes, A[16] (f32,
// one per quad in the layout's order).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/ktune/ktune/_asm/internal/rows"
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The prepared activations of one row and unit (kernels/gemm: ggufUnit*).
const (
	unitBytes = 832
	offXS     = 256
	offXSI    = 512 // f32 ×16: the activations' scale per scale index (8 groups, or 16 sub-blocks)
	offA      = 768
	maxM      = 8
)

// prefetchDist is how far ahead (bytes) the kernels prefetch the weights.
const prefetchDist = 2048

const signature = "func(w *byte, nrows int, rowBytes int, units int, tail int, xa *byte, ldx int, y *float32, ldy int, acc bool)"

// gtype is a ggml block type as the kernels see it.
type gtype struct {
	name    string
	bs, bb  int  // block size (32 or 256) and bytes
	layoutB bool // the activations in layout B (see the package doc)
	subs16  bool // 16 scales per unit (one per 16 values), else 8
	z       int  // the zero point of u (0: none)
	min     int  // 0; −1: w = s·v − mn (K mins); +1: w = d·v + m (q4_1, q5_1)
	book    *[16]int
	qs      int // 32-block types: the offset of the nibbles (or q8_0's bytes)
	// lsFrom: the row kernels of lsFrom activation rows or more (0:
	// none) take the activations lane-stationary: lane l (4 bytes) of
	// every chunk holds values of the unit's 16 values 16l…16l+15 only
	// (chunk c values 4c…4c+3), so that a unit's products sum in int32
	// over its four chunks and are scaled once (see kernel)
	lsFrom int
}

// ls reports whether t's row kernel of m activation rows is
// lane-stationary (gtype.lsFrom; kernels/gemm: ggufLaneStationary).
func (t gtype) ls(m int) bool { return t.lsFrom > 0 && m >= t.lsFrom }

var (
	iq4nl = [16]int{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}
	mxfp4 = [16]int{0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12}
)

var types = []gtype{
	{name: "Q8_0", bs: 32, bb: 34, z: 128, qs: 2},
	{name: "Q4_0", bs: 32, bb: 18, layoutB: true, z: 8, qs: 2},
	{name: "Q4_1", bs: 32, bb: 20, layoutB: true, min: +1, qs: 4},
	{name: "Q5_0", bs: 32, bb: 22, layoutB: true, z: 16, qs: 6},
	{name: "Q5_1", bs: 32, bb: 24, layoutB: true, min: +1, qs: 8},
	{name: "IQ4NL", bs: 32, bb: 18, layoutB: true, z: 128, book: &iq4nl, qs: 2},
	{name: "MXFP4", bs: 32, bb: 17, layoutB: true, z: 128, book: &mxfp4, qs: 1},
	{name: "Q2K", bs: 256, bb: 84, subs16: true, min: -1, lsFrom: 1},
	{name: "Q3K", bs: 256, bb: 110, subs16: true, z: 4, lsFrom: 1},
	{name: "Q4K", bs: 256, bb: 144, min: -1, lsFrom: 1},
	{name: "Q5K", bs: 256, bb: 176, min: -1, lsFrom: 1},
	// (q6_K's one-row kernel is 4% faster in chunk order: its two permutes
	// a chunk take VPDPBUSD's port)
	{name: "Q6K", bs: 256, bb: 210, subs16: true, z: 32, lsFrom: 2},
	{name: "IQ4XS", bs: 256, bb: 136, layoutB: true, z: 128, book: &iq4nl, lsFrom: 1},
}

// unitW is the bytes of weights per unit of 256 values.
func (t gtype) unitW() int { return 256 / t.bs * t.bb }

// ---- constants ---------------------------------------------------------

// bytesConst is a 64-byte constant of repeating bytes b.
func bytesConst(name string, b ...byte) Mem {
	m := GLOBL(name, RODATA|NOPTR)
	for i := 0; i < 64; i++ {
		DATA(i, U8(b[i%len(b)]))
	}
	return m
}

// dwordsConst is a constant of 16 (or 8) dwords.
func dwordsConst(name string, v []uint32) Mem {
	m := GLOBL(name, RODATA|NOPTR)
	for i, x := range v {
		DATA(4*i, U32(x))
	}
	return m
}

// wordsConst is a constant of 32 words.
func wordsConst(name string, v []uint16) Mem {
	m := GLOBL(name, RODATA|NOPTR)
	for i, x := range v {
		DATA(2*i, U16(x))
	}
	return m
}

var consts struct {
	nib, c03, c04, c10, c80 Mem
	books                   map[string]Mem
	// spread[kind][c]: the VPERMPS index of chunk c's lanes into the
	// unit's scales (kind: "A8", "B8", "16"); quads[kind]: the index of
	// the 16 quads (layout order) into the unit's 8 group mins.
	spread map[string][4]Mem
	quads  map[string]Mem
	gather map[int]Mem // block stride → the 8 block offsets
	// two-bit shift counts (words) of chunk c: low half 2j0, high half 2j1
	shift2    [4]Mem
	shift6    [2]Mem // q6_K's high bits to bits 4–5 (see makeConsts)
	c30       Mem
	q4KHalf   Mem    // f32 1, 1/16 alternating: the odd groups' scales
	hsel      [4]Mem // q3_K: the hmask bit of chunk c's two groups, per byte
	q5sel     [4]Mem // q5_K: the qh bit of chunk c's two groups, per byte
	one, one2 Mem    // dwords 1 and 2 (mxfp4's exponent), 32, 0x00200000
	tailMask  Mem    // the blocks of a tail of 0…3 chunks: 0, 3, 15, 63
	// q4_K/q5_K's scale decode (unitScalesOrder) and their mins' quad order
	kPermP, kPermQ, kShift, kMaskLo, kMaskHi, kPermD, quadsK Mem
	nibShift                                                 Mem // words: 0 in the low half, 4 in the high
	// the lane-stationary chunks (chunkLS): per type, see lsSpec; the
	// q4_K/q5_K mins' spread (lane l: group l/2's)
	ls     map[string]*lsSpec
	lsMinK Mem
	c3f    Mem
	// the decoder: layout B's qword order to natural, per-16 spread of 8
	// scales, even dwords, 2048
	natB, pairs16, evens, c2048, sign Mem
	sub32                             Mem
	den                               Mem
}

// makeConsts emits the avx512 kernels' constants, in the file's order.
func makeConsts() {
	basicConsts()
	spreadConsts()
	consts.gather = gatherConsts("gguf_gather%d")
	bitConsts()
	makeLSConsts()
	laneConsts()
	kScaleConsts()
	decoderConsts()
	c := &consts
	for _, t := range types {
		if _, ok := zBytes[t.z]; t.z != 0 && t.z != 128 && !ok {
			m := GLOBL(fmt.Sprintf("gguf_z%d", t.z), RODATA|NOPTR)
			DATA(0, U8(t.z))
			zBytes[t.z] = m
		}
	}
	c.tailMask = GLOBL("gguf_tailmask", RODATA|NOPTR)
	for i, v := range []byte{0, 3, 15, 63} {
		DATA(i, U8(v))
	}
	c.one2 = dwordsConst("gguf_two", rep(2))
	c.sub32 = dwordsConst("gguf_thirtytwo", rep(32))
	c.den = dwordsConst("gguf_den", rep(0x00200000))
}

// basicConsts emits the byte masks and the codebooks (values + 128).
func basicConsts() {
	c := &consts
	c.nib = bytesConst("gguf_nib", 0x0f)
	c.c03 = bytesConst("gguf_c03", 0x03)
	c.c04 = bytesConst("gguf_c04", 0x04)
	c.c10 = bytesConst("gguf_c10", 0x10)
	c.c80 = bytesConst("gguf_c80", 0x80)
	c.books = map[string]Mem{}
	for _, nb := range codebooks {
		var bs []byte
		for _, v := range nb.b {
			bs = append(bs, byte(v+128))
		}
		c.books[nb.name] = bytesConst("gguf_book_"+nb.name, bs...)
	}
}

// codebooks are the codebook types' tables, in a fixed order: the
// regenerated file must be the same bytes.
var codebooks = []struct {
	name string
	b    *[16]int
}{{"iq4nl", &iq4nl}, {"mxfp4", &mxfp4}}

// spreadConsts emits the chunks' scale spreads (VPERMPS indexes of a
// chunk's lanes into the unit's scales) and the quads' index into the 8
// group mins, per layout kind.
func spreadConsts() {
	c := &consts
	c.spread = map[string][4]Mem{}
	for _, kind := range []string{"A8", "B8", "16"} {
		var ms [4]Mem
		for ch := 0; ch < 4; ch++ {
			idx := make([]uint32, 16)
			for l := range idx {
				switch kind {
				case "A8":
					idx[l] = uint32(2*ch + l/8)
				case "B8":
					idx[l] = uint32(2*ch + (l/4)%2)
				case "16":
					idx[l] = uint32(4*ch + l/4)
				}
			}
			ms[ch] = dwordsConst(fmt.Sprintf("gguf_spread%s_%d", kind, ch), idx)
		}
		c.spread[kind] = ms
	}
	c.quads = map[string]Mem{}
	for _, kind := range []string{"A8", "B8"} {
		idx := make([]uint32, 16)
		for q := range idx {
			ch, i := q/4, q%4
			if kind == "A8" {
				idx[q] = uint32(2*ch + i/2)
			} else {
				idx[q] = uint32(2*ch + i%2)
			}
		}
		c.quads[kind] = dwordsConst("gguf_quads"+kind, idx)
	}
}

// gatherConsts returns, per block size of the 32-value types, the 8
// blocks' byte offsets as dwords (constants named by format from the block
// bytes).
func gatherConsts(format string) map[int]Mem {
	gather := map[int]Mem{}
	for _, t := range types {
		if t.bs == 32 {
			if _, ok := gather[t.bb]; !ok {
				idx := make([]uint32, 8)
				for i := range idx {
					idx[i] = uint32(i * t.bb)
				}
				gather[t.bb] = dwordsConst(fmt.Sprintf(format, t.bb), idx)
			}
		}
	}
	return gather
}

// bitConsts emits the chunks' bit-field constants: the two-bit shifts,
// q3_K's hmask and q5_K's qh bit selects, q6_K's high-bit shifts.
func bitConsts() {
	c := &consts
	for ch := 0; ch < 4; ch++ {
		w := make([]uint16, 32)
		j0 := 2 * (ch % 2)
		for i := range w {
			w[i] = uint16(2 * (j0 + i/16))
		}
		c.shift2[ch] = wordsConst(fmt.Sprintf("gguf_shift2_%d", ch), w)
		h := ch / 2
		hs, q5 := make([]byte, 64), make([]byte, 64)
		for i := range hs {
			hs[i] = byte(1 << (4*h + j0 + i/32))
			q5[i] = byte(1 << (2*ch + i/32))
		}
		c.hsel[ch] = bytesConst(fmt.Sprintf("gguf_hsel_%d", ch), hs...)
		c.q5sel[ch] = bytesConst(fmt.Sprintf("gguf_q5sel_%d", ch), q5...)
	}
	// q6_K's high bits to bits 4–5: par 0 left by 4 (t = 0) and 2 (t = 1),
	// par 1 right by 0 (t = 2) and 2 (t = 3)
	for par, cnt := range [2][2]uint16{{4, 2}, {0, 2}} {
		w := make([]uint16, 32)
		for i := range w {
			w[i] = cnt[i/16]
		}
		c.shift6[par] = wordsConst(fmt.Sprintf("gguf_shift6_%d", par), w)
	}
}

// laneConsts emits the lane-stationary q4_K/q5_K mins' spread, the 6-bit
// and q6_K masks, q4_K's odd-group scale and the dwords 1.
func laneConsts() {
	c := &consts
	lsMinK := make([]uint32, 16)
	for l := range lsMinK {
		lsMinK[l] = uint32(8 + l/2)
	}
	c.lsMinK = dwordsConst("gguf_lsmink", lsMinK)
	c.c3f = bytesConst("gguf_c3f", 0x3f)
	c.c30 = bytesConst("gguf_c30", 0x30)
	half := make([]uint32, 16)
	for i := range half {
		half[i] = f32bits(1)
		if i%2 == 1 {
			half[i] = f32bits(1.0 / 16)
		}
	}
	c.q4KHalf = dwordsConst("gguf_q4khalf", half)
	c.one = dwordsConst("gguf_one", rep(1))
}

// kScaleConsts emits q4_K/q5_K's scale decode (see kScalesMins), their
// mins' quad order and the nibble shifts.
func kScaleConsts() {
	c := &consts
	c.kPermP = dwordsConst("gguf_kpermp", []uint32{0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11})
	c.kPermQ = dwordsConst("gguf_kpermq", []uint32{0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6, 7, 4, 5, 6, 7})
	c.kShift = dwordsConst("gguf_kshift", []uint32{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 4, 4, 4})
	c.kMaskLo = dwordsConst("gguf_kmasklo", []uint32{63, 63, 63, 63, 15, 15, 15, 15, 63, 63, 63, 63, 15, 15, 15, 15})
	c.kMaskHi = dwordsConst("gguf_kmaskhi", []uint32{0, 0, 0, 0, 0x30, 0x30, 0x30, 0x30, 0, 0, 0, 0, 0x30, 0x30, 0x30, 0x30})
	c.kPermD = dwordsConst("gguf_kpermd", []uint32{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1})
	quadsK := make([]uint32, 16)
	for q := range quadsK {
		quadsK[q] = uint32(8 + 2*(q/4) + (q%4)/2)
	}
	c.quadsK = dwordsConst("gguf_quadsk", quadsK)
	nibShift := make([]uint16, 32)
	for i := 16; i < 32; i++ {
		nibShift[i] = 4
	}
	c.nibShift = wordsConst("gguf_nibshift", nibShift)
}

// decoderConsts emits the decoder's: layout B's qword order to natural,
// the per-16 spread of 8 scales, the even dwords, 2048 and the sign bit.
func decoderConsts() {
	c := &consts
	c.natB = GLOBL("gguf_natb", RODATA|NOPTR)
	for i, q := range []uint64{0, 1, 4, 5, 2, 3, 6, 7} {
		DATA(8*i, U64(q))
	}
	pairs := make([]uint32, 16)
	for i := range pairs {
		pairs[i] = uint32(i / 2)
	}
	c.pairs16 = dwordsConst("gguf_pairs16", pairs)
	c.evens = dwordsConst("gguf_evens", []uint32{0, 2, 4, 6, 8, 10, 12, 14, 0, 0, 0, 0, 0, 0, 0, 0})
	c.c2048 = dwordsConst("gguf_c2048", rep(2048))
	c.sign = dwordsConst("gguf_sign", rep(0x80000000))
}

func rep(v uint32) []uint32 {
	out := make([]uint32, 16)
	for i := range out {
		out[i] = v
	}
	return out
}

// ---- activation rows -----------------------------------------------------

// loadRows addresses the m activation rows at xa (stride ldx).
func loadRows(m int) rows.Addr {
	xp := Load(Param("xa"), GP64())
	if m == 1 {
		return rows.New(1, xp, nil)
	}
	return rows.New(m, xp, Load(Param("ldx"), GP64()))
}

// ---- scales ----------------------------------------------------------------

// f16Bcast widens the f16 at m and broadcasts it to a zmm.
func f16Bcast(m Mem) VecVirtual { return halfBcast(m, ZMM) }

// halfBcast widens the f16 at m and broadcasts it to a new register of
// newVec's width (ZMM or YMM).
func halfBcast(m Mem, newVec func() VecVirtual) VecVirtual {
	g := GP32()
	MOVWLZX(m, g)
	x := XMM()
	VMOVD(g, x)
	VCVTPH2PS(x, x)
	v := newVec()
	VBROADCASTSS(x, v)
	return v
}

// bytesToF32 widens the 8 unsigned bytes of g (a GP64) to 8 f32 in a zmm's
// low lanes (sub: minus 32 first).
func bytesToF32(g Register, sub bool) VecVirtual {
	x := XMM()
	VMOVQ(g, x)
	z := ZMM()
	VPMOVZXBD(x, z.AsY())
	if sub {
		VPSUBD(consts.sub32, z, z)
	}
	VCVTDQ2PS(z, z)
	return z
}

// gather8 loads the dword at byte off of each of the unit's 8 blocks (of
// the blocks of mask's set bits, the others 0; nil: all 8).
func gather8(t gtype, wp Register, off int, mask Register) VecVirtual {
	idx := YMM()
	VMOVDQU64(consts.gather[t.bb], idx)
	k := K()
	if mask == nil {
		KXNORW(k, k, k)
	} else {
		KMOVW(mask.(GPVirtual).As32(), k)
	}
	d := YMM()
	VPXORD(d, d, d)
	VPGATHERDD(Mem{Base: wp, Index: idx, Scale: 1, Disp: off}, k, d)
	return d
}

// half8 widens the low (hi: high) f16 of each of 8 dwords to f32.
func half8(d VecVirtual, hi bool) VecVirtual {
	src := d
	if hi {
		src = YMM()
		VPSRLD(U8(16), d, src)
	}
	w := XMM()
	VPMOVDW(src, w)
	z := ZMM()
	VCVTPH2PS(w, z.AsY())
	return z
}

// unitLoop emits a row kernel's loop over the units of a row at wp (with
// the activations' rows x, xUnit bytes a unit): whole emits a unit, then
// for a type of 32-value blocks part emits the tail's chunks (the tail
// parameter, when not 0); it ends at the label name_sums.
func unitLoop(name string, t gtype, wp Register, x rows.Addr, xUnit int, whole func(), part func(tail Register)) {
	units := Load(Param("units"), GP64())
	TESTQ(units, units)
	JZ(LabelRef(name + "_tail"))
	Label(name + "_unit")
	for off := 0; off < t.unitW(); off += 64 {
		PREFETCHT0(Mem{Base: wp, Disp: prefetchDist + off})
	}
	whole()
	ADDQ(U32(t.unitW()), wp)
	x.Advance(U32(xUnit))
	DECQ(units)
	JNZ(LabelRef(name + "_unit"))
	Label(name + "_tail")
	if t.bs == 32 {
		tail := Load(Param("tail"), GP64())
		TESTQ(tail, tail)
		JZ(LabelRef(name + "_sums"))
		part(tail)
	}
	Label(name + "_sums")
}

// unitHead loads the scales (and mins) of the unit at wp, as
// unitScalesOrder with natural or, for MXFP4, mxfp4UnitScales; tail (nil
// for a whole unit) is the chunks of a tail, whose 2·tail blocks alone are
// read: mask = 2^(2·tail) − 1.
func unitHead(t gtype, wp, tail Register, order scaleOrder) (sc, mn VecVirtual) {
	var mask Register
	if tail != nil {
		mask = GP64()
		LEAQ(consts.tailMask, mask)
		MOVBQZX(Mem{Base: mask, Index: tail, Scale: 1}, mask)
	}
	if t.name == "MXFP4" {
		return mxfp4UnitScales(t, wp, mask), nil
	}
	return unitScalesOrder(t, wp, mask, order)
}

// scaleOrder is the order of the mins unitScalesOrder emits.
type scaleOrder int

const (
	orderQuads   scaleOrder = iota // the row kernels' quads (layout order)
	orderNatural                   // per sub-block of 16 (the decoded tiles')
	orderLanes                     // q4_K, q5_K lane-stationary: lane l the group l/2's
)

// unitScalesOrder emits the unit's weight scales sc (f32: 8 or 16 lanes)
// and, for a type with a min, its mins mn in order (orderQuads and
// orderNatural the same for layout A).
func unitScalesOrder(t gtype, wp, mask Register, order scaleOrder) (sc, mn VecVirtual) {
	switch t.name {
	case "Q8_0", "Q4_0", "Q5_0", "IQ4NL":
		sc = half8(gather8(t, wp, 0, mask), false)
	case "Q4_1", "Q5_1":
		d := gather8(t, wp, 0, mask)
		sc = half8(d, false)
		mn = half8(d, true)
	case "Q4K", "Q5K":
		return kScalesMins(wp, order)
	case "IQ4XS":
		d := f16Bcast(Mem{Base: wp})
		// ls_g = scales_l nibble g | (scales_h >> 2g & 3) << 4: the 8
		// nibbles of scales_l (bytes 4–7) and the 8 two-bit fields of
		// scales_h (bytes 2–3) spread one to a byte
		sc = bytesToF32(iq4xsCodes(wp), true)
		VMULPS(d, sc, sc)
	case "Q2K":
		return q2KScalesMins(wp) // 16 sub-blocks: already in quad order
	case "Q3K":
		sc = q3KScales(wp)
	case "Q6K":
		d := f16Bcast(Mem{Base: wp, Disp: 208})
		sc = ZMM()
		VPMOVSXBD(Mem{Base: wp, Disp: 192}, sc)
		VCVTDQ2PS(sc, sc)
		VMULPS(d, sc, sc)
	default:
		panic(t.name)
	}
	if mn != nil && !t.subs16 {
		idx := ZMM()
		kind := layoutKind(t)
		if order == orderNatural {
			kind = "A8" // group q/2 for sub-block q
		}
		VMOVDQU32(consts.quads[kind], idx)
		VPERMPS(mn, idx, mn)
	}
	return sc, mn
}

// kScalesMins emits a q4_K/q5_K unit's scales and mins: the 12 scale
// bytes b widened to dwords; lanes 0–7 the scale codes, 8–15 the min codes
// (ggml's get_scale_min_k4):
//
//	sc[j] = b[j] & 63, m[j] = b[j+4] & 63                    (j < 4)
//	sc[j] = b[j+4] & 15 | b[j−4]>>6<<4, m[j] = b[j+4]>>4 | b[j]>>6<<4   (j ≥ 4)
//
// times [d ×8, dmin ×8]; the mins permuted to the quads' (or lanes') order.
func kScalesMins(wp Register, order scaleOrder) (sc, mn VecVirtual) {
	b := ZMM()
	VPMOVZXBD(Mem{Base: wp, Disp: 4}, b)
	p, q, idx := ZMM(), ZMM(), ZMM()
	VMOVDQU32(consts.kPermP, idx)
	VPERMD(b, idx, p)
	VMOVDQU32(consts.kPermQ, idx)
	VPERMD(b, idx, q)
	VPSRLVD(consts.kShift, p, p)
	VPANDD(consts.kMaskLo, p, p)
	VPSRLD(U8(2), q, q)
	VPANDD(consts.kMaskHi, q, q)
	VPORD(q, p, p)
	VCVTDQ2PS(p, p)
	dd := ZMM()
	VCVTPH2PS(Mem{Base: wp}, dd.AsX())
	VMOVDQU32(consts.kPermD, idx)
	VPERMPS(dd, idx, dd)
	VMULPS(dd, p, p)
	mn = ZMM()
	if order == orderLanes {
		VMOVDQU32(consts.lsMinK, idx)
	} else {
		VMOVDQU32(consts.quadsK, idx)
	}
	VPERMPS(p, idx, mn)
	return p, mn
}

// q2KScalesMins emits a q2_K unit's 16 scales d·(low nibble) and mins
// dm·(high nibble) of its scale bytes.
func q2KScalesMins(wp Register) (sc, mn VecVirtual) {
	d, dm := f16Bcast(Mem{Base: wp, Disp: 80}), f16Bcast(Mem{Base: wp, Disp: 82})
	b := ZMM()
	VPMOVZXBD(Mem{Base: wp}, b)
	sc, mn = ZMM(), ZMM()
	VPSRLD(U8(4), b, mn)
	VPANDD(consts.nib, b, sc) // the low nibble of each dword's one byte
	VCVTDQ2PS(sc, sc)
	VMULPS(d, sc, sc)
	VCVTDQ2PS(mn, mn)
	VMULPS(dm, mn, mn)
	return sc, mn
}

// q3KScales emits a q3_K unit's 16 scales d·(code − 32).
func q3KScales(wp Register) VecVirtual {
	d := f16Bcast(Mem{Base: wp, Disp: 108})
	lo0, lo1 := q3Codes(wp)
	x := XMM()
	VMOVQ(lo0, x)
	VPINSRQ(U8(1), lo1, x, x)
	sc := ZMM()
	VPMOVZXBD(x, sc)
	VPSUBD(consts.sub32, sc, sc)
	VCVTDQ2PS(sc, sc)
	VMULPS(d, sc, sc)
	return sc
}

// iq4xsCodes gathers an iq4_xs block's 8 6-bit scale codes ls_g (the
// nibbles of scales_l and the two-bit fields of scales_h) into the bytes of
// a GP register.
func iq4xsCodes(wp Register) Register {
	lo, hi, t := GP64(), GP64(), GP64()
	MOVL(Mem{Base: wp, Disp: 4}, lo.As32())
	spreadBits(lo, t, 4)
	MOVWLZX(Mem{Base: wp, Disp: 2}, hi.As32())
	spreadBits(hi, t, 2)
	SHLQ(U8(4), hi)
	ORQ(hi, lo)
	return lo
}

// spreadBits moves the fields of width w (4 or 2) of v's low 32 (w = 4) or
// 16 (w = 2) bits to one byte each, in order (t: scratch).
func spreadBits(v, t Register, w int) {
	step := func(shift int, mask uint64) {
		MOVQ(v, t)
		SHLQ(U8(shift), t)
		ORQ(t, v)
		m := GP64()
		MOVQ(U64(mask), m)
		ANDQ(m, v)
	}
	if w == 4 { // 8 nibbles → 8 bytes
		step(16, 0x0000ffff0000ffff)
		step(8, 0x00ff00ff00ff00ff)
		step(4, 0x0f0f0f0f0f0f0f0f)
		return
	}
	// 8 two-bit fields → 8 bytes
	step(24, 0x000000ff000000ff)
	step(12, 0x000f000f000f000f)
	step(6, 0x0303030303030303)
}

// layoutKind names the type's scale spread ("A8", "B8" or "16").
func layoutKind(t gtype) string {
	switch {
	case t.subs16:
		return "16"
	case t.layoutB:
		return "B8"
	}
	return "A8"
}

// ---- weights ---------------------------------------------------------------

// cst holds the constants chunk reads, as memory operands or, where a
// kernel hoisted them (hoist), registers: a zmm load per use would cost
// the one-row decode a load slot per chunk for each.
var cst struct {
	nib, nibShift, c80, c03, c30, book Op
}

// memConsts points cst at the constants in memory.
func memConsts(t gtype) {
	cst.nib, cst.nibShift, cst.c80, cst.c03 = consts.nib, consts.nibShift, consts.c80, consts.c03
	cst.c30 = consts.c30
	cst.book = nil
	if t.book != nil {
		cst.book = bookMem(t)
	}
}

// hoist loads the constants t's chunks use into registers.
func hoist(t gtype) {
	memConsts(t)
	load := func(m Op) Op {
		z := ZMM()
		VMOVDQU64(m, z)
		return z
	}
	switch t.name {
	case "Q8_0":
		cst.c80 = load(consts.c80)
	case "Q2K", "Q3K":
		cst.c03 = load(consts.c03)
	case "Q6K":
		cst.nib, cst.c30 = load(consts.nib), load(consts.c30)
	case "Q4K", "Q5K", "IQ4XS":
		cst.nib, cst.nibShift = load(consts.nib), load(consts.nibShift)
	default: // the nibble pairs of the 32-value block types
		cst.nib = load(consts.nib)
	}
	if t.book != nil {
		cst.book = load(bookMem(t))
	}
}

// unitState is what the chunks of one unit share.
type unitState struct {
	hq, z2, l6, qh6 VecVirtual // per-unit or per-half broadcasts
}

// chunk emits chunk c's 64 weights as unsigned bytes.
func chunk(t gtype, wp Register, c int, st *unitState) VecVirtual {
	z := ZMM()
	lo := Mem{Base: wp, Disp: 2*c*t.bb + t.qs}     // block 2c's bits
	hi := Mem{Base: wp, Disp: (2*c+1)*t.bb + t.qs} // block 2c+1's
	switch t.name {
	case "Q8_0":
		y := YMM()
		VMOVDQU64(lo, y)
		VINSERTI64X4(U8(1), hi, y.AsZ(), z)
		VPXORD(cst.c80, z, z)
	case "Q4_0", "Q4_1", "IQ4NL", "MXFP4":
		nibblePair(lo, hi, z)
	case "Q5_0", "Q5_1":
		nibblePair(lo, hi, z)
		q5FifthBits(lo.Offset(-4), hi.Offset(-4), z)
	case "IQ4XS":
		nibbles32(Mem{Base: wp, Disp: 8 + 32*c}, z)
	case "Q4K", "Q5K":
		chunkQ45K(t, wp, c, st, z)
	case "Q2K", "Q3K":
		chunkQ23K(t, wp, c, st, z)
	case "Q6K":
		chunkQ6K(wp, c, st, z)
	default:
		panic(t.name)
	}
	if t.book != nil {
		book := cst.book
		if m, inMem := book.(Mem); inMem { // the table operand must be a register
			r := ZMM()
			VMOVDQU64(m, r)
			book = r
		}
		VPSHUFB(z, book, z)
	}
	return z
}

// nibblePair emits into z a layout B chunk of two 32-value blocks' 16
// nibble bytes at lo and hi: [lo16, hi16] nibbles low, then high.
func nibblePair(lo, hi Mem, z VecVirtual) {
	y := YMM()
	VMOVDQU64(lo, y.AsX())
	VINSERTI32X4(U8(1), hi, y, y)
	h := YMM()
	VPSRLW(U8(4), y, h)
	VINSERTI64X4(U8(1), h, y.AsZ(), z)
	VPANDD(cst.nib, z, z)
}

// q5FifthBits adds 16 to the bytes of z whose fifth bit is set: qh bit e
// is value e of the blocks' qh dwords at a and b; in layout B the mask is
// [A 0–15, B 0–15, A 16–31, B 16–31].
func q5FifthBits(qa, qb Mem, z VecVirtual) {
	a, b, m, tt := GP64(), GP64(), GP64(), GP64()
	MOVL(qa, a.As32())
	MOVL(qb, b.As32())
	MOVWLZX(a.As16(), m.As32())
	MOVWLZX(b.As16(), tt.As32())
	SHLQ(U8(16), tt)
	ORQ(tt, m)
	SHRQ(U8(16), a)
	SHLQ(U8(32), a)
	ORQ(a, m)
	SHRQ(U8(16), b)
	SHLQ(U8(48), b)
	ORQ(b, m)
	k := K()
	KMOVQ(m, k)
	VPADDB(consts.c10, z, k, z)
}

// chunkQ45K emits into z a q4_K/q5_K chunk: the nibbles of its 32 bytes,
// and for q5_K 16 where the qh bit (of the unit's 32 qh bytes, loaded at
// chunk 0) is set.
func chunkQ45K(t gtype, wp Register, c int, st *unitState, z VecVirtual) {
	off := 16
	if t.name == "Q5K" {
		off = 48
	}
	nibbles32(Mem{Base: wp, Disp: off + 32*c}, z)
	if t.name != "Q5K" {
		return
	}
	if c == 0 {
		st.hq = ZMM()
		VBROADCASTI64X4(Mem{Base: wp, Disp: 16}, st.hq)
	}
	k := K()
	VPTESTMB(consts.q5sel[c], st.hq, k)
	VPADDB(consts.c10, z, k, z)
}

// chunkQ23K emits into z a q2_K/q3_K chunk: two-bit fields of a 32-byte
// stripe (loaded at even chunks) and for q3_K 4 where the hmask bit (of
// the unit's 32 hmask bytes, loaded at chunk 0) is set.
func chunkQ23K(t gtype, wp Register, c int, st *unitState, z VecVirtual) {
	off := 16
	if t.name == "Q3K" {
		off = 32
	}
	if c%2 == 0 {
		st.z2 = ZMM()
		VBROADCASTI64X4(Mem{Base: wp, Disp: off + 32*(c/2)}, st.z2)
	}
	VPSRLVW(consts.shift2[c], st.z2, z)
	VPANDD(cst.c03, z, z)
	if t.name != "Q3K" {
		return
	}
	if c == 0 {
		st.hq = ZMM()
		VBROADCASTI64X4(Mem{Base: wp}, st.hq)
	}
	k := K()
	VPTESTMB(consts.hsel[c], st.hq, k)
	VPADDB(consts.c04, z, k, z)
}

// chunkQ6K emits into z a q6_K chunk: nibbles of a 64-byte ql stripe
// (loaded with its qh stripe at even chunks) with the two high bits of t
// = 2par (low half), 2par+1 (high half) moved to bits 4–5 by one word
// shift each (left by 4 and 2, or right by 0 and 2); the neighbour byte's
// bits land outside 0x30.
func chunkQ6K(wp Register, c int, st *unitState, z VecVirtual) {
	h, par := c/2, c%2
	if par == 0 {
		st.l6, st.qh6 = ZMM(), ZMM()
		VMOVDQU64(Mem{Base: wp, Disp: 64 * h}, st.l6)
		VBROADCASTI64X4(Mem{Base: wp, Disp: 128 + 32*h}, st.qh6)
		VPANDD(cst.nib, st.l6, z)
	} else {
		VPSRLW(U8(4), st.l6, z)
		VPANDD(cst.nib, z, z)
	}
	hi := ZMM()
	if par == 0 {
		VPSLLVW(consts.shift6[0], st.qh6, hi)
	} else {
		VPSRLVW(consts.shift6[1], st.qh6, hi)
	}
	VPANDD(cst.c30, hi, hi)
	VPORD(hi, z, z)
}

// lsSpec is how a type's lane-stationary chunk c gathers lane l's 4
// values (16l + 4c…4c+3 of the unit): the dword of the block's bits that
// holds them (main: at offset main, 64 or 128 bytes, VPERMD or
// VPERMI2D), shifted right by the lane's shift and masked; then, for the
// types with a fifth or third bit (sec: a second run of bits), that run's
// dword: tested against the lane's bit (+add where set: q3_K, q5_K), or
// rotated by the lane's rot so that q6_K's two high bits land at 4–5 and
// merged; iq4_xs then looks its nibbles up in the codebook.
type lsSpec struct {
	main, mainBytes int
	mainIdx         [4]Mem
	shift           *Mem // nil: none
	mask            Mem
	sec, secBytes   int // 0 bytes: none
	secIdx          [4]Mem
	bit, add        *Mem
	rot             *Mem
}

// lsLane is a type's lane-stationary layout: for lane l and chunk c, the
// dword of main and its shift, and of sec and its bit (or q6_K's rotate).
type lsLane func(l, c int) (mainDW, shift, secDW int, bit uint32)

// makeLSConsts builds consts.ls from each type's lsLane (lsDefs).
func makeLSConsts() {
	consts.ls = map[string]*lsSpec{}
	for _, d := range lsDefs() {
		consts.ls[d.name] = newLSSpec(d)
	}
}

// lsDef is a type's lane-stationary layout as lsDefs states it: where its
// main and second bits lie, the constants it masks and adds with, whether
// its lanes shift (or q6_K's rotate), and its lsLane.
type lsDef struct {
	name            string
	main, mainBytes int
	shift           bool
	mask            Mem
	sec, secBytes   int
	add             Mem
	rot             bool
	lane            lsLane
}

// lsDefs are the lane-stationary types' layouts. Lane l holds values
// 16l…16l+15 of the unit: sub-block l = 8h + 2j + l%2 for the types with
// 16 (q2_K, q3_K, q6_K), half l%2 of group g = l/2 for the others.
func lsDefs() []lsDef {
	nib := consts.nib
	lsNib := make([]byte, 64) // q4_K: the odd groups' nibbles kept in place (16u)
	for i := range lsNib {
		lsNib[i] = byte(0x0f << (4 * ((i / 8) % 2)))
	}
	return []lsDef{
		{name: "Q2K", main: 16, mainBytes: 64, shift: true, mask: consts.c03,
			lane: func(l, c int) (int, int, int, uint32) {
				h, j := l/8, (l%8)/2 // qs byte 32h + 16(l%2) + i at shift 2j
				return 4*(2*h+l%2) + c, 2 * j, 0, 0
			}},
		{name: "Q3K", main: 32, mainBytes: 64, shift: true, mask: consts.c03, sec: 0, secBytes: 32, add: consts.c04,
			lane: func(l, c int) (int, int, int, uint32) {
				h, j := l/8, (l%8)/2 // as q2_K; hmask byte 16(l%2) + i, bit 4h + j
				return 4*(2*h+l%2) + c, 2 * j, 4*(l%2) + c, 1 << (4*h + j)
			}},
		{name: "Q4K", main: 16, mainBytes: 128, mask: bytesConst("gguf_lsnib", lsNib...),
			lane: func(l, c int) (int, int, int, uint32) {
				g := l / 2 // qs byte 32(g/2) + 16(l%2) + i, nibble g%2 (in place)
				return 8*(g/2) + 4*(l%2) + c, 0, 0, 0
			}},
		{name: "Q5K", main: 48, mainBytes: 128, shift: true, mask: nib, sec: 16, secBytes: 32, add: consts.c10,
			lane: func(l, c int) (int, int, int, uint32) {
				g := l / 2 // as q4_K, the nibble shifted down; qh byte 16(l%2) + i, bit g
				return 8*(g/2) + 4*(l%2) + c, 4 * (g % 2), 4*(l%2) + c, 1 << g
			}},
		{name: "Q6K", main: 0, mainBytes: 128, shift: true, mask: nib, sec: 128, secBytes: 64, rot: true,
			lane: func(l, c int) (int, int, int, uint32) {
				// sub-block l = 8h + 2t + l%2: ql byte 64h + 32(t%2) + 16(l%2) + i,
				// nibble t/2; qh byte 32h + 16(l%2) + i, bits 2t, 2t+1 → 4, 5
				h, t := l/8, (l%8)/2
				return 16*h + 8*(t%2) + 4*(l%2) + c, 4 * (t / 2), 8*h + 4*(l%2) + c, uint32((4 - 2*t) & 31)
			}},
		{name: "IQ4XS", main: 8, mainBytes: 128, shift: true, mask: nib,
			lane: func(l, c int) (int, int, int, uint32) {
				g := l / 2 // qs byte 16g + 4c + i, nibble l%2
				return 4*g + c, 4 * (l % 2), 0, 0
			}},
	}
}

// newLSSpec emits d's constants: per chunk the lanes' main (and second)
// dword indexes, then the lanes' shifts and the second bits' selects (or
// q6_K's rotates).
func newLSSpec(d lsDef) *lsSpec {
	sp := &lsSpec{main: d.main, mainBytes: d.mainBytes, mask: d.mask, sec: d.sec, secBytes: d.secBytes}
	shift, bits := make([]uint32, 16), make([]uint32, 16)
	for c := 0; c < 4; c++ {
		mi, si := make([]uint32, 16), make([]uint32, 16)
		for l := range mi {
			m, sh, sd, b := d.lane(l, c)
			mi[l], si[l], shift[l], bits[l] = uint32(m), uint32(sd), uint32(sh), b
		}
		sp.mainIdx[c] = dwordsConst(fmt.Sprintf("gguf_ls%s_m%d", d.name, c), mi)
		if d.secBytes > 0 {
			sp.secIdx[c] = dwordsConst(fmt.Sprintf("gguf_ls%s_s%d", d.name, c), si)
		}
	}
	if d.shift {
		m := dwordsConst(fmt.Sprintf("gguf_ls%s_shift", d.name), shift)
		sp.shift = &m
	}
	switch {
	case d.rot:
		m := dwordsConst(fmt.Sprintf("gguf_ls%s_rot", d.name), bits)
		sp.rot = &m
	case d.secBytes > 0:
		bs := make([]byte, 64)
		for i := range bs {
			bs[i] = byte(bits[i/4])
		}
		m := bytesConst(fmt.Sprintf("gguf_ls%s_bit", d.name), bs...)
		sp.bit, sp.add = &m, &d.add
	}
	return sp
}

// lsOps are a kernel's lane-stationary operands: the spec's constants,
// the indexes in registers where the rows leave them free.
type lsOps struct {
	sp            *lsSpec
	mainIdx       [4]Op
	secIdx        [4]Op
	shift, mask   Op
	bit, add, rot Op
	book          Op
}

// lsConsts loads t's lane-stationary operands (into registers for inReg).
func lsConsts(t gtype, inReg bool) lsOps {
	sp := consts.ls[t.name]
	load := func(m Mem) Op {
		if !inReg {
			return m
		}
		z := ZMM()
		VMOVDQU32(m, z)
		return z
	}
	o := lsOps{sp: sp, mask: load(sp.mask)}
	for c := 0; c < 4; c++ {
		o.mainIdx[c] = load(sp.mainIdx[c])
		if sp.secBytes > 0 {
			o.secIdx[c] = load(sp.secIdx[c])
		}
	}
	if sp.shift != nil {
		o.shift = load(*sp.shift)
	}
	if sp.bit != nil {
		o.bit, o.add = load(*sp.bit), load(*sp.add)
	}
	if sp.rot != nil {
		o.rot = load(*sp.rot)
	}
	if t.book != nil {
		z := ZMM() // VPSHUFB's table: a register
		VMOVDQU64(bookMem(t), z)
		o.book = z
	}
	return o
}

// chunkLS emits chunk c of a unit lane-stationary (gtype.lsFrom, lsSpec):
// each lane's dword of the block's bits moved to it (VPERMD, or VPERMI2D
// over 128 bytes), shifted and masked, then its high bits.
func chunkLS(t gtype, wp Register, c int, o lsOps, st *unitState) VecVirtual {
	sp := o.sp
	if c == 0 {
		lsLoadUnit(sp, wp, st)
	}
	var u VecVirtual
	if sp.mainBytes == 128 {
		u = toReg(o.mainIdx[c]) // VPERMI2D overwrites its index
		VPERMI2D(st.qh6, st.l6, u)
	} else {
		idx := inReg(o.mainIdx[c])
		u = ZMM()
		VPERMD(st.l6, idx, u)
	}
	if o.shift != nil {
		VPSRLVD(o.shift, u, u)
	}
	if sp.secBytes == 0 || o.rot == nil {
		VPANDD(o.mask, u, u)
	}
	if sp.secBytes > 0 {
		lsHighBits(o, c, st, u)
	}
	if o.book != nil {
		VPSHUFB(u, o.book, u)
	}
	return u
}

// lsLoadUnit loads the unit's bits a lane-stationary type's chunks
// permute: the main run (two registers for 128 bytes) and the second run.
func lsLoadUnit(sp *lsSpec, wp Register, st *unitState) {
	st.l6 = ZMM()
	VMOVDQU64(Mem{Base: wp, Disp: sp.main}, st.l6)
	if sp.mainBytes == 128 {
		st.qh6 = ZMM()
		VMOVDQU64(Mem{Base: wp, Disp: sp.main + 64}, st.qh6)
	}
	switch sp.secBytes {
	case 32:
		st.hq = ZMM()
		VMOVDQU64(Mem{Base: wp, Disp: sp.sec}, st.hq.AsY())
	case 64:
		st.hq = ZMM()
		VMOVDQU64(Mem{Base: wp, Disp: sp.sec}, st.hq)
	}
}

// lsHighBits merges chunk c's second bits into u: each lane's dword of the
// second run, for q6_K rotated and bit-selected in (u = (u & 0x0f) | (h
// rotated & 0x30)), else tested against the lane's bit to add o.add.
func lsHighBits(o lsOps, c int, st *unitState, u VecVirtual) {
	idx := inReg(o.secIdx[c])
	h := ZMM()
	VPERMD(st.hq, idx, h)
	if o.rot != nil {
		VPROLVD(o.rot, h, h)
		VPTERNLOGD(U8(0xe4), o.mask, h, u) // mask ? u : h
		VPANDD(consts.c3f, u, u)
		return
	}
	k := K()
	VPTESTMB(o.bit, h, k)
	VPADDB(o.add, u, k, u)
}

// toReg loads op into a new zmm.
func toReg(op Op) VecVirtual {
	z := ZMM()
	VMOVDQU32(op, z)
	return z
}

// inReg is op, loaded into a new zmm if it is in memory.
func inReg(op Op) Op {
	if _, inMem := op.(Mem); inMem {
		return toReg(op)
	}
	return op
}

// nibbles32 unpacks 32 bytes of nibbles at m into z: the low nibbles, then
// the high ones (broadcast to both halves, the high half shifted by 4).
func nibbles32(m Mem, z VecVirtual) {
	VBROADCASTI64X4(m, z)
	VPSRLVW(cst.nibShift, z, z)
	VPANDD(cst.nib, z, z)
}

// bookMem is t's codebook (values + 128, 16 bytes in each 128-bit lane).
func bookMem(t gtype) Mem {
	if t.name == "MXFP4" {
		return consts.books["mxfp4"]
	}
	return consts.books["iq4nl"]
}

// ---- the kernel ------------------------------------------------------------

// rowKernel is what the steps of a row kernel ggufZ{T}_{M} share.
type rowKernel struct {
	t    gtype
	m    int
	name string
	lsk  bool  // lane-stationary (gtype.ls)
	ls   lsOps // its operands
	// spread: the chunks' scale spreads (registers for few rows)
	spread [4]Op
	wp     Register
	x      rows.Addr
	// f: each row's f32 sum (f2: one row's second, for the odd chunks);
	// accs: each row's int32 accumulator (acc2: one row's second)
	f, accs  []VecVirtual
	f2, acc2 VecVirtual
}

// kernel generates ggufZ{T}_{M}: M activation rows against nrows weight
// rows of t, unit by unit.
func kernel(t gtype, m int) {
	k := &rowKernel{t: t, m: m, name: fmt.Sprintf("ggufZ%s_%d", t.name, m), lsk: t.ls(m)}
	TEXT(k.name, NOSPLIT, signature)
	k.doc()
	k.constants()
	Label(k.name + "_row")
	k.rowStart()
	unitLoop(k.name, t, k.wp, k.x, unitBytes, func() { k.unit(4, nil) },
		// a row of 32-value blocks may end in a part unit: 1–3 chunks
		func(tail Register) { k.unit(-3, tail) })

	// the rows' sums into y (acc: added to it)
	rowEpilogue(k.name, m, func(r int) VecVirtual {
		if k.f2 != nil {
			VADDPS(k.f2, k.f[r], k.f[r])
		}
		return hsum(k.f[r])
	})
}

// doc emits the kernel's doc comment.
func (k *rowKernel) doc() {
	rowWord := "rows"
	if k.m == 1 {
		rowWord = "row"
	}
	minLine := ""
	switch k.t.min {
	case -1:
		minLine = " − mn[q]·A[r,q]"
	case +1:
		minLine = " + m[q]·A[r,q]"
	}
	Doc(fmt.Sprintf("%s computes %d activation %s against nrows %s rows at w (rowBytes apart), units of", k.name, k.m, rowWord, k.t.name),
		"256 values each, from the activations prepared at xa (rows ldx bytes apart; ggufPrep):",
		"",
		fmt.Sprintf("\tfor i < nrows, r < %d:", k.m),
		"\t\ty[r·ldy+i] (+)= Σ_units Σ_lanes (aux[r,l] + Σ_{j<4} u[i,4l+j]·xq[r,4l+j])·xs[r,l]·s[i,l]"+minLine,
		"",
		"with u the weights as unsigned bytes in the activations' order and s their",
		"scales spread over the lanes (see the generator, _asm/gemm/gguf).")
}

// constants sets up the constants: in registers where the rows leave them
// free (2 per row: an accumulator and a sum; the chunk's weights, scales
// and temporaries take ~8), the chunks' scale spreads too for few rows.
func (k *rowKernel) constants() {
	t, m := k.t, k.m
	switch {
	case k.lsk: // its constants in lsConsts
		memConsts(t)
	case m <= 6:
		hoist(t)
	default:
		memConsts(t)
	}
	if k.lsk {
		k.ls = lsConsts(t, m <= 3)
	}
	for c := range k.spread {
		k.spread[c] = consts.spread[layoutKind(t)][c]
		if m <= 3 && !k.lsk {
			z := ZMM()
			VMOVDQU32(consts.spread[layoutKind(t)][c], z)
			k.spread[c] = z
		}
	}
}

// rowStart emits a weight row's start: its pointer, the activation rows,
// the zeroed sums and the accumulators.
func (k *rowKernel) rowStart() {
	m := k.m
	k.wp = Load(Param("w"), GP64())
	k.x = loadRows(m)
	k.f = make([]VecVirtual, m)
	for r := range k.f {
		k.f[r] = ZMM()
		VPXORD(k.f[r], k.f[r], k.f[r])
	}
	// one row: a second sum for the odd chunks, so that the unit's four
	// FMAs into it are two chains (their latency, not the ports, bound a
	// one-row kernel otherwise)
	if m == 1 && !k.lsk {
		k.f2 = ZMM()
		VPXORD(k.f2, k.f2, k.f2)
	}
	// one int32 accumulator per row, reused by every chunk: a zeroing
	// VPXORD reads its register, so a fresh one per chunk would be live
	// (to avo) from the function's entry
	k.accs = make([]VecVirtual, m)
	for r := range k.accs {
		k.accs[r] = ZMM()
	}
	if m == 1 && k.lsk {
		k.acc2 = ZMM()
	}
}

// unit emits the chunks [0, nch) of a unit (nch < 0: a tail of −nch
// chunks at most, tail in a register, the gather masked to its blocks),
// then its mins.
func (k *rowKernel) unit(nch int, tail Register) {
	order := orderQuads
	if k.lsk {
		order = orderLanes
	}
	sc, mn := unitHead(k.t, k.wp, tail, order)
	spreadFrom, lanes := k.unitSpread(sc)
	if k.lsk {
		k.unitLS(spreadFrom, lanes)
		nch = 0
	}
	var st unitState
	n := nch
	if n < 0 {
		n = -n
	}
	for c := 0; c < n; c++ {
		if tail != nil && c > 0 {
			CMPQ(tail, U8(c))
			JE(LabelRef(k.name + "_tailmins"))
		}
		k.chunkDots(c, spreadFrom, &st)
	}
	if tail != nil {
		Label(k.name + "_tailmins")
	}
	k.mins(sc, mn, lanes)
}

// unitSpread returns the scales the chunks spread: for one row, the
// unit's scales times the row's (XSI, per scale index: the prep's), so
// that a chunk takes one FMA per row and no multiply; and lanes, the
// lanes' scales (lane-stationary).
func (k *rowKernel) unitSpread(sc VecVirtual) (spreadFrom, lanes VecVirtual) {
	spreadFrom = sc
	if k.t.name == "Q4K" {
		spreadFrom = ZMM()
		VMULPS(consts.q4KHalf, sc, spreadFrom) // the odd groups' nibbles are 16u
	}
	if k.lsk && !k.t.subs16 {
		// lane-stationary, a scale per group of 32: lane l's is group l/2's
		idx, ls := ZMM(), ZMM()
		VMOVDQU32(consts.pairs16, idx)
		VPERMPS(spreadFrom, idx, ls)
		spreadFrom = ls
	}
	lanes = spreadFrom
	if k.m == 1 {
		sx := ZMM()
		VMULPS(k.x.At(0, offXSI), spreadFrom, sx)
		spreadFrom = sx
	}
	return spreadFrom, lanes
}

// unitLS emits a lane-stationary unit: each row's products of the unit in
// one int32 sum per lane (sub-block), scaled once (one row: the odd
// chunks into a second sum, two chains of VPDPBUSD's latency instead of
// one of four).
func (k *rowKernel) unitLS(spreadFrom, lanes VecVirtual) {
	m, x, accs, acc2 := k.m, k.x, k.accs, k.acc2
	for r := 0; r < m; r++ {
		VPXORD(accs[r], accs[r], accs[r])
	}
	if acc2 != nil {
		VPXORD(acc2, acc2, acc2)
	}
	var st unitState
	for c := 0; c < 4; c++ {
		u := chunkLS(k.t, k.wp, c, k.ls, &st)
		for r := 0; r < m; r++ {
			if acc2 != nil && c%2 == 1 {
				VPDPBUSD(x.At(r, 64*c), u, acc2)
				continue
			}
			VPDPBUSD(x.At(r, 64*c), u, accs[r])
		}
	}
	if acc2 != nil {
		VPADDD(acc2, accs[0], accs[0])
	}
	for r := 0; r < m; r++ {
		acc := accs[r]
		VCVTDQ2PS(acc, acc)
		if m == 1 {
			VFMADD231PS(spreadFrom, acc, k.f[r])
			continue
		}
		VMULPS(x.At(r, offXSI), acc, acc)
		VFMADD231PS(lanes, acc, k.f[r])
	}
}

// chunkDots emits chunk c: its weights, their scales spread over the
// lanes, and per row a VPDPBUSD converted, scaled and added to the sum.
func (k *rowKernel) chunkDots(c int, spreadFrom VecVirtual, st *unitState) {
	u := chunk(k.t, k.wp, c, st)
	idx := inReg(k.spread[c])
	ws := ZMM()
	VPERMPS(spreadFrom, idx, ws)
	for r := 0; r < k.m; r++ {
		acc := k.accs[r]
		VPXORD(acc, acc, acc)
		VPDPBUSD(k.x.At(r, 64*c), u, acc)
		VCVTDQ2PS(acc, acc)
		if k.m > 1 {
			VMULPS(k.x.At(r, offXS+64*c), acc, acc)
		}
		if k.f2 != nil && c%2 == 1 {
			VFMADD231PS(ws, acc, k.f2)
		} else {
			VFMADD231PS(ws, acc, k.f[r])
		}
	}
}

// mins emits the unit's min terms: the mins mn, or for a zero point
// −s·z·xs·Σxq per quad (A holding z·xs·Σxq, the prep's; s the quads'
// scales), times each row's A.
func (k *rowKernel) mins(sc, mn, lanes VecVirtual) {
	t := k.t
	if t.z != 0 {
		mn = ZMM()
		switch {
		case t.subs16:
			mn = sc
		case k.lsk:
			mn = lanes
		default:
			idx := ZMM()
			VMOVDQU32(consts.quads[layoutKind(t)], idx)
			VPERMPS(sc, idx, mn)
		}
	}
	if mn == nil {
		return
	}
	for r := 0; r < k.m; r++ {
		if t.min > 0 {
			VFMADD231PS(k.x.At(r, offA), mn, k.f[r])
		} else {
			VFNMADD231PS(k.x.At(r, offA), mn, k.f[r])
		}
	}
}

// mxfp4UnitScales: 2^(e−128) for the unit's 8 exponent bytes, bit for bit
// ggml_e8m0_to_fp32_half: (e−1)<<23, or 0x00200000<<e for e < 2.
func mxfp4UnitScales(t gtype, wp, mask Register) VecVirtual {
	g := gather8(t, wp, 0, mask)
	e := YMM()
	VPSLLD(U8(24), g, e)
	VPSRLD(U8(24), e, e)
	a := ZMM()
	VPSUBD(consts.one, e, a.AsY())
	VPSLLD(U8(23), a.AsY(), a.AsY())
	b := YMM()
	VMOVDQU64(consts.den, b)
	VPSLLVD(e, b, b)
	k := K()
	VPCMPUD(U8(1), consts.one2, e, k) // e < 2
	VMOVDQA32(b, k, a.AsY())
	return a
}

// paramAddr is an argument's stack slot: w, y and nrows walk the rows
// there (a row kernel's unit loop needs the registers).
func paramAddr(p string) Mem {
	b, err := Param(p).Resolve()
	if err != nil {
		panic(err)
	}
	return b.Addr
}

// rowEpilogue ends a row kernel's row: each activation row's sum (sum(r),
// in an xmm's low lane) stored at y + r·ldy (acc: added to it), then w,
// y and nrows moved on to the next weight row and the loop closed.
func rowEpilogue(name string, m int, sum func(r int) VecVirtual) {
	ldy := Load(Param("ldy"), GP64())
	SHLQ(U8(2), ldy)
	yr := Load(Param("y"), GP64())
	accFlag := Load(Param("acc"), GP8())
	for r := 0; r < m; r++ {
		s := sum(r)
		TESTB(accFlag, accFlag)
		JZ(LabelRef(fmt.Sprintf("%s_set%d", name, r)))
		VADDSS(Mem{Base: yr}, s, s)
		Label(fmt.Sprintf("%s_set%d", name, r))
		VMOVSS(s, Mem{Base: yr})
		if r+1 < m {
			ADDQ(ldy, yr)
		}
	}
	ADDQ(U8(4), paramAddr("y"))
	rb := Load(Param("rowBytes"), GP64())
	ADDQ(rb, paramAddr("w"))
	DECQ(paramAddr("nrows"))
	JNZ(LabelRef(name + "_row"))
	VZEROUPPER()
	RET()
}

// hsum adds the 16 lanes of f into the low lane of an xmm.
func hsum(f VecVirtual) VecVirtual {
	h := YMM()
	VEXTRACTF64X4(U8(1), f, h)
	VADDPS(h, f.AsY(), h)
	x := XMM()
	VEXTRACTF32X4(U8(1), h, x)
	VADDPS(h.AsX(), x, x)
	y := XMM()
	VMOVHLPS(x, x, y)
	VADDPS(y, x, x)
	VMOVSHDUP(x, y)
	VADDSS(y, x, x)
	return x
}

// ---- prefill: decoded rows and tiles of 16 activation rows -----------------

// The decoded form of one weight row (ggufDecZ{T}), per unit of 256:
//
//	[0, 256)    v: the values as signed bytes (the stored integer less its
//	            zero point, or the codebook value), in order
//	[256, 320)  s[16]: f32 scale of each sub-block of 16
//	[320, 384)  mn[16]: f32 min of each sub-block (min types; else unset)
//	[384, 448)  c[16]: int32 −128·Σv of each sub-block
const (
	decUnit = 448
	decS    = 256
	decMn   = 320
	decC    = 384
)

// One group of 32 of a tile of 16 activation rows (ggufTileZ): the rows'
// values as unsigned bytes (x + 128), line j holding values 4j…4j+3 of
// the 16 rows (64 bytes), then XS (f32 ×16, each row's group scale), AS0
// and AS1 (f32 ×16, xs·Σxq of the group's halves; for a flush per 32,
// AS0 the whole group's).
const (
	actGroup = 704
	actXS    = 512
	actAS0   = 576
	actAS1   = 640
)

const decSignature = "func(w *byte, units int, tail int, dst *byte)"

// decoder generates ggufDecZ{T}: one weight row's units (and a tail of
// 1–3 chunks for the 32-value block types) decoded for the tile kernels.
func decoder(t gtype) {
	name := fmt.Sprintf("ggufDecZ%s", t.name)
	TEXT(name, NOSPLIT, decSignature)
	hoist(t)
	Doc(fmt.Sprintf("%s decodes a %s row at w (units of 256 values, then tail chunks of 64)", name, t.name),
		"into dst, per unit: the values as signed bytes, the f32 scale and min of each",
		"sub-block of 16, and −128·Σv per sub-block (see the generator, _asm/gemm/gguf).")
	wp := Load(Param("w"), GP64())
	dp := Load(Param("dst"), GP64())
	units := Load(Param("units"), GP64())
	TESTQ(units, units)
	JZ(LabelRef(name + "_tail"))
	Label(name + "_unit")
	decUnitBody(name, t, wp, dp, nil)
	ADDQ(U32(t.unitW()), wp)
	ADDQ(U32(decUnit), dp)
	DECQ(units)
	JNZ(LabelRef(name + "_unit"))
	Label(name + "_tail")
	if t.bs == 32 {
		tail := Load(Param("tail"), GP64())
		TESTQ(tail, tail)
		JZ(LabelRef(name + "_done"))
		decUnitBody(name, t, wp, dp, tail)
	}
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// decUnitBody emits the decode of the unit at wp into dp (tail != nil: a
// part unit of tail chunks): its scales and mins per sub-block of 16, then
// each chunk.
func decUnitBody(name string, t gtype, wp, dp, tail Register) {
	sc, mn := unitHead(t, wp, tail, orderNatural)
	// s per sub-block of 16
	if !t.subs16 {
		idx := ZMM()
		VMOVDQU32(consts.pairs16, idx)
		s16 := ZMM()
		VPERMPS(sc, idx, s16)
		sc = s16
	}
	VMOVUPS(sc, Mem{Base: dp, Disp: decS})
	if mn != nil {
		if t.min > 0 { // q4_1, q5_1: w = d·v + m, so the min is −m
			VPXORD(consts.sign, mn, mn)
		}
		VMOVUPS(mn, Mem{Base: dp, Disp: decMn})
	}
	var st unitState
	n := 4
	if tail != nil {
		n = 3
	}
	for c := 0; c < n; c++ {
		if tail != nil && c > 0 {
			CMPQ(tail, U8(c))
			JE(LabelRef(name + "_taildone"))
		}
		decChunk(t, wp, dp, c, &st)
	}
	if tail != nil {
		Label(name + "_taildone")
	}
}

// decChunk emits chunk c decoded: its values v = u − z as signed bytes in
// natural order (z = 128: a flip of the top bit), stored, and their sums.
func decChunk(t gtype, wp, dp Register, c int, st *unitState) {
	u := chunk(t, wp, c, st)
	if t.layoutB {
		idx := ZMM()
		VMOVDQU64(consts.natB, idx)
		VPERMQ(u, idx, u)
	}
	switch {
	case t.z == 128:
		VPXORD(consts.c80, u, u)
	case t.z != 0:
		zc := ZMM()
		VPBROADCASTB(zBytes[t.z], zc)
		VPSUBB(zc, u, u)
	}
	VMOVDQU64(u, Mem{Base: dp, Disp: 64 * c})
	decSums(u, dp, c)
}

// decSums emits chunk c's c = −128·Σv per 16 bytes (a 128-bit lane):
// Σ(v + 128) by VPSADBW's two qwords added, c = 128·(2048 − Σ(v + 128)).
func decSums(u VecVirtual, dp Register, c int) {
	f := ZMM()
	VPXORD(consts.c80, u, f)
	zero := ZMM()
	VPXORD(zero, zero, zero)
	VPSADBW(zero, f, f)
	g := ZMM()
	VPSHUFD(U8(0x4e), f, g)
	VPADDQ(g, f, f)
	d := YMM()
	VPMOVQD(f, d)
	idx := YMM()
	VMOVDQU32(consts.evens.Offset(0), idx)
	VPERMD(d, idx, d)
	x := XMM()
	VMOVDQU32(consts.c2048, x)
	VPSUBD(d.AsX(), x, x)
	VPSLLD(U8(7), x, x)
	VMOVDQU32(x, Mem{Base: dp, Disp: decC + 16*c})
}

// zBytes holds one byte of each zero point the decoder subtracts.
var zBytes = map[int]Mem{}

const tileSignature = "func(wd *byte, ldw int, units int, tail int, act *byte, out *float32)"

// tileRows is the weight rows of a tile kernel call.
const tileRows = 8

// tile generates ggufTileZ{16|32}{M|}: 8 decoded weight rows (ldw bytes
// apart) against one tile of 16 activation rows, over units of 8 groups
// and tail more groups (0…7): each weight byte broadcast to the 16 rows by
// VPDPBUSD's s8 operand against a line of the rows' u8 values, flushed per
// sub-block of 16 (flush16) or per group of 32, with the mins where min.
func tile(flush16, min bool) {
	k := &tileKernel{name: "ggufTileZ32", flush16: flush16, min: min}
	if flush16 {
		k.name = "ggufTileZ16"
	}
	if min {
		k.name += "M"
	}
	name := k.name
	TEXT(name, NOSPLIT, tileSignature)
	k.doc()
	wd := Load(Param("wd"), GP64())
	k.ra = rows.New(8, wd, Load(Param("ldw"), GP64()))
	k.ap = Load(Param("act"), GP64())
	k.f = make([]VecVirtual, tileRows)
	for i := range k.f {
		k.f[i] = ZMM()
		VPXORD(k.f[i], k.f[i], k.f[i])
	}
	k.acc = ZMM()
	units := Load(Param("units"), GP64())
	TESTQ(units, units)
	JZ(LabelRef(name + "_tail"))
	Label(name + "_unit")
	for gi := 0; gi < 8; gi++ {
		k.group(gi)
	}
	k.ra.Advance(U32(decUnit))
	DECQ(units)
	JNZ(LabelRef(name + "_unit"))
	Label(name + "_tail")
	tail := Load(Param("tail"), GP64())
	for gi := 0; gi < 7; gi++ {
		CMPQ(tail, U8(gi))
		JE(LabelRef(name + "_store"))
		k.group(gi)
	}
	Label(name + "_store")
	out := Load(Param("out"), GP64())
	for i := range k.f {
		VMOVUPS(k.f[i], Mem{Base: out, Disp: 64 * i})
	}
	VZEROUPPER()
	RET()
}

// tileKernel is what the steps of a tile kernel share: the weight rows ra,
// the activation group ap, the rows' sums f and the int32 accumulator.
type tileKernel struct {
	name         string
	flush16, min bool
	ra           rows.Addr
	ap           Register
	f            []VecVirtual
	acc          VecVirtual
}

// doc emits the tile kernel's doc comment.
func (k *tileKernel) doc() {
	minLine := ""
	if k.min {
		minLine = " − mn[i,q]·AS[q]"
	}
	Doc(fmt.Sprintf("%s computes 8 decoded weight rows at wd (ldw bytes apart) against the tile of", k.name),
		"16 activation rows at act (groups of 704 bytes), units of 8 groups then tail groups:",
		"",
		"\tfor i < 8, r < 16:",
		"\t\tout[16i+r] = Σ_q (s[i,q]·XS[r]·(c[i,q] + Σ_j v[i,j]·u[r,j])"+minLine+")",
		"",
		fmt.Sprintf("over the sub-blocks q of 16 (flushed per %s), u = x + 128 (see _asm/gemm/gguf).", map[bool]string{true: "16", false: "32"}[k.flush16]))
}

// group emits group gi (0…7) of the current unit: the activations' 8
// lines, scales and (min) sums, then every weight row's sub-blocks.
func (k *tileKernel) group(gi int) {
	ap := k.ap
	var lines [8]VecVirtual
	for j := range lines {
		lines[j] = ZMM()
		VMOVDQU64(Mem{Base: ap, Disp: 64 * j}, lines[j])
	}
	xs := ZMM()
	VMOVUPS(Mem{Base: ap, Disp: actXS}, xs)
	var as [2]VecVirtual
	if k.min {
		as[0] = ZMM()
		VMOVUPS(Mem{Base: ap, Disp: actAS0}, as[0])
		if k.flush16 {
			as[1] = ZMM()
			VMOVUPS(Mem{Base: ap, Disp: actAS1}, as[1])
		}
	}
	halves := [][2]int{{0, 8}}
	if k.flush16 {
		halves = [][2]int{{0, 4}, {4, 8}}
	}
	for i := 0; i < tileRows; i++ {
		for h, hr := range halves {
			k.flush(i, 2*gi+h, hr, lines, xs, as[h])
		}
	}
	ADDQ(U32(actGroup), ap)
}

// flush emits weight row i's lines hr of sub-block q (the slot in the
// unit's meta): the dots with the activation lines, c added, converted,
// scaled by s·XS into f[i], and the min term with as.
func (k *tileKernel) flush(i, q int, hr [2]int, lines [8]VecVirtual, xs, as VecVirtual) {
	ra, acc := k.ra, k.acc
	gi := q / 2
	VPXORD(acc, acc, acc)
	for j := hr[0]; j < hr[1]; j++ {
		VPDPBUSD_BCST(ra.At(i, 32*gi+4*j), lines[j], acc)
	}
	VPADDD_BCST(ra.At(i, decC+4*q), acc, acc)
	if !k.flush16 {
		VPADDD_BCST(ra.At(i, decC+4*(q+1)), acc, acc)
	}
	VCVTDQ2PS(acc, acc)
	t := ZMM()
	VMULPS_BCST(ra.At(i, decS+4*q), xs, t)
	VFMADD231PS(t, acc, k.f[i])
	if k.min {
		VFNMADD231PS_BCST(ra.At(i, decMn+4*q), as, k.f[i])
	}
}

// ---- the float formats (f32 class) ----------------------------------------

const floatSignature = "func(w *byte, nrows int, rowBytes int, k int, x *float32, ldx int, y *float32, ldy int, acc bool)"

// floatKernel generates ggufZF{F32,F16,BF16}_{M}: nrows rows of k floats
// (k a multiple of 32) widened to f32 16 at a time and multiplied into M
// activation rows of f32, two accumulators per row.
func floatKernel(kind string, m int) {
	name := fmt.Sprintf("ggufZF%s_%d", kind, m)
	TEXT(name, NOSPLIT, floatSignature)
	Doc(fmt.Sprintf("%s computes %d f32 activation row(s) (ldx floats apart) against nrows %s rows at w", name, m, kind),
		"(rowBytes apart) of k values, k a multiple of 32:",
		"",
		fmt.Sprintf("\tfor i < nrows, r < %d: y[r·ldy+i] (+)= Σ_j float32(w[i,j])·x[r·ldx+j]", m))
	Label(name + "_row")
	wp := Load(Param("w"), GP64())
	xp := Load(Param("x"), GP64())
	ldx := Load(Param("ldx"), GP64())
	SHLQ(U8(2), ldx)
	f := make([][2]VecVirtual, m)
	for r := range f {
		for u := range f[r] {
			f[r][u] = ZMM()
			VPXORD(f[r][u], f[r][u], f[r][u])
		}
	}
	n := Load(Param("k"), GP64())
	SHRQ(U8(5), n)
	xr := GP64()
	Label(name + "_k")
	wb := map[string]int{"F32": 4, "F16": 2, "BF16": 2}[kind]
	PREFETCHT0(Mem{Base: wp, Disp: prefetchDist})
	if wb == 4 {
		PREFETCHT0(Mem{Base: wp, Disp: prefetchDist + 64})
	}
	for u := 0; u < 2; u++ {
		w := floatWeights(kind, Mem{Base: wp, Disp: 16 * wb * u})
		MOVQ(xp, xr)
		for r := 0; r < m; r++ {
			VFMADD231PS(Mem{Base: xr, Disp: 64 * u}, w, f[r][u])
			if r+1 < m {
				ADDQ(ldx, xr)
			}
		}
	}
	ADDQ(U8(32*wb), wp)
	ADDQ(U8(128), xp)
	DECQ(n)
	JNZ(LabelRef(name + "_k"))
	rowEpilogue(name, m, func(r int) VecVirtual {
		VADDPS(f[r][1], f[r][0], f[r][0])
		return hsum(f[r][0])
	})
}

// floatWeights widens the 16 weights of kind at m to f32.
func floatWeights(kind string, m Mem) VecVirtual {
	w := ZMM()
	switch kind {
	case "F32":
		VMOVUPS(m, w)
	case "F16":
		VCVTPH2PS(m, w)
	case "BF16":
		VPMOVZXWD(m, w)
		VPSLLD(U8(16), w, w)
	}
	return w
}

var isa = flag.String("isa", "avx512", "avx512 or avx2")

func main() {
	flag.Parse()
	if *isa == "avx2" {
		mainAVX2()
		checkVEX(flag.Lookup("out").Value.String())
		return
	}
	ConstraintExpr("amd64,gc,!purego")
	makeConsts()
	only, onlyM := os.Getenv("GGUF_GEN_TYPE"), os.Getenv("GGUF_GEN_M")
	for _, t := range types {
		for m := 1; m <= maxM; m++ {
			if only != "" && only != t.name || onlyM != "" && onlyM != fmt.Sprint(m) {
				continue
			}
			kernel(t, m)
		}
		if only == "" || only == t.name {
			decoder(t)
		}
	}
	if only == "" {
		for _, kind := range []string{"F32", "F16", "BF16"} {
			for m := 1; m <= maxM; m++ {
				floatKernel(kind, m)
			}
		}
		for _, f16 := range []bool{false, true} {
			for _, mn := range []bool{false, true} {
				tile(f16, mn)
			}
		}
	}
	Generate()
}
