//go:build arm64 && gc && !purego

// Hand-written SVE kernels (the rest: gemm_sve_arm64.s is generated) of the sve and sve_dotprod variants, vector-
// length agnostic (see gemm_arm64.go for their Go semantics): the 16
// columns of a panel are covered by up to four vectors whose predicates
// (WHILELO against 16 lanes, or 64 bytes) switch off what lies beyond
// them, so the same code runs at 128…2048 bits (at 512 bits and more
// one vector covers a panel; the others are all-false). The Q8/Q4/Q2/Q5
// kernels go through a group line by line (the four chunks of a line
// side by side); the Q3/Q6 ones chunk by chunk (all the group's lines of
// one chunk, from a base register per line), as their split k-quads need
// two or three lines at once; the K kernels decode their groups as
// their base formats' kernels do and take each group's codes, d and dm
// from the super-block header chunk by chunk (LD1B/LD1H into 32-bit
// lanes under the same f32 predicates). Every SVE instruction is WORD-encoded; the
// mnemonic comments are checked against GNU as by _asm/armwords.

#include "textflag.h"

#define ARGS \
	MOVD w+0(FP), R0; \
	MOVD np+8(FP), R1; \
	MOVD ng+16(FP), R2; \
	MOVD xq+24(FP), R3; \
	MOVD sums+32(FP), R4; \
	MOVD xs+40(FP), R5; \
	MOVD y+48(FP), R6; \
	MOVD acc+56(FP), R9

// func dotQ3KSVE_16(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)
TEXT ·dotQ3KSVE_16(SB), NOSPLIT, $0-64
	ARGS
	// p0..p3: bytes [i·VL/8, (i+1)·VL/8) ∩ [0, 64) of a 64-byte line;
	// p4..p7: the same chunks as f32/int32 lanes ∩ [0, 16)
	MOVD $64, R8
	MOVD $0, R11
	WORD $0x25281d60 // whilelo p0.b, x11, x8
	WORD $0x0430e3eb // incb x11
	WORD $0x25281d61 // whilelo p1.b, x11, x8
	WORD $0x0430e3eb // incb x11
	WORD $0x25281d62 // whilelo p2.b, x11, x8
	WORD $0x0430e3eb // incb x11
	WORD $0x25281d63 // whilelo p3.b, x11, x8
	MOVD $16, R8
	MOVD $0, R11
	WORD $0x25a81d64 // whilelo p4.s, x11, x8
	WORD $0x04b0e3eb // incw x11
	WORD $0x25a81d65 // whilelo p5.s, x11, x8
	WORD $0x04b0e3eb // incw x11
	WORD $0x25a81d66 // whilelo p6.s, x11, x8
	WORD $0x04b0e3eb // incw x11
	WORD $0x25a81d67 // whilelo p7.s, x11, x8
	WORD $0x2538c71f // dup z31.b, #56

	LSR  $3, R2, R2 // super-blocks of 8 groups

k3p:
	WORD $0x25b8c010 // dup z16.s, #0
	WORD $0x25b8c011 // dup z17.s, #0
	WORD $0x25b8c012 // dup z18.s, #0
	WORD $0x25b8c013 // dup z19.s, #0
	MOVD R3, R7
	MOVD R4, R10
	MOVD R5, R13
	MOVD R2, R23

k3b:
	// super-block header: R20 = scale codes, R21 = high min bits, R24 = d, R25 = dm
	MOVD R0, R20
	ADD  $128, R0, R21
	ADD  $192, R0, R24
	ADD  $224, R0, R25
	ADD  $256, R0, R0 // the 8 groups' value lines
	MOVD $4, R22

k3g:
	// even group
	// z0..z7: the group's k-quads of activations, broadcast
	WORD $0x8540d0e0 // ld1rw {z0.s}, p4/z, [x7, #0]
	WORD $0x8541d0e1 // ld1rw {z1.s}, p4/z, [x7, #4]
	WORD $0x8542d0e2 // ld1rw {z2.s}, p4/z, [x7, #8]
	WORD $0x8543d0e3 // ld1rw {z3.s}, p4/z, [x7, #12]
	WORD $0x8544d0e4 // ld1rw {z4.s}, p4/z, [x7, #16]
	WORD $0x8545d0e5 // ld1rw {z5.s}, p4/z, [x7, #20]
	WORD $0x8546d0e6 // ld1rw {z6.s}, p4/z, [x7, #24]
	WORD $0x8547d0e7 // ld1rw {z7.s}, p4/z, [x7, #28]
	ADD  $32, R7, R7
	WORD $0x25b8c014 // dup z20.s, #0
	WORD $0x25b8c015 // dup z21.s, #0
	WORD $0x25b8c016 // dup z22.s, #0
	WORD $0x25b8c017 // dup z23.s, #0
	WORD $0x25b8c018 // dup z24.s, #0
	WORD $0x25b8c019 // dup z25.s, #0
	WORD $0x25b8c01a // dup z26.s, #0
	WORD $0x25b8c01b // dup z27.s, #0
	// line bases: R0 = line 0, R8 = line 1, R11 = line 2
	ADD  $64, R0, R8
	ADD  $128, R0, R11
	// chunk 0 (p0): L0, L1, L2 in z8, z9, z10
	WORD $0xa400a008 // ld1b {z8.b}, p0/z, [x0]
	WORD $0xa400a109 // ld1b {z9.b}, p0/z, [x8]
	WORD $0xa400a16a // ld1b {z10.b}, p0/z, [x11]
	// k = 24..27: (L0 >> 6) | ((L2 >> 4) & 4); 28..31: (L1 >> 6) | ((L2 >> 5) & 4)
	WORD $0x042a950b // lsr z11.b, z8.b, #6
	WORD $0x042c954c // lsr z12.b, z10.b, #4
	WORD $0x0580360c // and z12.b, z12.b, #0x4
	WORD $0x046c316b // orr z11.d, z11.d, z12.d
	WORD $0x042a952d // lsr z13.b, z9.b, #6
	WORD $0x042b954e // lsr z14.b, z10.b, #5
	WORD $0x0580360e // and z14.b, z14.b, #0x4
	WORD $0x046e31ad // orr z13.d, z13.d, z14.d
	WORD $0x44860174 // sdot z20.s, z11.b, z6.b
	WORD $0x448701b4 // sdot z20.s, z13.b, z7.b
	// k = 4..7, 12..15, 20..23: L & 0x38 = 8·u, summed apart
	WORD $0x043f310b // and z11.d, z8.d, z31.d
	WORD $0x043f312c // and z12.d, z9.d, z31.d
	WORD $0x043f314d // and z13.d, z10.d, z31.d
	WORD $0x44810178 // sdot z24.s, z11.b, z1.b
	WORD $0x44830198 // sdot z24.s, z12.b, z3.b
	WORD $0x448501b8 // sdot z24.s, z13.b, z5.b
	// k = 0..3, 8..11, 16..19: L & 7
	WORD $0x05800648 // and z8.b, z8.b, #0x7
	WORD $0x05800649 // and z9.b, z9.b, #0x7
	WORD $0x0580064a // and z10.b, z10.b, #0x7
	WORD $0x44800114 // sdot z20.s, z8.b, z0.b
	WORD $0x44820134 // sdot z20.s, z9.b, z2.b
	WORD $0x44840154 // sdot z20.s, z10.b, z4.b
	// chunk 1 (p1): L0, L1, L2 in z8, z9, z10
	WORD $0xa401a408 // ld1b {z8.b}, p1/z, [x0, #1, mul vl]
	WORD $0xa401a509 // ld1b {z9.b}, p1/z, [x8, #1, mul vl]
	WORD $0xa401a56a // ld1b {z10.b}, p1/z, [x11, #1, mul vl]
	// k = 24..27: (L0 >> 6) | ((L2 >> 4) & 4); 28..31: (L1 >> 6) | ((L2 >> 5) & 4)
	WORD $0x042a950b // lsr z11.b, z8.b, #6
	WORD $0x042c954c // lsr z12.b, z10.b, #4
	WORD $0x0580360c // and z12.b, z12.b, #0x4
	WORD $0x046c316b // orr z11.d, z11.d, z12.d
	WORD $0x042a952d // lsr z13.b, z9.b, #6
	WORD $0x042b954e // lsr z14.b, z10.b, #5
	WORD $0x0580360e // and z14.b, z14.b, #0x4
	WORD $0x046e31ad // orr z13.d, z13.d, z14.d
	WORD $0x44860175 // sdot z21.s, z11.b, z6.b
	WORD $0x448701b5 // sdot z21.s, z13.b, z7.b
	// k = 4..7, 12..15, 20..23: L & 0x38 = 8·u, summed apart
	WORD $0x043f310b // and z11.d, z8.d, z31.d
	WORD $0x043f312c // and z12.d, z9.d, z31.d
	WORD $0x043f314d // and z13.d, z10.d, z31.d
	WORD $0x44810179 // sdot z25.s, z11.b, z1.b
	WORD $0x44830199 // sdot z25.s, z12.b, z3.b
	WORD $0x448501b9 // sdot z25.s, z13.b, z5.b
	// k = 0..3, 8..11, 16..19: L & 7
	WORD $0x05800648 // and z8.b, z8.b, #0x7
	WORD $0x05800649 // and z9.b, z9.b, #0x7
	WORD $0x0580064a // and z10.b, z10.b, #0x7
	WORD $0x44800115 // sdot z21.s, z8.b, z0.b
	WORD $0x44820135 // sdot z21.s, z9.b, z2.b
	WORD $0x44840155 // sdot z21.s, z10.b, z4.b
	// chunk 2 (p2): L0, L1, L2 in z8, z9, z10
	WORD $0xa402a808 // ld1b {z8.b}, p2/z, [x0, #2, mul vl]
	WORD $0xa402a909 // ld1b {z9.b}, p2/z, [x8, #2, mul vl]
	WORD $0xa402a96a // ld1b {z10.b}, p2/z, [x11, #2, mul vl]
	// k = 24..27: (L0 >> 6) | ((L2 >> 4) & 4); 28..31: (L1 >> 6) | ((L2 >> 5) & 4)
	WORD $0x042a950b // lsr z11.b, z8.b, #6
	WORD $0x042c954c // lsr z12.b, z10.b, #4
	WORD $0x0580360c // and z12.b, z12.b, #0x4
	WORD $0x046c316b // orr z11.d, z11.d, z12.d
	WORD $0x042a952d // lsr z13.b, z9.b, #6
	WORD $0x042b954e // lsr z14.b, z10.b, #5
	WORD $0x0580360e // and z14.b, z14.b, #0x4
	WORD $0x046e31ad // orr z13.d, z13.d, z14.d
	WORD $0x44860176 // sdot z22.s, z11.b, z6.b
	WORD $0x448701b6 // sdot z22.s, z13.b, z7.b
	// k = 4..7, 12..15, 20..23: L & 0x38 = 8·u, summed apart
	WORD $0x043f310b // and z11.d, z8.d, z31.d
	WORD $0x043f312c // and z12.d, z9.d, z31.d
	WORD $0x043f314d // and z13.d, z10.d, z31.d
	WORD $0x4481017a // sdot z26.s, z11.b, z1.b
	WORD $0x4483019a // sdot z26.s, z12.b, z3.b
	WORD $0x448501ba // sdot z26.s, z13.b, z5.b
	// k = 0..3, 8..11, 16..19: L & 7
	WORD $0x05800648 // and z8.b, z8.b, #0x7
	WORD $0x05800649 // and z9.b, z9.b, #0x7
	WORD $0x0580064a // and z10.b, z10.b, #0x7
	WORD $0x44800116 // sdot z22.s, z8.b, z0.b
	WORD $0x44820136 // sdot z22.s, z9.b, z2.b
	WORD $0x44840156 // sdot z22.s, z10.b, z4.b
	// chunk 3 (p3): L0, L1, L2 in z8, z9, z10
	WORD $0xa403ac08 // ld1b {z8.b}, p3/z, [x0, #3, mul vl]
	WORD $0xa403ad09 // ld1b {z9.b}, p3/z, [x8, #3, mul vl]
	WORD $0xa403ad6a // ld1b {z10.b}, p3/z, [x11, #3, mul vl]
	// k = 24..27: (L0 >> 6) | ((L2 >> 4) & 4); 28..31: (L1 >> 6) | ((L2 >> 5) & 4)
	WORD $0x042a950b // lsr z11.b, z8.b, #6
	WORD $0x042c954c // lsr z12.b, z10.b, #4
	WORD $0x0580360c // and z12.b, z12.b, #0x4
	WORD $0x046c316b // orr z11.d, z11.d, z12.d
	WORD $0x042a952d // lsr z13.b, z9.b, #6
	WORD $0x042b954e // lsr z14.b, z10.b, #5
	WORD $0x0580360e // and z14.b, z14.b, #0x4
	WORD $0x046e31ad // orr z13.d, z13.d, z14.d
	WORD $0x44860177 // sdot z23.s, z11.b, z6.b
	WORD $0x448701b7 // sdot z23.s, z13.b, z7.b
	// k = 4..7, 12..15, 20..23: L & 0x38 = 8·u, summed apart
	WORD $0x043f310b // and z11.d, z8.d, z31.d
	WORD $0x043f312c // and z12.d, z9.d, z31.d
	WORD $0x043f314d // and z13.d, z10.d, z31.d
	WORD $0x4481017b // sdot z27.s, z11.b, z1.b
	WORD $0x4483019b // sdot z27.s, z12.b, z3.b
	WORD $0x448501bb // sdot z27.s, z13.b, z5.b
	// k = 0..3, 8..11, 16..19: L & 7
	WORD $0x05800648 // and z8.b, z8.b, #0x7
	WORD $0x05800649 // and z9.b, z9.b, #0x7
	WORD $0x0580064a // and z10.b, z10.b, #0x7
	WORD $0x44800117 // sdot z23.s, z8.b, z0.b
	WORD $0x44820137 // sdot z23.s, z9.b, z2.b
	WORD $0x44840157 // sdot z23.s, z10.b, z4.b
	// dot = Σu·xq = z20..z23 + (z24..z27 >> 3)
	WORD $0x047d9318 // asr z24.s, z24.s, #3
	WORD $0x04b80294 // add z20.s, z20.s, z24.s
	WORD $0x047d9339 // asr z25.s, z25.s, #3
	WORD $0x04b902b5 // add z21.s, z21.s, z25.s
	WORD $0x047d935a // asr z26.s, z26.s, #3
	WORD $0x04ba02d6 // add z22.s, z22.s, z26.s
	WORD $0x047d937b // asr z27.s, z27.s, #3
	WORD $0x04bb02f7 // add z23.s, z23.s, z27.s
	ADD  $192, R0, R0
	// t += s·(xs·float(dot)) − m·(xs·float(Σxq)), s = d·sc, m = dm·mc
	WORD $0x8540d1a2 // ld1rw {z2.s}, p4/z, [x13]  (the group's activation scale)
	ADD  $4, R13, R13
	WORD $0x8540d141 // ld1rw {z1.s}, p4/z, [x10]  (Σxq of the group)
	ADD  $4, R10, R10
	WORD $0x6594b021 // scvtf z1.s, p4/m, z1.s
	WORD $0x65820821 // fmul z1.s, z1.s, z2.s
	// rows of chunk 0
	WORD $0xa440b288 // ld1b {z8.s}, p4/z, [x20]  (sc | low mc bits << 6)
	WORD $0xa440b2a9 // ld1b {z9.s}, p4/z, [x21]  (high mc bits)
	WORD $0xa4c0b30a // ld1h {z10.s}, p4/z, [x24]  (d)
	WORD $0xa4c0b32b // ld1h {z11.s}, p4/z, [x25]  (dm)
	WORD $0x047a950c // lsr z12.s, z8.s, #6
	WORD $0x058000a8 // and z8.s, z8.s, #0x3f
	WORD $0x04629d29 // lsl z9.s, z9.s, #2
	WORD $0x0580f069 // and z9.s, z9.s, #0x3c
	WORD $0x046c3129 // orr z9.d, z9.d, z12.d
	WORD $0x6595b108 // ucvtf z8.s, p4/m, z8.s
	WORD $0x6595b129 // ucvtf z9.s, p4/m, z9.s
	WORD $0x6589b14a // fcvt z10.s, p4/m, z10.h
	WORD $0x6589b16b // fcvt z11.s, p4/m, z11.h
	WORD $0x658a0908 // fmul z8.s, z8.s, z10.s
	WORD $0x658b0929 // fmul z9.s, z9.s, z11.s
	WORD $0x6594b294 // scvtf z20.s, p4/m, z20.s
	WORD $0x65820a94 // fmul z20.s, z20.s, z2.s
	WORD $0x65a81290 // fmla z16.s, p4/m, z20.s, z8.s
	WORD $0x65a13130 // fmls z16.s, p4/m, z9.s, z1.s
	// rows of chunk 1
	WORD $0xa441b688 // ld1b {z8.s}, p5/z, [x20, #1, mul vl]  (sc | low mc bits << 6)
	WORD $0xa441b6a9 // ld1b {z9.s}, p5/z, [x21, #1, mul vl]  (high mc bits)
	WORD $0xa4c1b70a // ld1h {z10.s}, p5/z, [x24, #1, mul vl]  (d)
	WORD $0xa4c1b72b // ld1h {z11.s}, p5/z, [x25, #1, mul vl]  (dm)
	WORD $0x047a950c // lsr z12.s, z8.s, #6
	WORD $0x058000a8 // and z8.s, z8.s, #0x3f
	WORD $0x04629d29 // lsl z9.s, z9.s, #2
	WORD $0x0580f069 // and z9.s, z9.s, #0x3c
	WORD $0x046c3129 // orr z9.d, z9.d, z12.d
	WORD $0x6595b508 // ucvtf z8.s, p5/m, z8.s
	WORD $0x6595b529 // ucvtf z9.s, p5/m, z9.s
	WORD $0x6589b54a // fcvt z10.s, p5/m, z10.h
	WORD $0x6589b56b // fcvt z11.s, p5/m, z11.h
	WORD $0x658a0908 // fmul z8.s, z8.s, z10.s
	WORD $0x658b0929 // fmul z9.s, z9.s, z11.s
	WORD $0x6594b6b5 // scvtf z21.s, p5/m, z21.s
	WORD $0x65820ab5 // fmul z21.s, z21.s, z2.s
	WORD $0x65a816b1 // fmla z17.s, p5/m, z21.s, z8.s
	WORD $0x65a13531 // fmls z17.s, p5/m, z9.s, z1.s
	// rows of chunk 2
	WORD $0xa442ba88 // ld1b {z8.s}, p6/z, [x20, #2, mul vl]  (sc | low mc bits << 6)
	WORD $0xa442baa9 // ld1b {z9.s}, p6/z, [x21, #2, mul vl]  (high mc bits)
	WORD $0xa4c2bb0a // ld1h {z10.s}, p6/z, [x24, #2, mul vl]  (d)
	WORD $0xa4c2bb2b // ld1h {z11.s}, p6/z, [x25, #2, mul vl]  (dm)
	WORD $0x047a950c // lsr z12.s, z8.s, #6
	WORD $0x058000a8 // and z8.s, z8.s, #0x3f
	WORD $0x04629d29 // lsl z9.s, z9.s, #2
	WORD $0x0580f069 // and z9.s, z9.s, #0x3c
	WORD $0x046c3129 // orr z9.d, z9.d, z12.d
	WORD $0x6595b908 // ucvtf z8.s, p6/m, z8.s
	WORD $0x6595b929 // ucvtf z9.s, p6/m, z9.s
	WORD $0x6589b94a // fcvt z10.s, p6/m, z10.h
	WORD $0x6589b96b // fcvt z11.s, p6/m, z11.h
	WORD $0x658a0908 // fmul z8.s, z8.s, z10.s
	WORD $0x658b0929 // fmul z9.s, z9.s, z11.s
	WORD $0x6594bad6 // scvtf z22.s, p6/m, z22.s
	WORD $0x65820ad6 // fmul z22.s, z22.s, z2.s
	WORD $0x65a81ad2 // fmla z18.s, p6/m, z22.s, z8.s
	WORD $0x65a13932 // fmls z18.s, p6/m, z9.s, z1.s
	// rows of chunk 3
	WORD $0xa443be88 // ld1b {z8.s}, p7/z, [x20, #3, mul vl]  (sc | low mc bits << 6)
	WORD $0xa443bea9 // ld1b {z9.s}, p7/z, [x21, #3, mul vl]  (high mc bits)
	WORD $0xa4c3bf0a // ld1h {z10.s}, p7/z, [x24, #3, mul vl]  (d)
	WORD $0xa4c3bf2b // ld1h {z11.s}, p7/z, [x25, #3, mul vl]  (dm)
	WORD $0x047a950c // lsr z12.s, z8.s, #6
	WORD $0x058000a8 // and z8.s, z8.s, #0x3f
	WORD $0x04629d29 // lsl z9.s, z9.s, #2
	WORD $0x0580f069 // and z9.s, z9.s, #0x3c
	WORD $0x046c3129 // orr z9.d, z9.d, z12.d
	WORD $0x6595bd08 // ucvtf z8.s, p7/m, z8.s
	WORD $0x6595bd29 // ucvtf z9.s, p7/m, z9.s
	WORD $0x6589bd4a // fcvt z10.s, p7/m, z10.h
	WORD $0x6589bd6b // fcvt z11.s, p7/m, z11.h
	WORD $0x658a0908 // fmul z8.s, z8.s, z10.s
	WORD $0x658b0929 // fmul z9.s, z9.s, z11.s
	WORD $0x6594bef7 // scvtf z23.s, p7/m, z23.s
	WORD $0x65820af7 // fmul z23.s, z23.s, z2.s
	WORD $0x65a81ef3 // fmla z19.s, p7/m, z23.s, z8.s
	WORD $0x65a13d33 // fmls z19.s, p7/m, z9.s, z1.s
	ADD  $16, R20, R20
	// odd group
	// z0..z7: the group's k-quads of activations, broadcast
	WORD $0x8540d0e0 // ld1rw {z0.s}, p4/z, [x7, #0]
	WORD $0x8541d0e1 // ld1rw {z1.s}, p4/z, [x7, #4]
	WORD $0x8542d0e2 // ld1rw {z2.s}, p4/z, [x7, #8]
	WORD $0x8543d0e3 // ld1rw {z3.s}, p4/z, [x7, #12]
	WORD $0x8544d0e4 // ld1rw {z4.s}, p4/z, [x7, #16]
	WORD $0x8545d0e5 // ld1rw {z5.s}, p4/z, [x7, #20]
	WORD $0x8546d0e6 // ld1rw {z6.s}, p4/z, [x7, #24]
	WORD $0x8547d0e7 // ld1rw {z7.s}, p4/z, [x7, #28]
	ADD  $32, R7, R7
	WORD $0x25b8c014 // dup z20.s, #0
	WORD $0x25b8c015 // dup z21.s, #0
	WORD $0x25b8c016 // dup z22.s, #0
	WORD $0x25b8c017 // dup z23.s, #0
	WORD $0x25b8c018 // dup z24.s, #0
	WORD $0x25b8c019 // dup z25.s, #0
	WORD $0x25b8c01a // dup z26.s, #0
	WORD $0x25b8c01b // dup z27.s, #0
	// line bases: R0 = line 0, R8 = line 1, R11 = line 2
	ADD  $64, R0, R8
	ADD  $128, R0, R11
	// chunk 0 (p0): L0, L1, L2 in z8, z9, z10
	WORD $0xa400a008 // ld1b {z8.b}, p0/z, [x0]
	WORD $0xa400a109 // ld1b {z9.b}, p0/z, [x8]
	WORD $0xa400a16a // ld1b {z10.b}, p0/z, [x11]
	// k = 24..27: (L0 >> 6) | ((L2 >> 4) & 4); 28..31: (L1 >> 6) | ((L2 >> 5) & 4)
	WORD $0x042a950b // lsr z11.b, z8.b, #6
	WORD $0x042c954c // lsr z12.b, z10.b, #4
	WORD $0x0580360c // and z12.b, z12.b, #0x4
	WORD $0x046c316b // orr z11.d, z11.d, z12.d
	WORD $0x042a952d // lsr z13.b, z9.b, #6
	WORD $0x042b954e // lsr z14.b, z10.b, #5
	WORD $0x0580360e // and z14.b, z14.b, #0x4
	WORD $0x046e31ad // orr z13.d, z13.d, z14.d
	WORD $0x44860174 // sdot z20.s, z11.b, z6.b
	WORD $0x448701b4 // sdot z20.s, z13.b, z7.b
	// k = 4..7, 12..15, 20..23: L & 0x38 = 8·u, summed apart
	WORD $0x043f310b // and z11.d, z8.d, z31.d
	WORD $0x043f312c // and z12.d, z9.d, z31.d
	WORD $0x043f314d // and z13.d, z10.d, z31.d
	WORD $0x44810178 // sdot z24.s, z11.b, z1.b
	WORD $0x44830198 // sdot z24.s, z12.b, z3.b
	WORD $0x448501b8 // sdot z24.s, z13.b, z5.b
	// k = 0..3, 8..11, 16..19: L & 7
	WORD $0x05800648 // and z8.b, z8.b, #0x7
	WORD $0x05800649 // and z9.b, z9.b, #0x7
	WORD $0x0580064a // and z10.b, z10.b, #0x7
	WORD $0x44800114 // sdot z20.s, z8.b, z0.b
	WORD $0x44820134 // sdot z20.s, z9.b, z2.b
	WORD $0x44840154 // sdot z20.s, z10.b, z4.b
	// chunk 1 (p1): L0, L1, L2 in z8, z9, z10
	WORD $0xa401a408 // ld1b {z8.b}, p1/z, [x0, #1, mul vl]
	WORD $0xa401a509 // ld1b {z9.b}, p1/z, [x8, #1, mul vl]
	WORD $0xa401a56a // ld1b {z10.b}, p1/z, [x11, #1, mul vl]
	// k = 24..27: (L0 >> 6) | ((L2 >> 4) & 4); 28..31: (L1 >> 6) | ((L2 >> 5) & 4)
	WORD $0x042a950b // lsr z11.b, z8.b, #6
	WORD $0x042c954c // lsr z12.b, z10.b, #4
	WORD $0x0580360c // and z12.b, z12.b, #0x4
	WORD $0x046c316b // orr z11.d, z11.d, z12.d
	WORD $0x042a952d // lsr z13.b, z9.b, #6
	WORD $0x042b954e // lsr z14.b, z10.b, #5
	WORD $0x0580360e // and z14.b, z14.b, #0x4
	WORD $0x046e31ad // orr z13.d, z13.d, z14.d
	WORD $0x44860175 // sdot z21.s, z11.b, z6.b
	WORD $0x448701b5 // sdot z21.s, z13.b, z7.b
	// k = 4..7, 12..15, 20..23: L & 0x38 = 8·u, summed apart
	WORD $0x043f310b // and z11.d, z8.d, z31.d
	WORD $0x043f312c // and z12.d, z9.d, z31.d
	WORD $0x043f314d // and z13.d, z10.d, z31.d
	WORD $0x44810179 // sdot z25.s, z11.b, z1.b
	WORD $0x44830199 // sdot z25.s, z12.b, z3.b
	WORD $0x448501b9 // sdot z25.s, z13.b, z5.b
	// k = 0..3, 8..11, 16..19: L & 7
	WORD $0x05800648 // and z8.b, z8.b, #0x7
	WORD $0x05800649 // and z9.b, z9.b, #0x7
	WORD $0x0580064a // and z10.b, z10.b, #0x7
	WORD $0x44800115 // sdot z21.s, z8.b, z0.b
	WORD $0x44820135 // sdot z21.s, z9.b, z2.b
	WORD $0x44840155 // sdot z21.s, z10.b, z4.b
	// chunk 2 (p2): L0, L1, L2 in z8, z9, z10
	WORD $0xa402a808 // ld1b {z8.b}, p2/z, [x0, #2, mul vl]
	WORD $0xa402a909 // ld1b {z9.b}, p2/z, [x8, #2, mul vl]
	WORD $0xa402a96a // ld1b {z10.b}, p2/z, [x11, #2, mul vl]
	// k = 24..27: (L0 >> 6) | ((L2 >> 4) & 4); 28..31: (L1 >> 6) | ((L2 >> 5) & 4)
	WORD $0x042a950b // lsr z11.b, z8.b, #6
	WORD $0x042c954c // lsr z12.b, z10.b, #4
	WORD $0x0580360c // and z12.b, z12.b, #0x4
	WORD $0x046c316b // orr z11.d, z11.d, z12.d
	WORD $0x042a952d // lsr z13.b, z9.b, #6
	WORD $0x042b954e // lsr z14.b, z10.b, #5
	WORD $0x0580360e // and z14.b, z14.b, #0x4
	WORD $0x046e31ad // orr z13.d, z13.d, z14.d
	WORD $0x44860176 // sdot z22.s, z11.b, z6.b
	WORD $0x448701b6 // sdot z22.s, z13.b, z7.b
	// k = 4..7, 12..15, 20..23: L & 0x38 = 8·u, summed apart
	WORD $0x043f310b // and z11.d, z8.d, z31.d
	WORD $0x043f312c // and z12.d, z9.d, z31.d
	WORD $0x043f314d // and z13.d, z10.d, z31.d
	WORD $0x4481017a // sdot z26.s, z11.b, z1.b
	WORD $0x4483019a // sdot z26.s, z12.b, z3.b
	WORD $0x448501ba // sdot z26.s, z13.b, z5.b
	// k = 0..3, 8..11, 16..19: L & 7
	WORD $0x05800648 // and z8.b, z8.b, #0x7
	WORD $0x05800649 // and z9.b, z9.b, #0x7
	WORD $0x0580064a // and z10.b, z10.b, #0x7
	WORD $0x44800116 // sdot z22.s, z8.b, z0.b
	WORD $0x44820136 // sdot z22.s, z9.b, z2.b
	WORD $0x44840156 // sdot z22.s, z10.b, z4.b
	// chunk 3 (p3): L0, L1, L2 in z8, z9, z10
	WORD $0xa403ac08 // ld1b {z8.b}, p3/z, [x0, #3, mul vl]
	WORD $0xa403ad09 // ld1b {z9.b}, p3/z, [x8, #3, mul vl]
	WORD $0xa403ad6a // ld1b {z10.b}, p3/z, [x11, #3, mul vl]
	// k = 24..27: (L0 >> 6) | ((L2 >> 4) & 4); 28..31: (L1 >> 6) | ((L2 >> 5) & 4)
	WORD $0x042a950b // lsr z11.b, z8.b, #6
	WORD $0x042c954c // lsr z12.b, z10.b, #4
	WORD $0x0580360c // and z12.b, z12.b, #0x4
	WORD $0x046c316b // orr z11.d, z11.d, z12.d
	WORD $0x042a952d // lsr z13.b, z9.b, #6
	WORD $0x042b954e // lsr z14.b, z10.b, #5
	WORD $0x0580360e // and z14.b, z14.b, #0x4
	WORD $0x046e31ad // orr z13.d, z13.d, z14.d
	WORD $0x44860177 // sdot z23.s, z11.b, z6.b
	WORD $0x448701b7 // sdot z23.s, z13.b, z7.b
	// k = 4..7, 12..15, 20..23: L & 0x38 = 8·u, summed apart
	WORD $0x043f310b // and z11.d, z8.d, z31.d
	WORD $0x043f312c // and z12.d, z9.d, z31.d
	WORD $0x043f314d // and z13.d, z10.d, z31.d
	WORD $0x4481017b // sdot z27.s, z11.b, z1.b
	WORD $0x4483019b // sdot z27.s, z12.b, z3.b
	WORD $0x448501bb // sdot z27.s, z13.b, z5.b
	// k = 0..3, 8..11, 16..19: L & 7
	WORD $0x05800648 // and z8.b, z8.b, #0x7
	WORD $0x05800649 // and z9.b, z9.b, #0x7
	WORD $0x0580064a // and z10.b, z10.b, #0x7
	WORD $0x44800117 // sdot z23.s, z8.b, z0.b
	WORD $0x44820137 // sdot z23.s, z9.b, z2.b
	WORD $0x44840157 // sdot z23.s, z10.b, z4.b
	// dot = Σu·xq = z20..z23 + (z24..z27 >> 3)
	WORD $0x047d9318 // asr z24.s, z24.s, #3
	WORD $0x04b80294 // add z20.s, z20.s, z24.s
	WORD $0x047d9339 // asr z25.s, z25.s, #3
	WORD $0x04b902b5 // add z21.s, z21.s, z25.s
	WORD $0x047d935a // asr z26.s, z26.s, #3
	WORD $0x04ba02d6 // add z22.s, z22.s, z26.s
	WORD $0x047d937b // asr z27.s, z27.s, #3
	WORD $0x04bb02f7 // add z23.s, z23.s, z27.s
	ADD  $192, R0, R0
	// t += s·(xs·float(dot)) − m·(xs·float(Σxq)), s = d·sc, m = dm·mc
	WORD $0x8540d1a2 // ld1rw {z2.s}, p4/z, [x13]  (the group's activation scale)
	ADD  $4, R13, R13
	WORD $0x8540d141 // ld1rw {z1.s}, p4/z, [x10]  (Σxq of the group)
	ADD  $4, R10, R10
	WORD $0x6594b021 // scvtf z1.s, p4/m, z1.s
	WORD $0x65820821 // fmul z1.s, z1.s, z2.s
	// rows of chunk 0
	WORD $0xa440b288 // ld1b {z8.s}, p4/z, [x20]  (sc | low mc bits << 6)
	WORD $0xa440b2a9 // ld1b {z9.s}, p4/z, [x21]  (high mc bits)
	WORD $0xa4c0b30a // ld1h {z10.s}, p4/z, [x24]  (d)
	WORD $0xa4c0b32b // ld1h {z11.s}, p4/z, [x25]  (dm)
	WORD $0x047a950c // lsr z12.s, z8.s, #6
	WORD $0x058000a8 // and z8.s, z8.s, #0x3f
	WORD $0x047e9529 // lsr z9.s, z9.s, #2
	WORD $0x0580f069 // and z9.s, z9.s, #0x3c
	WORD $0x046c3129 // orr z9.d, z9.d, z12.d
	WORD $0x6595b108 // ucvtf z8.s, p4/m, z8.s
	WORD $0x6595b129 // ucvtf z9.s, p4/m, z9.s
	WORD $0x6589b14a // fcvt z10.s, p4/m, z10.h
	WORD $0x6589b16b // fcvt z11.s, p4/m, z11.h
	WORD $0x658a0908 // fmul z8.s, z8.s, z10.s
	WORD $0x658b0929 // fmul z9.s, z9.s, z11.s
	WORD $0x6594b294 // scvtf z20.s, p4/m, z20.s
	WORD $0x65820a94 // fmul z20.s, z20.s, z2.s
	WORD $0x65a81290 // fmla z16.s, p4/m, z20.s, z8.s
	WORD $0x65a13130 // fmls z16.s, p4/m, z9.s, z1.s
	// rows of chunk 1
	WORD $0xa441b688 // ld1b {z8.s}, p5/z, [x20, #1, mul vl]  (sc | low mc bits << 6)
	WORD $0xa441b6a9 // ld1b {z9.s}, p5/z, [x21, #1, mul vl]  (high mc bits)
	WORD $0xa4c1b70a // ld1h {z10.s}, p5/z, [x24, #1, mul vl]  (d)
	WORD $0xa4c1b72b // ld1h {z11.s}, p5/z, [x25, #1, mul vl]  (dm)
	WORD $0x047a950c // lsr z12.s, z8.s, #6
	WORD $0x058000a8 // and z8.s, z8.s, #0x3f
	WORD $0x047e9529 // lsr z9.s, z9.s, #2
	WORD $0x0580f069 // and z9.s, z9.s, #0x3c
	WORD $0x046c3129 // orr z9.d, z9.d, z12.d
	WORD $0x6595b508 // ucvtf z8.s, p5/m, z8.s
	WORD $0x6595b529 // ucvtf z9.s, p5/m, z9.s
	WORD $0x6589b54a // fcvt z10.s, p5/m, z10.h
	WORD $0x6589b56b // fcvt z11.s, p5/m, z11.h
	WORD $0x658a0908 // fmul z8.s, z8.s, z10.s
	WORD $0x658b0929 // fmul z9.s, z9.s, z11.s
	WORD $0x6594b6b5 // scvtf z21.s, p5/m, z21.s
	WORD $0x65820ab5 // fmul z21.s, z21.s, z2.s
	WORD $0x65a816b1 // fmla z17.s, p5/m, z21.s, z8.s
	WORD $0x65a13531 // fmls z17.s, p5/m, z9.s, z1.s
	// rows of chunk 2
	WORD $0xa442ba88 // ld1b {z8.s}, p6/z, [x20, #2, mul vl]  (sc | low mc bits << 6)
	WORD $0xa442baa9 // ld1b {z9.s}, p6/z, [x21, #2, mul vl]  (high mc bits)
	WORD $0xa4c2bb0a // ld1h {z10.s}, p6/z, [x24, #2, mul vl]  (d)
	WORD $0xa4c2bb2b // ld1h {z11.s}, p6/z, [x25, #2, mul vl]  (dm)
	WORD $0x047a950c // lsr z12.s, z8.s, #6
	WORD $0x058000a8 // and z8.s, z8.s, #0x3f
	WORD $0x047e9529 // lsr z9.s, z9.s, #2
	WORD $0x0580f069 // and z9.s, z9.s, #0x3c
	WORD $0x046c3129 // orr z9.d, z9.d, z12.d
	WORD $0x6595b908 // ucvtf z8.s, p6/m, z8.s
	WORD $0x6595b929 // ucvtf z9.s, p6/m, z9.s
	WORD $0x6589b94a // fcvt z10.s, p6/m, z10.h
	WORD $0x6589b96b // fcvt z11.s, p6/m, z11.h
	WORD $0x658a0908 // fmul z8.s, z8.s, z10.s
	WORD $0x658b0929 // fmul z9.s, z9.s, z11.s
	WORD $0x6594bad6 // scvtf z22.s, p6/m, z22.s
	WORD $0x65820ad6 // fmul z22.s, z22.s, z2.s
	WORD $0x65a81ad2 // fmla z18.s, p6/m, z22.s, z8.s
	WORD $0x65a13932 // fmls z18.s, p6/m, z9.s, z1.s
	// rows of chunk 3
	WORD $0xa443be88 // ld1b {z8.s}, p7/z, [x20, #3, mul vl]  (sc | low mc bits << 6)
	WORD $0xa443bea9 // ld1b {z9.s}, p7/z, [x21, #3, mul vl]  (high mc bits)
	WORD $0xa4c3bf0a // ld1h {z10.s}, p7/z, [x24, #3, mul vl]  (d)
	WORD $0xa4c3bf2b // ld1h {z11.s}, p7/z, [x25, #3, mul vl]  (dm)
	WORD $0x047a950c // lsr z12.s, z8.s, #6
	WORD $0x058000a8 // and z8.s, z8.s, #0x3f
	WORD $0x047e9529 // lsr z9.s, z9.s, #2
	WORD $0x0580f069 // and z9.s, z9.s, #0x3c
	WORD $0x046c3129 // orr z9.d, z9.d, z12.d
	WORD $0x6595bd08 // ucvtf z8.s, p7/m, z8.s
	WORD $0x6595bd29 // ucvtf z9.s, p7/m, z9.s
	WORD $0x6589bd4a // fcvt z10.s, p7/m, z10.h
	WORD $0x6589bd6b // fcvt z11.s, p7/m, z11.h
	WORD $0x658a0908 // fmul z8.s, z8.s, z10.s
	WORD $0x658b0929 // fmul z9.s, z9.s, z11.s
	WORD $0x6594bef7 // scvtf z23.s, p7/m, z23.s
	WORD $0x65820af7 // fmul z23.s, z23.s, z2.s
	WORD $0x65a81ef3 // fmla z19.s, p7/m, z23.s, z8.s
	WORD $0x65a13d33 // fmls z19.s, p7/m, z9.s, z1.s
	ADD  $16, R20, R20
	ADD  $16, R21, R21
	SUBS $1, R22, R22
	BNE  k3g
	SUBS $1, R23, R23
	BNE  k3b

	// y (+)= t
	CBZ  R9, k3z
	WORD $0xa540b0d8 // ld1w {z24.s}, p4/z, [x6]
	WORD $0xa541b4d9 // ld1w {z25.s}, p5/z, [x6, #1, mul vl]
	WORD $0xa542b8da // ld1w {z26.s}, p6/z, [x6, #2, mul vl]
	WORD $0xa543bcdb // ld1w {z27.s}, p7/z, [x6, #3, mul vl]
	B    k3s

k3z:
	WORD $0x25b8c018 // dup z24.s, #0
	WORD $0x25b8c019 // dup z25.s, #0
	WORD $0x25b8c01a // dup z26.s, #0
	WORD $0x25b8c01b // dup z27.s, #0

k3s:
	WORD $0x65809218 // fadd z24.s, p4/m, z24.s, z16.s
	WORD $0x65809639 // fadd z25.s, p5/m, z25.s, z17.s
	WORD $0x65809a5a // fadd z26.s, p6/m, z26.s, z18.s
	WORD $0x65809e7b // fadd z27.s, p7/m, z27.s, z19.s
	WORD $0xe540f0d8 // st1w {z24.s}, p4, [x6]
	WORD $0xe541f4d9 // st1w {z25.s}, p5, [x6, #1, mul vl]
	WORD $0xe542f8da // st1w {z26.s}, p6, [x6, #2, mul vl]
	WORD $0xe543fcdb // st1w {z27.s}, p7, [x6, #3, mul vl]
	ADD  $64, R6, R6
	SUBS $1, R1, R1
	BNE  k3p
	RET

// func dotQ6SVE_16(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)

// func dotQ4KSVE_16(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)
TEXT ·dotQ4KSVE_16(SB), NOSPLIT, $0-64
	ARGS
	// p0..p3: bytes [i·VL/8, (i+1)·VL/8) ∩ [0, 64) of a 64-byte line;
	// p4..p7: the same chunks as f32/int32 lanes ∩ [0, 16)
	MOVD $64, R8
	MOVD $0, R11
	WORD $0x25281d60 // whilelo p0.b, x11, x8
	WORD $0x0430e3eb // incb x11
	WORD $0x25281d61 // whilelo p1.b, x11, x8
	WORD $0x0430e3eb // incb x11
	WORD $0x25281d62 // whilelo p2.b, x11, x8
	WORD $0x0430e3eb // incb x11
	WORD $0x25281d63 // whilelo p3.b, x11, x8
	MOVD $16, R8
	MOVD $0, R11
	WORD $0x25a81d64 // whilelo p4.s, x11, x8
	WORD $0x04b0e3eb // incw x11
	WORD $0x25a81d65 // whilelo p5.s, x11, x8
	WORD $0x04b0e3eb // incw x11
	WORD $0x25a81d66 // whilelo p6.s, x11, x8
	WORD $0x04b0e3eb // incw x11
	WORD $0x25a81d67 // whilelo p7.s, x11, x8
	WORD $0x2538c1fe // dup z30.b, #15

	LSR  $3, R2, R2 // super-blocks of 8 groups

k4p:
	WORD $0x25b8c010 // dup z16.s, #0
	WORD $0x25b8c011 // dup z17.s, #0
	WORD $0x25b8c012 // dup z18.s, #0
	WORD $0x25b8c013 // dup z19.s, #0
	MOVD R3, R7
	MOVD R4, R10
	MOVD R5, R13
	MOVD R2, R23

k4b:
	// super-block header: R20 = scale codes, R21 = high min bits, R24 = d, R25 = dm
	MOVD R0, R20
	ADD  $128, R0, R21
	ADD  $192, R0, R24
	ADD  $224, R0, R25
	ADD  $256, R0, R0 // the 8 groups' value lines
	MOVD $4, R22

k4g:
	// even group
	WORD $0x25b8c014 // dup z20.s, #0
	WORD $0x25b8c015 // dup z21.s, #0
	WORD $0x25b8c016 // dup z22.s, #0
	WORD $0x25b8c017 // dup z23.s, #0
	// line 0: k = 0..3 (low nibbles), 4..7 (high)
	WORD $0xa400a004 // ld1b {z4.b}, p0/z, [x0]
	WORD $0xa401a405 // ld1b {z5.b}, p1/z, [x0, #1, mul vl]
	WORD $0xa402a806 // ld1b {z6.b}, p2/z, [x0, #2, mul vl]
	WORD $0xa403ac07 // ld1b {z7.b}, p3/z, [x0, #3, mul vl]
	WORD $0x8540d0e0 // ld1rw {z0.s}, p4/z, [x7, #0]
	WORD $0x8541d0e1 // ld1rw {z1.s}, p4/z, [x7, #4]
	WORD $0x043e3088 // and z8.d, z4.d, z30.d
	WORD $0x043e30a9 // and z9.d, z5.d, z30.d
	WORD $0x043e30ca // and z10.d, z6.d, z30.d
	WORD $0x043e30eb // and z11.d, z7.d, z30.d
	WORD $0x042c948c // lsr z12.b, z4.b, #4
	WORD $0x042c94ad // lsr z13.b, z5.b, #4
	WORD $0x042c94ce // lsr z14.b, z6.b, #4
	WORD $0x042c94ef // lsr z15.b, z7.b, #4
	WORD $0x44800114 // sdot z20.s, z8.b, z0.b
	WORD $0x44800135 // sdot z21.s, z9.b, z0.b
	WORD $0x44800156 // sdot z22.s, z10.b, z0.b
	WORD $0x44800177 // sdot z23.s, z11.b, z0.b
	WORD $0x44810194 // sdot z20.s, z12.b, z1.b
	WORD $0x448101b5 // sdot z21.s, z13.b, z1.b
	WORD $0x448101d6 // sdot z22.s, z14.b, z1.b
	WORD $0x448101f7 // sdot z23.s, z15.b, z1.b
	ADD  $64, R0, R0
	// line 1: k = 8..11 (low nibbles), 12..15 (high)
	WORD $0xa400a004 // ld1b {z4.b}, p0/z, [x0]
	WORD $0xa401a405 // ld1b {z5.b}, p1/z, [x0, #1, mul vl]
	WORD $0xa402a806 // ld1b {z6.b}, p2/z, [x0, #2, mul vl]
	WORD $0xa403ac07 // ld1b {z7.b}, p3/z, [x0, #3, mul vl]
	WORD $0x8542d0e0 // ld1rw {z0.s}, p4/z, [x7, #8]
	WORD $0x8543d0e1 // ld1rw {z1.s}, p4/z, [x7, #12]
	WORD $0x043e3088 // and z8.d, z4.d, z30.d
	WORD $0x043e30a9 // and z9.d, z5.d, z30.d
	WORD $0x043e30ca // and z10.d, z6.d, z30.d
	WORD $0x043e30eb // and z11.d, z7.d, z30.d
	WORD $0x042c948c // lsr z12.b, z4.b, #4
	WORD $0x042c94ad // lsr z13.b, z5.b, #4
	WORD $0x042c94ce // lsr z14.b, z6.b, #4
	WORD $0x042c94ef // lsr z15.b, z7.b, #4
	WORD $0x44800114 // sdot z20.s, z8.b, z0.b
	WORD $0x44800135 // sdot z21.s, z9.b, z0.b
	WORD $0x44800156 // sdot z22.s, z10.b, z0.b
	WORD $0x44800177 // sdot z23.s, z11.b, z0.b
	WORD $0x44810194 // sdot z20.s, z12.b, z1.b
	WORD $0x448101b5 // sdot z21.s, z13.b, z1.b
	WORD $0x448101d6 // sdot z22.s, z14.b, z1.b
	WORD $0x448101f7 // sdot z23.s, z15.b, z1.b
	ADD  $64, R0, R0
	// line 2: k = 16..19 (low nibbles), 20..23 (high)
	WORD $0xa400a004 // ld1b {z4.b}, p0/z, [x0]
	WORD $0xa401a405 // ld1b {z5.b}, p1/z, [x0, #1, mul vl]
	WORD $0xa402a806 // ld1b {z6.b}, p2/z, [x0, #2, mul vl]
	WORD $0xa403ac07 // ld1b {z7.b}, p3/z, [x0, #3, mul vl]
	WORD $0x8544d0e0 // ld1rw {z0.s}, p4/z, [x7, #16]
	WORD $0x8545d0e1 // ld1rw {z1.s}, p4/z, [x7, #20]
	WORD $0x043e3088 // and z8.d, z4.d, z30.d
	WORD $0x043e30a9 // and z9.d, z5.d, z30.d
	WORD $0x043e30ca // and z10.d, z6.d, z30.d
	WORD $0x043e30eb // and z11.d, z7.d, z30.d
	WORD $0x042c948c // lsr z12.b, z4.b, #4
	WORD $0x042c94ad // lsr z13.b, z5.b, #4
	WORD $0x042c94ce // lsr z14.b, z6.b, #4
	WORD $0x042c94ef // lsr z15.b, z7.b, #4
	WORD $0x44800114 // sdot z20.s, z8.b, z0.b
	WORD $0x44800135 // sdot z21.s, z9.b, z0.b
	WORD $0x44800156 // sdot z22.s, z10.b, z0.b
	WORD $0x44800177 // sdot z23.s, z11.b, z0.b
	WORD $0x44810194 // sdot z20.s, z12.b, z1.b
	WORD $0x448101b5 // sdot z21.s, z13.b, z1.b
	WORD $0x448101d6 // sdot z22.s, z14.b, z1.b
	WORD $0x448101f7 // sdot z23.s, z15.b, z1.b
	ADD  $64, R0, R0
	// line 3: k = 24..27 (low nibbles), 28..31 (high)
	WORD $0xa400a004 // ld1b {z4.b}, p0/z, [x0]
	WORD $0xa401a405 // ld1b {z5.b}, p1/z, [x0, #1, mul vl]
	WORD $0xa402a806 // ld1b {z6.b}, p2/z, [x0, #2, mul vl]
	WORD $0xa403ac07 // ld1b {z7.b}, p3/z, [x0, #3, mul vl]
	WORD $0x8546d0e0 // ld1rw {z0.s}, p4/z, [x7, #24]
	WORD $0x8547d0e1 // ld1rw {z1.s}, p4/z, [x7, #28]
	WORD $0x043e3088 // and z8.d, z4.d, z30.d
	WORD $0x043e30a9 // and z9.d, z5.d, z30.d
	WORD $0x043e30ca // and z10.d, z6.d, z30.d
	WORD $0x043e30eb // and z11.d, z7.d, z30.d
	WORD $0x042c948c // lsr z12.b, z4.b, #4
	WORD $0x042c94ad // lsr z13.b, z5.b, #4
	WORD $0x042c94ce // lsr z14.b, z6.b, #4
	WORD $0x042c94ef // lsr z15.b, z7.b, #4
	WORD $0x44800114 // sdot z20.s, z8.b, z0.b
	WORD $0x44800135 // sdot z21.s, z9.b, z0.b
	WORD $0x44800156 // sdot z22.s, z10.b, z0.b
	WORD $0x44800177 // sdot z23.s, z11.b, z0.b
	WORD $0x44810194 // sdot z20.s, z12.b, z1.b
	WORD $0x448101b5 // sdot z21.s, z13.b, z1.b
	WORD $0x448101d6 // sdot z22.s, z14.b, z1.b
	WORD $0x448101f7 // sdot z23.s, z15.b, z1.b
	ADD  $64, R0, R0
	ADD  $32, R7, R7
	// t += s·(xs·float(dot)) − m·(xs·float(Σxq)), s = d·sc, m = dm·mc
	WORD $0x8540d1a2 // ld1rw {z2.s}, p4/z, [x13]  (the group's activation scale)
	ADD  $4, R13, R13
	WORD $0x8540d141 // ld1rw {z1.s}, p4/z, [x10]  (Σxq of the group)
	ADD  $4, R10, R10
	WORD $0x6594b021 // scvtf z1.s, p4/m, z1.s
	WORD $0x65820821 // fmul z1.s, z1.s, z2.s
	// rows of chunk 0
	WORD $0xa440b288 // ld1b {z8.s}, p4/z, [x20]  (sc | low mc bits << 6)
	WORD $0xa440b2a9 // ld1b {z9.s}, p4/z, [x21]  (high mc bits)
	WORD $0xa4c0b30a // ld1h {z10.s}, p4/z, [x24]  (d)
	WORD $0xa4c0b32b // ld1h {z11.s}, p4/z, [x25]  (dm)
	WORD $0x047a950c // lsr z12.s, z8.s, #6
	WORD $0x058000a8 // and z8.s, z8.s, #0x3f
	WORD $0x04629d29 // lsl z9.s, z9.s, #2
	WORD $0x0580f069 // and z9.s, z9.s, #0x3c
	WORD $0x046c3129 // orr z9.d, z9.d, z12.d
	WORD $0x6595b108 // ucvtf z8.s, p4/m, z8.s
	WORD $0x6595b129 // ucvtf z9.s, p4/m, z9.s
	WORD $0x6589b14a // fcvt z10.s, p4/m, z10.h
	WORD $0x6589b16b // fcvt z11.s, p4/m, z11.h
	WORD $0x658a0908 // fmul z8.s, z8.s, z10.s
	WORD $0x658b0929 // fmul z9.s, z9.s, z11.s
	WORD $0x6594b294 // scvtf z20.s, p4/m, z20.s
	WORD $0x65820a94 // fmul z20.s, z20.s, z2.s
	WORD $0x65a81290 // fmla z16.s, p4/m, z20.s, z8.s
	WORD $0x65a13130 // fmls z16.s, p4/m, z9.s, z1.s
	// rows of chunk 1
	WORD $0xa441b688 // ld1b {z8.s}, p5/z, [x20, #1, mul vl]  (sc | low mc bits << 6)
	WORD $0xa441b6a9 // ld1b {z9.s}, p5/z, [x21, #1, mul vl]  (high mc bits)
	WORD $0xa4c1b70a // ld1h {z10.s}, p5/z, [x24, #1, mul vl]  (d)
	WORD $0xa4c1b72b // ld1h {z11.s}, p5/z, [x25, #1, mul vl]  (dm)
	WORD $0x047a950c // lsr z12.s, z8.s, #6
	WORD $0x058000a8 // and z8.s, z8.s, #0x3f
	WORD $0x04629d29 // lsl z9.s, z9.s, #2
	WORD $0x0580f069 // and z9.s, z9.s, #0x3c
	WORD $0x046c3129 // orr z9.d, z9.d, z12.d
	WORD $0x6595b508 // ucvtf z8.s, p5/m, z8.s
	WORD $0x6595b529 // ucvtf z9.s, p5/m, z9.s
	WORD $0x6589b54a // fcvt z10.s, p5/m, z10.h
	WORD $0x6589b56b // fcvt z11.s, p5/m, z11.h
	WORD $0x658a0908 // fmul z8.s, z8.s, z10.s
	WORD $0x658b0929 // fmul z9.s, z9.s, z11.s
	WORD $0x6594b6b5 // scvtf z21.s, p5/m, z21.s
	WORD $0x65820ab5 // fmul z21.s, z21.s, z2.s
	WORD $0x65a816b1 // fmla z17.s, p5/m, z21.s, z8.s
	WORD $0x65a13531 // fmls z17.s, p5/m, z9.s, z1.s
	// rows of chunk 2
	WORD $0xa442ba88 // ld1b {z8.s}, p6/z, [x20, #2, mul vl]  (sc | low mc bits << 6)
	WORD $0xa442baa9 // ld1b {z9.s}, p6/z, [x21, #2, mul vl]  (high mc bits)
	WORD $0xa4c2bb0a // ld1h {z10.s}, p6/z, [x24, #2, mul vl]  (d)
	WORD $0xa4c2bb2b // ld1h {z11.s}, p6/z, [x25, #2, mul vl]  (dm)
	WORD $0x047a950c // lsr z12.s, z8.s, #6
	WORD $0x058000a8 // and z8.s, z8.s, #0x3f
	WORD $0x04629d29 // lsl z9.s, z9.s, #2
	WORD $0x0580f069 // and z9.s, z9.s, #0x3c
	WORD $0x046c3129 // orr z9.d, z9.d, z12.d
	WORD $0x6595b908 // ucvtf z8.s, p6/m, z8.s
	WORD $0x6595b929 // ucvtf z9.s, p6/m, z9.s
	WORD $0x6589b94a // fcvt z10.s, p6/m, z10.h
	WORD $0x6589b96b // fcvt z11.s, p6/m, z11.h
	WORD $0x658a0908 // fmul z8.s, z8.s, z10.s
	WORD $0x658b0929 // fmul z9.s, z9.s, z11.s
	WORD $0x6594bad6 // scvtf z22.s, p6/m, z22.s
	WORD $0x65820ad6 // fmul z22.s, z22.s, z2.s
	WORD $0x65a81ad2 // fmla z18.s, p6/m, z22.s, z8.s
	WORD $0x65a13932 // fmls z18.s, p6/m, z9.s, z1.s
	// rows of chunk 3
	WORD $0xa443be88 // ld1b {z8.s}, p7/z, [x20, #3, mul vl]  (sc | low mc bits << 6)
	WORD $0xa443bea9 // ld1b {z9.s}, p7/z, [x21, #3, mul vl]  (high mc bits)
	WORD $0xa4c3bf0a // ld1h {z10.s}, p7/z, [x24, #3, mul vl]  (d)
	WORD $0xa4c3bf2b // ld1h {z11.s}, p7/z, [x25, #3, mul vl]  (dm)
	WORD $0x047a950c // lsr z12.s, z8.s, #6
	WORD $0x058000a8 // and z8.s, z8.s, #0x3f
	WORD $0x04629d29 // lsl z9.s, z9.s, #2
	WORD $0x0580f069 // and z9.s, z9.s, #0x3c
	WORD $0x046c3129 // orr z9.d, z9.d, z12.d
	WORD $0x6595bd08 // ucvtf z8.s, p7/m, z8.s
	WORD $0x6595bd29 // ucvtf z9.s, p7/m, z9.s
	WORD $0x6589bd4a // fcvt z10.s, p7/m, z10.h
	WORD $0x6589bd6b // fcvt z11.s, p7/m, z11.h
	WORD $0x658a0908 // fmul z8.s, z8.s, z10.s
	WORD $0x658b0929 // fmul z9.s, z9.s, z11.s
	WORD $0x6594bef7 // scvtf z23.s, p7/m, z23.s
	WORD $0x65820af7 // fmul z23.s, z23.s, z2.s
	WORD $0x65a81ef3 // fmla z19.s, p7/m, z23.s, z8.s
	WORD $0x65a13d33 // fmls z19.s, p7/m, z9.s, z1.s
	ADD  $16, R20, R20
	// odd group
	WORD $0x25b8c014 // dup z20.s, #0
	WORD $0x25b8c015 // dup z21.s, #0
	WORD $0x25b8c016 // dup z22.s, #0
	WORD $0x25b8c017 // dup z23.s, #0
	// line 0: k = 0..3 (low nibbles), 4..7 (high)
	WORD $0xa400a004 // ld1b {z4.b}, p0/z, [x0]
	WORD $0xa401a405 // ld1b {z5.b}, p1/z, [x0, #1, mul vl]
	WORD $0xa402a806 // ld1b {z6.b}, p2/z, [x0, #2, mul vl]
	WORD $0xa403ac07 // ld1b {z7.b}, p3/z, [x0, #3, mul vl]
	WORD $0x8540d0e0 // ld1rw {z0.s}, p4/z, [x7, #0]
	WORD $0x8541d0e1 // ld1rw {z1.s}, p4/z, [x7, #4]
	WORD $0x043e3088 // and z8.d, z4.d, z30.d
	WORD $0x043e30a9 // and z9.d, z5.d, z30.d
	WORD $0x043e30ca // and z10.d, z6.d, z30.d
	WORD $0x043e30eb // and z11.d, z7.d, z30.d
	WORD $0x042c948c // lsr z12.b, z4.b, #4
	WORD $0x042c94ad // lsr z13.b, z5.b, #4
	WORD $0x042c94ce // lsr z14.b, z6.b, #4
	WORD $0x042c94ef // lsr z15.b, z7.b, #4
	WORD $0x44800114 // sdot z20.s, z8.b, z0.b
	WORD $0x44800135 // sdot z21.s, z9.b, z0.b
	WORD $0x44800156 // sdot z22.s, z10.b, z0.b
	WORD $0x44800177 // sdot z23.s, z11.b, z0.b
	WORD $0x44810194 // sdot z20.s, z12.b, z1.b
	WORD $0x448101b5 // sdot z21.s, z13.b, z1.b
	WORD $0x448101d6 // sdot z22.s, z14.b, z1.b
	WORD $0x448101f7 // sdot z23.s, z15.b, z1.b
	ADD  $64, R0, R0
	// line 1: k = 8..11 (low nibbles), 12..15 (high)
	WORD $0xa400a004 // ld1b {z4.b}, p0/z, [x0]
	WORD $0xa401a405 // ld1b {z5.b}, p1/z, [x0, #1, mul vl]
	WORD $0xa402a806 // ld1b {z6.b}, p2/z, [x0, #2, mul vl]
	WORD $0xa403ac07 // ld1b {z7.b}, p3/z, [x0, #3, mul vl]
	WORD $0x8542d0e0 // ld1rw {z0.s}, p4/z, [x7, #8]
	WORD $0x8543d0e1 // ld1rw {z1.s}, p4/z, [x7, #12]
	WORD $0x043e3088 // and z8.d, z4.d, z30.d
	WORD $0x043e30a9 // and z9.d, z5.d, z30.d
	WORD $0x043e30ca // and z10.d, z6.d, z30.d
	WORD $0x043e30eb // and z11.d, z7.d, z30.d
	WORD $0x042c948c // lsr z12.b, z4.b, #4
	WORD $0x042c94ad // lsr z13.b, z5.b, #4
	WORD $0x042c94ce // lsr z14.b, z6.b, #4
	WORD $0x042c94ef // lsr z15.b, z7.b, #4
	WORD $0x44800114 // sdot z20.s, z8.b, z0.b
	WORD $0x44800135 // sdot z21.s, z9.b, z0.b
	WORD $0x44800156 // sdot z22.s, z10.b, z0.b
	WORD $0x44800177 // sdot z23.s, z11.b, z0.b
	WORD $0x44810194 // sdot z20.s, z12.b, z1.b
	WORD $0x448101b5 // sdot z21.s, z13.b, z1.b
	WORD $0x448101d6 // sdot z22.s, z14.b, z1.b
	WORD $0x448101f7 // sdot z23.s, z15.b, z1.b
	ADD  $64, R0, R0
	// line 2: k = 16..19 (low nibbles), 20..23 (high)
	WORD $0xa400a004 // ld1b {z4.b}, p0/z, [x0]
	WORD $0xa401a405 // ld1b {z5.b}, p1/z, [x0, #1, mul vl]
	WORD $0xa402a806 // ld1b {z6.b}, p2/z, [x0, #2, mul vl]
	WORD $0xa403ac07 // ld1b {z7.b}, p3/z, [x0, #3, mul vl]
	WORD $0x8544d0e0 // ld1rw {z0.s}, p4/z, [x7, #16]
	WORD $0x8545d0e1 // ld1rw {z1.s}, p4/z, [x7, #20]
	WORD $0x043e3088 // and z8.d, z4.d, z30.d
	WORD $0x043e30a9 // and z9.d, z5.d, z30.d
	WORD $0x043e30ca // and z10.d, z6.d, z30.d
	WORD $0x043e30eb // and z11.d, z7.d, z30.d
	WORD $0x042c948c // lsr z12.b, z4.b, #4
	WORD $0x042c94ad // lsr z13.b, z5.b, #4
	WORD $0x042c94ce // lsr z14.b, z6.b, #4
	WORD $0x042c94ef // lsr z15.b, z7.b, #4
	WORD $0x44800114 // sdot z20.s, z8.b, z0.b
	WORD $0x44800135 // sdot z21.s, z9.b, z0.b
	WORD $0x44800156 // sdot z22.s, z10.b, z0.b
	WORD $0x44800177 // sdot z23.s, z11.b, z0.b
	WORD $0x44810194 // sdot z20.s, z12.b, z1.b
	WORD $0x448101b5 // sdot z21.s, z13.b, z1.b
	WORD $0x448101d6 // sdot z22.s, z14.b, z1.b
	WORD $0x448101f7 // sdot z23.s, z15.b, z1.b
	ADD  $64, R0, R0
	// line 3: k = 24..27 (low nibbles), 28..31 (high)
	WORD $0xa400a004 // ld1b {z4.b}, p0/z, [x0]
	WORD $0xa401a405 // ld1b {z5.b}, p1/z, [x0, #1, mul vl]
	WORD $0xa402a806 // ld1b {z6.b}, p2/z, [x0, #2, mul vl]
	WORD $0xa403ac07 // ld1b {z7.b}, p3/z, [x0, #3, mul vl]
	WORD $0x8546d0e0 // ld1rw {z0.s}, p4/z, [x7, #24]
	WORD $0x8547d0e1 // ld1rw {z1.s}, p4/z, [x7, #28]
	WORD $0x043e3088 // and z8.d, z4.d, z30.d
	WORD $0x043e30a9 // and z9.d, z5.d, z30.d
	WORD $0x043e30ca // and z10.d, z6.d, z30.d
	WORD $0x043e30eb // and z11.d, z7.d, z30.d
	WORD $0x042c948c // lsr z12.b, z4.b, #4
	WORD $0x042c94ad // lsr z13.b, z5.b, #4
	WORD $0x042c94ce // lsr z14.b, z6.b, #4
	WORD $0x042c94ef // lsr z15.b, z7.b, #4
	WORD $0x44800114 // sdot z20.s, z8.b, z0.b
	WORD $0x44800135 // sdot z21.s, z9.b, z0.b
	WORD $0x44800156 // sdot z22.s, z10.b, z0.b
	WORD $0x44800177 // sdot z23.s, z11.b, z0.b
	WORD $0x44810194 // sdot z20.s, z12.b, z1.b
	WORD $0x448101b5 // sdot z21.s, z13.b, z1.b
	WORD $0x448101d6 // sdot z22.s, z14.b, z1.b
	WORD $0x448101f7 // sdot z23.s, z15.b, z1.b
	ADD  $64, R0, R0
	ADD  $32, R7, R7
	// t += s·(xs·float(dot)) − m·(xs·float(Σxq)), s = d·sc, m = dm·mc
	WORD $0x8540d1a2 // ld1rw {z2.s}, p4/z, [x13]  (the group's activation scale)
	ADD  $4, R13, R13
	WORD $0x8540d141 // ld1rw {z1.s}, p4/z, [x10]  (Σxq of the group)
	ADD  $4, R10, R10
	WORD $0x6594b021 // scvtf z1.s, p4/m, z1.s
	WORD $0x65820821 // fmul z1.s, z1.s, z2.s
	// rows of chunk 0
	WORD $0xa440b288 // ld1b {z8.s}, p4/z, [x20]  (sc | low mc bits << 6)
	WORD $0xa440b2a9 // ld1b {z9.s}, p4/z, [x21]  (high mc bits)
	WORD $0xa4c0b30a // ld1h {z10.s}, p4/z, [x24]  (d)
	WORD $0xa4c0b32b // ld1h {z11.s}, p4/z, [x25]  (dm)
	WORD $0x047a950c // lsr z12.s, z8.s, #6
	WORD $0x058000a8 // and z8.s, z8.s, #0x3f
	WORD $0x047e9529 // lsr z9.s, z9.s, #2
	WORD $0x0580f069 // and z9.s, z9.s, #0x3c
	WORD $0x046c3129 // orr z9.d, z9.d, z12.d
	WORD $0x6595b108 // ucvtf z8.s, p4/m, z8.s
	WORD $0x6595b129 // ucvtf z9.s, p4/m, z9.s
	WORD $0x6589b14a // fcvt z10.s, p4/m, z10.h
	WORD $0x6589b16b // fcvt z11.s, p4/m, z11.h
	WORD $0x658a0908 // fmul z8.s, z8.s, z10.s
	WORD $0x658b0929 // fmul z9.s, z9.s, z11.s
	WORD $0x6594b294 // scvtf z20.s, p4/m, z20.s
	WORD $0x65820a94 // fmul z20.s, z20.s, z2.s
	WORD $0x65a81290 // fmla z16.s, p4/m, z20.s, z8.s
	WORD $0x65a13130 // fmls z16.s, p4/m, z9.s, z1.s
	// rows of chunk 1
	WORD $0xa441b688 // ld1b {z8.s}, p5/z, [x20, #1, mul vl]  (sc | low mc bits << 6)
	WORD $0xa441b6a9 // ld1b {z9.s}, p5/z, [x21, #1, mul vl]  (high mc bits)
	WORD $0xa4c1b70a // ld1h {z10.s}, p5/z, [x24, #1, mul vl]  (d)
	WORD $0xa4c1b72b // ld1h {z11.s}, p5/z, [x25, #1, mul vl]  (dm)
	WORD $0x047a950c // lsr z12.s, z8.s, #6
	WORD $0x058000a8 // and z8.s, z8.s, #0x3f
	WORD $0x047e9529 // lsr z9.s, z9.s, #2
	WORD $0x0580f069 // and z9.s, z9.s, #0x3c
	WORD $0x046c3129 // orr z9.d, z9.d, z12.d
	WORD $0x6595b508 // ucvtf z8.s, p5/m, z8.s
	WORD $0x6595b529 // ucvtf z9.s, p5/m, z9.s
	WORD $0x6589b54a // fcvt z10.s, p5/m, z10.h
	WORD $0x6589b56b // fcvt z11.s, p5/m, z11.h
	WORD $0x658a0908 // fmul z8.s, z8.s, z10.s
	WORD $0x658b0929 // fmul z9.s, z9.s, z11.s
	WORD $0x6594b6b5 // scvtf z21.s, p5/m, z21.s
	WORD $0x65820ab5 // fmul z21.s, z21.s, z2.s
	WORD $0x65a816b1 // fmla z17.s, p5/m, z21.s, z8.s
	WORD $0x65a13531 // fmls z17.s, p5/m, z9.s, z1.s
	// rows of chunk 2
	WORD $0xa442ba88 // ld1b {z8.s}, p6/z, [x20, #2, mul vl]  (sc | low mc bits << 6)
	WORD $0xa442baa9 // ld1b {z9.s}, p6/z, [x21, #2, mul vl]  (high mc bits)
	WORD $0xa4c2bb0a // ld1h {z10.s}, p6/z, [x24, #2, mul vl]  (d)
	WORD $0xa4c2bb2b // ld1h {z11.s}, p6/z, [x25, #2, mul vl]  (dm)
	WORD $0x047a950c // lsr z12.s, z8.s, #6
	WORD $0x058000a8 // and z8.s, z8.s, #0x3f
	WORD $0x047e9529 // lsr z9.s, z9.s, #2
	WORD $0x0580f069 // and z9.s, z9.s, #0x3c
	WORD $0x046c3129 // orr z9.d, z9.d, z12.d
	WORD $0x6595b908 // ucvtf z8.s, p6/m, z8.s
	WORD $0x6595b929 // ucvtf z9.s, p6/m, z9.s
	WORD $0x6589b94a // fcvt z10.s, p6/m, z10.h
	WORD $0x6589b96b // fcvt z11.s, p6/m, z11.h
	WORD $0x658a0908 // fmul z8.s, z8.s, z10.s
	WORD $0x658b0929 // fmul z9.s, z9.s, z11.s
	WORD $0x6594bad6 // scvtf z22.s, p6/m, z22.s
	WORD $0x65820ad6 // fmul z22.s, z22.s, z2.s
	WORD $0x65a81ad2 // fmla z18.s, p6/m, z22.s, z8.s
	WORD $0x65a13932 // fmls z18.s, p6/m, z9.s, z1.s
	// rows of chunk 3
	WORD $0xa443be88 // ld1b {z8.s}, p7/z, [x20, #3, mul vl]  (sc | low mc bits << 6)
	WORD $0xa443bea9 // ld1b {z9.s}, p7/z, [x21, #3, mul vl]  (high mc bits)
	WORD $0xa4c3bf0a // ld1h {z10.s}, p7/z, [x24, #3, mul vl]  (d)
	WORD $0xa4c3bf2b // ld1h {z11.s}, p7/z, [x25, #3, mul vl]  (dm)
	WORD $0x047a950c // lsr z12.s, z8.s, #6
	WORD $0x058000a8 // and z8.s, z8.s, #0x3f
	WORD $0x047e9529 // lsr z9.s, z9.s, #2
	WORD $0x0580f069 // and z9.s, z9.s, #0x3c
	WORD $0x046c3129 // orr z9.d, z9.d, z12.d
	WORD $0x6595bd08 // ucvtf z8.s, p7/m, z8.s
	WORD $0x6595bd29 // ucvtf z9.s, p7/m, z9.s
	WORD $0x6589bd4a // fcvt z10.s, p7/m, z10.h
	WORD $0x6589bd6b // fcvt z11.s, p7/m, z11.h
	WORD $0x658a0908 // fmul z8.s, z8.s, z10.s
	WORD $0x658b0929 // fmul z9.s, z9.s, z11.s
	WORD $0x6594bef7 // scvtf z23.s, p7/m, z23.s
	WORD $0x65820af7 // fmul z23.s, z23.s, z2.s
	WORD $0x65a81ef3 // fmla z19.s, p7/m, z23.s, z8.s
	WORD $0x65a13d33 // fmls z19.s, p7/m, z9.s, z1.s
	ADD  $16, R20, R20
	ADD  $16, R21, R21
	SUBS $1, R22, R22
	BNE  k4g
	SUBS $1, R23, R23
	BNE  k4b

	// y (+)= t
	CBZ  R9, k4z
	WORD $0xa540b0d8 // ld1w {z24.s}, p4/z, [x6]
	WORD $0xa541b4d9 // ld1w {z25.s}, p5/z, [x6, #1, mul vl]
	WORD $0xa542b8da // ld1w {z26.s}, p6/z, [x6, #2, mul vl]
	WORD $0xa543bcdb // ld1w {z27.s}, p7/z, [x6, #3, mul vl]
	B    k4s

k4z:
	WORD $0x25b8c018 // dup z24.s, #0
	WORD $0x25b8c019 // dup z25.s, #0
	WORD $0x25b8c01a // dup z26.s, #0
	WORD $0x25b8c01b // dup z27.s, #0

k4s:
	WORD $0x65809218 // fadd z24.s, p4/m, z24.s, z16.s
	WORD $0x65809639 // fadd z25.s, p5/m, z25.s, z17.s
	WORD $0x65809a5a // fadd z26.s, p6/m, z26.s, z18.s
	WORD $0x65809e7b // fadd z27.s, p7/m, z27.s, z19.s
	WORD $0xe540f0d8 // st1w {z24.s}, p4, [x6]
	WORD $0xe541f4d9 // st1w {z25.s}, p5, [x6, #1, mul vl]
	WORD $0xe542f8da // st1w {z26.s}, p6, [x6, #2, mul vl]
	WORD $0xe543fcdb // st1w {z27.s}, p7, [x6, #3, mul vl]
	ADD  $64, R6, R6
	SUBS $1, R1, R1
	BNE  k4p
	RET

// func dotQ3SVE_16(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)

// func dotQ5KSVE_16(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)
TEXT ·dotQ5KSVE_16(SB), NOSPLIT, $0-64
	ARGS
	// p0..p3: bytes [i·VL/8, (i+1)·VL/8) ∩ [0, 64) of a 64-byte line;
	// p4..p7: the same chunks as f32/int32 lanes ∩ [0, 16)
	MOVD $64, R8
	MOVD $0, R11
	WORD $0x25281d60 // whilelo p0.b, x11, x8
	WORD $0x0430e3eb // incb x11
	WORD $0x25281d61 // whilelo p1.b, x11, x8
	WORD $0x0430e3eb // incb x11
	WORD $0x25281d62 // whilelo p2.b, x11, x8
	WORD $0x0430e3eb // incb x11
	WORD $0x25281d63 // whilelo p3.b, x11, x8
	MOVD $16, R8
	MOVD $0, R11
	WORD $0x25a81d64 // whilelo p4.s, x11, x8
	WORD $0x04b0e3eb // incw x11
	WORD $0x25a81d65 // whilelo p5.s, x11, x8
	WORD $0x04b0e3eb // incw x11
	WORD $0x25a81d66 // whilelo p6.s, x11, x8
	WORD $0x04b0e3eb // incw x11
	WORD $0x25a81d67 // whilelo p7.s, x11, x8
	WORD $0x2538c1fe // dup z30.b, #15
	WORD $0x2538c21f // dup z31.b, #16

	LSR  $3, R2, R2 // super-blocks of 8 groups

k5p:
	WORD $0x25b8c010 // dup z16.s, #0
	WORD $0x25b8c011 // dup z17.s, #0
	WORD $0x25b8c012 // dup z18.s, #0
	WORD $0x25b8c013 // dup z19.s, #0
	MOVD R3, R7
	MOVD R4, R10
	MOVD R5, R13
	MOVD R2, R23

k5b:
	// super-block header: R20 = scale codes, R21 = high min bits, R24 = d, R25 = dm
	MOVD R0, R20
	ADD  $128, R0, R21
	ADD  $192, R0, R24
	ADD  $224, R0, R25
	ADD  $256, R0, R0 // the 8 groups' value lines
	MOVD $4, R22

k5g:
	// even group
	WORD $0x25b8c014 // dup z20.s, #0
	WORD $0x25b8c015 // dup z21.s, #0
	WORD $0x25b8c016 // dup z22.s, #0
	WORD $0x25b8c017 // dup z23.s, #0
	// line 4 (at +256): bit h of a byte = bit 4 of u in k-quad h
	ADD  $256, R0, R14
	WORD $0xa400a1d8 // ld1b {z24.b}, p0/z, [x14]
	WORD $0xa401a5d9 // ld1b {z25.b}, p1/z, [x14, #1, mul vl]
	WORD $0xa402a9da // ld1b {z26.b}, p2/z, [x14, #2, mul vl]
	WORD $0xa403addb // ld1b {z27.b}, p3/z, [x14, #3, mul vl]
	// line 0: k-quad 0 (low nibbles), 1 (high), each with its fifth bits
	WORD $0xa400a004 // ld1b {z4.b}, p0/z, [x0]
	WORD $0xa401a405 // ld1b {z5.b}, p1/z, [x0, #1, mul vl]
	WORD $0xa402a806 // ld1b {z6.b}, p2/z, [x0, #2, mul vl]
	WORD $0xa403ac07 // ld1b {z7.b}, p3/z, [x0, #3, mul vl]
	WORD $0x8540d0e0 // ld1rw {z0.s}, p4/z, [x7, #0]
	WORD $0x8541d0e1 // ld1rw {z1.s}, p4/z, [x7, #4]
	WORD $0x043e3088 // and z8.d, z4.d, z30.d
	WORD $0x043e30a9 // and z9.d, z5.d, z30.d
	WORD $0x043e30ca // and z10.d, z6.d, z30.d
	WORD $0x043e30eb // and z11.d, z7.d, z30.d
	WORD $0x042c948c // lsr z12.b, z4.b, #4
	WORD $0x042c94ad // lsr z13.b, z5.b, #4
	WORD $0x042c94ce // lsr z14.b, z6.b, #4
	WORD $0x042c94ef // lsr z15.b, z7.b, #4
	WORD $0x042c9f02 // lsl z2.b, z24.b, #4
	WORD $0x043f3042 // and z2.d, z2.d, z31.d
	WORD $0x04623108 // orr z8.d, z8.d, z2.d
	WORD $0x042c9f23 // lsl z3.b, z25.b, #4
	WORD $0x043f3063 // and z3.d, z3.d, z31.d
	WORD $0x04633129 // orr z9.d, z9.d, z3.d
	WORD $0x042c9f42 // lsl z2.b, z26.b, #4
	WORD $0x043f3042 // and z2.d, z2.d, z31.d
	WORD $0x0462314a // orr z10.d, z10.d, z2.d
	WORD $0x042c9f63 // lsl z3.b, z27.b, #4
	WORD $0x043f3063 // and z3.d, z3.d, z31.d
	WORD $0x0463316b // orr z11.d, z11.d, z3.d
	WORD $0x042b9f02 // lsl z2.b, z24.b, #3
	WORD $0x043f3042 // and z2.d, z2.d, z31.d
	WORD $0x0462318c // orr z12.d, z12.d, z2.d
	WORD $0x042b9f23 // lsl z3.b, z25.b, #3
	WORD $0x043f3063 // and z3.d, z3.d, z31.d
	WORD $0x046331ad // orr z13.d, z13.d, z3.d
	WORD $0x042b9f42 // lsl z2.b, z26.b, #3
	WORD $0x043f3042 // and z2.d, z2.d, z31.d
	WORD $0x046231ce // orr z14.d, z14.d, z2.d
	WORD $0x042b9f63 // lsl z3.b, z27.b, #3
	WORD $0x043f3063 // and z3.d, z3.d, z31.d
	WORD $0x046331ef // orr z15.d, z15.d, z3.d
	WORD $0x44800114 // sdot z20.s, z8.b, z0.b
	WORD $0x44800135 // sdot z21.s, z9.b, z0.b
	WORD $0x44800156 // sdot z22.s, z10.b, z0.b
	WORD $0x44800177 // sdot z23.s, z11.b, z0.b
	WORD $0x44810194 // sdot z20.s, z12.b, z1.b
	WORD $0x448101b5 // sdot z21.s, z13.b, z1.b
	WORD $0x448101d6 // sdot z22.s, z14.b, z1.b
	WORD $0x448101f7 // sdot z23.s, z15.b, z1.b
	ADD  $64, R0, R0
	// line 1: k-quad 2 (low nibbles), 3 (high), each with its fifth bits
	WORD $0xa400a004 // ld1b {z4.b}, p0/z, [x0]
	WORD $0xa401a405 // ld1b {z5.b}, p1/z, [x0, #1, mul vl]
	WORD $0xa402a806 // ld1b {z6.b}, p2/z, [x0, #2, mul vl]
	WORD $0xa403ac07 // ld1b {z7.b}, p3/z, [x0, #3, mul vl]
	WORD $0x8542d0e0 // ld1rw {z0.s}, p4/z, [x7, #8]
	WORD $0x8543d0e1 // ld1rw {z1.s}, p4/z, [x7, #12]
	WORD $0x043e3088 // and z8.d, z4.d, z30.d
	WORD $0x043e30a9 // and z9.d, z5.d, z30.d
	WORD $0x043e30ca // and z10.d, z6.d, z30.d
	WORD $0x043e30eb // and z11.d, z7.d, z30.d
	WORD $0x042c948c // lsr z12.b, z4.b, #4
	WORD $0x042c94ad // lsr z13.b, z5.b, #4
	WORD $0x042c94ce // lsr z14.b, z6.b, #4
	WORD $0x042c94ef // lsr z15.b, z7.b, #4
	WORD $0x042a9f02 // lsl z2.b, z24.b, #2
	WORD $0x043f3042 // and z2.d, z2.d, z31.d
	WORD $0x04623108 // orr z8.d, z8.d, z2.d
	WORD $0x042a9f23 // lsl z3.b, z25.b, #2
	WORD $0x043f3063 // and z3.d, z3.d, z31.d
	WORD $0x04633129 // orr z9.d, z9.d, z3.d
	WORD $0x042a9f42 // lsl z2.b, z26.b, #2
	WORD $0x043f3042 // and z2.d, z2.d, z31.d
	WORD $0x0462314a // orr z10.d, z10.d, z2.d
	WORD $0x042a9f63 // lsl z3.b, z27.b, #2
	WORD $0x043f3063 // and z3.d, z3.d, z31.d
	WORD $0x0463316b // orr z11.d, z11.d, z3.d
	WORD $0x04299f02 // lsl z2.b, z24.b, #1
	WORD $0x043f3042 // and z2.d, z2.d, z31.d
	WORD $0x0462318c // orr z12.d, z12.d, z2.d
	WORD $0x04299f23 // lsl z3.b, z25.b, #1
	WORD $0x043f3063 // and z3.d, z3.d, z31.d
	WORD $0x046331ad // orr z13.d, z13.d, z3.d
	WORD $0x04299f42 // lsl z2.b, z26.b, #1
	WORD $0x043f3042 // and z2.d, z2.d, z31.d
	WORD $0x046231ce // orr z14.d, z14.d, z2.d
	WORD $0x04299f63 // lsl z3.b, z27.b, #1
	WORD $0x043f3063 // and z3.d, z3.d, z31.d
	WORD $0x046331ef // orr z15.d, z15.d, z3.d
	WORD $0x44800114 // sdot z20.s, z8.b, z0.b
	WORD $0x44800135 // sdot z21.s, z9.b, z0.b
	WORD $0x44800156 // sdot z22.s, z10.b, z0.b
	WORD $0x44800177 // sdot z23.s, z11.b, z0.b
	WORD $0x44810194 // sdot z20.s, z12.b, z1.b
	WORD $0x448101b5 // sdot z21.s, z13.b, z1.b
	WORD $0x448101d6 // sdot z22.s, z14.b, z1.b
	WORD $0x448101f7 // sdot z23.s, z15.b, z1.b
	ADD  $64, R0, R0
	// line 2: k-quad 4 (low nibbles), 5 (high), each with its fifth bits
	WORD $0xa400a004 // ld1b {z4.b}, p0/z, [x0]
	WORD $0xa401a405 // ld1b {z5.b}, p1/z, [x0, #1, mul vl]
	WORD $0xa402a806 // ld1b {z6.b}, p2/z, [x0, #2, mul vl]
	WORD $0xa403ac07 // ld1b {z7.b}, p3/z, [x0, #3, mul vl]
	WORD $0x8544d0e0 // ld1rw {z0.s}, p4/z, [x7, #16]
	WORD $0x8545d0e1 // ld1rw {z1.s}, p4/z, [x7, #20]
	WORD $0x043e3088 // and z8.d, z4.d, z30.d
	WORD $0x043e30a9 // and z9.d, z5.d, z30.d
	WORD $0x043e30ca // and z10.d, z6.d, z30.d
	WORD $0x043e30eb // and z11.d, z7.d, z30.d
	WORD $0x042c948c // lsr z12.b, z4.b, #4
	WORD $0x042c94ad // lsr z13.b, z5.b, #4
	WORD $0x042c94ce // lsr z14.b, z6.b, #4
	WORD $0x042c94ef // lsr z15.b, z7.b, #4
	WORD $0x043f3302 // and z2.d, z24.d, z31.d
	WORD $0x04623108 // orr z8.d, z8.d, z2.d
	WORD $0x043f3323 // and z3.d, z25.d, z31.d
	WORD $0x04633129 // orr z9.d, z9.d, z3.d
	WORD $0x043f3342 // and z2.d, z26.d, z31.d
	WORD $0x0462314a // orr z10.d, z10.d, z2.d
	WORD $0x043f3363 // and z3.d, z27.d, z31.d
	WORD $0x0463316b // orr z11.d, z11.d, z3.d
	WORD $0x042f9702 // lsr z2.b, z24.b, #1
	WORD $0x043f3042 // and z2.d, z2.d, z31.d
	WORD $0x0462318c // orr z12.d, z12.d, z2.d
	WORD $0x042f9723 // lsr z3.b, z25.b, #1
	WORD $0x043f3063 // and z3.d, z3.d, z31.d
	WORD $0x046331ad // orr z13.d, z13.d, z3.d
	WORD $0x042f9742 // lsr z2.b, z26.b, #1
	WORD $0x043f3042 // and z2.d, z2.d, z31.d
	WORD $0x046231ce // orr z14.d, z14.d, z2.d
	WORD $0x042f9763 // lsr z3.b, z27.b, #1
	WORD $0x043f3063 // and z3.d, z3.d, z31.d
	WORD $0x046331ef // orr z15.d, z15.d, z3.d
	WORD $0x44800114 // sdot z20.s, z8.b, z0.b
	WORD $0x44800135 // sdot z21.s, z9.b, z0.b
	WORD $0x44800156 // sdot z22.s, z10.b, z0.b
	WORD $0x44800177 // sdot z23.s, z11.b, z0.b
	WORD $0x44810194 // sdot z20.s, z12.b, z1.b
	WORD $0x448101b5 // sdot z21.s, z13.b, z1.b
	WORD $0x448101d6 // sdot z22.s, z14.b, z1.b
	WORD $0x448101f7 // sdot z23.s, z15.b, z1.b
	ADD  $64, R0, R0
	// line 3: k-quad 6 (low nibbles), 7 (high), each with its fifth bits
	WORD $0xa400a004 // ld1b {z4.b}, p0/z, [x0]
	WORD $0xa401a405 // ld1b {z5.b}, p1/z, [x0, #1, mul vl]
	WORD $0xa402a806 // ld1b {z6.b}, p2/z, [x0, #2, mul vl]
	WORD $0xa403ac07 // ld1b {z7.b}, p3/z, [x0, #3, mul vl]
	WORD $0x8546d0e0 // ld1rw {z0.s}, p4/z, [x7, #24]
	WORD $0x8547d0e1 // ld1rw {z1.s}, p4/z, [x7, #28]
	WORD $0x043e3088 // and z8.d, z4.d, z30.d
	WORD $0x043e30a9 // and z9.d, z5.d, z30.d
	WORD $0x043e30ca // and z10.d, z6.d, z30.d
	WORD $0x043e30eb // and z11.d, z7.d, z30.d
	WORD $0x042c948c // lsr z12.b, z4.b, #4
	WORD $0x042c94ad // lsr z13.b, z5.b, #4
	WORD $0x042c94ce // lsr z14.b, z6.b, #4
	WORD $0x042c94ef // lsr z15.b, z7.b, #4
	WORD $0x042e9702 // lsr z2.b, z24.b, #2
	WORD $0x043f3042 // and z2.d, z2.d, z31.d
	WORD $0x04623108 // orr z8.d, z8.d, z2.d
	WORD $0x042e9723 // lsr z3.b, z25.b, #2
	WORD $0x043f3063 // and z3.d, z3.d, z31.d
	WORD $0x04633129 // orr z9.d, z9.d, z3.d
	WORD $0x042e9742 // lsr z2.b, z26.b, #2
	WORD $0x043f3042 // and z2.d, z2.d, z31.d
	WORD $0x0462314a // orr z10.d, z10.d, z2.d
	WORD $0x042e9763 // lsr z3.b, z27.b, #2
	WORD $0x043f3063 // and z3.d, z3.d, z31.d
	WORD $0x0463316b // orr z11.d, z11.d, z3.d
	WORD $0x042d9702 // lsr z2.b, z24.b, #3
	WORD $0x043f3042 // and z2.d, z2.d, z31.d
	WORD $0x0462318c // orr z12.d, z12.d, z2.d
	WORD $0x042d9723 // lsr z3.b, z25.b, #3
	WORD $0x043f3063 // and z3.d, z3.d, z31.d
	WORD $0x046331ad // orr z13.d, z13.d, z3.d
	WORD $0x042d9742 // lsr z2.b, z26.b, #3
	WORD $0x043f3042 // and z2.d, z2.d, z31.d
	WORD $0x046231ce // orr z14.d, z14.d, z2.d
	WORD $0x042d9763 // lsr z3.b, z27.b, #3
	WORD $0x043f3063 // and z3.d, z3.d, z31.d
	WORD $0x046331ef // orr z15.d, z15.d, z3.d
	WORD $0x44800114 // sdot z20.s, z8.b, z0.b
	WORD $0x44800135 // sdot z21.s, z9.b, z0.b
	WORD $0x44800156 // sdot z22.s, z10.b, z0.b
	WORD $0x44800177 // sdot z23.s, z11.b, z0.b
	WORD $0x44810194 // sdot z20.s, z12.b, z1.b
	WORD $0x448101b5 // sdot z21.s, z13.b, z1.b
	WORD $0x448101d6 // sdot z22.s, z14.b, z1.b
	WORD $0x448101f7 // sdot z23.s, z15.b, z1.b
	ADD  $64, R0, R0
	ADD  $32, R7, R7
	ADD  $64, R0, R0 // past line 4
	// t += s·(xs·float(dot)) − m·(xs·float(Σxq)), s = d·sc, m = dm·mc
	WORD $0x8540d1a2 // ld1rw {z2.s}, p4/z, [x13]  (the group's activation scale)
	ADD  $4, R13, R13
	WORD $0x8540d141 // ld1rw {z1.s}, p4/z, [x10]  (Σxq of the group)
	ADD  $4, R10, R10
	WORD $0x6594b021 // scvtf z1.s, p4/m, z1.s
	WORD $0x65820821 // fmul z1.s, z1.s, z2.s
	// rows of chunk 0
	WORD $0xa440b288 // ld1b {z8.s}, p4/z, [x20]  (sc | low mc bits << 6)
	WORD $0xa440b2a9 // ld1b {z9.s}, p4/z, [x21]  (high mc bits)
	WORD $0xa4c0b30a // ld1h {z10.s}, p4/z, [x24]  (d)
	WORD $0xa4c0b32b // ld1h {z11.s}, p4/z, [x25]  (dm)
	WORD $0x047a950c // lsr z12.s, z8.s, #6
	WORD $0x058000a8 // and z8.s, z8.s, #0x3f
	WORD $0x04629d29 // lsl z9.s, z9.s, #2
	WORD $0x0580f069 // and z9.s, z9.s, #0x3c
	WORD $0x046c3129 // orr z9.d, z9.d, z12.d
	WORD $0x6595b108 // ucvtf z8.s, p4/m, z8.s
	WORD $0x6595b129 // ucvtf z9.s, p4/m, z9.s
	WORD $0x6589b14a // fcvt z10.s, p4/m, z10.h
	WORD $0x6589b16b // fcvt z11.s, p4/m, z11.h
	WORD $0x658a0908 // fmul z8.s, z8.s, z10.s
	WORD $0x658b0929 // fmul z9.s, z9.s, z11.s
	WORD $0x6594b294 // scvtf z20.s, p4/m, z20.s
	WORD $0x65820a94 // fmul z20.s, z20.s, z2.s
	WORD $0x65a81290 // fmla z16.s, p4/m, z20.s, z8.s
	WORD $0x65a13130 // fmls z16.s, p4/m, z9.s, z1.s
	// rows of chunk 1
	WORD $0xa441b688 // ld1b {z8.s}, p5/z, [x20, #1, mul vl]  (sc | low mc bits << 6)
	WORD $0xa441b6a9 // ld1b {z9.s}, p5/z, [x21, #1, mul vl]  (high mc bits)
	WORD $0xa4c1b70a // ld1h {z10.s}, p5/z, [x24, #1, mul vl]  (d)
	WORD $0xa4c1b72b // ld1h {z11.s}, p5/z, [x25, #1, mul vl]  (dm)
	WORD $0x047a950c // lsr z12.s, z8.s, #6
	WORD $0x058000a8 // and z8.s, z8.s, #0x3f
	WORD $0x04629d29 // lsl z9.s, z9.s, #2
	WORD $0x0580f069 // and z9.s, z9.s, #0x3c
	WORD $0x046c3129 // orr z9.d, z9.d, z12.d
	WORD $0x6595b508 // ucvtf z8.s, p5/m, z8.s
	WORD $0x6595b529 // ucvtf z9.s, p5/m, z9.s
	WORD $0x6589b54a // fcvt z10.s, p5/m, z10.h
	WORD $0x6589b56b // fcvt z11.s, p5/m, z11.h
	WORD $0x658a0908 // fmul z8.s, z8.s, z10.s
	WORD $0x658b0929 // fmul z9.s, z9.s, z11.s
	WORD $0x6594b6b5 // scvtf z21.s, p5/m, z21.s
	WORD $0x65820ab5 // fmul z21.s, z21.s, z2.s
	WORD $0x65a816b1 // fmla z17.s, p5/m, z21.s, z8.s
	WORD $0x65a13531 // fmls z17.s, p5/m, z9.s, z1.s
	// rows of chunk 2
	WORD $0xa442ba88 // ld1b {z8.s}, p6/z, [x20, #2, mul vl]  (sc | low mc bits << 6)
	WORD $0xa442baa9 // ld1b {z9.s}, p6/z, [x21, #2, mul vl]  (high mc bits)
	WORD $0xa4c2bb0a // ld1h {z10.s}, p6/z, [x24, #2, mul vl]  (d)
	WORD $0xa4c2bb2b // ld1h {z11.s}, p6/z, [x25, #2, mul vl]  (dm)
	WORD $0x047a950c // lsr z12.s, z8.s, #6
	WORD $0x058000a8 // and z8.s, z8.s, #0x3f
	WORD $0x04629d29 // lsl z9.s, z9.s, #2
	WORD $0x0580f069 // and z9.s, z9.s, #0x3c
	WORD $0x046c3129 // orr z9.d, z9.d, z12.d
	WORD $0x6595b908 // ucvtf z8.s, p6/m, z8.s
	WORD $0x6595b929 // ucvtf z9.s, p6/m, z9.s
	WORD $0x6589b94a // fcvt z10.s, p6/m, z10.h
	WORD $0x6589b96b // fcvt z11.s, p6/m, z11.h
	WORD $0x658a0908 // fmul z8.s, z8.s, z10.s
	WORD $0x658b0929 // fmul z9.s, z9.s, z11.s
	WORD $0x6594bad6 // scvtf z22.s, p6/m, z22.s
	WORD $0x65820ad6 // fmul z22.s, z22.s, z2.s
	WORD $0x65a81ad2 // fmla z18.s, p6/m, z22.s, z8.s
	WORD $0x65a13932 // fmls z18.s, p6/m, z9.s, z1.s
	// rows of chunk 3
	WORD $0xa443be88 // ld1b {z8.s}, p7/z, [x20, #3, mul vl]  (sc | low mc bits << 6)
	WORD $0xa443bea9 // ld1b {z9.s}, p7/z, [x21, #3, mul vl]  (high mc bits)
	WORD $0xa4c3bf0a // ld1h {z10.s}, p7/z, [x24, #3, mul vl]  (d)
	WORD $0xa4c3bf2b // ld1h {z11.s}, p7/z, [x25, #3, mul vl]  (dm)
	WORD $0x047a950c // lsr z12.s, z8.s, #6
	WORD $0x058000a8 // and z8.s, z8.s, #0x3f
	WORD $0x04629d29 // lsl z9.s, z9.s, #2
	WORD $0x0580f069 // and z9.s, z9.s, #0x3c
	WORD $0x046c3129 // orr z9.d, z9.d, z12.d
	WORD $0x6595bd08 // ucvtf z8.s, p7/m, z8.s
	WORD $0x6595bd29 // ucvtf z9.s, p7/m, z9.s
	WORD $0x6589bd4a // fcvt z10.s, p7/m, z10.h
	WORD $0x6589bd6b // fcvt z11.s, p7/m, z11.h
	WORD $0x658a0908 // fmul z8.s, z8.s, z10.s
	WORD $0x658b0929 // fmul z9.s, z9.s, z11.s
	WORD $0x6594bef7 // scvtf z23.s, p7/m, z23.s
	WORD $0x65820af7 // fmul z23.s, z23.s, z2.s
	WORD $0x65a81ef3 // fmla z19.s, p7/m, z23.s, z8.s
	WORD $0x65a13d33 // fmls z19.s, p7/m, z9.s, z1.s
	ADD  $16, R20, R20
	// odd group
	WORD $0x25b8c014 // dup z20.s, #0
	WORD $0x25b8c015 // dup z21.s, #0
	WORD $0x25b8c016 // dup z22.s, #0
	WORD $0x25b8c017 // dup z23.s, #0
	// line 4 (at +256): bit h of a byte = bit 4 of u in k-quad h
	ADD  $256, R0, R14
	WORD $0xa400a1d8 // ld1b {z24.b}, p0/z, [x14]
	WORD $0xa401a5d9 // ld1b {z25.b}, p1/z, [x14, #1, mul vl]
	WORD $0xa402a9da // ld1b {z26.b}, p2/z, [x14, #2, mul vl]
	WORD $0xa403addb // ld1b {z27.b}, p3/z, [x14, #3, mul vl]
	// line 0: k-quad 0 (low nibbles), 1 (high), each with its fifth bits
	WORD $0xa400a004 // ld1b {z4.b}, p0/z, [x0]
	WORD $0xa401a405 // ld1b {z5.b}, p1/z, [x0, #1, mul vl]
	WORD $0xa402a806 // ld1b {z6.b}, p2/z, [x0, #2, mul vl]
	WORD $0xa403ac07 // ld1b {z7.b}, p3/z, [x0, #3, mul vl]
	WORD $0x8540d0e0 // ld1rw {z0.s}, p4/z, [x7, #0]
	WORD $0x8541d0e1 // ld1rw {z1.s}, p4/z, [x7, #4]
	WORD $0x043e3088 // and z8.d, z4.d, z30.d
	WORD $0x043e30a9 // and z9.d, z5.d, z30.d
	WORD $0x043e30ca // and z10.d, z6.d, z30.d
	WORD $0x043e30eb // and z11.d, z7.d, z30.d
	WORD $0x042c948c // lsr z12.b, z4.b, #4
	WORD $0x042c94ad // lsr z13.b, z5.b, #4
	WORD $0x042c94ce // lsr z14.b, z6.b, #4
	WORD $0x042c94ef // lsr z15.b, z7.b, #4
	WORD $0x042c9f02 // lsl z2.b, z24.b, #4
	WORD $0x043f3042 // and z2.d, z2.d, z31.d
	WORD $0x04623108 // orr z8.d, z8.d, z2.d
	WORD $0x042c9f23 // lsl z3.b, z25.b, #4
	WORD $0x043f3063 // and z3.d, z3.d, z31.d
	WORD $0x04633129 // orr z9.d, z9.d, z3.d
	WORD $0x042c9f42 // lsl z2.b, z26.b, #4
	WORD $0x043f3042 // and z2.d, z2.d, z31.d
	WORD $0x0462314a // orr z10.d, z10.d, z2.d
	WORD $0x042c9f63 // lsl z3.b, z27.b, #4
	WORD $0x043f3063 // and z3.d, z3.d, z31.d
	WORD $0x0463316b // orr z11.d, z11.d, z3.d
	WORD $0x042b9f02 // lsl z2.b, z24.b, #3
	WORD $0x043f3042 // and z2.d, z2.d, z31.d
	WORD $0x0462318c // orr z12.d, z12.d, z2.d
	WORD $0x042b9f23 // lsl z3.b, z25.b, #3
	WORD $0x043f3063 // and z3.d, z3.d, z31.d
	WORD $0x046331ad // orr z13.d, z13.d, z3.d
	WORD $0x042b9f42 // lsl z2.b, z26.b, #3
	WORD $0x043f3042 // and z2.d, z2.d, z31.d
	WORD $0x046231ce // orr z14.d, z14.d, z2.d
	WORD $0x042b9f63 // lsl z3.b, z27.b, #3
	WORD $0x043f3063 // and z3.d, z3.d, z31.d
	WORD $0x046331ef // orr z15.d, z15.d, z3.d
	WORD $0x44800114 // sdot z20.s, z8.b, z0.b
	WORD $0x44800135 // sdot z21.s, z9.b, z0.b
	WORD $0x44800156 // sdot z22.s, z10.b, z0.b
	WORD $0x44800177 // sdot z23.s, z11.b, z0.b
	WORD $0x44810194 // sdot z20.s, z12.b, z1.b
	WORD $0x448101b5 // sdot z21.s, z13.b, z1.b
	WORD $0x448101d6 // sdot z22.s, z14.b, z1.b
	WORD $0x448101f7 // sdot z23.s, z15.b, z1.b
	ADD  $64, R0, R0
	// line 1: k-quad 2 (low nibbles), 3 (high), each with its fifth bits
	WORD $0xa400a004 // ld1b {z4.b}, p0/z, [x0]
	WORD $0xa401a405 // ld1b {z5.b}, p1/z, [x0, #1, mul vl]
	WORD $0xa402a806 // ld1b {z6.b}, p2/z, [x0, #2, mul vl]
	WORD $0xa403ac07 // ld1b {z7.b}, p3/z, [x0, #3, mul vl]
	WORD $0x8542d0e0 // ld1rw {z0.s}, p4/z, [x7, #8]
	WORD $0x8543d0e1 // ld1rw {z1.s}, p4/z, [x7, #12]
	WORD $0x043e3088 // and z8.d, z4.d, z30.d
	WORD $0x043e30a9 // and z9.d, z5.d, z30.d
	WORD $0x043e30ca // and z10.d, z6.d, z30.d
	WORD $0x043e30eb // and z11.d, z7.d, z30.d
	WORD $0x042c948c // lsr z12.b, z4.b, #4
	WORD $0x042c94ad // lsr z13.b, z5.b, #4
	WORD $0x042c94ce // lsr z14.b, z6.b, #4
	WORD $0x042c94ef // lsr z15.b, z7.b, #4
	WORD $0x042a9f02 // lsl z2.b, z24.b, #2
	WORD $0x043f3042 // and z2.d, z2.d, z31.d
	WORD $0x04623108 // orr z8.d, z8.d, z2.d
	WORD $0x042a9f23 // lsl z3.b, z25.b, #2
	WORD $0x043f3063 // and z3.d, z3.d, z31.d
	WORD $0x04633129 // orr z9.d, z9.d, z3.d
	WORD $0x042a9f42 // lsl z2.b, z26.b, #2
	WORD $0x043f3042 // and z2.d, z2.d, z31.d
	WORD $0x0462314a // orr z10.d, z10.d, z2.d
	WORD $0x042a9f63 // lsl z3.b, z27.b, #2
	WORD $0x043f3063 // and z3.d, z3.d, z31.d
	WORD $0x0463316b // orr z11.d, z11.d, z3.d
	WORD $0x04299f02 // lsl z2.b, z24.b, #1
	WORD $0x043f3042 // and z2.d, z2.d, z31.d
	WORD $0x0462318c // orr z12.d, z12.d, z2.d
	WORD $0x04299f23 // lsl z3.b, z25.b, #1
	WORD $0x043f3063 // and z3.d, z3.d, z31.d
	WORD $0x046331ad // orr z13.d, z13.d, z3.d
	WORD $0x04299f42 // lsl z2.b, z26.b, #1
	WORD $0x043f3042 // and z2.d, z2.d, z31.d
	WORD $0x046231ce // orr z14.d, z14.d, z2.d
	WORD $0x04299f63 // lsl z3.b, z27.b, #1
	WORD $0x043f3063 // and z3.d, z3.d, z31.d
	WORD $0x046331ef // orr z15.d, z15.d, z3.d
	WORD $0x44800114 // sdot z20.s, z8.b, z0.b
	WORD $0x44800135 // sdot z21.s, z9.b, z0.b
	WORD $0x44800156 // sdot z22.s, z10.b, z0.b
	WORD $0x44800177 // sdot z23.s, z11.b, z0.b
	WORD $0x44810194 // sdot z20.s, z12.b, z1.b
	WORD $0x448101b5 // sdot z21.s, z13.b, z1.b
	WORD $0x448101d6 // sdot z22.s, z14.b, z1.b
	WORD $0x448101f7 // sdot z23.s, z15.b, z1.b
	ADD  $64, R0, R0
	// line 2: k-quad 4 (low nibbles), 5 (high), each with its fifth bits
	WORD $0xa400a004 // ld1b {z4.b}, p0/z, [x0]
	WORD $0xa401a405 // ld1b {z5.b}, p1/z, [x0, #1, mul vl]
	WORD $0xa402a806 // ld1b {z6.b}, p2/z, [x0, #2, mul vl]
	WORD $0xa403ac07 // ld1b {z7.b}, p3/z, [x0, #3, mul vl]
	WORD $0x8544d0e0 // ld1rw {z0.s}, p4/z, [x7, #16]
	WORD $0x8545d0e1 // ld1rw {z1.s}, p4/z, [x7, #20]
	WORD $0x043e3088 // and z8.d, z4.d, z30.d
	WORD $0x043e30a9 // and z9.d, z5.d, z30.d
	WORD $0x043e30ca // and z10.d, z6.d, z30.d
	WORD $0x043e30eb // and z11.d, z7.d, z30.d
	WORD $0x042c948c // lsr z12.b, z4.b, #4
	WORD $0x042c94ad // lsr z13.b, z5.b, #4
	WORD $0x042c94ce // lsr z14.b, z6.b, #4
	WORD $0x042c94ef // lsr z15.b, z7.b, #4
	WORD $0x043f3302 // and z2.d, z24.d, z31.d
	WORD $0x04623108 // orr z8.d, z8.d, z2.d
	WORD $0x043f3323 // and z3.d, z25.d, z31.d
	WORD $0x04633129 // orr z9.d, z9.d, z3.d
	WORD $0x043f3342 // and z2.d, z26.d, z31.d
	WORD $0x0462314a // orr z10.d, z10.d, z2.d
	WORD $0x043f3363 // and z3.d, z27.d, z31.d
	WORD $0x0463316b // orr z11.d, z11.d, z3.d
	WORD $0x042f9702 // lsr z2.b, z24.b, #1
	WORD $0x043f3042 // and z2.d, z2.d, z31.d
	WORD $0x0462318c // orr z12.d, z12.d, z2.d
	WORD $0x042f9723 // lsr z3.b, z25.b, #1
	WORD $0x043f3063 // and z3.d, z3.d, z31.d
	WORD $0x046331ad // orr z13.d, z13.d, z3.d
	WORD $0x042f9742 // lsr z2.b, z26.b, #1
	WORD $0x043f3042 // and z2.d, z2.d, z31.d
	WORD $0x046231ce // orr z14.d, z14.d, z2.d
	WORD $0x042f9763 // lsr z3.b, z27.b, #1
	WORD $0x043f3063 // and z3.d, z3.d, z31.d
	WORD $0x046331ef // orr z15.d, z15.d, z3.d
	WORD $0x44800114 // sdot z20.s, z8.b, z0.b
	WORD $0x44800135 // sdot z21.s, z9.b, z0.b
	WORD $0x44800156 // sdot z22.s, z10.b, z0.b
	WORD $0x44800177 // sdot z23.s, z11.b, z0.b
	WORD $0x44810194 // sdot z20.s, z12.b, z1.b
	WORD $0x448101b5 // sdot z21.s, z13.b, z1.b
	WORD $0x448101d6 // sdot z22.s, z14.b, z1.b
	WORD $0x448101f7 // sdot z23.s, z15.b, z1.b
	ADD  $64, R0, R0
	// line 3: k-quad 6 (low nibbles), 7 (high), each with its fifth bits
	WORD $0xa400a004 // ld1b {z4.b}, p0/z, [x0]
	WORD $0xa401a405 // ld1b {z5.b}, p1/z, [x0, #1, mul vl]
	WORD $0xa402a806 // ld1b {z6.b}, p2/z, [x0, #2, mul vl]
	WORD $0xa403ac07 // ld1b {z7.b}, p3/z, [x0, #3, mul vl]
	WORD $0x8546d0e0 // ld1rw {z0.s}, p4/z, [x7, #24]
	WORD $0x8547d0e1 // ld1rw {z1.s}, p4/z, [x7, #28]
	WORD $0x043e3088 // and z8.d, z4.d, z30.d
	WORD $0x043e30a9 // and z9.d, z5.d, z30.d
	WORD $0x043e30ca // and z10.d, z6.d, z30.d
	WORD $0x043e30eb // and z11.d, z7.d, z30.d
	WORD $0x042c948c // lsr z12.b, z4.b, #4
	WORD $0x042c94ad // lsr z13.b, z5.b, #4
	WORD $0x042c94ce // lsr z14.b, z6.b, #4
	WORD $0x042c94ef // lsr z15.b, z7.b, #4
	WORD $0x042e9702 // lsr z2.b, z24.b, #2
	WORD $0x043f3042 // and z2.d, z2.d, z31.d
	WORD $0x04623108 // orr z8.d, z8.d, z2.d
	WORD $0x042e9723 // lsr z3.b, z25.b, #2
	WORD $0x043f3063 // and z3.d, z3.d, z31.d
	WORD $0x04633129 // orr z9.d, z9.d, z3.d
	WORD $0x042e9742 // lsr z2.b, z26.b, #2
	WORD $0x043f3042 // and z2.d, z2.d, z31.d
	WORD $0x0462314a // orr z10.d, z10.d, z2.d
	WORD $0x042e9763 // lsr z3.b, z27.b, #2
	WORD $0x043f3063 // and z3.d, z3.d, z31.d
	WORD $0x0463316b // orr z11.d, z11.d, z3.d
	WORD $0x042d9702 // lsr z2.b, z24.b, #3
	WORD $0x043f3042 // and z2.d, z2.d, z31.d
	WORD $0x0462318c // orr z12.d, z12.d, z2.d
	WORD $0x042d9723 // lsr z3.b, z25.b, #3
	WORD $0x043f3063 // and z3.d, z3.d, z31.d
	WORD $0x046331ad // orr z13.d, z13.d, z3.d
	WORD $0x042d9742 // lsr z2.b, z26.b, #3
	WORD $0x043f3042 // and z2.d, z2.d, z31.d
	WORD $0x046231ce // orr z14.d, z14.d, z2.d
	WORD $0x042d9763 // lsr z3.b, z27.b, #3
	WORD $0x043f3063 // and z3.d, z3.d, z31.d
	WORD $0x046331ef // orr z15.d, z15.d, z3.d
	WORD $0x44800114 // sdot z20.s, z8.b, z0.b
	WORD $0x44800135 // sdot z21.s, z9.b, z0.b
	WORD $0x44800156 // sdot z22.s, z10.b, z0.b
	WORD $0x44800177 // sdot z23.s, z11.b, z0.b
	WORD $0x44810194 // sdot z20.s, z12.b, z1.b
	WORD $0x448101b5 // sdot z21.s, z13.b, z1.b
	WORD $0x448101d6 // sdot z22.s, z14.b, z1.b
	WORD $0x448101f7 // sdot z23.s, z15.b, z1.b
	ADD  $64, R0, R0
	ADD  $32, R7, R7
	ADD  $64, R0, R0 // past line 4
	// t += s·(xs·float(dot)) − m·(xs·float(Σxq)), s = d·sc, m = dm·mc
	WORD $0x8540d1a2 // ld1rw {z2.s}, p4/z, [x13]  (the group's activation scale)
	ADD  $4, R13, R13
	WORD $0x8540d141 // ld1rw {z1.s}, p4/z, [x10]  (Σxq of the group)
	ADD  $4, R10, R10
	WORD $0x6594b021 // scvtf z1.s, p4/m, z1.s
	WORD $0x65820821 // fmul z1.s, z1.s, z2.s
	// rows of chunk 0
	WORD $0xa440b288 // ld1b {z8.s}, p4/z, [x20]  (sc | low mc bits << 6)
	WORD $0xa440b2a9 // ld1b {z9.s}, p4/z, [x21]  (high mc bits)
	WORD $0xa4c0b30a // ld1h {z10.s}, p4/z, [x24]  (d)
	WORD $0xa4c0b32b // ld1h {z11.s}, p4/z, [x25]  (dm)
	WORD $0x047a950c // lsr z12.s, z8.s, #6
	WORD $0x058000a8 // and z8.s, z8.s, #0x3f
	WORD $0x047e9529 // lsr z9.s, z9.s, #2
	WORD $0x0580f069 // and z9.s, z9.s, #0x3c
	WORD $0x046c3129 // orr z9.d, z9.d, z12.d
	WORD $0x6595b108 // ucvtf z8.s, p4/m, z8.s
	WORD $0x6595b129 // ucvtf z9.s, p4/m, z9.s
	WORD $0x6589b14a // fcvt z10.s, p4/m, z10.h
	WORD $0x6589b16b // fcvt z11.s, p4/m, z11.h
	WORD $0x658a0908 // fmul z8.s, z8.s, z10.s
	WORD $0x658b0929 // fmul z9.s, z9.s, z11.s
	WORD $0x6594b294 // scvtf z20.s, p4/m, z20.s
	WORD $0x65820a94 // fmul z20.s, z20.s, z2.s
	WORD $0x65a81290 // fmla z16.s, p4/m, z20.s, z8.s
	WORD $0x65a13130 // fmls z16.s, p4/m, z9.s, z1.s
	// rows of chunk 1
	WORD $0xa441b688 // ld1b {z8.s}, p5/z, [x20, #1, mul vl]  (sc | low mc bits << 6)
	WORD $0xa441b6a9 // ld1b {z9.s}, p5/z, [x21, #1, mul vl]  (high mc bits)
	WORD $0xa4c1b70a // ld1h {z10.s}, p5/z, [x24, #1, mul vl]  (d)
	WORD $0xa4c1b72b // ld1h {z11.s}, p5/z, [x25, #1, mul vl]  (dm)
	WORD $0x047a950c // lsr z12.s, z8.s, #6
	WORD $0x058000a8 // and z8.s, z8.s, #0x3f
	WORD $0x047e9529 // lsr z9.s, z9.s, #2
	WORD $0x0580f069 // and z9.s, z9.s, #0x3c
	WORD $0x046c3129 // orr z9.d, z9.d, z12.d
	WORD $0x6595b508 // ucvtf z8.s, p5/m, z8.s
	WORD $0x6595b529 // ucvtf z9.s, p5/m, z9.s
	WORD $0x6589b54a // fcvt z10.s, p5/m, z10.h
	WORD $0x6589b56b // fcvt z11.s, p5/m, z11.h
	WORD $0x658a0908 // fmul z8.s, z8.s, z10.s
	WORD $0x658b0929 // fmul z9.s, z9.s, z11.s
	WORD $0x6594b6b5 // scvtf z21.s, p5/m, z21.s
	WORD $0x65820ab5 // fmul z21.s, z21.s, z2.s
	WORD $0x65a816b1 // fmla z17.s, p5/m, z21.s, z8.s
	WORD $0x65a13531 // fmls z17.s, p5/m, z9.s, z1.s
	// rows of chunk 2
	WORD $0xa442ba88 // ld1b {z8.s}, p6/z, [x20, #2, mul vl]  (sc | low mc bits << 6)
	WORD $0xa442baa9 // ld1b {z9.s}, p6/z, [x21, #2, mul vl]  (high mc bits)
	WORD $0xa4c2bb0a // ld1h {z10.s}, p6/z, [x24, #2, mul vl]  (d)
	WORD $0xa4c2bb2b // ld1h {z11.s}, p6/z, [x25, #2, mul vl]  (dm)
	WORD $0x047a950c // lsr z12.s, z8.s, #6
	WORD $0x058000a8 // and z8.s, z8.s, #0x3f
	WORD $0x047e9529 // lsr z9.s, z9.s, #2
	WORD $0x0580f069 // and z9.s, z9.s, #0x3c
	WORD $0x046c3129 // orr z9.d, z9.d, z12.d
	WORD $0x6595b908 // ucvtf z8.s, p6/m, z8.s
	WORD $0x6595b929 // ucvtf z9.s, p6/m, z9.s
	WORD $0x6589b94a // fcvt z10.s, p6/m, z10.h
	WORD $0x6589b96b // fcvt z11.s, p6/m, z11.h
	WORD $0x658a0908 // fmul z8.s, z8.s, z10.s
	WORD $0x658b0929 // fmul z9.s, z9.s, z11.s
	WORD $0x6594bad6 // scvtf z22.s, p6/m, z22.s
	WORD $0x65820ad6 // fmul z22.s, z22.s, z2.s
	WORD $0x65a81ad2 // fmla z18.s, p6/m, z22.s, z8.s
	WORD $0x65a13932 // fmls z18.s, p6/m, z9.s, z1.s
	// rows of chunk 3
	WORD $0xa443be88 // ld1b {z8.s}, p7/z, [x20, #3, mul vl]  (sc | low mc bits << 6)
	WORD $0xa443bea9 // ld1b {z9.s}, p7/z, [x21, #3, mul vl]  (high mc bits)
	WORD $0xa4c3bf0a // ld1h {z10.s}, p7/z, [x24, #3, mul vl]  (d)
	WORD $0xa4c3bf2b // ld1h {z11.s}, p7/z, [x25, #3, mul vl]  (dm)
	WORD $0x047a950c // lsr z12.s, z8.s, #6
	WORD $0x058000a8 // and z8.s, z8.s, #0x3f
	WORD $0x047e9529 // lsr z9.s, z9.s, #2
	WORD $0x0580f069 // and z9.s, z9.s, #0x3c
	WORD $0x046c3129 // orr z9.d, z9.d, z12.d
	WORD $0x6595bd08 // ucvtf z8.s, p7/m, z8.s
	WORD $0x6595bd29 // ucvtf z9.s, p7/m, z9.s
	WORD $0x6589bd4a // fcvt z10.s, p7/m, z10.h
	WORD $0x6589bd6b // fcvt z11.s, p7/m, z11.h
	WORD $0x658a0908 // fmul z8.s, z8.s, z10.s
	WORD $0x658b0929 // fmul z9.s, z9.s, z11.s
	WORD $0x6594bef7 // scvtf z23.s, p7/m, z23.s
	WORD $0x65820af7 // fmul z23.s, z23.s, z2.s
	WORD $0x65a81ef3 // fmla z19.s, p7/m, z23.s, z8.s
	WORD $0x65a13d33 // fmls z19.s, p7/m, z9.s, z1.s
	ADD  $16, R20, R20
	ADD  $16, R21, R21
	SUBS $1, R22, R22
	BNE  k5g
	SUBS $1, R23, R23
	BNE  k5b

	// y (+)= t
	CBZ  R9, k5z
	WORD $0xa540b0d8 // ld1w {z24.s}, p4/z, [x6]
	WORD $0xa541b4d9 // ld1w {z25.s}, p5/z, [x6, #1, mul vl]
	WORD $0xa542b8da // ld1w {z26.s}, p6/z, [x6, #2, mul vl]
	WORD $0xa543bcdb // ld1w {z27.s}, p7/z, [x6, #3, mul vl]
	B    k5s

k5z:
	WORD $0x25b8c018 // dup z24.s, #0
	WORD $0x25b8c019 // dup z25.s, #0
	WORD $0x25b8c01a // dup z26.s, #0
	WORD $0x25b8c01b // dup z27.s, #0

k5s:
	WORD $0x65809218 // fadd z24.s, p4/m, z24.s, z16.s
	WORD $0x65809639 // fadd z25.s, p5/m, z25.s, z17.s
	WORD $0x65809a5a // fadd z26.s, p6/m, z26.s, z18.s
	WORD $0x65809e7b // fadd z27.s, p7/m, z27.s, z19.s
	WORD $0xe540f0d8 // st1w {z24.s}, p4, [x6]
	WORD $0xe541f4d9 // st1w {z25.s}, p5, [x6, #1, mul vl]
	WORD $0xe542f8da // st1w {z26.s}, p6, [x6, #2, mul vl]
	WORD $0xe543fcdb // st1w {z27.s}, p7, [x6, #3, mul vl]
	ADD  $64, R6, R6
	SUBS $1, R1, R1
	BNE  k5p
	RET


// func dotQ6KSVE_16(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)
TEXT ·dotQ6KSVE_16(SB), NOSPLIT, $0-64
	ARGS
	// p0..p3: bytes [i·VL/8, (i+1)·VL/8) ∩ [0, 64) of a 64-byte line;
	// p4..p7: the same chunks as f32/int32 lanes ∩ [0, 16)
	MOVD $64, R8
	MOVD $0, R11
	WORD $0x25281d60 // whilelo p0.b, x11, x8
	WORD $0x0430e3eb // incb x11
	WORD $0x25281d61 // whilelo p1.b, x11, x8
	WORD $0x0430e3eb // incb x11
	WORD $0x25281d62 // whilelo p2.b, x11, x8
	WORD $0x0430e3eb // incb x11
	WORD $0x25281d63 // whilelo p3.b, x11, x8
	MOVD $16, R8
	MOVD $0, R11
	WORD $0x25a81d64 // whilelo p4.s, x11, x8
	WORD $0x04b0e3eb // incw x11
	WORD $0x25a81d65 // whilelo p5.s, x11, x8
	WORD $0x04b0e3eb // incw x11
	WORD $0x25a81d66 // whilelo p6.s, x11, x8
	WORD $0x04b0e3eb // incw x11
	WORD $0x25a81d67 // whilelo p7.s, x11, x8

	LSR  $3, R2, R2 // super-blocks of 8 groups

k6p:
	WORD $0x25b8c010 // dup z16.s, #0
	WORD $0x25b8c011 // dup z17.s, #0
	WORD $0x25b8c012 // dup z18.s, #0
	WORD $0x25b8c013 // dup z19.s, #0
	MOVD R3, R7
	MOVD R4, R10
	MOVD R5, R13
	MOVD R2, R23

k6b:
	// super-block header: R20 = scale codes, R21 = high min bits, R24 = d, R25 = dm
	MOVD R0, R20
	ADD  $128, R0, R21
	ADD  $192, R0, R24
	ADD  $224, R0, R25
	ADD  $256, R0, R0 // the 8 groups' value lines
	MOVD $4, R22

k6g:
	// even group
	// z0..z7: the group's k-quads of activations, broadcast
	WORD $0x8540d0e0 // ld1rw {z0.s}, p4/z, [x7, #0]
	WORD $0x8541d0e1 // ld1rw {z1.s}, p4/z, [x7, #4]
	WORD $0x8542d0e2 // ld1rw {z2.s}, p4/z, [x7, #8]
	WORD $0x8543d0e3 // ld1rw {z3.s}, p4/z, [x7, #12]
	WORD $0x8544d0e4 // ld1rw {z4.s}, p4/z, [x7, #16]
	WORD $0x8545d0e5 // ld1rw {z5.s}, p4/z, [x7, #20]
	WORD $0x8546d0e6 // ld1rw {z6.s}, p4/z, [x7, #24]
	WORD $0x8547d0e7 // ld1rw {z7.s}, p4/z, [x7, #28]
	ADD  $32, R7, R7
	WORD $0x25b8c014 // dup z20.s, #0
	WORD $0x25b8c015 // dup z21.s, #0
	WORD $0x25b8c016 // dup z22.s, #0
	WORD $0x25b8c017 // dup z23.s, #0
	WORD $0x25b8c018 // dup z24.s, #0
	WORD $0x25b8c019 // dup z25.s, #0
	WORD $0x25b8c01a // dup z26.s, #0
	WORD $0x25b8c01b // dup z27.s, #0
	// line bases: R0 = line 0, R8 = line 1, R11 = line 2, R14 = line 3, R15 = line 4, R19 = line 5
	ADD  $64, R0, R8
	ADD  $128, R0, R11
	ADD  $192, R0, R14
	ADD  $256, R0, R15
	ADD  $320, R0, R19
	// chunk 0 (p0): L0..L5 in z8..z13
	WORD $0xa400a008 // ld1b {z8.b}, p0/z, [x0]
	WORD $0xa400a109 // ld1b {z9.b}, p0/z, [x8]
	WORD $0xa400a16a // ld1b {z10.b}, p0/z, [x11]
	WORD $0xa400a1cb // ld1b {z11.b}, p0/z, [x14]
	WORD $0xa400a1ec // ld1b {z12.b}, p0/z, [x15]
	WORD $0xa400a26d // ld1b {z13.b}, p0/z, [x19]
	// k = 24..27: (L0 >> 6) | ((L1 >> 4) & 12) | ((L2 >> 2) & 48); 28..31 the same of L3, L4, L5
	WORD $0x042a950e // lsr z14.b, z8.b, #6
	WORD $0x042c952f // lsr z15.b, z9.b, #4
	WORD $0x0580362f // and z15.b, z15.b, #0xc
	WORD $0x046f31ce // orr z14.d, z14.d, z15.d
	WORD $0x042e955d // lsr z29.b, z10.b, #2
	WORD $0x0580263d // and z29.b, z29.b, #0x30
	WORD $0x047d31ce // orr z14.d, z14.d, z29.d
	WORD $0x042a957e // lsr z30.b, z11.b, #6
	WORD $0x042c959f // lsr z31.b, z12.b, #4
	WORD $0x0580363f // and z31.b, z31.b, #0xc
	WORD $0x047f33de // orr z30.d, z30.d, z31.d
	WORD $0x042e95af // lsr z15.b, z13.b, #2
	WORD $0x0580262f // and z15.b, z15.b, #0x30
	WORD $0x046f33de // orr z30.d, z30.d, z15.d
	WORD $0x448601d8 // sdot z24.s, z14.b, z6.b
	WORD $0x448703d4 // sdot z20.s, z30.b, z7.b
	// k = 0..23: L & 63
	WORD $0x058006a8 // and z8.b, z8.b, #0x3f
	WORD $0x058006a9 // and z9.b, z9.b, #0x3f
	WORD $0x058006aa // and z10.b, z10.b, #0x3f
	WORD $0x058006ab // and z11.b, z11.b, #0x3f
	WORD $0x058006ac // and z12.b, z12.b, #0x3f
	WORD $0x058006ad // and z13.b, z13.b, #0x3f
	WORD $0x44800114 // sdot z20.s, z8.b, z0.b
	WORD $0x44810138 // sdot z24.s, z9.b, z1.b
	WORD $0x44820154 // sdot z20.s, z10.b, z2.b
	WORD $0x44830178 // sdot z24.s, z11.b, z3.b
	WORD $0x44840194 // sdot z20.s, z12.b, z4.b
	WORD $0x448501b8 // sdot z24.s, z13.b, z5.b
	// chunk 1 (p1): L0..L5 in z8..z13
	WORD $0xa401a408 // ld1b {z8.b}, p1/z, [x0, #1, mul vl]
	WORD $0xa401a509 // ld1b {z9.b}, p1/z, [x8, #1, mul vl]
	WORD $0xa401a56a // ld1b {z10.b}, p1/z, [x11, #1, mul vl]
	WORD $0xa401a5cb // ld1b {z11.b}, p1/z, [x14, #1, mul vl]
	WORD $0xa401a5ec // ld1b {z12.b}, p1/z, [x15, #1, mul vl]
	WORD $0xa401a66d // ld1b {z13.b}, p1/z, [x19, #1, mul vl]
	// k = 24..27: (L0 >> 6) | ((L1 >> 4) & 12) | ((L2 >> 2) & 48); 28..31 the same of L3, L4, L5
	WORD $0x042a950e // lsr z14.b, z8.b, #6
	WORD $0x042c952f // lsr z15.b, z9.b, #4
	WORD $0x0580362f // and z15.b, z15.b, #0xc
	WORD $0x046f31ce // orr z14.d, z14.d, z15.d
	WORD $0x042e955d // lsr z29.b, z10.b, #2
	WORD $0x0580263d // and z29.b, z29.b, #0x30
	WORD $0x047d31ce // orr z14.d, z14.d, z29.d
	WORD $0x042a957e // lsr z30.b, z11.b, #6
	WORD $0x042c959f // lsr z31.b, z12.b, #4
	WORD $0x0580363f // and z31.b, z31.b, #0xc
	WORD $0x047f33de // orr z30.d, z30.d, z31.d
	WORD $0x042e95af // lsr z15.b, z13.b, #2
	WORD $0x0580262f // and z15.b, z15.b, #0x30
	WORD $0x046f33de // orr z30.d, z30.d, z15.d
	WORD $0x448601d9 // sdot z25.s, z14.b, z6.b
	WORD $0x448703d5 // sdot z21.s, z30.b, z7.b
	// k = 0..23: L & 63
	WORD $0x058006a8 // and z8.b, z8.b, #0x3f
	WORD $0x058006a9 // and z9.b, z9.b, #0x3f
	WORD $0x058006aa // and z10.b, z10.b, #0x3f
	WORD $0x058006ab // and z11.b, z11.b, #0x3f
	WORD $0x058006ac // and z12.b, z12.b, #0x3f
	WORD $0x058006ad // and z13.b, z13.b, #0x3f
	WORD $0x44800115 // sdot z21.s, z8.b, z0.b
	WORD $0x44810139 // sdot z25.s, z9.b, z1.b
	WORD $0x44820155 // sdot z21.s, z10.b, z2.b
	WORD $0x44830179 // sdot z25.s, z11.b, z3.b
	WORD $0x44840195 // sdot z21.s, z12.b, z4.b
	WORD $0x448501b9 // sdot z25.s, z13.b, z5.b
	// chunk 2 (p2): L0..L5 in z8..z13
	WORD $0xa402a808 // ld1b {z8.b}, p2/z, [x0, #2, mul vl]
	WORD $0xa402a909 // ld1b {z9.b}, p2/z, [x8, #2, mul vl]
	WORD $0xa402a96a // ld1b {z10.b}, p2/z, [x11, #2, mul vl]
	WORD $0xa402a9cb // ld1b {z11.b}, p2/z, [x14, #2, mul vl]
	WORD $0xa402a9ec // ld1b {z12.b}, p2/z, [x15, #2, mul vl]
	WORD $0xa402aa6d // ld1b {z13.b}, p2/z, [x19, #2, mul vl]
	// k = 24..27: (L0 >> 6) | ((L1 >> 4) & 12) | ((L2 >> 2) & 48); 28..31 the same of L3, L4, L5
	WORD $0x042a950e // lsr z14.b, z8.b, #6
	WORD $0x042c952f // lsr z15.b, z9.b, #4
	WORD $0x0580362f // and z15.b, z15.b, #0xc
	WORD $0x046f31ce // orr z14.d, z14.d, z15.d
	WORD $0x042e955d // lsr z29.b, z10.b, #2
	WORD $0x0580263d // and z29.b, z29.b, #0x30
	WORD $0x047d31ce // orr z14.d, z14.d, z29.d
	WORD $0x042a957e // lsr z30.b, z11.b, #6
	WORD $0x042c959f // lsr z31.b, z12.b, #4
	WORD $0x0580363f // and z31.b, z31.b, #0xc
	WORD $0x047f33de // orr z30.d, z30.d, z31.d
	WORD $0x042e95af // lsr z15.b, z13.b, #2
	WORD $0x0580262f // and z15.b, z15.b, #0x30
	WORD $0x046f33de // orr z30.d, z30.d, z15.d
	WORD $0x448601da // sdot z26.s, z14.b, z6.b
	WORD $0x448703d6 // sdot z22.s, z30.b, z7.b
	// k = 0..23: L & 63
	WORD $0x058006a8 // and z8.b, z8.b, #0x3f
	WORD $0x058006a9 // and z9.b, z9.b, #0x3f
	WORD $0x058006aa // and z10.b, z10.b, #0x3f
	WORD $0x058006ab // and z11.b, z11.b, #0x3f
	WORD $0x058006ac // and z12.b, z12.b, #0x3f
	WORD $0x058006ad // and z13.b, z13.b, #0x3f
	WORD $0x44800116 // sdot z22.s, z8.b, z0.b
	WORD $0x4481013a // sdot z26.s, z9.b, z1.b
	WORD $0x44820156 // sdot z22.s, z10.b, z2.b
	WORD $0x4483017a // sdot z26.s, z11.b, z3.b
	WORD $0x44840196 // sdot z22.s, z12.b, z4.b
	WORD $0x448501ba // sdot z26.s, z13.b, z5.b
	// chunk 3 (p3): L0..L5 in z8..z13
	WORD $0xa403ac08 // ld1b {z8.b}, p3/z, [x0, #3, mul vl]
	WORD $0xa403ad09 // ld1b {z9.b}, p3/z, [x8, #3, mul vl]
	WORD $0xa403ad6a // ld1b {z10.b}, p3/z, [x11, #3, mul vl]
	WORD $0xa403adcb // ld1b {z11.b}, p3/z, [x14, #3, mul vl]
	WORD $0xa403adec // ld1b {z12.b}, p3/z, [x15, #3, mul vl]
	WORD $0xa403ae6d // ld1b {z13.b}, p3/z, [x19, #3, mul vl]
	// k = 24..27: (L0 >> 6) | ((L1 >> 4) & 12) | ((L2 >> 2) & 48); 28..31 the same of L3, L4, L5
	WORD $0x042a950e // lsr z14.b, z8.b, #6
	WORD $0x042c952f // lsr z15.b, z9.b, #4
	WORD $0x0580362f // and z15.b, z15.b, #0xc
	WORD $0x046f31ce // orr z14.d, z14.d, z15.d
	WORD $0x042e955d // lsr z29.b, z10.b, #2
	WORD $0x0580263d // and z29.b, z29.b, #0x30
	WORD $0x047d31ce // orr z14.d, z14.d, z29.d
	WORD $0x042a957e // lsr z30.b, z11.b, #6
	WORD $0x042c959f // lsr z31.b, z12.b, #4
	WORD $0x0580363f // and z31.b, z31.b, #0xc
	WORD $0x047f33de // orr z30.d, z30.d, z31.d
	WORD $0x042e95af // lsr z15.b, z13.b, #2
	WORD $0x0580262f // and z15.b, z15.b, #0x30
	WORD $0x046f33de // orr z30.d, z30.d, z15.d
	WORD $0x448601db // sdot z27.s, z14.b, z6.b
	WORD $0x448703d7 // sdot z23.s, z30.b, z7.b
	// k = 0..23: L & 63
	WORD $0x058006a8 // and z8.b, z8.b, #0x3f
	WORD $0x058006a9 // and z9.b, z9.b, #0x3f
	WORD $0x058006aa // and z10.b, z10.b, #0x3f
	WORD $0x058006ab // and z11.b, z11.b, #0x3f
	WORD $0x058006ac // and z12.b, z12.b, #0x3f
	WORD $0x058006ad // and z13.b, z13.b, #0x3f
	WORD $0x44800117 // sdot z23.s, z8.b, z0.b
	WORD $0x4481013b // sdot z27.s, z9.b, z1.b
	WORD $0x44820157 // sdot z23.s, z10.b, z2.b
	WORD $0x4483017b // sdot z27.s, z11.b, z3.b
	WORD $0x44840197 // sdot z23.s, z12.b, z4.b
	WORD $0x448501bb // sdot z27.s, z13.b, z5.b
	// dot = Σu·xq = z20..z23 + z24..z27
	WORD $0x04b80294 // add z20.s, z20.s, z24.s
	WORD $0x04b902b5 // add z21.s, z21.s, z25.s
	WORD $0x04ba02d6 // add z22.s, z22.s, z26.s
	WORD $0x04bb02f7 // add z23.s, z23.s, z27.s
	ADD  $384, R0, R0
	// t += s·(xs·float(dot)) − m·(xs·float(Σxq)), s = d·sc, m = dm·mc
	WORD $0x8540d1a2 // ld1rw {z2.s}, p4/z, [x13]  (the group's activation scale)
	ADD  $4, R13, R13
	WORD $0x8540d141 // ld1rw {z1.s}, p4/z, [x10]  (Σxq of the group)
	ADD  $4, R10, R10
	WORD $0x6594b021 // scvtf z1.s, p4/m, z1.s
	WORD $0x65820821 // fmul z1.s, z1.s, z2.s
	// rows of chunk 0
	WORD $0xa440b288 // ld1b {z8.s}, p4/z, [x20]  (sc | low mc bits << 6)
	WORD $0xa440b2a9 // ld1b {z9.s}, p4/z, [x21]  (high mc bits)
	WORD $0xa4c0b30a // ld1h {z10.s}, p4/z, [x24]  (d)
	WORD $0xa4c0b32b // ld1h {z11.s}, p4/z, [x25]  (dm)
	WORD $0x047a950c // lsr z12.s, z8.s, #6
	WORD $0x058000a8 // and z8.s, z8.s, #0x3f
	WORD $0x04629d29 // lsl z9.s, z9.s, #2
	WORD $0x0580f069 // and z9.s, z9.s, #0x3c
	WORD $0x046c3129 // orr z9.d, z9.d, z12.d
	WORD $0x6595b108 // ucvtf z8.s, p4/m, z8.s
	WORD $0x6595b129 // ucvtf z9.s, p4/m, z9.s
	WORD $0x6589b14a // fcvt z10.s, p4/m, z10.h
	WORD $0x6589b16b // fcvt z11.s, p4/m, z11.h
	WORD $0x658a0908 // fmul z8.s, z8.s, z10.s
	WORD $0x658b0929 // fmul z9.s, z9.s, z11.s
	WORD $0x6594b294 // scvtf z20.s, p4/m, z20.s
	WORD $0x65820a94 // fmul z20.s, z20.s, z2.s
	WORD $0x65a81290 // fmla z16.s, p4/m, z20.s, z8.s
	WORD $0x65a13130 // fmls z16.s, p4/m, z9.s, z1.s
	// rows of chunk 1
	WORD $0xa441b688 // ld1b {z8.s}, p5/z, [x20, #1, mul vl]  (sc | low mc bits << 6)
	WORD $0xa441b6a9 // ld1b {z9.s}, p5/z, [x21, #1, mul vl]  (high mc bits)
	WORD $0xa4c1b70a // ld1h {z10.s}, p5/z, [x24, #1, mul vl]  (d)
	WORD $0xa4c1b72b // ld1h {z11.s}, p5/z, [x25, #1, mul vl]  (dm)
	WORD $0x047a950c // lsr z12.s, z8.s, #6
	WORD $0x058000a8 // and z8.s, z8.s, #0x3f
	WORD $0x04629d29 // lsl z9.s, z9.s, #2
	WORD $0x0580f069 // and z9.s, z9.s, #0x3c
	WORD $0x046c3129 // orr z9.d, z9.d, z12.d
	WORD $0x6595b508 // ucvtf z8.s, p5/m, z8.s
	WORD $0x6595b529 // ucvtf z9.s, p5/m, z9.s
	WORD $0x6589b54a // fcvt z10.s, p5/m, z10.h
	WORD $0x6589b56b // fcvt z11.s, p5/m, z11.h
	WORD $0x658a0908 // fmul z8.s, z8.s, z10.s
	WORD $0x658b0929 // fmul z9.s, z9.s, z11.s
	WORD $0x6594b6b5 // scvtf z21.s, p5/m, z21.s
	WORD $0x65820ab5 // fmul z21.s, z21.s, z2.s
	WORD $0x65a816b1 // fmla z17.s, p5/m, z21.s, z8.s
	WORD $0x65a13531 // fmls z17.s, p5/m, z9.s, z1.s
	// rows of chunk 2
	WORD $0xa442ba88 // ld1b {z8.s}, p6/z, [x20, #2, mul vl]  (sc | low mc bits << 6)
	WORD $0xa442baa9 // ld1b {z9.s}, p6/z, [x21, #2, mul vl]  (high mc bits)
	WORD $0xa4c2bb0a // ld1h {z10.s}, p6/z, [x24, #2, mul vl]  (d)
	WORD $0xa4c2bb2b // ld1h {z11.s}, p6/z, [x25, #2, mul vl]  (dm)
	WORD $0x047a950c // lsr z12.s, z8.s, #6
	WORD $0x058000a8 // and z8.s, z8.s, #0x3f
	WORD $0x04629d29 // lsl z9.s, z9.s, #2
	WORD $0x0580f069 // and z9.s, z9.s, #0x3c
	WORD $0x046c3129 // orr z9.d, z9.d, z12.d
	WORD $0x6595b908 // ucvtf z8.s, p6/m, z8.s
	WORD $0x6595b929 // ucvtf z9.s, p6/m, z9.s
	WORD $0x6589b94a // fcvt z10.s, p6/m, z10.h
	WORD $0x6589b96b // fcvt z11.s, p6/m, z11.h
	WORD $0x658a0908 // fmul z8.s, z8.s, z10.s
	WORD $0x658b0929 // fmul z9.s, z9.s, z11.s
	WORD $0x6594bad6 // scvtf z22.s, p6/m, z22.s
	WORD $0x65820ad6 // fmul z22.s, z22.s, z2.s
	WORD $0x65a81ad2 // fmla z18.s, p6/m, z22.s, z8.s
	WORD $0x65a13932 // fmls z18.s, p6/m, z9.s, z1.s
	// rows of chunk 3
	WORD $0xa443be88 // ld1b {z8.s}, p7/z, [x20, #3, mul vl]  (sc | low mc bits << 6)
	WORD $0xa443bea9 // ld1b {z9.s}, p7/z, [x21, #3, mul vl]  (high mc bits)
	WORD $0xa4c3bf0a // ld1h {z10.s}, p7/z, [x24, #3, mul vl]  (d)
	WORD $0xa4c3bf2b // ld1h {z11.s}, p7/z, [x25, #3, mul vl]  (dm)
	WORD $0x047a950c // lsr z12.s, z8.s, #6
	WORD $0x058000a8 // and z8.s, z8.s, #0x3f
	WORD $0x04629d29 // lsl z9.s, z9.s, #2
	WORD $0x0580f069 // and z9.s, z9.s, #0x3c
	WORD $0x046c3129 // orr z9.d, z9.d, z12.d
	WORD $0x6595bd08 // ucvtf z8.s, p7/m, z8.s
	WORD $0x6595bd29 // ucvtf z9.s, p7/m, z9.s
	WORD $0x6589bd4a // fcvt z10.s, p7/m, z10.h
	WORD $0x6589bd6b // fcvt z11.s, p7/m, z11.h
	WORD $0x658a0908 // fmul z8.s, z8.s, z10.s
	WORD $0x658b0929 // fmul z9.s, z9.s, z11.s
	WORD $0x6594bef7 // scvtf z23.s, p7/m, z23.s
	WORD $0x65820af7 // fmul z23.s, z23.s, z2.s
	WORD $0x65a81ef3 // fmla z19.s, p7/m, z23.s, z8.s
	WORD $0x65a13d33 // fmls z19.s, p7/m, z9.s, z1.s
	ADD  $16, R20, R20
	// odd group
	// z0..z7: the group's k-quads of activations, broadcast
	WORD $0x8540d0e0 // ld1rw {z0.s}, p4/z, [x7, #0]
	WORD $0x8541d0e1 // ld1rw {z1.s}, p4/z, [x7, #4]
	WORD $0x8542d0e2 // ld1rw {z2.s}, p4/z, [x7, #8]
	WORD $0x8543d0e3 // ld1rw {z3.s}, p4/z, [x7, #12]
	WORD $0x8544d0e4 // ld1rw {z4.s}, p4/z, [x7, #16]
	WORD $0x8545d0e5 // ld1rw {z5.s}, p4/z, [x7, #20]
	WORD $0x8546d0e6 // ld1rw {z6.s}, p4/z, [x7, #24]
	WORD $0x8547d0e7 // ld1rw {z7.s}, p4/z, [x7, #28]
	ADD  $32, R7, R7
	WORD $0x25b8c014 // dup z20.s, #0
	WORD $0x25b8c015 // dup z21.s, #0
	WORD $0x25b8c016 // dup z22.s, #0
	WORD $0x25b8c017 // dup z23.s, #0
	WORD $0x25b8c018 // dup z24.s, #0
	WORD $0x25b8c019 // dup z25.s, #0
	WORD $0x25b8c01a // dup z26.s, #0
	WORD $0x25b8c01b // dup z27.s, #0
	// line bases: R0 = line 0, R8 = line 1, R11 = line 2, R14 = line 3, R15 = line 4, R19 = line 5
	ADD  $64, R0, R8
	ADD  $128, R0, R11
	ADD  $192, R0, R14
	ADD  $256, R0, R15
	ADD  $320, R0, R19
	// chunk 0 (p0): L0..L5 in z8..z13
	WORD $0xa400a008 // ld1b {z8.b}, p0/z, [x0]
	WORD $0xa400a109 // ld1b {z9.b}, p0/z, [x8]
	WORD $0xa400a16a // ld1b {z10.b}, p0/z, [x11]
	WORD $0xa400a1cb // ld1b {z11.b}, p0/z, [x14]
	WORD $0xa400a1ec // ld1b {z12.b}, p0/z, [x15]
	WORD $0xa400a26d // ld1b {z13.b}, p0/z, [x19]
	// k = 24..27: (L0 >> 6) | ((L1 >> 4) & 12) | ((L2 >> 2) & 48); 28..31 the same of L3, L4, L5
	WORD $0x042a950e // lsr z14.b, z8.b, #6
	WORD $0x042c952f // lsr z15.b, z9.b, #4
	WORD $0x0580362f // and z15.b, z15.b, #0xc
	WORD $0x046f31ce // orr z14.d, z14.d, z15.d
	WORD $0x042e955d // lsr z29.b, z10.b, #2
	WORD $0x0580263d // and z29.b, z29.b, #0x30
	WORD $0x047d31ce // orr z14.d, z14.d, z29.d
	WORD $0x042a957e // lsr z30.b, z11.b, #6
	WORD $0x042c959f // lsr z31.b, z12.b, #4
	WORD $0x0580363f // and z31.b, z31.b, #0xc
	WORD $0x047f33de // orr z30.d, z30.d, z31.d
	WORD $0x042e95af // lsr z15.b, z13.b, #2
	WORD $0x0580262f // and z15.b, z15.b, #0x30
	WORD $0x046f33de // orr z30.d, z30.d, z15.d
	WORD $0x448601d8 // sdot z24.s, z14.b, z6.b
	WORD $0x448703d4 // sdot z20.s, z30.b, z7.b
	// k = 0..23: L & 63
	WORD $0x058006a8 // and z8.b, z8.b, #0x3f
	WORD $0x058006a9 // and z9.b, z9.b, #0x3f
	WORD $0x058006aa // and z10.b, z10.b, #0x3f
	WORD $0x058006ab // and z11.b, z11.b, #0x3f
	WORD $0x058006ac // and z12.b, z12.b, #0x3f
	WORD $0x058006ad // and z13.b, z13.b, #0x3f
	WORD $0x44800114 // sdot z20.s, z8.b, z0.b
	WORD $0x44810138 // sdot z24.s, z9.b, z1.b
	WORD $0x44820154 // sdot z20.s, z10.b, z2.b
	WORD $0x44830178 // sdot z24.s, z11.b, z3.b
	WORD $0x44840194 // sdot z20.s, z12.b, z4.b
	WORD $0x448501b8 // sdot z24.s, z13.b, z5.b
	// chunk 1 (p1): L0..L5 in z8..z13
	WORD $0xa401a408 // ld1b {z8.b}, p1/z, [x0, #1, mul vl]
	WORD $0xa401a509 // ld1b {z9.b}, p1/z, [x8, #1, mul vl]
	WORD $0xa401a56a // ld1b {z10.b}, p1/z, [x11, #1, mul vl]
	WORD $0xa401a5cb // ld1b {z11.b}, p1/z, [x14, #1, mul vl]
	WORD $0xa401a5ec // ld1b {z12.b}, p1/z, [x15, #1, mul vl]
	WORD $0xa401a66d // ld1b {z13.b}, p1/z, [x19, #1, mul vl]
	// k = 24..27: (L0 >> 6) | ((L1 >> 4) & 12) | ((L2 >> 2) & 48); 28..31 the same of L3, L4, L5
	WORD $0x042a950e // lsr z14.b, z8.b, #6
	WORD $0x042c952f // lsr z15.b, z9.b, #4
	WORD $0x0580362f // and z15.b, z15.b, #0xc
	WORD $0x046f31ce // orr z14.d, z14.d, z15.d
	WORD $0x042e955d // lsr z29.b, z10.b, #2
	WORD $0x0580263d // and z29.b, z29.b, #0x30
	WORD $0x047d31ce // orr z14.d, z14.d, z29.d
	WORD $0x042a957e // lsr z30.b, z11.b, #6
	WORD $0x042c959f // lsr z31.b, z12.b, #4
	WORD $0x0580363f // and z31.b, z31.b, #0xc
	WORD $0x047f33de // orr z30.d, z30.d, z31.d
	WORD $0x042e95af // lsr z15.b, z13.b, #2
	WORD $0x0580262f // and z15.b, z15.b, #0x30
	WORD $0x046f33de // orr z30.d, z30.d, z15.d
	WORD $0x448601d9 // sdot z25.s, z14.b, z6.b
	WORD $0x448703d5 // sdot z21.s, z30.b, z7.b
	// k = 0..23: L & 63
	WORD $0x058006a8 // and z8.b, z8.b, #0x3f
	WORD $0x058006a9 // and z9.b, z9.b, #0x3f
	WORD $0x058006aa // and z10.b, z10.b, #0x3f
	WORD $0x058006ab // and z11.b, z11.b, #0x3f
	WORD $0x058006ac // and z12.b, z12.b, #0x3f
	WORD $0x058006ad // and z13.b, z13.b, #0x3f
	WORD $0x44800115 // sdot z21.s, z8.b, z0.b
	WORD $0x44810139 // sdot z25.s, z9.b, z1.b
	WORD $0x44820155 // sdot z21.s, z10.b, z2.b
	WORD $0x44830179 // sdot z25.s, z11.b, z3.b
	WORD $0x44840195 // sdot z21.s, z12.b, z4.b
	WORD $0x448501b9 // sdot z25.s, z13.b, z5.b
	// chunk 2 (p2): L0..L5 in z8..z13
	WORD $0xa402a808 // ld1b {z8.b}, p2/z, [x0, #2, mul vl]
	WORD $0xa402a909 // ld1b {z9.b}, p2/z, [x8, #2, mul vl]
	WORD $0xa402a96a // ld1b {z10.b}, p2/z, [x11, #2, mul vl]
	WORD $0xa402a9cb // ld1b {z11.b}, p2/z, [x14, #2, mul vl]
	WORD $0xa402a9ec // ld1b {z12.b}, p2/z, [x15, #2, mul vl]
	WORD $0xa402aa6d // ld1b {z13.b}, p2/z, [x19, #2, mul vl]
	// k = 24..27: (L0 >> 6) | ((L1 >> 4) & 12) | ((L2 >> 2) & 48); 28..31 the same of L3, L4, L5
	WORD $0x042a950e // lsr z14.b, z8.b, #6
	WORD $0x042c952f // lsr z15.b, z9.b, #4
	WORD $0x0580362f // and z15.b, z15.b, #0xc
	WORD $0x046f31ce // orr z14.d, z14.d, z15.d
	WORD $0x042e955d // lsr z29.b, z10.b, #2
	WORD $0x0580263d // and z29.b, z29.b, #0x30
	WORD $0x047d31ce // orr z14.d, z14.d, z29.d
	WORD $0x042a957e // lsr z30.b, z11.b, #6
	WORD $0x042c959f // lsr z31.b, z12.b, #4
	WORD $0x0580363f // and z31.b, z31.b, #0xc
	WORD $0x047f33de // orr z30.d, z30.d, z31.d
	WORD $0x042e95af // lsr z15.b, z13.b, #2
	WORD $0x0580262f // and z15.b, z15.b, #0x30
	WORD $0x046f33de // orr z30.d, z30.d, z15.d
	WORD $0x448601da // sdot z26.s, z14.b, z6.b
	WORD $0x448703d6 // sdot z22.s, z30.b, z7.b
	// k = 0..23: L & 63
	WORD $0x058006a8 // and z8.b, z8.b, #0x3f
	WORD $0x058006a9 // and z9.b, z9.b, #0x3f
	WORD $0x058006aa // and z10.b, z10.b, #0x3f
	WORD $0x058006ab // and z11.b, z11.b, #0x3f
	WORD $0x058006ac // and z12.b, z12.b, #0x3f
	WORD $0x058006ad // and z13.b, z13.b, #0x3f
	WORD $0x44800116 // sdot z22.s, z8.b, z0.b
	WORD $0x4481013a // sdot z26.s, z9.b, z1.b
	WORD $0x44820156 // sdot z22.s, z10.b, z2.b
	WORD $0x4483017a // sdot z26.s, z11.b, z3.b
	WORD $0x44840196 // sdot z22.s, z12.b, z4.b
	WORD $0x448501ba // sdot z26.s, z13.b, z5.b
	// chunk 3 (p3): L0..L5 in z8..z13
	WORD $0xa403ac08 // ld1b {z8.b}, p3/z, [x0, #3, mul vl]
	WORD $0xa403ad09 // ld1b {z9.b}, p3/z, [x8, #3, mul vl]
	WORD $0xa403ad6a // ld1b {z10.b}, p3/z, [x11, #3, mul vl]
	WORD $0xa403adcb // ld1b {z11.b}, p3/z, [x14, #3, mul vl]
	WORD $0xa403adec // ld1b {z12.b}, p3/z, [x15, #3, mul vl]
	WORD $0xa403ae6d // ld1b {z13.b}, p3/z, [x19, #3, mul vl]
	// k = 24..27: (L0 >> 6) | ((L1 >> 4) & 12) | ((L2 >> 2) & 48); 28..31 the same of L3, L4, L5
	WORD $0x042a950e // lsr z14.b, z8.b, #6
	WORD $0x042c952f // lsr z15.b, z9.b, #4
	WORD $0x0580362f // and z15.b, z15.b, #0xc
	WORD $0x046f31ce // orr z14.d, z14.d, z15.d
	WORD $0x042e955d // lsr z29.b, z10.b, #2
	WORD $0x0580263d // and z29.b, z29.b, #0x30
	WORD $0x047d31ce // orr z14.d, z14.d, z29.d
	WORD $0x042a957e // lsr z30.b, z11.b, #6
	WORD $0x042c959f // lsr z31.b, z12.b, #4
	WORD $0x0580363f // and z31.b, z31.b, #0xc
	WORD $0x047f33de // orr z30.d, z30.d, z31.d
	WORD $0x042e95af // lsr z15.b, z13.b, #2
	WORD $0x0580262f // and z15.b, z15.b, #0x30
	WORD $0x046f33de // orr z30.d, z30.d, z15.d
	WORD $0x448601db // sdot z27.s, z14.b, z6.b
	WORD $0x448703d7 // sdot z23.s, z30.b, z7.b
	// k = 0..23: L & 63
	WORD $0x058006a8 // and z8.b, z8.b, #0x3f
	WORD $0x058006a9 // and z9.b, z9.b, #0x3f
	WORD $0x058006aa // and z10.b, z10.b, #0x3f
	WORD $0x058006ab // and z11.b, z11.b, #0x3f
	WORD $0x058006ac // and z12.b, z12.b, #0x3f
	WORD $0x058006ad // and z13.b, z13.b, #0x3f
	WORD $0x44800117 // sdot z23.s, z8.b, z0.b
	WORD $0x4481013b // sdot z27.s, z9.b, z1.b
	WORD $0x44820157 // sdot z23.s, z10.b, z2.b
	WORD $0x4483017b // sdot z27.s, z11.b, z3.b
	WORD $0x44840197 // sdot z23.s, z12.b, z4.b
	WORD $0x448501bb // sdot z27.s, z13.b, z5.b
	// dot = Σu·xq = z20..z23 + z24..z27
	WORD $0x04b80294 // add z20.s, z20.s, z24.s
	WORD $0x04b902b5 // add z21.s, z21.s, z25.s
	WORD $0x04ba02d6 // add z22.s, z22.s, z26.s
	WORD $0x04bb02f7 // add z23.s, z23.s, z27.s
	ADD  $384, R0, R0
	// t += s·(xs·float(dot)) − m·(xs·float(Σxq)), s = d·sc, m = dm·mc
	WORD $0x8540d1a2 // ld1rw {z2.s}, p4/z, [x13]  (the group's activation scale)
	ADD  $4, R13, R13
	WORD $0x8540d141 // ld1rw {z1.s}, p4/z, [x10]  (Σxq of the group)
	ADD  $4, R10, R10
	WORD $0x6594b021 // scvtf z1.s, p4/m, z1.s
	WORD $0x65820821 // fmul z1.s, z1.s, z2.s
	// rows of chunk 0
	WORD $0xa440b288 // ld1b {z8.s}, p4/z, [x20]  (sc | low mc bits << 6)
	WORD $0xa440b2a9 // ld1b {z9.s}, p4/z, [x21]  (high mc bits)
	WORD $0xa4c0b30a // ld1h {z10.s}, p4/z, [x24]  (d)
	WORD $0xa4c0b32b // ld1h {z11.s}, p4/z, [x25]  (dm)
	WORD $0x047a950c // lsr z12.s, z8.s, #6
	WORD $0x058000a8 // and z8.s, z8.s, #0x3f
	WORD $0x047e9529 // lsr z9.s, z9.s, #2
	WORD $0x0580f069 // and z9.s, z9.s, #0x3c
	WORD $0x046c3129 // orr z9.d, z9.d, z12.d
	WORD $0x6595b108 // ucvtf z8.s, p4/m, z8.s
	WORD $0x6595b129 // ucvtf z9.s, p4/m, z9.s
	WORD $0x6589b14a // fcvt z10.s, p4/m, z10.h
	WORD $0x6589b16b // fcvt z11.s, p4/m, z11.h
	WORD $0x658a0908 // fmul z8.s, z8.s, z10.s
	WORD $0x658b0929 // fmul z9.s, z9.s, z11.s
	WORD $0x6594b294 // scvtf z20.s, p4/m, z20.s
	WORD $0x65820a94 // fmul z20.s, z20.s, z2.s
	WORD $0x65a81290 // fmla z16.s, p4/m, z20.s, z8.s
	WORD $0x65a13130 // fmls z16.s, p4/m, z9.s, z1.s
	// rows of chunk 1
	WORD $0xa441b688 // ld1b {z8.s}, p5/z, [x20, #1, mul vl]  (sc | low mc bits << 6)
	WORD $0xa441b6a9 // ld1b {z9.s}, p5/z, [x21, #1, mul vl]  (high mc bits)
	WORD $0xa4c1b70a // ld1h {z10.s}, p5/z, [x24, #1, mul vl]  (d)
	WORD $0xa4c1b72b // ld1h {z11.s}, p5/z, [x25, #1, mul vl]  (dm)
	WORD $0x047a950c // lsr z12.s, z8.s, #6
	WORD $0x058000a8 // and z8.s, z8.s, #0x3f
	WORD $0x047e9529 // lsr z9.s, z9.s, #2
	WORD $0x0580f069 // and z9.s, z9.s, #0x3c
	WORD $0x046c3129 // orr z9.d, z9.d, z12.d
	WORD $0x6595b508 // ucvtf z8.s, p5/m, z8.s
	WORD $0x6595b529 // ucvtf z9.s, p5/m, z9.s
	WORD $0x6589b54a // fcvt z10.s, p5/m, z10.h
	WORD $0x6589b56b // fcvt z11.s, p5/m, z11.h
	WORD $0x658a0908 // fmul z8.s, z8.s, z10.s
	WORD $0x658b0929 // fmul z9.s, z9.s, z11.s
	WORD $0x6594b6b5 // scvtf z21.s, p5/m, z21.s
	WORD $0x65820ab5 // fmul z21.s, z21.s, z2.s
	WORD $0x65a816b1 // fmla z17.s, p5/m, z21.s, z8.s
	WORD $0x65a13531 // fmls z17.s, p5/m, z9.s, z1.s
	// rows of chunk 2
	WORD $0xa442ba88 // ld1b {z8.s}, p6/z, [x20, #2, mul vl]  (sc | low mc bits << 6)
	WORD $0xa442baa9 // ld1b {z9.s}, p6/z, [x21, #2, mul vl]  (high mc bits)
	WORD $0xa4c2bb0a // ld1h {z10.s}, p6/z, [x24, #2, mul vl]  (d)
	WORD $0xa4c2bb2b // ld1h {z11.s}, p6/z, [x25, #2, mul vl]  (dm)
	WORD $0x047a950c // lsr z12.s, z8.s, #6
	WORD $0x058000a8 // and z8.s, z8.s, #0x3f
	WORD $0x047e9529 // lsr z9.s, z9.s, #2
	WORD $0x0580f069 // and z9.s, z9.s, #0x3c
	WORD $0x046c3129 // orr z9.d, z9.d, z12.d
	WORD $0x6595b908 // ucvtf z8.s, p6/m, z8.s
	WORD $0x6595b929 // ucvtf z9.s, p6/m, z9.s
	WORD $0x6589b94a // fcvt z10.s, p6/m, z10.h
	WORD $0x6589b96b // fcvt z11.s, p6/m, z11.h
	WORD $0x658a0908 // fmul z8.s, z8.s, z10.s
	WORD $0x658b0929 // fmul z9.s, z9.s, z11.s
	WORD $0x6594bad6 // scvtf z22.s, p6/m, z22.s
	WORD $0x65820ad6 // fmul z22.s, z22.s, z2.s
	WORD $0x65a81ad2 // fmla z18.s, p6/m, z22.s, z8.s
	WORD $0x65a13932 // fmls z18.s, p6/m, z9.s, z1.s
	// rows of chunk 3
	WORD $0xa443be88 // ld1b {z8.s}, p7/z, [x20, #3, mul vl]  (sc | low mc bits << 6)
	WORD $0xa443bea9 // ld1b {z9.s}, p7/z, [x21, #3, mul vl]  (high mc bits)
	WORD $0xa4c3bf0a // ld1h {z10.s}, p7/z, [x24, #3, mul vl]  (d)
	WORD $0xa4c3bf2b // ld1h {z11.s}, p7/z, [x25, #3, mul vl]  (dm)
	WORD $0x047a950c // lsr z12.s, z8.s, #6
	WORD $0x058000a8 // and z8.s, z8.s, #0x3f
	WORD $0x047e9529 // lsr z9.s, z9.s, #2
	WORD $0x0580f069 // and z9.s, z9.s, #0x3c
	WORD $0x046c3129 // orr z9.d, z9.d, z12.d
	WORD $0x6595bd08 // ucvtf z8.s, p7/m, z8.s
	WORD $0x6595bd29 // ucvtf z9.s, p7/m, z9.s
	WORD $0x6589bd4a // fcvt z10.s, p7/m, z10.h
	WORD $0x6589bd6b // fcvt z11.s, p7/m, z11.h
	WORD $0x658a0908 // fmul z8.s, z8.s, z10.s
	WORD $0x658b0929 // fmul z9.s, z9.s, z11.s
	WORD $0x6594bef7 // scvtf z23.s, p7/m, z23.s
	WORD $0x65820af7 // fmul z23.s, z23.s, z2.s
	WORD $0x65a81ef3 // fmla z19.s, p7/m, z23.s, z8.s
	WORD $0x65a13d33 // fmls z19.s, p7/m, z9.s, z1.s
	ADD  $16, R20, R20
	ADD  $16, R21, R21
	SUBS $1, R22, R22
	BNE  k6g
	SUBS $1, R23, R23
	BNE  k6b

	// y (+)= t
	CBZ  R9, k6z
	WORD $0xa540b0d8 // ld1w {z24.s}, p4/z, [x6]
	WORD $0xa541b4d9 // ld1w {z25.s}, p5/z, [x6, #1, mul vl]
	WORD $0xa542b8da // ld1w {z26.s}, p6/z, [x6, #2, mul vl]
	WORD $0xa543bcdb // ld1w {z27.s}, p7/z, [x6, #3, mul vl]
	B    k6s

k6z:
	WORD $0x25b8c018 // dup z24.s, #0
	WORD $0x25b8c019 // dup z25.s, #0
	WORD $0x25b8c01a // dup z26.s, #0
	WORD $0x25b8c01b // dup z27.s, #0

k6s:
	WORD $0x65809218 // fadd z24.s, p4/m, z24.s, z16.s
	WORD $0x65809639 // fadd z25.s, p5/m, z25.s, z17.s
	WORD $0x65809a5a // fadd z26.s, p6/m, z26.s, z18.s
	WORD $0x65809e7b // fadd z27.s, p7/m, z27.s, z19.s
	WORD $0xe540f0d8 // st1w {z24.s}, p4, [x6]
	WORD $0xe541f4d9 // st1w {z25.s}, p5, [x6, #1, mul vl]
	WORD $0xe542f8da // st1w {z26.s}, p6, [x6, #2, mul vl]
	WORD $0xe543fcdb // st1w {z27.s}, p7, [x6, #3, mul vl]
	ADD  $64, R6, R6
	SUBS $1, R1, R1
	BNE  k6p
	RET

// func dotQ2SVE_16(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)
