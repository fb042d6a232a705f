package main

import (
	"fmt"

	"github.com/ktune/ktune/_asm/internal/a64"
)

// The SVE kernels of the sve and sve_dotprod variants, vector-length
// agnostic: the 16 columns of a panel are covered by up to four vectors
// whose predicates (WHILELO against 16 lanes, or 64 bytes) switch off what
// lies beyond them, so the same code runs at 128…2048 bits (at 512 bits
// and more one vector covers a panel; the others are all-false).
//
// The dot-product kernels share one skeleton (sveDotKernel): p0–p3 the
// byte chunks of a 64-byte line, p4–p7 the same chunks as 32-bit lanes;
// z16–z19 the panel's f32 sums, z20–z23 a group's int32 dot products; R0
// w, R1 panels left, R2 groups, R7 xq, R10 Σxq, R13 the activation
// scales, R12 groups left, R6 y, R9 acc.

// fourP writes an SVE instruction for each chunk: args are ints, [4]int
// (one per chunk) or the string "P" (the chunk's 32-bit predicate p4+c),
// "B" (its byte predicate p0+c) or "A" (its address off x0), "Y" (off x6).
func fourP(f *a64.File, format string, args ...any) {
	for c := range 4 {
		a := make([]any, len(args))
		for i, x := range args {
			switch v := x.(type) {
			case [4]int:
				a[i] = v[c]
			case string:
				switch v {
				case "P":
					a[i] = fmt.Sprintf("p%d", 4+c)
				case "B":
					a[i] = fmt.Sprintf("p%d", c)
				case "A":
					a[i] = a64.VL(0, c)
				case "Y":
					a[i] = a64.VL(6, c)
				default:
					a[i] = v
				}
			default:
				a[i] = x
			}
		}
		f.Word(format, a...)
	}
}

// svePreds sets p0–p3 (bytes of a 64-byte line) and p4–p7 (its 16 32-bit
// lanes).
func svePreds(f *a64.File) {
	f.Note("p0..p3: bytes [i·VL/8, (i+1)·VL/8) ∩ [0, 64) of a 64-byte line;")
	f.Note("p4..p7: the same chunks as f32/int32 lanes ∩ [0, 16)")
	for _, p := range []struct {
		n, first int
		t        string
	}{{64, 0, "b"}, {16, 4, "s"}} {
		f.Op("MOVD $%d, R8", p.n)
		f.Op("MOVD $0, R11")
		f.WhileLo(p.t, p.first, 4, 11, 8)
	}
}

// sveLoadLine loads the next line's four chunks into dst (not advancing x0).
func sveLoadLine(f *a64.File, dst [4]int) { fourP(f, "ld1b {z%d.b}, %s/z, %s", dst, "B", "A") }

// sveSdot adds the k-quads in src times the broadcast activations z<act>
// into z20–z23.
func sveSdot(f *a64.File, src [4]int, act int) {
	fourP(f, "sdot z%d.s, z%d.b, z%d.b", a64.Regs4(20), src, act)
}

// sveScale: t += d·xs·float(dot), d the group's 16 f16 scales.
func sveScale(f *a64.File) {
	f.Note("t += d·float(dot)")
	fourP(f, "ld1h {z%d.s}, %s/z, %s", a64.Regs4(8), "P", "A")
	fourP(f, "fcvt z%d.s, %s/m, z%d.h", a64.Regs4(8), "P", a64.Regs4(8))
	fourP(f, "scvtf z%d.s, %s/m, z%d.s", a64.Regs4(20), "P", a64.Regs4(20))
	f.WordC("the group's activation scale", "ld1rw {z2.s}, p4/z, [x13]")
	f.Op("ADD $4, R13, R13")
	fourP(f, "fmul z%d.s, z%d.s, z2.s", a64.Regs4(20), a64.Regs4(20))
	fourP(f, "fmla z%d.s, %s/m, z%d.s, z%d.s", a64.Regs4(16), "P", a64.Regs4(20), a64.Regs4(8))
	f.Op("ADD $32, R0, R0")
}

// sveFormat is a format of the SVE skeleton.
type sveFormat struct {
	name, label string
	consts      func(f *a64.File)
	group       func(f *a64.File) // from the group's start to the scaling
	scale       func(f *a64.File) // nil: sveScale
	after       func(f *a64.File)
}

// sveDotKernel writes dot<name>SVE_16.
func sveDotKernel(f *a64.File, d sveFormat) {
	p, g, z, s := d.label+"p", d.label+"g", d.label+"z", d.label+"s"
	f.Func("dot"+d.name+"SVE_16", "(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)", "$0-64")
	dotArgs(f)
	svePreds(f)
	if d.consts != nil {
		d.consts(f)
	}
	f.Label(p)
	f.ZeroZ(16, 4)
	f.Op("MOVD R3, R7")
	f.Op("MOVD R4, R10")
	f.Op("MOVD R5, R13")
	f.Op("MOVD R2, R12")
	f.Label(g)
	d.group(f)
	if d.scale != nil {
		d.scale(f)
	} else {
		sveScale(f)
	}
	if d.after != nil {
		d.after(f)
	}
	f.Op("SUBS $1, R12, R12")
	f.Op("BNE %s", g)
	sveStore(f, p, z, s)
}

// sveStore is dotStore for SVE: y (+)= z16–z19 under p4–p7.
func sveStore(f *a64.File, p, z, s string) {
	f.Blank()
	f.Note("y (+)= t")
	f.Op("CBZ R9, %s", z)
	fourP(f, "ld1w {z%d.s}, %s/z, %s", a64.Regs4(24), "P", "Y")
	f.Op("B %s", s)
	f.Label(z)
	f.ZeroZ(24, 4)
	f.Label(s)
	fourP(f, "fadd z%d.s, %s/m, z%d.s, z%d.s", a64.Regs4(24), "P", a64.Regs4(24), a64.Regs4(16))
	fourP(f, "st1w {z%d.s}, %s, %s", a64.Regs4(24), "P", "Y")
	f.Op("ADD $64, R6, R6")
	f.Op("SUBS $1, R1, R1")
	f.Op("BNE %s", p)
	f.Op("RET")
}

// sveNibbles decodes the Q4 lines of a group: line l holds k-quads 2l (low
// nibbles) and 2l+1 (high), minus 8 unless min.
func sveNibbles(f *a64.File, min bool) {
	f.ZeroZ(20, 4)
	for l := range 4 {
		f.Note(fmt.Sprintf("line %d: k = %d..%d (low nibbles), %d..%d (high)", l, 8*l, 8*l+3, 8*l+4, 8*l+7))
		sveLoadLine(f, a64.Regs4(4))
		f.Word("ld1rw {z0.s}, p4/z, [x7, #%d]", 8*l)
		f.Word("ld1rw {z1.s}, p4/z, [x7, #%d]", 8*l+4)
		fourP(f, "and z%d.d, z%d.d, z30.d", a64.Regs4(8), a64.Regs4(4))
		fourP(f, "lsr z%d.b, z%d.b, #4", a64.Regs4(12), a64.Regs4(4))
		if !min {
			fourP(f, "sub z%d.b, z%d.b, #8", a64.Regs4(8), a64.Regs4(8))
			fourP(f, "sub z%d.b, z%d.b, #8", a64.Regs4(12), a64.Regs4(12))
		}
		sveSdot(f, a64.Regs4(8), 0)
		sveSdot(f, a64.Regs4(12), 1)
		f.Op("ADD $64, R0, R0")
	}
	f.Op("ADD $32, R7, R7")
}

var sveFormats = []sveFormat{
	{name: "Q8", label: "q8", group: func(f *a64.File) {
		f.ZeroZ(20, 4)
		for l := range 8 {
			f.Note(fmt.Sprintf("line %d: k = %d..%d of 16 rows", l, 4*l, 4*l+3))
			sveLoadLine(f, a64.Regs4(4))
			f.Word("ld1rw {z0.s}, p4/z, [x7, #%d]", 4*l)
			fourP(f, "eor z%d.b, z%d.b, #0x80", a64.Regs4(4), a64.Regs4(4))
			sveSdot(f, a64.Regs4(4), 0)
			f.Op("ADD $64, R0, R0")
		}
		f.Op("ADD $32, R7, R7")
	}},
	{name: "Q4", label: "q4", consts: dupB(30, 15), group: func(f *a64.File) { sveNibbles(f, false) }},
	{name: "Q4Min", label: "qm", consts: dupB(30, 15), group: func(f *a64.File) { sveNibbles(f, true) }, after: sveMin},
	{name: "Q3", label: "q3", consts: dupB(31, 56), group: func(f *a64.File) { sveQ3(f, true) }},
	{name: "Q6", label: "q6", group: func(f *a64.File) { sveQ6(f, true) }},
	{name: "Q2", label: "q2", consts: consts(dupB(31, 12), func(f *a64.File) {
		f.Word("dup z29.s, #15")
		f.Word("fmov z30.s, #0.25")
	}), group: sveQ2, scale: sveQ2Scale},
	{name: "Q5", label: "q5", consts: consts(dupB(30, 15), dupB(31, 16)), group: func(f *a64.File) { sveQ5(f, true) }},
}

// sveActs broadcasts the group's eight k-quads of activations into z0–z7
// and zeroes both sets of sums (z20–z27): the Q3/Q6 kernels go chunk by
// chunk, each chunk needing every k-quad.
func sveActs(f *a64.File) {
	f.Note("z0..z7: the group's k-quads of activations, broadcast")
	for q := range 8 {
		f.Word("ld1rw {z%d.s}, p4/z, [x7, #%d]", q, 4*q)
	}
	f.Op("ADD $32, R7, R7")
	f.ZeroZ(20, 4)
	f.ZeroZ(24, 4)
}

// sveLoadSum loads the group's Σxq into z28, times 2^shift.
func sveLoadSum(f *a64.File, shift int) {
	f.WordC("Σxq of the group", "ld1rw {z28.s}, p4/z, [x10]")
	f.Op("ADD $4, R10, R10")
	f.WordC(fmt.Sprintf("%d·Σxq", 1<<shift), "lsl z28.s, z28.s, #%d", shift)
}

// sveQ3: chunk by chunk, the three lines of a group (bases x0, x8, x11):
// k = 0..23 in bits 0–2 and 3–5, the two bits of k = 24..31 in bits 6–7
// of lines 0 and 1 and the third in bits 6 and 7 of line 2. zero: the
// sums are Σ(u−4)·xq (Q3), else Σu·xq (Q3K).
func sveQ3(f *a64.File, zero bool) {
	sveActs(f)
	f.Note("line bases: R0 = line 0, R8 = line 1, R11 = line 2")
	f.Op("ADD $64, R0, R8")
	f.Op("ADD $128, R0, R11")
	for c := range 4 {
		sveQ3Chunk(f, c)
	}
	if zero {
		sveLoadSum(f, 2)
		f.Note("dot = Σ(u−4)·xq = z20..z23 + (z24..z27 >> 3) − 4·Σxq")
	} else {
		f.Note("dot = Σu·xq = z20..z23 + (z24..z27 >> 3)")
	}
	for c := range 4 {
		f.Word("asr z%d.s, z%d.s, #3", 24+c, 24+c)
		f.Word("add z%d.s, z%d.s, z%d.s", 20+c, 20+c, 24+c)
	}
	if zero {
		fourP(f, "sub z%d.s, z%d.s, z28.s", a64.Regs4(20), a64.Regs4(20))
	}
	f.Op("ADD $192, R0, R0")
}

// sveQ3Chunk decodes chunk c (under p<c>) of the group's three lines
// (bases R0, R8, R11) and adds its dot products into z20+c (the low
// bits and the split k-quads) and z24+c (the 8·u middle bits).
func sveQ3Chunk(f *a64.File, c int) {
	f.Note(fmt.Sprintf("chunk %d (p%d): L0, L1, L2 in z8, z9, z10", c, c))
	for i, base := range []int{0, 8, 11} {
		f.Word("ld1b {z%d.b}, p%d/z, %s", 8+i, c, a64.VL(base, c))
	}
	f.Note("k = 24..27: (L0 >> 6) | ((L2 >> 4) & 4); 28..31: (L1 >> 6) | ((L2 >> 5) & 4)")
	f.Word("lsr z11.b, z8.b, #6")
	f.Word("lsr z12.b, z10.b, #4")
	f.Word("and z12.b, z12.b, #0x4")
	f.Word("orr z11.d, z11.d, z12.d")
	f.Word("lsr z13.b, z9.b, #6")
	f.Word("lsr z14.b, z10.b, #5")
	f.Word("and z14.b, z14.b, #0x4")
	f.Word("orr z13.d, z13.d, z14.d")
	f.Word("sdot z%d.s, z11.b, z6.b", 20+c)
	f.Word("sdot z%d.s, z13.b, z7.b", 20+c)
	f.Note("k = 4..7, 12..15, 20..23: L & 0x38 = 8·u, summed apart")
	for i := range 3 {
		f.Word("and z%d.d, z%d.d, z31.d", 11+i, 8+i)
	}
	for i := range 3 {
		f.Word("sdot z%d.s, z%d.b, z%d.b", 24+c, 11+i, 2*i+1)
	}
	f.Note("k = 0..3, 8..11, 16..19: L & 7")
	for i := range 3 {
		f.Word("and z%d.b, z%d.b, #0x7", 8+i, 8+i)
	}
	for i := range 3 {
		f.Word("sdot z%d.s, z%d.b, z%d.b", 20+c, 8+i, 2*i)
	}
}

// sveQ6: chunk by chunk, the six lines of a group (bases x0, x8, x11,
// x14, x15, x19): k = 0..23 in bits 0–5, the six bits of k = 24..27 (28..31)
// two at a time in bits 6–7 of lines 0–2 (3–5). zero as sveQ3's (32).
func sveQ6(f *a64.File, zero bool) {
	sveActs(f)
	bases := []int{0, 8, 11, 14, 15, 19}
	f.Note("line bases: R0 = line 0, R8 = line 1, R11 = line 2, R14 = line 3, R15 = line 4, R19 = line 5")
	for i := 1; i < 6; i++ {
		f.Op("ADD $%d, R0, R%d", 64*i, bases[i])
	}
	for c := range 4 {
		f.Note(fmt.Sprintf("chunk %d (p%d): L0..L5 in z8..z13", c, c))
		for i, base := range bases {
			f.Word("ld1b {z%d.b}, p%d/z, %s", 8+i, c, a64.VL(base, c))
		}
		f.Note("k = 24..27: (L0 >> 6) | ((L1 >> 4) & 12) | ((L2 >> 2) & 48); 28..31 the same of L3, L4, L5")
		f.Word("lsr z14.b, z8.b, #6")
		f.Word("lsr z15.b, z9.b, #4")
		f.Word("and z15.b, z15.b, #0xc")
		f.Word("orr z14.d, z14.d, z15.d")
		f.Word("lsr z29.b, z10.b, #2")
		f.Word("and z29.b, z29.b, #0x30")
		f.Word("orr z14.d, z14.d, z29.d")
		f.Word("lsr z30.b, z11.b, #6")
		f.Word("lsr z31.b, z12.b, #4")
		f.Word("and z31.b, z31.b, #0xc")
		f.Word("orr z30.d, z30.d, z31.d")
		f.Word("lsr z15.b, z13.b, #2")
		f.Word("and z15.b, z15.b, #0x30")
		f.Word("orr z30.d, z30.d, z15.d")
		f.Word("sdot z%d.s, z14.b, z6.b", 24+c)
		f.Word("sdot z%d.s, z30.b, z7.b", 20+c)
		f.Note("k = 0..23: L & 63")
		for i := range 6 {
			f.Word("and z%d.b, z%d.b, #0x3f", 8+i, 8+i)
		}
		for i := range 6 {
			f.Word("sdot z%d.s, z%d.b, z%d.b", 20+4*(i%2)+c, 8+i, i)
		}
	}
	if zero {
		sveLoadSum(f, 5)
		f.Note("dot = Σ(u−32)·xq = z20..z23 + z24..z27 − 32·Σxq")
	} else {
		f.Note("dot = Σu·xq = z20..z23 + z24..z27")
	}
	fourP(f, "add z%d.s, z%d.s, z%d.s", a64.Regs4(20), a64.Regs4(20), a64.Regs4(24))
	if zero {
		fourP(f, "sub z%d.s, z%d.s, z28.s", a64.Regs4(20), a64.Regs4(20))
	}
	f.Op("ADD $384, R0, R0")
}

// sveQ2: two lines of eight k-quads (k-quad 4l+h in bits 2h, 2h+1 of line
// l); the 4·u quads are summed apart into z24–z27, which start at Σxq.
func sveQ2(f *a64.File) {
	f.WordC("Σxq of the group", "ld1rw {z28.s}, p4/z, [x10]")
	f.Op("ADD $4, R10, R10")
	f.ZeroZ(20, 4)
	for _, v := range a64.Regs4(24) {
		f.WordC("the 4u sums start at Σxq", "mov z%d.d, z28.d", v)
	}
	for l := range 2 {
		f.Note(fmt.Sprintf("line %d: k-quad %d+h (k = %d+4h..%d+4h+3) in bits 2h, 2h+1", l, 4*l, 16*l, 16*l))
		sveLoadLine(f, a64.Regs4(4))
		for i := range 4 {
			f.Word("ld1rw {z%d.s}, p4/z, [x7, #%d]", i, 16*l+4*i)
		}
		for c := range 4 {
			q := 4 * l
			f.Note(fmt.Sprintf("chunk %d: 4u of k-quads %d, %d (L & 12, (L >> 2) & 12); u of %d, %d (L >> 6, L & 3)", c, q+1, q+2, q+3, q))
			v := 4 + c
			f.Word("and z8.d, z%d.d, z31.d", v)
			f.Word("lsr z9.b, z%d.b, #2", v)
			f.Word("and z9.b, z9.b, #0xc")
			f.Word("lsr z10.b, z%d.b, #6", v)
			f.Word("and z%d.b, z%d.b, #0x3", v, v)
			f.Word("sdot z%d.s, z8.b, z1.b", 24+c)
			f.Word("sdot z%d.s, z9.b, z2.b", 24+c)
			f.Word("sdot z%d.s, z10.b, z3.b", 20+c)
			f.Word("sdot z%d.s, z%d.b, z0.b", 20+c, v)
		}
		f.Op("ADD $64, R0, R0")
	}
	f.Op("ADD $32, R7, R7")
	f.Note("4·dot = 4·Σu·xq − (c−1)·Σxq = 4·z20..z23 + z24..z27 (4·Σu·xq + Σxq) − c·Σxq")
	for c := range 4 {
		f.Word("lsl z%d.s, z%d.s, #2", 20+c, 20+c)
		f.Word("add z%d.s, z%d.s, z%d.s", 20+c, 20+c, 24+c)
	}
}

// sveQ2Scale: the scale words h (c = h & 15, d = f16(h &^ 15)); xs/4
// turns 4·dot into dot.
func sveQ2Scale(f *a64.File) {
	f.Note("the scale words h: c = h & 15, d = f16(h &^ 15)")
	fourP(f, "ld1h {z%d.s}, %s/z, %s", a64.Regs4(8), "P", "A")
	fourP(f, "and z%d.d, z%d.d, z29.d", a64.Regs4(12), a64.Regs4(8))
	fourP(f, "and z%d.s, z%d.s, #0xfff0", a64.Regs4(8), a64.Regs4(8))
	fourP(f, "mls z%d.s, %s/m, z%d.s, z28.s", a64.Regs4(20), "P", a64.Regs4(12))
	fourP(f, "fcvt z%d.s, %s/m, z%d.h", a64.Regs4(8), "P", a64.Regs4(8))
	fourP(f, "scvtf z%d.s, %s/m, z%d.s", a64.Regs4(20), "P", a64.Regs4(20))
	f.WordC("the group's activation scale", "ld1rw {z2.s}, p4/z, [x13]")
	f.Op("ADD $4, R13, R13")
	f.WordC("xs/4: 4·dot to dot", "fmul z2.s, z2.s, z30.s")
	fourP(f, "fmul z%d.s, z%d.s, z2.s", a64.Regs4(20), a64.Regs4(20))
	fourP(f, "fmla z%d.s, %s/m, z%d.s, z%d.s", a64.Regs4(16), "P", a64.Regs4(20), a64.Regs4(8))
	f.Op("ADD $32, R0, R0")
}

// sveQ5: four lines of nibbles (k-quads 2l, 2l+1 of line l) and a fifth,
// at +256, whose bit h is bit 4 of u in k-quad h. zero as sveQ3's (16).
func sveQ5(f *a64.File, zero bool) {
	f.ZeroZ(20, 4)
	f.Note("line 4 (at +256): bit h of a byte = bit 4 of u in k-quad h")
	f.Op("ADD $256, R0, R14")
	for c := range 4 {
		f.Word("ld1b {z%d.b}, p%d/z, %s", 24+c, c, a64.VL(14, c))
	}
	for l := range 4 {
		f.Note(fmt.Sprintf("line %d: k-quad %d (low nibbles), %d (high), each with its fifth bits", l, 2*l, 2*l+1))
		sveLoadLine(f, a64.Regs4(4))
		f.Word("ld1rw {z0.s}, p4/z, [x7, #%d]", 8*l)
		f.Word("ld1rw {z1.s}, p4/z, [x7, #%d]", 8*l+4)
		fourP(f, "and z%d.d, z%d.d, z30.d", a64.Regs4(8), a64.Regs4(4))
		fourP(f, "lsr z%d.b, z%d.b, #4", a64.Regs4(12), a64.Regs4(4))
		sveQ5High(f, 2*l, a64.Regs4(8))
		sveQ5High(f, 2*l+1, a64.Regs4(12))
		sveSdot(f, a64.Regs4(8), 0)
		sveSdot(f, a64.Regs4(12), 1)
		f.Op("ADD $64, R0, R0")
	}
	f.Op("ADD $32, R7, R7")
	if zero {
		f.Note("dot = Σ(u−16)·xq = z20..z23 − 16·Σxq")
		sveLoadSum(f, 4)
		fourP(f, "sub z%d.s, z%d.s, z28.s", a64.Regs4(20), a64.Regs4(20))
	}
	f.OpC("past line 4", "ADD $64, R0, R0")
}

// sveQ5High ORs bit 4 of k-quad q's values (line 4, in z24–z27, shifted
// by 4−q and masked by z31) into dst: q5High's SVE form.
func sveQ5High(f *a64.File, q int, dst [4]int) {
	for c := range 4 {
		t := 2 + c%2
		switch sh := 4 - q; {
		case sh > 0:
			f.Word("lsl z%d.b, z%d.b, #%d", t, 24+c, sh)
			f.Word("and z%d.d, z%d.d, z31.d", t, t)
		case sh == 0:
			f.Word("and z%d.d, z%d.d, z31.d", t, 24+c)
		default:
			f.Word("lsr z%d.b, z%d.b, #%d", t, 24+c, -sh)
			f.Word("and z%d.d, z%d.d, z31.d", t, t)
		}
		f.Word("orr z%d.d, z%d.d, z%d.d", dst[c], dst[c], t)
	}
}

// dupB puts a byte constant in every lane of z<v>.
func dupB(v, c int) func(f *a64.File) {
	return func(f *a64.File) { f.Word("dup z%d.b, #%d", v, c) }
}

// sveMin: t += m·xs·float(Σxq), m the group's 16 f16 mins.
func sveMin(f *a64.File) {
	f.Note("t += m·float(Σxq)")
	fourP(f, "ld1h {z%d.s}, %s/z, %s", a64.Regs4(12), "P", "A")
	fourP(f, "fcvt z%d.s, %s/m, z%d.h", a64.Regs4(12), "P", a64.Regs4(12))
	f.Word("ld1rw {z1.s}, p4/z, [x10]")
	f.Word("scvtf z1.s, p4/m, z1.s")
	f.Word("fmul z1.s, z1.s, z2.s")
	fourP(f, "fmla z%d.s, %s/m, z%d.s, z1.s", a64.Regs4(16), "P", a64.Regs4(12))
	f.Op("ADD $32, R0, R0")
	f.Op("ADD $4, R10, R10")
}

// sveF32 writes gemmSVE_16: C [m][16] (+)= A [m][k]·B [k][16], one row at
// a time, B a packed f32 block (a 16-wide line per k, 4 chunks).
//
// Registers: R0 rows left, R1 k, R2 the row of A, R3 lda·4, R4 B, R5
// the row of C, R6 ldc·4, R7 acc; per row R10 the A cursor, R11 B's
// line, R12 k left. z0 the broadcast activation, z1–z4 a line of B,
// z16–z19 the row of C; p0–p3 its 16 columns, p4 all lanes.
func sveF32(f *a64.File) {
	f.Func("gemmSVE_16", "(m, k int, a *float32, lda int, b *byte, c *float32, ldc int, acc int)", "$0-64")
	f.Args("m+0(FP), R0", "k+8(FP), R1", "a+16(FP), R2", "lda+24(FP), R3", "b+32(FP), R4", "c+40(FP), R5", "ldc+48(FP), R6", "acc+56(FP), R7")
	f.Op("LSL $2, R3, R3")
	f.Op("LSL $2, R6, R6")
	f.Note("p0..p3: the lanes of columns [i·VL/32, (i+1)·VL/32) ∩ [0, 16)")
	f.Op("MOVD $16, R8")
	f.Op("MOVD $0, R9")
	f.WhileLo("s", 0, 4, 9, 8)
	f.Word("ptrue p4.s")
	f.Label("srow")
	f.Op("CBZ R7, szero")
	f.Ld1w(16, 0, 5, 4)
	f.Op("B sk")
	f.Label("szero")
	f.ZeroZ(16, 4)
	f.Label("sk")
	f.Op("MOVD R2, R10")
	f.Op("MOVD R4, R11")
	f.Op("MOVD R1, R12")
	f.Op("CBZ R12, sstore")
	f.Label("skloop")
	f.Word("ld1rw {z0.s}, p4/z, [x10]")
	f.Ld1w(1, 0, 11, 4)
	for c := range 4 {
		f.Word("fmla z%d.s, p%d/m, z%d.s, z0.s", 16+c, c, 1+c)
	}
	f.Op("ADD $4, R10, R10")
	f.Op("ADD $64, R11, R11")
	f.Op("SUBS $1, R12, R12")
	f.Op("BNE skloop")
	f.Label("sstore")
	f.St1w(16, 0, 5, 4)
	f.Op("ADD R3, R2, R2")
	f.Op("ADD R6, R5, R5")
	f.Op("SUBS $1, R0, R0")
	f.Op("BNE srow")
	f.Op("RET")
}

// sveKFormats: the K formats over their base formats' SVE decodes (no
// zero point: the min takes it).
var sveKFormats = []kFormat{
	{"Q3K", "k3", dupB(31, 56), func(f *a64.File) { sveQ3(f, false) }},
	{"Q4K", "k4", dupB(30, 15), func(f *a64.File) { sveNibbles(f, true) }},
	{"Q5K", "k5", consts(dupB(30, 15), dupB(31, 16)), func(f *a64.File) { sveQ5(f, false) }},
	{"Q6K", "k6", nil, func(f *a64.File) { sveQ6(f, false) }},
}

// sveKFold folds a decoded group into t, chunk by chunk: the rows' codes
// (an even group's high min bits are the low nibbles of their bytes, an
// odd group's the high ones), d and dm, loaded into 32-bit lanes.
func sveKFold(f *a64.File, odd bool) {
	f.Note("t += s·(xs·float(dot)) − m·(xs·float(Σxq)), s = d·sc, m = dm·mc")
	f.WordC("the group's activation scale", "ld1rw {z2.s}, p4/z, [x13]")
	f.Op("ADD $4, R13, R13")
	f.WordC("Σxq of the group", "ld1rw {z1.s}, p4/z, [x10]")
	f.Op("ADD $4, R10, R10")
	f.Word("scvtf z1.s, p4/m, z1.s")
	f.Word("fmul z1.s, z1.s, z2.s")
	for c := range 4 {
		p := 4 + c
		f.Note(fmt.Sprintf("rows of chunk %d", c))
		f.WordC("sc | low mc bits << 6", "ld1b {z8.s}, p%d/z, %s", p, a64.VL(20, c))
		f.WordC("high mc bits", "ld1b {z9.s}, p%d/z, %s", p, a64.VL(21, c))
		f.WordC("d", "ld1h {z10.s}, p%d/z, %s", p, a64.VL(24, c))
		f.WordC("dm", "ld1h {z11.s}, p%d/z, %s", p, a64.VL(25, c))
		f.Word("lsr z12.s, z8.s, #6")
		f.Word("and z8.s, z8.s, #0x3f")
		if odd {
			f.Word("lsr z9.s, z9.s, #2")
		} else {
			f.Word("lsl z9.s, z9.s, #2")
		}
		f.Word("and z9.s, z9.s, #0x3c")
		f.Word("orr z9.d, z9.d, z12.d")
		f.Word("ucvtf z8.s, p%d/m, z8.s", p)
		f.Word("ucvtf z9.s, p%d/m, z9.s", p)
		f.Word("fcvt z10.s, p%d/m, z10.h", p)
		f.Word("fcvt z11.s, p%d/m, z11.h", p)
		f.Word("fmul z8.s, z8.s, z10.s")
		f.Word("fmul z9.s, z9.s, z11.s")
		f.Word("scvtf z%d.s, p%d/m, z%d.s", 20+c, p, 20+c)
		f.Word("fmul z%d.s, z%d.s, z2.s", 20+c, 20+c)
		f.Word("fmla z%d.s, p%d/m, z%d.s, z8.s", 16+c, p, 20+c)
		f.Word("fmls z%d.s, p%d/m, z9.s, z1.s", 16+c, p)
	}
	f.Op("ADD $16, R20, R20")
	if odd {
		f.Op("ADD $16, R21, R21")
	}
}

// sveKKernel writes dot<name>SVE_16 of a K format.
func sveKKernel(f *a64.File, k kFormat) {
	p, b, g, z, s := k.label+"p", k.label+"b", k.label+"g", k.label+"z", k.label+"s"
	f.Func("dot"+k.name+"SVE_16", "(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)", "$0-64")
	dotArgs(f)
	svePreds(f)
	if k.consts != nil {
		k.consts(f)
	}
	f.Blank()
	f.OpC("super-blocks of 8 groups", "LSR $3, R2, R2")
	f.Label(p)
	f.ZeroZ(16, 4)
	f.Op("MOVD R3, R7")
	f.Op("MOVD R4, R10")
	f.Op("MOVD R5, R13")
	f.Op("MOVD R2, R23")
	kHeader(f, b)
	f.Label(g)
	for _, odd := range []bool{false, true} {
		f.Note(map[bool]string{false: "even group", true: "odd group"}[odd])
		k.decode(f)
		sveKFold(f, odd)
	}
	kLoops(f, g, b)
	sveStore(f, p, z, s)
}
