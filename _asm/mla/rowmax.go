package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// rowMax (-isa avx512): mlaRowMaxAVX512, the largest of n floats (n a
// positive multiple of 16) on four zmm accumulators seeded with the first
// vector, then a horizontal reduction; the causal softmax's row maximum in
// kernels/mla's decompressing prefill.
func rowMax() {
	TEXT("mlaRowMaxAVX512", NOSPLIT, "func(x *float32, n int) float32")
	Pragma("noescape")
	Doc(
		"mlaRowMaxAVX512 returns the largest of x[0:n] (n a positive multiple of 16;",
		"with a NaN among them the result may or may not be NaN):",
		"",
		"\tm := x[0]; for i := 1; i < n; i++ { m = max(m, x[i]) }; return m",
	)
	xp := Load(Param("x"), GP64())
	n := Load(Param("n"), GP64())
	SHRQ(U8(4), n) // vectors
	acc := []VecVirtual{ZMM(), ZMM(), ZMM(), ZMM()}
	VMOVUPS(Mem{Base: xp}, acc[0])
	for _, a := range acc[1:] {
		VMOVAPS(acc[0], a)
	}
	Label("rowmax_4")
	CMPQ(n, U8(4))
	JB(LabelRef("rowmax_1"))
	for u, a := range acc {
		VMAXPS(Mem{Base: xp, Disp: 64 * u}, a, a)
	}
	ADDQ(U32(256), xp)
	SUBQ(U8(4), n)
	JMP(LabelRef("rowmax_4"))
	Label("rowmax_1")
	CMPQ(n, U8(0))
	JE(LabelRef("rowmax_reduce"))
	VMAXPS(Mem{Base: xp}, acc[0], acc[0])
	ADDQ(U8(64), xp)
	DECQ(n)
	JMP(LabelRef("rowmax_1"))
	Label("rowmax_reduce")
	Store(hmax(acc), ReturnIndex(0))
	VZEROUPPER()
	RET()
}

// hmax reduces the four accumulators to their largest lane, in the low
// lane of the xmm it returns.
func hmax(acc []VecVirtual) VecVirtual {
	VMAXPS(acc[1], acc[0], acc[0])
	VMAXPS(acc[3], acc[2], acc[2])
	VMAXPS(acc[2], acc[0], acc[0])
	hi := YMM()
	VEXTRACTF64X4(U8(1), acc[0], hi) // AVX512F (VEXTRACTF32X8 would need AVX512DQ)
	VMAXPS(hi, acc[0].AsY(), hi)
	lo := XMM()
	VEXTRACTF128(U8(1), hi, lo)
	VMAXPS(lo, hi.AsX(), lo)
	t := XMM()
	VMOVHLPS(lo, lo, t) // t = [x2, x3, x2, x3]
	VMAXPS(t, lo, lo)   // [max(x0,x2), max(x1,x3), …]
	VMOVSHDUP(lo, t)    // t = [max(x1,x3), …]
	VMAXSS(t, lo, lo)
	return lo
}
