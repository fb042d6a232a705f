//go:build arm64 && gc && !purego

// Hand-written SVE BF16 kernels of the sve_bf16 variant (SVE + FEAT_BF16):
// M = 1…4 BF16 activation rows against np consecutive BF16 panels of
// package quant, [Kp/2][16 rows][2 k] (see gemm_bf16_arm64.go for their
// Go semantics). A 64-byte panel line (16 rows × one k pair) is NC
// vectors: NC = 2 for vector lengths 256…384 bits (bf16SVE2_*), NC = 1 from
// 512 bits on (bf16SVE1_*); the predicates (WHILELO against the line's 32
// halfwords, and against its 16 f32 lanes for y) switch off what lies
// beyond the line, so each kernel is vector-length agnostic within its
// range (128-bit SVE runs the NEON kernels: the same registers). The
// activations are loaded 4 pairs (16 bytes) per row by LD1RQH, which
// replicates them into every 128-bit segment, and BFDOT by element
// (Zm.H[i], within each segment) multiplies a whole line chunk by pair i;
// a Kp/2 mod 4 tail takes one pair at a time (LD1RW). Each row keeps U
// independent accumulator sets over the lines (U·M·NC ≤ 16), summed at
// the end. BFDOT's arithmetic is that of the NEON one (round to odd,
// denormals flushed: see gemm_bf16_arm64.go). Every SVE instruction is
// WORD-encoded; the mnemonic comments are checked against GNU as by
// _asm/armwords. The file was written by a throwaway script: eight copies
// of one pattern with different registers.

#include "textflag.h"

// func bf16SVE2_1x16(w *byte, np, npairs int, xb *uint16, ldx int, y *float32, ldy int, acc int)
TEXT ·bf16SVE2_1x16(SB), NOSPLIT, $0-64
	MOVD w+0(FP), R0
	MOVD np+8(FP), R1
	MOVD npairs+16(FP), R2
	MOVD xb+24(FP), R3
	MOVD y+40(FP), R5
	MOVD acc+56(FP), R7
	CBZ  R1, s21done
	// p0, p1: the halfwords [c·VL/16, (c+1)·VL/16) ∩ [0, 32) of a line;
	// p4, p5: the same chunks as f32 lanes ∩ [0, 16)
	MOVD $32, R19
	MOVD $0, R20
	WORD $0x25731e80 // whilelo p0.h, x20, x19
	WORD $0x0470e3f4 // inch x20
	WORD $0x25731e81 // whilelo p1.h, x20, x19
	MOVD $16, R19
	MOVD $0, R20
	WORD $0x25b31e84 // whilelo p4.s, x20, x19
	WORD $0x04b0e3f4 // incw x20
	WORD $0x25b31e85 // whilelo p5.s, x20, x19
	WORD $0x2558e3e2 // ptrue p2.h
	WORD $0x2598e3e3 // ptrue p3.s

s21panel:
	MOVD R3, R8
	WORD $0x25b8c010 // dup z16.s, #0
	WORD $0x25b8c011 // dup z17.s, #0
	WORD $0x25b8c012 // dup z18.s, #0
	WORD $0x25b8c013 // dup z19.s, #0
	WORD $0x25b8c014 // dup z20.s, #0
	WORD $0x25b8c015 // dup z21.s, #0
	WORD $0x25b8c016 // dup z22.s, #0
	WORD $0x25b8c017 // dup z23.s, #0
	LSR  $2, R2, R12 // steps of 4 pairs
	AND  $3, R2, R13 // tail pairs
	CBZ  R12, s21tail

s21quad:
	WORD $0xa4802900 // ld1rqh {z0.h}, p2/z, [x8]  (row 0: 4 pairs in every segment)
	ADD  $16, R8, R8
	WORD $0xa4a0a008 // ld1h {z8.h}, p0/z, [x0]  (line 0)
	WORD $0xa4a1a409 // ld1h {z9.h}, p1/z, [x0, #1, mul vl]
	ADD  $64, R0, R0
	WORD $0x64604110 // bfdot z16.s, z8.h, z0.h[0]
	WORD $0x64604131 // bfdot z17.s, z9.h, z0.h[0]
	WORD $0xa4a0a00c // ld1h {z12.h}, p0/z, [x0]  (line 1)
	WORD $0xa4a1a40d // ld1h {z13.h}, p1/z, [x0, #1, mul vl]
	ADD  $64, R0, R0
	WORD $0x64684192 // bfdot z18.s, z12.h, z0.h[1]
	WORD $0x646841b3 // bfdot z19.s, z13.h, z0.h[1]
	WORD $0xa4a0a008 // ld1h {z8.h}, p0/z, [x0]  (line 2)
	WORD $0xa4a1a409 // ld1h {z9.h}, p1/z, [x0, #1, mul vl]
	ADD  $64, R0, R0
	WORD $0x64704114 // bfdot z20.s, z8.h, z0.h[2]
	WORD $0x64704135 // bfdot z21.s, z9.h, z0.h[2]
	WORD $0xa4a0a00c // ld1h {z12.h}, p0/z, [x0]  (line 3)
	WORD $0xa4a1a40d // ld1h {z13.h}, p1/z, [x0, #1, mul vl]
	ADD  $64, R0, R0
	WORD $0x64784196 // bfdot z22.s, z12.h, z0.h[3]
	WORD $0x647841b7 // bfdot z23.s, z13.h, z0.h[3]
	SUBS $1, R12, R12
	BNE  s21quad

s21tail:
	CBZ  R13, s21sum

s21one:
	WORD $0x8540cd00 // ld1rw {z0.s}, p3/z, [x8]  (row 0: one pair)
	ADD  $4, R8, R8
	WORD $0xa4a0a008 // ld1h {z8.h}, p0/z, [x0]
	WORD $0xa4a1a409 // ld1h {z9.h}, p1/z, [x0, #1, mul vl]
	ADD  $64, R0, R0
	WORD $0x64604110 // bfdot z16.s, z8.h, z0.h[0]
	WORD $0x64604131 // bfdot z17.s, z9.h, z0.h[0]
	SUBS $1, R13, R13
	BNE  s21one

s21sum:
	WORD $0x65940210 // fadd z16.s, z16.s, z20.s
	WORD $0x65950231 // fadd z17.s, z17.s, z21.s
	WORD $0x65960252 // fadd z18.s, z18.s, z22.s
	WORD $0x65970273 // fadd z19.s, z19.s, z23.s
	WORD $0x65920210 // fadd z16.s, z16.s, z18.s
	WORD $0x65930231 // fadd z17.s, z17.s, z19.s
	MOVD R5, R14
	CBZ  R7, s21store
	WORD $0xa540b1c8 // ld1w {z8.s}, p4/z, [x14]
	WORD $0xa541b5c9 // ld1w {z9.s}, p5/z, [x14, #1, mul vl]
	WORD $0x65880210 // fadd z16.s, z16.s, z8.s
	WORD $0x65890231 // fadd z17.s, z17.s, z9.s

s21store:
	WORD $0xe540f1d0 // st1w {z16.s}, p4, [x14]
	WORD $0xe541f5d1 // st1w {z17.s}, p5, [x14, #1, mul vl]
	ADD  $64, R5, R5
	SUBS $1, R1, R1
	BNE  s21panel

s21done:
	RET

// func bf16SVE2_2x16(w *byte, np, npairs int, xb *uint16, ldx int, y *float32, ldy int, acc int)
TEXT ·bf16SVE2_2x16(SB), NOSPLIT, $0-64
	MOVD w+0(FP), R0
	MOVD np+8(FP), R1
	MOVD npairs+16(FP), R2
	MOVD xb+24(FP), R3
	MOVD ldx+32(FP), R4
	MOVD y+40(FP), R5
	MOVD ldy+48(FP), R6
	LSL  $2, R6, R6
	MOVD acc+56(FP), R7
	CBZ  R1, s22done
	// p0, p1: the halfwords [c·VL/16, (c+1)·VL/16) ∩ [0, 32) of a line;
	// p4, p5: the same chunks as f32 lanes ∩ [0, 16)
	MOVD $32, R19
	MOVD $0, R20
	WORD $0x25731e80 // whilelo p0.h, x20, x19
	WORD $0x0470e3f4 // inch x20
	WORD $0x25731e81 // whilelo p1.h, x20, x19
	MOVD $16, R19
	MOVD $0, R20
	WORD $0x25b31e84 // whilelo p4.s, x20, x19
	WORD $0x04b0e3f4 // incw x20
	WORD $0x25b31e85 // whilelo p5.s, x20, x19
	WORD $0x2558e3e2 // ptrue p2.h
	WORD $0x2598e3e3 // ptrue p3.s

s22panel:
	MOVD R3, R8
	ADD  R4, R8, R9
	WORD $0x25b8c010 // dup z16.s, #0
	WORD $0x25b8c011 // dup z17.s, #0
	WORD $0x25b8c012 // dup z18.s, #0
	WORD $0x25b8c013 // dup z19.s, #0
	WORD $0x25b8c014 // dup z20.s, #0
	WORD $0x25b8c015 // dup z21.s, #0
	WORD $0x25b8c016 // dup z22.s, #0
	WORD $0x25b8c017 // dup z23.s, #0
	WORD $0x25b8c018 // dup z24.s, #0
	WORD $0x25b8c019 // dup z25.s, #0
	WORD $0x25b8c01a // dup z26.s, #0
	WORD $0x25b8c01b // dup z27.s, #0
	WORD $0x25b8c01c // dup z28.s, #0
	WORD $0x25b8c01d // dup z29.s, #0
	WORD $0x25b8c01e // dup z30.s, #0
	WORD $0x25b8c01f // dup z31.s, #0
	LSR  $2, R2, R12 // steps of 4 pairs
	AND  $3, R2, R13 // tail pairs
	CBZ  R12, s22tail

s22quad:
	WORD $0xa4802900 // ld1rqh {z0.h}, p2/z, [x8]  (row 0: 4 pairs in every segment)
	ADD  $16, R8, R8
	WORD $0xa4802921 // ld1rqh {z1.h}, p2/z, [x9]  (row 1: 4 pairs in every segment)
	ADD  $16, R9, R9
	WORD $0xa4a0a008 // ld1h {z8.h}, p0/z, [x0]  (line 0)
	WORD $0xa4a1a409 // ld1h {z9.h}, p1/z, [x0, #1, mul vl]
	ADD  $64, R0, R0
	WORD $0x64604110 // bfdot z16.s, z8.h, z0.h[0]
	WORD $0x64604131 // bfdot z17.s, z9.h, z0.h[0]
	WORD $0x64614118 // bfdot z24.s, z8.h, z1.h[0]
	WORD $0x64614139 // bfdot z25.s, z9.h, z1.h[0]
	WORD $0xa4a0a00c // ld1h {z12.h}, p0/z, [x0]  (line 1)
	WORD $0xa4a1a40d // ld1h {z13.h}, p1/z, [x0, #1, mul vl]
	ADD  $64, R0, R0
	WORD $0x64684192 // bfdot z18.s, z12.h, z0.h[1]
	WORD $0x646841b3 // bfdot z19.s, z13.h, z0.h[1]
	WORD $0x6469419a // bfdot z26.s, z12.h, z1.h[1]
	WORD $0x646941bb // bfdot z27.s, z13.h, z1.h[1]
	WORD $0xa4a0a008 // ld1h {z8.h}, p0/z, [x0]  (line 2)
	WORD $0xa4a1a409 // ld1h {z9.h}, p1/z, [x0, #1, mul vl]
	ADD  $64, R0, R0
	WORD $0x64704114 // bfdot z20.s, z8.h, z0.h[2]
	WORD $0x64704135 // bfdot z21.s, z9.h, z0.h[2]
	WORD $0x6471411c // bfdot z28.s, z8.h, z1.h[2]
	WORD $0x6471413d // bfdot z29.s, z9.h, z1.h[2]
	WORD $0xa4a0a00c // ld1h {z12.h}, p0/z, [x0]  (line 3)
	WORD $0xa4a1a40d // ld1h {z13.h}, p1/z, [x0, #1, mul vl]
	ADD  $64, R0, R0
	WORD $0x64784196 // bfdot z22.s, z12.h, z0.h[3]
	WORD $0x647841b7 // bfdot z23.s, z13.h, z0.h[3]
	WORD $0x6479419e // bfdot z30.s, z12.h, z1.h[3]
	WORD $0x647941bf // bfdot z31.s, z13.h, z1.h[3]
	SUBS $1, R12, R12
	BNE  s22quad

s22tail:
	CBZ  R13, s22sum

s22one:
	WORD $0x8540cd00 // ld1rw {z0.s}, p3/z, [x8]  (row 0: one pair)
	ADD  $4, R8, R8
	WORD $0x8540cd21 // ld1rw {z1.s}, p3/z, [x9]  (row 1: one pair)
	ADD  $4, R9, R9
	WORD $0xa4a0a008 // ld1h {z8.h}, p0/z, [x0]
	WORD $0xa4a1a409 // ld1h {z9.h}, p1/z, [x0, #1, mul vl]
	ADD  $64, R0, R0
	WORD $0x64604110 // bfdot z16.s, z8.h, z0.h[0]
	WORD $0x64604131 // bfdot z17.s, z9.h, z0.h[0]
	WORD $0x64614118 // bfdot z24.s, z8.h, z1.h[0]
	WORD $0x64614139 // bfdot z25.s, z9.h, z1.h[0]
	SUBS $1, R13, R13
	BNE  s22one

s22sum:
	WORD $0x65940210 // fadd z16.s, z16.s, z20.s
	WORD $0x65950231 // fadd z17.s, z17.s, z21.s
	WORD $0x65960252 // fadd z18.s, z18.s, z22.s
	WORD $0x65970273 // fadd z19.s, z19.s, z23.s
	WORD $0x65920210 // fadd z16.s, z16.s, z18.s
	WORD $0x65930231 // fadd z17.s, z17.s, z19.s
	WORD $0x659c0318 // fadd z24.s, z24.s, z28.s
	WORD $0x659d0339 // fadd z25.s, z25.s, z29.s
	WORD $0x659e035a // fadd z26.s, z26.s, z30.s
	WORD $0x659f037b // fadd z27.s, z27.s, z31.s
	WORD $0x659a0318 // fadd z24.s, z24.s, z26.s
	WORD $0x659b0339 // fadd z25.s, z25.s, z27.s
	MOVD R5, R14
	ADD  R6, R14, R15
	CBZ  R7, s22store
	WORD $0xa540b1c8 // ld1w {z8.s}, p4/z, [x14]
	WORD $0xa541b5c9 // ld1w {z9.s}, p5/z, [x14, #1, mul vl]
	WORD $0x65880210 // fadd z16.s, z16.s, z8.s
	WORD $0x65890231 // fadd z17.s, z17.s, z9.s
	WORD $0xa540b1e8 // ld1w {z8.s}, p4/z, [x15]
	WORD $0xa541b5e9 // ld1w {z9.s}, p5/z, [x15, #1, mul vl]
	WORD $0x65880318 // fadd z24.s, z24.s, z8.s
	WORD $0x65890339 // fadd z25.s, z25.s, z9.s

s22store:
	WORD $0xe540f1d0 // st1w {z16.s}, p4, [x14]
	WORD $0xe541f5d1 // st1w {z17.s}, p5, [x14, #1, mul vl]
	WORD $0xe540f1f8 // st1w {z24.s}, p4, [x15]
	WORD $0xe541f5f9 // st1w {z25.s}, p5, [x15, #1, mul vl]
	ADD  $64, R5, R5
	SUBS $1, R1, R1
	BNE  s22panel

s22done:
	RET

// func bf16SVE2_3x16(w *byte, np, npairs int, xb *uint16, ldx int, y *float32, ldy int, acc int)
TEXT ·bf16SVE2_3x16(SB), NOSPLIT, $0-64
	MOVD w+0(FP), R0
	MOVD np+8(FP), R1
	MOVD npairs+16(FP), R2
	MOVD xb+24(FP), R3
	MOVD ldx+32(FP), R4
	MOVD y+40(FP), R5
	MOVD ldy+48(FP), R6
	LSL  $2, R6, R6
	MOVD acc+56(FP), R7
	CBZ  R1, s23done
	// p0, p1: the halfwords [c·VL/16, (c+1)·VL/16) ∩ [0, 32) of a line;
	// p4, p5: the same chunks as f32 lanes ∩ [0, 16)
	MOVD $32, R19
	MOVD $0, R20
	WORD $0x25731e80 // whilelo p0.h, x20, x19
	WORD $0x0470e3f4 // inch x20
	WORD $0x25731e81 // whilelo p1.h, x20, x19
	MOVD $16, R19
	MOVD $0, R20
	WORD $0x25b31e84 // whilelo p4.s, x20, x19
	WORD $0x04b0e3f4 // incw x20
	WORD $0x25b31e85 // whilelo p5.s, x20, x19
	WORD $0x2558e3e2 // ptrue p2.h
	WORD $0x2598e3e3 // ptrue p3.s

s23panel:
	MOVD R3, R8
	ADD  R4, R8, R9
	ADD  R4, R9, R10
	WORD $0x25b8c010 // dup z16.s, #0
	WORD $0x25b8c011 // dup z17.s, #0
	WORD $0x25b8c012 // dup z18.s, #0
	WORD $0x25b8c013 // dup z19.s, #0
	WORD $0x25b8c014 // dup z20.s, #0
	WORD $0x25b8c015 // dup z21.s, #0
	WORD $0x25b8c016 // dup z22.s, #0
	WORD $0x25b8c017 // dup z23.s, #0
	WORD $0x25b8c018 // dup z24.s, #0
	WORD $0x25b8c019 // dup z25.s, #0
	WORD $0x25b8c01a // dup z26.s, #0
	WORD $0x25b8c01b // dup z27.s, #0
	LSR  $2, R2, R12 // steps of 4 pairs
	AND  $3, R2, R13 // tail pairs
	CBZ  R12, s23tail

s23quad:
	WORD $0xa4802900 // ld1rqh {z0.h}, p2/z, [x8]  (row 0: 4 pairs in every segment)
	ADD  $16, R8, R8
	WORD $0xa4802921 // ld1rqh {z1.h}, p2/z, [x9]  (row 1: 4 pairs in every segment)
	ADD  $16, R9, R9
	WORD $0xa4802942 // ld1rqh {z2.h}, p2/z, [x10]  (row 2: 4 pairs in every segment)
	ADD  $16, R10, R10
	WORD $0xa4a0a008 // ld1h {z8.h}, p0/z, [x0]  (line 0)
	WORD $0xa4a1a409 // ld1h {z9.h}, p1/z, [x0, #1, mul vl]
	ADD  $64, R0, R0
	WORD $0x64604110 // bfdot z16.s, z8.h, z0.h[0]
	WORD $0x64604131 // bfdot z17.s, z9.h, z0.h[0]
	WORD $0x64614114 // bfdot z20.s, z8.h, z1.h[0]
	WORD $0x64614135 // bfdot z21.s, z9.h, z1.h[0]
	WORD $0x64624118 // bfdot z24.s, z8.h, z2.h[0]
	WORD $0x64624139 // bfdot z25.s, z9.h, z2.h[0]
	WORD $0xa4a0a00c // ld1h {z12.h}, p0/z, [x0]  (line 1)
	WORD $0xa4a1a40d // ld1h {z13.h}, p1/z, [x0, #1, mul vl]
	ADD  $64, R0, R0
	WORD $0x64684192 // bfdot z18.s, z12.h, z0.h[1]
	WORD $0x646841b3 // bfdot z19.s, z13.h, z0.h[1]
	WORD $0x64694196 // bfdot z22.s, z12.h, z1.h[1]
	WORD $0x646941b7 // bfdot z23.s, z13.h, z1.h[1]
	WORD $0x646a419a // bfdot z26.s, z12.h, z2.h[1]
	WORD $0x646a41bb // bfdot z27.s, z13.h, z2.h[1]
	WORD $0xa4a0a008 // ld1h {z8.h}, p0/z, [x0]  (line 2)
	WORD $0xa4a1a409 // ld1h {z9.h}, p1/z, [x0, #1, mul vl]
	ADD  $64, R0, R0
	WORD $0x64704110 // bfdot z16.s, z8.h, z0.h[2]
	WORD $0x64704131 // bfdot z17.s, z9.h, z0.h[2]
	WORD $0x64714114 // bfdot z20.s, z8.h, z1.h[2]
	WORD $0x64714135 // bfdot z21.s, z9.h, z1.h[2]
	WORD $0x64724118 // bfdot z24.s, z8.h, z2.h[2]
	WORD $0x64724139 // bfdot z25.s, z9.h, z2.h[2]
	WORD $0xa4a0a00c // ld1h {z12.h}, p0/z, [x0]  (line 3)
	WORD $0xa4a1a40d // ld1h {z13.h}, p1/z, [x0, #1, mul vl]
	ADD  $64, R0, R0
	WORD $0x64784192 // bfdot z18.s, z12.h, z0.h[3]
	WORD $0x647841b3 // bfdot z19.s, z13.h, z0.h[3]
	WORD $0x64794196 // bfdot z22.s, z12.h, z1.h[3]
	WORD $0x647941b7 // bfdot z23.s, z13.h, z1.h[3]
	WORD $0x647a419a // bfdot z26.s, z12.h, z2.h[3]
	WORD $0x647a41bb // bfdot z27.s, z13.h, z2.h[3]
	SUBS $1, R12, R12
	BNE  s23quad

s23tail:
	CBZ  R13, s23sum

s23one:
	WORD $0x8540cd00 // ld1rw {z0.s}, p3/z, [x8]  (row 0: one pair)
	ADD  $4, R8, R8
	WORD $0x8540cd21 // ld1rw {z1.s}, p3/z, [x9]  (row 1: one pair)
	ADD  $4, R9, R9
	WORD $0x8540cd42 // ld1rw {z2.s}, p3/z, [x10]  (row 2: one pair)
	ADD  $4, R10, R10
	WORD $0xa4a0a008 // ld1h {z8.h}, p0/z, [x0]
	WORD $0xa4a1a409 // ld1h {z9.h}, p1/z, [x0, #1, mul vl]
	ADD  $64, R0, R0
	WORD $0x64604110 // bfdot z16.s, z8.h, z0.h[0]
	WORD $0x64604131 // bfdot z17.s, z9.h, z0.h[0]
	WORD $0x64614114 // bfdot z20.s, z8.h, z1.h[0]
	WORD $0x64614135 // bfdot z21.s, z9.h, z1.h[0]
	WORD $0x64624118 // bfdot z24.s, z8.h, z2.h[0]
	WORD $0x64624139 // bfdot z25.s, z9.h, z2.h[0]
	SUBS $1, R13, R13
	BNE  s23one

s23sum:
	WORD $0x65920210 // fadd z16.s, z16.s, z18.s
	WORD $0x65930231 // fadd z17.s, z17.s, z19.s
	WORD $0x65960294 // fadd z20.s, z20.s, z22.s
	WORD $0x659702b5 // fadd z21.s, z21.s, z23.s
	WORD $0x659a0318 // fadd z24.s, z24.s, z26.s
	WORD $0x659b0339 // fadd z25.s, z25.s, z27.s
	MOVD R5, R14
	ADD  R6, R14, R15
	ADD  R6, R15, R16
	CBZ  R7, s23store
	WORD $0xa540b1c8 // ld1w {z8.s}, p4/z, [x14]
	WORD $0xa541b5c9 // ld1w {z9.s}, p5/z, [x14, #1, mul vl]
	WORD $0x65880210 // fadd z16.s, z16.s, z8.s
	WORD $0x65890231 // fadd z17.s, z17.s, z9.s
	WORD $0xa540b1e8 // ld1w {z8.s}, p4/z, [x15]
	WORD $0xa541b5e9 // ld1w {z9.s}, p5/z, [x15, #1, mul vl]
	WORD $0x65880294 // fadd z20.s, z20.s, z8.s
	WORD $0x658902b5 // fadd z21.s, z21.s, z9.s
	WORD $0xa540b208 // ld1w {z8.s}, p4/z, [x16]
	WORD $0xa541b609 // ld1w {z9.s}, p5/z, [x16, #1, mul vl]
	WORD $0x65880318 // fadd z24.s, z24.s, z8.s
	WORD $0x65890339 // fadd z25.s, z25.s, z9.s

s23store:
	WORD $0xe540f1d0 // st1w {z16.s}, p4, [x14]
	WORD $0xe541f5d1 // st1w {z17.s}, p5, [x14, #1, mul vl]
	WORD $0xe540f1f4 // st1w {z20.s}, p4, [x15]
	WORD $0xe541f5f5 // st1w {z21.s}, p5, [x15, #1, mul vl]
	WORD $0xe540f218 // st1w {z24.s}, p4, [x16]
	WORD $0xe541f619 // st1w {z25.s}, p5, [x16, #1, mul vl]
	ADD  $64, R5, R5
	SUBS $1, R1, R1
	BNE  s23panel

s23done:
	RET

// func bf16SVE2_4x16(w *byte, np, npairs int, xb *uint16, ldx int, y *float32, ldy int, acc int)
TEXT ·bf16SVE2_4x16(SB), NOSPLIT, $0-64
	MOVD w+0(FP), R0
	MOVD np+8(FP), R1
	MOVD npairs+16(FP), R2
	MOVD xb+24(FP), R3
	MOVD ldx+32(FP), R4
	MOVD y+40(FP), R5
	MOVD ldy+48(FP), R6
	LSL  $2, R6, R6
	MOVD acc+56(FP), R7
	CBZ  R1, s24done
	// p0, p1: the halfwords [c·VL/16, (c+1)·VL/16) ∩ [0, 32) of a line;
	// p4, p5: the same chunks as f32 lanes ∩ [0, 16)
	MOVD $32, R19
	MOVD $0, R20
	WORD $0x25731e80 // whilelo p0.h, x20, x19
	WORD $0x0470e3f4 // inch x20
	WORD $0x25731e81 // whilelo p1.h, x20, x19
	MOVD $16, R19
	MOVD $0, R20
	WORD $0x25b31e84 // whilelo p4.s, x20, x19
	WORD $0x04b0e3f4 // incw x20
	WORD $0x25b31e85 // whilelo p5.s, x20, x19
	WORD $0x2558e3e2 // ptrue p2.h
	WORD $0x2598e3e3 // ptrue p3.s

s24panel:
	MOVD R3, R8
	ADD  R4, R8, R9
	ADD  R4, R9, R10
	ADD  R4, R10, R11
	WORD $0x25b8c010 // dup z16.s, #0
	WORD $0x25b8c011 // dup z17.s, #0
	WORD $0x25b8c012 // dup z18.s, #0
	WORD $0x25b8c013 // dup z19.s, #0
	WORD $0x25b8c014 // dup z20.s, #0
	WORD $0x25b8c015 // dup z21.s, #0
	WORD $0x25b8c016 // dup z22.s, #0
	WORD $0x25b8c017 // dup z23.s, #0
	WORD $0x25b8c018 // dup z24.s, #0
	WORD $0x25b8c019 // dup z25.s, #0
	WORD $0x25b8c01a // dup z26.s, #0
	WORD $0x25b8c01b // dup z27.s, #0
	WORD $0x25b8c01c // dup z28.s, #0
	WORD $0x25b8c01d // dup z29.s, #0
	WORD $0x25b8c01e // dup z30.s, #0
	WORD $0x25b8c01f // dup z31.s, #0
	LSR  $2, R2, R12 // steps of 4 pairs
	AND  $3, R2, R13 // tail pairs
	CBZ  R12, s24tail

s24quad:
	WORD $0xa4802900 // ld1rqh {z0.h}, p2/z, [x8]  (row 0: 4 pairs in every segment)
	ADD  $16, R8, R8
	WORD $0xa4802921 // ld1rqh {z1.h}, p2/z, [x9]  (row 1: 4 pairs in every segment)
	ADD  $16, R9, R9
	WORD $0xa4802942 // ld1rqh {z2.h}, p2/z, [x10]  (row 2: 4 pairs in every segment)
	ADD  $16, R10, R10
	WORD $0xa4802963 // ld1rqh {z3.h}, p2/z, [x11]  (row 3: 4 pairs in every segment)
	ADD  $16, R11, R11
	WORD $0xa4a0a008 // ld1h {z8.h}, p0/z, [x0]  (line 0)
	WORD $0xa4a1a409 // ld1h {z9.h}, p1/z, [x0, #1, mul vl]
	ADD  $64, R0, R0
	WORD $0x64604110 // bfdot z16.s, z8.h, z0.h[0]
	WORD $0x64604131 // bfdot z17.s, z9.h, z0.h[0]
	WORD $0x64614114 // bfdot z20.s, z8.h, z1.h[0]
	WORD $0x64614135 // bfdot z21.s, z9.h, z1.h[0]
	WORD $0x64624118 // bfdot z24.s, z8.h, z2.h[0]
	WORD $0x64624139 // bfdot z25.s, z9.h, z2.h[0]
	WORD $0x6463411c // bfdot z28.s, z8.h, z3.h[0]
	WORD $0x6463413d // bfdot z29.s, z9.h, z3.h[0]
	WORD $0xa4a0a00c // ld1h {z12.h}, p0/z, [x0]  (line 1)
	WORD $0xa4a1a40d // ld1h {z13.h}, p1/z, [x0, #1, mul vl]
	ADD  $64, R0, R0
	WORD $0x64684192 // bfdot z18.s, z12.h, z0.h[1]
	WORD $0x646841b3 // bfdot z19.s, z13.h, z0.h[1]
	WORD $0x64694196 // bfdot z22.s, z12.h, z1.h[1]
	WORD $0x646941b7 // bfdot z23.s, z13.h, z1.h[1]
	WORD $0x646a419a // bfdot z26.s, z12.h, z2.h[1]
	WORD $0x646a41bb // bfdot z27.s, z13.h, z2.h[1]
	WORD $0x646b419e // bfdot z30.s, z12.h, z3.h[1]
	WORD $0x646b41bf // bfdot z31.s, z13.h, z3.h[1]
	WORD $0xa4a0a008 // ld1h {z8.h}, p0/z, [x0]  (line 2)
	WORD $0xa4a1a409 // ld1h {z9.h}, p1/z, [x0, #1, mul vl]
	ADD  $64, R0, R0
	WORD $0x64704110 // bfdot z16.s, z8.h, z0.h[2]
	WORD $0x64704131 // bfdot z17.s, z9.h, z0.h[2]
	WORD $0x64714114 // bfdot z20.s, z8.h, z1.h[2]
	WORD $0x64714135 // bfdot z21.s, z9.h, z1.h[2]
	WORD $0x64724118 // bfdot z24.s, z8.h, z2.h[2]
	WORD $0x64724139 // bfdot z25.s, z9.h, z2.h[2]
	WORD $0x6473411c // bfdot z28.s, z8.h, z3.h[2]
	WORD $0x6473413d // bfdot z29.s, z9.h, z3.h[2]
	WORD $0xa4a0a00c // ld1h {z12.h}, p0/z, [x0]  (line 3)
	WORD $0xa4a1a40d // ld1h {z13.h}, p1/z, [x0, #1, mul vl]
	ADD  $64, R0, R0
	WORD $0x64784192 // bfdot z18.s, z12.h, z0.h[3]
	WORD $0x647841b3 // bfdot z19.s, z13.h, z0.h[3]
	WORD $0x64794196 // bfdot z22.s, z12.h, z1.h[3]
	WORD $0x647941b7 // bfdot z23.s, z13.h, z1.h[3]
	WORD $0x647a419a // bfdot z26.s, z12.h, z2.h[3]
	WORD $0x647a41bb // bfdot z27.s, z13.h, z2.h[3]
	WORD $0x647b419e // bfdot z30.s, z12.h, z3.h[3]
	WORD $0x647b41bf // bfdot z31.s, z13.h, z3.h[3]
	SUBS $1, R12, R12
	BNE  s24quad

s24tail:
	CBZ  R13, s24sum

s24one:
	WORD $0x8540cd00 // ld1rw {z0.s}, p3/z, [x8]  (row 0: one pair)
	ADD  $4, R8, R8
	WORD $0x8540cd21 // ld1rw {z1.s}, p3/z, [x9]  (row 1: one pair)
	ADD  $4, R9, R9
	WORD $0x8540cd42 // ld1rw {z2.s}, p3/z, [x10]  (row 2: one pair)
	ADD  $4, R10, R10
	WORD $0x8540cd63 // ld1rw {z3.s}, p3/z, [x11]  (row 3: one pair)
	ADD  $4, R11, R11
	WORD $0xa4a0a008 // ld1h {z8.h}, p0/z, [x0]
	WORD $0xa4a1a409 // ld1h {z9.h}, p1/z, [x0, #1, mul vl]
	ADD  $64, R0, R0
	WORD $0x64604110 // bfdot z16.s, z8.h, z0.h[0]
	WORD $0x64604131 // bfdot z17.s, z9.h, z0.h[0]
	WORD $0x64614114 // bfdot z20.s, z8.h, z1.h[0]
	WORD $0x64614135 // bfdot z21.s, z9.h, z1.h[0]
	WORD $0x64624118 // bfdot z24.s, z8.h, z2.h[0]
	WORD $0x64624139 // bfdot z25.s, z9.h, z2.h[0]
	WORD $0x6463411c // bfdot z28.s, z8.h, z3.h[0]
	WORD $0x6463413d // bfdot z29.s, z9.h, z3.h[0]
	SUBS $1, R13, R13
	BNE  s24one

s24sum:
	WORD $0x65920210 // fadd z16.s, z16.s, z18.s
	WORD $0x65930231 // fadd z17.s, z17.s, z19.s
	WORD $0x65960294 // fadd z20.s, z20.s, z22.s
	WORD $0x659702b5 // fadd z21.s, z21.s, z23.s
	WORD $0x659a0318 // fadd z24.s, z24.s, z26.s
	WORD $0x659b0339 // fadd z25.s, z25.s, z27.s
	WORD $0x659e039c // fadd z28.s, z28.s, z30.s
	WORD $0x659f03bd // fadd z29.s, z29.s, z31.s
	MOVD R5, R14
	ADD  R6, R14, R15
	ADD  R6, R15, R16
	ADD  R6, R16, R17
	CBZ  R7, s24store
	WORD $0xa540b1c8 // ld1w {z8.s}, p4/z, [x14]
	WORD $0xa541b5c9 // ld1w {z9.s}, p5/z, [x14, #1, mul vl]
	WORD $0x65880210 // fadd z16.s, z16.s, z8.s
	WORD $0x65890231 // fadd z17.s, z17.s, z9.s
	WORD $0xa540b1e8 // ld1w {z8.s}, p4/z, [x15]
	WORD $0xa541b5e9 // ld1w {z9.s}, p5/z, [x15, #1, mul vl]
	WORD $0x65880294 // fadd z20.s, z20.s, z8.s
	WORD $0x658902b5 // fadd z21.s, z21.s, z9.s
	WORD $0xa540b208 // ld1w {z8.s}, p4/z, [x16]
	WORD $0xa541b609 // ld1w {z9.s}, p5/z, [x16, #1, mul vl]
	WORD $0x65880318 // fadd z24.s, z24.s, z8.s
	WORD $0x65890339 // fadd z25.s, z25.s, z9.s
	WORD $0xa540b228 // ld1w {z8.s}, p4/z, [x17]
	WORD $0xa541b629 // ld1w {z9.s}, p5/z, [x17, #1, mul vl]
	WORD $0x6588039c // fadd z28.s, z28.s, z8.s
	WORD $0x658903bd // fadd z29.s, z29.s, z9.s

s24store:
	WORD $0xe540f1d0 // st1w {z16.s}, p4, [x14]
	WORD $0xe541f5d1 // st1w {z17.s}, p5, [x14, #1, mul vl]
	WORD $0xe540f1f4 // st1w {z20.s}, p4, [x15]
	WORD $0xe541f5f5 // st1w {z21.s}, p5, [x15, #1, mul vl]
	WORD $0xe540f218 // st1w {z24.s}, p4, [x16]
	WORD $0xe541f619 // st1w {z25.s}, p5, [x16, #1, mul vl]
	WORD $0xe540f23c // st1w {z28.s}, p4, [x17]
	WORD $0xe541f63d // st1w {z29.s}, p5, [x17, #1, mul vl]
	ADD  $64, R5, R5
	SUBS $1, R1, R1
	BNE  s24panel

s24done:
	RET

// func bf16SVE1_1x16(w *byte, np, npairs int, xb *uint16, ldx int, y *float32, ldy int, acc int)
TEXT ·bf16SVE1_1x16(SB), NOSPLIT, $0-64
	MOVD w+0(FP), R0
	MOVD np+8(FP), R1
	MOVD npairs+16(FP), R2
	MOVD xb+24(FP), R3
	MOVD y+40(FP), R5
	MOVD acc+56(FP), R7
	CBZ  R1, s11done
	// p0, p1: the halfwords [c·VL/16, (c+1)·VL/16) ∩ [0, 32) of a line;
	// p4, p5: the same chunks as f32 lanes ∩ [0, 16)
	MOVD $32, R19
	MOVD $0, R20
	WORD $0x25731e80 // whilelo p0.h, x20, x19
	MOVD $16, R19
	MOVD $0, R20
	WORD $0x25b31e84 // whilelo p4.s, x20, x19
	WORD $0x2558e3e2 // ptrue p2.h
	WORD $0x2598e3e3 // ptrue p3.s

s11panel:
	MOVD R3, R8
	WORD $0x25b8c010 // dup z16.s, #0
	WORD $0x25b8c011 // dup z17.s, #0
	WORD $0x25b8c012 // dup z18.s, #0
	WORD $0x25b8c013 // dup z19.s, #0
	LSR  $2, R2, R12 // steps of 4 pairs
	AND  $3, R2, R13 // tail pairs
	CBZ  R12, s11tail

s11quad:
	WORD $0xa4802900 // ld1rqh {z0.h}, p2/z, [x8]  (row 0: 4 pairs in every segment)
	ADD  $16, R8, R8
	WORD $0xa4a0a008 // ld1h {z8.h}, p0/z, [x0]  (line 0)
	ADD  $64, R0, R0
	WORD $0x64604110 // bfdot z16.s, z8.h, z0.h[0]
	WORD $0xa4a0a00c // ld1h {z12.h}, p0/z, [x0]  (line 1)
	ADD  $64, R0, R0
	WORD $0x64684191 // bfdot z17.s, z12.h, z0.h[1]
	WORD $0xa4a0a008 // ld1h {z8.h}, p0/z, [x0]  (line 2)
	ADD  $64, R0, R0
	WORD $0x64704112 // bfdot z18.s, z8.h, z0.h[2]
	WORD $0xa4a0a00c // ld1h {z12.h}, p0/z, [x0]  (line 3)
	ADD  $64, R0, R0
	WORD $0x64784193 // bfdot z19.s, z12.h, z0.h[3]
	SUBS $1, R12, R12
	BNE  s11quad

s11tail:
	CBZ  R13, s11sum

s11one:
	WORD $0x8540cd00 // ld1rw {z0.s}, p3/z, [x8]  (row 0: one pair)
	ADD  $4, R8, R8
	WORD $0xa4a0a008 // ld1h {z8.h}, p0/z, [x0]
	ADD  $64, R0, R0
	WORD $0x64604110 // bfdot z16.s, z8.h, z0.h[0]
	SUBS $1, R13, R13
	BNE  s11one

s11sum:
	WORD $0x65920210 // fadd z16.s, z16.s, z18.s
	WORD $0x65930231 // fadd z17.s, z17.s, z19.s
	WORD $0x65910210 // fadd z16.s, z16.s, z17.s
	MOVD R5, R14
	CBZ  R7, s11store
	WORD $0xa540b1c8 // ld1w {z8.s}, p4/z, [x14]
	WORD $0x65880210 // fadd z16.s, z16.s, z8.s

s11store:
	WORD $0xe540f1d0 // st1w {z16.s}, p4, [x14]
	ADD  $64, R5, R5
	SUBS $1, R1, R1
	BNE  s11panel

s11done:
	RET

// func bf16SVE1_2x16(w *byte, np, npairs int, xb *uint16, ldx int, y *float32, ldy int, acc int)
TEXT ·bf16SVE1_2x16(SB), NOSPLIT, $0-64
	MOVD w+0(FP), R0
	MOVD np+8(FP), R1
	MOVD npairs+16(FP), R2
	MOVD xb+24(FP), R3
	MOVD ldx+32(FP), R4
	MOVD y+40(FP), R5
	MOVD ldy+48(FP), R6
	LSL  $2, R6, R6
	MOVD acc+56(FP), R7
	CBZ  R1, s12done
	// p0, p1: the halfwords [c·VL/16, (c+1)·VL/16) ∩ [0, 32) of a line;
	// p4, p5: the same chunks as f32 lanes ∩ [0, 16)
	MOVD $32, R19
	MOVD $0, R20
	WORD $0x25731e80 // whilelo p0.h, x20, x19
	MOVD $16, R19
	MOVD $0, R20
	WORD $0x25b31e84 // whilelo p4.s, x20, x19
	WORD $0x2558e3e2 // ptrue p2.h
	WORD $0x2598e3e3 // ptrue p3.s

s12panel:
	MOVD R3, R8
	ADD  R4, R8, R9
	WORD $0x25b8c010 // dup z16.s, #0
	WORD $0x25b8c011 // dup z17.s, #0
	WORD $0x25b8c012 // dup z18.s, #0
	WORD $0x25b8c013 // dup z19.s, #0
	WORD $0x25b8c014 // dup z20.s, #0
	WORD $0x25b8c015 // dup z21.s, #0
	WORD $0x25b8c016 // dup z22.s, #0
	WORD $0x25b8c017 // dup z23.s, #0
	LSR  $2, R2, R12 // steps of 4 pairs
	AND  $3, R2, R13 // tail pairs
	CBZ  R12, s12tail

s12quad:
	WORD $0xa4802900 // ld1rqh {z0.h}, p2/z, [x8]  (row 0: 4 pairs in every segment)
	ADD  $16, R8, R8
	WORD $0xa4802921 // ld1rqh {z1.h}, p2/z, [x9]  (row 1: 4 pairs in every segment)
	ADD  $16, R9, R9
	WORD $0xa4a0a008 // ld1h {z8.h}, p0/z, [x0]  (line 0)
	ADD  $64, R0, R0
	WORD $0x64604110 // bfdot z16.s, z8.h, z0.h[0]
	WORD $0x64614114 // bfdot z20.s, z8.h, z1.h[0]
	WORD $0xa4a0a00c // ld1h {z12.h}, p0/z, [x0]  (line 1)
	ADD  $64, R0, R0
	WORD $0x64684191 // bfdot z17.s, z12.h, z0.h[1]
	WORD $0x64694195 // bfdot z21.s, z12.h, z1.h[1]
	WORD $0xa4a0a008 // ld1h {z8.h}, p0/z, [x0]  (line 2)
	ADD  $64, R0, R0
	WORD $0x64704112 // bfdot z18.s, z8.h, z0.h[2]
	WORD $0x64714116 // bfdot z22.s, z8.h, z1.h[2]
	WORD $0xa4a0a00c // ld1h {z12.h}, p0/z, [x0]  (line 3)
	ADD  $64, R0, R0
	WORD $0x64784193 // bfdot z19.s, z12.h, z0.h[3]
	WORD $0x64794197 // bfdot z23.s, z12.h, z1.h[3]
	SUBS $1, R12, R12
	BNE  s12quad

s12tail:
	CBZ  R13, s12sum

s12one:
	WORD $0x8540cd00 // ld1rw {z0.s}, p3/z, [x8]  (row 0: one pair)
	ADD  $4, R8, R8
	WORD $0x8540cd21 // ld1rw {z1.s}, p3/z, [x9]  (row 1: one pair)
	ADD  $4, R9, R9
	WORD $0xa4a0a008 // ld1h {z8.h}, p0/z, [x0]
	ADD  $64, R0, R0
	WORD $0x64604110 // bfdot z16.s, z8.h, z0.h[0]
	WORD $0x64614114 // bfdot z20.s, z8.h, z1.h[0]
	SUBS $1, R13, R13
	BNE  s12one

s12sum:
	WORD $0x65920210 // fadd z16.s, z16.s, z18.s
	WORD $0x65930231 // fadd z17.s, z17.s, z19.s
	WORD $0x65910210 // fadd z16.s, z16.s, z17.s
	WORD $0x65960294 // fadd z20.s, z20.s, z22.s
	WORD $0x659702b5 // fadd z21.s, z21.s, z23.s
	WORD $0x65950294 // fadd z20.s, z20.s, z21.s
	MOVD R5, R14
	ADD  R6, R14, R15
	CBZ  R7, s12store
	WORD $0xa540b1c8 // ld1w {z8.s}, p4/z, [x14]
	WORD $0x65880210 // fadd z16.s, z16.s, z8.s
	WORD $0xa540b1e8 // ld1w {z8.s}, p4/z, [x15]
	WORD $0x65880294 // fadd z20.s, z20.s, z8.s

s12store:
	WORD $0xe540f1d0 // st1w {z16.s}, p4, [x14]
	WORD $0xe540f1f4 // st1w {z20.s}, p4, [x15]
	ADD  $64, R5, R5
	SUBS $1, R1, R1
	BNE  s12panel

s12done:
	RET

// func bf16SVE1_3x16(w *byte, np, npairs int, xb *uint16, ldx int, y *float32, ldy int, acc int)
TEXT ·bf16SVE1_3x16(SB), NOSPLIT, $0-64
	MOVD w+0(FP), R0
	MOVD np+8(FP), R1
	MOVD npairs+16(FP), R2
	MOVD xb+24(FP), R3
	MOVD ldx+32(FP), R4
	MOVD y+40(FP), R5
	MOVD ldy+48(FP), R6
	LSL  $2, R6, R6
	MOVD acc+56(FP), R7
	CBZ  R1, s13done
	// p0, p1: the halfwords [c·VL/16, (c+1)·VL/16) ∩ [0, 32) of a line;
	// p4, p5: the same chunks as f32 lanes ∩ [0, 16)
	MOVD $32, R19
	MOVD $0, R20
	WORD $0x25731e80 // whilelo p0.h, x20, x19
	MOVD $16, R19
	MOVD $0, R20
	WORD $0x25b31e84 // whilelo p4.s, x20, x19
	WORD $0x2558e3e2 // ptrue p2.h
	WORD $0x2598e3e3 // ptrue p3.s

s13panel:
	MOVD R3, R8
	ADD  R4, R8, R9
	ADD  R4, R9, R10
	WORD $0x25b8c010 // dup z16.s, #0
	WORD $0x25b8c011 // dup z17.s, #0
	WORD $0x25b8c012 // dup z18.s, #0
	WORD $0x25b8c013 // dup z19.s, #0
	WORD $0x25b8c014 // dup z20.s, #0
	WORD $0x25b8c015 // dup z21.s, #0
	WORD $0x25b8c016 // dup z22.s, #0
	WORD $0x25b8c017 // dup z23.s, #0
	WORD $0x25b8c018 // dup z24.s, #0
	WORD $0x25b8c019 // dup z25.s, #0
	WORD $0x25b8c01a // dup z26.s, #0
	WORD $0x25b8c01b // dup z27.s, #0
	LSR  $2, R2, R12 // steps of 4 pairs
	AND  $3, R2, R13 // tail pairs
	CBZ  R12, s13tail

s13quad:
	WORD $0xa4802900 // ld1rqh {z0.h}, p2/z, [x8]  (row 0: 4 pairs in every segment)
	ADD  $16, R8, R8
	WORD $0xa4802921 // ld1rqh {z1.h}, p2/z, [x9]  (row 1: 4 pairs in every segment)
	ADD  $16, R9, R9
	WORD $0xa4802942 // ld1rqh {z2.h}, p2/z, [x10]  (row 2: 4 pairs in every segment)
	ADD  $16, R10, R10
	WORD $0xa4a0a008 // ld1h {z8.h}, p0/z, [x0]  (line 0)
	ADD  $64, R0, R0
	WORD $0x64604110 // bfdot z16.s, z8.h, z0.h[0]
	WORD $0x64614114 // bfdot z20.s, z8.h, z1.h[0]
	WORD $0x64624118 // bfdot z24.s, z8.h, z2.h[0]
	WORD $0xa4a0a00c // ld1h {z12.h}, p0/z, [x0]  (line 1)
	ADD  $64, R0, R0
	WORD $0x64684191 // bfdot z17.s, z12.h, z0.h[1]
	WORD $0x64694195 // bfdot z21.s, z12.h, z1.h[1]
	WORD $0x646a4199 // bfdot z25.s, z12.h, z2.h[1]
	WORD $0xa4a0a008 // ld1h {z8.h}, p0/z, [x0]  (line 2)
	ADD  $64, R0, R0
	WORD $0x64704112 // bfdot z18.s, z8.h, z0.h[2]
	WORD $0x64714116 // bfdot z22.s, z8.h, z1.h[2]
	WORD $0x6472411a // bfdot z26.s, z8.h, z2.h[2]
	WORD $0xa4a0a00c // ld1h {z12.h}, p0/z, [x0]  (line 3)
	ADD  $64, R0, R0
	WORD $0x64784193 // bfdot z19.s, z12.h, z0.h[3]
	WORD $0x64794197 // bfdot z23.s, z12.h, z1.h[3]
	WORD $0x647a419b // bfdot z27.s, z12.h, z2.h[3]
	SUBS $1, R12, R12
	BNE  s13quad

s13tail:
	CBZ  R13, s13sum

s13one:
	WORD $0x8540cd00 // ld1rw {z0.s}, p3/z, [x8]  (row 0: one pair)
	ADD  $4, R8, R8
	WORD $0x8540cd21 // ld1rw {z1.s}, p3/z, [x9]  (row 1: one pair)
	ADD  $4, R9, R9
	WORD $0x8540cd42 // ld1rw {z2.s}, p3/z, [x10]  (row 2: one pair)
	ADD  $4, R10, R10
	WORD $0xa4a0a008 // ld1h {z8.h}, p0/z, [x0]
	ADD  $64, R0, R0
	WORD $0x64604110 // bfdot z16.s, z8.h, z0.h[0]
	WORD $0x64614114 // bfdot z20.s, z8.h, z1.h[0]
	WORD $0x64624118 // bfdot z24.s, z8.h, z2.h[0]
	SUBS $1, R13, R13
	BNE  s13one

s13sum:
	WORD $0x65920210 // fadd z16.s, z16.s, z18.s
	WORD $0x65930231 // fadd z17.s, z17.s, z19.s
	WORD $0x65910210 // fadd z16.s, z16.s, z17.s
	WORD $0x65960294 // fadd z20.s, z20.s, z22.s
	WORD $0x659702b5 // fadd z21.s, z21.s, z23.s
	WORD $0x65950294 // fadd z20.s, z20.s, z21.s
	WORD $0x659a0318 // fadd z24.s, z24.s, z26.s
	WORD $0x659b0339 // fadd z25.s, z25.s, z27.s
	WORD $0x65990318 // fadd z24.s, z24.s, z25.s
	MOVD R5, R14
	ADD  R6, R14, R15
	ADD  R6, R15, R16
	CBZ  R7, s13store
	WORD $0xa540b1c8 // ld1w {z8.s}, p4/z, [x14]
	WORD $0x65880210 // fadd z16.s, z16.s, z8.s
	WORD $0xa540b1e8 // ld1w {z8.s}, p4/z, [x15]
	WORD $0x65880294 // fadd z20.s, z20.s, z8.s
	WORD $0xa540b208 // ld1w {z8.s}, p4/z, [x16]
	WORD $0x65880318 // fadd z24.s, z24.s, z8.s

s13store:
	WORD $0xe540f1d0 // st1w {z16.s}, p4, [x14]
	WORD $0xe540f1f4 // st1w {z20.s}, p4, [x15]
	WORD $0xe540f218 // st1w {z24.s}, p4, [x16]
	ADD  $64, R5, R5
	SUBS $1, R1, R1
	BNE  s13panel

s13done:
	RET

// func bf16SVE1_4x16(w *byte, np, npairs int, xb *uint16, ldx int, y *float32, ldy int, acc int)
TEXT ·bf16SVE1_4x16(SB), NOSPLIT, $0-64
	MOVD w+0(FP), R0
	MOVD np+8(FP), R1
	MOVD npairs+16(FP), R2
	MOVD xb+24(FP), R3
	MOVD ldx+32(FP), R4
	MOVD y+40(FP), R5
	MOVD ldy+48(FP), R6
	LSL  $2, R6, R6
	MOVD acc+56(FP), R7
	CBZ  R1, s14done
	// p0, p1: the halfwords [c·VL/16, (c+1)·VL/16) ∩ [0, 32) of a line;
	// p4, p5: the same chunks as f32 lanes ∩ [0, 16)
	MOVD $32, R19
	MOVD $0, R20
	WORD $0x25731e80 // whilelo p0.h, x20, x19
	MOVD $16, R19
	MOVD $0, R20
	WORD $0x25b31e84 // whilelo p4.s, x20, x19
	WORD $0x2558e3e2 // ptrue p2.h
	WORD $0x2598e3e3 // ptrue p3.s

s14panel:
	MOVD R3, R8
	ADD  R4, R8, R9
	ADD  R4, R9, R10
	ADD  R4, R10, R11
	WORD $0x25b8c010 // dup z16.s, #0
	WORD $0x25b8c011 // dup z17.s, #0
	WORD $0x25b8c012 // dup z18.s, #0
	WORD $0x25b8c013 // dup z19.s, #0
	WORD $0x25b8c014 // dup z20.s, #0
	WORD $0x25b8c015 // dup z21.s, #0
	WORD $0x25b8c016 // dup z22.s, #0
	WORD $0x25b8c017 // dup z23.s, #0
	WORD $0x25b8c018 // dup z24.s, #0
	WORD $0x25b8c019 // dup z25.s, #0
	WORD $0x25b8c01a // dup z26.s, #0
	WORD $0x25b8c01b // dup z27.s, #0
	WORD $0x25b8c01c // dup z28.s, #0
	WORD $0x25b8c01d // dup z29.s, #0
	WORD $0x25b8c01e // dup z30.s, #0
	WORD $0x25b8c01f // dup z31.s, #0
	LSR  $2, R2, R12 // steps of 4 pairs
	AND  $3, R2, R13 // tail pairs
	CBZ  R12, s14tail

s14quad:
	WORD $0xa4802900 // ld1rqh {z0.h}, p2/z, [x8]  (row 0: 4 pairs in every segment)
	ADD  $16, R8, R8
	WORD $0xa4802921 // ld1rqh {z1.h}, p2/z, [x9]  (row 1: 4 pairs in every segment)
	ADD  $16, R9, R9
	WORD $0xa4802942 // ld1rqh {z2.h}, p2/z, [x10]  (row 2: 4 pairs in every segment)
	ADD  $16, R10, R10
	WORD $0xa4802963 // ld1rqh {z3.h}, p2/z, [x11]  (row 3: 4 pairs in every segment)
	ADD  $16, R11, R11
	WORD $0xa4a0a008 // ld1h {z8.h}, p0/z, [x0]  (line 0)
	ADD  $64, R0, R0
	WORD $0x64604110 // bfdot z16.s, z8.h, z0.h[0]
	WORD $0x64614114 // bfdot z20.s, z8.h, z1.h[0]
	WORD $0x64624118 // bfdot z24.s, z8.h, z2.h[0]
	WORD $0x6463411c // bfdot z28.s, z8.h, z3.h[0]
	WORD $0xa4a0a00c // ld1h {z12.h}, p0/z, [x0]  (line 1)
	ADD  $64, R0, R0
	WORD $0x64684191 // bfdot z17.s, z12.h, z0.h[1]
	WORD $0x64694195 // bfdot z21.s, z12.h, z1.h[1]
	WORD $0x646a4199 // bfdot z25.s, z12.h, z2.h[1]
	WORD $0x646b419d // bfdot z29.s, z12.h, z3.h[1]
	WORD $0xa4a0a008 // ld1h {z8.h}, p0/z, [x0]  (line 2)
	ADD  $64, R0, R0
	WORD $0x64704112 // bfdot z18.s, z8.h, z0.h[2]
	WORD $0x64714116 // bfdot z22.s, z8.h, z1.h[2]
	WORD $0x6472411a // bfdot z26.s, z8.h, z2.h[2]
	WORD $0x6473411e // bfdot z30.s, z8.h, z3.h[2]
	WORD $0xa4a0a00c // ld1h {z12.h}, p0/z, [x0]  (line 3)
	ADD  $64, R0, R0
	WORD $0x64784193 // bfdot z19.s, z12.h, z0.h[3]
	WORD $0x64794197 // bfdot z23.s, z12.h, z1.h[3]
	WORD $0x647a419b // bfdot z27.s, z12.h, z2.h[3]
	WORD $0x647b419f // bfdot z31.s, z12.h, z3.h[3]
	SUBS $1, R12, R12
	BNE  s14quad

s14tail:
	CBZ  R13, s14sum

s14one:
	WORD $0x8540cd00 // ld1rw {z0.s}, p3/z, [x8]  (row 0: one pair)
	ADD  $4, R8, R8
	WORD $0x8540cd21 // ld1rw {z1.s}, p3/z, [x9]  (row 1: one pair)
	ADD  $4, R9, R9
	WORD $0x8540cd42 // ld1rw {z2.s}, p3/z, [x10]  (row 2: one pair)
	ADD  $4, R10, R10
	WORD $0x8540cd63 // ld1rw {z3.s}, p3/z, [x11]  (row 3: one pair)
	ADD  $4, R11, R11
	WORD $0xa4a0a008 // ld1h {z8.h}, p0/z, [x0]
	ADD  $64, R0, R0
	WORD $0x64604110 // bfdot z16.s, z8.h, z0.h[0]
	WORD $0x64614114 // bfdot z20.s, z8.h, z1.h[0]
	WORD $0x64624118 // bfdot z24.s, z8.h, z2.h[0]
	WORD $0x6463411c // bfdot z28.s, z8.h, z3.h[0]
	SUBS $1, R13, R13
	BNE  s14one

s14sum:
	WORD $0x65920210 // fadd z16.s, z16.s, z18.s
	WORD $0x65930231 // fadd z17.s, z17.s, z19.s
	WORD $0x65910210 // fadd z16.s, z16.s, z17.s
	WORD $0x65960294 // fadd z20.s, z20.s, z22.s
	WORD $0x659702b5 // fadd z21.s, z21.s, z23.s
	WORD $0x65950294 // fadd z20.s, z20.s, z21.s
	WORD $0x659a0318 // fadd z24.s, z24.s, z26.s
	WORD $0x659b0339 // fadd z25.s, z25.s, z27.s
	WORD $0x65990318 // fadd z24.s, z24.s, z25.s
	WORD $0x659e039c // fadd z28.s, z28.s, z30.s
	WORD $0x659f03bd // fadd z29.s, z29.s, z31.s
	WORD $0x659d039c // fadd z28.s, z28.s, z29.s
	MOVD R5, R14
	ADD  R6, R14, R15
	ADD  R6, R15, R16
	ADD  R6, R16, R17
	CBZ  R7, s14store
	WORD $0xa540b1c8 // ld1w {z8.s}, p4/z, [x14]
	WORD $0x65880210 // fadd z16.s, z16.s, z8.s
	WORD $0xa540b1e8 // ld1w {z8.s}, p4/z, [x15]
	WORD $0x65880294 // fadd z20.s, z20.s, z8.s
	WORD $0xa540b208 // ld1w {z8.s}, p4/z, [x16]
	WORD $0x65880318 // fadd z24.s, z24.s, z8.s
	WORD $0xa540b228 // ld1w {z8.s}, p4/z, [x17]
	WORD $0x6588039c // fadd z28.s, z28.s, z8.s

s14store:
	WORD $0xe540f1d0 // st1w {z16.s}, p4, [x14]
	WORD $0xe540f1f4 // st1w {z20.s}, p4, [x15]
	WORD $0xe540f218 // st1w {z24.s}, p4, [x16]
	WORD $0xe540f23c // st1w {z28.s}, p4, [x17]
	ADD  $64, R5, R5
	SUBS $1, R1, R1
	BNE  s14panel

s14done:
	RET
