//go:generate go run . -out ../../internal/vmath/vmath_amd64.s -stubs ../../internal/vmath/vmath_stubs_amd64.go -pkg vmath

// Command vmath generates the vector math kernels of internal/vmath
// (exp on AVX-512 and AVX2) shared by the kernel families.
package main

import (
	"fmt"
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// expKernel: dst[i] = exp(src[i]) for the first len(src)&^15 elements,
// by range reduction x = n·ln2 + r (|r| ≤ ln2/2), a degree-6 polynomial
// for exp(r) (Cephes expf coefficients) and VSCALEFPS for 2ⁿ, which
// underflows gracefully to subnormals and zero.
// expZ holds the broadcast constants of the AVX-512 exp.
type expZ struct {
	hi, lo, log2e, ln2hi, ln2lo, one VecVirtual
	p                                []VecVirtual
}

// zconst broadcasts v into a new zmm.
func zconst(v float32) VecVirtual {
	z := ZMM()
	g := GP32()
	MOVL(U32(math.Float32bits(v)), g)
	VPBROADCASTD(g, z)
	return z
}

func newExpZ() *expZ {
	return &expZ{hi: zconst(89), lo: zconst(-104),
		log2e: zconst(1.44269504088896341), ln2hi: zconst(0.693359375), ln2lo: zconst(-2.12194440e-4),
		p:   []VecVirtual{zconst(1.9875691500e-4), zconst(1.3981999507e-3), zconst(8.3334519073e-3), zconst(4.1665795894e-2), zconst(1.6666665459e-1), zconst(5.0000001201e-1)},
		one: zconst(1)}
}

// exp emits y = exp(x) (x is clobbered by the clamp): range reduction
// x = k·ln2 + r, the polynomial, VSCALEFPS by 2^k.
func (e *expZ) exp(x VecVirtual) VecVirtual {
	k, r, y := ZMM(), ZMM(), ZMM()
	VMINPS(x, e.hi, x) // x second: a NaN x passes through (MINPS returns its second source on NaN)
	VMAXPS(x, e.lo, x)
	VMULPS(e.log2e, x, k)
	VRNDSCALEPS(U8(0), k, k) // round to nearest
	VMOVAPS(x, r)
	VFNMADD231PS(e.ln2hi, k, r) // r = x − k·ln2hi
	VFNMADD231PS(e.ln2lo, k, r) // r −= k·ln2lo
	VMOVAPS(e.p[0], y)
	for _, cf := range e.p[1:] {
		VFMADD213PS(cf, r, y) // y = y·r + cf
	}
	r2 := ZMM()
	VMULPS(r, r, r2)
	VFMADD213PS(r, r2, y) // y = y·r² + r
	VADDPS(e.one, y, y)
	VSCALEFPS(k, y, y)
	return y
}

func expKernel() {
	TEXT("expAVX512", NOSPLIT, "func(dst, src []float32)")
	Pragma("noescape")
	Doc(
		"expAVX512 computes exp elementwise for the first len(src) rounded down to",
		"a multiple of 16 elements (within 2 ulp); the caller finishes the tail:",
		"",
		"\tfor i := 0; i < len(src)&^15; i++ { dst[i] = float32(math.Exp(float64(src[i]))) }",
	)
	d := Load(Param("dst").Base(), GP64())
	sp := Load(Param("src").Base(), GP64())
	n := Load(Param("src").Len(), GP64())
	SHRQ(U8(4), n)
	e := newExpZ()
	Label("exp_loop")
	CMPQ(n, U8(0))
	JE(LabelRef("exp_done"))
	x := ZMM()
	VMOVUPS(Mem{Base: sp}, x)
	y := e.exp(x)
	VMOVUPS(y, Mem{Base: d})
	ADDQ(U8(64), sp)
	ADDQ(U8(64), d)
	DECQ(n)
	JMP(LabelRef("exp_loop"))
	Label("exp_done")
	VZEROUPPER()
	RET()
}

// expKernelAVX2 is expKernel on ymm, building 2ⁿ in the exponent bits
// (no VSCALEFPS): inputs are clamped to [−87.3, 88.3], so results below
// ≈ 1.2e-38 come out as exp(−87.3) and above exp(88.3) as exp(88.3) —
// fine for KDA's gates (x ≤ 0, where e^x < 1.2e-38 is zero to the model).
func expKernelAVX2() {
	TEXT("expAVX2", NOSPLIT, "func(dst, src []float32)")
	Pragma("noescape")
	Doc(
		"expAVX2 computes exp elementwise for the first len(src) rounded down to a",
		"multiple of 8 elements, for inputs in [−87.3, 88.3] (clamped outside);",
		"the caller finishes the tail:",
		"",
		"\tfor i := 0; i < len(src)&^7; i++ { dst[i] = float32(math.Exp(float64(src[i]))) }",
	)
	d := Load(Param("dst").Base(), GP64())
	sp := Load(Param("src").Base(), GP64())
	n := Load(Param("src").Len(), GP64())
	SHRQ(U8(3), n)
	c := func(v float32) VecVirtual {
		z := YMM()
		g := GP32()
		MOVL(U32(math.Float32bits(v)), g)
		MOVD(g, z.AsX())
		VBROADCASTSS(z.AsX(), z)
		return z
	}
	hi, lo := c(88.3), c(-87.3)
	log2e, ln2hi, ln2lo := c(1.44269504088896341), c(0.693359375), c(-2.12194440e-4)
	p := []VecVirtual{c(1.9875691500e-4), c(1.3981999507e-3), c(8.3334519073e-3), c(4.1665795894e-2), c(1.6666665459e-1), c(5.0000001201e-1)}
	one := c(1)
	bias := YMM()
	g := GP32()
	MOVL(U32(127), g)
	MOVD(g, bias.AsX())
	VPBROADCASTD(bias.AsX(), bias)
	Label("exp2_loop")
	CMPQ(n, U8(0))
	JE(LabelRef("exp2_done"))
	x, k, r, y := YMM(), YMM(), YMM(), YMM()
	VMOVUPS(Mem{Base: sp}, x)
	VMINPS(x, hi, x) // x second: a NaN x passes through (MINPS returns its second source on NaN)
	VMAXPS(x, lo, x)
	VMULPS(log2e, x, k)
	VROUNDPS(U8(0), k, k)
	VMOVAPS(x, r)
	VFNMADD231PS(ln2hi, k, r)
	VFNMADD231PS(ln2lo, k, r)
	VMOVAPS(p[0], y)
	for _, cf := range p[1:] {
		VFMADD213PS(cf, r, y)
	}
	r2 := YMM()
	VMULPS(r, r, r2)
	VFMADD213PS(r, r2, y)
	VADDPS(one, y, y)
	e := YMM()
	VCVTPS2DQ(k, e)
	VPADDD(bias, e, e)
	VPSLLD(U8(23), e, e)
	VMULPS(e, y, y)
	VMOVUPS(y, Mem{Base: d})
	ADDQ(U8(32), sp)
	ADDQ(U8(32), d)
	DECQ(n)
	JMP(LabelRef("exp2_loop"))
	Label("exp2_done")
	VZEROUPPER()
	RET()
}

// blasKernels: y += α·x, dst += a⊙b, x ·= α, dst = dst·α·a·b and Σ a·b over the first len rounded down to a
// multiple of the vector width (the caller finishes the tail), four
// accumulators (or four stores) per iteration, for the kernels' glue
// (MoE combine, MLA absorption, norms, KDA's short convolution and gated
// norm).
func blasKernels(name string, width int, vec func() VecVirtual, sz int) {
	TEXT("axpy"+name, NOSPLIT, "func(alpha float32, x, y []float32)")
	Pragma("noescape")
	Doc(fmt.Sprintf("axpy%s computes y[i] += alpha·x[i] for i < len(y) rounded down to a multiple of %d.", name, width))
	{
		xp := Load(Param("x").Base(), GP64())
		yp := Load(Param("y").Base(), GP64())
		n := Load(Param("y").Len(), GP64())
		a := vec()
		VBROADCASTSS(NewParamAddr("alpha", 0), a)
		SHRQ(U8(shift(width)), n)
		Label("axpy" + name + "_4")
		CMPQ(n, U8(4))
		JB(LabelRef("axpy" + name + "_1"))
		for u := 0; u < 4; u++ {
			v, w := vec(), vec()
			VMOVUPS(Mem{Base: yp, Disp: u * sz}, v)
			VMOVUPS(Mem{Base: xp, Disp: u * sz}, w)
			VFMADD231PS(w, a, v)
			VMOVUPS(v, Mem{Base: yp, Disp: u * sz})
		}
		ADDQ(U32(4*sz), xp)
		ADDQ(U32(4*sz), yp)
		SUBQ(U8(4), n)
		JMP(LabelRef("axpy" + name + "_4"))
		Label("axpy" + name + "_1")
		CMPQ(n, U8(0))
		JE(LabelRef("axpy" + name + "_done"))
		v, w := vec(), vec()
		VMOVUPS(Mem{Base: yp}, v)
		VMOVUPS(Mem{Base: xp}, w)
		VFMADD231PS(w, a, v)
		VMOVUPS(v, Mem{Base: yp})
		ADDQ(U32(sz), xp)
		ADDQ(U32(sz), yp)
		DECQ(n)
		JMP(LabelRef("axpy" + name + "_1"))
		Label("axpy" + name + "_done")
		VZEROUPPER()
		RET()
	}

	TEXT("mulAdd"+name, NOSPLIT, "func(dst, a, b []float32)")
	Pragma("noescape")
	Doc(fmt.Sprintf("mulAdd%s computes dst[i] += a[i]·b[i] (the product rounded, then the sum) for i < len(dst) rounded down to a multiple of %d.", name, width))
	{
		dp := Load(Param("dst").Base(), GP64())
		ap := Load(Param("a").Base(), GP64())
		bp := Load(Param("b").Base(), GP64())
		n := Load(Param("dst").Len(), GP64())
		SHRQ(U8(shift(width)), n)
		Label("muladd" + name + "_4")
		CMPQ(n, U8(4))
		JB(LabelRef("muladd" + name + "_1"))
		for u := 0; u < 4; u++ {
			v, w := vec(), vec()
			VMOVUPS(Mem{Base: ap, Disp: u * sz}, w)
			VMULPS(Mem{Base: bp, Disp: u * sz}, w, w)
			VADDPS(Mem{Base: dp, Disp: u * sz}, w, v)
			VMOVUPS(v, Mem{Base: dp, Disp: u * sz})
		}
		ADDQ(U32(4*sz), dp)
		ADDQ(U32(4*sz), ap)
		ADDQ(U32(4*sz), bp)
		SUBQ(U8(4), n)
		JMP(LabelRef("muladd" + name + "_4"))
		Label("muladd" + name + "_1")
		CMPQ(n, U8(0))
		JE(LabelRef("muladd" + name + "_done"))
		v, w := vec(), vec()
		VMOVUPS(Mem{Base: ap}, w)
		VMULPS(Mem{Base: bp}, w, w)
		VADDPS(Mem{Base: dp}, w, v)
		VMOVUPS(v, Mem{Base: dp})
		ADDQ(U32(sz), dp)
		ADDQ(U32(sz), ap)
		ADDQ(U32(sz), bp)
		DECQ(n)
		JMP(LabelRef("muladd" + name + "_1"))
		Label("muladd" + name + "_done")
		VZEROUPPER()
		RET()
	}

	TEXT("scale"+name, NOSPLIT, "func(alpha float32, x []float32)")
	Pragma("noescape")
	Doc(fmt.Sprintf("scale%s computes x[i] *= alpha for i < len(x) rounded down to a multiple of %d.", name, width))
	{
		xp := Load(Param("x").Base(), GP64())
		n := Load(Param("x").Len(), GP64())
		a := vec()
		VBROADCASTSS(NewParamAddr("alpha", 0), a)
		SHRQ(U8(shift(width)), n)
		Label("scale" + name + "_1")
		CMPQ(n, U8(0))
		JE(LabelRef("scale" + name + "_done"))
		v := vec()
		VMULPS(Mem{Base: xp}, a, v)
		VMOVUPS(v, Mem{Base: xp})
		ADDQ(U32(sz), xp)
		DECQ(n)
		JMP(LabelRef("scale" + name + "_1"))
		Label("scale" + name + "_done")
		VZEROUPPER()
		RET()
	}

	TEXT("scaleMul"+name, NOSPLIT, "func(dst []float32, alpha float32, a, b []float32)")
	Pragma("noescape")
	Doc(fmt.Sprintf("scaleMul%s computes dst[i] = dst[i]·alpha·a[i]·b[i] (left to right) for i < len(dst) rounded down to a multiple of %d.", name, width))
	{
		dp := Load(Param("dst").Base(), GP64())
		ap := Load(Param("a").Base(), GP64())
		bp := Load(Param("b").Base(), GP64())
		n := Load(Param("dst").Len(), GP64())
		al := vec()
		VBROADCASTSS(NewParamAddr("alpha", 24), al)
		SHRQ(U8(shift(width)), n)
		Label("scalemul" + name + "_1")
		CMPQ(n, U8(0))
		JE(LabelRef("scalemul" + name + "_done"))
		v := vec()
		VMULPS(Mem{Base: dp}, al, v)
		VMULPS(Mem{Base: ap}, v, v)
		VMULPS(Mem{Base: bp}, v, v)
		VMOVUPS(v, Mem{Base: dp})
		ADDQ(U32(sz), dp)
		ADDQ(U32(sz), ap)
		ADDQ(U32(sz), bp)
		DECQ(n)
		JMP(LabelRef("scalemul" + name + "_1"))
		Label("scalemul" + name + "_done")
		VZEROUPPER()
		RET()
	}

	TEXT("dot"+name, NOSPLIT, "func(a, b []float32) float32")
	Pragma("noescape")
	Doc(fmt.Sprintf("dot%s returns Σ a[i]·b[i] for i < len(a) rounded down to a multiple of %d.", name, width))
	{
		ap := Load(Param("a").Base(), GP64())
		bp := Load(Param("b").Base(), GP64())
		n := Load(Param("a").Len(), GP64())
		SHRQ(U8(shift(width)), n)
		acc := []VecVirtual{vec(), vec(), vec(), vec()}
		for _, r := range acc {
			VXORPS(r, r, r)
		}
		Label("dot" + name + "_4")
		CMPQ(n, U8(4))
		JB(LabelRef("dot" + name + "_1"))
		for u := 0; u < 4; u++ {
			v := vec()
			VMOVUPS(Mem{Base: ap, Disp: u * sz}, v)
			VFMADD231PS(Mem{Base: bp, Disp: u * sz}, v, acc[u])
		}
		ADDQ(U32(4*sz), ap)
		ADDQ(U32(4*sz), bp)
		SUBQ(U8(4), n)
		JMP(LabelRef("dot" + name + "_4"))
		Label("dot" + name + "_1")
		CMPQ(n, U8(0))
		JE(LabelRef("dot" + name + "_sum"))
		v := vec()
		VMOVUPS(Mem{Base: ap}, v)
		VFMADD231PS(Mem{Base: bp}, v, acc[0])
		ADDQ(U32(sz), ap)
		ADDQ(U32(sz), bp)
		DECQ(n)
		JMP(LabelRef("dot" + name + "_1"))
		Label("dot" + name + "_sum")
		VADDPS(acc[1], acc[0], acc[0])
		VADDPS(acc[3], acc[2], acc[2])
		VADDPS(acc[2], acc[0], acc[0])
		if width == 16 {
			hi := YMM()
			VEXTRACTF32X8(U8(1), acc[0], hi)
			VADDPS(hi, acc[0].AsY(), hi)
			lo := XMM()
			VEXTRACTF128(U8(1), hi, lo)
			VADDPS(lo, hi.AsX(), lo)
			reduce4(lo)
		} else {
			lo := XMM()
			VEXTRACTF128(U8(1), acc[0], lo)
			VADDPS(lo, acc[0].AsX(), lo)
			reduce4(lo)
		}
	}
}

// actKernel: the activations on AVX-512 over the first len(g)&^15
// elements, from expKernel's exp of −x:
//
//	sigmoid: dst = 1/(1+e^−x)   silu: dst = x/(1+e^−x)   silumul: dst = x/(1+e^−x)·u
//
// NaN propagates (x is the second source of the clamps); past the clamp
// e^−x is +Inf or exp(−104), so the results are ±0, x or 1 as they should.
func actKernel(name string, mode int) {
	sig := "func(dst, src []float32)"
	if mode == 2 {
		sig = "func(dst, g, u []float32)"
	}
	TEXT(name, NOSPLIT, sig)
	Pragma("noescape")
	what := map[int]string{0: "1/(1+exp(−src[i]))", 1: "src[i]/(1+exp(−src[i]))", 2: "g[i]/(1+exp(−g[i]))·u[i]"}[mode]
	Doc(fmt.Sprintf("%s writes %s for i < len rounded down to a multiple of 16.", name, what))
	d := Load(Param("dst").Base(), GP64())
	src := "src"
	if mode == 2 {
		src = "g"
	}
	sp := Load(Param(src).Base(), GP64())
	n := Load(Param(src).Len(), GP64())
	var up Register
	if mode == 2 {
		up = Load(Param("u").Base(), GP64())
	}
	SHRQ(U8(4), n)
	e := newExpZ()
	signbit := zconst(float32(math.Copysign(0, -1)))
	lbl := name + "_loop"
	Label(lbl)
	CMPQ(n, U8(0))
	JE(LabelRef(name + "_done"))
	x0, x := ZMM(), ZMM()
	VMOVUPS(Mem{Base: sp}, x0)
	VXORPS(signbit, x0, x) // −x
	y := e.exp(x)          // e^−x
	one := e.one
	VADDPS(one, y, y) // 1 + e^−x
	if mode == 0 {
		VDIVPS(y, one, y)
	} else {
		VDIVPS(y, x0, y)
	}
	if mode == 2 {
		VMULPS(Mem{Base: up}, y, y)
		ADDQ(U8(64), up)
	}
	VMOVUPS(y, Mem{Base: d})
	ADDQ(U8(64), sp)
	ADDQ(U8(64), d)
	DECQ(n)
	JMP(LabelRef(lbl))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// softplusKernel: dst = scale·softplus(src) on AVX-512 over the first
// len(src)&^15 elements, as max(x, 0) + log1p(e) with e = exp(−|x|) from
// expKernel's exp, and log1p(e) = 2·atanh(s), s = e/(2+e), by the series
// 2s·(1 + s²/3 + s⁴/5 + … + s¹⁶/17) in float64 on eight lanes at a time,
// operation for operation as vmath's Go log1p (separate multiplies and
// adds, Horner from 1/17), rounded to f32 once: the same bits as
// Exp followed by the Go loop. NaN propagates; +Inf gives scale·(+Inf),
// −Inf gives 0 (e is exp(−104) past the clamp, not 0, which the sum with
// max(x, 0) absorbs).
func softplusKernel() {
	TEXT("softplusAVX512", NOSPLIT, "func(dst, src []float32, scale float32)")
	Pragma("noescape")
	Doc("softplusAVX512 writes scale·(max(src[i], 0) + log1p(exp(−|src[i]|))) for i < len(src) rounded down to a multiple of 16,",
		"with expAVX512's exp and the float64 log1p of the Go tail (the same bits).")
	d := Load(Param("dst").Base(), GP64())
	sp := Load(Param("src").Base(), GP64())
	n := Load(Param("src").Len(), GP64())
	scale := ZMM()
	VBROADCASTSS(Load(Param("scale"), XMM()), scale)
	SHRQ(U8(4), n)
	e := newExpZ()
	signbit := zconst(float32(math.Copysign(0, -1)))
	dconst := func(v float64) VecVirtual {
		z := ZMM()
		g := GP64()
		MOVQ(U64(math.Float64bits(v)), g)
		VPBROADCASTQ(g, z)
		return z
	}
	two, one := dconst(2), dconst(1)
	var c []VecVirtual // 1/17, 1/15, …, 1/3
	for k := 17; k >= 3; k -= 2 {
		c = append(c, dconst(1/float64(k)))
	}
	zero := ZMM()
	VXORPS(zero, zero, zero)
	// log1p on the eight float64 lanes of y, rounded into the f32 lanes of out
	log1p := func(y VecVirtual, out VecVirtual) {
		s, z, t := ZMM(), ZMM(), ZMM()
		VADDPD(two, y, s)
		VDIVPD(s, y, s) // s = y/(2+y)
		VMULPD(s, s, z) // z = s·s
		VMOVAPD(c[0], t)
		for _, cf := range c[1:] {
			VMULPD(t, z, t) // t = z·t
			VADDPD(cf, t, t)
		}
		VMULPD(t, z, t)
		VADDPD(one, t, t) // p = 1 + z·(…)
		VADDPD(s, s, s)   // 2s
		VMULPD(t, s, s)   // 2s·p
		VCVTPD2PS(s, out)
	}
	Label("softplus_loop")
	CMPQ(n, U8(0))
	JE(LabelRef("softplus_done"))
	x, a := ZMM(), ZMM()
	VMOVUPS(Mem{Base: sp}, x)
	VORPS(signbit, x, a) // −|x|
	y := e.exp(a)        // e = exp(−|x|) ∈ (0, 1]
	lo, hi := ZMM(), ZMM()
	VCVTPS2PD(y.AsY(), lo)
	eh := YMM()
	VEXTRACTF32X8(U8(1), y, eh)
	VCVTPS2PD(eh, hi)
	l0, l1 := YMM(), YMM()
	log1p(lo, l0)
	log1p(hi, l1)
	l := ZMM()
	VINSERTF32X8(U8(1), l1, l0.AsZ(), l)
	m := ZMM()
	VMAXPS(x, zero, m) // x second: a NaN x passes through
	VADDPS(l, m, m)
	VMULPS(scale, m, m)
	VMOVUPS(m, Mem{Base: d})
	ADDQ(U8(64), sp)
	ADDQ(U8(64), d)
	DECQ(n)
	JMP(LabelRef("softplus_loop"))
	Label("softplus_done")
	VZEROUPPER()
	RET()
}

// reduce4 sums the four lanes of x and returns the sum as the result.
func reduce4(x VecVirtual) {
	t := XMM()
	VMOVHLPS(x, x, t) // t = [x2, x3, x2, x3]
	VADDPS(t, x, x)   // [x0+x2, x1+x3, …]
	VMOVSHDUP(x, t)   // t = [x1+x3, x1+x3, …]
	VADDSS(t, x, x)
	Store(x, ReturnIndex(0))
	VZEROUPPER()
	RET()
}

func shift(width int) int {
	if width == 16 {
		return 4
	}
	return 3
}

func main() {
	ConstraintExpr("amd64,gc,!purego")
	expKernel()
	expKernelAVX2()
	blasKernels("AVX512", 16, func() VecVirtual { return ZMM() }, 64)
	actKernel("sigmoidAVX512", 0)
	actKernel("siluAVX512", 1)
	actKernel("siluMulAVX512", 2)
	softplusKernel()
	blasKernels("AVX2", 8, func() VecVirtual { return YMM() }, 32)
	Generate()
}
