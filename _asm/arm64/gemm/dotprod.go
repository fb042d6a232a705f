package main

import (
	"fmt"

	"github.com/ktune/ktune/_asm/internal/a64"
)

// The NEON dot-product (FEAT_DotProd) kernels of the neon_dotprod
// variant: one int8 activation row against np consecutive panels of 16
// weight rows, a group of 32 k at a time. One skeleton (dotKernel) for
// every format; a format is its decode of one group's lines into int8
// values, SDOT by element against the group's activations (v0, v1), into
// v20–v23 and v24–v27 (two sets of the 16 rows' sums), and the
// correction that turns the sums into Σ(u − zero)·xq.
//
// Registers: R0 w (post-incremented), R1 panels left, R2 groups, R3 xq,
// R4 Σxq per group, R5 the activation scales, R6 y, R9 acc; per panel R7,
// R10, R11 cursors into xq, Σxq and the scales, R8 groups left. V16–V19
// the panel's 16 f32 sums.

// tmp4 are the scratch registers of a decoded k-quad.
var tmp4 = [4]int{2, 3, 28, 29}

// four writes an instruction for each of the four registers of a k-quad:
// args are ints (the same each time) or [4]int (one per register).
func four(f *a64.File, word bool, format string, args ...any) {
	for j := range 4 {
		a := make([]any, len(args))
		for i, x := range args {
			if r, ok := x.([4]int); ok {
				a[i] = r[j]
			} else {
				a[i] = x
			}
		}
		if word {
			f.Word(format, a...)
		} else {
			f.Op(format, a...)
		}
	}
}

// sdot adds the k-quad in src to the sums set (20 or 24) by activation
// quad q (v(q/4), element q%4).
func sdot(f *a64.File, set int, src [4]int, q int) {
	four(f, true, "sdot v%d.4s, v%d.16b, v%d.4b[%d]", a64.Regs4(set), src, q/4, q%4)
}

// line loads the next 64-byte line of the panel into regs (a comment on
// what it holds).
func line(f *a64.File, regs [4]int, note string) {
	f.OpC(note, "VLD1.P 64(R0), [V%d.B16, V%d.B16, V%d.B16, V%d.B16]", regs[0], regs[1], regs[2], regs[3])
}

// dotFormat is one format of the skeleton: its constants, whether the
// group starts with the sums zeroed, its decode and SDOTs, and what
// follows the scaling (a Q4 min).
type dotFormat struct {
	name, label string
	consts      func(f *a64.File)
	zeroSums    bool
	group       func(f *a64.File)
	scale       func(f *a64.File) // the group's scales into v12–v15 and the sums' conversion; nil: the f16 scales
	after       func(f *a64.File)
}

// sumsToF32 loads the group's 16 f16 scales into v12–v15 and converts
// the int32 sums v20–v23 to f32.
func sumsToF32(f *a64.File) {
	f.OpC("the group's 16 f16 scales", "VLD1.P 32(R0), [V2.H8, V3.H8]")
	f.Word("fcvtl v12.4s, v2.4h")
	f.Word("fcvtl2 v13.4s, v2.8h")
	f.Word("fcvtl v14.4s, v3.4h")
	f.Word("fcvtl2 v15.4s, v3.8h")
	four(f, true, "scvtf v%d.4s, v%d.4s", a64.Regs4(20), a64.Regs4(20))
}

// addSets adds the second set of sums into the first.
func addSets(f *a64.File) {
	four(f, false, "VADD V%d.S4, V%d.S4, V%d.S4", a64.Regs4(24), a64.Regs4(20), a64.Regs4(20))
}

// subZero subtracts zero·Σxq (zero = 2^shift) from the sums.
func subZero(f *a64.File, shift int) {
	f.OpC("Σxq of the group", "VLD1R.P 4(R10), [V2.S4]")
	f.OpC(fmt.Sprintf("%d·Σxq", 1<<shift), "VSHL $%d, V2.S4, V2.S4", shift)
	four(f, false, "VSUB V2.S4, V%d.S4, V%d.S4", a64.Regs4(20), a64.Regs4(20))
}

// dotKernel writes dot<name>NEON_1x16.
func dotKernel(f *a64.File, d dotFormat) {
	p, g, z, s := d.label+"p", d.label+"g", d.label+"z", d.label+"s"
	f.Func("dot"+d.name+"NEON_1x16", "(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)", "$0-64")
	dotArgs(f)
	d.consts(f)
	f.Label(p)
	f.ZeroV(16, 4)
	f.Op("MOVD R3, R7")
	f.Op("MOVD R4, R10")
	f.Op("MOVD R5, R11")
	f.Op("MOVD R2, R8")
	f.Label(g)
	f.OpC("the group's 32 activations", "VLD1.P 32(R7), [V0.B16, V1.B16]")
	if d.zeroSums {
		f.ZeroV(20, 8)
	}
	d.group(f)
	if d.scale != nil {
		d.scale(f)
	} else {
		sumsToF32(f)
	}
	f.OpC("the group's activation scale", "VLD1R.P 4(R11), [V28.S4]")
	four(f, true, "fmul v%d.4s, v%d.4s, v28.4s", a64.Regs4(20), a64.Regs4(20))
	scales := a64.Regs4(12)
	if d.label == "q2" {
		scales = a64.Regs4(4)
	}
	four(f, false, "VFMLA V%d.S4, V%d.S4, V%d.S4", scales, a64.Regs4(20), a64.Regs4(16))
	if d.after != nil {
		d.after(f)
	}
	f.Op("SUBS $1, R8, R8")
	f.Op("BNE %s", g)
	dotStore(f, p, z, s)
}

// dotArgs loads the dot-product kernels' arguments (the same for every
// format and ISA) into R0–R6 and R9.
func dotArgs(f *a64.File) {
	f.Args("w+0(FP), R0", "np+8(FP), R1", "ng+16(FP), R2", "xq+24(FP), R3", "sums+32(FP), R4", "xs+40(FP), R5", "y+48(FP), R6", "acc+56(FP), R9")
}

// dotStore ends a NEON kernel: y (+)= the panel's sums (v16–v19), next
// panel (label p), the labels z and s its own.
func dotStore(f *a64.File, p, z, s string) {
	f.Blank()
	f.Note("y (+)= t")
	f.Op("CBZ R9, %s", z)
	f.Op("VLD1 (R6), [V4.S4, V5.S4, V6.S4, V7.S4]")
	f.Op("B %s", s)
	f.Label(z)
	f.ZeroV(4, 4)
	f.Label(s)
	four(f, true, "fadd v%d.4s, v%d.4s, v%d.4s", a64.Regs4(4), a64.Regs4(4), a64.Regs4(16))
	f.Op("VST1.P [V4.S4, V5.S4, V6.S4, V7.S4], 64(R6)")
	f.Op("SUBS $1, R1, R1")
	f.Op("BNE %s", p)
	f.Op("RET")
}

// movi puts a byte constant in every lane of v.
func movi(c, v int) func(f *a64.File) {
	return func(f *a64.File) { f.Op("VMOVI $%d, V%d.B16", c, v) }
}

// consts chains constant setups.
func consts(fs ...func(f *a64.File)) func(f *a64.File) {
	return func(f *a64.File) {
		for _, c := range fs {
			c(f)
		}
	}
}

// q8q4Consts: 128 (Q8's sign flip), 15 (nibble mask), 8 (Q4's zero).
var q8q4Consts = consts(movi(128, 31), movi(15, 30), movi(8, 29))

// nibbles decodes Q4 line l (in v4–v7) into its low (v8–v11) and high
// (v12–v15) nibbles, minus 8 unless min, and adds them by k-quads 2l and
// 2l+1.
func nibbles(f *a64.File, l int, min bool) {
	line(f, a64.Regs4(4), fmt.Sprintf("line %d: k = %d..%d low, %d..%d high nibbles", l, 8*l, 8*l+3, 8*l+4, 8*l+7))
	four(f, false, "VAND V30.B16, V%d.B16, V%d.B16", a64.Regs4(4), a64.Regs4(8))
	four(f, false, "VUSHR $4, V%d.B16, V%d.B16", a64.Regs4(4), a64.Regs4(12))
	if !min {
		four(f, false, "VSUB V29.B16, V%d.B16, V%d.B16", a64.Regs4(8), a64.Regs4(8))
		four(f, false, "VSUB V29.B16, V%d.B16, V%d.B16", a64.Regs4(12), a64.Regs4(12))
	}
	sdot(f, 20, a64.Regs4(8), 2*l)
	sdot(f, 24, a64.Regs4(12), 2*l+1)
}

var dotFormats = []dotFormat{
	{name: "Q8", label: "q8", consts: q8q4Consts, zeroSums: true, group: func(f *a64.File) {
		for l := range 8 {
			regs, set := a64.Regs4(4), 20
			if l%2 == 1 {
				regs, set = a64.Regs4(8), 24
			}
			line(f, regs, fmt.Sprintf("line %d: k = %d..%d of 16 rows", l, 4*l, 4*l+3))
			four(f, false, "VEOR V31.B16, V%d.B16, V%d.B16", regs, regs)
			sdot(f, set, regs, l)
		}
		addSets(f)
	}},
	{name: "Q4", label: "q4", consts: q8q4Consts, zeroSums: true, group: func(f *a64.File) {
		for l := range 4 {
			nibbles(f, l, false)
		}
		addSets(f)
	}},
	{name: "Q4Min", label: "qm", consts: q8q4Consts, zeroSums: true, group: func(f *a64.File) {
		for l := range 4 {
			nibbles(f, l, true)
		}
		addSets(f)
	}, after: func(f *a64.File) {
		// + m·Σxq·xs: the group's mins times its activation sum
		f.OpC("the group's 16 f16 mins", "VLD1.P 32(R0), [V2.H8, V3.H8]")
		f.Word("fcvtl v8.4s, v2.4h")
		f.Word("fcvtl2 v9.4s, v2.8h")
		f.Word("fcvtl v10.4s, v3.4h")
		f.Word("fcvtl2 v11.4s, v3.8h")
		f.OpC("Σxq of the group", "VLD1R.P 4(R10), [V29.S4]")
		f.Word("scvtf v29.4s, v29.4s")
		f.Word("fmul v29.4s, v29.4s, v28.4s")
		four(f, false, "VFMLA V29.S4, V%d.S4, V%d.S4", a64.Regs4(8), a64.Regs4(16))
	}},
	{name: "Q3", label: "q3", consts: q3Consts, zeroSums: true, group: func(f *a64.File) { q3Group(f, true) }},
	{name: "Q6", label: "q6", consts: movi(63, 31), zeroSums: true, group: func(f *a64.File) { q6Group(f, true) }},
	{name: "Q2", label: "q2", consts: consts(movi(3, 31), movi(12, 30), func(f *a64.File) { f.Word("movi v14.8h, #15") }),
		zeroSums: false, group: q2Group, scale: q2Scale},
	{name: "Q5", label: "q5", consts: q5Consts, zeroSums: true, group: func(f *a64.File) { q5Group(f, true) }},
}

var (
	q3Consts = consts(movi(7, 31), movi(56, 30))
	q5Consts = consts(movi(15, 30), movi(16, 29))
)

// q3Group: three lines hold k = 0..23 (bits 0–2 and 3–5 of each byte)
// and the two bits of k = 24..31 spread over bits 6–7. zero: the sums
// are Σ(u−4)·xq (Q3), else Σu·xq (Q3K, whose min takes the zero point).
func q3Group(f *a64.File, zero bool) {
	line(f, a64.Regs4(4), "line 0: k = 0..3 bits 0–2, 4..7 bits 3–5, low bits of 24..27")
	line(f, a64.Regs4(8), "line 1: k = 8..11, 12..15, low bits of 28..31")
	line(f, a64.Regs4(12), "line 2: k = 16..19, 20..23, high bits of 24..31")
	f.Note("k = 24..27: ((L2 << 1) with L0 >> 1 inserted) >> 5 = L0 bits 6–7 | L2 bit 6 << 2")
	four(f, false, "VSHL $1, V%d.B16, V%d.B16", a64.Regs4(12), tmp4)
	four(f, false, "VSRI $1, V%d.B16, V%d.B16", a64.Regs4(4), tmp4)
	four(f, false, "VUSHR $5, V%d.B16, V%d.B16", tmp4, tmp4)
	sdot(f, 20, tmp4, 6)
	f.Note("k = 28..31: (L2 >> 5) with L1 >> 6 inserted = L1 bits 6–7 | L2 bit 7 << 2")
	four(f, false, "VUSHR $5, V%d.B16, V%d.B16", a64.Regs4(12), tmp4)
	four(f, false, "VSRI $6, V%d.B16, V%d.B16", a64.Regs4(8), tmp4)
	sdot(f, 20, tmp4, 7)
	f.Note("k = 4..7, 12..15, 20..23: L & 0x38 = 8·u, summed ×8 in v24..v27")
	for i, l := range []int{4, 8, 12} {
		four(f, false, "VAND V30.B16, V%d.B16, V%d.B16", a64.Regs4(l), tmp4)
		sdot(f, 24, tmp4, 2*i+1)
	}
	f.Note("k = 0..3, 8..11, 16..19: L & 7")
	for i, l := range []int{4, 8, 12} {
		four(f, false, "VAND V31.B16, V%d.B16, V%d.B16", a64.Regs4(l), a64.Regs4(l))
		sdot(f, 20, a64.Regs4(l), 2*i)
	}
	if !zero {
		f.Note("dot = Σu·xq = v20..v23 + (v24..v27 >> 3)")
		four(f, true, "ssra v%d.4s, v%d.4s, #3", a64.Regs4(20), a64.Regs4(24))
		return
	}
	f.Note("dot = Σ(u−4)·xq = v20..v23 + (v24..v27 >> 3) − 4·Σxq")
	four(f, true, "ssra v%d.4s, v%d.4s, #3", a64.Regs4(20), a64.Regs4(24))
	subZero(f, 2)
}

// q6Group: six lines hold k = 0..23 in bits 0–5 and the six bits of k =
// 24..31 two at a time in bits 6–7 (zero as q3Group's, 32).
func q6Group(f *a64.File, zero bool) {
	for half := range 2 {
		k0, hi := 12*half, 24+4*half
		for i, regs := range [][4]int{a64.Regs4(4), a64.Regs4(8), a64.Regs4(12)} {
			f.OpC(fmt.Sprintf("line %d: k = %d..%d bits 0–5, bits %d–%d of k = %d..%d in 6–7", 3*half+i, k0+4*i, k0+4*i+3, 2*i, 2*i+1, hi, hi+3),
				"VLD1.P 64(R0), [V%d.B16, V%d.B16, V%d.B16, V%d.B16]", regs[0], regs[1], regs[2], regs[3])
		}
		f.Note(fmt.Sprintf("k = %d..%d: ((L%d >> 2) with L%d >> 4, then L%d >> 6 inserted)", hi, hi+3, 3*half+2, 3*half+1, 3*half))
		four(f, false, "VUSHR $2, V%d.B16, V%d.B16", a64.Regs4(12), tmp4)
		four(f, false, "VSRI $4, V%d.B16, V%d.B16", a64.Regs4(8), tmp4)
		four(f, false, "VSRI $6, V%d.B16, V%d.B16", a64.Regs4(4), tmp4)
		sets := [][2]int{{24, 20}, {20, 24}}[half] // the high quad's set, then the low quads' first
		sdot(f, sets[0], tmp4, 6+half)
		f.Note(fmt.Sprintf("k = %d..%d: L & 63", k0, k0+11))
		for _, l := range []int{4, 8, 12} {
			four(f, false, "VAND V31.B16, V%d.B16, V%d.B16", a64.Regs4(l), a64.Regs4(l))
		}
		for i, l := range []int{4, 8, 12} {
			set := sets[1]
			if i%2 == 1 {
				set = 44 - set
			}
			sdot(f, set, a64.Regs4(l), 3*half+i)
		}
	}
	if !zero {
		f.Note("dot = Σu·xq = v20..v23 + v24..v27")
		addSets(f)
		return
	}
	f.Note("dot = Σ(u−32)·xq = v20..v23 + v24..v27 − 32·Σxq")
	addSets(f)
	subZero(f, 5)
}

// q2Group: two lines hold the 2-bit values of eight k-quads, k-quad 4l+h
// in bits 2h, 2h+1 of line l; the 4·u quads are summed apart into
// v24–v27, which start at Σxq.
func q2Group(f *a64.File) {
	f.OpC("Σxq of the group", "VLD1R.P 4(R10), [V15.S4]")
	f.ZeroV(20, 4)
	for _, v := range a64.Regs4(24) {
		f.OpC("the 4u sums start at Σxq", "VMOV V15.B16, V%d.B16", v)
	}
	t := [4]int{2, 3, 12, 13}
	line(f, a64.Regs4(4), "line 0: k-quad h (k = 4h..4h+3) in bits 2h, 2h+1, h < 4")
	line(f, a64.Regs4(8), "line 1: k-quad 4+h (k = 16+4h..16+4h+3) in bits 2h, 2h+1")
	for l, regs := range [][4]int{a64.Regs4(4), a64.Regs4(8)} {
		q := 4 * l
		f.Note(fmt.Sprintf("k-quad %d: L%d & 0x0c = 4·u, summed apart", q+1, l))
		four(f, false, "VAND V30.B16, V%d.B16, V%d.B16", regs, t)
		sdot(f, 24, t, q+1)
		f.Note(fmt.Sprintf("k-quad %d: (L%d >> 2) & 0x0c = 4·u", q+2, l))
		four(f, false, "VUSHR $2, V%d.B16, V%d.B16", regs, t)
		four(f, false, "VAND V30.B16, V%d.B16, V%d.B16", t, t)
		sdot(f, 24, t, q+2)
		f.Note(fmt.Sprintf("k-quad %d: L%d >> 6", q+3, l))
		four(f, false, "VUSHR $6, V%d.B16, V%d.B16", regs, t)
		sdot(f, 20, t, q+3)
		f.Note(fmt.Sprintf("k-quad %d: L%d & 3", q, l))
		four(f, false, "VAND V31.B16, V%d.B16, V%d.B16", regs, regs)
		sdot(f, 20, regs, q)
	}
	f.Note("4·dot = 4·Σu·xq − (c−1)·Σxq = 4·v20..v23 + v24..v27 (4·Σu·xq + Σxq) − c·Σxq")
	four(f, false, "VSHL $2, V%d.S4, V%d.S4", a64.Regs4(20), a64.Regs4(20))
	addSets(f)
}

// q2Scale: each row's scale word h holds d = f16(h &^ 15) and c = h & 15.
func q2Scale(f *a64.File) {
	f.OpC("the group's 16 scale words h", "VLD1.P 32(R0), [V2.H8, V3.H8]")
	f.OpC("c = h & 15", "VAND V14.B16, V2.B16, V12.B16")
	f.Op("VAND V14.B16, V3.B16, V13.B16")
	f.WordC("d = f16(h &^ 15)", "bic v2.8h, #15")
	f.Word("bic v3.8h, #15")
	f.Word("smlsl v20.4s, v12.4h, v15.h[0]")
	f.Word("smlsl2 v21.4s, v12.8h, v15.h[0]")
	f.Word("smlsl v22.4s, v13.4h, v15.h[0]")
	f.Word("smlsl2 v23.4s, v13.8h, v15.h[0]")
	f.Word("fcvtl v4.4s, v2.4h")
	f.Word("fcvtl2 v5.4s, v2.8h")
	f.Word("fcvtl v6.4s, v3.4h")
	f.Word("fcvtl2 v7.4s, v3.8h")
	for _, v := range a64.Regs4(20) {
		f.WordC("4·dot as fixed point with 2 fraction bits: dot", "scvtf v%d.4s, v%d.4s, #2", v, v)
	}
}

// q5Group: four lines of nibbles (k-quads 2l and 2l+1 of line l) and a
// fifth whose bit h is bit 4 of u in k-quad h (zero as q3Group's, 16).
func q5Group(f *a64.File, zero bool) {
	f.Op("ADD $256, R0, R12")
	f.OpC("line 4: bit h = bit 4 of u in k-quad h", "VLD1 (R12), [V4.B16, V5.B16, V6.B16, V7.B16]")
	for l := range 4 {
		line(f, a64.Regs4(8), fmt.Sprintf("line %d: k-quad %d low, %d high nibbles", l, 2*l, 2*l+1))
		q := 2 * l
		f.Note(fmt.Sprintf("k-quad %d: (L%d & 15) | ((L4 %s) & 16)", q, l, q5Shift(q)))
		four(f, false, "VAND V30.B16, V%d.B16, V%d.B16", a64.Regs4(8), a64.Regs4(12))
		q5High(f, q, a64.Regs4(12))
		sdot(f, 20, a64.Regs4(12), q)
		f.Note(fmt.Sprintf("k-quad %d: (L%d >> 4) | ((L4 %s) & 16)", q+1, l, q5Shift(q+1)))
		four(f, false, "VUSHR $4, V%d.B16, V%d.B16", a64.Regs4(8), a64.Regs4(8))
		q5High(f, q+1, a64.Regs4(8))
		sdot(f, 24, a64.Regs4(8), q+1)
	}
	f.OpC("past line 4", "ADD $64, R0, R0")
	if !zero {
		f.Note("dot = Σu·xq = v20..v23 + v24..v27")
		addSets(f)
		return
	}
	f.Note("dot = Σ(u−16)·xq = v20..v23 + v24..v27 − 16·Σxq")
	addSets(f)
	subZero(f, 4)
}

// q5High ORs bit 4 of k-quad q's values (line 4, in v4–v7, shifted by
// 4−q and masked by v29) into dst.
func q5High(f *a64.File, q int, dst [4]int) {
	for j := range 4 {
		t := 2 + j%2
		switch sh := 4 - q; {
		case sh > 0:
			f.Op("VSHL $%d, V%d.B16, V%d.B16", sh, 4+j, t)
			f.Op("VAND V29.B16, V%d.B16, V%d.B16", t, t)
		case sh == 0:
			f.Op("VAND V29.B16, V%d.B16, V%d.B16", 4+j, t)
		default:
			f.Op("VUSHR $%d, V%d.B16, V%d.B16", -sh, 4+j, t)
			f.Op("VAND V29.B16, V%d.B16, V%d.B16", t, t)
		}
		f.Op("VORR V%d.B16, V%d.B16, V%d.B16", t, dst[j], dst[j])
	}
}

// q5Shift is q5High's shift of line 4 for k-quad q, as the notes write
// it ("<< 4", "", ">> 3").
func q5Shift(q int) string {
	switch sh := 4 - q; {
	case sh > 0:
		return fmt.Sprintf("<< %d", sh)
	case sh == 0:
		return ""
	default:
		return fmt.Sprintf(">> %d", -sh)
	}
}

// The K formats (Q3K…Q6K): super-blocks of 8 groups, each with a header
// of 6-bit scale and min codes per group and row and f16 d and dm per
// row; a group's values decode as its base format's (unsigned: the min
// takes the zero point) and fold in as t += d·sc·xs·dot − dm·mc·xs·Σxq.
type kFormat struct {
	name, label string
	consts      func(f *a64.File)
	decode      func(f *a64.File)
}

var kFormats = []kFormat{
	{"Q3K", "k3", q3Consts, func(f *a64.File) { q3Group(f, false) }},
	{"Q4K", "k4", q8q4Consts, func(f *a64.File) {
		for l := range 4 {
			nibbles(f, l, true)
		}
		f.Note("dot = Σu·xq = v20..v23 + v24..v27")
		addSets(f)
	}},
	{"Q5K", "k5", q5Consts, func(f *a64.File) { q5Group(f, false) }},
	{"Q6K", "k6", movi(63, 31), func(f *a64.File) { q6Group(f, false) }},
}

// kFold folds a decoded group into t (v16–v19): the group's codes (an
// even group's high min bits are the low nibbles of their bytes, an odd
// group's the high ones, then the next 16), its d and dm.
func kFold(f *a64.File, odd bool) {
	f.Note("the group's scale codes sc and min codes mc (16 rows)")
	f.OpC("sc | low mc bits << 6", "VLD1.P 16(R20), [V4.B16]")
	if odd {
		f.OpC("high mc bits (odd group: high nibbles)", "VLD1.P 16(R21), [V5.B16]")
		f.Op("VUSHR $2, V5.B16, V7.B16")
	} else {
		f.OpC("high mc bits (even group: low nibbles)", "VLD1 (R21), [V5.B16]")
		f.Op("VSHL $4, V5.B16, V7.B16")
		f.Op("VUSHR $2, V7.B16, V7.B16")
	}
	f.OpC("mc = hi << 2 | sc byte >> 6", "VSRI $6, V4.B16, V7.B16")
	f.Op("VMOVI $63, V6.B16")
	f.OpC("sc", "VAND V6.B16, V4.B16, V6.B16")
	// widen 16 bytes of codes (v<src>) to 16 f32 in dst…dst+3
	widen := func(src int, dst [4]int) {
		f.Word("uxtl v8.8h, v%d.8b", src)
		f.Word("uxtl2 v9.8h, v%d.16b", src)
		f.Word("uxtl v%d.4s, v8.4h", dst[0])
		f.Word("uxtl2 v%d.4s, v8.8h", dst[1])
		f.Word("uxtl v%d.4s, v9.4h", dst[2])
		f.Word("uxtl2 v%d.4s, v9.8h", dst[3])
		four(f, true, "ucvtf v%d.4s, v%d.4s", dst, dst)
	}
	widen(6, [4]int{10, 11, 12, 13})
	widen(7, a64.Regs4(24))
	f.OpC("the super-block's d and dm", "VLD1 (R24), [V0.H8, V1.H8, V2.H8, V3.H8]")
	f.Word("fcvtl v4.4s, v0.4h")
	f.Word("fcvtl2 v5.4s, v0.8h")
	f.Word("fcvtl v6.4s, v1.4h")
	f.Word("fcvtl2 v7.4s, v1.8h")
	f.Note("s = d·sc, m = dm·mc")
	four(f, true, "fmul v%d.4s, v%d.4s, v%d.4s", [4]int{10, 11, 12, 13}, a64.Regs4(4), [4]int{10, 11, 12, 13})
	dm := [4]int{8, 9, 14, 15}
	f.Word("fcvtl v8.4s, v2.4h")
	f.Word("fcvtl2 v9.4s, v2.8h")
	f.Word("fcvtl v14.4s, v3.4h")
	f.Word("fcvtl2 v15.4s, v3.8h")
	four(f, true, "fmul v%d.4s, v%d.4s, v%d.4s", a64.Regs4(24), dm, a64.Regs4(24))
	f.Note("t += s·(xs·float(dot)) − m·(xs·float(Σxq))")
	f.OpC("the group's activation scale", "VLD1R.P 4(R11), [V28.S4]")
	four(f, true, "scvtf v%d.4s, v%d.4s", a64.Regs4(20), a64.Regs4(20))
	four(f, true, "fmul v%d.4s, v%d.4s, v28.4s", a64.Regs4(20), a64.Regs4(20))
	four(f, false, "VFMLA V%d.S4, V%d.S4, V%d.S4", [4]int{10, 11, 12, 13}, a64.Regs4(20), a64.Regs4(16))
	f.OpC("Σxq of the group", "VLD1R.P 4(R10), [V0.S4]")
	f.Word("scvtf v0.4s, v0.4s")
	f.Word("fmul v0.4s, v0.4s, v28.4s")
	four(f, true, "fmls v%d.4s, v%d.4s, v0.4s", a64.Regs4(16), a64.Regs4(24))
}

// kHeader starts a super-block (label b): the pointers into its header
// (R20 scale codes, R21 high min bits, R24 d, R25 dm), R0 past it, R22
// the pairs of groups left.
func kHeader(f *a64.File, b string) {
	f.Label(b)
	f.Note("super-block header: R20 = scale codes, R21 = high min bits, R24 = d, R25 = dm")
	f.Op("MOVD R0, R20")
	f.Op("ADD $128, R0, R21")
	f.Op("ADD $192, R0, R24")
	f.Op("ADD $224, R0, R25")
	f.OpC("the 8 groups' value lines", "ADD $256, R0, R0")
	f.Op("MOVD $4, R22")
}

// kLoops closes the group-pair loop (label g) and the super-block loop
// (label b).
func kLoops(f *a64.File, g, b string) {
	f.Op("SUBS $1, R22, R22")
	f.Op("BNE %s", g)
	f.Op("SUBS $1, R23, R23")
	f.Op("BNE %s", b)
}

// kKernel writes dot<name>NEON_1x16 of a K format.
func kKernel(f *a64.File, k kFormat) {
	p, b, g, z, s := k.label+"p", k.label+"b", k.label+"g", k.label+"z", k.label+"s"
	f.Func("dot"+k.name+"NEON_1x16", "(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)", "$0-64")
	dotArgs(f)
	k.consts(f)
	f.Blank()
	f.OpC("super-blocks of 8 groups", "LSR $3, R2, R2")
	f.Label(p)
	f.ZeroV(16, 4)
	f.Op("MOVD R3, R7")
	f.Op("MOVD R4, R10")
	f.Op("MOVD R5, R11")
	f.Op("MOVD R2, R23")
	kHeader(f, b)
	f.Label(g)
	for _, odd := range []bool{false, true} {
		f.Note(map[bool]string{false: "even group", true: "odd group"}[odd])
		f.OpC("the group's 32 activations", "VLD1.P 32(R7), [V0.B16, V1.B16]")
		f.ZeroV(20, 8)
		k.decode(f)
		kFold(f, odd)
	}
	kLoops(f, g, b)
	dotStore(f, p, z, s)
}
