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

// files build the generator's outputs by -kind.
var files = map[string]func() *a64.File{
	"neon":    neonFile,
	"bf16":    bf16File,
	"bf16sve": bf16SVEFile,
	"dotprod": dotprodFile,
	"sve":     sveFile,
}

func main() {
	kind := flag.String("kind", "", "neon, bf16, bf16sve, dotprod or sve")
	out := flag.String("out", "", "output .s file")
	flag.Parse()
	file, ok := files[*kind]
	if !ok {
		log.Fatalf("-kind %q: neon, bf16, bf16sve, dotprod or sve", *kind)
	}
	if err := file().WriteFile(*out); err != nil {
		log.Fatal(err)
	}
}

// neonFile builds the NEON f32 register tiles (gemm_neon_arm64.s).
func neonFile() *a64.File {
	f := a64.NewFile("arm64 && gc && !purego",
		"NEON f32 register tiles of the neon variant (see gemm_arm64.go for",
		"their Go semantics). Only native Go mnemonics: the activations are",
		"broadcast with LD1R and multiplied by a whole 16-wide line of the f32",
		"B block with four FMLA per row.")
	for rows := 1; rows <= 4; rows++ {
		f32Tile(f, rows)
	}
	return f
}

// bf16File builds the NEON BF16 kernels (gemm_bf16_arm64.s).
func bf16File() *a64.File {
	f := a64.NewFile("arm64 && gc && !purego",
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
	return f
}

// bf16SVEFile builds the SVE BF16 kernels (gemm_bf16_sve_arm64.s).
func bf16SVEFile() *a64.File {
	f := a64.NewFile("arm64 && gc && !purego",
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
	return f
}

// dotprodFile builds the NEON dot-product kernels (gemm_dotprod_arm64.s).
func dotprodFile() *a64.File {
	f := a64.NewFile("arm64 && gc && !purego",
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
	return f
}

// sveFile builds the SVE kernels (gemm_sve_arm64.s).
func sveFile() *a64.File {
	f := a64.NewFile("arm64 && gc && !purego",
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
	return f
}

// f32Tile writes gemmNEON_<rows>x16: C [rows][16] (+)= A [rows][k] · B
// [k][16], B a packed f32 block of 16-wide lines (V0–V3 per k), C row r
// in V(16+4r)…V(19+4r), the row's activation broadcast into V(4+r).
//
// Registers: R0 k, R1/R7/R8/R9 the rows of A, R3 B, R4/R10/R11/R12 the
// rows of C, R2 and R5 the strides in bytes, R6 acc.
func f32Tile(f *a64.File, rows int) {
	f.Func(fmt.Sprintf("gemmNEON_%dx16", rows), "(k int, a *float32, lda int, b *byte, c *float32, ldc int, acc int)", "$0-56")
	f32Args(f)
	z, c, l, d := fmt.Sprint("z", rows), fmt.Sprint("c", rows), fmt.Sprint("l", rows), fmt.Sprint("d", rows)
	f.Op("CBZ R6, %s", z)
	for r := range rows {
		f.Op("VLD1 (%s), %s", f32CRow[r], a64.V4(16+4*r, "S4"))
	}
	f.Op("B %s", c)
	f.Label(z)
	f.ZeroV(16, 4*rows)
	f.Label(c)
	f.Op("CBZ R0, %s", d)
	f.Label(l)
	f.Op("VLD1.P 64(R3), %s", a64.V4(0, "S4"))
	for r := range rows {
		// one activation row, one k: va = x[r][k] in every lane,
		// c_r += va·b[k][0:16]
		f.Op("VLD1R.P 4(%s), [V%d.S4]", f32ARow[r], 4+r)
		for j := range 4 {
			f.Op("VFMLA V%d.S4, V%d.S4, V%d.S4", j, 4+r, 16+4*r+j)
		}
	}
	f.Op("SUBS $1, R0, R0")
	f.Op("BNE %s", l)
	f.Label(d)
	for r := range rows {
		f.Op("VST1 %s, (%s)", a64.V4(16+4*r, "S4"), f32CRow[r])
	}
	f.Op("RET")
}

// The registers of f32Tile's rows of A and of C.
var (
	f32ARow = []string{"R1", "R7", "R8", "R9"}
	f32CRow = []string{"R4", "R10", "R11", "R12"}
)

// f32Args loads f32Tile's arguments, the strides in bytes, and points
// f32ARow and f32CRow at the four rows of A and of C.
func f32Args(f *a64.File) {
	f.Args("k+0(FP), R0", "a+8(FP), R1", "lda+16(FP), R2", "b+24(FP), R3", "c+32(FP), R4", "ldc+40(FP), R5", "acc+48(FP), R6")
	f.Op("LSL $2, R2, R2")
	f.Op("LSL $2, R5, R5")
	f.Op("ADD R2, R1, R7")
	f.Op("ADD R2, R7, R8")
	f.Op("ADD R2, R8, R9")
	f.Op("ADD R5, R4, R10")
	f.Op("ADD R5, R10, R11")
	f.Op("ADD R5, R11, R12")
}
