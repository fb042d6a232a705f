//go:build arm64 && gc && !purego

// Hand-written SVE KDA recurrence, vector-length agnostic (see
// kda_arm64.go for the Go semantics): a strip of value columns is covered
// by up to four vectors whose predicates (WHILELO against the strip's
// width) switch off the lanes beyond it, so the same code runs at
// 128…2048 bits and the V mod strip tail is one more, narrower strip
// instead of Go code. Every SVE instruction is WORD-encoded; the mnemonic
// comments are checked against GNU as by _asm/armwords.

#include "textflag.h"

// func kdaStripsSVE(s *float32, lds int, k int, alpha *float32, kk *float32, qs *float32, v *float32, beta float32, o *float32, ncols int, strip int)
TEXT ·kdaStripsSVE(SB), NOSPLIT, $0-88
	MOVD s+0(FP), R0
	MOVD lds+8(FP), R1
	MOVD k+16(FP), R2
	MOVD alpha+24(FP), R3
	MOVD kk+32(FP), R4
	MOVD qs+40(FP), R5
	MOVD v+48(FP), R6
	FMOVS beta+56(FP), F10
	MOVD o+64(FP), R7
	MOVD ncols+72(FP), R8
	MOVD strip+80(FP), R14
	LSL  $2, R1, R1
	WORD $0x0524214a // dup z10.s, z10.s[0]
	WORD $0x2598e3e4 // ptrue p4.s
	// the strip is at most four vectors: strip = min(strip, 4·VL/32)
	WORD $0x04a0e3ef // cntw x15
	LSL  $2, R15, R15
	CMP  R15, R14
	CSEL GT, R15, R14, R14
	CBZ  R8, done
	CBZ  R2, done

strip:
	// w = min(strip, columns left); p0..p3: lanes of columns [i·VL/32, (i+1)·VL/32) ∩ [0, w)
	CMP  R14, R8
	CSEL LT, R8, R14, R16
	MOVD $0, R9
	WORD $0x25b01d20 // whilelo p0.s, x9, x16
	WORD $0x04b0e3e9 // incw x9
	WORD $0x25b01d21 // whilelo p1.s, x9, x16
	WORD $0x04b0e3e9 // incw x9
	WORD $0x25b01d22 // whilelo p2.s, x9, x16
	WORD $0x04b0e3e9 // incw x9
	WORD $0x25b01d23 // whilelo p3.s, x9, x16

	// phase 1: p = Σ_i kk[i]·(alpha[i]·S[i, strip])
	WORD $0x25b8c000 // dup z0.s, #0
	WORD $0x25b8c001 // dup z1.s, #0
	WORD $0x25b8c002 // dup z2.s, #0
	WORD $0x25b8c003 // dup z3.s, #0
	MOVD R0, R9
	MOVD R3, R10
	MOVD R4, R11
	MOVD R2, R12

p1:
	WORD $0xa540a124 // ld1w {z4.s}, p0/z, [x9]
	WORD $0xa541a525 // ld1w {z5.s}, p1/z, [x9, #1, mul vl]
	WORD $0xa542a926 // ld1w {z6.s}, p2/z, [x9, #2, mul vl]
	WORD $0xa543ad27 // ld1w {z7.s}, p3/z, [x9, #3, mul vl]
	WORD $0x8540d148 // ld1rw {z8.s}, p4/z, [x10]
	WORD $0x8540d169 // ld1rw {z9.s}, p4/z, [x11]
	WORD $0x65880884 // fmul z4.s, z4.s, z8.s
	WORD $0x658808a5 // fmul z5.s, z5.s, z8.s
	WORD $0x658808c6 // fmul z6.s, z6.s, z8.s
	WORD $0x658808e7 // fmul z7.s, z7.s, z8.s
	WORD $0x65a90080 // fmla z0.s, p0/m, z4.s, z9.s
	WORD $0x65a904a1 // fmla z1.s, p1/m, z5.s, z9.s
	WORD $0x65a908c2 // fmla z2.s, p2/m, z6.s, z9.s
	WORD $0x65a90ce3 // fmla z3.s, p3/m, z7.s, z9.s
	ADD  R1, R9, R9
	ADD  $4, R10, R10
	ADD  $4, R11, R11
	SUBS $1, R12, R12
	BNE  p1

	// u = beta·(v − p)
	WORD $0xa540a0cc // ld1w {z12.s}, p0/z, [x6]
	WORD $0xa541a4cd // ld1w {z13.s}, p1/z, [x6, #1, mul vl]
	WORD $0xa542a8ce // ld1w {z14.s}, p2/z, [x6, #2, mul vl]
	WORD $0xa543accf // ld1w {z15.s}, p3/z, [x6, #3, mul vl]
	WORD $0x6580058c // fsub z12.s, z12.s, z0.s
	WORD $0x658105ad // fsub z13.s, z13.s, z1.s
	WORD $0x658205ce // fsub z14.s, z14.s, z2.s
	WORD $0x658305ef // fsub z15.s, z15.s, z3.s
	WORD $0x658a0980 // fmul z0.s, z12.s, z10.s
	WORD $0x658a09a1 // fmul z1.s, z13.s, z10.s
	WORD $0x658a09c2 // fmul z2.s, z14.s, z10.s
	WORD $0x658a09e3 // fmul z3.s, z15.s, z10.s

	// phase 2: S = alpha·S + kk·u; o = Σ_i qs[i]·S[i, strip]
	WORD $0x25b8c010 // dup z16.s, #0
	WORD $0x25b8c011 // dup z17.s, #0
	WORD $0x25b8c012 // dup z18.s, #0
	WORD $0x25b8c013 // dup z19.s, #0
	MOVD R0, R9
	MOVD R3, R10
	MOVD R4, R11
	MOVD R5, R13
	MOVD R2, R12

p2:
	WORD $0xa540a124 // ld1w {z4.s}, p0/z, [x9]
	WORD $0xa541a525 // ld1w {z5.s}, p1/z, [x9, #1, mul vl]
	WORD $0xa542a926 // ld1w {z6.s}, p2/z, [x9, #2, mul vl]
	WORD $0xa543ad27 // ld1w {z7.s}, p3/z, [x9, #3, mul vl]
	WORD $0x8540d148 // ld1rw {z8.s}, p4/z, [x10]
	WORD $0x8540d169 // ld1rw {z9.s}, p4/z, [x11]
	WORD $0x8540d1ab // ld1rw {z11.s}, p4/z, [x13]
	WORD $0x65880884 // fmul z4.s, z4.s, z8.s
	WORD $0x658808a5 // fmul z5.s, z5.s, z8.s
	WORD $0x658808c6 // fmul z6.s, z6.s, z8.s
	WORD $0x658808e7 // fmul z7.s, z7.s, z8.s
	WORD $0x65a90004 // fmla z4.s, p0/m, z0.s, z9.s
	WORD $0x65a90425 // fmla z5.s, p1/m, z1.s, z9.s
	WORD $0x65a90846 // fmla z6.s, p2/m, z2.s, z9.s
	WORD $0x65a90c67 // fmla z7.s, p3/m, z3.s, z9.s
	WORD $0xe540e124 // st1w {z4.s}, p0, [x9]
	WORD $0xe541e525 // st1w {z5.s}, p1, [x9, #1, mul vl]
	WORD $0xe542e926 // st1w {z6.s}, p2, [x9, #2, mul vl]
	WORD $0xe543ed27 // st1w {z7.s}, p3, [x9, #3, mul vl]
	WORD $0x65ab0090 // fmla z16.s, p0/m, z4.s, z11.s
	WORD $0x65ab04b1 // fmla z17.s, p1/m, z5.s, z11.s
	WORD $0x65ab08d2 // fmla z18.s, p2/m, z6.s, z11.s
	WORD $0x65ab0cf3 // fmla z19.s, p3/m, z7.s, z11.s
	ADD  R1, R9, R9
	ADD  $4, R10, R10
	ADD  $4, R11, R11
	ADD  $4, R13, R13
	SUBS $1, R12, R12
	BNE  p2

	WORD $0xe540e0f0 // st1w {z16.s}, p0, [x7]
	WORD $0xe541e4f1 // st1w {z17.s}, p1, [x7, #1, mul vl]
	WORD $0xe542e8f2 // st1w {z18.s}, p2, [x7, #2, mul vl]
	WORD $0xe543ecf3 // st1w {z19.s}, p3, [x7, #3, mul vl]
	LSL  $2, R16, R17
	ADD  R17, R0, R0
	ADD  R17, R6, R6
	ADD  R17, R7, R7
	SUBS R16, R8, R8
	BNE  strip

done:
	RET
