//go:build arm64 && gc && !purego

// Hand-written NEON dot-product kernels of the neon_dotprod variant for
// the K formats Q3K…Q6K (see gemm_arm64.go for their Go semantics): a K
// kernel runs the value decode of its base format's kernel
// (gemm_dotprod_arm64.s, generated) per group and folds the group in with
// the scale and min of its super-block header. SDOT (by element), SSRA,
// SMLSL, SCVTF, UCVTF, FCVTL, UXTL, FMLS, MOVI and BIC (16-bit lanes) are
// WORD-encoded; the mnemonic comments are checked against GNU as by
// _asm/armwords.

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

// func dotQ3KNEON_1x16(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)
TEXT ·dotQ3KNEON_1x16(SB), NOSPLIT, $0-64
	ARGS
	VMOVI $7, V31.B16
	VMOVI $56, V30.B16

	LSR  $3, R2, R2 // super-blocks of 8 groups

k3p:
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16
	MOVD R3, R7
	MOVD R4, R10
	MOVD R5, R11
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
	VLD1.P 32(R7), [V0.B16, V1.B16] // the group's 32 activations
	VEOR V20.B16, V20.B16, V20.B16
	VEOR V21.B16, V21.B16, V21.B16
	VEOR V22.B16, V22.B16, V22.B16
	VEOR V23.B16, V23.B16, V23.B16
	VEOR V24.B16, V24.B16, V24.B16
	VEOR V25.B16, V25.B16, V25.B16
	VEOR V26.B16, V26.B16, V26.B16
	VEOR V27.B16, V27.B16, V27.B16
	VLD1.P 64(R0), [V4.B16, V5.B16, V6.B16, V7.B16] // line 0: k = 0..3 bits 0–2, 4..7 bits 3–5, low bits of 24..27
	VLD1.P 64(R0), [V8.B16, V9.B16, V10.B16, V11.B16] // line 1: k = 8..11, 12..15, low bits of 28..31
	VLD1.P 64(R0), [V12.B16, V13.B16, V14.B16, V15.B16] // line 2: k = 16..19, 20..23, high bits of 24..31
	// k = 24..27: ((L2 << 1) with L0 >> 1 inserted) >> 5 = L0 bits 6–7 | L2 bit 6 << 2
	VSHL $1, V12.B16, V2.B16
	VSHL $1, V13.B16, V3.B16
	VSHL $1, V14.B16, V28.B16
	VSHL $1, V15.B16, V29.B16
	VSRI $1, V4.B16, V2.B16
	VSRI $1, V5.B16, V3.B16
	VSRI $1, V6.B16, V28.B16
	VSRI $1, V7.B16, V29.B16
	VUSHR $5, V2.B16, V2.B16
	VUSHR $5, V3.B16, V3.B16
	VUSHR $5, V28.B16, V28.B16
	VUSHR $5, V29.B16, V29.B16
	WORD $0x4f81e854 // sdot v20.4s, v2.16b, v1.4b[2]
	WORD $0x4f81e875 // sdot v21.4s, v3.16b, v1.4b[2]
	WORD $0x4f81eb96 // sdot v22.4s, v28.16b, v1.4b[2]
	WORD $0x4f81ebb7 // sdot v23.4s, v29.16b, v1.4b[2]
	// k = 28..31: (L2 >> 5) with L1 >> 6 inserted = L1 bits 6–7 | L2 bit 7 << 2
	VUSHR $5, V12.B16, V2.B16
	VUSHR $5, V13.B16, V3.B16
	VUSHR $5, V14.B16, V28.B16
	VUSHR $5, V15.B16, V29.B16
	VSRI $6, V8.B16, V2.B16
	VSRI $6, V9.B16, V3.B16
	VSRI $6, V10.B16, V28.B16
	VSRI $6, V11.B16, V29.B16
	WORD $0x4fa1e854 // sdot v20.4s, v2.16b, v1.4b[3]
	WORD $0x4fa1e875 // sdot v21.4s, v3.16b, v1.4b[3]
	WORD $0x4fa1eb96 // sdot v22.4s, v28.16b, v1.4b[3]
	WORD $0x4fa1ebb7 // sdot v23.4s, v29.16b, v1.4b[3]
	// k = 4..7, 12..15, 20..23: L & 0x38 = 8·u, summed ×8 in v24..v27
	VAND V30.B16, V4.B16, V2.B16
	VAND V30.B16, V5.B16, V3.B16
	VAND V30.B16, V6.B16, V28.B16
	VAND V30.B16, V7.B16, V29.B16
	WORD $0x4fa0e058 // sdot v24.4s, v2.16b, v0.4b[1]
	WORD $0x4fa0e079 // sdot v25.4s, v3.16b, v0.4b[1]
	WORD $0x4fa0e39a // sdot v26.4s, v28.16b, v0.4b[1]
	WORD $0x4fa0e3bb // sdot v27.4s, v29.16b, v0.4b[1]
	VAND V30.B16, V8.B16, V2.B16
	VAND V30.B16, V9.B16, V3.B16
	VAND V30.B16, V10.B16, V28.B16
	VAND V30.B16, V11.B16, V29.B16
	WORD $0x4fa0e858 // sdot v24.4s, v2.16b, v0.4b[3]
	WORD $0x4fa0e879 // sdot v25.4s, v3.16b, v0.4b[3]
	WORD $0x4fa0eb9a // sdot v26.4s, v28.16b, v0.4b[3]
	WORD $0x4fa0ebbb // sdot v27.4s, v29.16b, v0.4b[3]
	VAND V30.B16, V12.B16, V2.B16
	VAND V30.B16, V13.B16, V3.B16
	VAND V30.B16, V14.B16, V28.B16
	VAND V30.B16, V15.B16, V29.B16
	WORD $0x4fa1e058 // sdot v24.4s, v2.16b, v1.4b[1]
	WORD $0x4fa1e079 // sdot v25.4s, v3.16b, v1.4b[1]
	WORD $0x4fa1e39a // sdot v26.4s, v28.16b, v1.4b[1]
	WORD $0x4fa1e3bb // sdot v27.4s, v29.16b, v1.4b[1]
	// k = 0..3, 8..11, 16..19: L & 7
	VAND V31.B16, V4.B16, V4.B16
	VAND V31.B16, V5.B16, V5.B16
	VAND V31.B16, V6.B16, V6.B16
	VAND V31.B16, V7.B16, V7.B16
	WORD $0x4f80e094 // sdot v20.4s, v4.16b, v0.4b[0]
	WORD $0x4f80e0b5 // sdot v21.4s, v5.16b, v0.4b[0]
	WORD $0x4f80e0d6 // sdot v22.4s, v6.16b, v0.4b[0]
	WORD $0x4f80e0f7 // sdot v23.4s, v7.16b, v0.4b[0]
	VAND V31.B16, V8.B16, V8.B16
	VAND V31.B16, V9.B16, V9.B16
	VAND V31.B16, V10.B16, V10.B16
	VAND V31.B16, V11.B16, V11.B16
	WORD $0x4f80e914 // sdot v20.4s, v8.16b, v0.4b[2]
	WORD $0x4f80e935 // sdot v21.4s, v9.16b, v0.4b[2]
	WORD $0x4f80e956 // sdot v22.4s, v10.16b, v0.4b[2]
	WORD $0x4f80e977 // sdot v23.4s, v11.16b, v0.4b[2]
	VAND V31.B16, V12.B16, V12.B16
	VAND V31.B16, V13.B16, V13.B16
	VAND V31.B16, V14.B16, V14.B16
	VAND V31.B16, V15.B16, V15.B16
	WORD $0x4f81e194 // sdot v20.4s, v12.16b, v1.4b[0]
	WORD $0x4f81e1b5 // sdot v21.4s, v13.16b, v1.4b[0]
	WORD $0x4f81e1d6 // sdot v22.4s, v14.16b, v1.4b[0]
	WORD $0x4f81e1f7 // sdot v23.4s, v15.16b, v1.4b[0]
	// dot = Σu·xq = v20..v23 + (v24..v27 >> 3)
	WORD $0x4f3d1714 // ssra v20.4s, v24.4s, #3
	WORD $0x4f3d1735 // ssra v21.4s, v25.4s, #3
	WORD $0x4f3d1756 // ssra v22.4s, v26.4s, #3
	WORD $0x4f3d1777 // ssra v23.4s, v27.4s, #3
	// the group's scale codes sc and min codes mc (16 rows)
	VLD1.P 16(R20), [V4.B16] // sc | low mc bits << 6
	VLD1 (R21), [V5.B16] // high mc bits (even group: low nibbles)
	VSHL $4, V5.B16, V7.B16
	VUSHR $2, V7.B16, V7.B16
	VSRI $6, V4.B16, V7.B16 // mc = hi << 2 | sc byte >> 6
	VMOVI $63, V6.B16
	VAND V6.B16, V4.B16, V6.B16 // sc
	WORD $0x2f08a4c8 // uxtl v8.8h, v6.8b
	WORD $0x6f08a4c9 // uxtl2 v9.8h, v6.16b
	WORD $0x2f10a50a // uxtl v10.4s, v8.4h
	WORD $0x6f10a50b // uxtl2 v11.4s, v8.8h
	WORD $0x2f10a52c // uxtl v12.4s, v9.4h
	WORD $0x6f10a52d // uxtl2 v13.4s, v9.8h
	WORD $0x6e21d94a // ucvtf v10.4s, v10.4s
	WORD $0x6e21d96b // ucvtf v11.4s, v11.4s
	WORD $0x6e21d98c // ucvtf v12.4s, v12.4s
	WORD $0x6e21d9ad // ucvtf v13.4s, v13.4s
	WORD $0x2f08a4e8 // uxtl v8.8h, v7.8b
	WORD $0x6f08a4e9 // uxtl2 v9.8h, v7.16b
	WORD $0x2f10a518 // uxtl v24.4s, v8.4h
	WORD $0x6f10a519 // uxtl2 v25.4s, v8.8h
	WORD $0x2f10a53a // uxtl v26.4s, v9.4h
	WORD $0x6f10a53b // uxtl2 v27.4s, v9.8h
	WORD $0x6e21db18 // ucvtf v24.4s, v24.4s
	WORD $0x6e21db39 // ucvtf v25.4s, v25.4s
	WORD $0x6e21db5a // ucvtf v26.4s, v26.4s
	WORD $0x6e21db7b // ucvtf v27.4s, v27.4s
	VLD1 (R24), [V0.H8, V1.H8, V2.H8, V3.H8] // the super-block's d and dm
	WORD $0x0e217804 // fcvtl v4.4s, v0.4h
	WORD $0x4e217805 // fcvtl2 v5.4s, v0.8h
	WORD $0x0e217826 // fcvtl v6.4s, v1.4h
	WORD $0x4e217827 // fcvtl2 v7.4s, v1.8h
	// s = d·sc, m = dm·mc
	WORD $0x6e2adc8a // fmul v10.4s, v4.4s, v10.4s
	WORD $0x6e2bdcab // fmul v11.4s, v5.4s, v11.4s
	WORD $0x6e2cdccc // fmul v12.4s, v6.4s, v12.4s
	WORD $0x6e2ddced // fmul v13.4s, v7.4s, v13.4s
	WORD $0x0e217848 // fcvtl v8.4s, v2.4h
	WORD $0x4e217849 // fcvtl2 v9.4s, v2.8h
	WORD $0x0e21786e // fcvtl v14.4s, v3.4h
	WORD $0x4e21786f // fcvtl2 v15.4s, v3.8h
	WORD $0x6e38dd18 // fmul v24.4s, v8.4s, v24.4s
	WORD $0x6e39dd39 // fmul v25.4s, v9.4s, v25.4s
	WORD $0x6e3addda // fmul v26.4s, v14.4s, v26.4s
	WORD $0x6e3bddfb // fmul v27.4s, v15.4s, v27.4s
	// t += s·(xs·float(dot)) − m·(xs·float(Σxq))
	VLD1R.P 4(R11), [V28.S4] // the group's activation scale
	WORD $0x4e21da94 // scvtf v20.4s, v20.4s
	WORD $0x4e21dab5 // scvtf v21.4s, v21.4s
	WORD $0x4e21dad6 // scvtf v22.4s, v22.4s
	WORD $0x4e21daf7 // scvtf v23.4s, v23.4s
	WORD $0x6e3cde94 // fmul v20.4s, v20.4s, v28.4s
	WORD $0x6e3cdeb5 // fmul v21.4s, v21.4s, v28.4s
	WORD $0x6e3cded6 // fmul v22.4s, v22.4s, v28.4s
	WORD $0x6e3cdef7 // fmul v23.4s, v23.4s, v28.4s
	VFMLA V10.S4, V20.S4, V16.S4
	VFMLA V11.S4, V21.S4, V17.S4
	VFMLA V12.S4, V22.S4, V18.S4
	VFMLA V13.S4, V23.S4, V19.S4
	VLD1R.P 4(R10), [V0.S4] // Σxq of the group
	WORD $0x4e21d800 // scvtf v0.4s, v0.4s
	WORD $0x6e3cdc00 // fmul v0.4s, v0.4s, v28.4s
	WORD $0x4ea0cf10 // fmls v16.4s, v24.4s, v0.4s
	WORD $0x4ea0cf31 // fmls v17.4s, v25.4s, v0.4s
	WORD $0x4ea0cf52 // fmls v18.4s, v26.4s, v0.4s
	WORD $0x4ea0cf73 // fmls v19.4s, v27.4s, v0.4s
	// odd group
	VLD1.P 32(R7), [V0.B16, V1.B16] // the group's 32 activations
	VEOR V20.B16, V20.B16, V20.B16
	VEOR V21.B16, V21.B16, V21.B16
	VEOR V22.B16, V22.B16, V22.B16
	VEOR V23.B16, V23.B16, V23.B16
	VEOR V24.B16, V24.B16, V24.B16
	VEOR V25.B16, V25.B16, V25.B16
	VEOR V26.B16, V26.B16, V26.B16
	VEOR V27.B16, V27.B16, V27.B16
	VLD1.P 64(R0), [V4.B16, V5.B16, V6.B16, V7.B16] // line 0: k = 0..3 bits 0–2, 4..7 bits 3–5, low bits of 24..27
	VLD1.P 64(R0), [V8.B16, V9.B16, V10.B16, V11.B16] // line 1: k = 8..11, 12..15, low bits of 28..31
	VLD1.P 64(R0), [V12.B16, V13.B16, V14.B16, V15.B16] // line 2: k = 16..19, 20..23, high bits of 24..31
	// k = 24..27: ((L2 << 1) with L0 >> 1 inserted) >> 5 = L0 bits 6–7 | L2 bit 6 << 2
	VSHL $1, V12.B16, V2.B16
	VSHL $1, V13.B16, V3.B16
	VSHL $1, V14.B16, V28.B16
	VSHL $1, V15.B16, V29.B16
	VSRI $1, V4.B16, V2.B16
	VSRI $1, V5.B16, V3.B16
	VSRI $1, V6.B16, V28.B16
	VSRI $1, V7.B16, V29.B16
	VUSHR $5, V2.B16, V2.B16
	VUSHR $5, V3.B16, V3.B16
	VUSHR $5, V28.B16, V28.B16
	VUSHR $5, V29.B16, V29.B16
	WORD $0x4f81e854 // sdot v20.4s, v2.16b, v1.4b[2]
	WORD $0x4f81e875 // sdot v21.4s, v3.16b, v1.4b[2]
	WORD $0x4f81eb96 // sdot v22.4s, v28.16b, v1.4b[2]
	WORD $0x4f81ebb7 // sdot v23.4s, v29.16b, v1.4b[2]
	// k = 28..31: (L2 >> 5) with L1 >> 6 inserted = L1 bits 6–7 | L2 bit 7 << 2
	VUSHR $5, V12.B16, V2.B16
	VUSHR $5, V13.B16, V3.B16
	VUSHR $5, V14.B16, V28.B16
	VUSHR $5, V15.B16, V29.B16
	VSRI $6, V8.B16, V2.B16
	VSRI $6, V9.B16, V3.B16
	VSRI $6, V10.B16, V28.B16
	VSRI $6, V11.B16, V29.B16
	WORD $0x4fa1e854 // sdot v20.4s, v2.16b, v1.4b[3]
	WORD $0x4fa1e875 // sdot v21.4s, v3.16b, v1.4b[3]
	WORD $0x4fa1eb96 // sdot v22.4s, v28.16b, v1.4b[3]
	WORD $0x4fa1ebb7 // sdot v23.4s, v29.16b, v1.4b[3]
	// k = 4..7, 12..15, 20..23: L & 0x38 = 8·u, summed ×8 in v24..v27
	VAND V30.B16, V4.B16, V2.B16
	VAND V30.B16, V5.B16, V3.B16
	VAND V30.B16, V6.B16, V28.B16
	VAND V30.B16, V7.B16, V29.B16
	WORD $0x4fa0e058 // sdot v24.4s, v2.16b, v0.4b[1]
	WORD $0x4fa0e079 // sdot v25.4s, v3.16b, v0.4b[1]
	WORD $0x4fa0e39a // sdot v26.4s, v28.16b, v0.4b[1]
	WORD $0x4fa0e3bb // sdot v27.4s, v29.16b, v0.4b[1]
	VAND V30.B16, V8.B16, V2.B16
	VAND V30.B16, V9.B16, V3.B16
	VAND V30.B16, V10.B16, V28.B16
	VAND V30.B16, V11.B16, V29.B16
	WORD $0x4fa0e858 // sdot v24.4s, v2.16b, v0.4b[3]
	WORD $0x4fa0e879 // sdot v25.4s, v3.16b, v0.4b[3]
	WORD $0x4fa0eb9a // sdot v26.4s, v28.16b, v0.4b[3]
	WORD $0x4fa0ebbb // sdot v27.4s, v29.16b, v0.4b[3]
	VAND V30.B16, V12.B16, V2.B16
	VAND V30.B16, V13.B16, V3.B16
	VAND V30.B16, V14.B16, V28.B16
	VAND V30.B16, V15.B16, V29.B16
	WORD $0x4fa1e058 // sdot v24.4s, v2.16b, v1.4b[1]
	WORD $0x4fa1e079 // sdot v25.4s, v3.16b, v1.4b[1]
	WORD $0x4fa1e39a // sdot v26.4s, v28.16b, v1.4b[1]
	WORD $0x4fa1e3bb // sdot v27.4s, v29.16b, v1.4b[1]
	// k = 0..3, 8..11, 16..19: L & 7
	VAND V31.B16, V4.B16, V4.B16
	VAND V31.B16, V5.B16, V5.B16
	VAND V31.B16, V6.B16, V6.B16
	VAND V31.B16, V7.B16, V7.B16
	WORD $0x4f80e094 // sdot v20.4s, v4.16b, v0.4b[0]
	WORD $0x4f80e0b5 // sdot v21.4s, v5.16b, v0.4b[0]
	WORD $0x4f80e0d6 // sdot v22.4s, v6.16b, v0.4b[0]
	WORD $0x4f80e0f7 // sdot v23.4s, v7.16b, v0.4b[0]
	VAND V31.B16, V8.B16, V8.B16
	VAND V31.B16, V9.B16, V9.B16
	VAND V31.B16, V10.B16, V10.B16
	VAND V31.B16, V11.B16, V11.B16
	WORD $0x4f80e914 // sdot v20.4s, v8.16b, v0.4b[2]
	WORD $0x4f80e935 // sdot v21.4s, v9.16b, v0.4b[2]
	WORD $0x4f80e956 // sdot v22.4s, v10.16b, v0.4b[2]
	WORD $0x4f80e977 // sdot v23.4s, v11.16b, v0.4b[2]
	VAND V31.B16, V12.B16, V12.B16
	VAND V31.B16, V13.B16, V13.B16
	VAND V31.B16, V14.B16, V14.B16
	VAND V31.B16, V15.B16, V15.B16
	WORD $0x4f81e194 // sdot v20.4s, v12.16b, v1.4b[0]
	WORD $0x4f81e1b5 // sdot v21.4s, v13.16b, v1.4b[0]
	WORD $0x4f81e1d6 // sdot v22.4s, v14.16b, v1.4b[0]
	WORD $0x4f81e1f7 // sdot v23.4s, v15.16b, v1.4b[0]
	// dot = Σu·xq = v20..v23 + (v24..v27 >> 3)
	WORD $0x4f3d1714 // ssra v20.4s, v24.4s, #3
	WORD $0x4f3d1735 // ssra v21.4s, v25.4s, #3
	WORD $0x4f3d1756 // ssra v22.4s, v26.4s, #3
	WORD $0x4f3d1777 // ssra v23.4s, v27.4s, #3
	// the group's scale codes sc and min codes mc (16 rows)
	VLD1.P 16(R20), [V4.B16] // sc | low mc bits << 6
	VLD1.P 16(R21), [V5.B16] // high mc bits (odd group: high nibbles)
	VUSHR $2, V5.B16, V7.B16
	VSRI $6, V4.B16, V7.B16 // mc = hi << 2 | sc byte >> 6
	VMOVI $63, V6.B16
	VAND V6.B16, V4.B16, V6.B16 // sc
	WORD $0x2f08a4c8 // uxtl v8.8h, v6.8b
	WORD $0x6f08a4c9 // uxtl2 v9.8h, v6.16b
	WORD $0x2f10a50a // uxtl v10.4s, v8.4h
	WORD $0x6f10a50b // uxtl2 v11.4s, v8.8h
	WORD $0x2f10a52c // uxtl v12.4s, v9.4h
	WORD $0x6f10a52d // uxtl2 v13.4s, v9.8h
	WORD $0x6e21d94a // ucvtf v10.4s, v10.4s
	WORD $0x6e21d96b // ucvtf v11.4s, v11.4s
	WORD $0x6e21d98c // ucvtf v12.4s, v12.4s
	WORD $0x6e21d9ad // ucvtf v13.4s, v13.4s
	WORD $0x2f08a4e8 // uxtl v8.8h, v7.8b
	WORD $0x6f08a4e9 // uxtl2 v9.8h, v7.16b
	WORD $0x2f10a518 // uxtl v24.4s, v8.4h
	WORD $0x6f10a519 // uxtl2 v25.4s, v8.8h
	WORD $0x2f10a53a // uxtl v26.4s, v9.4h
	WORD $0x6f10a53b // uxtl2 v27.4s, v9.8h
	WORD $0x6e21db18 // ucvtf v24.4s, v24.4s
	WORD $0x6e21db39 // ucvtf v25.4s, v25.4s
	WORD $0x6e21db5a // ucvtf v26.4s, v26.4s
	WORD $0x6e21db7b // ucvtf v27.4s, v27.4s
	VLD1 (R24), [V0.H8, V1.H8, V2.H8, V3.H8] // the super-block's d and dm
	WORD $0x0e217804 // fcvtl v4.4s, v0.4h
	WORD $0x4e217805 // fcvtl2 v5.4s, v0.8h
	WORD $0x0e217826 // fcvtl v6.4s, v1.4h
	WORD $0x4e217827 // fcvtl2 v7.4s, v1.8h
	// s = d·sc, m = dm·mc
	WORD $0x6e2adc8a // fmul v10.4s, v4.4s, v10.4s
	WORD $0x6e2bdcab // fmul v11.4s, v5.4s, v11.4s
	WORD $0x6e2cdccc // fmul v12.4s, v6.4s, v12.4s
	WORD $0x6e2ddced // fmul v13.4s, v7.4s, v13.4s
	WORD $0x0e217848 // fcvtl v8.4s, v2.4h
	WORD $0x4e217849 // fcvtl2 v9.4s, v2.8h
	WORD $0x0e21786e // fcvtl v14.4s, v3.4h
	WORD $0x4e21786f // fcvtl2 v15.4s, v3.8h
	WORD $0x6e38dd18 // fmul v24.4s, v8.4s, v24.4s
	WORD $0x6e39dd39 // fmul v25.4s, v9.4s, v25.4s
	WORD $0x6e3addda // fmul v26.4s, v14.4s, v26.4s
	WORD $0x6e3bddfb // fmul v27.4s, v15.4s, v27.4s
	// t += s·(xs·float(dot)) − m·(xs·float(Σxq))
	VLD1R.P 4(R11), [V28.S4] // the group's activation scale
	WORD $0x4e21da94 // scvtf v20.4s, v20.4s
	WORD $0x4e21dab5 // scvtf v21.4s, v21.4s
	WORD $0x4e21dad6 // scvtf v22.4s, v22.4s
	WORD $0x4e21daf7 // scvtf v23.4s, v23.4s
	WORD $0x6e3cde94 // fmul v20.4s, v20.4s, v28.4s
	WORD $0x6e3cdeb5 // fmul v21.4s, v21.4s, v28.4s
	WORD $0x6e3cded6 // fmul v22.4s, v22.4s, v28.4s
	WORD $0x6e3cdef7 // fmul v23.4s, v23.4s, v28.4s
	VFMLA V10.S4, V20.S4, V16.S4
	VFMLA V11.S4, V21.S4, V17.S4
	VFMLA V12.S4, V22.S4, V18.S4
	VFMLA V13.S4, V23.S4, V19.S4
	VLD1R.P 4(R10), [V0.S4] // Σxq of the group
	WORD $0x4e21d800 // scvtf v0.4s, v0.4s
	WORD $0x6e3cdc00 // fmul v0.4s, v0.4s, v28.4s
	WORD $0x4ea0cf10 // fmls v16.4s, v24.4s, v0.4s
	WORD $0x4ea0cf31 // fmls v17.4s, v25.4s, v0.4s
	WORD $0x4ea0cf52 // fmls v18.4s, v26.4s, v0.4s
	WORD $0x4ea0cf73 // fmls v19.4s, v27.4s, v0.4s
	SUBS $1, R22, R22
	BNE  k3g
	SUBS $1, R23, R23
	BNE  k3b

	// y (+)= t
	CBZ  R9, k3z
	VLD1 (R6), [V4.S4, V5.S4, V6.S4, V7.S4]
	B    k3s

k3z:
	VEOR V4.B16, V4.B16, V4.B16
	VEOR V5.B16, V5.B16, V5.B16
	VEOR V6.B16, V6.B16, V6.B16
	VEOR V7.B16, V7.B16, V7.B16

k3s:
	WORD $0x4e30d484 // fadd v4.4s, v4.4s, v16.4s
	WORD $0x4e31d4a5 // fadd v5.4s, v5.4s, v17.4s
	WORD $0x4e32d4c6 // fadd v6.4s, v6.4s, v18.4s
	WORD $0x4e33d4e7 // fadd v7.4s, v7.4s, v19.4s
	VST1.P [V4.S4, V5.S4, V6.S4, V7.S4], 64(R6)
	SUBS $1, R1, R1
	BNE  k3p
	RET

// func dotQ6NEON_1x16(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)

// func dotQ4KNEON_1x16(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)
TEXT ·dotQ4KNEON_1x16(SB), NOSPLIT, $0-64
	ARGS
	VMOVI $128, V31.B16
	VMOVI $15, V30.B16
	VMOVI $8, V29.B16

	LSR  $3, R2, R2 // super-blocks of 8 groups

k4p:
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16
	MOVD R3, R7
	MOVD R4, R10
	MOVD R5, R11
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
	VLD1.P 32(R7), [V0.B16, V1.B16] // the group's 32 activations
	VEOR V20.B16, V20.B16, V20.B16
	VEOR V21.B16, V21.B16, V21.B16
	VEOR V22.B16, V22.B16, V22.B16
	VEOR V23.B16, V23.B16, V23.B16
	VEOR V24.B16, V24.B16, V24.B16
	VEOR V25.B16, V25.B16, V25.B16
	VEOR V26.B16, V26.B16, V26.B16
	VEOR V27.B16, V27.B16, V27.B16
	VLD1.P 64(R0), [V4.B16, V5.B16, V6.B16, V7.B16] // line 0: k = 0..3 low, 4..7 high nibbles
	VAND V30.B16, V4.B16, V8.B16
	VAND V30.B16, V5.B16, V9.B16
	VAND V30.B16, V6.B16, V10.B16
	VAND V30.B16, V7.B16, V11.B16
	VUSHR $4, V4.B16, V12.B16
	VUSHR $4, V5.B16, V13.B16
	VUSHR $4, V6.B16, V14.B16
	VUSHR $4, V7.B16, V15.B16
	WORD $0x4f80e114 // sdot v20.4s, v8.16b, v0.4b[0]
	WORD $0x4f80e135 // sdot v21.4s, v9.16b, v0.4b[0]
	WORD $0x4f80e156 // sdot v22.4s, v10.16b, v0.4b[0]
	WORD $0x4f80e177 // sdot v23.4s, v11.16b, v0.4b[0]
	WORD $0x4fa0e198 // sdot v24.4s, v12.16b, v0.4b[1]
	WORD $0x4fa0e1b9 // sdot v25.4s, v13.16b, v0.4b[1]
	WORD $0x4fa0e1da // sdot v26.4s, v14.16b, v0.4b[1]
	WORD $0x4fa0e1fb // sdot v27.4s, v15.16b, v0.4b[1]
	VLD1.P 64(R0), [V4.B16, V5.B16, V6.B16, V7.B16] // line 1: k = 8..11 low, 12..15 high nibbles
	VAND V30.B16, V4.B16, V8.B16
	VAND V30.B16, V5.B16, V9.B16
	VAND V30.B16, V6.B16, V10.B16
	VAND V30.B16, V7.B16, V11.B16
	VUSHR $4, V4.B16, V12.B16
	VUSHR $4, V5.B16, V13.B16
	VUSHR $4, V6.B16, V14.B16
	VUSHR $4, V7.B16, V15.B16
	WORD $0x4f80e914 // sdot v20.4s, v8.16b, v0.4b[2]
	WORD $0x4f80e935 // sdot v21.4s, v9.16b, v0.4b[2]
	WORD $0x4f80e956 // sdot v22.4s, v10.16b, v0.4b[2]
	WORD $0x4f80e977 // sdot v23.4s, v11.16b, v0.4b[2]
	WORD $0x4fa0e998 // sdot v24.4s, v12.16b, v0.4b[3]
	WORD $0x4fa0e9b9 // sdot v25.4s, v13.16b, v0.4b[3]
	WORD $0x4fa0e9da // sdot v26.4s, v14.16b, v0.4b[3]
	WORD $0x4fa0e9fb // sdot v27.4s, v15.16b, v0.4b[3]
	VLD1.P 64(R0), [V4.B16, V5.B16, V6.B16, V7.B16] // line 2: k = 16..19 low, 20..23 high nibbles
	VAND V30.B16, V4.B16, V8.B16
	VAND V30.B16, V5.B16, V9.B16
	VAND V30.B16, V6.B16, V10.B16
	VAND V30.B16, V7.B16, V11.B16
	VUSHR $4, V4.B16, V12.B16
	VUSHR $4, V5.B16, V13.B16
	VUSHR $4, V6.B16, V14.B16
	VUSHR $4, V7.B16, V15.B16
	WORD $0x4f81e114 // sdot v20.4s, v8.16b, v1.4b[0]
	WORD $0x4f81e135 // sdot v21.4s, v9.16b, v1.4b[0]
	WORD $0x4f81e156 // sdot v22.4s, v10.16b, v1.4b[0]
	WORD $0x4f81e177 // sdot v23.4s, v11.16b, v1.4b[0]
	WORD $0x4fa1e198 // sdot v24.4s, v12.16b, v1.4b[1]
	WORD $0x4fa1e1b9 // sdot v25.4s, v13.16b, v1.4b[1]
	WORD $0x4fa1e1da // sdot v26.4s, v14.16b, v1.4b[1]
	WORD $0x4fa1e1fb // sdot v27.4s, v15.16b, v1.4b[1]
	VLD1.P 64(R0), [V4.B16, V5.B16, V6.B16, V7.B16] // line 3: k = 24..27 low, 28..31 high nibbles
	VAND V30.B16, V4.B16, V8.B16
	VAND V30.B16, V5.B16, V9.B16
	VAND V30.B16, V6.B16, V10.B16
	VAND V30.B16, V7.B16, V11.B16
	VUSHR $4, V4.B16, V12.B16
	VUSHR $4, V5.B16, V13.B16
	VUSHR $4, V6.B16, V14.B16
	VUSHR $4, V7.B16, V15.B16
	WORD $0x4f81e914 // sdot v20.4s, v8.16b, v1.4b[2]
	WORD $0x4f81e935 // sdot v21.4s, v9.16b, v1.4b[2]
	WORD $0x4f81e956 // sdot v22.4s, v10.16b, v1.4b[2]
	WORD $0x4f81e977 // sdot v23.4s, v11.16b, v1.4b[2]
	WORD $0x4fa1e998 // sdot v24.4s, v12.16b, v1.4b[3]
	WORD $0x4fa1e9b9 // sdot v25.4s, v13.16b, v1.4b[3]
	WORD $0x4fa1e9da // sdot v26.4s, v14.16b, v1.4b[3]
	WORD $0x4fa1e9fb // sdot v27.4s, v15.16b, v1.4b[3]
	VADD V24.S4, V20.S4, V20.S4
	VADD V25.S4, V21.S4, V21.S4
	VADD V26.S4, V22.S4, V22.S4
	VADD V27.S4, V23.S4, V23.S4
	// the group's scale codes sc and min codes mc (16 rows)
	VLD1.P 16(R20), [V4.B16] // sc | low mc bits << 6
	VLD1 (R21), [V5.B16] // high mc bits (even group: low nibbles)
	VSHL $4, V5.B16, V7.B16
	VUSHR $2, V7.B16, V7.B16
	VSRI $6, V4.B16, V7.B16 // mc = hi << 2 | sc byte >> 6
	VMOVI $63, V6.B16
	VAND V6.B16, V4.B16, V6.B16 // sc
	WORD $0x2f08a4c8 // uxtl v8.8h, v6.8b
	WORD $0x6f08a4c9 // uxtl2 v9.8h, v6.16b
	WORD $0x2f10a50a // uxtl v10.4s, v8.4h
	WORD $0x6f10a50b // uxtl2 v11.4s, v8.8h
	WORD $0x2f10a52c // uxtl v12.4s, v9.4h
	WORD $0x6f10a52d // uxtl2 v13.4s, v9.8h
	WORD $0x6e21d94a // ucvtf v10.4s, v10.4s
	WORD $0x6e21d96b // ucvtf v11.4s, v11.4s
	WORD $0x6e21d98c // ucvtf v12.4s, v12.4s
	WORD $0x6e21d9ad // ucvtf v13.4s, v13.4s
	WORD $0x2f08a4e8 // uxtl v8.8h, v7.8b
	WORD $0x6f08a4e9 // uxtl2 v9.8h, v7.16b
	WORD $0x2f10a518 // uxtl v24.4s, v8.4h
	WORD $0x6f10a519 // uxtl2 v25.4s, v8.8h
	WORD $0x2f10a53a // uxtl v26.4s, v9.4h
	WORD $0x6f10a53b // uxtl2 v27.4s, v9.8h
	WORD $0x6e21db18 // ucvtf v24.4s, v24.4s
	WORD $0x6e21db39 // ucvtf v25.4s, v25.4s
	WORD $0x6e21db5a // ucvtf v26.4s, v26.4s
	WORD $0x6e21db7b // ucvtf v27.4s, v27.4s
	VLD1 (R24), [V0.H8, V1.H8, V2.H8, V3.H8] // the super-block's d and dm
	WORD $0x0e217804 // fcvtl v4.4s, v0.4h
	WORD $0x4e217805 // fcvtl2 v5.4s, v0.8h
	WORD $0x0e217826 // fcvtl v6.4s, v1.4h
	WORD $0x4e217827 // fcvtl2 v7.4s, v1.8h
	// s = d·sc, m = dm·mc
	WORD $0x6e2adc8a // fmul v10.4s, v4.4s, v10.4s
	WORD $0x6e2bdcab // fmul v11.4s, v5.4s, v11.4s
	WORD $0x6e2cdccc // fmul v12.4s, v6.4s, v12.4s
	WORD $0x6e2ddced // fmul v13.4s, v7.4s, v13.4s
	WORD $0x0e217848 // fcvtl v8.4s, v2.4h
	WORD $0x4e217849 // fcvtl2 v9.4s, v2.8h
	WORD $0x0e21786e // fcvtl v14.4s, v3.4h
	WORD $0x4e21786f // fcvtl2 v15.4s, v3.8h
	WORD $0x6e38dd18 // fmul v24.4s, v8.4s, v24.4s
	WORD $0x6e39dd39 // fmul v25.4s, v9.4s, v25.4s
	WORD $0x6e3addda // fmul v26.4s, v14.4s, v26.4s
	WORD $0x6e3bddfb // fmul v27.4s, v15.4s, v27.4s
	// t += s·(xs·float(dot)) − m·(xs·float(Σxq))
	VLD1R.P 4(R11), [V28.S4] // the group's activation scale
	WORD $0x4e21da94 // scvtf v20.4s, v20.4s
	WORD $0x4e21dab5 // scvtf v21.4s, v21.4s
	WORD $0x4e21dad6 // scvtf v22.4s, v22.4s
	WORD $0x4e21daf7 // scvtf v23.4s, v23.4s
	WORD $0x6e3cde94 // fmul v20.4s, v20.4s, v28.4s
	WORD $0x6e3cdeb5 // fmul v21.4s, v21.4s, v28.4s
	WORD $0x6e3cded6 // fmul v22.4s, v22.4s, v28.4s
	WORD $0x6e3cdef7 // fmul v23.4s, v23.4s, v28.4s
	VFMLA V10.S4, V20.S4, V16.S4
	VFMLA V11.S4, V21.S4, V17.S4
	VFMLA V12.S4, V22.S4, V18.S4
	VFMLA V13.S4, V23.S4, V19.S4
	VLD1R.P 4(R10), [V0.S4] // Σxq of the group
	WORD $0x4e21d800 // scvtf v0.4s, v0.4s
	WORD $0x6e3cdc00 // fmul v0.4s, v0.4s, v28.4s
	WORD $0x4ea0cf10 // fmls v16.4s, v24.4s, v0.4s
	WORD $0x4ea0cf31 // fmls v17.4s, v25.4s, v0.4s
	WORD $0x4ea0cf52 // fmls v18.4s, v26.4s, v0.4s
	WORD $0x4ea0cf73 // fmls v19.4s, v27.4s, v0.4s
	// odd group
	VLD1.P 32(R7), [V0.B16, V1.B16] // the group's 32 activations
	VEOR V20.B16, V20.B16, V20.B16
	VEOR V21.B16, V21.B16, V21.B16
	VEOR V22.B16, V22.B16, V22.B16
	VEOR V23.B16, V23.B16, V23.B16
	VEOR V24.B16, V24.B16, V24.B16
	VEOR V25.B16, V25.B16, V25.B16
	VEOR V26.B16, V26.B16, V26.B16
	VEOR V27.B16, V27.B16, V27.B16
	VLD1.P 64(R0), [V4.B16, V5.B16, V6.B16, V7.B16] // line 0: k = 0..3 low, 4..7 high nibbles
	VAND V30.B16, V4.B16, V8.B16
	VAND V30.B16, V5.B16, V9.B16
	VAND V30.B16, V6.B16, V10.B16
	VAND V30.B16, V7.B16, V11.B16
	VUSHR $4, V4.B16, V12.B16
	VUSHR $4, V5.B16, V13.B16
	VUSHR $4, V6.B16, V14.B16
	VUSHR $4, V7.B16, V15.B16
	WORD $0x4f80e114 // sdot v20.4s, v8.16b, v0.4b[0]
	WORD $0x4f80e135 // sdot v21.4s, v9.16b, v0.4b[0]
	WORD $0x4f80e156 // sdot v22.4s, v10.16b, v0.4b[0]
	WORD $0x4f80e177 // sdot v23.4s, v11.16b, v0.4b[0]
	WORD $0x4fa0e198 // sdot v24.4s, v12.16b, v0.4b[1]
	WORD $0x4fa0e1b9 // sdot v25.4s, v13.16b, v0.4b[1]
	WORD $0x4fa0e1da // sdot v26.4s, v14.16b, v0.4b[1]
	WORD $0x4fa0e1fb // sdot v27.4s, v15.16b, v0.4b[1]
	VLD1.P 64(R0), [V4.B16, V5.B16, V6.B16, V7.B16] // line 1: k = 8..11 low, 12..15 high nibbles
	VAND V30.B16, V4.B16, V8.B16
	VAND V30.B16, V5.B16, V9.B16
	VAND V30.B16, V6.B16, V10.B16
	VAND V30.B16, V7.B16, V11.B16
	VUSHR $4, V4.B16, V12.B16
	VUSHR $4, V5.B16, V13.B16
	VUSHR $4, V6.B16, V14.B16
	VUSHR $4, V7.B16, V15.B16
	WORD $0x4f80e914 // sdot v20.4s, v8.16b, v0.4b[2]
	WORD $0x4f80e935 // sdot v21.4s, v9.16b, v0.4b[2]
	WORD $0x4f80e956 // sdot v22.4s, v10.16b, v0.4b[2]
	WORD $0x4f80e977 // sdot v23.4s, v11.16b, v0.4b[2]
	WORD $0x4fa0e998 // sdot v24.4s, v12.16b, v0.4b[3]
	WORD $0x4fa0e9b9 // sdot v25.4s, v13.16b, v0.4b[3]
	WORD $0x4fa0e9da // sdot v26.4s, v14.16b, v0.4b[3]
	WORD $0x4fa0e9fb // sdot v27.4s, v15.16b, v0.4b[3]
	VLD1.P 64(R0), [V4.B16, V5.B16, V6.B16, V7.B16] // line 2: k = 16..19 low, 20..23 high nibbles
	VAND V30.B16, V4.B16, V8.B16
	VAND V30.B16, V5.B16, V9.B16
	VAND V30.B16, V6.B16, V10.B16
	VAND V30.B16, V7.B16, V11.B16
	VUSHR $4, V4.B16, V12.B16
	VUSHR $4, V5.B16, V13.B16
	VUSHR $4, V6.B16, V14.B16
	VUSHR $4, V7.B16, V15.B16
	WORD $0x4f81e114 // sdot v20.4s, v8.16b, v1.4b[0]
	WORD $0x4f81e135 // sdot v21.4s, v9.16b, v1.4b[0]
	WORD $0x4f81e156 // sdot v22.4s, v10.16b, v1.4b[0]
	WORD $0x4f81e177 // sdot v23.4s, v11.16b, v1.4b[0]
	WORD $0x4fa1e198 // sdot v24.4s, v12.16b, v1.4b[1]
	WORD $0x4fa1e1b9 // sdot v25.4s, v13.16b, v1.4b[1]
	WORD $0x4fa1e1da // sdot v26.4s, v14.16b, v1.4b[1]
	WORD $0x4fa1e1fb // sdot v27.4s, v15.16b, v1.4b[1]
	VLD1.P 64(R0), [V4.B16, V5.B16, V6.B16, V7.B16] // line 3: k = 24..27 low, 28..31 high nibbles
	VAND V30.B16, V4.B16, V8.B16
	VAND V30.B16, V5.B16, V9.B16
	VAND V30.B16, V6.B16, V10.B16
	VAND V30.B16, V7.B16, V11.B16
	VUSHR $4, V4.B16, V12.B16
	VUSHR $4, V5.B16, V13.B16
	VUSHR $4, V6.B16, V14.B16
	VUSHR $4, V7.B16, V15.B16
	WORD $0x4f81e914 // sdot v20.4s, v8.16b, v1.4b[2]
	WORD $0x4f81e935 // sdot v21.4s, v9.16b, v1.4b[2]
	WORD $0x4f81e956 // sdot v22.4s, v10.16b, v1.4b[2]
	WORD $0x4f81e977 // sdot v23.4s, v11.16b, v1.4b[2]
	WORD $0x4fa1e998 // sdot v24.4s, v12.16b, v1.4b[3]
	WORD $0x4fa1e9b9 // sdot v25.4s, v13.16b, v1.4b[3]
	WORD $0x4fa1e9da // sdot v26.4s, v14.16b, v1.4b[3]
	WORD $0x4fa1e9fb // sdot v27.4s, v15.16b, v1.4b[3]
	VADD V24.S4, V20.S4, V20.S4
	VADD V25.S4, V21.S4, V21.S4
	VADD V26.S4, V22.S4, V22.S4
	VADD V27.S4, V23.S4, V23.S4
	// the group's scale codes sc and min codes mc (16 rows)
	VLD1.P 16(R20), [V4.B16] // sc | low mc bits << 6
	VLD1.P 16(R21), [V5.B16] // high mc bits (odd group: high nibbles)
	VUSHR $2, V5.B16, V7.B16
	VSRI $6, V4.B16, V7.B16 // mc = hi << 2 | sc byte >> 6
	VMOVI $63, V6.B16
	VAND V6.B16, V4.B16, V6.B16 // sc
	WORD $0x2f08a4c8 // uxtl v8.8h, v6.8b
	WORD $0x6f08a4c9 // uxtl2 v9.8h, v6.16b
	WORD $0x2f10a50a // uxtl v10.4s, v8.4h
	WORD $0x6f10a50b // uxtl2 v11.4s, v8.8h
	WORD $0x2f10a52c // uxtl v12.4s, v9.4h
	WORD $0x6f10a52d // uxtl2 v13.4s, v9.8h
	WORD $0x6e21d94a // ucvtf v10.4s, v10.4s
	WORD $0x6e21d96b // ucvtf v11.4s, v11.4s
	WORD $0x6e21d98c // ucvtf v12.4s, v12.4s
	WORD $0x6e21d9ad // ucvtf v13.4s, v13.4s
	WORD $0x2f08a4e8 // uxtl v8.8h, v7.8b
	WORD $0x6f08a4e9 // uxtl2 v9.8h, v7.16b
	WORD $0x2f10a518 // uxtl v24.4s, v8.4h
	WORD $0x6f10a519 // uxtl2 v25.4s, v8.8h
	WORD $0x2f10a53a // uxtl v26.4s, v9.4h
	WORD $0x6f10a53b // uxtl2 v27.4s, v9.8h
	WORD $0x6e21db18 // ucvtf v24.4s, v24.4s
	WORD $0x6e21db39 // ucvtf v25.4s, v25.4s
	WORD $0x6e21db5a // ucvtf v26.4s, v26.4s
	WORD $0x6e21db7b // ucvtf v27.4s, v27.4s
	VLD1 (R24), [V0.H8, V1.H8, V2.H8, V3.H8] // the super-block's d and dm
	WORD $0x0e217804 // fcvtl v4.4s, v0.4h
	WORD $0x4e217805 // fcvtl2 v5.4s, v0.8h
	WORD $0x0e217826 // fcvtl v6.4s, v1.4h
	WORD $0x4e217827 // fcvtl2 v7.4s, v1.8h
	// s = d·sc, m = dm·mc
	WORD $0x6e2adc8a // fmul v10.4s, v4.4s, v10.4s
	WORD $0x6e2bdcab // fmul v11.4s, v5.4s, v11.4s
	WORD $0x6e2cdccc // fmul v12.4s, v6.4s, v12.4s
	WORD $0x6e2ddced // fmul v13.4s, v7.4s, v13.4s
	WORD $0x0e217848 // fcvtl v8.4s, v2.4h
	WORD $0x4e217849 // fcvtl2 v9.4s, v2.8h
	WORD $0x0e21786e // fcvtl v14.4s, v3.4h
	WORD $0x4e21786f // fcvtl2 v15.4s, v3.8h
	WORD $0x6e38dd18 // fmul v24.4s, v8.4s, v24.4s
	WORD $0x6e39dd39 // fmul v25.4s, v9.4s, v25.4s
	WORD $0x6e3addda // fmul v26.4s, v14.4s, v26.4s
	WORD $0x6e3bddfb // fmul v27.4s, v15.4s, v27.4s
	// t += s·(xs·float(dot)) − m·(xs·float(Σxq))
	VLD1R.P 4(R11), [V28.S4] // the group's activation scale
	WORD $0x4e21da94 // scvtf v20.4s, v20.4s
	WORD $0x4e21dab5 // scvtf v21.4s, v21.4s
	WORD $0x4e21dad6 // scvtf v22.4s, v22.4s
	WORD $0x4e21daf7 // scvtf v23.4s, v23.4s
	WORD $0x6e3cde94 // fmul v20.4s, v20.4s, v28.4s
	WORD $0x6e3cdeb5 // fmul v21.4s, v21.4s, v28.4s
	WORD $0x6e3cded6 // fmul v22.4s, v22.4s, v28.4s
	WORD $0x6e3cdef7 // fmul v23.4s, v23.4s, v28.4s
	VFMLA V10.S4, V20.S4, V16.S4
	VFMLA V11.S4, V21.S4, V17.S4
	VFMLA V12.S4, V22.S4, V18.S4
	VFMLA V13.S4, V23.S4, V19.S4
	VLD1R.P 4(R10), [V0.S4] // Σxq of the group
	WORD $0x4e21d800 // scvtf v0.4s, v0.4s
	WORD $0x6e3cdc00 // fmul v0.4s, v0.4s, v28.4s
	WORD $0x4ea0cf10 // fmls v16.4s, v24.4s, v0.4s
	WORD $0x4ea0cf31 // fmls v17.4s, v25.4s, v0.4s
	WORD $0x4ea0cf52 // fmls v18.4s, v26.4s, v0.4s
	WORD $0x4ea0cf73 // fmls v19.4s, v27.4s, v0.4s
	SUBS $1, R22, R22
	BNE  k4g
	SUBS $1, R23, R23
	BNE  k4b

	// y (+)= t
	CBZ  R9, k4z
	VLD1 (R6), [V4.S4, V5.S4, V6.S4, V7.S4]
	B    k4s

k4z:
	VEOR V4.B16, V4.B16, V4.B16
	VEOR V5.B16, V5.B16, V5.B16
	VEOR V6.B16, V6.B16, V6.B16
	VEOR V7.B16, V7.B16, V7.B16

k4s:
	WORD $0x4e30d484 // fadd v4.4s, v4.4s, v16.4s
	WORD $0x4e31d4a5 // fadd v5.4s, v5.4s, v17.4s
	WORD $0x4e32d4c6 // fadd v6.4s, v6.4s, v18.4s
	WORD $0x4e33d4e7 // fadd v7.4s, v7.4s, v19.4s
	VST1.P [V4.S4, V5.S4, V6.S4, V7.S4], 64(R6)
	SUBS $1, R1, R1
	BNE  k4p
	RET

// func dotQ3NEON_1x16(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)

// func dotQ5KNEON_1x16(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)
TEXT ·dotQ5KNEON_1x16(SB), NOSPLIT, $0-64
	ARGS
	VMOVI $15, V30.B16
	VMOVI $16, V29.B16

	LSR  $3, R2, R2 // super-blocks of 8 groups

k5p:
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16
	MOVD R3, R7
	MOVD R4, R10
	MOVD R5, R11
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
	VLD1.P 32(R7), [V0.B16, V1.B16] // the group's 32 activations
	VEOR V20.B16, V20.B16, V20.B16
	VEOR V21.B16, V21.B16, V21.B16
	VEOR V22.B16, V22.B16, V22.B16
	VEOR V23.B16, V23.B16, V23.B16
	VEOR V24.B16, V24.B16, V24.B16
	VEOR V25.B16, V25.B16, V25.B16
	VEOR V26.B16, V26.B16, V26.B16
	VEOR V27.B16, V27.B16, V27.B16
	ADD  $256, R0, R12
	VLD1 (R12), [V4.B16, V5.B16, V6.B16, V7.B16] // line 4: bit h = bit 4 of u in k-quad h
	VLD1.P 64(R0), [V8.B16, V9.B16, V10.B16, V11.B16] // line 0: k-quad 0 low, 1 high nibbles
	// k-quad 0: (L0 & 15) | ((L4 << 4) & 16)
	VAND V30.B16, V8.B16, V12.B16
	VAND V30.B16, V9.B16, V13.B16
	VAND V30.B16, V10.B16, V14.B16
	VAND V30.B16, V11.B16, V15.B16
	VSHL $4, V4.B16, V2.B16
	VAND V29.B16, V2.B16, V2.B16
	VORR V2.B16, V12.B16, V12.B16
	VSHL $4, V5.B16, V3.B16
	VAND V29.B16, V3.B16, V3.B16
	VORR V3.B16, V13.B16, V13.B16
	VSHL $4, V6.B16, V2.B16
	VAND V29.B16, V2.B16, V2.B16
	VORR V2.B16, V14.B16, V14.B16
	VSHL $4, V7.B16, V3.B16
	VAND V29.B16, V3.B16, V3.B16
	VORR V3.B16, V15.B16, V15.B16
	WORD $0x4f80e194 // sdot v20.4s, v12.16b, v0.4b[0]
	WORD $0x4f80e1b5 // sdot v21.4s, v13.16b, v0.4b[0]
	WORD $0x4f80e1d6 // sdot v22.4s, v14.16b, v0.4b[0]
	WORD $0x4f80e1f7 // sdot v23.4s, v15.16b, v0.4b[0]
	// k-quad 1: (L0 >> 4) | ((L4 << 3) & 16)
	VUSHR $4, V8.B16, V8.B16
	VUSHR $4, V9.B16, V9.B16
	VUSHR $4, V10.B16, V10.B16
	VUSHR $4, V11.B16, V11.B16
	VSHL $3, V4.B16, V2.B16
	VAND V29.B16, V2.B16, V2.B16
	VORR V2.B16, V8.B16, V8.B16
	VSHL $3, V5.B16, V3.B16
	VAND V29.B16, V3.B16, V3.B16
	VORR V3.B16, V9.B16, V9.B16
	VSHL $3, V6.B16, V2.B16
	VAND V29.B16, V2.B16, V2.B16
	VORR V2.B16, V10.B16, V10.B16
	VSHL $3, V7.B16, V3.B16
	VAND V29.B16, V3.B16, V3.B16
	VORR V3.B16, V11.B16, V11.B16
	WORD $0x4fa0e118 // sdot v24.4s, v8.16b, v0.4b[1]
	WORD $0x4fa0e139 // sdot v25.4s, v9.16b, v0.4b[1]
	WORD $0x4fa0e15a // sdot v26.4s, v10.16b, v0.4b[1]
	WORD $0x4fa0e17b // sdot v27.4s, v11.16b, v0.4b[1]
	VLD1.P 64(R0), [V8.B16, V9.B16, V10.B16, V11.B16] // line 1: k-quad 2 low, 3 high nibbles
	// k-quad 2: (L1 & 15) | ((L4 << 2) & 16)
	VAND V30.B16, V8.B16, V12.B16
	VAND V30.B16, V9.B16, V13.B16
	VAND V30.B16, V10.B16, V14.B16
	VAND V30.B16, V11.B16, V15.B16
	VSHL $2, V4.B16, V2.B16
	VAND V29.B16, V2.B16, V2.B16
	VORR V2.B16, V12.B16, V12.B16
	VSHL $2, V5.B16, V3.B16
	VAND V29.B16, V3.B16, V3.B16
	VORR V3.B16, V13.B16, V13.B16
	VSHL $2, V6.B16, V2.B16
	VAND V29.B16, V2.B16, V2.B16
	VORR V2.B16, V14.B16, V14.B16
	VSHL $2, V7.B16, V3.B16
	VAND V29.B16, V3.B16, V3.B16
	VORR V3.B16, V15.B16, V15.B16
	WORD $0x4f80e994 // sdot v20.4s, v12.16b, v0.4b[2]
	WORD $0x4f80e9b5 // sdot v21.4s, v13.16b, v0.4b[2]
	WORD $0x4f80e9d6 // sdot v22.4s, v14.16b, v0.4b[2]
	WORD $0x4f80e9f7 // sdot v23.4s, v15.16b, v0.4b[2]
	// k-quad 3: (L1 >> 4) | ((L4 << 1) & 16)
	VUSHR $4, V8.B16, V8.B16
	VUSHR $4, V9.B16, V9.B16
	VUSHR $4, V10.B16, V10.B16
	VUSHR $4, V11.B16, V11.B16
	VSHL $1, V4.B16, V2.B16
	VAND V29.B16, V2.B16, V2.B16
	VORR V2.B16, V8.B16, V8.B16
	VSHL $1, V5.B16, V3.B16
	VAND V29.B16, V3.B16, V3.B16
	VORR V3.B16, V9.B16, V9.B16
	VSHL $1, V6.B16, V2.B16
	VAND V29.B16, V2.B16, V2.B16
	VORR V2.B16, V10.B16, V10.B16
	VSHL $1, V7.B16, V3.B16
	VAND V29.B16, V3.B16, V3.B16
	VORR V3.B16, V11.B16, V11.B16
	WORD $0x4fa0e918 // sdot v24.4s, v8.16b, v0.4b[3]
	WORD $0x4fa0e939 // sdot v25.4s, v9.16b, v0.4b[3]
	WORD $0x4fa0e95a // sdot v26.4s, v10.16b, v0.4b[3]
	WORD $0x4fa0e97b // sdot v27.4s, v11.16b, v0.4b[3]
	VLD1.P 64(R0), [V8.B16, V9.B16, V10.B16, V11.B16] // line 2: k-quad 4 low, 5 high nibbles
	// k-quad 4: (L2 & 15) | ((L4 ) & 16)
	VAND V30.B16, V8.B16, V12.B16
	VAND V30.B16, V9.B16, V13.B16
	VAND V30.B16, V10.B16, V14.B16
	VAND V30.B16, V11.B16, V15.B16
	VAND V29.B16, V4.B16, V2.B16
	VORR V2.B16, V12.B16, V12.B16
	VAND V29.B16, V5.B16, V3.B16
	VORR V3.B16, V13.B16, V13.B16
	VAND V29.B16, V6.B16, V2.B16
	VORR V2.B16, V14.B16, V14.B16
	VAND V29.B16, V7.B16, V3.B16
	VORR V3.B16, V15.B16, V15.B16
	WORD $0x4f81e194 // sdot v20.4s, v12.16b, v1.4b[0]
	WORD $0x4f81e1b5 // sdot v21.4s, v13.16b, v1.4b[0]
	WORD $0x4f81e1d6 // sdot v22.4s, v14.16b, v1.4b[0]
	WORD $0x4f81e1f7 // sdot v23.4s, v15.16b, v1.4b[0]
	// k-quad 5: (L2 >> 4) | ((L4 >> 1) & 16)
	VUSHR $4, V8.B16, V8.B16
	VUSHR $4, V9.B16, V9.B16
	VUSHR $4, V10.B16, V10.B16
	VUSHR $4, V11.B16, V11.B16
	VUSHR $1, V4.B16, V2.B16
	VAND V29.B16, V2.B16, V2.B16
	VORR V2.B16, V8.B16, V8.B16
	VUSHR $1, V5.B16, V3.B16
	VAND V29.B16, V3.B16, V3.B16
	VORR V3.B16, V9.B16, V9.B16
	VUSHR $1, V6.B16, V2.B16
	VAND V29.B16, V2.B16, V2.B16
	VORR V2.B16, V10.B16, V10.B16
	VUSHR $1, V7.B16, V3.B16
	VAND V29.B16, V3.B16, V3.B16
	VORR V3.B16, V11.B16, V11.B16
	WORD $0x4fa1e118 // sdot v24.4s, v8.16b, v1.4b[1]
	WORD $0x4fa1e139 // sdot v25.4s, v9.16b, v1.4b[1]
	WORD $0x4fa1e15a // sdot v26.4s, v10.16b, v1.4b[1]
	WORD $0x4fa1e17b // sdot v27.4s, v11.16b, v1.4b[1]
	VLD1.P 64(R0), [V8.B16, V9.B16, V10.B16, V11.B16] // line 3: k-quad 6 low, 7 high nibbles
	// k-quad 6: (L3 & 15) | ((L4 >> 2) & 16)
	VAND V30.B16, V8.B16, V12.B16
	VAND V30.B16, V9.B16, V13.B16
	VAND V30.B16, V10.B16, V14.B16
	VAND V30.B16, V11.B16, V15.B16
	VUSHR $2, V4.B16, V2.B16
	VAND V29.B16, V2.B16, V2.B16
	VORR V2.B16, V12.B16, V12.B16
	VUSHR $2, V5.B16, V3.B16
	VAND V29.B16, V3.B16, V3.B16
	VORR V3.B16, V13.B16, V13.B16
	VUSHR $2, V6.B16, V2.B16
	VAND V29.B16, V2.B16, V2.B16
	VORR V2.B16, V14.B16, V14.B16
	VUSHR $2, V7.B16, V3.B16
	VAND V29.B16, V3.B16, V3.B16
	VORR V3.B16, V15.B16, V15.B16
	WORD $0x4f81e994 // sdot v20.4s, v12.16b, v1.4b[2]
	WORD $0x4f81e9b5 // sdot v21.4s, v13.16b, v1.4b[2]
	WORD $0x4f81e9d6 // sdot v22.4s, v14.16b, v1.4b[2]
	WORD $0x4f81e9f7 // sdot v23.4s, v15.16b, v1.4b[2]
	// k-quad 7: (L3 >> 4) | ((L4 >> 3) & 16)
	VUSHR $4, V8.B16, V8.B16
	VUSHR $4, V9.B16, V9.B16
	VUSHR $4, V10.B16, V10.B16
	VUSHR $4, V11.B16, V11.B16
	VUSHR $3, V4.B16, V2.B16
	VAND V29.B16, V2.B16, V2.B16
	VORR V2.B16, V8.B16, V8.B16
	VUSHR $3, V5.B16, V3.B16
	VAND V29.B16, V3.B16, V3.B16
	VORR V3.B16, V9.B16, V9.B16
	VUSHR $3, V6.B16, V2.B16
	VAND V29.B16, V2.B16, V2.B16
	VORR V2.B16, V10.B16, V10.B16
	VUSHR $3, V7.B16, V3.B16
	VAND V29.B16, V3.B16, V3.B16
	VORR V3.B16, V11.B16, V11.B16
	WORD $0x4fa1e918 // sdot v24.4s, v8.16b, v1.4b[3]
	WORD $0x4fa1e939 // sdot v25.4s, v9.16b, v1.4b[3]
	WORD $0x4fa1e95a // sdot v26.4s, v10.16b, v1.4b[3]
	WORD $0x4fa1e97b // sdot v27.4s, v11.16b, v1.4b[3]
	ADD  $64, R0, R0 // past line 4
	// dot = Σu·xq = v20..v23 + v24..v27
	VADD V24.S4, V20.S4, V20.S4
	VADD V25.S4, V21.S4, V21.S4
	VADD V26.S4, V22.S4, V22.S4
	VADD V27.S4, V23.S4, V23.S4
	// the group's scale codes sc and min codes mc (16 rows)
	VLD1.P 16(R20), [V4.B16] // sc | low mc bits << 6
	VLD1 (R21), [V5.B16] // high mc bits (even group: low nibbles)
	VSHL $4, V5.B16, V7.B16
	VUSHR $2, V7.B16, V7.B16
	VSRI $6, V4.B16, V7.B16 // mc = hi << 2 | sc byte >> 6
	VMOVI $63, V6.B16
	VAND V6.B16, V4.B16, V6.B16 // sc
	WORD $0x2f08a4c8 // uxtl v8.8h, v6.8b
	WORD $0x6f08a4c9 // uxtl2 v9.8h, v6.16b
	WORD $0x2f10a50a // uxtl v10.4s, v8.4h
	WORD $0x6f10a50b // uxtl2 v11.4s, v8.8h
	WORD $0x2f10a52c // uxtl v12.4s, v9.4h
	WORD $0x6f10a52d // uxtl2 v13.4s, v9.8h
	WORD $0x6e21d94a // ucvtf v10.4s, v10.4s
	WORD $0x6e21d96b // ucvtf v11.4s, v11.4s
	WORD $0x6e21d98c // ucvtf v12.4s, v12.4s
	WORD $0x6e21d9ad // ucvtf v13.4s, v13.4s
	WORD $0x2f08a4e8 // uxtl v8.8h, v7.8b
	WORD $0x6f08a4e9 // uxtl2 v9.8h, v7.16b
	WORD $0x2f10a518 // uxtl v24.4s, v8.4h
	WORD $0x6f10a519 // uxtl2 v25.4s, v8.8h
	WORD $0x2f10a53a // uxtl v26.4s, v9.4h
	WORD $0x6f10a53b // uxtl2 v27.4s, v9.8h
	WORD $0x6e21db18 // ucvtf v24.4s, v24.4s
	WORD $0x6e21db39 // ucvtf v25.4s, v25.4s
	WORD $0x6e21db5a // ucvtf v26.4s, v26.4s
	WORD $0x6e21db7b // ucvtf v27.4s, v27.4s
	VLD1 (R24), [V0.H8, V1.H8, V2.H8, V3.H8] // the super-block's d and dm
	WORD $0x0e217804 // fcvtl v4.4s, v0.4h
	WORD $0x4e217805 // fcvtl2 v5.4s, v0.8h
	WORD $0x0e217826 // fcvtl v6.4s, v1.4h
	WORD $0x4e217827 // fcvtl2 v7.4s, v1.8h
	// s = d·sc, m = dm·mc
	WORD $0x6e2adc8a // fmul v10.4s, v4.4s, v10.4s
	WORD $0x6e2bdcab // fmul v11.4s, v5.4s, v11.4s
	WORD $0x6e2cdccc // fmul v12.4s, v6.4s, v12.4s
	WORD $0x6e2ddced // fmul v13.4s, v7.4s, v13.4s
	WORD $0x0e217848 // fcvtl v8.4s, v2.4h
	WORD $0x4e217849 // fcvtl2 v9.4s, v2.8h
	WORD $0x0e21786e // fcvtl v14.4s, v3.4h
	WORD $0x4e21786f // fcvtl2 v15.4s, v3.8h
	WORD $0x6e38dd18 // fmul v24.4s, v8.4s, v24.4s
	WORD $0x6e39dd39 // fmul v25.4s, v9.4s, v25.4s
	WORD $0x6e3addda // fmul v26.4s, v14.4s, v26.4s
	WORD $0x6e3bddfb // fmul v27.4s, v15.4s, v27.4s
	// t += s·(xs·float(dot)) − m·(xs·float(Σxq))
	VLD1R.P 4(R11), [V28.S4] // the group's activation scale
	WORD $0x4e21da94 // scvtf v20.4s, v20.4s
	WORD $0x4e21dab5 // scvtf v21.4s, v21.4s
	WORD $0x4e21dad6 // scvtf v22.4s, v22.4s
	WORD $0x4e21daf7 // scvtf v23.4s, v23.4s
	WORD $0x6e3cde94 // fmul v20.4s, v20.4s, v28.4s
	WORD $0x6e3cdeb5 // fmul v21.4s, v21.4s, v28.4s
	WORD $0x6e3cded6 // fmul v22.4s, v22.4s, v28.4s
	WORD $0x6e3cdef7 // fmul v23.4s, v23.4s, v28.4s
	VFMLA V10.S4, V20.S4, V16.S4
	VFMLA V11.S4, V21.S4, V17.S4
	VFMLA V12.S4, V22.S4, V18.S4
	VFMLA V13.S4, V23.S4, V19.S4
	VLD1R.P 4(R10), [V0.S4] // Σxq of the group
	WORD $0x4e21d800 // scvtf v0.4s, v0.4s
	WORD $0x6e3cdc00 // fmul v0.4s, v0.4s, v28.4s
	WORD $0x4ea0cf10 // fmls v16.4s, v24.4s, v0.4s
	WORD $0x4ea0cf31 // fmls v17.4s, v25.4s, v0.4s
	WORD $0x4ea0cf52 // fmls v18.4s, v26.4s, v0.4s
	WORD $0x4ea0cf73 // fmls v19.4s, v27.4s, v0.4s
	// odd group
	VLD1.P 32(R7), [V0.B16, V1.B16] // the group's 32 activations
	VEOR V20.B16, V20.B16, V20.B16
	VEOR V21.B16, V21.B16, V21.B16
	VEOR V22.B16, V22.B16, V22.B16
	VEOR V23.B16, V23.B16, V23.B16
	VEOR V24.B16, V24.B16, V24.B16
	VEOR V25.B16, V25.B16, V25.B16
	VEOR V26.B16, V26.B16, V26.B16
	VEOR V27.B16, V27.B16, V27.B16
	ADD  $256, R0, R12
	VLD1 (R12), [V4.B16, V5.B16, V6.B16, V7.B16] // line 4: bit h = bit 4 of u in k-quad h
	VLD1.P 64(R0), [V8.B16, V9.B16, V10.B16, V11.B16] // line 0: k-quad 0 low, 1 high nibbles
	// k-quad 0: (L0 & 15) | ((L4 << 4) & 16)
	VAND V30.B16, V8.B16, V12.B16
	VAND V30.B16, V9.B16, V13.B16
	VAND V30.B16, V10.B16, V14.B16
	VAND V30.B16, V11.B16, V15.B16
	VSHL $4, V4.B16, V2.B16
	VAND V29.B16, V2.B16, V2.B16
	VORR V2.B16, V12.B16, V12.B16
	VSHL $4, V5.B16, V3.B16
	VAND V29.B16, V3.B16, V3.B16
	VORR V3.B16, V13.B16, V13.B16
	VSHL $4, V6.B16, V2.B16
	VAND V29.B16, V2.B16, V2.B16
	VORR V2.B16, V14.B16, V14.B16
	VSHL $4, V7.B16, V3.B16
	VAND V29.B16, V3.B16, V3.B16
	VORR V3.B16, V15.B16, V15.B16
	WORD $0x4f80e194 // sdot v20.4s, v12.16b, v0.4b[0]
	WORD $0x4f80e1b5 // sdot v21.4s, v13.16b, v0.4b[0]
	WORD $0x4f80e1d6 // sdot v22.4s, v14.16b, v0.4b[0]
	WORD $0x4f80e1f7 // sdot v23.4s, v15.16b, v0.4b[0]
	// k-quad 1: (L0 >> 4) | ((L4 << 3) & 16)
	VUSHR $4, V8.B16, V8.B16
	VUSHR $4, V9.B16, V9.B16
	VUSHR $4, V10.B16, V10.B16
	VUSHR $4, V11.B16, V11.B16
	VSHL $3, V4.B16, V2.B16
	VAND V29.B16, V2.B16, V2.B16
	VORR V2.B16, V8.B16, V8.B16
	VSHL $3, V5.B16, V3.B16
	VAND V29.B16, V3.B16, V3.B16
	VORR V3.B16, V9.B16, V9.B16
	VSHL $3, V6.B16, V2.B16
	VAND V29.B16, V2.B16, V2.B16
	VORR V2.B16, V10.B16, V10.B16
	VSHL $3, V7.B16, V3.B16
	VAND V29.B16, V3.B16, V3.B16
	VORR V3.B16, V11.B16, V11.B16
	WORD $0x4fa0e118 // sdot v24.4s, v8.16b, v0.4b[1]
	WORD $0x4fa0e139 // sdot v25.4s, v9.16b, v0.4b[1]
	WORD $0x4fa0e15a // sdot v26.4s, v10.16b, v0.4b[1]
	WORD $0x4fa0e17b // sdot v27.4s, v11.16b, v0.4b[1]
	VLD1.P 64(R0), [V8.B16, V9.B16, V10.B16, V11.B16] // line 1: k-quad 2 low, 3 high nibbles
	// k-quad 2: (L1 & 15) | ((L4 << 2) & 16)
	VAND V30.B16, V8.B16, V12.B16
	VAND V30.B16, V9.B16, V13.B16
	VAND V30.B16, V10.B16, V14.B16
	VAND V30.B16, V11.B16, V15.B16
	VSHL $2, V4.B16, V2.B16
	VAND V29.B16, V2.B16, V2.B16
	VORR V2.B16, V12.B16, V12.B16
	VSHL $2, V5.B16, V3.B16
	VAND V29.B16, V3.B16, V3.B16
	VORR V3.B16, V13.B16, V13.B16
	VSHL $2, V6.B16, V2.B16
	VAND V29.B16, V2.B16, V2.B16
	VORR V2.B16, V14.B16, V14.B16
	VSHL $2, V7.B16, V3.B16
	VAND V29.B16, V3.B16, V3.B16
	VORR V3.B16, V15.B16, V15.B16
	WORD $0x4f80e994 // sdot v20.4s, v12.16b, v0.4b[2]
	WORD $0x4f80e9b5 // sdot v21.4s, v13.16b, v0.4b[2]
	WORD $0x4f80e9d6 // sdot v22.4s, v14.16b, v0.4b[2]
	WORD $0x4f80e9f7 // sdot v23.4s, v15.16b, v0.4b[2]
	// k-quad 3: (L1 >> 4) | ((L4 << 1) & 16)
	VUSHR $4, V8.B16, V8.B16
	VUSHR $4, V9.B16, V9.B16
	VUSHR $4, V10.B16, V10.B16
	VUSHR $4, V11.B16, V11.B16
	VSHL $1, V4.B16, V2.B16
	VAND V29.B16, V2.B16, V2.B16
	VORR V2.B16, V8.B16, V8.B16
	VSHL $1, V5.B16, V3.B16
	VAND V29.B16, V3.B16, V3.B16
	VORR V3.B16, V9.B16, V9.B16
	VSHL $1, V6.B16, V2.B16
	VAND V29.B16, V2.B16, V2.B16
	VORR V2.B16, V10.B16, V10.B16
	VSHL $1, V7.B16, V3.B16
	VAND V29.B16, V3.B16, V3.B16
	VORR V3.B16, V11.B16, V11.B16
	WORD $0x4fa0e918 // sdot v24.4s, v8.16b, v0.4b[3]
	WORD $0x4fa0e939 // sdot v25.4s, v9.16b, v0.4b[3]
	WORD $0x4fa0e95a // sdot v26.4s, v10.16b, v0.4b[3]
	WORD $0x4fa0e97b // sdot v27.4s, v11.16b, v0.4b[3]
	VLD1.P 64(R0), [V8.B16, V9.B16, V10.B16, V11.B16] // line 2: k-quad 4 low, 5 high nibbles
	// k-quad 4: (L2 & 15) | ((L4 ) & 16)
	VAND V30.B16, V8.B16, V12.B16
	VAND V30.B16, V9.B16, V13.B16
	VAND V30.B16, V10.B16, V14.B16
	VAND V30.B16, V11.B16, V15.B16
	VAND V29.B16, V4.B16, V2.B16
	VORR V2.B16, V12.B16, V12.B16
	VAND V29.B16, V5.B16, V3.B16
	VORR V3.B16, V13.B16, V13.B16
	VAND V29.B16, V6.B16, V2.B16
	VORR V2.B16, V14.B16, V14.B16
	VAND V29.B16, V7.B16, V3.B16
	VORR V3.B16, V15.B16, V15.B16
	WORD $0x4f81e194 // sdot v20.4s, v12.16b, v1.4b[0]
	WORD $0x4f81e1b5 // sdot v21.4s, v13.16b, v1.4b[0]
	WORD $0x4f81e1d6 // sdot v22.4s, v14.16b, v1.4b[0]
	WORD $0x4f81e1f7 // sdot v23.4s, v15.16b, v1.4b[0]
	// k-quad 5: (L2 >> 4) | ((L4 >> 1) & 16)
	VUSHR $4, V8.B16, V8.B16
	VUSHR $4, V9.B16, V9.B16
	VUSHR $4, V10.B16, V10.B16
	VUSHR $4, V11.B16, V11.B16
	VUSHR $1, V4.B16, V2.B16
	VAND V29.B16, V2.B16, V2.B16
	VORR V2.B16, V8.B16, V8.B16
	VUSHR $1, V5.B16, V3.B16
	VAND V29.B16, V3.B16, V3.B16
	VORR V3.B16, V9.B16, V9.B16
	VUSHR $1, V6.B16, V2.B16
	VAND V29.B16, V2.B16, V2.B16
	VORR V2.B16, V10.B16, V10.B16
	VUSHR $1, V7.B16, V3.B16
	VAND V29.B16, V3.B16, V3.B16
	VORR V3.B16, V11.B16, V11.B16
	WORD $0x4fa1e118 // sdot v24.4s, v8.16b, v1.4b[1]
	WORD $0x4fa1e139 // sdot v25.4s, v9.16b, v1.4b[1]
	WORD $0x4fa1e15a // sdot v26.4s, v10.16b, v1.4b[1]
	WORD $0x4fa1e17b // sdot v27.4s, v11.16b, v1.4b[1]
	VLD1.P 64(R0), [V8.B16, V9.B16, V10.B16, V11.B16] // line 3: k-quad 6 low, 7 high nibbles
	// k-quad 6: (L3 & 15) | ((L4 >> 2) & 16)
	VAND V30.B16, V8.B16, V12.B16
	VAND V30.B16, V9.B16, V13.B16
	VAND V30.B16, V10.B16, V14.B16
	VAND V30.B16, V11.B16, V15.B16
	VUSHR $2, V4.B16, V2.B16
	VAND V29.B16, V2.B16, V2.B16
	VORR V2.B16, V12.B16, V12.B16
	VUSHR $2, V5.B16, V3.B16
	VAND V29.B16, V3.B16, V3.B16
	VORR V3.B16, V13.B16, V13.B16
	VUSHR $2, V6.B16, V2.B16
	VAND V29.B16, V2.B16, V2.B16
	VORR V2.B16, V14.B16, V14.B16
	VUSHR $2, V7.B16, V3.B16
	VAND V29.B16, V3.B16, V3.B16
	VORR V3.B16, V15.B16, V15.B16
	WORD $0x4f81e994 // sdot v20.4s, v12.16b, v1.4b[2]
	WORD $0x4f81e9b5 // sdot v21.4s, v13.16b, v1.4b[2]
	WORD $0x4f81e9d6 // sdot v22.4s, v14.16b, v1.4b[2]
	WORD $0x4f81e9f7 // sdot v23.4s, v15.16b, v1.4b[2]
	// k-quad 7: (L3 >> 4) | ((L4 >> 3) & 16)
	VUSHR $4, V8.B16, V8.B16
	VUSHR $4, V9.B16, V9.B16
	VUSHR $4, V10.B16, V10.B16
	VUSHR $4, V11.B16, V11.B16
	VUSHR $3, V4.B16, V2.B16
	VAND V29.B16, V2.B16, V2.B16
	VORR V2.B16, V8.B16, V8.B16
	VUSHR $3, V5.B16, V3.B16
	VAND V29.B16, V3.B16, V3.B16
	VORR V3.B16, V9.B16, V9.B16
	VUSHR $3, V6.B16, V2.B16
	VAND V29.B16, V2.B16, V2.B16
	VORR V2.B16, V10.B16, V10.B16
	VUSHR $3, V7.B16, V3.B16
	VAND V29.B16, V3.B16, V3.B16
	VORR V3.B16, V11.B16, V11.B16
	WORD $0x4fa1e918 // sdot v24.4s, v8.16b, v1.4b[3]
	WORD $0x4fa1e939 // sdot v25.4s, v9.16b, v1.4b[3]
	WORD $0x4fa1e95a // sdot v26.4s, v10.16b, v1.4b[3]
	WORD $0x4fa1e97b // sdot v27.4s, v11.16b, v1.4b[3]
	ADD  $64, R0, R0 // past line 4
	// dot = Σu·xq = v20..v23 + v24..v27
	VADD V24.S4, V20.S4, V20.S4
	VADD V25.S4, V21.S4, V21.S4
	VADD V26.S4, V22.S4, V22.S4
	VADD V27.S4, V23.S4, V23.S4
	// the group's scale codes sc and min codes mc (16 rows)
	VLD1.P 16(R20), [V4.B16] // sc | low mc bits << 6
	VLD1.P 16(R21), [V5.B16] // high mc bits (odd group: high nibbles)
	VUSHR $2, V5.B16, V7.B16
	VSRI $6, V4.B16, V7.B16 // mc = hi << 2 | sc byte >> 6
	VMOVI $63, V6.B16
	VAND V6.B16, V4.B16, V6.B16 // sc
	WORD $0x2f08a4c8 // uxtl v8.8h, v6.8b
	WORD $0x6f08a4c9 // uxtl2 v9.8h, v6.16b
	WORD $0x2f10a50a // uxtl v10.4s, v8.4h
	WORD $0x6f10a50b // uxtl2 v11.4s, v8.8h
	WORD $0x2f10a52c // uxtl v12.4s, v9.4h
	WORD $0x6f10a52d // uxtl2 v13.4s, v9.8h
	WORD $0x6e21d94a // ucvtf v10.4s, v10.4s
	WORD $0x6e21d96b // ucvtf v11.4s, v11.4s
	WORD $0x6e21d98c // ucvtf v12.4s, v12.4s
	WORD $0x6e21d9ad // ucvtf v13.4s, v13.4s
	WORD $0x2f08a4e8 // uxtl v8.8h, v7.8b
	WORD $0x6f08a4e9 // uxtl2 v9.8h, v7.16b
	WORD $0x2f10a518 // uxtl v24.4s, v8.4h
	WORD $0x6f10a519 // uxtl2 v25.4s, v8.8h
	WORD $0x2f10a53a // uxtl v26.4s, v9.4h
	WORD $0x6f10a53b // uxtl2 v27.4s, v9.8h
	WORD $0x6e21db18 // ucvtf v24.4s, v24.4s
	WORD $0x6e21db39 // ucvtf v25.4s, v25.4s
	WORD $0x6e21db5a // ucvtf v26.4s, v26.4s
	WORD $0x6e21db7b // ucvtf v27.4s, v27.4s
	VLD1 (R24), [V0.H8, V1.H8, V2.H8, V3.H8] // the super-block's d and dm
	WORD $0x0e217804 // fcvtl v4.4s, v0.4h
	WORD $0x4e217805 // fcvtl2 v5.4s, v0.8h
	WORD $0x0e217826 // fcvtl v6.4s, v1.4h
	WORD $0x4e217827 // fcvtl2 v7.4s, v1.8h
	// s = d·sc, m = dm·mc
	WORD $0x6e2adc8a // fmul v10.4s, v4.4s, v10.4s
	WORD $0x6e2bdcab // fmul v11.4s, v5.4s, v11.4s
	WORD $0x6e2cdccc // fmul v12.4s, v6.4s, v12.4s
	WORD $0x6e2ddced // fmul v13.4s, v7.4s, v13.4s
	WORD $0x0e217848 // fcvtl v8.4s, v2.4h
	WORD $0x4e217849 // fcvtl2 v9.4s, v2.8h
	WORD $0x0e21786e // fcvtl v14.4s, v3.4h
	WORD $0x4e21786f // fcvtl2 v15.4s, v3.8h
	WORD $0x6e38dd18 // fmul v24.4s, v8.4s, v24.4s
	WORD $0x6e39dd39 // fmul v25.4s, v9.4s, v25.4s
	WORD $0x6e3addda // fmul v26.4s, v14.4s, v26.4s
	WORD $0x6e3bddfb // fmul v27.4s, v15.4s, v27.4s
	// t += s·(xs·float(dot)) − m·(xs·float(Σxq))
	VLD1R.P 4(R11), [V28.S4] // the group's activation scale
	WORD $0x4e21da94 // scvtf v20.4s, v20.4s
	WORD $0x4e21dab5 // scvtf v21.4s, v21.4s
	WORD $0x4e21dad6 // scvtf v22.4s, v22.4s
	WORD $0x4e21daf7 // scvtf v23.4s, v23.4s
	WORD $0x6e3cde94 // fmul v20.4s, v20.4s, v28.4s
	WORD $0x6e3cdeb5 // fmul v21.4s, v21.4s, v28.4s
	WORD $0x6e3cded6 // fmul v22.4s, v22.4s, v28.4s
	WORD $0x6e3cdef7 // fmul v23.4s, v23.4s, v28.4s
	VFMLA V10.S4, V20.S4, V16.S4
	VFMLA V11.S4, V21.S4, V17.S4
	VFMLA V12.S4, V22.S4, V18.S4
	VFMLA V13.S4, V23.S4, V19.S4
	VLD1R.P 4(R10), [V0.S4] // Σxq of the group
	WORD $0x4e21d800 // scvtf v0.4s, v0.4s
	WORD $0x6e3cdc00 // fmul v0.4s, v0.4s, v28.4s
	WORD $0x4ea0cf10 // fmls v16.4s, v24.4s, v0.4s
	WORD $0x4ea0cf31 // fmls v17.4s, v25.4s, v0.4s
	WORD $0x4ea0cf52 // fmls v18.4s, v26.4s, v0.4s
	WORD $0x4ea0cf73 // fmls v19.4s, v27.4s, v0.4s
	SUBS $1, R22, R22
	BNE  k5g
	SUBS $1, R23, R23
	BNE  k5b

	// y (+)= t
	CBZ  R9, k5z
	VLD1 (R6), [V4.S4, V5.S4, V6.S4, V7.S4]
	B    k5s

k5z:
	VEOR V4.B16, V4.B16, V4.B16
	VEOR V5.B16, V5.B16, V5.B16
	VEOR V6.B16, V6.B16, V6.B16
	VEOR V7.B16, V7.B16, V7.B16

k5s:
	WORD $0x4e30d484 // fadd v4.4s, v4.4s, v16.4s
	WORD $0x4e31d4a5 // fadd v5.4s, v5.4s, v17.4s
	WORD $0x4e32d4c6 // fadd v6.4s, v6.4s, v18.4s
	WORD $0x4e33d4e7 // fadd v7.4s, v7.4s, v19.4s
	VST1.P [V4.S4, V5.S4, V6.S4, V7.S4], 64(R6)
	SUBS $1, R1, R1
	BNE  k5p
	RET


// func dotQ6KNEON_1x16(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)
TEXT ·dotQ6KNEON_1x16(SB), NOSPLIT, $0-64
	ARGS
	VMOVI $63, V31.B16

	LSR  $3, R2, R2 // super-blocks of 8 groups

k6p:
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16
	MOVD R3, R7
	MOVD R4, R10
	MOVD R5, R11
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
	VLD1.P 32(R7), [V0.B16, V1.B16] // the group's 32 activations
	VEOR V20.B16, V20.B16, V20.B16
	VEOR V21.B16, V21.B16, V21.B16
	VEOR V22.B16, V22.B16, V22.B16
	VEOR V23.B16, V23.B16, V23.B16
	VEOR V24.B16, V24.B16, V24.B16
	VEOR V25.B16, V25.B16, V25.B16
	VEOR V26.B16, V26.B16, V26.B16
	VEOR V27.B16, V27.B16, V27.B16
	VLD1.P 64(R0), [V4.B16, V5.B16, V6.B16, V7.B16] // line 0: k = 0..3 bits 0–5, bits 0–1 of k = 24..27 in 6–7
	VLD1.P 64(R0), [V8.B16, V9.B16, V10.B16, V11.B16] // line 1: k = 4..7 bits 0–5, bits 2–3 of k = 24..27 in 6–7
	VLD1.P 64(R0), [V12.B16, V13.B16, V14.B16, V15.B16] // line 2: k = 8..11 bits 0–5, bits 4–5 of k = 24..27 in 6–7
	// k = 24..27: ((L2 >> 2) with L1 >> 4, then L0 >> 6 inserted)
	VUSHR $2, V12.B16, V2.B16
	VUSHR $2, V13.B16, V3.B16
	VUSHR $2, V14.B16, V28.B16
	VUSHR $2, V15.B16, V29.B16
	VSRI $4, V8.B16, V2.B16
	VSRI $4, V9.B16, V3.B16
	VSRI $4, V10.B16, V28.B16
	VSRI $4, V11.B16, V29.B16
	VSRI $6, V4.B16, V2.B16
	VSRI $6, V5.B16, V3.B16
	VSRI $6, V6.B16, V28.B16
	VSRI $6, V7.B16, V29.B16
	WORD $0x4f81e858 // sdot v24.4s, v2.16b, v1.4b[2]
	WORD $0x4f81e879 // sdot v25.4s, v3.16b, v1.4b[2]
	WORD $0x4f81eb9a // sdot v26.4s, v28.16b, v1.4b[2]
	WORD $0x4f81ebbb // sdot v27.4s, v29.16b, v1.4b[2]
	// k = 0..11: L & 63
	VAND V31.B16, V4.B16, V4.B16
	VAND V31.B16, V5.B16, V5.B16
	VAND V31.B16, V6.B16, V6.B16
	VAND V31.B16, V7.B16, V7.B16
	VAND V31.B16, V8.B16, V8.B16
	VAND V31.B16, V9.B16, V9.B16
	VAND V31.B16, V10.B16, V10.B16
	VAND V31.B16, V11.B16, V11.B16
	VAND V31.B16, V12.B16, V12.B16
	VAND V31.B16, V13.B16, V13.B16
	VAND V31.B16, V14.B16, V14.B16
	VAND V31.B16, V15.B16, V15.B16
	WORD $0x4f80e094 // sdot v20.4s, v4.16b, v0.4b[0]
	WORD $0x4f80e0b5 // sdot v21.4s, v5.16b, v0.4b[0]
	WORD $0x4f80e0d6 // sdot v22.4s, v6.16b, v0.4b[0]
	WORD $0x4f80e0f7 // sdot v23.4s, v7.16b, v0.4b[0]
	WORD $0x4fa0e118 // sdot v24.4s, v8.16b, v0.4b[1]
	WORD $0x4fa0e139 // sdot v25.4s, v9.16b, v0.4b[1]
	WORD $0x4fa0e15a // sdot v26.4s, v10.16b, v0.4b[1]
	WORD $0x4fa0e17b // sdot v27.4s, v11.16b, v0.4b[1]
	WORD $0x4f80e994 // sdot v20.4s, v12.16b, v0.4b[2]
	WORD $0x4f80e9b5 // sdot v21.4s, v13.16b, v0.4b[2]
	WORD $0x4f80e9d6 // sdot v22.4s, v14.16b, v0.4b[2]
	WORD $0x4f80e9f7 // sdot v23.4s, v15.16b, v0.4b[2]
	VLD1.P 64(R0), [V4.B16, V5.B16, V6.B16, V7.B16] // line 3: k = 12..15 bits 0–5, bits 0–1 of k = 28..31 in 6–7
	VLD1.P 64(R0), [V8.B16, V9.B16, V10.B16, V11.B16] // line 4: k = 16..19 bits 0–5, bits 2–3 of k = 28..31 in 6–7
	VLD1.P 64(R0), [V12.B16, V13.B16, V14.B16, V15.B16] // line 5: k = 20..23 bits 0–5, bits 4–5 of k = 28..31 in 6–7
	// k = 28..31: ((L5 >> 2) with L4 >> 4, then L3 >> 6 inserted)
	VUSHR $2, V12.B16, V2.B16
	VUSHR $2, V13.B16, V3.B16
	VUSHR $2, V14.B16, V28.B16
	VUSHR $2, V15.B16, V29.B16
	VSRI $4, V8.B16, V2.B16
	VSRI $4, V9.B16, V3.B16
	VSRI $4, V10.B16, V28.B16
	VSRI $4, V11.B16, V29.B16
	VSRI $6, V4.B16, V2.B16
	VSRI $6, V5.B16, V3.B16
	VSRI $6, V6.B16, V28.B16
	VSRI $6, V7.B16, V29.B16
	WORD $0x4fa1e854 // sdot v20.4s, v2.16b, v1.4b[3]
	WORD $0x4fa1e875 // sdot v21.4s, v3.16b, v1.4b[3]
	WORD $0x4fa1eb96 // sdot v22.4s, v28.16b, v1.4b[3]
	WORD $0x4fa1ebb7 // sdot v23.4s, v29.16b, v1.4b[3]
	// k = 12..23: L & 63
	VAND V31.B16, V4.B16, V4.B16
	VAND V31.B16, V5.B16, V5.B16
	VAND V31.B16, V6.B16, V6.B16
	VAND V31.B16, V7.B16, V7.B16
	VAND V31.B16, V8.B16, V8.B16
	VAND V31.B16, V9.B16, V9.B16
	VAND V31.B16, V10.B16, V10.B16
	VAND V31.B16, V11.B16, V11.B16
	VAND V31.B16, V12.B16, V12.B16
	VAND V31.B16, V13.B16, V13.B16
	VAND V31.B16, V14.B16, V14.B16
	VAND V31.B16, V15.B16, V15.B16
	WORD $0x4fa0e898 // sdot v24.4s, v4.16b, v0.4b[3]
	WORD $0x4fa0e8b9 // sdot v25.4s, v5.16b, v0.4b[3]
	WORD $0x4fa0e8da // sdot v26.4s, v6.16b, v0.4b[3]
	WORD $0x4fa0e8fb // sdot v27.4s, v7.16b, v0.4b[3]
	WORD $0x4f81e114 // sdot v20.4s, v8.16b, v1.4b[0]
	WORD $0x4f81e135 // sdot v21.4s, v9.16b, v1.4b[0]
	WORD $0x4f81e156 // sdot v22.4s, v10.16b, v1.4b[0]
	WORD $0x4f81e177 // sdot v23.4s, v11.16b, v1.4b[0]
	WORD $0x4fa1e198 // sdot v24.4s, v12.16b, v1.4b[1]
	WORD $0x4fa1e1b9 // sdot v25.4s, v13.16b, v1.4b[1]
	WORD $0x4fa1e1da // sdot v26.4s, v14.16b, v1.4b[1]
	WORD $0x4fa1e1fb // sdot v27.4s, v15.16b, v1.4b[1]
	// dot = Σu·xq = v20..v23 + v24..v27
	VADD V24.S4, V20.S4, V20.S4
	VADD V25.S4, V21.S4, V21.S4
	VADD V26.S4, V22.S4, V22.S4
	VADD V27.S4, V23.S4, V23.S4
	// the group's scale codes sc and min codes mc (16 rows)
	VLD1.P 16(R20), [V4.B16] // sc | low mc bits << 6
	VLD1 (R21), [V5.B16] // high mc bits (even group: low nibbles)
	VSHL $4, V5.B16, V7.B16
	VUSHR $2, V7.B16, V7.B16
	VSRI $6, V4.B16, V7.B16 // mc = hi << 2 | sc byte >> 6
	VMOVI $63, V6.B16
	VAND V6.B16, V4.B16, V6.B16 // sc
	WORD $0x2f08a4c8 // uxtl v8.8h, v6.8b
	WORD $0x6f08a4c9 // uxtl2 v9.8h, v6.16b
	WORD $0x2f10a50a // uxtl v10.4s, v8.4h
	WORD $0x6f10a50b // uxtl2 v11.4s, v8.8h
	WORD $0x2f10a52c // uxtl v12.4s, v9.4h
	WORD $0x6f10a52d // uxtl2 v13.4s, v9.8h
	WORD $0x6e21d94a // ucvtf v10.4s, v10.4s
	WORD $0x6e21d96b // ucvtf v11.4s, v11.4s
	WORD $0x6e21d98c // ucvtf v12.4s, v12.4s
	WORD $0x6e21d9ad // ucvtf v13.4s, v13.4s
	WORD $0x2f08a4e8 // uxtl v8.8h, v7.8b
	WORD $0x6f08a4e9 // uxtl2 v9.8h, v7.16b
	WORD $0x2f10a518 // uxtl v24.4s, v8.4h
	WORD $0x6f10a519 // uxtl2 v25.4s, v8.8h
	WORD $0x2f10a53a // uxtl v26.4s, v9.4h
	WORD $0x6f10a53b // uxtl2 v27.4s, v9.8h
	WORD $0x6e21db18 // ucvtf v24.4s, v24.4s
	WORD $0x6e21db39 // ucvtf v25.4s, v25.4s
	WORD $0x6e21db5a // ucvtf v26.4s, v26.4s
	WORD $0x6e21db7b // ucvtf v27.4s, v27.4s
	VLD1 (R24), [V0.H8, V1.H8, V2.H8, V3.H8] // the super-block's d and dm
	WORD $0x0e217804 // fcvtl v4.4s, v0.4h
	WORD $0x4e217805 // fcvtl2 v5.4s, v0.8h
	WORD $0x0e217826 // fcvtl v6.4s, v1.4h
	WORD $0x4e217827 // fcvtl2 v7.4s, v1.8h
	// s = d·sc, m = dm·mc
	WORD $0x6e2adc8a // fmul v10.4s, v4.4s, v10.4s
	WORD $0x6e2bdcab // fmul v11.4s, v5.4s, v11.4s
	WORD $0x6e2cdccc // fmul v12.4s, v6.4s, v12.4s
	WORD $0x6e2ddced // fmul v13.4s, v7.4s, v13.4s
	WORD $0x0e217848 // fcvtl v8.4s, v2.4h
	WORD $0x4e217849 // fcvtl2 v9.4s, v2.8h
	WORD $0x0e21786e // fcvtl v14.4s, v3.4h
	WORD $0x4e21786f // fcvtl2 v15.4s, v3.8h
	WORD $0x6e38dd18 // fmul v24.4s, v8.4s, v24.4s
	WORD $0x6e39dd39 // fmul v25.4s, v9.4s, v25.4s
	WORD $0x6e3addda // fmul v26.4s, v14.4s, v26.4s
	WORD $0x6e3bddfb // fmul v27.4s, v15.4s, v27.4s
	// t += s·(xs·float(dot)) − m·(xs·float(Σxq))
	VLD1R.P 4(R11), [V28.S4] // the group's activation scale
	WORD $0x4e21da94 // scvtf v20.4s, v20.4s
	WORD $0x4e21dab5 // scvtf v21.4s, v21.4s
	WORD $0x4e21dad6 // scvtf v22.4s, v22.4s
	WORD $0x4e21daf7 // scvtf v23.4s, v23.4s
	WORD $0x6e3cde94 // fmul v20.4s, v20.4s, v28.4s
	WORD $0x6e3cdeb5 // fmul v21.4s, v21.4s, v28.4s
	WORD $0x6e3cded6 // fmul v22.4s, v22.4s, v28.4s
	WORD $0x6e3cdef7 // fmul v23.4s, v23.4s, v28.4s
	VFMLA V10.S4, V20.S4, V16.S4
	VFMLA V11.S4, V21.S4, V17.S4
	VFMLA V12.S4, V22.S4, V18.S4
	VFMLA V13.S4, V23.S4, V19.S4
	VLD1R.P 4(R10), [V0.S4] // Σxq of the group
	WORD $0x4e21d800 // scvtf v0.4s, v0.4s
	WORD $0x6e3cdc00 // fmul v0.4s, v0.4s, v28.4s
	WORD $0x4ea0cf10 // fmls v16.4s, v24.4s, v0.4s
	WORD $0x4ea0cf31 // fmls v17.4s, v25.4s, v0.4s
	WORD $0x4ea0cf52 // fmls v18.4s, v26.4s, v0.4s
	WORD $0x4ea0cf73 // fmls v19.4s, v27.4s, v0.4s
	// odd group
	VLD1.P 32(R7), [V0.B16, V1.B16] // the group's 32 activations
	VEOR V20.B16, V20.B16, V20.B16
	VEOR V21.B16, V21.B16, V21.B16
	VEOR V22.B16, V22.B16, V22.B16
	VEOR V23.B16, V23.B16, V23.B16
	VEOR V24.B16, V24.B16, V24.B16
	VEOR V25.B16, V25.B16, V25.B16
	VEOR V26.B16, V26.B16, V26.B16
	VEOR V27.B16, V27.B16, V27.B16
	VLD1.P 64(R0), [V4.B16, V5.B16, V6.B16, V7.B16] // line 0: k = 0..3 bits 0–5, bits 0–1 of k = 24..27 in 6–7
	VLD1.P 64(R0), [V8.B16, V9.B16, V10.B16, V11.B16] // line 1: k = 4..7 bits 0–5, bits 2–3 of k = 24..27 in 6–7
	VLD1.P 64(R0), [V12.B16, V13.B16, V14.B16, V15.B16] // line 2: k = 8..11 bits 0–5, bits 4–5 of k = 24..27 in 6–7
	// k = 24..27: ((L2 >> 2) with L1 >> 4, then L0 >> 6 inserted)
	VUSHR $2, V12.B16, V2.B16
	VUSHR $2, V13.B16, V3.B16
	VUSHR $2, V14.B16, V28.B16
	VUSHR $2, V15.B16, V29.B16
	VSRI $4, V8.B16, V2.B16
	VSRI $4, V9.B16, V3.B16
	VSRI $4, V10.B16, V28.B16
	VSRI $4, V11.B16, V29.B16
	VSRI $6, V4.B16, V2.B16
	VSRI $6, V5.B16, V3.B16
	VSRI $6, V6.B16, V28.B16
	VSRI $6, V7.B16, V29.B16
	WORD $0x4f81e858 // sdot v24.4s, v2.16b, v1.4b[2]
	WORD $0x4f81e879 // sdot v25.4s, v3.16b, v1.4b[2]
	WORD $0x4f81eb9a // sdot v26.4s, v28.16b, v1.4b[2]
	WORD $0x4f81ebbb // sdot v27.4s, v29.16b, v1.4b[2]
	// k = 0..11: L & 63
	VAND V31.B16, V4.B16, V4.B16
	VAND V31.B16, V5.B16, V5.B16
	VAND V31.B16, V6.B16, V6.B16
	VAND V31.B16, V7.B16, V7.B16
	VAND V31.B16, V8.B16, V8.B16
	VAND V31.B16, V9.B16, V9.B16
	VAND V31.B16, V10.B16, V10.B16
	VAND V31.B16, V11.B16, V11.B16
	VAND V31.B16, V12.B16, V12.B16
	VAND V31.B16, V13.B16, V13.B16
	VAND V31.B16, V14.B16, V14.B16
	VAND V31.B16, V15.B16, V15.B16
	WORD $0x4f80e094 // sdot v20.4s, v4.16b, v0.4b[0]
	WORD $0x4f80e0b5 // sdot v21.4s, v5.16b, v0.4b[0]
	WORD $0x4f80e0d6 // sdot v22.4s, v6.16b, v0.4b[0]
	WORD $0x4f80e0f7 // sdot v23.4s, v7.16b, v0.4b[0]
	WORD $0x4fa0e118 // sdot v24.4s, v8.16b, v0.4b[1]
	WORD $0x4fa0e139 // sdot v25.4s, v9.16b, v0.4b[1]
	WORD $0x4fa0e15a // sdot v26.4s, v10.16b, v0.4b[1]
	WORD $0x4fa0e17b // sdot v27.4s, v11.16b, v0.4b[1]
	WORD $0x4f80e994 // sdot v20.4s, v12.16b, v0.4b[2]
	WORD $0x4f80e9b5 // sdot v21.4s, v13.16b, v0.4b[2]
	WORD $0x4f80e9d6 // sdot v22.4s, v14.16b, v0.4b[2]
	WORD $0x4f80e9f7 // sdot v23.4s, v15.16b, v0.4b[2]
	VLD1.P 64(R0), [V4.B16, V5.B16, V6.B16, V7.B16] // line 3: k = 12..15 bits 0–5, bits 0–1 of k = 28..31 in 6–7
	VLD1.P 64(R0), [V8.B16, V9.B16, V10.B16, V11.B16] // line 4: k = 16..19 bits 0–5, bits 2–3 of k = 28..31 in 6–7
	VLD1.P 64(R0), [V12.B16, V13.B16, V14.B16, V15.B16] // line 5: k = 20..23 bits 0–5, bits 4–5 of k = 28..31 in 6–7
	// k = 28..31: ((L5 >> 2) with L4 >> 4, then L3 >> 6 inserted)
	VUSHR $2, V12.B16, V2.B16
	VUSHR $2, V13.B16, V3.B16
	VUSHR $2, V14.B16, V28.B16
	VUSHR $2, V15.B16, V29.B16
	VSRI $4, V8.B16, V2.B16
	VSRI $4, V9.B16, V3.B16
	VSRI $4, V10.B16, V28.B16
	VSRI $4, V11.B16, V29.B16
	VSRI $6, V4.B16, V2.B16
	VSRI $6, V5.B16, V3.B16
	VSRI $6, V6.B16, V28.B16
	VSRI $6, V7.B16, V29.B16
	WORD $0x4fa1e854 // sdot v20.4s, v2.16b, v1.4b[3]
	WORD $0x4fa1e875 // sdot v21.4s, v3.16b, v1.4b[3]
	WORD $0x4fa1eb96 // sdot v22.4s, v28.16b, v1.4b[3]
	WORD $0x4fa1ebb7 // sdot v23.4s, v29.16b, v1.4b[3]
	// k = 12..23: L & 63
	VAND V31.B16, V4.B16, V4.B16
	VAND V31.B16, V5.B16, V5.B16
	VAND V31.B16, V6.B16, V6.B16
	VAND V31.B16, V7.B16, V7.B16
	VAND V31.B16, V8.B16, V8.B16
	VAND V31.B16, V9.B16, V9.B16
	VAND V31.B16, V10.B16, V10.B16
	VAND V31.B16, V11.B16, V11.B16
	VAND V31.B16, V12.B16, V12.B16
	VAND V31.B16, V13.B16, V13.B16
	VAND V31.B16, V14.B16, V14.B16
	VAND V31.B16, V15.B16, V15.B16
	WORD $0x4fa0e898 // sdot v24.4s, v4.16b, v0.4b[3]
	WORD $0x4fa0e8b9 // sdot v25.4s, v5.16b, v0.4b[3]
	WORD $0x4fa0e8da // sdot v26.4s, v6.16b, v0.4b[3]
	WORD $0x4fa0e8fb // sdot v27.4s, v7.16b, v0.4b[3]
	WORD $0x4f81e114 // sdot v20.4s, v8.16b, v1.4b[0]
	WORD $0x4f81e135 // sdot v21.4s, v9.16b, v1.4b[0]
	WORD $0x4f81e156 // sdot v22.4s, v10.16b, v1.4b[0]
	WORD $0x4f81e177 // sdot v23.4s, v11.16b, v1.4b[0]
	WORD $0x4fa1e198 // sdot v24.4s, v12.16b, v1.4b[1]
	WORD $0x4fa1e1b9 // sdot v25.4s, v13.16b, v1.4b[1]
	WORD $0x4fa1e1da // sdot v26.4s, v14.16b, v1.4b[1]
	WORD $0x4fa1e1fb // sdot v27.4s, v15.16b, v1.4b[1]
	// dot = Σu·xq = v20..v23 + v24..v27
	VADD V24.S4, V20.S4, V20.S4
	VADD V25.S4, V21.S4, V21.S4
	VADD V26.S4, V22.S4, V22.S4
	VADD V27.S4, V23.S4, V23.S4
	// the group's scale codes sc and min codes mc (16 rows)
	VLD1.P 16(R20), [V4.B16] // sc | low mc bits << 6
	VLD1.P 16(R21), [V5.B16] // high mc bits (odd group: high nibbles)
	VUSHR $2, V5.B16, V7.B16
	VSRI $6, V4.B16, V7.B16 // mc = hi << 2 | sc byte >> 6
	VMOVI $63, V6.B16
	VAND V6.B16, V4.B16, V6.B16 // sc
	WORD $0x2f08a4c8 // uxtl v8.8h, v6.8b
	WORD $0x6f08a4c9 // uxtl2 v9.8h, v6.16b
	WORD $0x2f10a50a // uxtl v10.4s, v8.4h
	WORD $0x6f10a50b // uxtl2 v11.4s, v8.8h
	WORD $0x2f10a52c // uxtl v12.4s, v9.4h
	WORD $0x6f10a52d // uxtl2 v13.4s, v9.8h
	WORD $0x6e21d94a // ucvtf v10.4s, v10.4s
	WORD $0x6e21d96b // ucvtf v11.4s, v11.4s
	WORD $0x6e21d98c // ucvtf v12.4s, v12.4s
	WORD $0x6e21d9ad // ucvtf v13.4s, v13.4s
	WORD $0x2f08a4e8 // uxtl v8.8h, v7.8b
	WORD $0x6f08a4e9 // uxtl2 v9.8h, v7.16b
	WORD $0x2f10a518 // uxtl v24.4s, v8.4h
	WORD $0x6f10a519 // uxtl2 v25.4s, v8.8h
	WORD $0x2f10a53a // uxtl v26.4s, v9.4h
	WORD $0x6f10a53b // uxtl2 v27.4s, v9.8h
	WORD $0x6e21db18 // ucvtf v24.4s, v24.4s
	WORD $0x6e21db39 // ucvtf v25.4s, v25.4s
	WORD $0x6e21db5a // ucvtf v26.4s, v26.4s
	WORD $0x6e21db7b // ucvtf v27.4s, v27.4s
	VLD1 (R24), [V0.H8, V1.H8, V2.H8, V3.H8] // the super-block's d and dm
	WORD $0x0e217804 // fcvtl v4.4s, v0.4h
	WORD $0x4e217805 // fcvtl2 v5.4s, v0.8h
	WORD $0x0e217826 // fcvtl v6.4s, v1.4h
	WORD $0x4e217827 // fcvtl2 v7.4s, v1.8h
	// s = d·sc, m = dm·mc
	WORD $0x6e2adc8a // fmul v10.4s, v4.4s, v10.4s
	WORD $0x6e2bdcab // fmul v11.4s, v5.4s, v11.4s
	WORD $0x6e2cdccc // fmul v12.4s, v6.4s, v12.4s
	WORD $0x6e2ddced // fmul v13.4s, v7.4s, v13.4s
	WORD $0x0e217848 // fcvtl v8.4s, v2.4h
	WORD $0x4e217849 // fcvtl2 v9.4s, v2.8h
	WORD $0x0e21786e // fcvtl v14.4s, v3.4h
	WORD $0x4e21786f // fcvtl2 v15.4s, v3.8h
	WORD $0x6e38dd18 // fmul v24.4s, v8.4s, v24.4s
	WORD $0x6e39dd39 // fmul v25.4s, v9.4s, v25.4s
	WORD $0x6e3addda // fmul v26.4s, v14.4s, v26.4s
	WORD $0x6e3bddfb // fmul v27.4s, v15.4s, v27.4s
	// t += s·(xs·float(dot)) − m·(xs·float(Σxq))
	VLD1R.P 4(R11), [V28.S4] // the group's activation scale
	WORD $0x4e21da94 // scvtf v20.4s, v20.4s
	WORD $0x4e21dab5 // scvtf v21.4s, v21.4s
	WORD $0x4e21dad6 // scvtf v22.4s, v22.4s
	WORD $0x4e21daf7 // scvtf v23.4s, v23.4s
	WORD $0x6e3cde94 // fmul v20.4s, v20.4s, v28.4s
	WORD $0x6e3cdeb5 // fmul v21.4s, v21.4s, v28.4s
	WORD $0x6e3cded6 // fmul v22.4s, v22.4s, v28.4s
	WORD $0x6e3cdef7 // fmul v23.4s, v23.4s, v28.4s
	VFMLA V10.S4, V20.S4, V16.S4
	VFMLA V11.S4, V21.S4, V17.S4
	VFMLA V12.S4, V22.S4, V18.S4
	VFMLA V13.S4, V23.S4, V19.S4
	VLD1R.P 4(R10), [V0.S4] // Σxq of the group
	WORD $0x4e21d800 // scvtf v0.4s, v0.4s
	WORD $0x6e3cdc00 // fmul v0.4s, v0.4s, v28.4s
	WORD $0x4ea0cf10 // fmls v16.4s, v24.4s, v0.4s
	WORD $0x4ea0cf31 // fmls v17.4s, v25.4s, v0.4s
	WORD $0x4ea0cf52 // fmls v18.4s, v26.4s, v0.4s
	WORD $0x4ea0cf73 // fmls v19.4s, v27.4s, v0.4s
	SUBS $1, R22, R22
	BNE  k6g
	SUBS $1, R23, R23
	BNE  k6b

	// y (+)= t
	CBZ  R9, k6z
	VLD1 (R6), [V4.S4, V5.S4, V6.S4, V7.S4]
	B    k6s

k6z:
	VEOR V4.B16, V4.B16, V4.B16
	VEOR V5.B16, V5.B16, V5.B16
	VEOR V6.B16, V6.B16, V6.B16
	VEOR V7.B16, V7.B16, V7.B16

k6s:
	WORD $0x4e30d484 // fadd v4.4s, v4.4s, v16.4s
	WORD $0x4e31d4a5 // fadd v5.4s, v5.4s, v17.4s
	WORD $0x4e32d4c6 // fadd v6.4s, v6.4s, v18.4s
	WORD $0x4e33d4e7 // fadd v7.4s, v7.4s, v19.4s
	VST1.P [V4.S4, V5.S4, V6.S4, V7.S4], 64(R6)
	SUBS $1, R1, R1
	BNE  k6p
	RET

// func dotQ2NEON_1x16(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)
