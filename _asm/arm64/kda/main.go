//go:generate go run . -isa neon -out ../../../kernels/kda/kda_neon_arm64.s
//go:generate go run . -isa sve -out ../../../kernels/kda/kda_sve_arm64.s

// Command kda generates kernels/kda's arm64 assembly of the KDA recurrence
// (see kda_arm64.go for the Go semantics), one skeleton for NEON (strips
// of 16 value columns) and SVE (strips of up to four vectors, predicated).
package main

import (
	"flag"
	"log"

	"github.com/ktune/ktune/_asm/internal/a64"
)

func main() {
	isa := flag.String("isa", "neon", "neon or sve")
	out := flag.String("out", "", "output .s file")
	flag.Parse()
	var f *a64.File
	switch *isa {
	case "neon":
		f = a64.NewFile("arm64 && gc && !purego",
			"NEON KDA recurrence over strips of 16 value columns (see kda_arm64.go",
			"for the Go semantics). Vector FMUL/FSUB are WORD-encoded.")
		strips(f)
	case "sve":
		f = a64.NewFile("arm64 && gc && !purego",
			"SVE KDA recurrence, vector-length agnostic (see kda_arm64.go for the",
			"Go semantics): a strip of value columns is covered by up to four",
			"vectors whose predicates (WHILELO against the strip's width) switch",
			"off the lanes beyond it, so the same code runs at 128…2048 bits and",
			"the V mod strip tail is one more, narrower strip instead of Go code.",
			"Every SVE instruction is WORD-encoded.")
		stripsSVE(f)
	default:
		log.Fatalf("-isa %q: neon or sve", *isa)
	}
	if err := f.WriteFile(*out); err != nil {
		log.Fatal(err)
	}
}

// quad runs fn for the four vectors of a 16-column strip.
func quad(fn func(j int)) {
	for j := range 4 {
		fn(j)
	}
}

// args loads the arguments both forms share, up to o (R7), beta into F10.
func args(f *a64.File) {
	f.Args("s+0(FP), R0", "lds+8(FP), R1", "k+16(FP), R2", "alpha+24(FP), R3", "kk+32(FP), R4", "qs+40(FP), R5", "v+48(FP), R6")
	f.Op("FMOVS beta+56(FP), F10")
	f.Op("MOVD o+64(FP), R7")
}

// Notes on the steps of a strip, the same in both forms.
const (
	phase1Note = "phase 1: p = Σ_i kk[i]·(alpha[i]·S[i, strip])"
	uNote      = "u = beta·(v − p)"
	phase2Note = "phase 2: S = alpha·S + kk·u; o = Σ_i qs[i]·S[i, strip]"
)

// rowLoop starts a pass over the k rows of the strip (loop label): R9 at
// S, R10 and R11 at alpha and kk, R13 at qs when qs, R12 the rows left.
func rowLoop(f *a64.File, qs bool, label string) {
	f.Op("MOVD R0, R9")
	f.Op("MOVD R3, R10")
	f.Op("MOVD R4, R11")
	if qs {
		f.Op("MOVD R5, R13")
	}
	f.Op("MOVD R2, R12")
	f.Label(label)
}

// nextRow ends a pass's iteration: R9 a row of S on, the scalar cursors
// ptrs 4 bytes on, loop to label while rows are left.
func nextRow(f *a64.File, label string, ptrs ...int) {
	f.Op("ADD R1, R9, R9")
	for _, p := range ptrs {
		f.Op("ADD $4, R%d, R%d", p, p)
	}
	f.Op("SUBS $1, R12, R12")
	f.Op("BNE %s", label)
}

// strips writes kdaStripsNEON_16: for each strip of 16 value columns of
// the state S [k][lds], p = Σ_i kk[i]·(alpha[i]·S[i]), u = beta·(v − p),
// then S[i] = alpha[i]·S[i] + kk[i]·u and o = Σ_i qs[i]·S[i].
//
// Registers: V0–V3 p then u, V4–V7 a row of the strip, V8 alpha[i], V9
// kk[i], V10 beta, V11 qs[i], V12–V15 v, V16–V19 o.
func strips(f *a64.File) {
	f.Func("kdaStripsNEON_16", "(s *float32, lds int, k int, alpha *float32, kk *float32, qs *float32, v *float32, beta float32, o *float32, nstrips int)", "$0-80")
	args(f)
	f.Op("MOVD nstrips+72(FP), R8")
	f.Op("LSL $2, R1, R1") // lds in bytes
	f.Op("VDUP V10.S[0], V10.S4")

	f.Label("strip")
	f.Note(phase1Note)
	f.ZeroV(0, 4)
	rowLoop(f, false, "p1")
	neonRow(f)
	quad(func(j int) { f.Op("VFMLA V9.S4, V%d.S4, V%d.S4", 4+j, j) })
	nextRow(f, "p1")

	f.Blank()
	f.Note(uNote)
	f.Op("VLD1.P 64(R6), [V12.S4, V13.S4, V14.S4, V15.S4]")
	quad(func(j int) { f.Word("fsub v%d.4s, v%d.4s, v%d.4s", 12+j, 12+j, j) })
	quad(func(j int) { f.Word("fmul v%d.4s, v%d.4s, v10.4s", j, 12+j) })

	f.Blank()
	neonPhase2(f)

	f.Blank()
	f.Op("VST1.P [V16.S4, V17.S4, V18.S4, V19.S4], 64(R7)")
	f.Op("ADD $64, R0, R0")
	f.Op("SUBS $1, R8, R8")
	f.Op("BNE strip")
	f.Op("RET")
}

// neonRow loads S[i, strip] into V4–V7 and the scalars of row i (alpha
// into V8, kk into V9, then the extra loads), scales the row by alpha[i].
func neonRow(f *a64.File, extra ...string) {
	f.Op("VLD1 (R9), [V4.S4, V5.S4, V6.S4, V7.S4]")
	f.Op("VLD1R.P 4(R10), [V8.S4]")
	f.Op("VLD1R.P 4(R11), [V9.S4]")
	for _, e := range extra {
		f.Op("%s", e)
	}
	quad(func(j int) { f.Word("fmul v%d.4s, v%d.4s, v8.4s", 4+j, 4+j) })
}

// neonPhase2 writes phase 2 (loop p2): S[i] = alpha[i]·S[i] + kk[i]·u
// stored back, o (V16–V19) += qs[i]·S[i].
func neonPhase2(f *a64.File) {
	f.Note(phase2Note)
	f.ZeroV(16, 4)
	rowLoop(f, true, "p2")
	neonRow(f, "VLD1R.P 4(R13), [V11.S4]")
	quad(func(j int) { f.Op("VFMLA V9.S4, V%d.S4, V%d.S4", j, 4+j) })
	f.Op("VST1 [V4.S4, V5.S4, V6.S4, V7.S4], (R9)")
	quad(func(j int) { f.Op("VFMLA V11.S4, V%d.S4, V%d.S4", 4+j, 16+j) })
	nextRow(f, "p2")
}

// stripsSVE writes kdaStripsSVE: strips as above, predicated vectors
// p0–p3 covering min(strip, columns left) columns (z registers as the
// NEON v ones; p4 all lanes for the broadcasts).
func stripsSVE(f *a64.File) {
	f.Func("kdaStripsSVE", "(s *float32, lds int, k int, alpha *float32, kk *float32, qs *float32, v *float32, beta float32, o *float32, ncols int, strip int)", "$0-88")
	sveProlog(f)

	f.Label("strip")
	f.Note("w = min(strip, columns left); p0..p3: lanes of columns [i·VL/32, (i+1)·VL/32) ∩ [0, w)")
	f.Op("CMP R14, R8")
	f.Op("CSEL LT, R8, R14, R16")
	f.Op("MOVD $0, R9")
	f.WhileLo("s", 0, 4, 9, 16)

	f.Blank()
	f.Note(phase1Note)
	f.ZeroZ(0, 4)
	rowLoop(f, false, "p1")
	sveRow(f)
	quad(func(j int) { f.Word("fmla z%d.s, p%d/m, z%d.s, z9.s", j, j, 4+j) })
	nextRow(f, "p1", 10, 11)

	f.Blank()
	f.Note(uNote)
	f.Ld1w(12, 0, 6, 4)
	quad(func(j int) { f.Word("fsub z%d.s, z%d.s, z%d.s", 12+j, 12+j, j) })
	quad(func(j int) { f.Word("fmul z%d.s, z%d.s, z10.s", j, 12+j) })

	f.Blank()
	svePhase2(f)

	f.Blank()
	sveNextStrip(f)
	f.Label("done")
	f.Op("RET")
}

// sveProlog loads the arguments, broadcasts beta into z10, sets p4,
// clamps the strip (R14) to four vectors and leaves for done when there
// are no columns or rows.
func sveProlog(f *a64.File) {
	args(f)
	f.Op("MOVD ncols+72(FP), R8")
	f.Op("MOVD strip+80(FP), R14")
	f.Op("LSL $2, R1, R1")
	f.Word("dup z10.s, z10.s[0]")
	f.Word("ptrue p4.s")
	f.Note("the strip is at most four vectors: strip = min(strip, 4·VL/32)")
	f.Word("cntw x15")
	f.Op("LSL $2, R15, R15")
	f.Op("CMP R15, R14")
	f.Op("CSEL GT, R15, R14, R14")
	f.Op("CBZ R8, done")
	f.Op("CBZ R2, done")
}

// sveRow is neonRow's SVE form: S[i, strip] into z4–z7 under p0–p3, the
// scalars broadcast (z8 alpha, z9 kk, then the extra loads).
func sveRow(f *a64.File, extra ...string) {
	f.Ld1w(4, 0, 9, 4)
	f.Word("ld1rw {z8.s}, p4/z, [x10]")
	f.Word("ld1rw {z9.s}, p4/z, [x11]")
	for _, e := range extra {
		f.Word("%s", e)
	}
	quad(func(j int) { f.Word("fmul z%d.s, z%d.s, z8.s", 4+j, 4+j) })
}

// svePhase2 is neonPhase2's SVE form.
func svePhase2(f *a64.File) {
	f.Note(phase2Note)
	f.ZeroZ(16, 4)
	rowLoop(f, true, "p2")
	sveRow(f, "ld1rw {z11.s}, p4/z, [x13]")
	quad(func(j int) { f.Word("fmla z%d.s, p%d/m, z%d.s, z9.s", 4+j, j, j) })
	f.St1w(4, 0, 9, 4)
	quad(func(j int) { f.Word("fmla z%d.s, p%d/m, z%d.s, z11.s", 16+j, j, 4+j) })
	nextRow(f, "p2", 10, 11, 13)
}

// sveNextStrip stores o (z16–z19) and moves S, v and o the strip's w
// columns (R16) on, looping while columns are left.
func sveNextStrip(f *a64.File) {
	f.St1w(16, 0, 7, 4)
	f.Op("LSL $2, R16, R17")
	f.Op("ADD R17, R0, R0")
	f.Op("ADD R17, R6, R6")
	f.Op("ADD R17, R7, R7")
	f.Op("SUBS R16, R8, R8")
	f.Op("BNE strip")
}
