//go:generate go run . -out ../../../roofline/peak_amd64.s -stubs ../../../roofline/peak_stubs_amd64.go -pkg roofline

// Command peak generates the compute-ceiling microkernels of package
// roofline: loops of independent accumulator chains of one instruction
// (FMA, VPDPBUSD, VDPBF16PS, AMX TDPBSSD; on AVX2 without VNNI the
// VPMADDUBSW+VPMADDWD+VPADDD triple), enough chains to cover the instruction's
// latency times the number of ports that execute it, and a dependent
// integer add chain that measures the core clock.
//
// Every kernel takes an iteration count and runs that many loop trips;
// the Go side knows how many operations one trip performs (documented on
// each stub). Registers are physical (the BYTE-encoded instructions of
// internal/x86 need fixed numbers); the accumulators start at zero and
// the multiplicands are zero, so no value ever becomes a denormal.
package main

import (
	"flag"
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/ktune/ktune/_asm/internal/x86"
)

// clockChain is the number of dependent adds per loop trip of the clock kernel.
const clockChain = 128

var (
	zmm = []reg.VecPhysical{reg.Z0, reg.Z1, reg.Z2, reg.Z3, reg.Z4, reg.Z5, reg.Z6, reg.Z7, reg.Z8, reg.Z9, reg.Z10, reg.Z11, reg.Z12, reg.Z13, reg.Z14, reg.Z15,
		reg.Z16, reg.Z17, reg.Z18, reg.Z19, reg.Z20, reg.Z21, reg.Z22, reg.Z23, reg.Z24, reg.Z25, reg.Z26, reg.Z27, reg.Z28, reg.Z29, reg.Z30, reg.Z31}
	ymm = []reg.VecPhysical{reg.Y0, reg.Y1, reg.Y2, reg.Y3, reg.Y4, reg.Y5, reg.Y6, reg.Y7, reg.Y8, reg.Y9, reg.Y10, reg.Y11, reg.Y12, reg.Y13, reg.Y14, reg.Y15}
	xmm = []reg.VecPhysical{reg.X0, reg.X1, reg.X2, reg.X3, reg.X4, reg.X5, reg.X6, reg.X7, reg.X8, reg.X9, reg.X10, reg.X11, reg.X12, reg.X13, reg.X14, reg.X15}
)

// chains emits func name(n int64): n trips of `chains` independent
// instructions acc_i = op(acc_i, a, b), with a and b the two registers
// after the accumulators.
func chains(name, doc, expr string, regs []reg.VecPhysical, nacc int, zero func(r reg.VecPhysical), op func(a, b, acc reg.VecPhysical)) {
	TEXT(name, NOSPLIT, "func(n int64)")
	Doc(name+" "+doc, "", fmt.Sprintf("\tfor i := 0; i < n; i++ { for c := 0; c < %d; c++ { %s } }", nacc, expr))
	n := Load(Param("n"), reg.RCX)
	a, b := regs[nacc], regs[nacc+1]
	for _, r := range regs[:nacc+2] {
		zero(r)
	}
	TESTQ(n, n)
	JLE(LabelRef(name + "_done"))
	Label(name + "_loop")
	for _, acc := range regs[:nacc] {
		op(a, b, acc)
	}
	DECQ(n)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// maddY emits maddY: n trips of 12 independent int8 dot chains the AVX2
// way (no VNNI): VPMADDUBSW (u8×s8 → saturated i16 pair sums), VPMADDWD
// with ones (i16 pairs → i32) and VPADDD into the accumulator. The
// accumulators are Y0–Y11, a and b Y12/Y13, ones Y14 and the one
// temporary Y15 (renamed per chain, so the chains stay independent; the
// loop-carried dependency is the 1-cycle VPADDD). Each chain is 32 int8
// products a trip, counted 2 OPs each as the VNNI ceilings count theirs.
func maddY() {
	const nacc = 12
	name := "maddY"
	TEXT(name, NOSPLIT, "func(n int64)")
	Doc(name+" runs 12 chains of AVX2 VPMADDUBSW + VPADDW ymm (64 int8 OPs each), the",
		"inner step of the avx2_int8 gemm kernels (their int16 sums over a group; a",
		"VPMADDWD per group widens them), so no kernel of that form can pass it:", "",
		fmt.Sprintf("\tfor i := 0; i < n; i++ { for c := 0; c < %d; c++ { for k := 0; k < 16; k++ { acc[c][k] += sat16(a.u8[2k]*b.s8[2k] + a.u8[2k+1]*b.s8[2k+1]) } } }", nacc))
	n := Load(Param("n"), reg.RCX)
	a, b, t := ymm[nacc], ymm[nacc+1], ymm[nacc+2]
	for _, r := range ymm[:nacc+2] {
		VPXOR(r, r, r)
	}
	TESTQ(n, n)
	JLE(LabelRef(name + "_done"))
	Label(name + "_loop")
	for _, acc := range ymm[:nacc] {
		VPMADDUBSW(b, a, t) // t.i16[k] = sat(a.u8[2k]*b.s8[2k] + a.u8[2k+1]*b.s8[2k+1])
		VPADDW(t, acc, acc)
	}
	DECQ(n)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

func clock() {
	name := "clockAdd"
	TEXT(name, NOSPLIT, "func(n int64) int64")
	Doc(
		fmt.Sprintf("%s runs n trips of a chain of %d dependent register adds (one", name, clockChain),
		"cycle of latency each), so n·128 core cycles pass; the",
		"result keeps the chain live:",
		"",
		fmt.Sprintf("\tfor i := 0; i < n; i++ { for c := 0; c < %d; c++ { x += one } }; return x", clockChain),
	)
	n := Load(Param("n"), reg.RCX)
	x, one := reg.RAX, reg.RDX
	XORQ(x, x)
	MOVQ(U32(1), one)
	TESTQ(n, n)
	JLE(LabelRef(name + "_done"))
	Label(name + "_loop")
	for i := 0; i < clockChain; i++ {
		ADDQ(one, x)
	}
	DECQ(n)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_done")
	Store(x, ReturnIndex(0))
	RET()
}

// amx emits amxInt8: n trips of 4 independent TDPBSSD tile products
// (2×2 blocking: tmm0–3 accumulate tmm4/5 × tmm6/7), all tiles 16 rows
// of 64 bytes and zero; the tiles are configured on entry and released
// on return.
func amx() {
	cfg := GLOBL("peakamxcfg", RODATA|NOPTR)
	var b [64]byte
	b[0] = 1 // palette 1; colsb (uint16) at 16+2t, rows at 48+t
	for t := 0; t < 8; t++ {
		b[16+2*t] = 64
		b[48+t] = 16
	}
	for q := 0; q < 8; q++ {
		var v uint64
		for j := 7; j >= 0; j-- {
			v = v<<8 | uint64(b[8*q+j])
		}
		DATA(8*q, U64(v))
	}
	name := "amxInt8"
	TEXT(name, NOSPLIT, "func(n int64)")
	Doc(name+" runs 4 independent TDPBSSD tile products per trip (32768 int8 OPs each):", "",
		"\tfor i := 0; i < n; i++ { for c := 0; c < 4; c++ { C[c] (16×16 int32) += A[c/2] (16×64 s8) · B[c%2] (64×16 s8, 4-byte pairs) } }")
	n := Load(Param("n"), reg.RCX)
	LEAQ(cfg, reg.RAX)
	x86.LDTILECFGM(x86.Mem{Base: x86.GP(reg.RAX), Index: -1})
	for t := 0; t < 8; t++ {
		x86.TILEZEROT(t)
	}
	TESTQ(n, n)
	JLE(LabelRef(name + "_done"))
	Label(name + "_loop")
	x86.TDPBSSDT(0, 4, 6)
	x86.TDPBSSDT(1, 4, 7)
	x86.TDPBSSDT(2, 5, 6)
	x86.TDPBSSDT(3, 5, 7)
	DECQ(n)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_done")
	x86.TILERELEASEI()
	RET()
}

func main() {
	flag.Parse()
	ConstraintExpr("amd64,gc,!purego")
	clock()
	zeroY := func(r reg.VecPhysical) { VPXOR(r.AsY(), r.AsY(), r.AsY()) }
	zeroZ := func(r reg.VecPhysical) { VPXORQ(r, r, r) }
	chains("fmaScalarF32", "runs 12 chains of scalar VFMADD231SS (2 FLOPs each):", "acc[c] += a*b", xmm, 12,
		func(r reg.VecPhysical) { VXORPS(r, r, r) },
		func(a, b, acc reg.VecPhysical) { VFMADD231SS(a, b, acc) })
	chains("fmaF32Y", "runs 12 chains of VFMADD231PS ymm (16 FLOPs each):", "acc[c][0:8] += a[0:8]*b[0:8]", ymm, 12, zeroY,
		func(a, b, acc reg.VecPhysical) { VFMADD231PS(a, b, acc) })
	chains("fmaF32Z", "runs 24 chains of VFMADD231PS zmm (32 FLOPs each):", "acc[c][0:16] += a[0:16]*b[0:16]", zmm, 24, zeroZ,
		func(a, b, acc reg.VecPhysical) { VFMADD231PS(a, b, acc) })
	chains("vnniZ", "runs 24 chains of EVEX VPDPBUSD zmm (128 int8 OPs each):", "for l := 0; l < 16; l++ { acc[c][l] += Σ_{j<4} int32(a.u8[4l+j])*int32(b.s8[4l+j]) }", zmm, 24, zeroZ,
		func(a, b, acc reg.VecPhysical) { VPDPBUSD(b, a, acc) })
	chains("vnniY", "runs 12 chains of VEX (AVX-VNNI) VPDPBUSD ymm (64 int8 OPs each):", "for l := 0; l < 8; l++ { acc[c][l] += Σ_{j<4} int32(a.u8[4l+j])*int32(b.s8[4l+j]) }", ymm, 12, zeroY,
		func(a, b, acc reg.VecPhysical) { x86.VPDPBUSDY(a, b, acc) })
	maddY()
	chains("bf16Z", "runs 24 chains of VDPBF16PS zmm (64 FLOPs each):", "for l := 0; l < 16; l++ { acc[c][l] += a.bf16[2l]*b.bf16[2l] + a.bf16[2l+1]*b.bf16[2l+1] }", zmm, 24, zeroZ,
		func(a, b, acc reg.VecPhysical) { x86.VDPBF16PSZ(a, b, acc) })
	amx()
	Generate()
}
