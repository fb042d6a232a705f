//go:generate go run . -kind neon -out ../../../kernels/gemm/gemm_neon_arm64.s
//go:generate go run . -kind bf16 -out ../../../kernels/gemm/gemm_bf16_arm64.s
//go:generate go run . -kind bf16sve -out ../../../kernels/gemm/gemm_bf16_sve_arm64.s
//go:generate go run . -kind dotprod -out ../../../kernels/gemm/gemm_dotprod_arm64.s
//go:generate go run . -kind sve -out ../../../kernels/gemm/gemm_sve_arm64.s

// Command gemm generates kernels/gemm's arm64 assembly (see gemm_arm64.go
// for the Go semantics of each kernel).
package main

import (
	"flag"
	"fmt"
	"log"

	"github.com/ktune/ktune/_asm/internal/a64"
)

func main() {
	kind := flag.String("kind", "", "neon, bf16, bf16sve, dotprod or sve")
	out := flag.String("out", "", "output .s file")
	flag.Parse()
	var f *a64.File
	switch *kind {
	case "neon":
		f = a64.NewFile("arm64 && gc && !purego",
			"NEON f32 register tiles of the neon variant (see gemm_arm64.go for",
			"their Go semantics). Only native Go mnemonics: the activations are",
			"broadcast with LD1R and multiplied by a whole 16-wide line of the f32",
			"B block with four FMLA per row.")
		for rows := 1; rows <= 4; rows++ {
			f32Tile(f, rows)
		}
	case "bf16":
		f = a64.NewFile("arm64 && gc && !purego",
			"NEON BF16 kernels of the neon_bf16 variant (FEAT_BF16): M = 1…4 BF16",
			"activation rows against np consecutive BF16 panels of package quant,",
			"[Kp/2][16 rows][2 k] (see gemm_arm64.go for their Go semantics). One",
			"64-byte panel line holds 16 rows × one k pair: four 8H registers of 4",
			"rows × 2 k, which is exactly the first operand of BFDOT (by element,",
			"4S += 8H · 2H[i]); the activations are loaded 4 pairs (16 bytes) per",
			"row and indexed by element, so one activation load feeds 4 lines. Each",
			"row keeps U independent sets of 4 accumulators (U = 4, 2, 1, 1 for M =",
			"1…4) over the lines, summed at the end. A Kp/2 mod 4 tail takes one",
			"pair at a time (LD1R).",
			"",
			"BFDOT as FEAT_BF16 defines it without FEAT_EBF16 (or with FPCR.EBF = 0,",
			"as Go leaves it) rounds its intermediate sums to odd and flushes",
			"denormals to zero: see gemm_bf16_arm64.go. BFDOT and vector FADD are",
			"WORD-encoded.")
		for rows := 1; rows <= 4; rows++ {
			bf16Tile(f, rows)
		}
	case "bf16sve":
		f = a64.NewFile("arm64 && gc && !purego",
			"SVE BF16 kernels of the sve_bf16 variant (SVE + FEAT_BF16): M = 1…4",
			"BF16 activation rows against np consecutive BF16 panels of package",
			"quant, [Kp/2][16 rows][2 k] (see gemm_bf16_arm64.go for their Go",
			"semantics). A 64-byte panel line (16 rows × one k pair) is NC vectors:",
			"NC = 2 for vector lengths 256…384 bits (bf16SVE2_*), NC = 1 from 512",
			"bits on (bf16SVE1_*); the predicates (WHILELO against the line's 32",
			"halfwords, and against its 16 f32 lanes for y) switch off what lies",
			"beyond the line, so each kernel is vector-length agnostic within its",
			"range (128-bit SVE runs the NEON kernels: the same registers). The",
			"activations are loaded 4 pairs (16 bytes) per row by LD1RQH, which",
			"replicates them into every 128-bit segment, and BFDOT by element",
			"(Zm.H[i], within each segment) multiplies a whole line chunk by pair i;",
			"a Kp/2 mod 4 tail takes one pair at a time (LD1RW). Each row keeps U",
			"independent accumulator sets over the lines (U·M·NC ≤ 16), summed at",
			"the end. BFDOT's arithmetic is that of the NEON one (round to odd,",
			"denormals flushed: see gemm_bf16_arm64.go). Every SVE instruction is",
			"WORD-encoded.")
		for _, nc := range []int{2, 1} {
			for rows := 1; rows <= 4; rows++ {
				bf16SVETile(f, nc, rows)
			}
		}
	case "dotprod":
		f = a64.NewFile("arm64 && gc && !purego",
			"NEON dot-product (FEAT_DotProd, asimddp) kernels of the neon_dotprod",
			"variant: one int8 activation row against np consecutive Q8/Q4/Q3/Q6/Q2/Q5",
			"and Q3K…Q6K panels (see gemm_arm64.go for their Go semantics and the",
			"Q3/Q6/Q2/Q5/K decode); a K kernel runs the value decode of its base",
			"format's kernel per group (the same instructions) and folds the group",
			"in with the scale and min of its super-block header. SDOT (by element),",
			"SSRA, SMLSL, SCVTF, UCVTF, FCVTL, UXTL, FMLS, FMUL, FADD, MOVI and BIC",
			"(16-bit lanes) are WORD-encoded.")
		for _, d := range dotFormats {
			dotKernel(f, d)
		}
		for _, k := range kFormats {
			kKernel(f, k)
		}
	case "sve":
		f = a64.NewFile("arm64 && gc && !purego",
			"SVE kernels of the sve and sve_dotprod variants, vector-length",
			"agnostic (see gemm_arm64.go for their Go semantics): the 16 columns of",
			"a panel are covered by up to four vectors whose predicates (WHILELO",
			"against 16 lanes, or 64 bytes) switch off what lies beyond them, so the",
			"same code runs at 128…2048 bits (at 512 bits and more one vector covers",
			"a panel; the others are all-false). The Q8/Q4/Q2/Q5 kernels go through a",
			"group line by line (the four chunks of a line side by side); the Q3/Q6",
			"ones chunk by chunk (all the group's lines of one chunk, from a base",
			"register per line), as their split k-quads need two or three lines at",
			"once; the K kernels decode their groups as their base formats' kernels",
			"do and take each group's codes, d and dm from the super-block header",
			"chunk by chunk (LD1B/LD1H into 32-bit lanes under the same f32",
			"predicates). Every SVE instruction is WORD-encoded.")
		sveF32(f)
		for _, d := range sveFormats {
			sveDotKernel(f, d)
		}
		for _, k := range sveKFormats {
			sveKKernel(f, k)
		}
	default:
		log.Fatalf("-kind %q: neon, bf16, bf16sve, dotprod or sve", *kind)
	}
	if err := f.WriteFile(*out); err != nil {
		log.Fatal(err)
	}
}

// f32Tile writes gemmNEON_<rows>x16: C [rows][16] (+)= A [rows][k] · B
// [k][16], B a packed f32 block of 16-wide lines (V0–V3 per k), C row r
// in V(16+4r)…V(19+4r), the row's activation broadcast into V(4+r).
//
// Registers: R0 k, R1/R7/R8/R9 the rows of A, R3 B, R4/R10/R11/R12 the
// rows of C, R2 and R5 the strides in bytes, R6 acc.
func f32Tile(f *a64.File, rows int) {
	f.Func(fmt.Sprintf("gemmNEON_%dx16", rows), "(k int, a *float32, lda int, b *byte, c *float32, ldc int, acc int)", "$0-56")
	f.Op("MOVD k+0(FP), R0")
	f.Op("MOVD a+8(FP), R1")
	f.Op("MOVD lda+16(FP), R2")
	f.Op("MOVD b+24(FP), R3")
	f.Op("MOVD c+32(FP), R4")
	f.Op("MOVD ldc+40(FP), R5")
	f.Op("MOVD acc+48(FP), R6")
	f.Op("LSL $2, R2, R2")
	f.Op("LSL $2, R5, R5")
	f.Op("ADD R2, R1, R7")
	f.Op("ADD R2, R7, R8")
	f.Op("ADD R2, R8, R9")
	f.Op("ADD R5, R4, R10")
	f.Op("ADD R5, R10, R11")
	f.Op("ADD R5, R11, R12")
	aRow := []string{"R1", "R7", "R8", "R9"}
	cRow := []string{"R4", "R10", "R11", "R12"}
	z, c, l, d := fmt.Sprint("z", rows), fmt.Sprint("c", rows), fmt.Sprint("l", rows), fmt.Sprint("d", rows)
	f.Op("CBZ R6, %s", z)
	for r := range rows {
		f.Op("VLD1 (%s), %s", cRow[r], a64.V4(16+4*r, "S4"))
	}
	f.Op("B %s", c)
	f.Label(z)
	for r := range rows {
		for j := range 4 {
			v := 16 + 4*r + j
			f.Op("VEOR V%d.B16, V%d.B16, V%d.B16", v, v, v)
		}
	}
	f.Label(c)
	f.Op("CBZ R0, %s", d)
	f.Label(l)
	f.Op("VLD1.P 64(R3), %s", a64.V4(0, "S4"))
	for r := range rows {
		// one activation row, one k: va = x[r][k] in every lane,
		// c_r += va·b[k][0:16]
		f.Op("VLD1R.P 4(%s), [V%d.S4]", aRow[r], 4+r)
		for j := range 4 {
			f.Op("VFMLA V%d.S4, V%d.S4, V%d.S4", j, 4+r, 16+4*r+j)
		}
	}
	f.Op("SUBS $1, R0, R0")
	f.Op("BNE %s", l)
	f.Label(d)
	for r := range rows {
		f.Op("VST1 %s, (%s)", a64.V4(16+4*r, "S4"), cRow[r])
	}
	f.Op("RET")
}

// bf16Args loads the BF16 kernels' arguments (the row strides only for
// several rows) and leaves for done when there is no panel.
func bf16Args(f *a64.File, rows int, done string) {
	f.Op("MOVD w+0(FP), R0")
	f.Op("MOVD np+8(FP), R1")
	f.Op("MOVD npairs+16(FP), R2")
	f.Op("MOVD xb+24(FP), R3")
	if rows > 1 {
		f.Op("MOVD ldx+32(FP), R4")
	}
	f.Op("MOVD y+40(FP), R5")
	if rows > 1 {
		f.Op("MOVD ldy+48(FP), R6")
		f.Op("LSL $2, R6, R6")
	}
	f.Op("MOVD acc+56(FP), R7")
	f.Op("CBZ R1, %s", done)
}

// bf16Tile writes bf16NEON_<rows>x16: per panel, y[r][0:16] (+)= the BF16
// dot products of activation row r with the panel's 16 rows.
//
// Registers: R0 w (post-incremented a line at a time), R1 panels left,
// R2 pairs, R3 xb, R4 ldx (bytes), R5 y, R6 ldy·4, R7 acc; per panel
// R8–R11 the activation rows, R12 steps of 4 pairs, R13 tail pairs,
// R14–R17 the rows of y. V0–V3 and V4–V7 panel lines (even, odd), V8–V11
// the activation rows, V(16 + 4·(r·U + u)) the accumulator set u of row r.
func bf16Tile(f *a64.File, rows int) {
	U := map[int]int{1: 4, 2: 2, 3: 1, 4: 1}[rows]
	acc := func(r, u int) int { return 16 + 4*(r*U+u) }
	b := fmt.Sprintf("b%d", rows)
	f.Func(fmt.Sprintf("bf16NEON_%dx16", rows), "(w *byte, np, npairs int, xb *uint16, ldx int, y *float32, ldy int, acc int)", "$0-64")
	bf16Args(f, rows, b+"done")

	f.Label(b + "panel")
	f.Op("MOVD R3, R8")
	for r := 1; r < rows; r++ {
		f.Op("ADD R4, R%d, R%d", 7+r, 8+r)
	}
	for v := 16; v < 16+4*rows*U; v++ {
		f.Op("VEOR V%d.B16, V%d.B16, V%d.B16", v, v, v)
	}
	f.OpC("steps of 4 pairs", "LSR $2, R2, R12")
	f.OpC("tail pairs", "AND $3, R2, R13")
	f.Op("CBZ R12, %stail", b)

	// dots adds line l (V(first)…) times each row's pair e into set u
	dots := func(first, e, u int) {
		for r := range rows {
			for j := range 4 {
				f.Word("bfdot v%d.4s, v%d.8h, v%d.2h[%d]", acc(r, u)+j, first+j, 8+r, e)
			}
		}
	}
	f.Label(b + "quad")
	for r := range rows {
		f.OpC(fmt.Sprintf("row %d: 4 pairs", r), "VLD1.P 16(R%d), [V%d.H8]", 8+r, 8+r)
	}
	for l := range 4 {
		first := 4 * (l % 2)
		f.OpC(fmt.Sprintf("line %d: 16 rows × 1 pair", l), "VLD1.P 64(R0), [V%d.H8, V%d.H8, V%d.H8, V%d.H8]", first, first+1, first+2, first+3)
		dots(first, l, l%U)
	}
	f.Op("SUBS $1, R12, R12")
	f.Op("BNE %squad", b)

	f.Label(b + "tail")
	f.Op("CBZ R13, %ssum", b)
	f.Label(b + "one")
	for r := range rows {
		f.OpC(fmt.Sprintf("row %d: one pair", r), "VLD1R.P 4(R%d), [V%d.S4]", 8+r, 8+r)
	}
	f.Op("VLD1.P 64(R0), [V0.H8, V1.H8, V2.H8, V3.H8]")
	dots(0, 0, 0)
	f.Op("SUBS $1, R13, R13")
	f.Op("BNE %sone", b)

	// the sets of each row summed into set 0: pairwise (0 += 2, 1 += 3,
	// then 0 += 1 for U = 4)
	fadd := func(dst, src int) {
		for j := range 4 {
			f.Word("fadd v%d.4s, v%d.4s, v%d.4s", dst+j, dst+j, src+j)
		}
	}
	f.Label(b + "sum")
	for half := U / 2; half >= 1; half /= 2 {
		for r := range rows {
			for u := range half {
				fadd(acc(r, u), acc(r, u+half))
			}
		}
	}
	f.Op("MOVD R5, R14")
	for r := 1; r < rows; r++ {
		f.Op("ADD R6, R%d, R%d", 13+r, 14+r)
	}
	f.Op("CBZ R7, %sstore", b)
	for r := range rows {
		f.Op("VLD1 (R%d), %s", 14+r, a64.V4(0, "S4"))
		fadd(acc(r, 0), 0)
	}
	f.Label(b + "store")
	for r := range rows {
		f.Op("VST1 %s, (R%d)", a64.V4(acc(r, 0), "S4"), 14+r)
	}
	f.Op("ADD $64, R5, R5")
	f.Op("SUBS $1, R1, R1")
	f.Op("BNE %spanel", b)
	f.Label(b + "done")
	f.Op("RET")
}

// bf16SVETile writes bf16SVE<nc>_<rows>x16: bf16Tile with a line of nc
// vectors (p0…, predicated to the line's 32 halfwords; y's under p4…).
//
// Registers as bf16Tile's, SVE: z0–z3 the activation rows, z8… and z12…
// the even and odd lines, z(16 + nc·(r·U + u) + c) chunk c of set u of
// row r; p2 and p3 all halfwords and words.
func bf16SVETile(f *a64.File, nc, rows int) {
	U := min(4, 16/(rows*nc))
	acc := func(r, u, c int) int { return 16 + nc*(r*U+u) + c }
	b := fmt.Sprintf("s%d%d", nc, rows)
	f.Func(fmt.Sprintf("bf16SVE%d_%dx16", nc, rows), "(w *byte, np, npairs int, xb *uint16, ldx int, y *float32, ldy int, acc int)", "$0-64")
	bf16Args(f, rows, b+"done")
	f.Note("p0, p1: the halfwords [c·VL/16, (c+1)·VL/16) ∩ [0, 32) of a line;")
	f.Note("p4, p5: the same chunks as f32 lanes ∩ [0, 16)")
	for _, p := range []struct {
		n, pred int
		t, inc  string
	}{{32, 0, "h", "inch"}, {16, 4, "s", "incw"}} {
		f.Op("MOVD $%d, R19", p.n)
		f.Op("MOVD $0, R20")
		for c := range nc {
			if c > 0 {
				f.Word("%s x20", p.inc)
			}
			f.Word("whilelo p%d.%s, x20, x19", p.pred+c, p.t)
		}
	}
	f.Word("ptrue p2.h")
	f.Word("ptrue p3.s")

	f.Label(b + "panel")
	f.Op("MOVD R3, R8")
	for r := 1; r < rows; r++ {
		f.Op("ADD R4, R%d, R%d", 7+r, 8+r)
	}
	for v := 16; v < 16+nc*rows*U; v++ {
		f.Word("dup z%d.s, #0", v)
	}
	f.OpC("steps of 4 pairs", "LSR $2, R2, R12")
	f.OpC("tail pairs", "AND $3, R2, R13")
	f.Op("CBZ R12, %stail", b)

	// line loads the next panel line into z(first)… (note: its number)
	line := func(first int, note string) {
		for c := range nc {
			if c == 0 && note != "" {
				f.WordC(note, "ld1h {z%d.h}, p%d/z, %s", first+c, c, a64.VL(0, c))
			} else {
				f.Word("ld1h {z%d.h}, p%d/z, %s", first+c, c, a64.VL(0, c))
			}
		}
		f.Op("ADD $64, R0, R0")
	}
	dots := func(first, e, u int) {
		for r := range rows {
			for c := range nc {
				f.Word("bfdot z%d.s, z%d.h, z%d.h[%d]", acc(r, u, c), first+c, r, e)
			}
		}
	}
	f.Label(b + "quad")
	for r := range rows {
		f.WordC(fmt.Sprintf("row %d: 4 pairs in every segment", r), "ld1rqh {z%d.h}, p2/z, [x%d]", r, 8+r)
		f.Op("ADD $16, R%d, R%d", 8+r, 8+r)
	}
	for l := range 4 {
		first := 8 + 4*(l%2)
		line(first, fmt.Sprintf("line %d", l))
		dots(first, l, l%U)
	}
	f.Op("SUBS $1, R12, R12")
	f.Op("BNE %squad", b)

	f.Label(b + "tail")
	f.Op("CBZ R13, %ssum", b)
	f.Label(b + "one")
	for r := range rows {
		f.WordC(fmt.Sprintf("row %d: one pair", r), "ld1rw {z%d.s}, p3/z, [x%d]", r, 8+r)
		f.Op("ADD $4, R%d, R%d", 8+r, 8+r)
	}
	line(8, "")
	dots(8, 0, 0)
	f.Op("SUBS $1, R13, R13")
	f.Op("BNE %sone", b)

	f.Label(b + "sum")
	for r := range rows {
		for half := U / 2; half >= 1; half /= 2 {
			for u := range half {
				for c := range nc {
					d, s := acc(r, u, c), acc(r, u+half, c)
					f.Word("fadd z%d.s, z%d.s, z%d.s", d, d, s)
				}
			}
		}
	}
	f.Op("MOVD R5, R14")
	for r := 1; r < rows; r++ {
		f.Op("ADD R6, R%d, R%d", 13+r, 14+r)
	}
	f.Op("CBZ R7, %sstore", b)
	for r := range rows {
		for c := range nc {
			f.Word("ld1w {z%d.s}, p%d/z, %s", 8+c, 4+c, a64.VL(14+r, c))
		}
		for c := range nc {
			d := acc(r, 0, c)
			f.Word("fadd z%d.s, z%d.s, z%d.s", d, d, 8+c)
		}
	}
	f.Label(b + "store")
	for r := range rows {
		for c := range nc {
			f.Word("st1w {z%d.s}, p%d, %s", acc(r, 0, c), 4+c, a64.VL(14+r, c))
		}
	}
	f.Op("ADD $64, R5, R5")
	f.Op("SUBS $1, R1, R1")
	f.Op("BNE %spanel", b)
	f.Label(b + "done")
	f.Op("RET")
}
