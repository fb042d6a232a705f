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

// zq are z(first)…z(first+3), one per chunk of a line.
func zq(first int) [4]int { return [4]int{first, first + 1, first + 2, first + 3} }

// chunk is the address of chunk c of a line at [xN].
func chunk(n, c int) string {
	if c == 0 {
		return fmt.Sprintf("[x%d]", n)
	}
	return fmt.Sprintf("[x%d, #%d, mul vl]", n, c)
}

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
					a[i] = chunk(0, c)
				case "Y":
					a[i] = chunk(6, c)
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
		t, inc   string
	}{{64, 0, "b", "incb"}, {16, 4, "s", "incw"}} {
		f.Op("MOVD $%d, R8", p.n)
		f.Op("MOVD $0, R11")
		for c := range 4 {
			if c > 0 {
				f.Word("%s x11", p.inc)
			}
			f.Word("whilelo p%d.%s, x11, x8", p.first+c, p.t)
		}
	}
}

// sveLoadLine loads the next line's four chunks into dst (not advancing x0).
func sveLoadLine(f *a64.File, dst [4]int) { fourP(f, "ld1b {z%d.b}, %s/z, %s", dst, "B", "A") }

// sveSdot adds the k-quads in src times the broadcast activations z<act>
// into z20–z23.
func sveSdot(f *a64.File, src [4]int, act int) {
	fourP(f, "sdot z%d.s, z%d.b, z%d.b", zq(20), src, act)
}

// sveScale: t += d·xs·float(dot), d the group's 16 f16 scales.
func sveScale(f *a64.File) {
	f.Note("t += d·float(dot)")
	fourP(f, "ld1h {z%d.s}, %s/z, %s", zq(8), "P", "A")
	fourP(f, "fcvt z%d.s, %s/m, z%d.h", zq(8), "P", zq(8))
	fourP(f, "scvtf z%d.s, %s/m, z%d.s", zq(20), "P", zq(20))
	f.WordC("the group's activation scale", "ld1rw {z2.s}, p4/z, [x13]")
	f.Op("ADD $4, R13, R13")
	fourP(f, "fmul z%d.s, z%d.s, z2.s", zq(20), zq(20))
	fourP(f, "fmla z%d.s, %s/m, z%d.s, z%d.s", zq(16), "P", zq(20), zq(8))
	f.Op("ADD $32, R0, R0")
}

// sveFormat is a format of the SVE skeleton.
type sveFormat struct {
	name, label string
	consts      func(f *a64.File)
	group       func(f *a64.File) // from the zeroed z20–z23 to the scaling
	scale       func(f *a64.File) // nil: sveScale
	after       func(f *a64.File)
}

// sveDotKernel writes dot<name>SVE_16.
func sveDotKernel(f *a64.File, d sveFormat) {
	p, g, z, s := d.label+"p", d.label+"g", d.label+"z", d.label+"s"
	f.Func("dot"+d.name+"SVE_16", "(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)", "$0-64")
	for _, a := range []string{"w+0(FP), R0", "np+8(FP), R1", "ng+16(FP), R2", "xq+24(FP), R3", "sums+32(FP), R4", "xs+40(FP), R5", "y+48(FP), R6", "acc+56(FP), R9"} {
		f.Op("MOVD %s", a)
	}
	svePreds(f)
	if d.consts != nil {
		d.consts(f)
	}
	f.Label(p)
	fourP(f, "dup z%d.s, #0", zq(16))
	f.Op("MOVD R3, R7")
	f.Op("MOVD R4, R10")
	f.Op("MOVD R5, R13")
	f.Op("MOVD R2, R12")
	f.Label(g)
	fourP(f, "dup z%d.s, #0", zq(20))
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
	f.Blank()
	f.Note("y (+)= t")
	f.Op("CBZ R9, %s", z)
	fourP(f, "ld1w {z%d.s}, %s/z, %s", zq(24), "P", "Y")
	f.Op("B %s", s)
	f.Label(z)
	fourP(f, "dup z%d.s, #0", zq(24))
	f.Label(s)
	fourP(f, "fadd z%d.s, %s/m, z%d.s, z%d.s", zq(24), "P", zq(24), zq(16))
	fourP(f, "st1w {z%d.s}, %s, %s", zq(24), "P", "Y")
	f.Op("ADD $64, R6, R6")
	f.Op("SUBS $1, R1, R1")
	f.Op("BNE %s", p)
	f.Op("RET")
}

// sveNibbles decodes the Q4 lines of a group: line l holds k-quads 2l (low
// nibbles) and 2l+1 (high), minus 8 unless min.
func sveNibbles(f *a64.File, min bool) {
	for l := range 4 {
		f.Note(fmt.Sprintf("line %d: k = %d..%d (low nibbles), %d..%d (high)", l, 8*l, 8*l+3, 8*l+4, 8*l+7))
		sveLoadLine(f, zq(4))
		f.Word("ld1rw {z0.s}, p4/z, [x7, #%d]", 8*l)
		f.Word("ld1rw {z1.s}, p4/z, [x7, #%d]", 8*l+4)
		fourP(f, "and z%d.d, z%d.d, z30.d", zq(8), zq(4))
		fourP(f, "lsr z%d.b, z%d.b, #4", zq(12), zq(4))
		if !min {
			fourP(f, "sub z%d.b, z%d.b, #8", zq(8), zq(8))
			fourP(f, "sub z%d.b, z%d.b, #8", zq(12), zq(12))
		}
		sveSdot(f, zq(8), 0)
		sveSdot(f, zq(12), 1)
		f.Op("ADD $64, R0, R0")
	}
	f.Op("ADD $32, R7, R7")
}

var sveFormats = []sveFormat{
	{name: "Q8", label: "q8", group: func(f *a64.File) {
		for l := range 8 {
			f.Note(fmt.Sprintf("line %d: k = %d..%d of 16 rows", l, 4*l, 4*l+3))
			sveLoadLine(f, zq(4))
			f.Word("ld1rw {z0.s}, p4/z, [x7, #%d]", 4*l)
			fourP(f, "eor z%d.b, z%d.b, #0x80", zq(4), zq(4))
			sveSdot(f, zq(4), 0)
			f.Op("ADD $64, R0, R0")
		}
		f.Op("ADD $32, R7, R7")
	}},
	{name: "Q4", label: "q4", consts: dupB(30, 15), group: func(f *a64.File) { sveNibbles(f, false) }},
	{name: "Q4Min", label: "qm", consts: dupB(30, 15), group: func(f *a64.File) { sveNibbles(f, true) }, after: sveMin},
}

// dupB puts a byte constant in every lane of z<v>.
func dupB(v, c int) func(f *a64.File) {
	return func(f *a64.File) { f.Word("dup z%d.b, #%d", v, c) }
}

// sveMin: t += m·xs·float(Σxq), m the group's 16 f16 mins.
func sveMin(f *a64.File) {
	f.Note("t += m·float(Σxq)")
	fourP(f, "ld1h {z%d.s}, %s/z, %s", zq(12), "P", "A")
	fourP(f, "fcvt z%d.s, %s/m, z%d.h", zq(12), "P", zq(12))
	f.Word("ld1rw {z1.s}, p4/z, [x10]")
	f.Word("scvtf z1.s, p4/m, z1.s")
	f.Word("fmul z1.s, z1.s, z2.s")
	fourP(f, "fmla z%d.s, %s/m, z%d.s, z1.s", zq(16), "P", zq(12))
	f.Op("ADD $32, R0, R0")
	f.Op("ADD $4, R10, R10")
}

// sveF32 writes gemmSVE_16: C [m][16] (+)= A [m][k]·B [k][16], one row at
// a time, B a packed f32 block (a 16-wide line per k, 4 chunks).
func sveF32(f *a64.File) {
	f.Func("gemmSVE_16", "(m, k int, a *float32, lda int, b *byte, c *float32, ldc int, acc int)", "$0-64")
	for _, a := range []string{"m+0(FP), R0", "k+8(FP), R1", "a+16(FP), R2", "lda+24(FP), R3", "b+32(FP), R4", "c+40(FP), R5", "ldc+48(FP), R6", "acc+56(FP), R7"} {
		f.Op("MOVD %s", a)
	}
	f.Op("LSL $2, R3, R3")
	f.Op("LSL $2, R6, R6")
	f.Note("p0..p3: the lanes of columns [i·VL/32, (i+1)·VL/32) ∩ [0, 16)")
	f.Op("MOVD $16, R8")
	f.Op("MOVD $0, R9")
	for c := range 4 {
		if c > 0 {
			f.Word("incw x9")
		}
		f.Word("whilelo p%d.s, x9, x8", c)
	}
	f.Word("ptrue p4.s")
	cz := func(c int) string { return chunk(5, c) }
	f.Label("srow")
	f.Op("CBZ R7, szero")
	for c := range 4 {
		f.Word("ld1w {z%d.s}, p%d/z, %s", 16+c, c, cz(c))
	}
	f.Op("B sk")
	f.Label("szero")
	for c := range 4 {
		f.Word("dup z%d.s, #0", 16+c)
	}
	f.Label("sk")
	f.Op("MOVD R2, R10")
	f.Op("MOVD R4, R11")
	f.Op("MOVD R1, R12")
	f.Op("CBZ R12, sstore")
	f.Label("skloop")
	f.Word("ld1rw {z0.s}, p4/z, [x10]")
	for c := range 4 {
		f.Word("ld1w {z%d.s}, p%d/z, %s", 1+c, c, chunk(11, c))
	}
	for c := range 4 {
		f.Word("fmla z%d.s, p%d/m, z%d.s, z0.s", 16+c, c, 1+c)
	}
	f.Op("ADD $4, R10, R10")
	f.Op("ADD $64, R11, R11")
	f.Op("SUBS $1, R12, R12")
	f.Op("BNE skloop")
	f.Label("sstore")
	for c := range 4 {
		f.Word("st1w {z%d.s}, p%d, %s", 16+c, c, cz(c))
	}
	f.Op("ADD R3, R2, R2")
	f.Op("ADD R6, R5, R5")
	f.Op("SUBS $1, R0, R0")
	f.Op("BNE srow")
	f.Op("RET")
}
