//go:build arm64 && gc && !purego

// Hand-written NEON f32 register tiles of the neon variant (see
// gemm_arm64.go for their Go semantics). Only native Go mnemonics: the
// activations are broadcast with LD1R and multiplied by a whole 16-wide
// line of the f32 B block with four FMLA per row.

#include "textflag.h"

// ROW: one activation row, one k: va = x[r][k] in every lane (post-
// incremented pointer ap), c0..c3 += va·b[k][0:16] (b in V0..V3).
#define ROW(ap, va, c0, c1, c2, c3) \
	VLD1R.P 4(ap), [va.S4]; \
	VFMLA V0.S4, va.S4, c0.S4; \
	VFMLA V1.S4, va.S4, c1.S4; \
	VFMLA V2.S4, va.S4, c2.S4; \
	VFMLA V3.S4, va.S4, c3.S4

#define ZERO4(c0, c1, c2, c3) \
	VEOR c0.B16, c0.B16, c0.B16; \
	VEOR c1.B16, c1.B16, c1.B16; \
	VEOR c2.B16, c2.B16, c2.B16; \
	VEOR c3.B16, c3.B16, c3.B16

// ARGS loads the arguments and turns the strides into bytes.
#define ARGS \
	MOVD k+0(FP), R0; \
	MOVD a+8(FP), R1; \
	MOVD lda+16(FP), R2; \
	MOVD b+24(FP), R3; \
	MOVD c+32(FP), R4; \
	MOVD ldc+40(FP), R5; \
	MOVD acc+48(FP), R6; \
	LSL  $2, R2, R2; \
	LSL  $2, R5, R5; \
	ADD  R2, R1, R7; \
	ADD  R2, R7, R8; \
	ADD  R2, R8, R9; \
	ADD  R5, R4, R10; \
	ADD  R5, R10, R11; \
	ADD  R5, R11, R12

// func gemmNEON_1x16(k int, a *float32, lda int, b *byte, c *float32, ldc int, acc int)
TEXT ·gemmNEON_1x16(SB), NOSPLIT, $0-56
	ARGS
	CBZ  R6, z1
	VLD1 (R4), [V16.S4, V17.S4, V18.S4, V19.S4]
	B    c1

z1:
	ZERO4(V16, V17, V18, V19)

c1:
	CBZ R0, d1

l1:
	VLD1.P 64(R3), [V0.S4, V1.S4, V2.S4, V3.S4]
	ROW(R1, V4, V16, V17, V18, V19)
	SUBS   $1, R0, R0
	BNE    l1

d1:
	VST1 [V16.S4, V17.S4, V18.S4, V19.S4], (R4)
	RET

// func gemmNEON_2x16(k int, a *float32, lda int, b *byte, c *float32, ldc int, acc int)
TEXT ·gemmNEON_2x16(SB), NOSPLIT, $0-56
	ARGS
	CBZ  R6, z2
	VLD1 (R4), [V16.S4, V17.S4, V18.S4, V19.S4]
	VLD1 (R10), [V20.S4, V21.S4, V22.S4, V23.S4]
	B    c2

z2:
	ZERO4(V16, V17, V18, V19)
	ZERO4(V20, V21, V22, V23)

c2:
	CBZ R0, d2

l2:
	VLD1.P 64(R3), [V0.S4, V1.S4, V2.S4, V3.S4]
	ROW(R1, V4, V16, V17, V18, V19)
	ROW(R7, V5, V20, V21, V22, V23)
	SUBS   $1, R0, R0
	BNE    l2

d2:
	VST1 [V16.S4, V17.S4, V18.S4, V19.S4], (R4)
	VST1 [V20.S4, V21.S4, V22.S4, V23.S4], (R10)
	RET

// func gemmNEON_3x16(k int, a *float32, lda int, b *byte, c *float32, ldc int, acc int)
TEXT ·gemmNEON_3x16(SB), NOSPLIT, $0-56
	ARGS
	CBZ  R6, z3
	VLD1 (R4), [V16.S4, V17.S4, V18.S4, V19.S4]
	VLD1 (R10), [V20.S4, V21.S4, V22.S4, V23.S4]
	VLD1 (R11), [V24.S4, V25.S4, V26.S4, V27.S4]
	B    c3

z3:
	ZERO4(V16, V17, V18, V19)
	ZERO4(V20, V21, V22, V23)
	ZERO4(V24, V25, V26, V27)

c3:
	CBZ R0, d3

l3:
	VLD1.P 64(R3), [V0.S4, V1.S4, V2.S4, V3.S4]
	ROW(R1, V4, V16, V17, V18, V19)
	ROW(R7, V5, V20, V21, V22, V23)
	ROW(R8, V6, V24, V25, V26, V27)
	SUBS   $1, R0, R0
	BNE    l3

d3:
	VST1 [V16.S4, V17.S4, V18.S4, V19.S4], (R4)
	VST1 [V20.S4, V21.S4, V22.S4, V23.S4], (R10)
	VST1 [V24.S4, V25.S4, V26.S4, V27.S4], (R11)
	RET

// func gemmNEON_4x16(k int, a *float32, lda int, b *byte, c *float32, ldc int, acc int)
TEXT ·gemmNEON_4x16(SB), NOSPLIT, $0-56
	ARGS
	CBZ  R6, z4
	VLD1 (R4), [V16.S4, V17.S4, V18.S4, V19.S4]
	VLD1 (R10), [V20.S4, V21.S4, V22.S4, V23.S4]
	VLD1 (R11), [V24.S4, V25.S4, V26.S4, V27.S4]
	VLD1 (R12), [V28.S4, V29.S4, V30.S4, V31.S4]
	B    c4

z4:
	ZERO4(V16, V17, V18, V19)
	ZERO4(V20, V21, V22, V23)
	ZERO4(V24, V25, V26, V27)
	ZERO4(V28, V29, V30, V31)

c4:
	CBZ R0, d4

l4:
	VLD1.P 64(R3), [V0.S4, V1.S4, V2.S4, V3.S4]
	ROW(R1, V4, V16, V17, V18, V19)
	ROW(R7, V5, V20, V21, V22, V23)
	ROW(R8, V6, V24, V25, V26, V27)
	ROW(R9, V7, V28, V29, V30, V31)
	SUBS   $1, R0, R0
	BNE    l4

d4:
	VST1 [V16.S4, V17.S4, V18.S4, V19.S4], (R4)
	VST1 [V20.S4, V21.S4, V22.S4, V23.S4], (R10)
	VST1 [V24.S4, V25.S4, V26.S4, V27.S4], (R11)
	VST1 [V28.S4, V29.S4, V30.S4, V31.S4], (R12)
	RET
