//go:build arm64 && gc && !purego

// Hand-written NEON KDA recurrence over strips of 16 value columns (see
// kda_arm64.go for the Go semantics). Vector FMUL/FSUB are WORD-encoded,
// checked against GNU as by _asm/armwords.

#include "textflag.h"

// func kdaStripsNEON_16(s *float32, lds int, k int, alpha *float32, kk *float32, qs *float32, v *float32, beta float32, o *float32, nstrips int)
TEXT ·kdaStripsNEON_16(SB), NOSPLIT, $0-80
	MOVD s+0(FP), R0
	MOVD lds+8(FP), R1
	MOVD k+16(FP), R2
	MOVD alpha+24(FP), R3
	MOVD kk+32(FP), R4
	MOVD qs+40(FP), R5
	MOVD v+48(FP), R6
	FMOVS beta+56(FP), F10
	MOVD o+64(FP), R7
	MOVD nstrips+72(FP), R8
	LSL  $2, R1, R1
	VDUP V10.S[0], V10.S4

strip:
	// phase 1: p = Σ_i kk[i]·(alpha[i]·S[i, strip])
	VEOR V0.B16, V0.B16, V0.B16
	VEOR V1.B16, V1.B16, V1.B16
	VEOR V2.B16, V2.B16, V2.B16
	VEOR V3.B16, V3.B16, V3.B16
	MOVD R0, R9
	MOVD R3, R10
	MOVD R4, R11
	MOVD R2, R12

p1:
	VLD1 (R9), [V4.S4, V5.S4, V6.S4, V7.S4]
	VLD1R.P 4(R10), [V8.S4]
	VLD1R.P 4(R11), [V9.S4]
	WORD $0x6e28dc84 // fmul v4.4s, v4.4s, v8.4s
	WORD $0x6e28dca5 // fmul v5.4s, v5.4s, v8.4s
	WORD $0x6e28dcc6 // fmul v6.4s, v6.4s, v8.4s
	WORD $0x6e28dce7 // fmul v7.4s, v7.4s, v8.4s
	VFMLA V9.S4, V4.S4, V0.S4
	VFMLA V9.S4, V5.S4, V1.S4
	VFMLA V9.S4, V6.S4, V2.S4
	VFMLA V9.S4, V7.S4, V3.S4
	ADD  R1, R9, R9
	SUBS $1, R12, R12
	BNE  p1

	// u = beta·(v − p)
	VLD1.P 64(R6), [V12.S4, V13.S4, V14.S4, V15.S4]
	WORD $0x4ea0d58c // fsub v12.4s, v12.4s, v0.4s
	WORD $0x4ea1d5ad // fsub v13.4s, v13.4s, v1.4s
	WORD $0x4ea2d5ce // fsub v14.4s, v14.4s, v2.4s
	WORD $0x4ea3d5ef // fsub v15.4s, v15.4s, v3.4s
	WORD $0x6e2add80 // fmul v0.4s, v12.4s, v10.4s
	WORD $0x6e2adda1 // fmul v1.4s, v13.4s, v10.4s
	WORD $0x6e2addc2 // fmul v2.4s, v14.4s, v10.4s
	WORD $0x6e2adde3 // fmul v3.4s, v15.4s, v10.4s

	// phase 2: S = alpha·S + kk·u; o = Σ_i qs[i]·S[i, strip]
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16
	MOVD R0, R9
	MOVD R3, R10
	MOVD R4, R11
	MOVD R5, R13
	MOVD R2, R12

p2:
	VLD1 (R9), [V4.S4, V5.S4, V6.S4, V7.S4]
	VLD1R.P 4(R10), [V8.S4]
	VLD1R.P 4(R11), [V9.S4]
	VLD1R.P 4(R13), [V11.S4]
	WORD $0x6e28dc84 // fmul v4.4s, v4.4s, v8.4s
	WORD $0x6e28dca5 // fmul v5.4s, v5.4s, v8.4s
	WORD $0x6e28dcc6 // fmul v6.4s, v6.4s, v8.4s
	WORD $0x6e28dce7 // fmul v7.4s, v7.4s, v8.4s
	VFMLA V9.S4, V0.S4, V4.S4
	VFMLA V9.S4, V1.S4, V5.S4
	VFMLA V9.S4, V2.S4, V6.S4
	VFMLA V9.S4, V3.S4, V7.S4
	VST1 [V4.S4, V5.S4, V6.S4, V7.S4], (R9)
	VFMLA V11.S4, V4.S4, V16.S4
	VFMLA V11.S4, V5.S4, V17.S4
	VFMLA V11.S4, V6.S4, V18.S4
	VFMLA V11.S4, V7.S4, V19.S4
	ADD  R1, R9, R9
	SUBS $1, R12, R12
	BNE  p2

	VST1.P [V16.S4, V17.S4, V18.S4, V19.S4], 64(R7)
	ADD  $64, R0, R0
	SUBS $1, R8, R8
	BNE  strip
	RET
