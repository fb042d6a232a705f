package main

import (
	"fmt"

	"github.com/ktune/ktune/_asm/internal/rows"
	"github.com/ktune/ktune/_asm/internal/x86"
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// ---- AVX-VNNI (VEX, ymm) ---------------------------------------------------

// Physical ymm registers (the BYTE-encoded vpdpbusd needs fixed numbers).
var (
	yAcc  = []VecPhysical{Y0, Y1, Y2, Y3}
	yF    = []VecPhysical{Y4, Y5, Y6, Y7}
	yLo   = Y8
	yHi   = Y9
	yB    = []VecPhysical{Y10, Y11}
	yD    = Y12
	yMin  = Y13
	yMask = Y14
	yTmp  = Y15
)

// yMask3 is Q3's second mask (0x03 per byte), in yMin's place; yMask5
// Q5's (0x10 per byte, the fifth bit), likewise.
var yMask3, yMask5 = yMin, yMin

// The AVX2 kernels (yAVX2, avx2i8*) and the test twins (yTwin,
// avxvnniTwin*) do without AVX-VNNI. A twin is its avxvnni kernel with
// each {vex} vpdpbusd replaced by vpmaddubsw, vpmaddwd with ones and
// vpaddd, exact while every u8·s8 pair sum fits an int16 (u < 128: all but
// Q8), and otherwise instruction for instruction the same
// (TestAVXVNNITwinsMatch), so its exact tests check the avx_vnni kernels'
// decode, tiling and flushes on machines without AVX-VNNI; only tests call
// it. The AVX2 kernels of 2-, 3- and 4-bit weights add the int16 pair sums
// over the whole group instead (one vpaddw per row and k-quad, one
// vpmaddwd per group: |Σ| ≤ 8·2·15·128 = 30720, Q2's ≤ 8·2·3·128); Q8's split each weight
// into nibbles and do the same with each; Q5's add them over half a group
// (4 k-quads: |Σ| ≤ 4·2·31·128 = 31744; five would not fit) and widen
// twice per group; Q6's (6-bit: only two k-quads' sums would fit) are its
// twins under another name.
var cOnes16, cSixteens16, cNibbles, cFifths Mem

// yLo16 are the avx2 Q8 kernels' int16 sums of the low nibbles' products
// (free until the flush, which reuses yD and yTmp).
var yLo16 = []VecPhysical{Y12, Y13, Y14, Y15}

// yQ5Sum16 are the avx2 Q5 kernels' int16 sums of half a group, one per
// row: dead at the flush (which reuses yD and yTmp), and ordered so that
// with M ≤ 2 rows yMask and yMask5 keep their masks (with 3 yMask5's
// comes from memory, with 4 yMask's too).
var yQ5Sum16 = []VecPhysical{Y12, Y15, Y13, Y14}

// bcastY broadcasts the dword v to every lane of dst.
func bcastY(v uint32, dst VecPhysical) {
	t := GP32()
	MOVL(U32(v), t)
	VMOVD(t, dst.AsX())
	VPBROADCASTD(dst.AsX(), dst)
}

// yMode is what kernelY emits.
type yMode int

const (
	yVNNI yMode = iota // avxvnni*: {vex} vpdpbusd
	yTwin              // avxvnniTwin*: each vpdpbusd as vpmaddubsw, vpmaddwd(ones), vpaddd (tests only)
	yAVX2              // avx2i8*: int16 sums over the group where they fit, else as yTwin
)

// yKernel is what the steps of one ymm kernel share: the format, rows and
// mode, the argument registers, the activation cursors of the current
// half-panel pass h and its record pointer wh = wp + 32h.
type yKernel struct {
	k    kind
	m    int
	mode yMode
	name string
	// q8: nibble products summed in int16 (yAcc: hi, yLo16: lo); i16: the
	// products of 3- and 4-bit weights summed in int16 in yAcc. Both
	// widen once per group and add aux then. q5: Q5's products summed in
	// int16 over each half group (yQ5Sum16), widened and added to yAcc
	// (aux) twice per group. pf: the avx2 kernels prefetch the next
	// panel's records (pb: a panel's bytes, ng·stride()).
	q8, i16, q5, pf bool
	wp, np, yp, pb  Register
	c               cursors
	h               int
	wh              Register
	nb              int // activation broadcasts so far in the group (they alternate yB)
}

// kernelY generates avxvnni{k}_{m}x16 (or its avx2 form or test twin, by
// mode): the panel's two halves of 8 rows, one pass over the groups each.
func kernelY(k kind, m int, mode yMode) {
	y := newYKernel(k, m, mode)
	TEXT(y.name, NOSPLIT, signature)
	y.doc()
	y.wp = Load(Param("w"), GP64())
	y.np = Load(Param("np"), GP64())
	y.yp = Load(Param("y"), GP64())
	y.loadMasks()
	if y.pf {
		y.pb = Load(Param("ng"), GP64())
		IMUL3Q(U32(k.stride()), y.pb, y.pb)
	}
	Label(y.name + "_panel")
	for h := 0; h < 2; h++ {
		y.half(h)
	}
	// Next panel: ng·gb bytes on.
	ng := Load(Param("ng"), GP64())
	IMUL3Q(U32(k.stride()), ng, ng)
	ADDQ(ng, y.wp)
	DECQ(y.np)
	JNZ(LabelRef(y.name + "_panel"))
	VZEROUPPER()
	RET()
}

// newYKernel names the kernel and picks its int16 summing scheme.
func newYKernel(k kind, m int, mode yMode) *yKernel {
	y := &yKernel{k: k, m: m, mode: mode, name: fmt.Sprintf("avxvnni%s_%dx16", k.name, m)}
	switch mode {
	case yTwin:
		y.name = fmt.Sprintf("avxvnniTwin%s_%dx16", k.name, m)
	case yAVX2:
		y.name = fmt.Sprintf("avx2i8%s_%dx16", k.name, m)
	}
	avx2 := mode == yAVX2
	y.q8 = avx2 && k.name == "Q8"
	y.i16 = avx2 && (k.name == "Q4" || k.name == "Q4M" || k.name == "Q3" || k.q2 || k.name == "Q3K" || k.name == "Q4K")
	y.q5 = avx2 && (k.name == "Q5" || k.name == "Q5K")
	y.pf = avx2
	return y
}

// doc emits the doc comment, with the AVX2 summing scheme or the twin's
// note.
func (y *yKernel) doc() {
	k, m, name := y.k, y.m, y.name
	switch {
	case y.q8:
		doc(name, k, m, 8, "", "AVX2 (no VNNI): each weight byte split into nibbles, u = 16·hi + lo, each",
			"nibble's products paired by vpmaddubsw and summed over the group's 8 lines in int16",
			"(exact: |Σ| ≤ 8·2·15·128 = 30720 < 2^15), then widened by vpmaddwd (16s for hi, ones",
			"for lo) and added to aux.")
	case y.i16:
		bound := "8·2·15·128 = 30720"
		if k.q2 {
			bound = "8·2·3·128 = 6144"
		}
		doc(name, k, m, 8, "", "AVX2 (no VNNI): the u8·s8 products paired by vpmaddubsw and summed over the",
			"group's 8 k-quads in int16 (exact: |Σ| ≤ "+bound+" < 2^15), widened once",
			"per group by vpmaddwd with ones.")
	case y.q5:
		doc(name, k, m, 8, "", "AVX2 (no VNNI): the u8·s8 products paired by vpmaddubsw and summed over",
			"half a group (4 k-quads) in int16 (exact: |Σ| ≤ 4·2·31·128 = 31744 < 2^15),",
			"widened by vpmaddwd with ones and added to aux, twice per group.")
	case y.mode == yAVX2:
		doc(name, k, m, 8, "", fmt.Sprintf("avxvnni%s_%dx16 on AVX2: vpmaddubsw, vpmaddwd with ones, vpaddd in place", k.name, m),
			"of each vpdpbusd (exact: u < 64, so no int16 pair sum saturates; 6-bit weights'",
			"int16 sums over a group could).")
	case y.mode == yTwin:
		doc(name, k, m, 8, "", fmt.Sprintf("Test twin of avxvnni%s_%dx16: vpmaddubsw, vpmaddwd, vpaddd in place", k.name, m),
			"of each vpdpbusd (AVX2; exact for these weights). Only tests call it.")
	default:
		doc(name, k, m, 8)
	}
}

// loadMasks broadcasts the format's decode masks (the avx2 Q5 kernels
// keep them in memory where yQ5Sum16 needs their registers).
func (y *yKernel) loadMasks() {
	switch y.k.lines {
	case 4:
		bcastY(0x0f0f0f0f, yMask)
	case 3:
		bcastY(0x07070707, yMask)
		bcastY(0x03030303, yMask3)
	case 6:
		bcastY(0x3f3f3f3f, yMask)
	case 2:
		bcastY(0x03030303, yMask)
	case 5:
		if !y.q5 || y.m < 4 {
			bcastY(0x0f0f0f0f, yMask)
		}
		if !y.q5 || y.m < 3 {
			bcastY(0x10101010, yMask5)
		}
	}
}

// half emits the pass over the groups for rows 8h…8h+7 of the panel and
// its stores at y + 32h bytes.
func (y *yKernel) half(h int) {
	k := y.k
	y.h = h
	sfx := fmt.Sprint(h)
	// K formats: as kernelZ, super-blocks (g of them, wh − 32h at the
	// record) of 4 pairs of groups (q = 16·pair indexes the header,
	// vp the pair's value lines), ldaux added from memory.
	y.c = loadCursors(k, y.m)
	y.wh = GP64()
	LEAQ(Mem{Base: y.wp, Disp: 32 * h}, y.wh)
	for r := 0; r < y.m; r++ {
		VPXOR(yF[r], yF[r], yF[r])
	}
	Label(y.name + "_group" + sfx)
	if k.kq {
		y.superBlock()
	}
	for e := 0; e < y.c.nsub; e++ {
		y.group(e)
	}
	y.c.loopEnd(y.name, sfx, k, []Register{y.c.vp}, []Register{y.wh})
	storeRows(y.name, sfx, y.yp, yF[:y.m])
	ADDQ(U8(32), y.yp)
}

// superBlock emits a K super-block's start: vp at the value lines, q = 0,
// (avx2) the prefetch of half the next panel's header; then the pair
// loop's label.
func (y *yKernel) superBlock() {
	h := y.h
	LEAQ(Mem{Base: y.wh, Disp: kHeader}, y.c.vp)
	XORL(y.c.q.As32(), y.c.q.As32())
	if y.pf {
		// the next panel's header: half of it per pass
		for j := 2 * h; j < 2*h+2; j++ {
			PREFETCHT1(Mem{Base: y.wh, Index: y.pb, Scale: 1, Disp: 64*j - 32*h})
		}
	}
	Label(y.name + "_pair" + fmt.Sprint(h))
}

// group emits one group (e: which of a K pair) of the half-panel: its
// dot products, their widening, the scales and the flush into yF.
func (y *yKernel) group(e int) {
	k := y.k
	l := lines{base: y.wh} // the group's value lines (base − 32h line-aligned)
	if k.kq {
		l = lines{base: y.c.vp, disp: e * k.gb}
	}
	if y.pf {
		y.prefetch(l)
	}
	y.zeroAcc()
	y.nb = 0
	y.decode(l)
	if y.i16 {
		for r := 0; r < y.m; r++ {
			VPMADDWD(cOnes16, yAcc[r], yAcc[r])
			if !k.hasMin && !k.kq {
				VPBROADCASTD(Mem{Base: y.c.ap, Disp: 4 * r}, yB[0])
				VPADDD(yB[0], yAcc[r], yAcc[r])
			}
		}
	}
	y.scales(e)
	y.flush()
	if !k.kq {
		ADDQ(U32(k.gb), y.wh)
	}
	y.c.advance()
}

// prefetch emits the avx2 kernels' prefetch of the next panel. The second
// half-panel pass reads its lines from cache: without help DRAM would idle
// through it. Each pass prefetches about half of the next panel's group
// record, so the stream keeps going through both passes: a line address
// every 64 bytes, nl = ⌈gb/64⌉ of them (with the next record's, every line
// of the stream), n0 in pass 0 and the rest in pass 1 (wh − 32h is this
// group's record). Into L2: with PREFETCHT0 the next panel evicted this
// one from L1 before its second pass, and Q5's kernels ran no faster than
// without. (After the last panel the addresses are past w: prefetches
// never fault.)
func (y *yKernel) prefetch(l lines) {
	h := y.h
	nl := (y.k.gb + 63) / 64
	n0 := (nl + 1) / 2
	for j := h * n0; j < n0+h*(nl-n0); j++ {
		PREFETCHT1(Mem{Base: l.base, Index: y.pb, Scale: 1, Disp: l.disp + 64*j - 32*h})
	}
}

// zeroAcc emits the group's int32 (or int16) accumulators' start: aux, or
// zero where aux is added later or not at all.
func (y *yKernel) zeroAcc() {
	k := y.k
	for r := 0; r < y.m; r++ {
		if k.hasMin || k.kq || y.q8 || y.i16 {
			VPXOR(yAcc[r], yAcc[r], yAcc[r])
		} else {
			VPBROADCASTD(Mem{Base: y.c.ap, Disp: 4 * r}, yAcc[r])
		}
		if y.q8 {
			VPXOR(yLo16[r], yLo16[r], yLo16[r])
		}
	}
}

// dot emits row r's products of the weights w with the activation dword
// at disp: a vpdpbusd, its AVX2 form, or (i16) int16 pair sums added in
// int16.
func (y *yKernel) dot(w VecPhysical, r, disp int) {
	b := yB[y.nb%2]
	y.nb++
	VPBROADCASTD(y.c.x.At(r, disp), b)
	if y.i16 {
		VPMADDUBSW(b, w, b) // u8·s8 pair sums (int16)
		VPADDW(b, yAcc[r], yAcc[r])
		return
	}
	if y.mode != yVNNI {
		VPMADDUBSW(b, w, b) // u8·s8 pair sums (int16)
		VPMADDWD(cOnes16, b, b)
		VPADDD(b, yAcc[r], yAcc[r])
		return
	}
	x86.VPDPBUSDY(w, b, yAcc[r])
}

// dots emits every row's dot with the weights w of k-quad quad.
func (y *yKernel) dots(w VecPhysical, quad int) {
	for r := 0; r < y.m; r++ {
		y.dot(w, r, 4*quad)
	}
}

// decode emits the group's eight k-quads, each decoded to u8 weights and
// dotted with every row.
func (y *yKernel) decode(l lines) {
	switch y.k.lines {
	case 8:
		if y.q8 {
			y.decodeQ8Nibbles(l)
			break
		}
		for i := 0; i < 8; i++ {
			VMOVDQU(l.at(i), yLo)
			y.dots(yLo, i)
		}
	case 3:
		y.decodeQ3(l)
	case 6:
		y.decodeQ6(l)
	case 5:
		if y.q5 {
			q5AVX2(y.m, y.c.x, l.at, yAcc[:y.m])
			break
		}
		y.decodeQ5(l)
	case 2:
		y.decodeQ2(l)
	default:
		y.decodeQ4(l)
	}
}

// decodeQ8Nibbles emits the avx2 Q8 group: u = 16·hi + lo, Σu·x =
// 16·Σhi·x + Σlo·x. yAcc holds the hi sums and yLo16 the lo ones, in int16
// lanes through the group (each line adds pair sums within ±2·15·128); the
// mask comes from memory, its register holds yLo16[2]. Then both are
// widened (the hi sums by 16) and added with aux into yAcc.
func (y *yKernel) decodeQ8Nibbles(l lines) {
	x := y.c.x
	for i := 0; i < 8; i++ {
		VMOVDQU(l.at(i), yLo)
		VPSRLW(U8(4), yLo, yHi)
		VPAND(cNibbles, yLo, yLo)
		VPAND(cNibbles, yHi, yHi)
		for r := 0; r < y.m; r++ {
			VPBROADCASTD(x.At(r, 4*i), yB[0])
			VPMADDUBSW(yB[0], yHi, yB[1])
			VPADDW(yB[1], yAcc[r], yAcc[r])
			VPMADDUBSW(yB[0], yLo, yB[0])
			VPADDW(yB[0], yLo16[r], yLo16[r])
		}
	}
	for r := 0; r < y.m; r++ {
		VPMADDWD(cSixteens16, yAcc[r], yAcc[r])
		VPMADDWD(cOnes16, yLo16[r], yLo16[r])
		VPADDD(yLo16[r], yAcc[r], yAcc[r])
		VPBROADCASTD(Mem{Base: y.c.ap, Disp: 4 * r}, yB[0])
		VPADDD(yB[0], yAcc[r], yAcc[r])
	}
}

// decodeQ4 emits Q4's quads 2c and 2c+1: the low and high nibbles of line c.
func (y *yKernel) decodeQ4(l lines) {
	for c := 0; c < 4; c++ {
		VMOVDQU(l.at(c), yLo)
		VPSRLW(U8(4), yLo, yHi)
		VPAND(yMask, yLo, yLo)
		VPAND(yMask, yHi, yHi)
		y.dots(yLo, 2*c)
		y.dots(yHi, 2*c+1)
	}
}

// decodeQ3 emits Q3 (quant/q3.go): quads 2c, 2c+1 are bits 0–2 and 3–5 of
// line c; quad 6+c the bits 6–7 of line c (c < 2) below bit 6+c of line 2
// (word shifts: the masks drop what crosses from the byte above).
func (y *yKernel) decodeQ3(l lines) {
	for c := 0; c < 3; c++ {
		VMOVDQU(l.at(c), yLo) // line 2 stays in yLo
		VPAND(yMask, yLo, yHi)
		y.dots(yHi, 2*c)
		VPSRLW(U8(3), yLo, yHi)
		VPAND(yMask, yHi, yHi)
		y.dots(yHi, 2*c+1)
	}
	for c := 0; c < 2; c++ {
		VMOVDQU(l.at(c), yHi)
		VPSRLW(U8(6), yHi, yHi)
		VPAND(yMask3, yHi, yHi) // bits 0–1
		VPSRLW(U8(4+c), yLo, yTmp)
		VPANDN(yTmp, yMask3, yTmp) // bit 2 (and above, dropped next)
		VPOR(yTmp, yHi, yHi)
		VPAND(yMask, yHi, yHi)
		y.dots(yHi, 6+c)
	}
}

// decodeQ6 emits Q6 (quant/q6.go): quad c < 6 is bits 0–5 of line c; quad
// 6+h gathers bits 6–7 (~mask) of lines 3h, 3h+1, 3h+2 as its bits 0–1,
// 2–3, 4–5 (masked first, so word shifts keep them in their byte).
func (y *yKernel) decodeQ6(l lines) {
	for c := 0; c < 6; c++ {
		VPAND(l.at(c), yMask, yHi)
		y.dots(yHi, c)
	}
	for h := 0; h < 2; h++ {
		VPANDN(l.at(3*h), yMask, yHi)
		VPSRLW(U8(6), yHi, yHi)
		for t := 1; t < 3; t++ {
			VPANDN(l.at(3*h+t), yMask, yTmp)
			VPSRLW(U8(6-2*t), yTmp, yTmp)
			VPOR(yTmp, yHi, yHi)
		}
		y.dots(yHi, 6+h)
	}
}

// decodeQ5 emits Q5 (quant/q5.go): quads 2c, 2c+1 are Q4's nibbles of
// line c; bit h of each byte of line 4 (in yTmp) is quad h's fifth bit,
// moved to bit 4 by a word shift and kept by yMask5 (yD is free until the
// flush).
func (y *yKernel) decodeQ5(l lines) {
	VMOVDQU(l.at(4), yTmp)
	for c := 0; c < 4; c++ {
		VMOVDQU(l.at(c), yLo)
		fifthY(2*c, yTmp, yMask5)
		VPAND(yMask, yLo, yD)
		VPOR(yD, yHi, yHi)
		y.dots(yHi, 2*c)
		fifthY(2*c+1, yTmp, yMask5)
		VPSRLW(U8(4), yLo, yLo)
		VPAND(yMask, yLo, yLo)
		VPOR(yLo, yHi, yHi)
		y.dots(yHi, 2*c+1)
	}
}

// fifthY emits yHi = bit h of each byte of hb, moved to bit 4 (a word
// shift) and kept by the mask five.
func fifthY(h int, hb VecPhysical, five Op) {
	switch {
	case h < 4:
		VPSLLW(U8(4-h), hb, yHi)
		VPAND(five, yHi, yHi)
	case h == 4:
		VPAND(five, hb, yHi)
	default:
		VPSRLW(U8(h-4), hb, yHi)
		VPAND(five, yHi, yHi)
	}
}

// decodeQ2 emits Q2 (quant/q2.go): quad 4c+h is bits 2h, 2h+1 of line c.
func (y *yKernel) decodeQ2(l lines) {
	for c := 0; c < 2; c++ {
		VMOVDQU(l.at(c), yLo)
		for h := 0; h < 4; h++ {
			if h == 0 {
				VPAND(yMask, yLo, yHi)
			} else {
				VPSRLW(U8(2*h), yLo, yHi)
				VPAND(yMask, yHi, yHi)
			}
			y.dots(yHi, 4*c+h)
		}
	}
}

// scales emits the half's 8 row scales into yD and the mins the flush
// applies to aux: yHi (K formats) or yMin. wh = wp + 32h: the half's 8
// scales are 16h bytes into the scales.
func (y *yKernel) scales(e int) {
	k, wh, h := y.k, y.wh, y.h
	switch {
	case k.kq:
		y.kScales(e)
	case k.q2:
		// d = f16(h &^ 15); yMin = d·(c − 1) with c = h & 15 (the
		// kernel subtracts yMin·aux, aux = xs·Σxq/4)
		sw := Mem{Base: wh, Disp: k.scaleOff - 16*h}
		bcastY(0xfff0fff0, yTmp)
		VPAND(sw, yTmp.AsX(), yD.AsX())
		VCVTPH2PS(yD.AsX(), yD)
		VPMOVZXWD(sw, yMin)
		VPANDN(yMin, yTmp, yMin) // yMin = ^yTmp & h: the code c
		VCVTDQ2PS(yMin, yMin)
		VFMSUB213PS(yD, yD, yMin) // yMin = c·d − d
	default:
		VCVTPH2PS(Mem{Base: wh, Disp: k.scaleOff - 16*h}, yD)
	}
	if k.hasMin && !k.q2 {
		VCVTPH2PS(Mem{Base: wh, Disp: k.scaleOff + 32 - 16*h}, yMin)
	}
}

// kScales emits a K group's yD = d·sc, yHi = dm·mc for the half's 8 rows
// (see kernelZ; yLo, yHi are free here and the masks stay), from the
// header at wh − 32h.
func (y *yKernel) kScales(e int) {
	wh, q, h := y.wh, y.c.q, y.h
	hd := -32 * h
	VPMOVZXBD(Mem{Base: wh, Index: q, Scale: 2, Disp: hd + 8*h + 16*e}, yLo)
	VPSLLD(U8(26), yLo, yD)
	VPSRLD(U8(26), yD, yD)
	VCVTDQ2PS(yD, yD)
	VCVTPH2PS(Mem{Base: wh, Disp: hd + kDOff + 16*h}, yTmp)
	VMULPS(yTmp, yD, yD)
	VPSRLD(U8(6), yLo, yLo)
	VPMOVZXBD(Mem{Base: wh, Index: q, Scale: 1, Disp: hd + kMinOff + 8*h}, yHi)
	if e == 0 {
		VPSLLD(U8(28), yHi, yHi)
		VPSRLD(U8(26), yHi, yHi)
	} else {
		VPSRLD(U8(4), yHi, yHi)
		VPSLLD(U8(2), yHi, yHi)
	}
	VPOR(yHi, yLo, yLo)
	VCVTDQ2PS(yLo, yLo)
	VCVTPH2PS(Mem{Base: wh, Disp: hd + kDMOff + 16*h}, yHi)
	VMULPS(yHi, yLo, yHi)
}

// flush emits the group's flush into yF: the int32 sums converted, scaled
// by xs and d, and the min term of aux.
func (y *yKernel) flush() {
	k, ap := y.k, y.c.ap
	for r := 0; r < y.m; r++ {
		VCVTDQ2PS(yAcc[r], yAcc[r])
		VBROADCASTSS(Mem{Base: y.c.xsp, Disp: 4 * r}, yTmp)
		VMULPS(yTmp, yAcc[r], yAcc[r])
		VFMADD231PS(yAcc[r], yD, yF[r])
		if k.kq {
			VBROADCASTSS(Mem{Base: ap, Disp: 4 * r}, yTmp)
			VFNMADD231PS(yTmp, yHi, yF[r])
		} else if k.q2 {
			VBROADCASTSS(Mem{Base: ap, Disp: 4 * r}, yTmp)
			VFNMADD231PS(yTmp, yMin, yF[r])
		} else if k.hasMin {
			VBROADCASTSS(Mem{Base: ap, Disp: 4 * r}, yTmp)
			VFMADD231PS(yTmp, yMin, yF[r])
		}
	}
}

// q5AVX2 emits the k-quads of one Q5 group half-panel for the avx2
// kernels: the decode of yKernel.decodeQ5 (Q4's nibbles of line c for
// quads 2c and 2c+1, bit h of line 4 moved to bit 4 for quad h), with
// line 4 in yB[0] and the masks in registers where yQ5Sum16 leaves them
// free (else from memory); each row's vpmaddubsw pair sums added in int16
// over quads 4t…4t+3 (yQ5Sum16[r]), then widened by vpmaddwd with ones
// and added to acc[r]. yB[1] takes the activation broadcasts and one
// temporary.
func q5AVX2(m int, x rows.Addr, line func(int) Mem, acc []VecPhysical) {
	var nib, five Op = yMask, yMask5
	if m >= 4 {
		nib = cNibbles
	}
	if m >= 3 {
		five = cFifths
	}
	hb, b := yB[0], yB[1]
	VMOVDQU(line(4), hb)
	for c := 0; c < 4; c++ {
		VMOVDQU(line(c), yLo)
		fifthY(2*c, hb, five)
		VPAND(nib, yLo, b)
		VPOR(b, yHi, yHi)
		q5Dots(m, x, 2*c, acc)
		fifthY(2*c+1, hb, five)
		VPSRLW(U8(4), yLo, yLo)
		VPAND(nib, yLo, yLo)
		VPOR(yLo, yHi, yHi)
		q5Dots(m, x, 2*c+1, acc)
	}
}

// q5Dots emits the products of yHi (quad's weights) for q5AVX2: summed in
// yQ5Sum16 over quads 4t…4t+3, widened and added to acc after the last.
func q5Dots(m int, x rows.Addr, quad int, acc []VecPhysical) {
	b := yB[1]
	for r := 0; r < m; r++ {
		s := yQ5Sum16[r]
		VPBROADCASTD(x.At(r, 4*quad), b)
		if quad%4 == 0 {
			VPMADDUBSW(b, yHi, s) // u8·s8 pair sums (int16)
		} else {
			VPMADDUBSW(b, yHi, b)
			VPADDW(b, s, s)
		}
		if quad%4 == 3 {
			VPMADDWD(cOnes16, s, s)
			VPADDD(s, acc[r], acc[r])
		}
	}
}
