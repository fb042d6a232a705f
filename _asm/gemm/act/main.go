//go:generate go run . -out ../../../kernels/gemm/gemm_act_amd64.s -stubs ../../../kernels/gemm/gemm_act_stubs_amd64.go -pkg gemm

// Command act generates the activation-quantization kernel of kernels/gemm
// (AVX2 and AVX-512): per group of 32, the scale s = max|x|/127 and
// q = int8(round-to-even(x·(127/max|x|))) with the group's sum of q. It
// follows the bulk/tail contract: the asm does whole groups, Go the last
// partial one (act_amd64.go), so the result equals quantizeRowGeneric bit
// for bit.
package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

type vec struct {
	name  string
	lanes int
	alloc func() VecVirtual
	// and is bitwise (VANDPS on zmm would need AVX512DQ).
	and func(m Op, a, dst VecVirtual)
}

var (
	avx2 = vec{name: "AVX2", lanes: 8, alloc: YMM,
		and: func(m Op, a, d VecVirtual) { VANDPS(m, a, d) }}
	avx512 = vec{name: "AVX512", lanes: 16, alloc: ZMM,
		and: func(m Op, a, d VecVirtual) { VPANDD(m, a, d) }}
)

// hmaxPS leaves the largest lane of a (ymm or zmm) in the low lane of its xmm.
func hmaxPS(a VecVirtual, lanes int) Register {
	if lanes == 16 {
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
	return lo
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

// quantScaled: scales, q and sums for len(sums) whole groups of 32.
func quantScaled(v vec) {
	name := "quantScaled" + v.name
	TEXT(name, NOSPLIT, "func(q []int8, s []float32, sums []int32, x []float32)")
	Doc(
		name+" quantizes len(sums) whole groups of 32 with one scale each (x",
		"and q must hold 32·len(sums) elements, s len(sums)):",
		"",
		"\tfor g := range sums {",
		"\t\tm := max_{32g ≤ j < 32g+32} |x[j]|",
		"\t\ts[g], inv := m/127, 127/m  // inv = 0 when m = 0",
		"\t\tsums[g] = 0",
		"\t\tfor j := 32 * g; j < 32*g+32; j++ {",
		"\t\t\tq[j] = int8(math.RoundToEven(float64(x[j] * inv)))",
		"\t\t\tsums[g] += int32(q[j])",
		"\t\t}",
		"\t}",
	)
	g := &quantOps{v: v, name: name}
	g.qp = Load(Param("q").Base(), GP64())
	g.scp = Load(Param("s").Base(), GP64())
	g.sp = Load(Param("sums").Base(), GP64())
	n := Load(Param("sums").Len(), GP64())
	g.xp = Load(Param("x").Base(), GP64())
	g.constants()
	TESTQ(n, n)
	JZ(LabelRef(name + "_done"))
	Label(name + "_loop")
	x, mx := g.absMax()
	inv := g.scale(mx)
	g.quantize(x, inv)
	ADDQ(U8(32), g.qp)
	ADDQ(U8(4), g.sp)
	ADDQ(U8(4), g.scp)
	ADDQ(U32(128), g.xp)
	DECQ(n)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// quantOps are what quantScaled's steps share: the pointers into q, s,
// sums and x, and the constants: the abs mask, 127, zero and (AVX2) the
// lane order of the packs.
type quantOps struct {
	v                vec
	name             string
	qp, scp, sp, xp  Register
	mask, c127, zero VecVirtual
	perm             VecVirtual
}

// constants loads the loop's constants.
func (g *quantOps) constants() {
	t := GP32()
	MOVL(U32(0x7fffffff), t)
	g.mask = g.v.alloc()
	VMOVD(t, g.mask.AsX())
	VPBROADCASTD(g.mask.AsX(), g.mask)
	g.c127 = XMM()
	MOVL(U32(0x42fe0000), t) // 127.0
	VMOVD(t, g.c127)
	g.zero = XMM()
	VXORPS(g.zero, g.zero, g.zero)
	if g.v.lanes == 8 {
		// VPACKSSDW/VPACKSSWB interleave 128-bit lanes: dwords come out as
		// a0-3 b0-3 c0-3 d0-3 a4-7 b4-7 c4-7 d4-7; put them back in order.
		g.perm = YMM()
		VMOVDQU(permIdx(), g.perm)
	}
}

// absMax loads the group's 32 values and returns them with m = max |x|
// (in an xmm's low lane).
func (g *quantOps) absMax() ([]VecVirtual, Register) {
	v := g.v
	nv := 32 / v.lanes
	x := make([]VecVirtual, nv)
	for i := range x {
		x[i] = v.alloc()
		VMOVUPS(Mem{Base: g.xp, Disp: 4 * v.lanes * i}, x[i])
	}
	m := v.alloc()
	v.and(x[0], g.mask, m)
	for i := 1; i < nv; i++ {
		a := v.alloc()
		v.and(x[i], g.mask, a)
		VMAXPS(a, m, m)
	}
	return x, hmaxPS(m, v.lanes)
}

// scale stores s = m/127 and returns inv = 127/m (0 when m = 0).
func (g *quantOps) scale(mx Register) VecVirtual {
	sc := XMM()
	VDIVSS(g.c127, mx, sc) // m/127
	VMOVSS(sc, Mem{Base: g.scp})
	inv := XMM()
	VXORPS(inv, inv, inv)
	VUCOMISS(g.zero, mx)
	JE(LabelRef(g.name + "_zero"))
	VDIVSS(mx, g.c127, inv) // 127/m
	Label(g.name + "_zero")
	return inv
}

// quantize stores q = round(x·inv) as saturated int8 and the group's sum
// of q.
func (g *quantOps) quantize(x []VecVirtual, inv VecVirtual) {
	v := g.v
	iv := v.alloc()
	VBROADCASTSS(inv, iv)
	d := make([]VecVirtual, len(x))
	for i := range d {
		d[i] = v.alloc()
		VMULPS(x[i], iv, d[i])
		VCVTPS2DQ(d[i], d[i])
	}
	if v.lanes == 16 {
		VPMOVSDB(d[0], Mem{Base: g.qp})
		VPMOVSDB(d[1], Mem{Base: g.qp, Disp: 16})
		VPADDD(d[1], d[0], d[0])
	} else {
		ab, cd := YMM(), YMM()
		VPACKSSDW(d[1], d[0], ab)
		VPACKSSDW(d[3], d[2], cd)
		VPACKSSWB(cd, ab, ab)
		VPERMD(ab, g.perm, ab)
		VMOVDQU(ab, Mem{Base: g.qp})
		VPADDD(d[1], d[0], d[0])
		VPADDD(d[3], d[2], d[2])
		VPADDD(d[2], d[0], d[0])
	}
	lo := hsumD(d[0], v.lanes)
	VMOVD(lo, Mem{Base: g.sp})
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
		quantScaled(v)
	}
	Generate()
}
