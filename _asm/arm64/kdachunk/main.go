//go:generate go run . -isa neon -out ../../../kernels/kda/kdachunk_neon_arm64.s

// Command kdachunk generates the GEMM tile of kernels/kda's chunked
// prefill for arm64 (see kdachunk_arm64.go for the Go semantics and
// kdachunk_gemm.go for the driver).
package main

import (
	"flag"
	"fmt"
	"log"

	"github.com/ktune/ktune/_asm/internal/a64"
)

func main() {
	isa := flag.String("isa", "neon", "neon")
	out := flag.String("out", "", "output .s file")
	flag.Parse()
	if *isa != "neon" {
		log.Fatalf("-isa %q: neon", *isa)
	}
	f := a64.NewFile("arm64 && gc && !purego",
		"NEON GEMM tile of the chunked KDA prefill (see kdachunk_arm64.go for",
		"the Go semantics and kdachunk_gemm.go for the driver). Only VFMLA,",
		"VLD1/VLD1R/VST1 and VEOR: no WORD encodings.")
	gemmNEON(f)
	if err := f.WriteFile(*out); err != nil {
		log.Fatal(err)
	}
}

// quad is the register list of four consecutive vectors from V(first).
func quad(first int) string {
	return fmt.Sprintf("[V%d.S4, V%d.S4, V%d.S4, V%d.S4]", first, first+1, first+2, first+3)
}

// gemmNEON writes kdacGemmNEON_16: c [m][16·nb] += alpha·a [m][k]·b
// [k][16·nb], a 4-row × 16-column tile, then single rows.
func gemmNEON(f *a64.File) {
	f.Func("kdacGemmNEON_16", "(c *float32, ldc int, a *float32, lda int, b *float32, ldb int, m int, k int, nb int, alpha float32)", "$0-76")
	f.Note("Registers: R0 c, R1 ldc·4, R2 a, R3 lda·4, R4 b, R5 ldb·4, R6 m, R7 k,")
	f.Note("R8 column blocks left; per tile R9 c row, R10 a row, R11 rows left,")
	f.Note("R12 b row, R13–R16 a cursors, R17 k left. V0–V15 the 4×16 accumulators,")
	f.Note("V16–V19 a row of b, V20–V23 broadcast a, V24 alpha, V25–V28 c.")
	for _, a := range []string{"c+0(FP), R0", "ldc+8(FP), R1", "a+16(FP), R2", "lda+24(FP), R3", "b+32(FP), R4", "ldb+40(FP), R5", "m+48(FP), R6", "k+56(FP), R7", "nb+64(FP), R8"} {
		f.Op("MOVD %s", a)
	}
	f.Op("FMOVS alpha+72(FP), F24")
	f.Op("VDUP V24.S[0], V24.S4")
	f.Op("CBZ R6, done")
	f.Op("CBZ R7, done")
	f.Op("CBZ R8, done")
	f.Op("LSL $2, R1, R1")
	f.Op("LSL $2, R3, R3")
	f.Op("LSL $2, R5, R5")
	f.OpC("4 rows of c", "LSL $2, R1, R19")
	f.OpC("4 rows of a", "LSL $2, R3, R20")

	zero := func(n int) {
		for v := range n {
			f.Op("VEOR V%d.B16, V%d.B16, V%d.B16", v, v, v)
		}
	}
	// kstep: a row of b, the rows' a broadcast, acc_i += a_i·b
	kstep := func(rows int) {
		f.Op("VLD1 (R12), %s", quad(16))
		f.Op("ADD R5, R12, R12")
		for i := range rows {
			f.Op("VLD1R.P 4(R%d), [V%d.S4]", 13+i, 20+i)
		}
		for i := range rows {
			for j := range 4 {
				f.Op("VFMLA V%d.S4, V%d.S4, V%d.S4", 20+i, 16+j, 4*i+j)
			}
		}
		f.Op("SUBS $1, R17, R17")
	}
	// store adds alpha·acc_i to the row of c at [reg]
	store := func(i int, reg string) {
		f.Op("VLD1 (%s), %s", reg, quad(25))
		for j := range 4 {
			f.Op("VFMLA V24.S4, V%d.S4, V%d.S4", 4*i+j, 25+j)
		}
		f.Op("VST1 %s, (%s)", quad(25), reg)
	}

	f.Label("colblk")
	f.Op("MOVD R0, R9")
	f.Op("MOVD R2, R10")
	f.Op("MOVD R6, R11")
	f.Op("CMP $4, R11")
	f.Op("BLT rows1")

	f.Label("rows4")
	zero(16)
	f.Op("MOVD R4, R12")
	f.Op("MOVD R10, R13")
	f.Op("ADD R3, R13, R14")
	f.Op("ADD R3, R14, R15")
	f.Op("ADD R3, R15, R16")
	f.Op("MOVD R7, R17")
	f.Label("k4")
	kstep(4)
	f.Op("BNE k4")
	f.Blank()
	f.Note("c[i, 0:16] += alpha·acc_i")
	f.Op("MOVD R9, R13")
	for i := range 4 {
		if i > 0 {
			f.Op("ADD R1, R13, R13")
		}
		store(i, "R13")
	}
	f.Op("ADD R19, R9, R9")
	f.Op("ADD R20, R10, R10")
	f.Op("SUB $4, R11, R11")
	f.Op("CMP $4, R11")
	f.Op("BGE rows4")

	f.Label("rows1")
	f.Op("CBZ R11, nextcol")
	f.Label("row1")
	zero(4)
	f.Op("MOVD R4, R12")
	f.Op("MOVD R10, R13")
	f.Op("MOVD R7, R17")
	f.Label("k1")
	kstep(1)
	f.Op("BNE k1")
	f.Blank()
	store(0, "R9")
	f.Op("ADD R1, R9, R9")
	f.Op("ADD R3, R10, R10")
	f.Op("SUBS $1, R11, R11")
	f.Op("BNE row1")

	f.Label("nextcol")
	f.Op("ADD $64, R0, R0")
	f.Op("ADD $64, R4, R4")
	f.Op("SUBS $1, R8, R8")
	f.Op("BNE colblk")

	f.Label("done")
	f.Op("RET")
}
