//go:build arm64 && gc && !purego

// Hand-written SVE MLA decode kernels at R = 512, DR = 64 (see
// mla_arm64.go for their Go semantics), vector-length agnostic: the
// scores run 4×4 tiles of dot products over the 576 dimensions one vector
// at a time (WHILELO against 576: any vector length, the last vector
// partial), reduced by FADDV; the latent accumulation runs 4 heads × 4
// vectors of columns (WHILELO against 512). Every SVE instruction is
// WORD-encoded; the mnemonic comments are checked against GNU as by
// _asm/armwords.

#include "textflag.h"

// func mlaScoresSVE_576(q *float32, k *float32, s *float32, lds int, nh int, nk int, scale float32)
TEXT ·mlaScoresSVE_576(SB), NOSPLIT, $0-52
	MOVD q+0(FP), R0
	MOVD k+8(FP), R1
	MOVD s+16(FP), R2
	MOVD lds+24(FP), R3
	MOVD nh+32(FP), R4
	MOVD nk+40(FP), R5
	FMOVS scale+48(FP), F10
	LSL  $2, R3, R3
	LSL  $2, R3, R21 // 4 rows of s
	MOVD $576, R22
	WORD $0x2598e3e4 // ptrue p4.s
	CBZ  R4, sdone
	CBZ  R5, sdone

shloop:
	MOVD R1, R7
	MOVD R5, R8
	MOVD R2, R9

sjloop:
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
	MOVD R0, R10
	ADD  $2304, R10, R11
	ADD  $2304, R11, R12
	ADD  $2304, R12, R13
	MOVD R7, R14
	ADD  $2304, R14, R15
	ADD  $2304, R15, R16
	ADD  $2304, R16, R17
	MOVD $0, R19
	WORD $0x25b61e60 // whilelo p0.s, x19, x22

sdloop:
	// z0..z3: 4 query rows, z4..z7: 4 key rows at dimensions [x19, x19+VL/32) ∩ [0, 576)
	WORD $0xa5534140 // ld1w {z0.s}, p0/z, [x10, x19, lsl #2]
	WORD $0xa5534161 // ld1w {z1.s}, p0/z, [x11, x19, lsl #2]
	WORD $0xa5534182 // ld1w {z2.s}, p0/z, [x12, x19, lsl #2]
	WORD $0xa55341a3 // ld1w {z3.s}, p0/z, [x13, x19, lsl #2]
	WORD $0xa55341c4 // ld1w {z4.s}, p0/z, [x14, x19, lsl #2]
	WORD $0xa55341e5 // ld1w {z5.s}, p0/z, [x15, x19, lsl #2]
	WORD $0xa5534206 // ld1w {z6.s}, p0/z, [x16, x19, lsl #2]
	WORD $0xa5534227 // ld1w {z7.s}, p0/z, [x17, x19, lsl #2]
	WORD $0x65a40010 // fmla z16.s, p0/m, z0.s, z4.s
	WORD $0x65a50011 // fmla z17.s, p0/m, z0.s, z5.s
	WORD $0x65a60012 // fmla z18.s, p0/m, z0.s, z6.s
	WORD $0x65a70013 // fmla z19.s, p0/m, z0.s, z7.s
	WORD $0x65a40034 // fmla z20.s, p0/m, z1.s, z4.s
	WORD $0x65a50035 // fmla z21.s, p0/m, z1.s, z5.s
	WORD $0x65a60036 // fmla z22.s, p0/m, z1.s, z6.s
	WORD $0x65a70037 // fmla z23.s, p0/m, z1.s, z7.s
	WORD $0x65a40058 // fmla z24.s, p0/m, z2.s, z4.s
	WORD $0x65a50059 // fmla z25.s, p0/m, z2.s, z5.s
	WORD $0x65a6005a // fmla z26.s, p0/m, z2.s, z6.s
	WORD $0x65a7005b // fmla z27.s, p0/m, z2.s, z7.s
	WORD $0x65a4007c // fmla z28.s, p0/m, z3.s, z4.s
	WORD $0x65a5007d // fmla z29.s, p0/m, z3.s, z5.s
	WORD $0x65a6007e // fmla z30.s, p0/m, z3.s, z6.s
	WORD $0x65a7007f // fmla z31.s, p0/m, z3.s, z7.s
	WORD $0x04b0e3f3 // incw x19
	WORD $0x25b61e60 // whilelo p0.s, x19, x22
	BMI  sdloop

	// reduce each accumulator, scale, store s[h, j..j+3]
	MOVD R9, R20
	WORD $0x65803200 // faddv s0, p4, z16.s
	WORD $0x65803221 // faddv s1, p4, z17.s
	WORD $0x65803242 // faddv s2, p4, z18.s
	WORD $0x65803263 // faddv s3, p4, z19.s
	FMULS F10, F0, F0
	FMULS F10, F1, F1
	FMULS F10, F2, F2
	FMULS F10, F3, F3
	FMOVS F0, (R20)
	FMOVS F1, 4(R20)
	FMOVS F2, 8(R20)
	FMOVS F3, 12(R20)
	ADD  R3, R20, R20
	WORD $0x65803280 // faddv s0, p4, z20.s
	WORD $0x658032a1 // faddv s1, p4, z21.s
	WORD $0x658032c2 // faddv s2, p4, z22.s
	WORD $0x658032e3 // faddv s3, p4, z23.s
	FMULS F10, F0, F0
	FMULS F10, F1, F1
	FMULS F10, F2, F2
	FMULS F10, F3, F3
	FMOVS F0, (R20)
	FMOVS F1, 4(R20)
	FMOVS F2, 8(R20)
	FMOVS F3, 12(R20)
	ADD  R3, R20, R20
	WORD $0x65803300 // faddv s0, p4, z24.s
	WORD $0x65803321 // faddv s1, p4, z25.s
	WORD $0x65803342 // faddv s2, p4, z26.s
	WORD $0x65803363 // faddv s3, p4, z27.s
	FMULS F10, F0, F0
	FMULS F10, F1, F1
	FMULS F10, F2, F2
	FMULS F10, F3, F3
	FMOVS F0, (R20)
	FMOVS F1, 4(R20)
	FMOVS F2, 8(R20)
	FMOVS F3, 12(R20)
	ADD  R3, R20, R20
	WORD $0x65803380 // faddv s0, p4, z28.s
	WORD $0x658033a1 // faddv s1, p4, z29.s
	WORD $0x658033c2 // faddv s2, p4, z30.s
	WORD $0x658033e3 // faddv s3, p4, z31.s
	FMULS F10, F0, F0
	FMULS F10, F1, F1
	FMULS F10, F2, F2
	FMULS F10, F3, F3
	FMOVS F0, (R20)
	FMOVS F1, 4(R20)
	FMOVS F2, 8(R20)
	FMOVS F3, 12(R20)
	ADD  R3, R20, R20
	ADD  $16, R9, R9
	ADD  $9216, R7, R7
	SUBS $4, R8, R8
	BNE  sjloop

	ADD  $9216, R0, R0
	ADD  R21, R2, R2
	SUBS $4, R4, R4
	BNE  shloop

sdone:
	RET

// func mlaAccumSVE_576(z *float32, pt *float32, v *float32, corr *float32, nh int, nk int, ldpt int)
TEXT ·mlaAccumSVE_576(SB), NOSPLIT, $0-56
	MOVD z+0(FP), R0
	MOVD pt+8(FP), R1
	MOVD v+16(FP), R2
	MOVD corr+24(FP), R3
	MOVD nh+32(FP), R4
	MOVD nk+40(FP), R5
	MOVD ldpt+48(FP), R6
	LSL  $2, R6, R6
	MOVD $512, R24
	MOVD $2048, R25
	WORD $0x2598e3e4 // ptrue p4.s
	CBZ  R4, adone

ahloop:
	MOVD $0, R7
	WORD $0x8540d06c // ld1rw {z12.s}, p4/z, [x3]
	WORD $0x8541d06d // ld1rw {z13.s}, p4/z, [x3, #4]
	WORD $0x8542d06e // ld1rw {z14.s}, p4/z, [x3, #8]
	WORD $0x8543d06f // ld1rw {z15.s}, p4/z, [x3, #12]

adloop:
	// p0..p3: columns [d + i·VL/32, d + (i+1)·VL/32) ∩ [0, 512), d = R7/4
	LSR  $2, R7, R23
	WORD $0x25b81ee0 // whilelo p0.s, x23, x24
	WORD $0x04b0e3f7 // incw x23
	WORD $0x25b81ee1 // whilelo p1.s, x23, x24
	WORD $0x04b0e3f7 // incw x23
	WORD $0x25b81ee2 // whilelo p2.s, x23, x24
	WORD $0x04b0e3f7 // incw x23
	WORD $0x25b81ee3 // whilelo p3.s, x23, x24
	ADD  R7, R0, R9
	ADD  $2048, R9, R10
	ADD  $2048, R10, R11
	ADD  $2048, R11, R12
	// acc = corr[h]·z[h, chunk]
	WORD $0xa540a130 // ld1w {z16.s}, p0/z, [x9]
	WORD $0xa541a531 // ld1w {z17.s}, p1/z, [x9, #1, mul vl]
	WORD $0xa542a932 // ld1w {z18.s}, p2/z, [x9, #2, mul vl]
	WORD $0xa543ad33 // ld1w {z19.s}, p3/z, [x9, #3, mul vl]
	WORD $0x658c0a10 // fmul z16.s, z16.s, z12.s
	WORD $0x658c0a31 // fmul z17.s, z17.s, z12.s
	WORD $0x658c0a52 // fmul z18.s, z18.s, z12.s
	WORD $0x658c0a73 // fmul z19.s, z19.s, z12.s
	WORD $0xa540a154 // ld1w {z20.s}, p0/z, [x10]
	WORD $0xa541a555 // ld1w {z21.s}, p1/z, [x10, #1, mul vl]
	WORD $0xa542a956 // ld1w {z22.s}, p2/z, [x10, #2, mul vl]
	WORD $0xa543ad57 // ld1w {z23.s}, p3/z, [x10, #3, mul vl]
	WORD $0x658d0a94 // fmul z20.s, z20.s, z13.s
	WORD $0x658d0ab5 // fmul z21.s, z21.s, z13.s
	WORD $0x658d0ad6 // fmul z22.s, z22.s, z13.s
	WORD $0x658d0af7 // fmul z23.s, z23.s, z13.s
	WORD $0xa540a178 // ld1w {z24.s}, p0/z, [x11]
	WORD $0xa541a579 // ld1w {z25.s}, p1/z, [x11, #1, mul vl]
	WORD $0xa542a97a // ld1w {z26.s}, p2/z, [x11, #2, mul vl]
	WORD $0xa543ad7b // ld1w {z27.s}, p3/z, [x11, #3, mul vl]
	WORD $0x658e0b18 // fmul z24.s, z24.s, z14.s
	WORD $0x658e0b39 // fmul z25.s, z25.s, z14.s
	WORD $0x658e0b5a // fmul z26.s, z26.s, z14.s
	WORD $0x658e0b7b // fmul z27.s, z27.s, z14.s
	WORD $0xa540a19c // ld1w {z28.s}, p0/z, [x12]
	WORD $0xa541a59d // ld1w {z29.s}, p1/z, [x12, #1, mul vl]
	WORD $0xa542a99e // ld1w {z30.s}, p2/z, [x12, #2, mul vl]
	WORD $0xa543ad9f // ld1w {z31.s}, p3/z, [x12, #3, mul vl]
	WORD $0x658f0b9c // fmul z28.s, z28.s, z15.s
	WORD $0x658f0bbd // fmul z29.s, z29.s, z15.s
	WORD $0x658f0bde // fmul z30.s, z30.s, z15.s
	WORD $0x658f0bff // fmul z31.s, z31.s, z15.s
	MOVD R1, R13
	ADD  R7, R2, R14
	MOVD R5, R15
	CBZ  R15, astore

ajloop:
	WORD $0xa540a1c0 // ld1w {z0.s}, p0/z, [x14]
	WORD $0xa541a5c1 // ld1w {z1.s}, p1/z, [x14, #1, mul vl]
	WORD $0xa542a9c2 // ld1w {z2.s}, p2/z, [x14, #2, mul vl]
	WORD $0xa543adc3 // ld1w {z3.s}, p3/z, [x14, #3, mul vl]
	WORD $0x8540d1a4 // ld1rw {z4.s}, p4/z, [x13]
	WORD $0x8541d1a5 // ld1rw {z5.s}, p4/z, [x13, #4]
	WORD $0x8542d1a6 // ld1rw {z6.s}, p4/z, [x13, #8]
	WORD $0x8543d1a7 // ld1rw {z7.s}, p4/z, [x13, #12]
	ADD  $2304, R14, R14
	ADD  R6, R13, R13
	WORD $0x65a40010 // fmla z16.s, p0/m, z0.s, z4.s
	WORD $0x65a40431 // fmla z17.s, p1/m, z1.s, z4.s
	WORD $0x65a40852 // fmla z18.s, p2/m, z2.s, z4.s
	WORD $0x65a40c73 // fmla z19.s, p3/m, z3.s, z4.s
	WORD $0x65a50014 // fmla z20.s, p0/m, z0.s, z5.s
	WORD $0x65a50435 // fmla z21.s, p1/m, z1.s, z5.s
	WORD $0x65a50856 // fmla z22.s, p2/m, z2.s, z5.s
	WORD $0x65a50c77 // fmla z23.s, p3/m, z3.s, z5.s
	WORD $0x65a60018 // fmla z24.s, p0/m, z0.s, z6.s
	WORD $0x65a60439 // fmla z25.s, p1/m, z1.s, z6.s
	WORD $0x65a6085a // fmla z26.s, p2/m, z2.s, z6.s
	WORD $0x65a60c7b // fmla z27.s, p3/m, z3.s, z6.s
	WORD $0x65a7001c // fmla z28.s, p0/m, z0.s, z7.s
	WORD $0x65a7043d // fmla z29.s, p1/m, z1.s, z7.s
	WORD $0x65a7085e // fmla z30.s, p2/m, z2.s, z7.s
	WORD $0x65a70c7f // fmla z31.s, p3/m, z3.s, z7.s
	SUBS $1, R15, R15
	BNE  ajloop

astore:
	WORD $0xe540e130 // st1w {z16.s}, p0, [x9]
	WORD $0xe541e531 // st1w {z17.s}, p1, [x9, #1, mul vl]
	WORD $0xe542e932 // st1w {z18.s}, p2, [x9, #2, mul vl]
	WORD $0xe543ed33 // st1w {z19.s}, p3, [x9, #3, mul vl]
	WORD $0xe540e154 // st1w {z20.s}, p0, [x10]
	WORD $0xe541e555 // st1w {z21.s}, p1, [x10, #1, mul vl]
	WORD $0xe542e956 // st1w {z22.s}, p2, [x10, #2, mul vl]
	WORD $0xe543ed57 // st1w {z23.s}, p3, [x10, #3, mul vl]
	WORD $0xe540e178 // st1w {z24.s}, p0, [x11]
	WORD $0xe541e579 // st1w {z25.s}, p1, [x11, #1, mul vl]
	WORD $0xe542e97a // st1w {z26.s}, p2, [x11, #2, mul vl]
	WORD $0xe543ed7b // st1w {z27.s}, p3, [x11, #3, mul vl]
	WORD $0xe540e19c // st1w {z28.s}, p0, [x12]
	WORD $0xe541e59d // st1w {z29.s}, p1, [x12, #1, mul vl]
	WORD $0xe542e99e // st1w {z30.s}, p2, [x12, #2, mul vl]
	WORD $0xe543ed9f // st1w {z31.s}, p3, [x12, #3, mul vl]
	WORD $0x0433e3e7 // incb x7, all, mul #4
	CMP  R25, R7
	BLT  adloop

	ADD  $8192, R0, R0
	ADD  $16, R1, R1
	ADD  $16, R3, R3
	SUBS $4, R4, R4
	BNE  ahloop

adone:
	RET
