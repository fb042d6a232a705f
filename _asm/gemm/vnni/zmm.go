package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// ---- AVX-512 ---------------------------------------------------------------

// prefetchDist is how far ahead (bytes) the zmm kernels prefetch the
// weight stream.
var prefetchDist = 2048

// stream is one weight stream of a zmm kernel: its record pointer wp (a K
// format's pair pointer vp), its per-row f32 accumulators f and, where
// registers allow, its super-block's widened d and dm.
type stream struct {
	wp, vp  Register
	f       []VecVirtual
	dK, dmK VecVirtual
}

// zKernel is what the steps of one zmm kernel share: the format, the
// rows, the argument registers, the decode masks, the activation cursors,
// the weight streams and the int32 accumulators of a group.
type zKernel struct {
	k          kind
	m          int
	dual       bool
	name       string
	wp, np, yp Register
	// mask, mask3, mask4: the decode masks (see zMasks); m63, m3c: a K
	// kernel's code masks 0x3f and 0x3c, where registers allow.
	mask, mask3, mask4 VecVirtual
	m63, m3c           VecVirtual
	c                  cursors
	streams            []stream
	acc                []VecVirtual
}

// kernelZ generates vnni{k}_{m}x16, or with dual (m = 1) its two-stream
// twin vnni{k}_1x16d: the same computation on the np panels at w and, side
// by side group by group, on the np panels that follow them (panels
// np…2np−1 of the call, written to y + 16·np), so that one thread keeps
// two sequential streams in flight (one stream reads ~13% below the
// 4-stream read ceiling on the Zen 5 VM: 34–36 against 38–41 GB/s on one
// core; kernels/gemm's vnniZd lists the formats this speeds up).
func kernelZ(k kind, m int, dual bool) {
	z := &zKernel{k: k, m: m, dual: dual, name: fmt.Sprintf("vnni%s_%dx16", k.name, m)}
	if dual {
		z.name += "d"
	}
	z.header()
	z.wp = Load(Param("w"), GP64())
	z.np = Load(Param("np"), GP64())
	z.yp = Load(Param("y"), GP64())
	z.loadMasks()

	Label(z.name + "_panel")
	wpB := z.secondRecord()
	z.c = loadCursors(k, m)
	z.newStreams(wpB)
	// one set of accumulators for both groups of a K pair (their zeroing
	// reads them as far as the register allocator knows)
	z.acc = make([]VecVirtual, m)
	for r := range z.acc {
		z.acc[r] = ZMM()
	}
	Label(z.name + "_group")
	if k.kq {
		z.superBlock()
	}
	for e := 0; e < z.c.nsub; e++ {
		for _, s := range z.streams {
			z.group(s, e)
		}
		z.c.advance()
	}
	var vps, wps []Register
	for _, s := range z.streams {
		vps, wps = append(vps, s.vp), append(wps, s.wp)
	}
	z.c.loopEnd(z.name, "", k, vps, wps)
	z.store()
}

// header emits the TEXT line and the doc comment.
func (z *zKernel) header() {
	TEXT(z.name, NOSPLIT, signature)
	if z.dual {
		doc(z.name, z.k, z.m, 16, "",
			fmt.Sprintf("Two streams: the same on the np panels after them (panels np…2np−1, output at y + 16·np), group by group beside the first (vnni%s_1x16 on 2np panels).", z.k.name))
	} else {
		doc(z.name, z.k, z.m, 16)
	}
}

// loadMasks broadcasts the format's decode masks.
func (z *zKernel) loadMasks() {
	switch z.k.lines {
	case 4:
		z.mask = bcastZ(0x0f0f0f0f)
	case 3:
		z.mask, z.mask3 = bcastZ(0x07070707), bcastZ(0x03030303)
	case 6:
		z.mask, z.mask3, z.mask4 = bcastZ(0x3f3f3f3f), bcastZ(0x03030303), bcastZ(0x0f0f0f0f)
	case 2:
		// mask3: the scale word's f16 without its offset code
		z.mask, z.mask3 = bcastZ(0x03030303), bcastZ(0xfff0fff0)
	case 5:
		// mask: Q4's nibbles; mask3: bit 4 of each byte, the fifth bit
		z.mask, z.mask3 = bcastZ(0x0f0f0f0f), bcastZ(0x10101010)
	}
}

// secondRecord emits, for a dual kernel, the second stream's record
// pointer: wpB = wp + np·(panel bytes), panel bytes = ng·stride() (np, ng:
// the arguments, not the counters). It returns nil otherwise.
func (z *zKernel) secondRecord() Register {
	if !z.dual {
		return nil
	}
	wpB := Load(Param("np"), GP64())
	pb := Load(Param("ng"), GP64())
	IMUL3Q(U32(z.k.stride()), pb, pb)
	IMULQ(pb, wpB)
	ADDQ(z.wp, wpB)
	return wpB
}

// newStreams sets up the streams (the second one's record at wpB) with
// zeroed f32 accumulators. Where registers allow (the decode's M rows, the
// first 9 or so), a K kernel keeps the super-block's widened d and dm (dK,
// dmK) and the code masks 0x3f (m63) and 0x3c (m3c) in registers;
// otherwise it widens d and dm per group and masks by shifts.
func (z *zKernel) newStreams(wpB Register) {
	var vpB Register
	var dK, dmK VecVirtual
	if z.k.kq {
		if z.dual {
			vpB = GP64()
		}
		nmask := map[int]int{3: 2, 4: 1, 5: 2, 6: 3}[z.k.lines]
		extra := 32 - 2*z.m - nmask - 7
		if extra >= 2 {
			dK, dmK = ZMM(), ZMM()
		}
		if extra >= 4 {
			z.m3c = bcastZ(0x3c3c3c3c)
			if z.k.lines == 6 {
				z.m63 = z.mask // 0x3f per byte
			} else {
				z.m63 = bcastZ(0x3f3f3f3f)
			}
		}
	}
	z.streams = []stream{{wp: z.wp, vp: z.c.vp, f: z.zeroF(), dK: dK, dmK: dmK}}
	if z.dual {
		b := stream{wp: wpB, vp: vpB, f: z.zeroF()}
		if dK != nil {
			b.dK, b.dmK = ZMM(), ZMM()
		}
		z.streams = append(z.streams, b)
	}
}

// zeroF returns m zeroed f32 accumulators.
func (z *zKernel) zeroF() []VecVirtual {
	f := make([]VecVirtual, z.m)
	for r := range f {
		f[r] = ZMM()
		VPXORD(f[r], f[r], f[r])
	}
	return f
}

// superBlock emits a K super-block's start: q = 0, each stream's value
// lines after the header and, where kept, its widened d and dm; then the
// pair loop's label.
func (z *zKernel) superBlock() {
	XORL(z.c.q.As32(), z.c.q.As32())
	for _, s := range z.streams {
		LEAQ(Mem{Base: s.wp, Disp: kHeader}, s.vp)
		if s.dK != nil {
			VCVTPH2PS(Mem{Base: s.wp, Disp: kDOff}, s.dK)
			VCVTPH2PS(Mem{Base: s.wp, Disp: kDMOff}, s.dmK)
		}
	}
	Label(z.name + "_pair")
}

// group emits one group (e: which of a K pair) of one stream into its
// accumulators s.f; the group's activations are shared by the streams.
func (z *zKernel) group(s stream, e int) {
	l := lines{base: s.wp}
	if z.k.kq {
		l = lines{base: s.vp, disp: e * z.k.gb}
	}
	z.prefetch(s, e, l)
	for r := range z.acc {
		if z.k.hasMin || z.k.kq {
			VPXORD(z.acc[r], z.acc[r], z.acc[r])
		} else {
			VPBROADCASTD(Mem{Base: z.c.ap, Disp: 4 * r}, z.acc[r])
		}
	}
	z.decode(l)
	d, mn := z.scales(s, e)
	z.flush(s, d, mn)
	if !z.k.kq {
		ADDQ(U32(z.k.gb), s.wp)
	}
}

// lines addresses a group's 64-byte value lines: line c at base + disp + 64c.
type lines struct {
	base Register
	disp int
}

// at is line c.
func (l lines) at(c int) Mem { return Mem{Base: l.base, Disp: l.disp + 64*c} }

// prefetch emits the software prefetch of the record prefetchDist bytes
// ahead: one stream per thread does not keep enough lines in flight for
// DRAM otherwise. A K super-block is prefetched as a stream of 8 records
// of stride() = 32 + gb bytes each (the header's share with the group's
// lines), group j's at wp + j·stride() = vp + 4q − 256 + e·stride(): each
// line about prefetchDist ahead of its use. (A header line per pair beside
// each group's own lines left the last group's lines only 448 bytes
// ahead: decode ran ~10% slower.)
func (z *zKernel) prefetch(s stream, e int, l lines) {
	k := z.k
	if k.kq {
		for off := 0; off < k.stride(); off += 64 {
			PREFETCHT0(Mem{Base: s.vp, Index: z.c.q, Scale: 4, Disp: prefetchDist - kHeader + e*k.stride() + off})
		}
		return
	}
	for off := 0; off < k.gb; off += 64 {
		PREFETCHT0(Mem{Base: l.base, Disp: l.disp + prefetchDist + off})
	}
}

// dots emits the m rows' VPDPBUSD of the weights w against k-quad quad.
func (z *zKernel) dots(w VecVirtual, quad int) {
	for r := 0; r < z.m; r++ {
		VPDPBUSD_BCST(z.c.x.At(r, 4*quad), w, z.acc[r])
	}
}

// decode emits the group's eight k-quads: each decoded to u8 weights and
// dotted with every row.
func (z *zKernel) decode(l lines) {
	switch z.k.lines {
	case 8:
		for i := 0; i < 8; i++ {
			w := ZMM()
			VMOVDQU32(l.at(i), w)
			z.dots(w, i)
		}
	case 3:
		z.decodeQ3(l)
	case 2:
		z.decodeQ2(l)
	case 5:
		z.decodeQ5(l)
	case 6:
		z.decodeQ6(l)
	default:
		z.decodeQ4(l)
	}
}

// decodeQ4 emits Q4's quads 2c and 2c+1: the low and high nibbles of line c.
func (z *zKernel) decodeQ4(l lines) {
	for c := 0; c < 4; c++ {
		lo, hi := ZMM(), ZMM()
		VMOVDQU32(l.at(c), lo)
		VPSRLW(U8(4), lo, hi)
		VPANDD(z.mask, lo, lo)
		VPANDD(z.mask, hi, hi)
		z.dots(lo, 2*c)
		z.dots(hi, 2*c+1)
	}
}

// decodeQ3 emits Q3 (quant/q3.go): quads 2c, 2c+1 are bits 0–2 and 3–5
// of line c; quad 6+c the low bits 6–7 of line c (c < 2) and the high bit
// 6+c of line 2, merged by a bit select under mask3.
func (z *zKernel) decodeQ3(l lines) {
	l2 := ZMM()
	VMOVDQU32(l.at(2), l2)
	for c := 0; c < 3; c++ {
		v := l2
		if c < 2 {
			v = ZMM()
			VMOVDQU32(l.at(c), v)
		}
		w := ZMM()
		VPANDD(z.mask, v, w)
		z.dots(w, 2*c)
		w = ZMM()
		VPSRLW(U8(3), v, w)
		VPANDD(z.mask, w, w)
		z.dots(w, 2*c+1)
		if c < 2 {
			lo, hi := ZMM(), ZMM()
			VPSRLW(U8(6), v, lo)
			VPSRLW(U8(4+c), l2, hi)
			VPTERNLOGD(U8(0xe4), z.mask3, hi, lo) // lo = lo&mask3 | hi&^mask3
			VPANDD(z.mask, lo, lo)
			z.dots(lo, 6+c)
		}
	}
}

// decodeQ2 emits Q2 (quant/q2.go): quad 4c+h is bits 2h, 2h+1 of line c.
func (z *zKernel) decodeQ2(l lines) {
	for c := 0; c < 2; c++ {
		v := ZMM()
		VMOVDQU32(l.at(c), v)
		for h := 0; h < 4; h++ {
			w := ZMM()
			if h == 0 {
				VPANDD(z.mask, v, w)
			} else {
				VPSRLW(U8(2*h), v, w)
				VPANDD(z.mask, w, w)
			}
			z.dots(w, 4*c+h)
		}
	}
}

// decodeQ5 emits Q5 (quant/q5.go): quads 2c and 2c+1 are Q4's nibbles of
// line c; bit h of each byte of line 4 is quad h's fifth bit, moved to bit
// 4 by one word shift (left 4−h or right h−4: no bit crosses into bit 4 of
// another byte), kept by mask3 and merged by one VPTERNLOGD with the
// nibble.
func (z *zKernel) decodeQ5(l lines) {
	hb := ZMM()
	VMOVDQU32(l.at(4), hb)
	fifth := func(h int) VecVirtual {
		t := ZMM()
		switch {
		case h < 4:
			VPSLLW(U8(4-h), hb, t)
			VPANDD(z.mask3, t, t)
		case h == 4:
			VPANDD(z.mask3, hb, t)
		default:
			VPSRLW(U8(h-4), hb, t)
			VPANDD(z.mask3, t, t)
		}
		return t
	}
	for c := 0; c < 4; c++ {
		v := ZMM()
		VMOVDQU32(l.at(c), v)
		w := fifth(2 * c)
		VPTERNLOGD(U8(0xf8), z.mask, v, w) // w = w | v&mask
		z.dots(w, 2*c)
		VPSRLW(U8(4), v, v)
		w = fifth(2*c + 1)
		VPTERNLOGD(U8(0xf8), z.mask, v, w)
		z.dots(w, 2*c+1)
	}
}

// decodeQ6 emits Q6 (quant/q6.go): quad c < 6 is bits 0–5 of line c; quad
// 6+h gathers bits 6–7 of lines 3h, 3h+1, 3h+2 as its bits 0–1, 2–3, 4–5:
// three shifts, two bit selects (under mask3, then mask4) and the 6-bit
// mask.
func (z *zKernel) decodeQ6(l lines) {
	for c := 0; c < 6; c++ {
		w := ZMM()
		VPANDD(l.at(c), z.mask, w)
		z.dots(w, c)
	}
	for h := 0; h < 2; h++ {
		lo, hi := ZMM(), ZMM()
		VPSRLW(U8(6), l.at(3*h), lo)
		VPSRLW(U8(4), l.at(3*h+1), hi)
		VPTERNLOGD(U8(0xe4), z.mask3, hi, lo) // lo = lo&mask3 | hi&^mask3
		hi = ZMM()
		VPSRLW(U8(2), l.at(3*h+2), hi)
		VPTERNLOGD(U8(0xe4), z.mask4, hi, lo) // lo = lo&mask4 | hi&^mask4
		VPANDD(z.mask, lo, lo)
		z.dots(lo, 6+h)
	}
}

// scales emits the group's 16 row scales d and, for a format with a min,
// the mins mn the flush applies to aux.
func (z *zKernel) scales(s stream, e int) (d, mn VecVirtual) {
	k := z.k
	d = ZMM()
	switch {
	case k.kq:
		mn = z.kScales(s, e, d)
	case k.q2:
		// d = f16(h &^ 15); mn = d·(c − 1) with c = h & 15 (the kernel
		// subtracts mn·aux, aux = xs·Σxq/4)
		dy := YMM()
		VPANDD(Mem{Base: s.wp, Disp: k.scaleOff}, z.mask3.AsY(), dy)
		VCVTPH2PS(dy, d)
		mn = ZMM()
		VPMOVZXWD(Mem{Base: s.wp, Disp: k.scaleOff}, mn)
		VPANDND(mn, z.mask3, mn) // mn = ^mask3 & h: the code c
		VCVTDQ2PS(mn, mn)
		VFMSUB213PS(d, d, mn) // mn = c·d − d
	default:
		VCVTPH2PS(Mem{Base: s.wp, Disp: k.scaleOff}, d)
	}
	if k.hasMin && !k.q2 {
		mn = ZMM()
		VCVTPH2PS(Mem{Base: s.wp, Disp: k.scaleOff + 32}, mn)
	}
	return d, mn
}

// kScales emits a K group's d = d·sc and returns mn = dm·mc for its 16
// rows: sc is bits 0–5 of its scale bytes, mc their bits 6–7 below the min
// nibble (the low one for even groups), moved to bits 2–5 by shifts.
func (z *zKernel) kScales(s stream, e int, d VecVirtual) VecVirtual {
	q := z.c.q
	raw := ZMM()
	VPMOVZXBD(Mem{Base: s.wp, Index: q, Scale: 2, Disp: 16 * e}, raw)
	if z.m63 != nil {
		VPANDD(z.m63, raw, d)
	} else {
		VPSLLD(U8(26), raw, d)
		VPSRLD(U8(26), d, d)
	}
	VCVTDQ2PS(d, d)
	t := ZMM()
	if s.dK != nil {
		VMULPS(s.dK, d, d)
	} else {
		VCVTPH2PS(Mem{Base: s.wp, Disp: kDOff}, t)
		VMULPS(t, d, d)
	}
	VPSRLD(U8(6), raw, raw)
	VPMOVZXBD(Mem{Base: s.wp, Index: q, Scale: 1, Disp: kMinOff}, t)
	z.minNibble(t, raw, e == 0)
	VCVTDQ2PS(raw, raw)
	mn := ZMM()
	if s.dmK != nil {
		VMULPS(s.dmK, raw, mn)
	} else {
		VCVTPH2PS(Mem{Base: s.wp, Disp: kDMOff}, mn)
		VMULPS(mn, raw, mn)
	}
	return mn
}

// minNibble emits raw |= the min nibble of t (the low one for an even
// group, else the high one) at bits 2–5, under m3c where it is kept.
func (z *zKernel) minNibble(t, raw VecVirtual, even bool) {
	switch {
	case z.m3c != nil && even:
		VPSLLD(U8(2), t, t)
		VPTERNLOGD(U8(0xf8), z.m3c, t, raw) // raw = raw | t&m3c
	case z.m3c != nil:
		VPSRLD(U8(2), t, t)
		VPTERNLOGD(U8(0xf8), z.m3c, t, raw)
	case even:
		VPSLLD(U8(28), t, t)
		VPSRLD(U8(26), t, t)
		VPORD(t, raw, raw)
	default:
		VPSRLD(U8(4), t, t)
		VPSLLD(U8(2), t, t)
		VPORD(t, raw, raw)
	}
}

// flush emits the group's flush into s.f: three ops per row and group
// beside its 8 VPDPBUSD. Measured without the VMULPS (wrong results, a
// timing probe only; Zen 4 VM, 1 thread, 3 alternating rounds): Q4
// 4096×2304 from L3, 8 rows 335–352 → 374–384 GFLOP/s, m = 512 317–348 →
// 371–380. Dropping it for good needs activation scales per 256 (ggml's
// Q8_K), not per 32: an accuracy change, not a scheduling one, and one the
// golden tiny model's budgets reject (q4 prompt logits 0.2305 → 0.2649
// against 0.253, q4k 0.1948 → 0.2386 against 0.215; model's TestAccuracy,
// coarseGridCheck).
func (z *zKernel) flush(s stream, d, mn VecVirtual) {
	k, acc, ap := z.k, z.acc, z.c.ap
	for r := 0; r < z.m; r++ {
		VCVTDQ2PS(acc[r], acc[r])
		VMULPS_BCST(Mem{Base: z.c.xsp, Disp: 4 * r}, acc[r], acc[r])
		VFMADD231PS(acc[r], d, s.f[r])
		if k.kq || k.q2 {
			VFNMADD231PS_BCST(Mem{Base: ap, Disp: 4 * r}, mn, s.f[r])
		} else if k.hasMin {
			VFMADD231PS_BCST(Mem{Base: ap, Disp: 4 * r}, mn, s.f[r])
		}
	}
}

// store emits the panel's stores (the second stream's at y + 16·np) and
// the panel loop's end.
func (z *zKernel) store() {
	storeRows(z.name, "", z.yp, z.streams[0].f)
	if z.dual {
		yb := Load(Param("np"), GP64())
		SHLQ(U8(6), yb)
		ADDQ(z.yp, yb)
		storeRows(z.name, "B", yb, z.streams[1].f)
	}
	ADDQ(U8(64), z.yp)
	DECQ(z.np)
	JNZ(LabelRef(z.name + "_panel"))
	VZEROUPPER()
	RET()
}

// bcastZ returns a zmm holding the dword v in every lane.
func bcastZ(v uint32) VecVirtual {
	t := GP32()
	MOVL(U32(v), t)
	z := ZMM()
	VPBROADCASTD(t, z)
	return z
}
