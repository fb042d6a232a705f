//go:generate go run . -kind neon -out ../../../kernels/gemm/gemm_neon_arm64.s

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
	kind := flag.String("kind", "", "neon")
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
	default:
		log.Fatalf("-kind %q: neon", *kind)
	}
	if err := f.WriteFile(*out); err != nil {
		log.Fatal(err)
	}
}

// vecs4 is the register list of four consecutive vectors from V(first).
func vecs4(first int) string {
	return fmt.Sprintf("[V%d.S4, V%d.S4, V%d.S4, V%d.S4]", first, first+1, first+2, first+3)
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
		f.Op("VLD1 (%s), %s", cRow[r], vecs4(16+4*r))
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
	f.Op("VLD1.P 64(R3), %s", vecs4(0))
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
		f.Op("VST1 %s, (%s)", vecs4(16+4*r), cRow[r])
	}
	f.Op("RET")
}
