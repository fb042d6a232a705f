//go:generate go run . -out ../../../kernels/gemm/gemm_act_amd64.s -stubs ../../../kernels/gemm/gemm_act_stubs_amd64.go -pkg gemm

// Command act generates the activation-quantization kernels of
// kernels/gemm (AVX2 and AVX-512): the row's max |x| and, per group of 32,
// q = int8(round-to-even(x·inv)) with the group's sum of q. They follow the
// bulk/tail contract: the asm does whole vectors (absMax) or whole groups
// (quantGroups), Go finishes the rest (act_amd64.go), so the result equals
// quantizeRowGeneric bit for bit.
package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

type vec struct {
	name  string
	lanes int
	alloc func() VecVirtual
	// and and zero are bitwise (VANDPS, VXORPS on zmm would need AVX512DQ).
	and  func(m Op, a, dst VecVirtual)
	zero func(v VecVirtual)
}

var (
	avx2 = vec{name: "AVX2", lanes: 8, alloc: YMM,
		and: func(m Op, a, d VecVirtual) { VANDPS(m, a, d) }, zero: func(v VecVirtual) { VXORPS(v, v, v) }}
	avx512 = vec{name: "AVX512", lanes: 16, alloc: ZMM,
		and: func(m Op, a, d VecVirtual) { VPANDD(m, a, d) }, zero: func(v VecVirtual) { VPXORD(v, v, v) }}
)

const unroll = 4

// absMax: max |x[i]| over the first len(x) rounded down to a multiple of
// the vector width (0 for an empty bulk).
func absMax(v vec) {
	name := "absMax" + v.name
	TEXT(name, NOSPLIT, "func(x []float32) float32")
	Doc(
		name+" returns the largest |x[i]| over the first len(x) rounded down to a",
		fmt.Sprintf("multiple of %d elements (0 if there are none); the caller folds in the tail:", v.lanes),
		"",
		fmt.Sprintf("\tfor i := 0; i < len(x)&^%d; i++ { m = max(m, abs(x[i])) }", v.lanes-1),
	)
	p := Load(Param("x").Base(), GP64())
	n := Load(Param("x").Len(), GP64())
	t := GP32()
	MOVL(U32(0x7fffffff), t)
	mask := v.alloc()
	VMOVD(t, mask.AsX())
	VPBROADCASTD(mask.AsX(), mask)
	acc := make([]VecVirtual, unroll)
	for i := range acc {
		acc[i] = v.alloc()
		v.zero(acc[i])
	}
	step := v.lanes * unroll
	Label(name + "_big")
	CMPQ(n, U32(step))
	JL(LabelRef(name + "_single"))
	for i := 0; i < unroll; i++ {
		x := v.alloc()
		v.and(Mem{Base: p, Disp: 4 * v.lanes * i}, mask, x)
		VMAXPS(x, acc[i], acc[i])
	}
	ADDQ(U32(4*step), p)
	SUBQ(U32(step), n)
	JMP(LabelRef(name + "_big"))
	Label(name + "_single")
	CMPQ(n, U32(v.lanes))
	JL(LabelRef(name + "_done"))
	x := v.alloc()
	v.and(Mem{Base: p}, mask, x)
	VMAXPS(x, acc[0], acc[0])
	ADDQ(U32(4*v.lanes), p)
	SUBQ(U32(v.lanes), n)
	JMP(LabelRef(name + "_single"))
	Label(name + "_done")
	VMAXPS(acc[1], acc[0], acc[0])
	VMAXPS(acc[3], acc[2], acc[2])
	VMAXPS(acc[2], acc[0], acc[0])
	a := acc[0]
	if v.lanes == 16 {
		hi := YMM()
		VEXTRACTF64X4(U8(1), a, hi)
		VMAXPS(hi, a.AsY(), a.AsY())
	}
	hx := XMM()
	VEXTRACTF128(U8(1), a.AsY(), hx)
	lo := a.AsX()
	VMAXPS(hx, lo, lo)
	VPSHUFD(U8(0x4e), lo, hx)
	VMAXPS(hx, lo, lo)
	VPSHUFD(U8(0xb1), lo, hx)
	VMAXPS(hx, lo, lo)
	ret, err := ReturnIndex(0).Resolve()
	if err != nil {
		panic(err)
	}
	VMOVSS(lo, ret.Addr)
	VZEROUPPER()
	RET()
}

// hsumD adds the int32 lanes of a (ymm or zmm) into the low lane of its xmm.
func hsumD(a VecVirtual, lanes int) Register {
	if lanes == 16 {
		hi := YMM()
		VEXTRACTI64X4(U8(1), a, hi)
		VPADDD(hi, a.AsY(), a.AsY())
	}
	hx := XMM()
	VEXTRACTI128(U8(1), a.AsY(), hx)
	lo := a.AsX()
	VPADDD(hx, lo, lo)
	VPSHUFD(U8(0x4e), lo, hx)
	VPADDD(hx, lo, lo)
	VPSHUFD(U8(0xb1), lo, hx)
	VPADDD(hx, lo, lo)
	return lo
}

// quantGroups: q and sums for len(sums) whole groups of 32.
func quantGroups(v vec) {
	name := "quantGroups" + v.name
	TEXT(name, NOSPLIT, "func(q []int8, sums []int32, x []float32, inv float32)")
	Doc(
		name+" quantizes len(sums) whole groups of 32 (x and q must hold",
		"32·len(sums) elements) and sums each group:",
		"",
		"\tfor g := range sums {",
		"\t\tsums[g] = 0",
		"\t\tfor j := 32 * g; j < 32*g+32; j++ {",
		"\t\t\tq[j] = int8(math.RoundToEven(float64(x[j] * inv)))",
		"\t\t\tsums[g] += int32(q[j])",
		"\t\t}",
		"\t}",
	)
	qp := Load(Param("q").Base(), GP64())
	sp := Load(Param("sums").Base(), GP64())
	n := Load(Param("sums").Len(), GP64())
	xp := Load(Param("x").Base(), GP64())
	s := v.alloc()
	inv, err := Param("inv").Resolve()
	if err != nil {
		panic(err)
	}
	VBROADCASTSS(inv.Addr, s)
	var perm VecVirtual
	if v.lanes == 8 {
		// VPACKSSDW/VPACKSSWB interleave 128-bit lanes: dwords come out as
		// a0-3 b0-3 c0-3 d0-3 a4-7 b4-7 c4-7 d4-7; put them back in order.
		perm = YMM()
		VMOVDQU(permIdx(), perm)
	}
	TESTQ(n, n)
	JZ(LabelRef(name + "_done"))
	Label(name + "_loop")
	nv := 32 / v.lanes
	d := make([]VecVirtual, nv)
	for i := range d {
		d[i] = v.alloc()
		VMULPS(Mem{Base: xp, Disp: 4 * v.lanes * i}, s, d[i])
		VCVTPS2DQ(d[i], d[i])
	}
	if v.lanes == 16 {
		VPMOVSDB(d[0], Mem{Base: qp})
		VPMOVSDB(d[1], Mem{Base: qp, Disp: 16})
		VPADDD(d[1], d[0], d[0])
	} else {
		ab, cd := YMM(), YMM()
		VPACKSSDW(d[1], d[0], ab)
		VPACKSSDW(d[3], d[2], cd)
		VPACKSSWB(cd, ab, ab)
		VPERMD(ab, perm, ab)
		VMOVDQU(ab, Mem{Base: qp})
		VPADDD(d[1], d[0], d[0])
		VPADDD(d[3], d[2], d[2])
		VPADDD(d[2], d[0], d[0])
	}
	lo := hsumD(d[0], v.lanes)
	VMOVD(lo, Mem{Base: sp})
	ADDQ(U8(32), qp)
	ADDQ(U8(4), sp)
	ADDQ(U32(128), xp)
	DECQ(n)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

var permData Mem

func permIdx() Mem {
	if permData.Symbol.Name == "" {
		permData = GLOBL("actPermAVX2", RODATA|NOPTR)
		for i, x := range []uint32{0, 4, 1, 5, 2, 6, 3, 7} {
			DATA(4*i, U32(x))
		}
	}
	return permData
}

func main() {
	ConstraintExpr("amd64,gc,!purego")
	for _, v := range []vec{avx2, avx512} {
		absMax(v)
		quantGroups(v)
	}
	Generate()
}
