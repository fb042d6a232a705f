//go:build arm64 && gc && !purego

// Hand-written NEON BF16 (FEAT_BF16) MLA decode kernels of the neon_bf16
// variant at R = 512, DR = 64 (see mla_bf16_arm64.go for their Go
// semantics), the twins of mla_neon_arm64.s over BF16 rows (stride 1152
// bytes): 4×4 score tiles with BFDOT (vector form, 8 BF16 products per
// instruction into 4 f32 lanes), the 4-head × 16-column latent
// accumulation with the BF16 rows widened exactly by SHLL #16, and the
// f32 → BF16 conversion with BFCVTN/BFCVTN2 (FPCR rounding: nearest even
// under Go). BFDOT, BFCVTN, SHLL, FADDP and vector FMUL are WORD-encoded,
// checked against GNU as by _asm/armwords.

#include "textflag.h"

// func mlaScoresNEONBF16_576(q *uint16, k *uint16, s *float32, lds int, nh int, nk int, scale float32)
TEXT ·mlaScoresNEONBF16_576(SB), NOSPLIT, $0-52
	MOVD q+0(FP), R0
	MOVD k+8(FP), R1
	MOVD s+16(FP), R2
	MOVD lds+24(FP), R3
	MOVD nh+32(FP), R4
	MOVD nk+40(FP), R5
	FMOVS scale+48(FP), F10
	VDUP V10.S[0], V10.S4
	LSL  $2, R3, R3
	LSL  $2, R3, R21 // 4 rows of s
	CBZ  R4, sdone
	CBZ  R5, sdone

shloop:
	MOVD R1, R7
	MOVD R5, R8
	MOVD R2, R9

sjloop:
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16
	VEOR V20.B16, V20.B16, V20.B16
	VEOR V21.B16, V21.B16, V21.B16
	VEOR V22.B16, V22.B16, V22.B16
	VEOR V23.B16, V23.B16, V23.B16
	VEOR V24.B16, V24.B16, V24.B16
	VEOR V25.B16, V25.B16, V25.B16
	VEOR V26.B16, V26.B16, V26.B16
	VEOR V27.B16, V27.B16, V27.B16
	VEOR V28.B16, V28.B16, V28.B16
	VEOR V29.B16, V29.B16, V29.B16
	VEOR V30.B16, V30.B16, V30.B16
	VEOR V31.B16, V31.B16, V31.B16
	MOVD R0, R10
	ADD  $1152, R10, R11
	ADD  $1152, R11, R12
	ADD  $1152, R12, R13
	MOVD R7, R14
	ADD  $1152, R14, R15
	ADD  $1152, R15, R16
	ADD  $1152, R16, R17
	MOVD $72, R19 // 576 / 8 BF16 per step

sdloop:
	VLD1.P 16(R10), [V0.H8] // head 0
	VLD1.P 16(R11), [V1.H8] // head 1
	VLD1.P 16(R12), [V2.H8] // head 2
	VLD1.P 16(R13), [V3.H8] // head 3
	VLD1.P 16(R14), [V4.H8] // token 0
	VLD1.P 16(R15), [V5.H8] // token 1
	VLD1.P 16(R16), [V6.H8] // token 2
	VLD1.P 16(R17), [V7.H8] // token 3
	WORD $0x6e44fc10 // bfdot v16.4s, v0.8h, v4.8h
	WORD $0x6e45fc11 // bfdot v17.4s, v0.8h, v5.8h
	WORD $0x6e46fc12 // bfdot v18.4s, v0.8h, v6.8h
	WORD $0x6e47fc13 // bfdot v19.4s, v0.8h, v7.8h
	WORD $0x6e44fc34 // bfdot v20.4s, v1.8h, v4.8h
	WORD $0x6e45fc35 // bfdot v21.4s, v1.8h, v5.8h
	WORD $0x6e46fc36 // bfdot v22.4s, v1.8h, v6.8h
	WORD $0x6e47fc37 // bfdot v23.4s, v1.8h, v7.8h
	WORD $0x6e44fc58 // bfdot v24.4s, v2.8h, v4.8h
	WORD $0x6e45fc59 // bfdot v25.4s, v2.8h, v5.8h
	WORD $0x6e46fc5a // bfdot v26.4s, v2.8h, v6.8h
	WORD $0x6e47fc5b // bfdot v27.4s, v2.8h, v7.8h
	WORD $0x6e44fc7c // bfdot v28.4s, v3.8h, v4.8h
	WORD $0x6e45fc7d // bfdot v29.4s, v3.8h, v5.8h
	WORD $0x6e46fc7e // bfdot v30.4s, v3.8h, v6.8h
	WORD $0x6e47fc7f // bfdot v31.4s, v3.8h, v7.8h
	SUBS $1, R19, R19
	BNE  sdloop

	// reduce each accumulator, scale, store s[h, j..j+3]
	MOVD R9, R20
	WORD $0x6e31d608 // faddp v8.4s, v16.4s, v17.4s
	WORD $0x6e33d649 // faddp v9.4s, v18.4s, v19.4s
	WORD $0x6e29d508 // faddp v8.4s, v8.4s, v9.4s
	WORD $0x6e2add08 // fmul v8.4s, v8.4s, v10.4s
	VST1 [V8.S4], (R20)
	ADD  R3, R20, R20
	WORD $0x6e35d688 // faddp v8.4s, v20.4s, v21.4s
	WORD $0x6e37d6c9 // faddp v9.4s, v22.4s, v23.4s
	WORD $0x6e29d508 // faddp v8.4s, v8.4s, v9.4s
	WORD $0x6e2add08 // fmul v8.4s, v8.4s, v10.4s
	VST1 [V8.S4], (R20)
	ADD  R3, R20, R20
	WORD $0x6e39d708 // faddp v8.4s, v24.4s, v25.4s
	WORD $0x6e3bd749 // faddp v9.4s, v26.4s, v27.4s
	WORD $0x6e29d508 // faddp v8.4s, v8.4s, v9.4s
	WORD $0x6e2add08 // fmul v8.4s, v8.4s, v10.4s
	VST1 [V8.S4], (R20)
	ADD  R3, R20, R20
	WORD $0x6e3dd788 // faddp v8.4s, v28.4s, v29.4s
	WORD $0x6e3fd7c9 // faddp v9.4s, v30.4s, v31.4s
	WORD $0x6e29d508 // faddp v8.4s, v8.4s, v9.4s
	WORD $0x6e2add08 // fmul v8.4s, v8.4s, v10.4s
	VST1 [V8.S4], (R20)
	ADD  R3, R20, R20
	ADD  $16, R9, R9
	ADD  $4608, R7, R7
	SUBS $4, R8, R8
	BNE  sjloop

	ADD  $4608, R0, R0
	ADD  R21, R2, R2
	SUBS $4, R4, R4
	BNE  shloop

sdone:
	RET

// func mlaAccumNEONBF16_576(z *float32, pt *float32, v *uint16, corr *float32, nh int, nk int, ldpt int)
TEXT ·mlaAccumNEONBF16_576(SB), NOSPLIT, $0-56
	MOVD z+0(FP), R0
	MOVD pt+8(FP), R1
	MOVD v+16(FP), R2
	MOVD corr+24(FP), R3
	MOVD nh+32(FP), R4
	MOVD nk+40(FP), R5
	MOVD ldpt+48(FP), R6
	LSL  $2, R6, R6
	CBZ  R4, adone

ahloop:
	MOVD $0, R7 // byte offset into a z row (f32); half of it into a v row (BF16)
	MOVD R3, R8
	VLD1R.P 4(R8), [V12.S4]
	VLD1R.P 4(R8), [V13.S4]
	VLD1R.P 4(R8), [V14.S4]
	VLD1R.P 4(R8), [V15.S4]

adloop:
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16
	VEOR V20.B16, V20.B16, V20.B16
	VEOR V21.B16, V21.B16, V21.B16
	VEOR V22.B16, V22.B16, V22.B16
	VEOR V23.B16, V23.B16, V23.B16
	VEOR V24.B16, V24.B16, V24.B16
	VEOR V25.B16, V25.B16, V25.B16
	VEOR V26.B16, V26.B16, V26.B16
	VEOR V27.B16, V27.B16, V27.B16
	VEOR V28.B16, V28.B16, V28.B16
	VEOR V29.B16, V29.B16, V29.B16
	VEOR V30.B16, V30.B16, V30.B16
	VEOR V31.B16, V31.B16, V31.B16
	ADD  R7, R0, R9
	ADD  $2048, R9, R10
	ADD  $2048, R10, R11
	ADD  $2048, R11, R12
	VLD1 (R9), [V8.S4, V9.S4, V10.S4, V11.S4]
	VFMLA V12.S4, V8.S4, V16.S4
	VFMLA V12.S4, V9.S4, V17.S4
	VFMLA V12.S4, V10.S4, V18.S4
	VFMLA V12.S4, V11.S4, V19.S4
	VLD1 (R10), [V8.S4, V9.S4, V10.S4, V11.S4]
	VFMLA V13.S4, V8.S4, V20.S4
	VFMLA V13.S4, V9.S4, V21.S4
	VFMLA V13.S4, V10.S4, V22.S4
	VFMLA V13.S4, V11.S4, V23.S4
	VLD1 (R11), [V8.S4, V9.S4, V10.S4, V11.S4]
	VFMLA V14.S4, V8.S4, V24.S4
	VFMLA V14.S4, V9.S4, V25.S4
	VFMLA V14.S4, V10.S4, V26.S4
	VFMLA V14.S4, V11.S4, V27.S4
	VLD1 (R12), [V8.S4, V9.S4, V10.S4, V11.S4]
	VFMLA V15.S4, V8.S4, V28.S4
	VFMLA V15.S4, V9.S4, V29.S4
	VFMLA V15.S4, V10.S4, V30.S4
	VFMLA V15.S4, V11.S4, V31.S4
	MOVD R1, R13
	ADD  R7>>1, R2, R14
	MOVD R5, R15
	CBZ  R15, astore

ajloop:
	VLD1 (R14), [V8.H8, V9.H8] // 16 BF16 values of the row
	ADD  $1152, R14, R14
	WORD $0x2e613900 // shll v0.4s, v8.4h, #16
	WORD $0x6e613901 // shll2 v1.4s, v8.8h, #16
	WORD $0x2e613922 // shll v2.4s, v9.4h, #16
	WORD $0x6e613923 // shll2 v3.4s, v9.8h, #16
	MOVD R13, R16
	VLD1R.P 4(R16), [V4.S4]
	VLD1R.P 4(R16), [V5.S4]
	VLD1R.P 4(R16), [V6.S4]
	VLD1R.P 4(R16), [V7.S4]
	ADD  R6, R13, R13
	VFMLA V4.S4, V0.S4, V16.S4
	VFMLA V4.S4, V1.S4, V17.S4
	VFMLA V4.S4, V2.S4, V18.S4
	VFMLA V4.S4, V3.S4, V19.S4
	VFMLA V5.S4, V0.S4, V20.S4
	VFMLA V5.S4, V1.S4, V21.S4
	VFMLA V5.S4, V2.S4, V22.S4
	VFMLA V5.S4, V3.S4, V23.S4
	VFMLA V6.S4, V0.S4, V24.S4
	VFMLA V6.S4, V1.S4, V25.S4
	VFMLA V6.S4, V2.S4, V26.S4
	VFMLA V6.S4, V3.S4, V27.S4
	VFMLA V7.S4, V0.S4, V28.S4
	VFMLA V7.S4, V1.S4, V29.S4
	VFMLA V7.S4, V2.S4, V30.S4
	VFMLA V7.S4, V3.S4, V31.S4
	SUBS $1, R15, R15
	BNE  ajloop

astore:
	VST1 [V16.S4, V17.S4, V18.S4, V19.S4], (R9)
	VST1 [V20.S4, V21.S4, V22.S4, V23.S4], (R10)
	VST1 [V24.S4, V25.S4, V26.S4, V27.S4], (R11)
	VST1 [V28.S4, V29.S4, V30.S4, V31.S4], (R12)
	ADD  $64, R7, R7
	CMP  $2048, R7
	BNE  adloop

	ADD  $8192, R0, R0
	ADD  $16, R1, R1
	ADD  $16, R3, R3
	SUBS $4, R4, R4
	BNE  ahloop

adone:
	RET

// func mlaToBF16NEONBF16(dst *uint16, src *float32, n int)
TEXT ·mlaToBF16NEONBF16(SB), NOSPLIT, $0-24
	MOVD dst+0(FP), R0
	MOVD src+8(FP), R1
	MOVD n+16(FP), R2
	CBZ  R2, cvdone

cvloop:
	VLD1.P 64(R1), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD $0x0ea16804 // bfcvtn v4.4h, v0.4s
	WORD $0x4ea16824 // bfcvtn2 v4.8h, v1.4s
	WORD $0x0ea16845 // bfcvtn v5.4h, v2.4s
	WORD $0x4ea16865 // bfcvtn2 v5.8h, v3.4s
	VST1.P [V4.H8, V5.H8], 32(R0)
	SUBS $16, R2, R2
	BNE  cvloop

cvdone:
	RET
