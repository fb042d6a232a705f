//go:build arm64 && gc && !purego

// Compute-ceiling microkernels for arm64: 24 independent FMA chains
// (enough to cover a 4-cycle latency on 4+ FMA pipes), NEON and SVE; and
// 24 chains of the FEAT_BF16 BFDOT and BFMMLA (WORD-encoded, checked
// against GNU as by _asm/armwords).

#include "textflag.h"

// func fmaNEON(iters int) float32
TEXT ·fmaNEON(SB), NOSPLIT, $0-12
	MOVD iters+0(FP), R0
	FMOVS $1.0, F0
	VDUP V0.S[0], V0.S4
	VEOR V8.B16, V8.B16, V8.B16
	VEOR V9.B16, V9.B16, V9.B16
	VEOR V10.B16, V10.B16, V10.B16
	VEOR V11.B16, V11.B16, V11.B16
	VEOR V12.B16, V12.B16, V12.B16
	VEOR V13.B16, V13.B16, V13.B16
	VEOR V14.B16, V14.B16, V14.B16
	VEOR V15.B16, V15.B16, V15.B16
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
	CBZ  R0, ndone
nloop:
	VFMLA V0.S4, V0.S4, V8.S4
	VFMLA V0.S4, V0.S4, V9.S4
	VFMLA V0.S4, V0.S4, V10.S4
	VFMLA V0.S4, V0.S4, V11.S4
	VFMLA V0.S4, V0.S4, V12.S4
	VFMLA V0.S4, V0.S4, V13.S4
	VFMLA V0.S4, V0.S4, V14.S4
	VFMLA V0.S4, V0.S4, V15.S4
	VFMLA V0.S4, V0.S4, V16.S4
	VFMLA V0.S4, V0.S4, V17.S4
	VFMLA V0.S4, V0.S4, V18.S4
	VFMLA V0.S4, V0.S4, V19.S4
	VFMLA V0.S4, V0.S4, V20.S4
	VFMLA V0.S4, V0.S4, V21.S4
	VFMLA V0.S4, V0.S4, V22.S4
	VFMLA V0.S4, V0.S4, V23.S4
	VFMLA V0.S4, V0.S4, V24.S4
	VFMLA V0.S4, V0.S4, V25.S4
	VFMLA V0.S4, V0.S4, V26.S4
	VFMLA V0.S4, V0.S4, V27.S4
	VFMLA V0.S4, V0.S4, V28.S4
	VFMLA V0.S4, V0.S4, V29.S4
	VFMLA V0.S4, V0.S4, V30.S4
	VFMLA V0.S4, V0.S4, V31.S4
	SUBS $1, R0, R0
	BNE  nloop
ndone:
	FMOVS F31, ret+8(FP)
	RET

// func fmaSVE(iters int) float32
TEXT ·fmaSVE(SB), NOSPLIT, $0-12
	MOVD iters+0(FP), R0
	WORD $0x2598e3e0 // ptrue p0.s
	WORD $0x25b9ce00 // fmov z0.s, #1.0
	WORD $0x25b8c008 // dup z8.s, #0
	WORD $0x25b8c009 // dup z9.s, #0
	WORD $0x25b8c00a // dup z10.s, #0
	WORD $0x25b8c00b // dup z11.s, #0
	WORD $0x25b8c00c // dup z12.s, #0
	WORD $0x25b8c00d // dup z13.s, #0
	WORD $0x25b8c00e // dup z14.s, #0
	WORD $0x25b8c00f // dup z15.s, #0
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
	CBZ  R0, sdone
sloop:
	WORD $0x65a00008 // fmla z8.s, p0/m, z0.s, z0.s
	WORD $0x65a00009 // fmla z9.s, p0/m, z0.s, z0.s
	WORD $0x65a0000a // fmla z10.s, p0/m, z0.s, z0.s
	WORD $0x65a0000b // fmla z11.s, p0/m, z0.s, z0.s
	WORD $0x65a0000c // fmla z12.s, p0/m, z0.s, z0.s
	WORD $0x65a0000d // fmla z13.s, p0/m, z0.s, z0.s
	WORD $0x65a0000e // fmla z14.s, p0/m, z0.s, z0.s
	WORD $0x65a0000f // fmla z15.s, p0/m, z0.s, z0.s
	WORD $0x65a00010 // fmla z16.s, p0/m, z0.s, z0.s
	WORD $0x65a00011 // fmla z17.s, p0/m, z0.s, z0.s
	WORD $0x65a00012 // fmla z18.s, p0/m, z0.s, z0.s
	WORD $0x65a00013 // fmla z19.s, p0/m, z0.s, z0.s
	WORD $0x65a00014 // fmla z20.s, p0/m, z0.s, z0.s
	WORD $0x65a00015 // fmla z21.s, p0/m, z0.s, z0.s
	WORD $0x65a00016 // fmla z22.s, p0/m, z0.s, z0.s
	WORD $0x65a00017 // fmla z23.s, p0/m, z0.s, z0.s
	WORD $0x65a00018 // fmla z24.s, p0/m, z0.s, z0.s
	WORD $0x65a00019 // fmla z25.s, p0/m, z0.s, z0.s
	WORD $0x65a0001a // fmla z26.s, p0/m, z0.s, z0.s
	WORD $0x65a0001b // fmla z27.s, p0/m, z0.s, z0.s
	WORD $0x65a0001c // fmla z28.s, p0/m, z0.s, z0.s
	WORD $0x65a0001d // fmla z29.s, p0/m, z0.s, z0.s
	WORD $0x65a0001e // fmla z30.s, p0/m, z0.s, z0.s
	WORD $0x65a0001f // fmla z31.s, p0/m, z0.s, z0.s
	SUBS $1, R0, R0
	BNE  sloop
sdone:
	FMOVS F31, ret+8(FP)
	RET

// func bf16DotNEON(iters int) float32
TEXT ·bf16DotNEON(SB), NOSPLIT, $0-12
	MOVD iters+0(FP), R0
	MOVD $0x3f803f80, R1 // BF16 1.0 in both halves
	VDUP R1, V0.S4
	VEOR V8.B16, V8.B16, V8.B16
	VEOR V9.B16, V9.B16, V9.B16
	VEOR V10.B16, V10.B16, V10.B16
	VEOR V11.B16, V11.B16, V11.B16
	VEOR V12.B16, V12.B16, V12.B16
	VEOR V13.B16, V13.B16, V13.B16
	VEOR V14.B16, V14.B16, V14.B16
	VEOR V15.B16, V15.B16, V15.B16
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
	CBZ  R0, bddone
bdloop:
	WORD $0x6e40fc08 // bfdot v8.4s, v0.8h, v0.8h
	WORD $0x6e40fc09 // bfdot v9.4s, v0.8h, v0.8h
	WORD $0x6e40fc0a // bfdot v10.4s, v0.8h, v0.8h
	WORD $0x6e40fc0b // bfdot v11.4s, v0.8h, v0.8h
	WORD $0x6e40fc0c // bfdot v12.4s, v0.8h, v0.8h
	WORD $0x6e40fc0d // bfdot v13.4s, v0.8h, v0.8h
	WORD $0x6e40fc0e // bfdot v14.4s, v0.8h, v0.8h
	WORD $0x6e40fc0f // bfdot v15.4s, v0.8h, v0.8h
	WORD $0x6e40fc10 // bfdot v16.4s, v0.8h, v0.8h
	WORD $0x6e40fc11 // bfdot v17.4s, v0.8h, v0.8h
	WORD $0x6e40fc12 // bfdot v18.4s, v0.8h, v0.8h
	WORD $0x6e40fc13 // bfdot v19.4s, v0.8h, v0.8h
	WORD $0x6e40fc14 // bfdot v20.4s, v0.8h, v0.8h
	WORD $0x6e40fc15 // bfdot v21.4s, v0.8h, v0.8h
	WORD $0x6e40fc16 // bfdot v22.4s, v0.8h, v0.8h
	WORD $0x6e40fc17 // bfdot v23.4s, v0.8h, v0.8h
	WORD $0x6e40fc18 // bfdot v24.4s, v0.8h, v0.8h
	WORD $0x6e40fc19 // bfdot v25.4s, v0.8h, v0.8h
	WORD $0x6e40fc1a // bfdot v26.4s, v0.8h, v0.8h
	WORD $0x6e40fc1b // bfdot v27.4s, v0.8h, v0.8h
	WORD $0x6e40fc1c // bfdot v28.4s, v0.8h, v0.8h
	WORD $0x6e40fc1d // bfdot v29.4s, v0.8h, v0.8h
	WORD $0x6e40fc1e // bfdot v30.4s, v0.8h, v0.8h
	WORD $0x6e40fc1f // bfdot v31.4s, v0.8h, v0.8h
	SUBS $1, R0, R0
	BNE  bdloop
bddone:
	FMOVS F31, ret+8(FP)
	RET

// func bf16MMLANEON(iters int) float32
TEXT ·bf16MMLANEON(SB), NOSPLIT, $0-12
	MOVD iters+0(FP), R0
	MOVD $0x3f803f80, R1 // BF16 1.0 in both halves
	VDUP R1, V0.S4
	VEOR V8.B16, V8.B16, V8.B16
	VEOR V9.B16, V9.B16, V9.B16
	VEOR V10.B16, V10.B16, V10.B16
	VEOR V11.B16, V11.B16, V11.B16
	VEOR V12.B16, V12.B16, V12.B16
	VEOR V13.B16, V13.B16, V13.B16
	VEOR V14.B16, V14.B16, V14.B16
	VEOR V15.B16, V15.B16, V15.B16
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
	CBZ  R0, bmdone
bmloop:
	WORD $0x6e40ec08 // bfmmla v8.4s, v0.8h, v0.8h
	WORD $0x6e40ec09 // bfmmla v9.4s, v0.8h, v0.8h
	WORD $0x6e40ec0a // bfmmla v10.4s, v0.8h, v0.8h
	WORD $0x6e40ec0b // bfmmla v11.4s, v0.8h, v0.8h
	WORD $0x6e40ec0c // bfmmla v12.4s, v0.8h, v0.8h
	WORD $0x6e40ec0d // bfmmla v13.4s, v0.8h, v0.8h
	WORD $0x6e40ec0e // bfmmla v14.4s, v0.8h, v0.8h
	WORD $0x6e40ec0f // bfmmla v15.4s, v0.8h, v0.8h
	WORD $0x6e40ec10 // bfmmla v16.4s, v0.8h, v0.8h
	WORD $0x6e40ec11 // bfmmla v17.4s, v0.8h, v0.8h
	WORD $0x6e40ec12 // bfmmla v18.4s, v0.8h, v0.8h
	WORD $0x6e40ec13 // bfmmla v19.4s, v0.8h, v0.8h
	WORD $0x6e40ec14 // bfmmla v20.4s, v0.8h, v0.8h
	WORD $0x6e40ec15 // bfmmla v21.4s, v0.8h, v0.8h
	WORD $0x6e40ec16 // bfmmla v22.4s, v0.8h, v0.8h
	WORD $0x6e40ec17 // bfmmla v23.4s, v0.8h, v0.8h
	WORD $0x6e40ec18 // bfmmla v24.4s, v0.8h, v0.8h
	WORD $0x6e40ec19 // bfmmla v25.4s, v0.8h, v0.8h
	WORD $0x6e40ec1a // bfmmla v26.4s, v0.8h, v0.8h
	WORD $0x6e40ec1b // bfmmla v27.4s, v0.8h, v0.8h
	WORD $0x6e40ec1c // bfmmla v28.4s, v0.8h, v0.8h
	WORD $0x6e40ec1d // bfmmla v29.4s, v0.8h, v0.8h
	WORD $0x6e40ec1e // bfmmla v30.4s, v0.8h, v0.8h
	WORD $0x6e40ec1f // bfmmla v31.4s, v0.8h, v0.8h
	SUBS $1, R0, R0
	BNE  bmloop
bmdone:
	FMOVS F31, ret+8(FP)
	RET

// func bf16DotSVE(iters int) float32
TEXT ·bf16DotSVE(SB), NOSPLIT, $0-12
	MOVD iters+0(FP), R0
	MOVD $0x3f803f80, R1 // BF16 1.0 in both halves
	WORD $0x05a03820 // dup z0.s, w1
	WORD $0x25b8c008 // dup z8.s, #0
	WORD $0x25b8c009 // dup z9.s, #0
	WORD $0x25b8c00a // dup z10.s, #0
	WORD $0x25b8c00b // dup z11.s, #0
	WORD $0x25b8c00c // dup z12.s, #0
	WORD $0x25b8c00d // dup z13.s, #0
	WORD $0x25b8c00e // dup z14.s, #0
	WORD $0x25b8c00f // dup z15.s, #0
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
	CBZ  R0, bsdone
bsloop:
	WORD $0x64608008 // bfdot z8.s, z0.h, z0.h
	WORD $0x64608009 // bfdot z9.s, z0.h, z0.h
	WORD $0x6460800a // bfdot z10.s, z0.h, z0.h
	WORD $0x6460800b // bfdot z11.s, z0.h, z0.h
	WORD $0x6460800c // bfdot z12.s, z0.h, z0.h
	WORD $0x6460800d // bfdot z13.s, z0.h, z0.h
	WORD $0x6460800e // bfdot z14.s, z0.h, z0.h
	WORD $0x6460800f // bfdot z15.s, z0.h, z0.h
	WORD $0x64608010 // bfdot z16.s, z0.h, z0.h
	WORD $0x64608011 // bfdot z17.s, z0.h, z0.h
	WORD $0x64608012 // bfdot z18.s, z0.h, z0.h
	WORD $0x64608013 // bfdot z19.s, z0.h, z0.h
	WORD $0x64608014 // bfdot z20.s, z0.h, z0.h
	WORD $0x64608015 // bfdot z21.s, z0.h, z0.h
	WORD $0x64608016 // bfdot z22.s, z0.h, z0.h
	WORD $0x64608017 // bfdot z23.s, z0.h, z0.h
	WORD $0x64608018 // bfdot z24.s, z0.h, z0.h
	WORD $0x64608019 // bfdot z25.s, z0.h, z0.h
	WORD $0x6460801a // bfdot z26.s, z0.h, z0.h
	WORD $0x6460801b // bfdot z27.s, z0.h, z0.h
	WORD $0x6460801c // bfdot z28.s, z0.h, z0.h
	WORD $0x6460801d // bfdot z29.s, z0.h, z0.h
	WORD $0x6460801e // bfdot z30.s, z0.h, z0.h
	WORD $0x6460801f // bfdot z31.s, z0.h, z0.h
	SUBS $1, R0, R0
	BNE  bsloop
bsdone:
	FMOVS F31, ret+8(FP)
	RET
