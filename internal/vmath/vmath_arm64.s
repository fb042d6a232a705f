//go:build arm64 && gc && !purego

// Hand-written NEON exp (see vmath_arm64.go for the Go semantics): the
// range reduction and Cephes polynomial of expAVX2, 2ⁿ built in the
// exponent bits. Vector FMIN/FMAX/FMUL/FADD/FMLS/FRINTN/FCVTNS/ADD/SHL are
// WORD-encoded, checked against GNU as by _asm/armwords.

#include "textflag.h"

// func expNEON(dst []float32, src []float32)
TEXT ·expNEON(SB), NOSPLIT, $0-48
	MOVD dst_base+0(FP), R0
	MOVD src_base+24(FP), R1
	MOVD src_len+32(FP), R2
	LSR  $2, R2, R2
	CBZ  R2, done
	MOVW $0x42b0999a, R3 // 88.3
	VDUP R3, V16.S4
	MOVW $0xc2ae999a, R3 // -87.3
	VDUP R3, V17.S4
	MOVW $0x3fb8aa3b, R3 // log2(e)
	VDUP R3, V18.S4
	MOVW $0x3f318000, R3 // ln2 hi
	VDUP R3, V19.S4
	MOVW $0xb95e8083, R3 // ln2 lo
	VDUP R3, V20.S4
	MOVW $0x39506967, R3 // p0
	VDUP R3, V21.S4
	MOVW $0x3ab743ce, R3 // p1
	VDUP R3, V22.S4
	MOVW $0x3c088908, R3 // p2
	VDUP R3, V23.S4
	MOVW $0x3d2aa9c1, R3 // p3
	VDUP R3, V24.S4
	MOVW $0x3e2aaaaa, R3 // p4
	VDUP R3, V25.S4
	MOVW $0x3f000000, R3 // p5
	VDUP R3, V26.S4
	MOVW $0x3f800000, R3 // 1
	VDUP R3, V27.S4
	MOVW $127, R3
	VDUP R3, V28.S4

loop:
	VLD1.P 16(R1), [V0.S4]
	WORD $0x4eb0f400 // fmin v0.4s, v0.4s, v16.4s
	WORD $0x4e31f400 // fmax v0.4s, v0.4s, v17.4s
	WORD $0x6e32dc01 // fmul v1.4s, v0.4s, v18.4s
	WORD $0x4e218821 // frintn v1.4s, v1.4s
	WORD $0x4eb3cc20 // fmls v0.4s, v1.4s, v19.4s
	WORD $0x4eb4cc20 // fmls v0.4s, v1.4s, v20.4s
	VMOV V22.B16, V2.B16
	VFMLA V21.S4, V0.S4, V2.S4 // y = p1 + p0·r
	VMOV V23.B16, V3.B16
	VFMLA V2.S4, V0.S4, V3.S4  // y = p2 + y·r
	VMOV V24.B16, V2.B16
	VFMLA V3.S4, V0.S4, V2.S4  // y = p3 + y·r
	VMOV V25.B16, V3.B16
	VFMLA V2.S4, V0.S4, V3.S4  // y = p4 + y·r
	VMOV V26.B16, V2.B16
	VFMLA V3.S4, V0.S4, V2.S4  // y = p5 + y·r
	WORD $0x6e20dc04 // fmul v4.4s, v0.4s, v0.4s
	VMOV V0.B16, V3.B16
	VFMLA V2.S4, V4.S4, V3.S4  // y = r + y·r²
	WORD $0x4e3bd463 // fadd v3.4s, v3.4s, v27.4s
	WORD $0x4e21a821 // fcvtns v1.4s, v1.4s
	WORD $0x4ebc8421 // add v1.4s, v1.4s, v28.4s
	WORD $0x4f375421 // shl v1.4s, v1.4s, #23
	WORD $0x6e21dc63 // fmul v3.4s, v3.4s, v1.4s
	VST1.P [V3.S4], 16(R0)
	SUBS $1, R2, R2
	BNE  loop

done:
	RET
