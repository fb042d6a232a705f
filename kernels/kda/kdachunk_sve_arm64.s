//go:build arm64 && gc && !purego

// Hand-written SVE GEMM tile of the chunked KDA prefill, vector-length
// agnostic (see kdachunk_arm64.go for the Go semantics and
// kdachunk_gemm.go for the driver). A block of columns is four vectors
// wide (16 columns at 128 bits, 64 at 512); their predicates (WHILELO
// against the columns left) switch off the lanes beyond n, so the same
// code runs at 128…2048 bits and the n mod block tail is one more,
// narrower block instead of Go code. The a operand comes a quadword at a
// time (LD1RQW: a[i, p:p+4] in every 128-bit segment) and multiplies the
// rows of b through indexed FMLA, four k steps per load; the k mod 4 last
// steps load one element (predicate VL1). Every SVE instruction is
// WORD-encoded; the mnemonic comments are checked against GNU as by
// _asm/armwords.

#include "textflag.h"

// func kdacGemmSVE(c *float32, ldc int, a *float32, lda int, b *float32, ldb int, m int, n int, k int, alpha float32)
//
// Registers: R0 c, R1 ldc·4, R2 a, R3 lda·4, R4 b, R5 ldb·4, R6 m, R7
// columns left, R8 k, R21 k rounded down to 4, R19 4·ldc·4, R20 4·lda·4,
// R22 bytes per column block (4·VL/8), R23 columns per block; per tile R9
// c row, R10 a row, R11 rows left, R12 b row, R13–R16 a rows, R17 p (k
// index), R24 c cursor. Z0–Z3 a quadwords (indexed FMLA takes z0–z7),
// Z4–Z7 a row of b, Z8–Z23 the 4×4-vector accumulators, Z24 alpha,
// Z25–Z28 c; P0–P3 the column predicates, P4 all lanes, P5 element 0.
TEXT ·kdacGemmSVE(SB), NOSPLIT, $0-76
	MOVD  c+0(FP), R0
	MOVD  ldc+8(FP), R1
	MOVD  a+16(FP), R2
	MOVD  lda+24(FP), R3
	MOVD  b+32(FP), R4
	MOVD  ldb+40(FP), R5
	MOVD  m+48(FP), R6
	MOVD  n+56(FP), R7
	MOVD  k+64(FP), R8
	FMOVS alpha+72(FP), F24
	CMP   $0, R6
	BLE   done
	CMP   $0, R7
	BLE   done
	CMP   $0, R8
	BLE   done
	WORD  $0x05242318 // dup z24.s, z24.s[0]
	WORD  $0x2598e3e4 // ptrue p4.s
	WORD  $0x2598e025 // ptrue p5.s, vl1
	WORD  $0x04a0e3f7 // cntw x23
	LSL   $2, R23, R23 // columns per block: four vectors
	LSL   $2, R23, R22
	LSL   $2, R1, R1
	LSL   $2, R3, R3
	LSL   $2, R5, R5
	LSL   $2, R1, R19 // 4 rows of c
	LSL   $2, R3, R20 // 4 rows of a
	AND   $~3, R8, R21

colblk:
	// p0..p3: the lanes of columns [j + i·VL/32, j + (i+1)·VL/32) ∩ [j, n)
	MOVD $0, R9
	WORD $0x25a71d20 // whilelo p0.s, x9, x7
	WORD $0x04b0e3e9 // incw x9
	WORD $0x25a71d21 // whilelo p1.s, x9, x7
	WORD $0x04b0e3e9 // incw x9
	WORD $0x25a71d22 // whilelo p2.s, x9, x7
	WORD $0x04b0e3e9 // incw x9
	WORD $0x25a71d23 // whilelo p3.s, x9, x7
	MOVD R0, R9
	MOVD R2, R10
	MOVD R6, R11
	CMP  $4, R11
	BLT  rows1

rows4:
	WORD $0x25b8c008 // dup z8.s, #0
	WORD $0x25b8c009 // dup z9.s, #0
	WORD $0x25b8c00a // dup z10.s, #0
	WORD $0x25b8c00b // dup z11.s, #0
	WORD $0x25b8c00c // dup z12.s, #0
	WORD $0x25b8c00d // dup z13.s, #0
	WORD $0x25b8c00e // dup z14.s, #0
	WORD $0x25b8c00f // dup z15.s, #0
	WORD $0x25b8c010 // dup z16.s, #0
	WORD $0x25b8c011 // dup z17.s, #0
	WORD $0x25b8c012 // dup z18.s, #0
	WORD $0x25b8c013 // dup z19.s, #0
	WORD $0x25b8c014 // dup z20.s, #0
	WORD $0x25b8c015 // dup z21.s, #0
	WORD $0x25b8c016 // dup z22.s, #0
	WORD $0x25b8c017 // dup z23.s, #0
	MOVD R4, R12
	MOVD R10, R13
	ADD  R3, R13, R14
	ADD  R3, R14, R15
	ADD  R3, R15, R16
	MOVD $0, R17
	CBZ  R21, tail4

k4:
	// a[i, p:p+4] in every quadword of z0..z3; four rows of b, one per p
	WORD $0xa51111a0 // ld1rqw {z0.s}, p4/z, [x13, x17, lsl #2]
	WORD $0xa51111c1 // ld1rqw {z1.s}, p4/z, [x14, x17, lsl #2]
	WORD $0xa51111e2 // ld1rqw {z2.s}, p4/z, [x15, x17, lsl #2]
	WORD $0xa5111203 // ld1rqw {z3.s}, p4/z, [x16, x17, lsl #2]
	WORD $0xa540a184 // ld1w {z4.s}, p0/z, [x12]
	WORD $0xa541a585 // ld1w {z5.s}, p1/z, [x12, #1, mul vl]
	WORD $0xa542a986 // ld1w {z6.s}, p2/z, [x12, #2, mul vl]
	WORD $0xa543ad87 // ld1w {z7.s}, p3/z, [x12, #3, mul vl]
	ADD  R5, R12, R12
	WORD $0x64a00088 // fmla z8.s, z4.s, z0.s[0]
	WORD $0x64a000a9 // fmla z9.s, z5.s, z0.s[0]
	WORD $0x64a000ca // fmla z10.s, z6.s, z0.s[0]
	WORD $0x64a000eb // fmla z11.s, z7.s, z0.s[0]
	WORD $0x64a1008c // fmla z12.s, z4.s, z1.s[0]
	WORD $0x64a100ad // fmla z13.s, z5.s, z1.s[0]
	WORD $0x64a100ce // fmla z14.s, z6.s, z1.s[0]
	WORD $0x64a100ef // fmla z15.s, z7.s, z1.s[0]
	WORD $0x64a20090 // fmla z16.s, z4.s, z2.s[0]
	WORD $0x64a200b1 // fmla z17.s, z5.s, z2.s[0]
	WORD $0x64a200d2 // fmla z18.s, z6.s, z2.s[0]
	WORD $0x64a200f3 // fmla z19.s, z7.s, z2.s[0]
	WORD $0x64a30094 // fmla z20.s, z4.s, z3.s[0]
	WORD $0x64a300b5 // fmla z21.s, z5.s, z3.s[0]
	WORD $0x64a300d6 // fmla z22.s, z6.s, z3.s[0]
	WORD $0x64a300f7 // fmla z23.s, z7.s, z3.s[0]
	WORD $0xa540a184 // ld1w {z4.s}, p0/z, [x12]
	WORD $0xa541a585 // ld1w {z5.s}, p1/z, [x12, #1, mul vl]
	WORD $0xa542a986 // ld1w {z6.s}, p2/z, [x12, #2, mul vl]
	WORD $0xa543ad87 // ld1w {z7.s}, p3/z, [x12, #3, mul vl]
	ADD  R5, R12, R12
	WORD $0x64a80088 // fmla z8.s, z4.s, z0.s[1]
	WORD $0x64a800a9 // fmla z9.s, z5.s, z0.s[1]
	WORD $0x64a800ca // fmla z10.s, z6.s, z0.s[1]
	WORD $0x64a800eb // fmla z11.s, z7.s, z0.s[1]
	WORD $0x64a9008c // fmla z12.s, z4.s, z1.s[1]
	WORD $0x64a900ad // fmla z13.s, z5.s, z1.s[1]
	WORD $0x64a900ce // fmla z14.s, z6.s, z1.s[1]
	WORD $0x64a900ef // fmla z15.s, z7.s, z1.s[1]
	WORD $0x64aa0090 // fmla z16.s, z4.s, z2.s[1]
	WORD $0x64aa00b1 // fmla z17.s, z5.s, z2.s[1]
	WORD $0x64aa00d2 // fmla z18.s, z6.s, z2.s[1]
	WORD $0x64aa00f3 // fmla z19.s, z7.s, z2.s[1]
	WORD $0x64ab0094 // fmla z20.s, z4.s, z3.s[1]
	WORD $0x64ab00b5 // fmla z21.s, z5.s, z3.s[1]
	WORD $0x64ab00d6 // fmla z22.s, z6.s, z3.s[1]
	WORD $0x64ab00f7 // fmla z23.s, z7.s, z3.s[1]
	WORD $0xa540a184 // ld1w {z4.s}, p0/z, [x12]
	WORD $0xa541a585 // ld1w {z5.s}, p1/z, [x12, #1, mul vl]
	WORD $0xa542a986 // ld1w {z6.s}, p2/z, [x12, #2, mul vl]
	WORD $0xa543ad87 // ld1w {z7.s}, p3/z, [x12, #3, mul vl]
	ADD  R5, R12, R12
	WORD $0x64b00088 // fmla z8.s, z4.s, z0.s[2]
	WORD $0x64b000a9 // fmla z9.s, z5.s, z0.s[2]
	WORD $0x64b000ca // fmla z10.s, z6.s, z0.s[2]
	WORD $0x64b000eb // fmla z11.s, z7.s, z0.s[2]
	WORD $0x64b1008c // fmla z12.s, z4.s, z1.s[2]
	WORD $0x64b100ad // fmla z13.s, z5.s, z1.s[2]
	WORD $0x64b100ce // fmla z14.s, z6.s, z1.s[2]
	WORD $0x64b100ef // fmla z15.s, z7.s, z1.s[2]
	WORD $0x64b20090 // fmla z16.s, z4.s, z2.s[2]
	WORD $0x64b200b1 // fmla z17.s, z5.s, z2.s[2]
	WORD $0x64b200d2 // fmla z18.s, z6.s, z2.s[2]
	WORD $0x64b200f3 // fmla z19.s, z7.s, z2.s[2]
	WORD $0x64b30094 // fmla z20.s, z4.s, z3.s[2]
	WORD $0x64b300b5 // fmla z21.s, z5.s, z3.s[2]
	WORD $0x64b300d6 // fmla z22.s, z6.s, z3.s[2]
	WORD $0x64b300f7 // fmla z23.s, z7.s, z3.s[2]
	WORD $0xa540a184 // ld1w {z4.s}, p0/z, [x12]
	WORD $0xa541a585 // ld1w {z5.s}, p1/z, [x12, #1, mul vl]
	WORD $0xa542a986 // ld1w {z6.s}, p2/z, [x12, #2, mul vl]
	WORD $0xa543ad87 // ld1w {z7.s}, p3/z, [x12, #3, mul vl]
	ADD  R5, R12, R12
	WORD $0x64b80088 // fmla z8.s, z4.s, z0.s[3]
	WORD $0x64b800a9 // fmla z9.s, z5.s, z0.s[3]
	WORD $0x64b800ca // fmla z10.s, z6.s, z0.s[3]
	WORD $0x64b800eb // fmla z11.s, z7.s, z0.s[3]
	WORD $0x64b9008c // fmla z12.s, z4.s, z1.s[3]
	WORD $0x64b900ad // fmla z13.s, z5.s, z1.s[3]
	WORD $0x64b900ce // fmla z14.s, z6.s, z1.s[3]
	WORD $0x64b900ef // fmla z15.s, z7.s, z1.s[3]
	WORD $0x64ba0090 // fmla z16.s, z4.s, z2.s[3]
	WORD $0x64ba00b1 // fmla z17.s, z5.s, z2.s[3]
	WORD $0x64ba00d2 // fmla z18.s, z6.s, z2.s[3]
	WORD $0x64ba00f3 // fmla z19.s, z7.s, z2.s[3]
	WORD $0x64bb0094 // fmla z20.s, z4.s, z3.s[3]
	WORD $0x64bb00b5 // fmla z21.s, z5.s, z3.s[3]
	WORD $0x64bb00d6 // fmla z22.s, z6.s, z3.s[3]
	WORD $0x64bb00f7 // fmla z23.s, z7.s, z3.s[3]
	ADD  $4, R17, R17
	CMP  R21, R17
	BLT  k4

tail4:
	// the k mod 4 last steps: a[i, p] alone (p5: element 0 of the quadword)
	CMP  R8, R17
	BGE  store4
	WORD $0xa51115a0 // ld1rqw {z0.s}, p5/z, [x13, x17, lsl #2]
	WORD $0xa51115c1 // ld1rqw {z1.s}, p5/z, [x14, x17, lsl #2]
	WORD $0xa51115e2 // ld1rqw {z2.s}, p5/z, [x15, x17, lsl #2]
	WORD $0xa5111603 // ld1rqw {z3.s}, p5/z, [x16, x17, lsl #2]
	WORD $0xa540a184 // ld1w {z4.s}, p0/z, [x12]
	WORD $0xa541a585 // ld1w {z5.s}, p1/z, [x12, #1, mul vl]
	WORD $0xa542a986 // ld1w {z6.s}, p2/z, [x12, #2, mul vl]
	WORD $0xa543ad87 // ld1w {z7.s}, p3/z, [x12, #3, mul vl]
	ADD  R5, R12, R12
	WORD $0x64a00088 // fmla z8.s, z4.s, z0.s[0]
	WORD $0x64a000a9 // fmla z9.s, z5.s, z0.s[0]
	WORD $0x64a000ca // fmla z10.s, z6.s, z0.s[0]
	WORD $0x64a000eb // fmla z11.s, z7.s, z0.s[0]
	WORD $0x64a1008c // fmla z12.s, z4.s, z1.s[0]
	WORD $0x64a100ad // fmla z13.s, z5.s, z1.s[0]
	WORD $0x64a100ce // fmla z14.s, z6.s, z1.s[0]
	WORD $0x64a100ef // fmla z15.s, z7.s, z1.s[0]
	WORD $0x64a20090 // fmla z16.s, z4.s, z2.s[0]
	WORD $0x64a200b1 // fmla z17.s, z5.s, z2.s[0]
	WORD $0x64a200d2 // fmla z18.s, z6.s, z2.s[0]
	WORD $0x64a200f3 // fmla z19.s, z7.s, z2.s[0]
	WORD $0x64a30094 // fmla z20.s, z4.s, z3.s[0]
	WORD $0x64a300b5 // fmla z21.s, z5.s, z3.s[0]
	WORD $0x64a300d6 // fmla z22.s, z6.s, z3.s[0]
	WORD $0x64a300f7 // fmla z23.s, z7.s, z3.s[0]
	ADD  $1, R17, R17
	B    tail4

store4:
	// c[i, block] += alpha·acc_i
	MOVD R9, R24
	WORD $0xa540a319 // ld1w {z25.s}, p0/z, [x24]
	WORD $0xa541a71a // ld1w {z26.s}, p1/z, [x24, #1, mul vl]
	WORD $0xa542ab1b // ld1w {z27.s}, p2/z, [x24, #2, mul vl]
	WORD $0xa543af1c // ld1w {z28.s}, p3/z, [x24, #3, mul vl]
	WORD $0x65b80119 // fmla z25.s, p0/m, z8.s, z24.s
	WORD $0x65b8053a // fmla z26.s, p1/m, z9.s, z24.s
	WORD $0x65b8095b // fmla z27.s, p2/m, z10.s, z24.s
	WORD $0x65b80d7c // fmla z28.s, p3/m, z11.s, z24.s
	WORD $0xe540e319 // st1w {z25.s}, p0, [x24]
	WORD $0xe541e71a // st1w {z26.s}, p1, [x24, #1, mul vl]
	WORD $0xe542eb1b // st1w {z27.s}, p2, [x24, #2, mul vl]
	WORD $0xe543ef1c // st1w {z28.s}, p3, [x24, #3, mul vl]
	ADD  R1, R24, R24
	WORD $0xa540a319 // ld1w {z25.s}, p0/z, [x24]
	WORD $0xa541a71a // ld1w {z26.s}, p1/z, [x24, #1, mul vl]
	WORD $0xa542ab1b // ld1w {z27.s}, p2/z, [x24, #2, mul vl]
	WORD $0xa543af1c // ld1w {z28.s}, p3/z, [x24, #3, mul vl]
	WORD $0x65b80199 // fmla z25.s, p0/m, z12.s, z24.s
	WORD $0x65b805ba // fmla z26.s, p1/m, z13.s, z24.s
	WORD $0x65b809db // fmla z27.s, p2/m, z14.s, z24.s
	WORD $0x65b80dfc // fmla z28.s, p3/m, z15.s, z24.s
	WORD $0xe540e319 // st1w {z25.s}, p0, [x24]
	WORD $0xe541e71a // st1w {z26.s}, p1, [x24, #1, mul vl]
	WORD $0xe542eb1b // st1w {z27.s}, p2, [x24, #2, mul vl]
	WORD $0xe543ef1c // st1w {z28.s}, p3, [x24, #3, mul vl]
	ADD  R1, R24, R24
	WORD $0xa540a319 // ld1w {z25.s}, p0/z, [x24]
	WORD $0xa541a71a // ld1w {z26.s}, p1/z, [x24, #1, mul vl]
	WORD $0xa542ab1b // ld1w {z27.s}, p2/z, [x24, #2, mul vl]
	WORD $0xa543af1c // ld1w {z28.s}, p3/z, [x24, #3, mul vl]
	WORD $0x65b80219 // fmla z25.s, p0/m, z16.s, z24.s
	WORD $0x65b8063a // fmla z26.s, p1/m, z17.s, z24.s
	WORD $0x65b80a5b // fmla z27.s, p2/m, z18.s, z24.s
	WORD $0x65b80e7c // fmla z28.s, p3/m, z19.s, z24.s
	WORD $0xe540e319 // st1w {z25.s}, p0, [x24]
	WORD $0xe541e71a // st1w {z26.s}, p1, [x24, #1, mul vl]
	WORD $0xe542eb1b // st1w {z27.s}, p2, [x24, #2, mul vl]
	WORD $0xe543ef1c // st1w {z28.s}, p3, [x24, #3, mul vl]
	ADD  R1, R24, R24
	WORD $0xa540a319 // ld1w {z25.s}, p0/z, [x24]
	WORD $0xa541a71a // ld1w {z26.s}, p1/z, [x24, #1, mul vl]
	WORD $0xa542ab1b // ld1w {z27.s}, p2/z, [x24, #2, mul vl]
	WORD $0xa543af1c // ld1w {z28.s}, p3/z, [x24, #3, mul vl]
	WORD $0x65b80299 // fmla z25.s, p0/m, z20.s, z24.s
	WORD $0x65b806ba // fmla z26.s, p1/m, z21.s, z24.s
	WORD $0x65b80adb // fmla z27.s, p2/m, z22.s, z24.s
	WORD $0x65b80efc // fmla z28.s, p3/m, z23.s, z24.s
	WORD $0xe540e319 // st1w {z25.s}, p0, [x24]
	WORD $0xe541e71a // st1w {z26.s}, p1, [x24, #1, mul vl]
	WORD $0xe542eb1b // st1w {z27.s}, p2, [x24, #2, mul vl]
	WORD $0xe543ef1c // st1w {z28.s}, p3, [x24, #3, mul vl]
	ADD  R19, R9, R9
	ADD  R20, R10, R10
	SUB  $4, R11, R11
	CMP  $4, R11
	BGE  rows4

rows1:
	CBZ  R11, nextcol

row1:
	WORD $0x25b8c008 // dup z8.s, #0
	WORD $0x25b8c009 // dup z9.s, #0
	WORD $0x25b8c00a // dup z10.s, #0
	WORD $0x25b8c00b // dup z11.s, #0
	MOVD R4, R12
	MOVD R10, R13
	MOVD $0, R17
	CBZ  R21, tail1

k1:
	WORD $0xa51111a0 // ld1rqw {z0.s}, p4/z, [x13, x17, lsl #2]
	WORD $0xa540a184 // ld1w {z4.s}, p0/z, [x12]
	WORD $0xa541a585 // ld1w {z5.s}, p1/z, [x12, #1, mul vl]
	WORD $0xa542a986 // ld1w {z6.s}, p2/z, [x12, #2, mul vl]
	WORD $0xa543ad87 // ld1w {z7.s}, p3/z, [x12, #3, mul vl]
	ADD  R5, R12, R12
	WORD $0x64a00088 // fmla z8.s, z4.s, z0.s[0]
	WORD $0x64a000a9 // fmla z9.s, z5.s, z0.s[0]
	WORD $0x64a000ca // fmla z10.s, z6.s, z0.s[0]
	WORD $0x64a000eb // fmla z11.s, z7.s, z0.s[0]
	WORD $0xa540a184 // ld1w {z4.s}, p0/z, [x12]
	WORD $0xa541a585 // ld1w {z5.s}, p1/z, [x12, #1, mul vl]
	WORD $0xa542a986 // ld1w {z6.s}, p2/z, [x12, #2, mul vl]
	WORD $0xa543ad87 // ld1w {z7.s}, p3/z, [x12, #3, mul vl]
	ADD  R5, R12, R12
	WORD $0x64a80088 // fmla z8.s, z4.s, z0.s[1]
	WORD $0x64a800a9 // fmla z9.s, z5.s, z0.s[1]
	WORD $0x64a800ca // fmla z10.s, z6.s, z0.s[1]
	WORD $0x64a800eb // fmla z11.s, z7.s, z0.s[1]
	WORD $0xa540a184 // ld1w {z4.s}, p0/z, [x12]
	WORD $0xa541a585 // ld1w {z5.s}, p1/z, [x12, #1, mul vl]
	WORD $0xa542a986 // ld1w {z6.s}, p2/z, [x12, #2, mul vl]
	WORD $0xa543ad87 // ld1w {z7.s}, p3/z, [x12, #3, mul vl]
	ADD  R5, R12, R12
	WORD $0x64b00088 // fmla z8.s, z4.s, z0.s[2]
	WORD $0x64b000a9 // fmla z9.s, z5.s, z0.s[2]
	WORD $0x64b000ca // fmla z10.s, z6.s, z0.s[2]
	WORD $0x64b000eb // fmla z11.s, z7.s, z0.s[2]
	WORD $0xa540a184 // ld1w {z4.s}, p0/z, [x12]
	WORD $0xa541a585 // ld1w {z5.s}, p1/z, [x12, #1, mul vl]
	WORD $0xa542a986 // ld1w {z6.s}, p2/z, [x12, #2, mul vl]
	WORD $0xa543ad87 // ld1w {z7.s}, p3/z, [x12, #3, mul vl]
	ADD  R5, R12, R12
	WORD $0x64b80088 // fmla z8.s, z4.s, z0.s[3]
	WORD $0x64b800a9 // fmla z9.s, z5.s, z0.s[3]
	WORD $0x64b800ca // fmla z10.s, z6.s, z0.s[3]
	WORD $0x64b800eb // fmla z11.s, z7.s, z0.s[3]
	ADD  $4, R17, R17
	CMP  R21, R17
	BLT  k1

tail1:
	CMP  R8, R17
	BGE  store1
	WORD $0xa51115a0 // ld1rqw {z0.s}, p5/z, [x13, x17, lsl #2]
	WORD $0xa540a184 // ld1w {z4.s}, p0/z, [x12]
	WORD $0xa541a585 // ld1w {z5.s}, p1/z, [x12, #1, mul vl]
	WORD $0xa542a986 // ld1w {z6.s}, p2/z, [x12, #2, mul vl]
	WORD $0xa543ad87 // ld1w {z7.s}, p3/z, [x12, #3, mul vl]
	ADD  R5, R12, R12
	WORD $0x64a00088 // fmla z8.s, z4.s, z0.s[0]
	WORD $0x64a000a9 // fmla z9.s, z5.s, z0.s[0]
	WORD $0x64a000ca // fmla z10.s, z6.s, z0.s[0]
	WORD $0x64a000eb // fmla z11.s, z7.s, z0.s[0]
	ADD  $1, R17, R17
	B    tail1

store1:
	WORD $0xa540a139 // ld1w {z25.s}, p0/z, [x9]
	WORD $0xa541a53a // ld1w {z26.s}, p1/z, [x9, #1, mul vl]
	WORD $0xa542a93b // ld1w {z27.s}, p2/z, [x9, #2, mul vl]
	WORD $0xa543ad3c // ld1w {z28.s}, p3/z, [x9, #3, mul vl]
	WORD $0x65b80119 // fmla z25.s, p0/m, z8.s, z24.s
	WORD $0x65b8053a // fmla z26.s, p1/m, z9.s, z24.s
	WORD $0x65b8095b // fmla z27.s, p2/m, z10.s, z24.s
	WORD $0x65b80d7c // fmla z28.s, p3/m, z11.s, z24.s
	WORD $0xe540e139 // st1w {z25.s}, p0, [x9]
	WORD $0xe541e53a // st1w {z26.s}, p1, [x9, #1, mul vl]
	WORD $0xe542e93b // st1w {z27.s}, p2, [x9, #2, mul vl]
	WORD $0xe543ed3c // st1w {z28.s}, p3, [x9, #3, mul vl]
	ADD  R1, R9, R9
	ADD  R3, R10, R10
	SUBS $1, R11, R11
	BNE  row1

nextcol:
	ADD  R22, R0, R0
	ADD  R22, R4, R4
	SUBS R23, R7, R7
	BGT  colblk

done:
	RET
