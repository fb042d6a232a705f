//go:generate go run . -isa neon -out ../../../kernels/kda/kdachunk_neon_arm64.s
//go:generate go run . -isa sve -out ../../../kernels/kda/kdachunk_sve_arm64.s

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
	isa := flag.String("isa", "neon", "neon or sve")
	out := flag.String("out", "", "output .s file")
	flag.Parse()
	var f *a64.File
	switch *isa {
	case "neon":
		f = a64.NewFile("arm64 && gc && !purego",
			"NEON GEMM tile of the chunked KDA prefill (see kdachunk_arm64.go for",
			"the Go semantics and kdachunk_gemm.go for the driver). Only VFMLA,",
			"VLD1/VLD1R/VST1 and VEOR: no WORD encodings.")
		gemmNEON(f)
	case "sve":
		f = a64.NewFile("arm64 && gc && !purego",
			"SVE GEMM tile of the chunked KDA prefill, vector-length agnostic (see",
			"kdachunk_arm64.go for the Go semantics and kdachunk_gemm.go for the",
			"driver). A block of columns is four vectors wide (16 columns at 128",
			"bits, 64 at 512); their predicates (WHILELO against the columns left)",
			"switch off the lanes beyond n, so the same code runs at 128…2048 bits",
			"and the n mod block tail is one more, narrower block instead of Go",
			"code. The a operand comes a quadword at a time (LD1RQW: a[i, p:p+4] in",
			"every 128-bit segment) and multiplies the rows of b through indexed",
			"FMLA, four k steps per load; the k mod 4 last steps load one element",
			"(predicate VL1). Every SVE instruction is WORD-encoded.")
		gemmSVE(f)
	default:
		log.Fatalf("-isa %q: neon or sve", *isa)
	}
	if err := f.WriteFile(*out); err != nil {
		log.Fatal(err)
	}
}

// colLoop writes the skeleton both forms share, from the colblk label to
// RET: per block of columns (blockStart first, nil for none) 4-row tiles
// while four rows are left, then 1-row tiles; nextBlock moves c and b on
// to the next block and loops.
//
// Registers: R9 c row, R10 a row, R11 rows left; R19 and R20 four rows
// of c and of a (bytes).
func colLoop(f *a64.File, blockStart func(f *a64.File), tile func(f *a64.File, rows int), nextBlock func(f *a64.File)) {
	f.Label("colblk")
	if blockStart != nil {
		blockStart(f)
	}
	f.Op("MOVD R0, R9")
	f.Op("MOVD R2, R10")
	f.Op("MOVD R6, R11")
	f.Op("CMP $4, R11")
	f.Op("BLT rows1")

	f.Label("rows4")
	tile(f, 4)
	f.Op("ADD R19, R9, R9")
	f.Op("ADD R20, R10, R10")
	f.Op("SUB $4, R11, R11")
	f.Op("CMP $4, R11")
	f.Op("BGE rows4")

	f.Label("rows1")
	f.Op("CBZ R11, nextcol")
	f.Label("row1")
	tile(f, 1)
	f.Op("ADD R1, R9, R9")
	f.Op("ADD R3, R10, R10")
	f.Op("SUBS $1, R11, R11")
	f.Op("BNE row1")

	f.Label("nextcol")
	nextBlock(f)

	f.Label("done")
	f.Op("RET")
}

// strides turns ldc, lda and ldb into bytes (R1, R3, R5) and sets R19
// and R20 to four rows of c and of a.
func strides(f *a64.File) {
	f.Op("LSL $2, R1, R1")
	f.Op("LSL $2, R3, R3")
	f.Op("LSL $2, R5, R5")
	f.OpC("4 rows of c", "LSL $2, R1, R19")
	f.OpC("4 rows of a", "LSL $2, R3, R20")
}

// tileCursors points R12 at b and R13… at the tile's rows rows of a
// (from R10, lda·4 apart).
func tileCursors(f *a64.File, rows int) {
	f.Op("MOVD R4, R12")
	f.Op("MOVD R10, R13")
	for i := 1; i < rows; i++ {
		f.Op("ADD R3, R%d, R%d", 12+i, 13+i)
	}
}

// gemmNEON writes kdacGemmNEON_16: c [m][16·nb] += alpha·a [m][k]·b
// [k][16·nb], a 4-row × 16-column tile, then single rows.
func gemmNEON(f *a64.File) {
	f.Func("kdacGemmNEON_16", "(c *float32, ldc int, a *float32, lda int, b *float32, ldb int, m int, k int, nb int, alpha float32)", "$0-76")
	f.Note("Registers: R0 c, R1 ldc·4, R2 a, R3 lda·4, R4 b, R5 ldb·4, R6 m, R7 k,")
	f.Note("R8 column blocks left; per tile R9 c row, R10 a row, R11 rows left,")
	f.Note("R12 b row, R13–R16 a cursors, R17 k left. V0–V15 the 4×16 accumulators,")
	f.Note("V16–V19 a row of b, V20–V23 broadcast a, V24 alpha, V25–V28 c.")
	neonPrologue(f)
	colLoop(f, nil, neonTile, neonNextBlock)
}

// neonPrologue loads the arguments, broadcasts alpha into V24, leaves
// for done when m, k or nb is 0 and sets the strides.
func neonPrologue(f *a64.File) {
	f.Args("c+0(FP), R0", "ldc+8(FP), R1", "a+16(FP), R2", "lda+24(FP), R3", "b+32(FP), R4", "ldb+40(FP), R5", "m+48(FP), R6", "k+56(FP), R7", "nb+64(FP), R8")
	f.Op("FMOVS alpha+72(FP), F24")
	f.Op("VDUP V24.S[0], V24.S4")
	f.Op("CBZ R6, done")
	f.Op("CBZ R7, done")
	f.Op("CBZ R8, done")
	strides(f)
}

// neonTile writes a rows-row NEON tile (loop label k<rows>): the
// accumulators V0… cleared, the k loop, then c += alpha·acc.
func neonTile(f *a64.File, rows int) {
	f.ZeroV(0, 4*rows)
	tileCursors(f, rows)
	f.Op("MOVD R7, R17")
	f.Label(fmt.Sprint("k", rows))
	neonKStep(f, rows)
	f.Op("BNE k%d", rows)
	f.Blank()
	if rows == 1 {
		neonStore(f, 0, "R9")
		return
	}
	f.Note("c[i, 0:16] += alpha·acc_i")
	f.Op("MOVD R9, R13")
	for i := range rows {
		if i > 0 {
			f.Op("ADD R1, R13, R13")
		}
		neonStore(f, i, "R13")
	}
}

// neonKStep writes one k step: a row of b into V16–V19, each row's a
// broadcast into V20…, acc_i += a_i·b; R17 counted down (flags set).
func neonKStep(f *a64.File, rows int) {
	f.Op("VLD1 (R12), %s", a64.V4(16, "S4"))
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

// neonStore adds alpha·acc_i (V4i…) to the row of c at [reg].
func neonStore(f *a64.File, i int, reg string) {
	f.Op("VLD1 (%s), %s", reg, a64.V4(25, "S4"))
	for j := range 4 {
		f.Op("VFMLA V24.S4, V%d.S4, V%d.S4", 4*i+j, 25+j)
	}
	f.Op("VST1 %s, (%s)", a64.V4(25, "S4"), reg)
}

// neonNextBlock moves c and b 16 columns on, for the next block.
func neonNextBlock(f *a64.File) {
	f.Op("ADD $64, R0, R0")
	f.Op("ADD $64, R4, R4")
	f.Op("SUBS $1, R8, R8")
	f.Op("BNE colblk")
}

// gemmSVE writes kdacGemmSVE: c [m][n] += alpha·a [m][k]·b [k][n] in
// blocks of four predicated vectors of columns, 4-row then 1-row tiles.
//
// Registers: R0 c, R1 ldc·4, R2 a, R3 lda·4, R4 b, R5 ldb·4, R6 m, R7
// columns left, R8 k, R21 k rounded down to 4, R19 4·ldc·4, R20 4·lda·4,
// R22 bytes per column block (4·VL/8), R23 columns per block; per tile R9
// c row, R10 a row, R11 rows left, R12 b row, R13–R16 a rows, R17 p (k
// index), R24 c cursor. Z0–Z3 a quadwords (indexed FMLA takes z0–z7),
// Z4–Z7 a row of b, Z8–Z23 the 4×4-vector accumulators, Z24 alpha,
// Z25–Z28 c; P0–P3 the column predicates, P4 all lanes, P5 element 0.
func gemmSVE(f *a64.File) {
	f.Func("kdacGemmSVE", "(c *float32, ldc int, a *float32, lda int, b *float32, ldb int, m int, n int, k int, alpha float32)", "$0-76")
	svePrologue(f)
	colLoop(f, sveBlockPreds, sveTile, sveNextBlock)
}

// svePrologue loads the arguments, leaves for done when m, n or k is not
// positive, broadcasts alpha into z24, sets p4 and p5, the block size
// (R22, R23), the strides and R21 = k &^ 3.
func svePrologue(f *a64.File) {
	f.Args("c+0(FP), R0", "ldc+8(FP), R1", "a+16(FP), R2", "lda+24(FP), R3", "b+32(FP), R4", "ldb+40(FP), R5", "m+48(FP), R6", "n+56(FP), R7", "k+64(FP), R8")
	f.Op("FMOVS alpha+72(FP), F24")
	for _, r := range []int{6, 7, 8} {
		f.Op("CMP $0, R%d", r)
		f.Op("BLE done")
	}
	f.Word("dup z24.s, z24.s[0]")
	f.Word("ptrue p4.s")
	f.Word("ptrue p5.s, vl1")
	f.Word("cntw x23")
	f.OpC("columns per block: four vectors", "LSL $2, R23, R23")
	f.Op("LSL $2, R23, R22")
	strides(f)
	f.Op("AND $~3, R8, R21")
}

// sveBlockPreds sets p0–p3 to the block's columns left of n.
func sveBlockPreds(f *a64.File) {
	f.Note("p0..p3: the lanes of columns [j + i·VL/32, j + (i+1)·VL/32) ∩ [j, n)")
	f.Op("MOVD $0, R9")
	f.WhileLo("s", 0, 4, 9, 7)
}

// sveTile writes a rows-row SVE tile (labels k<rows>, tail<rows>,
// store<rows>): the accumulators z8… cleared, the k loop, then c +=
// alpha·acc.
func sveTile(f *a64.File, rows int) {
	f.ZeroZ(8, 4*rows)
	tileCursors(f, rows)
	sveKQuads(f, rows)
	sveKTail(f, rows)
	f.Label(fmt.Sprint("store", rows))
	if rows == 1 {
		sveStore(f, 0, 9)
		return
	}
	f.Note("c[i, block] += alpha·acc_i")
	f.Op("MOVD R9, R24")
	for i := range rows {
		sveStore(f, i, 24)
		if i < rows-1 {
			f.Op("ADD R1, R24, R24")
		}
	}
}

// sveKQuads writes the k loop's main part (label k<rows>): four k steps
// per quadword load of a, while four are left.
func sveKQuads(f *a64.File, rows int) {
	f.Op("MOVD $0, R17")
	f.Op("CBZ R21, tail%d", rows)
	f.Label(fmt.Sprint("k", rows))
	if rows == 4 {
		f.Note("a[i, p:p+4] in every quadword of z0..z3; four rows of b, one per p")
	}
	sveQuadwords(f, rows, "p4")
	for e := range 4 {
		sveBRow(f)
		sveFmla(f, rows, e)
	}
	f.Op("ADD $4, R17, R17")
	f.Op("CMP R21, R17")
	f.Op("BLT k%d", rows)
}

// sveKTail writes the k mod 4 last steps (label tail<rows>), one
// element of a at a time, on to store<rows>.
func sveKTail(f *a64.File, rows int) {
	f.Label(fmt.Sprint("tail", rows))
	if rows == 4 {
		f.Note("the k mod 4 last steps: a[i, p] alone (p5: element 0 of the quadword)")
	}
	f.Op("CMP R8, R17")
	f.Op("BGE store%d", rows)
	sveQuadwords(f, rows, "p5")
	sveBRow(f)
	sveFmla(f, rows, 0)
	f.Op("ADD $1, R17, R17")
	f.Op("B tail%d", rows)
}

// sveBRow loads the next row of b into z4–z7 (post-incrementing R12).
func sveBRow(f *a64.File) {
	f.Ld1w(4, 0, 12, 4)
	f.Op("ADD R5, R12, R12")
}

// sveFmla writes acc_i += b·a_i[e] for the rows i.
func sveFmla(f *a64.File, rows, e int) {
	for i := range rows {
		for j := range 4 {
			f.Word("fmla z%d.s, z%d.s, z%d.s[%d]", 8+4*i+j, 4+j, i, e)
		}
	}
}

// sveQuadwords loads a[i, p:p+4] (pred p4) or a[i, p] alone (p5) into
// z0… for the rows i.
func sveQuadwords(f *a64.File, rows int, pred string) {
	for i := range rows {
		f.Word("ld1rqw {z%d.s}, %s/z, [x%d, x17, lsl #2]", i, pred, 13+i)
	}
}

// sveStore adds alpha·acc_i (z8+4i…) to the block of c at [xN].
func sveStore(f *a64.File, i, n int) {
	f.Ld1w(25, 0, n, 4)
	for j := range 4 {
		f.Word("fmla z%d.s, p%d/m, z%d.s, z24.s", 25+j, j, 8+4*i+j)
	}
	f.St1w(25, 0, n, 4)
}

// sveNextBlock moves c and b a block of columns on and loops while
// columns are left.
func sveNextBlock(f *a64.File) {
	f.Op("ADD R22, R0, R0")
	f.Op("ADD R22, R4, R4")
	f.Op("SUBS R23, R7, R7")
	f.Op("BGT colblk")
}
