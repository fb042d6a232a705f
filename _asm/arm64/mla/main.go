//go:generate go run . -isa neon -out ../../../kernels/mla/mla_neon_arm64.s
//go:generate go run . -isa neonbf16 -out ../../../kernels/mla/mla_neonbf16_arm64.s
//go:generate go run . -isa sve -out ../../../kernels/mla/mla_sve_arm64.s

// Command mla generates kernels/mla's arm64 decode kernels at R = 512,
// DR = 64 (see mla_arm64.go for their Go semantics).
package main

import (
	"flag"
	"fmt"
	"log"

	"github.com/ktune/ktune/_asm/internal/a64"
)

// The widths the kernels are specialised to: the latent rank R, the
// rotary width DR, a cache row R+DR floats.
const (
	R  = 512
	DR = 64
)

// elem is the width of one form's cache rows and queries: f32 (NEON,
// SVE) or BF16 (NEON BF16).
type elem struct {
	bytes  int    // per value
	arr    string // the Go assembler arrangement of a 128-bit load
	suffix string // of the function names
}

var (
	f32  = elem{4, "S4", "NEON"}
	bf16 = elem{2, "H8", "NEONBF16"}
)

// row is the bytes of a cache row or query head in e.
func (e elem) row() int { return e.bytes * (R + DR) }

func main() {
	isa := flag.String("isa", "neon", "neon, neonbf16 or sve")
	out := flag.String("out", "", "output .s file")
	flag.Parse()
	var f *a64.File
	switch *isa {
	case "neon":
		f = a64.NewFile("arm64 && gc && !purego",
			"NEON MLA decode kernels at R = 512, DR = 64 (see mla_arm64.go for",
			"their Go semantics): 4×4 score tiles, 4-head × 16-column latent",
			"accumulation. FADDP and vector FMUL are WORD-encoded.")
		scoresNEON(f, f32)
		accumNEON(f, f32)
	case "neonbf16":
		f = a64.NewFile("arm64 && gc && !purego",
			"NEON BF16 (FEAT_BF16) MLA decode kernels of the neon_bf16 variant at",
			"R = 512, DR = 64 (see mla_bf16_arm64.go for their Go semantics), the",
			"twins of mla_neon_arm64.s over BF16 rows (stride 1152 bytes): 4×4",
			"score tiles with BFDOT (vector form, 8 BF16 products per instruction",
			"into 4 f32 lanes), the 4-head × 16-column latent accumulation with the",
			"BF16 rows widened exactly by SHLL #16, and the f32 → BF16 conversion",
			"with BFCVTN/BFCVTN2 (FPCR rounding: nearest even under Go). BFDOT,",
			"BFCVTN, SHLL, FADDP and vector FMUL are WORD-encoded.")
		scoresNEON(f, bf16)
		accumNEON(f, bf16)
		toBF16(f)
	case "sve":
		f = a64.NewFile("arm64 && gc && !purego",
			"SVE MLA decode kernels at R = 512, DR = 64 (see mla_arm64.go for their",
			"Go semantics), vector-length agnostic: the scores run 4×4 tiles of dot",
			"products over the 576 dimensions one vector at a time (WHILELO against",
			"576: any vector length, the last vector partial), reduced by FADDV; the",
			"latent accumulation runs 4 heads × 4 vectors of columns (WHILELO",
			"against 512). Every SVE instruction is WORD-encoded.")
		scoresSVE(f)
		accumSVE(f)
	default:
		log.Fatalf("-isa %q: neon, neonbf16 or sve", *isa)
	}
	if err := f.WriteFile(*out); err != nil {
		log.Fatal(err)
	}
}

// typ is the Go type of e's values.
func (e elem) typ() string { return map[elem]string{f32: "float32", bf16: "uint16"}[e] }

// scoresArgs loads the score kernels' arguments, scale into F10.
func scoresArgs(f *a64.File) {
	f.Args("q+0(FP), R0", "k+8(FP), R1", "s+16(FP), R2", "lds+24(FP), R3", "nh+32(FP), R4", "nk+40(FP), R5")
	f.Op("FMOVS scale+48(FP), F10")
}

// sStrides turns lds into bytes (R3) and sets R21 to four rows of s.
func sStrides(f *a64.File) {
	f.Op("LSL $2, R3, R3")
	f.OpC("4 rows of s", "LSL $2, R3, R21")
}

// tileLoops opens the loops over 4-head (shloop) and 4-key (sjloop)
// tiles: R7 the keys' rows, R8 the keys left, R9 the tile's s.
func tileLoops(f *a64.File) {
	f.Label("shloop")
	f.Op("MOVD R1, R7")
	f.Op("MOVD R5, R8")
	f.Op("MOVD R2, R9")
	f.Label("sjloop")
}

// qkRows points R10–R13 at the tile's 4 query rows and R14–R17 at its 4
// key rows, row bytes apart.
func qkRows(f *a64.File, row int) {
	f.Op("MOVD R0, R10") // q rows R10–R13, k rows R14–R17
	for i := 1; i < 4; i++ {
		f.Op("ADD $%d, R%d, R%d", row, 9+i, 10+i)
	}
	f.Op("MOVD R7, R14")
	for i := 1; i < 4; i++ {
		f.Op("ADD $%d, R%d, R%d", row, 13+i, 14+i)
	}
}

// reduceTile writes the tile's scores, head h's by reduce(h) at R20, a
// row of s per head.
func reduceTile(f *a64.File, reduce func(h int)) {
	f.Blank()
	f.Note("reduce each accumulator, scale, store s[h, j..j+3]")
	f.Op("MOVD R9, R20")
	for h := range 4 {
		reduce(h)
		f.Op("ADD R3, R20, R20")
	}
}

// closeTileLoops moves on to the next 4 keys (sjloop), then the next 4
// heads (shloop), and ends the kernel.
func closeTileLoops(f *a64.File, row int) {
	f.Op("ADD $16, R9, R9")
	f.Op("ADD $%d, R7, R7", 4*row)
	f.Op("SUBS $4, R8, R8")
	f.Op("BNE sjloop")
	f.Blank()
	f.Op("ADD $%d, R0, R0", 4*row)
	f.Op("ADD R21, R2, R2")
	f.Op("SUBS $4, R4, R4")
	f.Op("BNE shloop")
	f.Label("sdone")
	f.Op("RET")
}

// scoresNEON writes mlaScores<NEON|NEONBF16>_576: s[h][j] = scale·q_h·k_j
// for 4 heads × 4 keys at a time, the 576 dimensions 16 bytes at a time
// (4 f32 through FMLA, or 8 BF16 through BFDOT) into V16–V31 (head i, key
// j in V(16+4i+j)), reduced by FADDP.
func scoresNEON(f *a64.File, e elem) {
	f.Func("mlaScores"+e.suffix+"_576", fmt.Sprintf("(q *%s, k *%s, s *float32, lds int, nh int, nk int, scale float32)", e.typ(), e.typ()), "$0-52")
	scoresArgs(f)
	f.Op("VDUP V10.S[0], V10.S4")
	sStrides(f)
	f.Op("CBZ R4, sdone")
	f.Op("CBZ R5, sdone")
	tileLoops(f)
	f.ZeroV(16, 16)
	qkRows(f, e.row())
	neonDots(f, e)
	reduceTile(f, func(h int) { neonReduce(f, h) })
	closeTileLoops(f, e.row())
}

// neonDots writes the NEON dot-product loop (sdloop) over the 576
// dimensions, 16 bytes of each row a step.
func neonDots(f *a64.File, e elem) {
	if e == bf16 {
		f.OpC("576 / 8 BF16 per step", "MOVD $%d, R19", e.bytes*(R+DR)/16)
	} else {
		f.Op("MOVD $%d, R19", e.bytes*(R+DR)/16)
	}
	f.Label("sdloop")
	for i := range 8 {
		if e == bf16 {
			f.OpC(fmt.Sprintf("%s %d", map[bool]string{true: "head", false: "token"}[i < 4], i%4), "VLD1.P 16(R%d), [V%d.H8]", 10+i, i)
		} else {
			f.Op("VLD1.P 16(R%d), [V%d.S4]", 10+i, i)
		}
	}
	for i := range 4 {
		for j := range 4 {
			if e == bf16 {
				f.Word("bfdot v%d.4s, v%d.8h, v%d.8h", 16+4*i+j, i, 4+j)
			} else {
				f.Op("VFMLA V%d.S4, V%d.S4, V%d.S4", 4+j, i, 16+4*i+j)
			}
		}
	}
	f.Op("SUBS $1, R19, R19")
	f.Op("BNE sdloop")
}

// neonReduce stores head h's four scores at R20: its accumulators
// summed across lanes by FADDP, times scale.
func neonReduce(f *a64.File, h int) {
	a := 16 + 4*h
	f.Word("faddp v8.4s, v%d.4s, v%d.4s", a, a+1)
	f.Word("faddp v9.4s, v%d.4s, v%d.4s", a+2, a+3)
	f.Word("faddp v8.4s, v8.4s, v9.4s")
	f.Word("fmul v8.4s, v8.4s, v10.4s")
	f.Op("VST1 [V8.S4], (R20)")
}

// accumArgs loads the accumulation kernels' arguments, ldpt in bytes.
func accumArgs(f *a64.File) {
	f.Args("z+0(FP), R0", "pt+8(FP), R1", "v+16(FP), R2", "corr+24(FP), R3", "nh+32(FP), R4", "nk+40(FP), R5", "ldpt+48(FP), R6")
	f.Op("LSL $2, R6, R6")
}

// zRows points R9–R12 at the chunk of the 4 heads' z rows at byte
// offset R7.
func zRows(f *a64.File) {
	f.Op("ADD R7, R0, R9") // the 4 heads' z rows R9–R12
	for i := 1; i < 4; i++ {
		f.Op("ADD $%d, R%d, R%d", 4*R, 8+i, 9+i)
	}
}

// keyLoop opens the loop over the keys (ajloop): R13 pt, R14 the chunk
// of v's row (at vOff from v), R15 the keys left; none goes to astore.
func keyLoop(f *a64.File, vOff string) {
	f.Op("MOVD R1, R13")
	f.Op("ADD %s, R2, R14", vOff)
	f.Op("MOVD R5, R15")
	f.Op("CBZ R15, astore")
	f.Label("ajloop")
}

// closeKeyLoop loops over the keys left, then labels astore.
func closeKeyLoop(f *a64.File) {
	f.Op("SUBS $1, R15, R15")
	f.Op("BNE ajloop")
	f.Label("astore")
}

// nextHeads moves z, pt and corr 4 heads on, loops (ahloop) and ends
// the kernel.
func nextHeads(f *a64.File) {
	f.Blank()
	f.Op("ADD $%d, R0, R0", 4*4*R)
	f.Op("ADD $16, R1, R1")
	f.Op("ADD $16, R3, R3")
	f.Op("SUBS $4, R4, R4")
	f.Op("BNE ahloop")
	f.Label("adone")
	f.Op("RET")
}

// accumNEON writes mlaAccum<NEON|NEONBF16>_576: z_h[c] = corr_h·z_h[c] +
// Σ_j pt[j][h]·v_j[c] over the R latent columns, 4 heads × 16 columns at a
// time (head i in V(16+4i)…V(19+4i)); BF16 rows widened by SHLL #16.
func accumNEON(f *a64.File, e elem) {
	f.Func("mlaAccum"+e.suffix+"_576", fmt.Sprintf("(z *float32, pt *float32, v *%s, corr *float32, nh int, nk int, ldpt int)", e.typ()), "$0-56")
	accumArgs(f)
	f.Op("CBZ R4, adone")

	f.Label("ahloop")
	if e == bf16 {
		f.OpC("byte offset into a z row (f32); half of it into a v row (BF16)", "MOVD $0, R7")
	} else {
		f.Op("MOVD $0, R7")
	}
	f.Op("MOVD R3, R8")
	for i := range 4 {
		f.Op("VLD1R.P 4(R8), [V%d.S4]", 12+i)
	}
	f.Label("adloop")
	f.ZeroV(16, 16)
	zRows(f)
	for i := range 4 {
		f.Op("VLD1 (R%d), %s", 9+i, a64.V4(8, "S4"))
		for j := range 4 {
			f.Op("VFMLA V%d.S4, V%d.S4, V%d.S4", 12+i, 8+j, 16+4*i+j)
		}
	}
	keyLoop(f, map[elem]string{f32: "R7", bf16: "R7>>1"}[e])
	neonKey(f, e)
	closeKeyLoop(f)
	for i := range 4 {
		f.Op("VST1 %s, (R%d)", a64.V4(16+4*i, "S4"), 9+i)
	}
	f.Op("ADD $64, R7, R7")
	f.Op("CMP $%d, R7", 4*R)
	f.Op("BNE adloop")
	nextHeads(f)
}

// neonKey adds key j's term: its v row's 16 columns (BF16 widened) into
// V0–V3, pt[j][h] broadcast into V4–V7, acc_h += pt[j][h]·v_j.
func neonKey(f *a64.File, e elem) {
	if e == bf16 {
		f.OpC("16 BF16 values of the row", "VLD1 (R14), [V8.H8, V9.H8]")
		f.Op("ADD $%d, R14, R14", e.row())
		f.Word("shll v0.4s, v8.4h, #16")
		f.Word("shll2 v1.4s, v8.8h, #16")
		f.Word("shll v2.4s, v9.4h, #16")
		f.Word("shll2 v3.4s, v9.8h, #16")
	} else {
		f.Op("VLD1 (R14), %s", a64.V4(0, "S4"))
		f.Op("ADD $%d, R14, R14", e.row())
	}
	f.Op("MOVD R13, R16")
	for i := range 4 {
		f.Op("VLD1R.P 4(R16), [V%d.S4]", 4+i)
	}
	f.Op("ADD R6, R13, R13")
	for i := range 4 {
		for j := range 4 {
			f.Op("VFMLA V%d.S4, V%d.S4, V%d.S4", 4+i, j, 16+4*i+j)
		}
	}
}

// toBF16 writes mlaToBF16NEONBF16: dst = BF16(src), 16 values a step,
// rounded by BFCVTN/BFCVTN2 (nearest even under Go's FPCR).
func toBF16(f *a64.File) {
	f.Func("mlaToBF16NEONBF16", "(dst *uint16, src *float32, n int)", "$0-24")
	f.Op("MOVD dst+0(FP), R0")
	f.Op("MOVD src+8(FP), R1")
	f.Op("MOVD n+16(FP), R2")
	f.Op("CBZ R2, cvdone")
	f.Label("cvloop")
	f.Op("VLD1.P 64(R1), %s", a64.V4(0, "S4"))
	f.Word("bfcvtn v4.4h, v0.4s")
	f.Word("bfcvtn2 v4.8h, v1.4s")
	f.Word("bfcvtn v5.4h, v2.4s")
	f.Word("bfcvtn2 v5.8h, v3.4s")
	f.Op("VST1.P [V4.H8, V5.H8], 32(R0)")
	f.Op("SUBS $16, R2, R2")
	f.Op("BNE cvloop")
	f.Label("cvdone")
	f.Op("RET")
}

// scoresSVE writes mlaScoresSVE_576: scoresNEON's tiles over vectors of
// any length, the dimensions [x19, x19+VL/32) ∩ [0, 576) under p0,
// reduced by FADDV.
func scoresSVE(f *a64.File) {
	f.Func("mlaScoresSVE_576", "(q *float32, k *float32, s *float32, lds int, nh int, nk int, scale float32)", "$0-52")
	scoresArgs(f)
	sStrides(f)
	f.Op("MOVD $%d, R22", R+DR)
	f.Word("ptrue p4.s")
	f.Op("CBZ R4, sdone")
	f.Op("CBZ R5, sdone")
	tileLoops(f)
	f.ZeroZ(16, 16)
	qkRows(f, f32.row())
	sveDots(f)
	reduceTile(f, func(h int) { sveReduce(f, h) })
	closeTileLoops(f, f32.row())
}

// sveDots writes the SVE dot-product loop (sdloop) over the 576
// dimensions, a vector of each row a step (the last one partial).
func sveDots(f *a64.File) {
	f.Op("MOVD $0, R19")
	f.Word("whilelo p0.s, x19, x22")
	f.Label("sdloop")
	f.Note("z0..z3: 4 query rows, z4..z7: 4 key rows at dimensions [x19, x19+VL/32) ∩ [0, 576)")
	for i := range 8 {
		f.Word("ld1w {z%d.s}, p0/z, [x%d, x19, lsl #2]", i, 10+i)
	}
	for i := range 4 {
		for j := range 4 {
			f.Word("fmla z%d.s, p0/m, z%d.s, z%d.s", 16+4*i+j, i, 4+j)
		}
	}
	f.Word("incw x19")
	f.Word("whilelo p0.s, x19, x22")
	f.Op("BMI sdloop")
}

// sveReduce stores head h's four scores at R20: each accumulator summed
// by FADDV, times scale.
func sveReduce(f *a64.File, h int) {
	for j := range 4 {
		f.Word("faddv s%d, p4, z%d.s", j, 16+4*h+j)
	}
	for j := range 4 {
		f.Op("FMULS F10, F%d, F%d", j, j)
	}
	for j := range 4 {
		if j == 0 {
			f.Op("FMOVS F0, (R20)")
		} else {
			f.Op("FMOVS F%d, %d(R20)", j, 4*j)
		}
	}
}

// accumSVE writes mlaAccumSVE_576: accumNEON over 4 heads × 4 vectors of
// columns [d + i·VL/32, d + (i+1)·VL/32) ∩ [0, 512) (p0–p3), head i in
// z(16+4i)…z(19+4i).
func accumSVE(f *a64.File) {
	f.Func("mlaAccumSVE_576", "(z *float32, pt *float32, v *float32, corr *float32, nh int, nk int, ldpt int)", "$0-56")
	accumArgs(f)
	f.Op("MOVD $%d, R24", R)
	f.Op("MOVD $%d, R25", 4*R)
	f.Word("ptrue p4.s")
	f.Op("CBZ R4, adone")

	f.Label("ahloop")
	f.Op("MOVD $0, R7")
	bcast4(f, 12, 3)
	f.Label("adloop")
	f.Note("p0..p3: columns [d + i·VL/32, d + (i+1)·VL/32) ∩ [0, 512), d = R7/4")
	f.Op("LSR $2, R7, R23")
	f.WhileLo("s", 0, 4, 23, 24)
	zRows(f)
	f.Note("acc = corr[h]·z[h, chunk]")
	for i := range 4 {
		f.Ld1w(16+4*i, 0, 9+i, 4)
		for j := range 4 {
			f.Word("fmul z%d.s, z%d.s, z%d.s", 16+4*i+j, 16+4*i+j, 12+i)
		}
	}
	keyLoop(f, "R7")
	sveKey(f)
	closeKeyLoop(f)
	for i := range 4 {
		f.St1w(16+4*i, 0, 9+i, 4)
	}
	f.Word("incb x7, all, mul #4")
	f.Op("CMP R25, R7")
	f.Op("BLT adloop")
	nextHeads(f)
}

// bcast4 broadcasts the four f32 at [xN] into z(first)…z(first+3).
func bcast4(f *a64.File, first, n int) {
	for i := range 4 {
		if i == 0 {
			f.Word("ld1rw {z%d.s}, p4/z, [x%d]", first, n)
		} else {
			f.Word("ld1rw {z%d.s}, p4/z, [x%d, #%d]", first+i, n, 4*i)
		}
	}
}

// sveKey is neonKey's SVE form: v's chunk into z0–z3, pt[j][h] into
// z4–z7, acc_h += pt[j][h]·v_j under p0–p3.
func sveKey(f *a64.File) {
	f.Ld1w(0, 0, 14, 4)
	bcast4(f, 4, 13)
	f.Op("ADD $%d, R14, R14", f32.row())
	f.Op("ADD R6, R13, R13")
	for i := range 4 {
		for j := range 4 {
			f.Word("fmla z%d.s, p%d/m, z%d.s, z%d.s", 16+4*i+j, j, j, 4+i)
		}
	}
}
