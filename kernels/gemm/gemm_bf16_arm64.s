//go:build arm64 && gc && !purego

// Hand-written NEON BF16 kernels of the neon_bf16 variant (FEAT_BF16):
// M = 1…4 BF16 activation rows against np consecutive BF16 panels of
// package quant, [Kp/2][16 rows][2 k] (see gemm_arm64.go for their Go
// semantics). One 64-byte panel line holds 16 rows × one k pair: four
// 8H registers of 4 rows × 2 k, which is exactly the first operand of
// BFDOT (by element, 4S += 8H · 2H[i]); the activations are loaded 4
// pairs (16 bytes) per row and indexed by element, so one activation
// load feeds 4 lines. Each row keeps U independent sets of 4
// accumulators (U = 4, 2, 1, 1 for M = 1…4) over the lines, summed at
// the end. A Kp/2 mod 4 tail takes one pair at a time (LD1R).
//
// BFDOT as FEAT_BF16 defines it without FEAT_EBF16 (or with FPCR.EBF = 0,
// as Go leaves it) rounds its intermediate sums to odd and flushes
// denormals to zero: see gemm_bf16_arm64.go. BFDOT and vector FADD are
// WORD-encoded; the mnemonic comments are checked against GNU as by
// _asm/armwords. The file was written by a throwaway script: four
// copies of one pattern with different registers.

#include "textflag.h"

// func bf16NEON_1x16(w *byte, np, npairs int, xb *uint16, ldx int, y *float32, ldy int, acc int)
TEXT ·bf16NEON_1x16(SB), NOSPLIT, $0-64
	MOVD w+0(FP), R0
	MOVD np+8(FP), R1
	MOVD npairs+16(FP), R2
	MOVD xb+24(FP), R3
	MOVD y+40(FP), R5
	MOVD acc+56(FP), R7
	CBZ  R1, b1done

b1panel:
	MOVD R3, R8
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
	LSR  $2, R2, R12 // steps of 4 pairs
	AND  $3, R2, R13 // tail pairs
	CBZ  R12, b1tail

b1quad:
	VLD1.P 16(R8), [V8.H8] // row 0: 4 pairs
	VLD1.P 64(R0), [V0.H8, V1.H8, V2.H8, V3.H8] // line 0: 16 rows × 1 pair
	WORD $0x4f48f010 // bfdot v16.4s, v0.8h, v8.2h[0]
	WORD $0x4f48f031 // bfdot v17.4s, v1.8h, v8.2h[0]
	WORD $0x4f48f052 // bfdot v18.4s, v2.8h, v8.2h[0]
	WORD $0x4f48f073 // bfdot v19.4s, v3.8h, v8.2h[0]
	VLD1.P 64(R0), [V4.H8, V5.H8, V6.H8, V7.H8] // line 1: 16 rows × 1 pair
	WORD $0x4f68f094 // bfdot v20.4s, v4.8h, v8.2h[1]
	WORD $0x4f68f0b5 // bfdot v21.4s, v5.8h, v8.2h[1]
	WORD $0x4f68f0d6 // bfdot v22.4s, v6.8h, v8.2h[1]
	WORD $0x4f68f0f7 // bfdot v23.4s, v7.8h, v8.2h[1]
	VLD1.P 64(R0), [V0.H8, V1.H8, V2.H8, V3.H8] // line 2: 16 rows × 1 pair
	WORD $0x4f48f818 // bfdot v24.4s, v0.8h, v8.2h[2]
	WORD $0x4f48f839 // bfdot v25.4s, v1.8h, v8.2h[2]
	WORD $0x4f48f85a // bfdot v26.4s, v2.8h, v8.2h[2]
	WORD $0x4f48f87b // bfdot v27.4s, v3.8h, v8.2h[2]
	VLD1.P 64(R0), [V4.H8, V5.H8, V6.H8, V7.H8] // line 3: 16 rows × 1 pair
	WORD $0x4f68f89c // bfdot v28.4s, v4.8h, v8.2h[3]
	WORD $0x4f68f8bd // bfdot v29.4s, v5.8h, v8.2h[3]
	WORD $0x4f68f8de // bfdot v30.4s, v6.8h, v8.2h[3]
	WORD $0x4f68f8ff // bfdot v31.4s, v7.8h, v8.2h[3]
	SUBS $1, R12, R12
	BNE  b1quad

b1tail:
	CBZ  R13, b1sum

b1one:
	VLD1R.P 4(R8), [V8.S4] // row 0: one pair
	VLD1.P 64(R0), [V0.H8, V1.H8, V2.H8, V3.H8]
	WORD $0x4f48f010 // bfdot v16.4s, v0.8h, v8.2h[0]
	WORD $0x4f48f031 // bfdot v17.4s, v1.8h, v8.2h[0]
	WORD $0x4f48f052 // bfdot v18.4s, v2.8h, v8.2h[0]
	WORD $0x4f48f073 // bfdot v19.4s, v3.8h, v8.2h[0]
	SUBS $1, R13, R13
	BNE  b1one

b1sum:
	WORD $0x4e38d610 // fadd v16.4s, v16.4s, v24.4s
	WORD $0x4e39d631 // fadd v17.4s, v17.4s, v25.4s
	WORD $0x4e3ad652 // fadd v18.4s, v18.4s, v26.4s
	WORD $0x4e3bd673 // fadd v19.4s, v19.4s, v27.4s
	WORD $0x4e3cd694 // fadd v20.4s, v20.4s, v28.4s
	WORD $0x4e3dd6b5 // fadd v21.4s, v21.4s, v29.4s
	WORD $0x4e3ed6d6 // fadd v22.4s, v22.4s, v30.4s
	WORD $0x4e3fd6f7 // fadd v23.4s, v23.4s, v31.4s
	WORD $0x4e34d610 // fadd v16.4s, v16.4s, v20.4s
	WORD $0x4e35d631 // fadd v17.4s, v17.4s, v21.4s
	WORD $0x4e36d652 // fadd v18.4s, v18.4s, v22.4s
	WORD $0x4e37d673 // fadd v19.4s, v19.4s, v23.4s
	MOVD R5, R14
	CBZ  R7, b1store
	VLD1 (R14), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD $0x4e20d610 // fadd v16.4s, v16.4s, v0.4s
	WORD $0x4e21d631 // fadd v17.4s, v17.4s, v1.4s
	WORD $0x4e22d652 // fadd v18.4s, v18.4s, v2.4s
	WORD $0x4e23d673 // fadd v19.4s, v19.4s, v3.4s

b1store:
	VST1 [V16.S4, V17.S4, V18.S4, V19.S4], (R14)
	ADD  $64, R5, R5
	SUBS $1, R1, R1
	BNE  b1panel

b1done:
	RET

// func bf16NEON_2x16(w *byte, np, npairs int, xb *uint16, ldx int, y *float32, ldy int, acc int)
TEXT ·bf16NEON_2x16(SB), NOSPLIT, $0-64
	MOVD w+0(FP), R0
	MOVD np+8(FP), R1
	MOVD npairs+16(FP), R2
	MOVD xb+24(FP), R3
	MOVD ldx+32(FP), R4
	MOVD y+40(FP), R5
	MOVD ldy+48(FP), R6
	LSL  $2, R6, R6
	MOVD acc+56(FP), R7
	CBZ  R1, b2done

b2panel:
	MOVD R3, R8
	ADD  R4, R8, R9
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
	LSR  $2, R2, R12 // steps of 4 pairs
	AND  $3, R2, R13 // tail pairs
	CBZ  R12, b2tail

b2quad:
	VLD1.P 16(R8), [V8.H8] // row 0: 4 pairs
	VLD1.P 16(R9), [V9.H8] // row 1: 4 pairs
	VLD1.P 64(R0), [V0.H8, V1.H8, V2.H8, V3.H8] // line 0: 16 rows × 1 pair
	WORD $0x4f48f010 // bfdot v16.4s, v0.8h, v8.2h[0]
	WORD $0x4f48f031 // bfdot v17.4s, v1.8h, v8.2h[0]
	WORD $0x4f48f052 // bfdot v18.4s, v2.8h, v8.2h[0]
	WORD $0x4f48f073 // bfdot v19.4s, v3.8h, v8.2h[0]
	WORD $0x4f49f018 // bfdot v24.4s, v0.8h, v9.2h[0]
	WORD $0x4f49f039 // bfdot v25.4s, v1.8h, v9.2h[0]
	WORD $0x4f49f05a // bfdot v26.4s, v2.8h, v9.2h[0]
	WORD $0x4f49f07b // bfdot v27.4s, v3.8h, v9.2h[0]
	VLD1.P 64(R0), [V4.H8, V5.H8, V6.H8, V7.H8] // line 1: 16 rows × 1 pair
	WORD $0x4f68f094 // bfdot v20.4s, v4.8h, v8.2h[1]
	WORD $0x4f68f0b5 // bfdot v21.4s, v5.8h, v8.2h[1]
	WORD $0x4f68f0d6 // bfdot v22.4s, v6.8h, v8.2h[1]
	WORD $0x4f68f0f7 // bfdot v23.4s, v7.8h, v8.2h[1]
	WORD $0x4f69f09c // bfdot v28.4s, v4.8h, v9.2h[1]
	WORD $0x4f69f0bd // bfdot v29.4s, v5.8h, v9.2h[1]
	WORD $0x4f69f0de // bfdot v30.4s, v6.8h, v9.2h[1]
	WORD $0x4f69f0ff // bfdot v31.4s, v7.8h, v9.2h[1]
	VLD1.P 64(R0), [V0.H8, V1.H8, V2.H8, V3.H8] // line 2: 16 rows × 1 pair
	WORD $0x4f48f810 // bfdot v16.4s, v0.8h, v8.2h[2]
	WORD $0x4f48f831 // bfdot v17.4s, v1.8h, v8.2h[2]
	WORD $0x4f48f852 // bfdot v18.4s, v2.8h, v8.2h[2]
	WORD $0x4f48f873 // bfdot v19.4s, v3.8h, v8.2h[2]
	WORD $0x4f49f818 // bfdot v24.4s, v0.8h, v9.2h[2]
	WORD $0x4f49f839 // bfdot v25.4s, v1.8h, v9.2h[2]
	WORD $0x4f49f85a // bfdot v26.4s, v2.8h, v9.2h[2]
	WORD $0x4f49f87b // bfdot v27.4s, v3.8h, v9.2h[2]
	VLD1.P 64(R0), [V4.H8, V5.H8, V6.H8, V7.H8] // line 3: 16 rows × 1 pair
	WORD $0x4f68f894 // bfdot v20.4s, v4.8h, v8.2h[3]
	WORD $0x4f68f8b5 // bfdot v21.4s, v5.8h, v8.2h[3]
	WORD $0x4f68f8d6 // bfdot v22.4s, v6.8h, v8.2h[3]
	WORD $0x4f68f8f7 // bfdot v23.4s, v7.8h, v8.2h[3]
	WORD $0x4f69f89c // bfdot v28.4s, v4.8h, v9.2h[3]
	WORD $0x4f69f8bd // bfdot v29.4s, v5.8h, v9.2h[3]
	WORD $0x4f69f8de // bfdot v30.4s, v6.8h, v9.2h[3]
	WORD $0x4f69f8ff // bfdot v31.4s, v7.8h, v9.2h[3]
	SUBS $1, R12, R12
	BNE  b2quad

b2tail:
	CBZ  R13, b2sum

b2one:
	VLD1R.P 4(R8), [V8.S4] // row 0: one pair
	VLD1R.P 4(R9), [V9.S4] // row 1: one pair
	VLD1.P 64(R0), [V0.H8, V1.H8, V2.H8, V3.H8]
	WORD $0x4f48f010 // bfdot v16.4s, v0.8h, v8.2h[0]
	WORD $0x4f48f031 // bfdot v17.4s, v1.8h, v8.2h[0]
	WORD $0x4f48f052 // bfdot v18.4s, v2.8h, v8.2h[0]
	WORD $0x4f48f073 // bfdot v19.4s, v3.8h, v8.2h[0]
	WORD $0x4f49f018 // bfdot v24.4s, v0.8h, v9.2h[0]
	WORD $0x4f49f039 // bfdot v25.4s, v1.8h, v9.2h[0]
	WORD $0x4f49f05a // bfdot v26.4s, v2.8h, v9.2h[0]
	WORD $0x4f49f07b // bfdot v27.4s, v3.8h, v9.2h[0]
	SUBS $1, R13, R13
	BNE  b2one

b2sum:
	WORD $0x4e34d610 // fadd v16.4s, v16.4s, v20.4s
	WORD $0x4e35d631 // fadd v17.4s, v17.4s, v21.4s
	WORD $0x4e36d652 // fadd v18.4s, v18.4s, v22.4s
	WORD $0x4e37d673 // fadd v19.4s, v19.4s, v23.4s
	WORD $0x4e3cd718 // fadd v24.4s, v24.4s, v28.4s
	WORD $0x4e3dd739 // fadd v25.4s, v25.4s, v29.4s
	WORD $0x4e3ed75a // fadd v26.4s, v26.4s, v30.4s
	WORD $0x4e3fd77b // fadd v27.4s, v27.4s, v31.4s
	MOVD R5, R14
	ADD  R6, R14, R15
	CBZ  R7, b2store
	VLD1 (R14), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD $0x4e20d610 // fadd v16.4s, v16.4s, v0.4s
	WORD $0x4e21d631 // fadd v17.4s, v17.4s, v1.4s
	WORD $0x4e22d652 // fadd v18.4s, v18.4s, v2.4s
	WORD $0x4e23d673 // fadd v19.4s, v19.4s, v3.4s
	VLD1 (R15), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD $0x4e20d718 // fadd v24.4s, v24.4s, v0.4s
	WORD $0x4e21d739 // fadd v25.4s, v25.4s, v1.4s
	WORD $0x4e22d75a // fadd v26.4s, v26.4s, v2.4s
	WORD $0x4e23d77b // fadd v27.4s, v27.4s, v3.4s

b2store:
	VST1 [V16.S4, V17.S4, V18.S4, V19.S4], (R14)
	VST1 [V24.S4, V25.S4, V26.S4, V27.S4], (R15)
	ADD  $64, R5, R5
	SUBS $1, R1, R1
	BNE  b2panel

b2done:
	RET

// func bf16NEON_3x16(w *byte, np, npairs int, xb *uint16, ldx int, y *float32, ldy int, acc int)
TEXT ·bf16NEON_3x16(SB), NOSPLIT, $0-64
	MOVD w+0(FP), R0
	MOVD np+8(FP), R1
	MOVD npairs+16(FP), R2
	MOVD xb+24(FP), R3
	MOVD ldx+32(FP), R4
	MOVD y+40(FP), R5
	MOVD ldy+48(FP), R6
	LSL  $2, R6, R6
	MOVD acc+56(FP), R7
	CBZ  R1, b3done

b3panel:
	MOVD R3, R8
	ADD  R4, R8, R9
	ADD  R4, R9, R10
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
	LSR  $2, R2, R12 // steps of 4 pairs
	AND  $3, R2, R13 // tail pairs
	CBZ  R12, b3tail

b3quad:
	VLD1.P 16(R8), [V8.H8] // row 0: 4 pairs
	VLD1.P 16(R9), [V9.H8] // row 1: 4 pairs
	VLD1.P 16(R10), [V10.H8] // row 2: 4 pairs
	VLD1.P 64(R0), [V0.H8, V1.H8, V2.H8, V3.H8] // line 0: 16 rows × 1 pair
	WORD $0x4f48f010 // bfdot v16.4s, v0.8h, v8.2h[0]
	WORD $0x4f48f031 // bfdot v17.4s, v1.8h, v8.2h[0]
	WORD $0x4f48f052 // bfdot v18.4s, v2.8h, v8.2h[0]
	WORD $0x4f48f073 // bfdot v19.4s, v3.8h, v8.2h[0]
	WORD $0x4f49f014 // bfdot v20.4s, v0.8h, v9.2h[0]
	WORD $0x4f49f035 // bfdot v21.4s, v1.8h, v9.2h[0]
	WORD $0x4f49f056 // bfdot v22.4s, v2.8h, v9.2h[0]
	WORD $0x4f49f077 // bfdot v23.4s, v3.8h, v9.2h[0]
	WORD $0x4f4af018 // bfdot v24.4s, v0.8h, v10.2h[0]
	WORD $0x4f4af039 // bfdot v25.4s, v1.8h, v10.2h[0]
	WORD $0x4f4af05a // bfdot v26.4s, v2.8h, v10.2h[0]
	WORD $0x4f4af07b // bfdot v27.4s, v3.8h, v10.2h[0]
	VLD1.P 64(R0), [V4.H8, V5.H8, V6.H8, V7.H8] // line 1: 16 rows × 1 pair
	WORD $0x4f68f090 // bfdot v16.4s, v4.8h, v8.2h[1]
	WORD $0x4f68f0b1 // bfdot v17.4s, v5.8h, v8.2h[1]
	WORD $0x4f68f0d2 // bfdot v18.4s, v6.8h, v8.2h[1]
	WORD $0x4f68f0f3 // bfdot v19.4s, v7.8h, v8.2h[1]
	WORD $0x4f69f094 // bfdot v20.4s, v4.8h, v9.2h[1]
	WORD $0x4f69f0b5 // bfdot v21.4s, v5.8h, v9.2h[1]
	WORD $0x4f69f0d6 // bfdot v22.4s, v6.8h, v9.2h[1]
	WORD $0x4f69f0f7 // bfdot v23.4s, v7.8h, v9.2h[1]
	WORD $0x4f6af098 // bfdot v24.4s, v4.8h, v10.2h[1]
	WORD $0x4f6af0b9 // bfdot v25.4s, v5.8h, v10.2h[1]
	WORD $0x4f6af0da // bfdot v26.4s, v6.8h, v10.2h[1]
	WORD $0x4f6af0fb // bfdot v27.4s, v7.8h, v10.2h[1]
	VLD1.P 64(R0), [V0.H8, V1.H8, V2.H8, V3.H8] // line 2: 16 rows × 1 pair
	WORD $0x4f48f810 // bfdot v16.4s, v0.8h, v8.2h[2]
	WORD $0x4f48f831 // bfdot v17.4s, v1.8h, v8.2h[2]
	WORD $0x4f48f852 // bfdot v18.4s, v2.8h, v8.2h[2]
	WORD $0x4f48f873 // bfdot v19.4s, v3.8h, v8.2h[2]
	WORD $0x4f49f814 // bfdot v20.4s, v0.8h, v9.2h[2]
	WORD $0x4f49f835 // bfdot v21.4s, v1.8h, v9.2h[2]
	WORD $0x4f49f856 // bfdot v22.4s, v2.8h, v9.2h[2]
	WORD $0x4f49f877 // bfdot v23.4s, v3.8h, v9.2h[2]
	WORD $0x4f4af818 // bfdot v24.4s, v0.8h, v10.2h[2]
	WORD $0x4f4af839 // bfdot v25.4s, v1.8h, v10.2h[2]
	WORD $0x4f4af85a // bfdot v26.4s, v2.8h, v10.2h[2]
	WORD $0x4f4af87b // bfdot v27.4s, v3.8h, v10.2h[2]
	VLD1.P 64(R0), [V4.H8, V5.H8, V6.H8, V7.H8] // line 3: 16 rows × 1 pair
	WORD $0x4f68f890 // bfdot v16.4s, v4.8h, v8.2h[3]
	WORD $0x4f68f8b1 // bfdot v17.4s, v5.8h, v8.2h[3]
	WORD $0x4f68f8d2 // bfdot v18.4s, v6.8h, v8.2h[3]
	WORD $0x4f68f8f3 // bfdot v19.4s, v7.8h, v8.2h[3]
	WORD $0x4f69f894 // bfdot v20.4s, v4.8h, v9.2h[3]
	WORD $0x4f69f8b5 // bfdot v21.4s, v5.8h, v9.2h[3]
	WORD $0x4f69f8d6 // bfdot v22.4s, v6.8h, v9.2h[3]
	WORD $0x4f69f8f7 // bfdot v23.4s, v7.8h, v9.2h[3]
	WORD $0x4f6af898 // bfdot v24.4s, v4.8h, v10.2h[3]
	WORD $0x4f6af8b9 // bfdot v25.4s, v5.8h, v10.2h[3]
	WORD $0x4f6af8da // bfdot v26.4s, v6.8h, v10.2h[3]
	WORD $0x4f6af8fb // bfdot v27.4s, v7.8h, v10.2h[3]
	SUBS $1, R12, R12
	BNE  b3quad

b3tail:
	CBZ  R13, b3sum

b3one:
	VLD1R.P 4(R8), [V8.S4] // row 0: one pair
	VLD1R.P 4(R9), [V9.S4] // row 1: one pair
	VLD1R.P 4(R10), [V10.S4] // row 2: one pair
	VLD1.P 64(R0), [V0.H8, V1.H8, V2.H8, V3.H8]
	WORD $0x4f48f010 // bfdot v16.4s, v0.8h, v8.2h[0]
	WORD $0x4f48f031 // bfdot v17.4s, v1.8h, v8.2h[0]
	WORD $0x4f48f052 // bfdot v18.4s, v2.8h, v8.2h[0]
	WORD $0x4f48f073 // bfdot v19.4s, v3.8h, v8.2h[0]
	WORD $0x4f49f014 // bfdot v20.4s, v0.8h, v9.2h[0]
	WORD $0x4f49f035 // bfdot v21.4s, v1.8h, v9.2h[0]
	WORD $0x4f49f056 // bfdot v22.4s, v2.8h, v9.2h[0]
	WORD $0x4f49f077 // bfdot v23.4s, v3.8h, v9.2h[0]
	WORD $0x4f4af018 // bfdot v24.4s, v0.8h, v10.2h[0]
	WORD $0x4f4af039 // bfdot v25.4s, v1.8h, v10.2h[0]
	WORD $0x4f4af05a // bfdot v26.4s, v2.8h, v10.2h[0]
	WORD $0x4f4af07b // bfdot v27.4s, v3.8h, v10.2h[0]
	SUBS $1, R13, R13
	BNE  b3one

b3sum:
	MOVD R5, R14
	ADD  R6, R14, R15
	ADD  R6, R15, R16
	CBZ  R7, b3store
	VLD1 (R14), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD $0x4e20d610 // fadd v16.4s, v16.4s, v0.4s
	WORD $0x4e21d631 // fadd v17.4s, v17.4s, v1.4s
	WORD $0x4e22d652 // fadd v18.4s, v18.4s, v2.4s
	WORD $0x4e23d673 // fadd v19.4s, v19.4s, v3.4s
	VLD1 (R15), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD $0x4e20d694 // fadd v20.4s, v20.4s, v0.4s
	WORD $0x4e21d6b5 // fadd v21.4s, v21.4s, v1.4s
	WORD $0x4e22d6d6 // fadd v22.4s, v22.4s, v2.4s
	WORD $0x4e23d6f7 // fadd v23.4s, v23.4s, v3.4s
	VLD1 (R16), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD $0x4e20d718 // fadd v24.4s, v24.4s, v0.4s
	WORD $0x4e21d739 // fadd v25.4s, v25.4s, v1.4s
	WORD $0x4e22d75a // fadd v26.4s, v26.4s, v2.4s
	WORD $0x4e23d77b // fadd v27.4s, v27.4s, v3.4s

b3store:
	VST1 [V16.S4, V17.S4, V18.S4, V19.S4], (R14)
	VST1 [V20.S4, V21.S4, V22.S4, V23.S4], (R15)
	VST1 [V24.S4, V25.S4, V26.S4, V27.S4], (R16)
	ADD  $64, R5, R5
	SUBS $1, R1, R1
	BNE  b3panel

b3done:
	RET

// func bf16NEON_4x16(w *byte, np, npairs int, xb *uint16, ldx int, y *float32, ldy int, acc int)
TEXT ·bf16NEON_4x16(SB), NOSPLIT, $0-64
	MOVD w+0(FP), R0
	MOVD np+8(FP), R1
	MOVD npairs+16(FP), R2
	MOVD xb+24(FP), R3
	MOVD ldx+32(FP), R4
	MOVD y+40(FP), R5
	MOVD ldy+48(FP), R6
	LSL  $2, R6, R6
	MOVD acc+56(FP), R7
	CBZ  R1, b4done

b4panel:
	MOVD R3, R8
	ADD  R4, R8, R9
	ADD  R4, R9, R10
	ADD  R4, R10, R11
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
	LSR  $2, R2, R12 // steps of 4 pairs
	AND  $3, R2, R13 // tail pairs
	CBZ  R12, b4tail

b4quad:
	VLD1.P 16(R8), [V8.H8] // row 0: 4 pairs
	VLD1.P 16(R9), [V9.H8] // row 1: 4 pairs
	VLD1.P 16(R10), [V10.H8] // row 2: 4 pairs
	VLD1.P 16(R11), [V11.H8] // row 3: 4 pairs
	VLD1.P 64(R0), [V0.H8, V1.H8, V2.H8, V3.H8] // line 0: 16 rows × 1 pair
	WORD $0x4f48f010 // bfdot v16.4s, v0.8h, v8.2h[0]
	WORD $0x4f48f031 // bfdot v17.4s, v1.8h, v8.2h[0]
	WORD $0x4f48f052 // bfdot v18.4s, v2.8h, v8.2h[0]
	WORD $0x4f48f073 // bfdot v19.4s, v3.8h, v8.2h[0]
	WORD $0x4f49f014 // bfdot v20.4s, v0.8h, v9.2h[0]
	WORD $0x4f49f035 // bfdot v21.4s, v1.8h, v9.2h[0]
	WORD $0x4f49f056 // bfdot v22.4s, v2.8h, v9.2h[0]
	WORD $0x4f49f077 // bfdot v23.4s, v3.8h, v9.2h[0]
	WORD $0x4f4af018 // bfdot v24.4s, v0.8h, v10.2h[0]
	WORD $0x4f4af039 // bfdot v25.4s, v1.8h, v10.2h[0]
	WORD $0x4f4af05a // bfdot v26.4s, v2.8h, v10.2h[0]
	WORD $0x4f4af07b // bfdot v27.4s, v3.8h, v10.2h[0]
	WORD $0x4f4bf01c // bfdot v28.4s, v0.8h, v11.2h[0]
	WORD $0x4f4bf03d // bfdot v29.4s, v1.8h, v11.2h[0]
	WORD $0x4f4bf05e // bfdot v30.4s, v2.8h, v11.2h[0]
	WORD $0x4f4bf07f // bfdot v31.4s, v3.8h, v11.2h[0]
	VLD1.P 64(R0), [V4.H8, V5.H8, V6.H8, V7.H8] // line 1: 16 rows × 1 pair
	WORD $0x4f68f090 // bfdot v16.4s, v4.8h, v8.2h[1]
	WORD $0x4f68f0b1 // bfdot v17.4s, v5.8h, v8.2h[1]
	WORD $0x4f68f0d2 // bfdot v18.4s, v6.8h, v8.2h[1]
	WORD $0x4f68f0f3 // bfdot v19.4s, v7.8h, v8.2h[1]
	WORD $0x4f69f094 // bfdot v20.4s, v4.8h, v9.2h[1]
	WORD $0x4f69f0b5 // bfdot v21.4s, v5.8h, v9.2h[1]
	WORD $0x4f69f0d6 // bfdot v22.4s, v6.8h, v9.2h[1]
	WORD $0x4f69f0f7 // bfdot v23.4s, v7.8h, v9.2h[1]
	WORD $0x4f6af098 // bfdot v24.4s, v4.8h, v10.2h[1]
	WORD $0x4f6af0b9 // bfdot v25.4s, v5.8h, v10.2h[1]
	WORD $0x4f6af0da // bfdot v26.4s, v6.8h, v10.2h[1]
	WORD $0x4f6af0fb // bfdot v27.4s, v7.8h, v10.2h[1]
	WORD $0x4f6bf09c // bfdot v28.4s, v4.8h, v11.2h[1]
	WORD $0x4f6bf0bd // bfdot v29.4s, v5.8h, v11.2h[1]
	WORD $0x4f6bf0de // bfdot v30.4s, v6.8h, v11.2h[1]
	WORD $0x4f6bf0ff // bfdot v31.4s, v7.8h, v11.2h[1]
	VLD1.P 64(R0), [V0.H8, V1.H8, V2.H8, V3.H8] // line 2: 16 rows × 1 pair
	WORD $0x4f48f810 // bfdot v16.4s, v0.8h, v8.2h[2]
	WORD $0x4f48f831 // bfdot v17.4s, v1.8h, v8.2h[2]
	WORD $0x4f48f852 // bfdot v18.4s, v2.8h, v8.2h[2]
	WORD $0x4f48f873 // bfdot v19.4s, v3.8h, v8.2h[2]
	WORD $0x4f49f814 // bfdot v20.4s, v0.8h, v9.2h[2]
	WORD $0x4f49f835 // bfdot v21.4s, v1.8h, v9.2h[2]
	WORD $0x4f49f856 // bfdot v22.4s, v2.8h, v9.2h[2]
	WORD $0x4f49f877 // bfdot v23.4s, v3.8h, v9.2h[2]
	WORD $0x4f4af818 // bfdot v24.4s, v0.8h, v10.2h[2]
	WORD $0x4f4af839 // bfdot v25.4s, v1.8h, v10.2h[2]
	WORD $0x4f4af85a // bfdot v26.4s, v2.8h, v10.2h[2]
	WORD $0x4f4af87b // bfdot v27.4s, v3.8h, v10.2h[2]
	WORD $0x4f4bf81c // bfdot v28.4s, v0.8h, v11.2h[2]
	WORD $0x4f4bf83d // bfdot v29.4s, v1.8h, v11.2h[2]
	WORD $0x4f4bf85e // bfdot v30.4s, v2.8h, v11.2h[2]
	WORD $0x4f4bf87f // bfdot v31.4s, v3.8h, v11.2h[2]
	VLD1.P 64(R0), [V4.H8, V5.H8, V6.H8, V7.H8] // line 3: 16 rows × 1 pair
	WORD $0x4f68f890 // bfdot v16.4s, v4.8h, v8.2h[3]
	WORD $0x4f68f8b1 // bfdot v17.4s, v5.8h, v8.2h[3]
	WORD $0x4f68f8d2 // bfdot v18.4s, v6.8h, v8.2h[3]
	WORD $0x4f68f8f3 // bfdot v19.4s, v7.8h, v8.2h[3]
	WORD $0x4f69f894 // bfdot v20.4s, v4.8h, v9.2h[3]
	WORD $0x4f69f8b5 // bfdot v21.4s, v5.8h, v9.2h[3]
	WORD $0x4f69f8d6 // bfdot v22.4s, v6.8h, v9.2h[3]
	WORD $0x4f69f8f7 // bfdot v23.4s, v7.8h, v9.2h[3]
	WORD $0x4f6af898 // bfdot v24.4s, v4.8h, v10.2h[3]
	WORD $0x4f6af8b9 // bfdot v25.4s, v5.8h, v10.2h[3]
	WORD $0x4f6af8da // bfdot v26.4s, v6.8h, v10.2h[3]
	WORD $0x4f6af8fb // bfdot v27.4s, v7.8h, v10.2h[3]
	WORD $0x4f6bf89c // bfdot v28.4s, v4.8h, v11.2h[3]
	WORD $0x4f6bf8bd // bfdot v29.4s, v5.8h, v11.2h[3]
	WORD $0x4f6bf8de // bfdot v30.4s, v6.8h, v11.2h[3]
	WORD $0x4f6bf8ff // bfdot v31.4s, v7.8h, v11.2h[3]
	SUBS $1, R12, R12
	BNE  b4quad

b4tail:
	CBZ  R13, b4sum

b4one:
	VLD1R.P 4(R8), [V8.S4] // row 0: one pair
	VLD1R.P 4(R9), [V9.S4] // row 1: one pair
	VLD1R.P 4(R10), [V10.S4] // row 2: one pair
	VLD1R.P 4(R11), [V11.S4] // row 3: one pair
	VLD1.P 64(R0), [V0.H8, V1.H8, V2.H8, V3.H8]
	WORD $0x4f48f010 // bfdot v16.4s, v0.8h, v8.2h[0]
	WORD $0x4f48f031 // bfdot v17.4s, v1.8h, v8.2h[0]
	WORD $0x4f48f052 // bfdot v18.4s, v2.8h, v8.2h[0]
	WORD $0x4f48f073 // bfdot v19.4s, v3.8h, v8.2h[0]
	WORD $0x4f49f014 // bfdot v20.4s, v0.8h, v9.2h[0]
	WORD $0x4f49f035 // bfdot v21.4s, v1.8h, v9.2h[0]
	WORD $0x4f49f056 // bfdot v22.4s, v2.8h, v9.2h[0]
	WORD $0x4f49f077 // bfdot v23.4s, v3.8h, v9.2h[0]
	WORD $0x4f4af018 // bfdot v24.4s, v0.8h, v10.2h[0]
	WORD $0x4f4af039 // bfdot v25.4s, v1.8h, v10.2h[0]
	WORD $0x4f4af05a // bfdot v26.4s, v2.8h, v10.2h[0]
	WORD $0x4f4af07b // bfdot v27.4s, v3.8h, v10.2h[0]
	WORD $0x4f4bf01c // bfdot v28.4s, v0.8h, v11.2h[0]
	WORD $0x4f4bf03d // bfdot v29.4s, v1.8h, v11.2h[0]
	WORD $0x4f4bf05e // bfdot v30.4s, v2.8h, v11.2h[0]
	WORD $0x4f4bf07f // bfdot v31.4s, v3.8h, v11.2h[0]
	SUBS $1, R13, R13
	BNE  b4one

b4sum:
	MOVD R5, R14
	ADD  R6, R14, R15
	ADD  R6, R15, R16
	ADD  R6, R16, R17
	CBZ  R7, b4store
	VLD1 (R14), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD $0x4e20d610 // fadd v16.4s, v16.4s, v0.4s
	WORD $0x4e21d631 // fadd v17.4s, v17.4s, v1.4s
	WORD $0x4e22d652 // fadd v18.4s, v18.4s, v2.4s
	WORD $0x4e23d673 // fadd v19.4s, v19.4s, v3.4s
	VLD1 (R15), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD $0x4e20d694 // fadd v20.4s, v20.4s, v0.4s
	WORD $0x4e21d6b5 // fadd v21.4s, v21.4s, v1.4s
	WORD $0x4e22d6d6 // fadd v22.4s, v22.4s, v2.4s
	WORD $0x4e23d6f7 // fadd v23.4s, v23.4s, v3.4s
	VLD1 (R16), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD $0x4e20d718 // fadd v24.4s, v24.4s, v0.4s
	WORD $0x4e21d739 // fadd v25.4s, v25.4s, v1.4s
	WORD $0x4e22d75a // fadd v26.4s, v26.4s, v2.4s
	WORD $0x4e23d77b // fadd v27.4s, v27.4s, v3.4s
	VLD1 (R17), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD $0x4e20d79c // fadd v28.4s, v28.4s, v0.4s
	WORD $0x4e21d7bd // fadd v29.4s, v29.4s, v1.4s
	WORD $0x4e22d7de // fadd v30.4s, v30.4s, v2.4s
	WORD $0x4e23d7ff // fadd v31.4s, v31.4s, v3.4s

b4store:
	VST1 [V16.S4, V17.S4, V18.S4, V19.S4], (R14)
	VST1 [V20.S4, V21.S4, V22.S4, V23.S4], (R15)
	VST1 [V24.S4, V25.S4, V26.S4, V27.S4], (R16)
	VST1 [V28.S4, V29.S4, V30.S4, V31.S4], (R17)
	ADD  $64, R5, R5
	SUBS $1, R1, R1
	BNE  b4panel

b4done:
	RET
