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

// newExpZ broadcasts the AVX-512 exp's constants.
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
	countLoop("exp_loop", "exp_done", n, func() {
		x := ZMM()
		VMOVUPS(Mem{Base: sp}, x)
		VMOVUPS(e.exp(x), Mem{Base: d})
	}, U8(64), sp, d)
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
	e := newExpY()
	countLoop("exp2_loop", "exp2_done", n, func() {
		x := YMM()
		VMOVUPS(Mem{Base: sp}, x)
		VMOVUPS(e.exp(x), Mem{Base: d})
	}, U8(32), sp, d)
	VZEROUPPER()
	RET()
}

// expY holds the broadcast constants of the AVX2 exp.
type expY struct {
	hi, lo, log2e, ln2hi, ln2lo, one, bias VecVirtual
	p                                      []VecVirtual
}

// yconst broadcasts v into a new ymm.
func yconst(v float32) VecVirtual {
	z := YMM()
	g := GP32()
	MOVL(U32(math.Float32bits(v)), g)
	MOVD(g, z.AsX())
	VBROADCASTSS(z.AsX(), z)
	return z
}

// newExpY broadcasts the AVX2 exp's constants.
func newExpY() *expY {
	e := &expY{hi: yconst(88.3), lo: yconst(-87.3),
		log2e: yconst(1.44269504088896341), ln2hi: yconst(0.693359375), ln2lo: yconst(-2.12194440e-4),
		p:   []VecVirtual{yconst(1.9875691500e-4), yconst(1.3981999507e-3), yconst(8.3334519073e-3), yconst(4.1665795894e-2), yconst(1.6666665459e-1), yconst(5.0000001201e-1)},
		one: yconst(1)}
	e.bias = YMM()
	g := GP32()
	MOVL(U32(127), g)
	MOVD(g, e.bias.AsX())
	VPBROADCASTD(e.bias.AsX(), e.bias)
	return e
}

// exp emits y = exp(x) (x is clobbered by the clamp): range reduction
// x = k·ln2 + r, the polynomial, times 2^k built in the exponent bits.
func (e *expY) exp(x VecVirtual) VecVirtual {
	k, r, y := YMM(), YMM(), YMM()
	VMINPS(x, e.hi, x) // x second: a NaN x passes through (MINPS returns its second source on NaN)
	VMAXPS(x, e.lo, x)
	VMULPS(e.log2e, x, k)
	VROUNDPS(U8(0), k, k)
	VMOVAPS(x, r)
	VFNMADD231PS(e.ln2hi, k, r)
	VFNMADD231PS(e.ln2lo, k, r)
	VMOVAPS(e.p[0], y)
	for _, cf := range e.p[1:] {
		VFMADD213PS(cf, r, y)
	}
	r2 := YMM()
	VMULPS(r, r, r2)
	VFMADD213PS(r, r2, y)
	VADDPS(e.one, y, y)
	p2 := YMM()
	VCVTPS2DQ(k, p2)
	VPADDD(e.bias, p2, p2)
	VPSLLD(U8(23), p2, p2)
	VMULPS(p2, y, y)
	return y
}

// blasKernels: y += α·x, dst += a⊙b, x ·= α, dst = dst·α·a·b and Σ a·b over the first len rounded down to a
// multiple of the vector width (the caller finishes the tail), four
// accumulators (or four stores) per iteration, for the kernels' glue
// (MoE combine, MLA absorption, norms, KDA's short convolution and gated
// norm).
func blasKernels(name string, width int, vec func() VecVirtual, sz int) {
	b := blas{name: name, width: width, vec: vec, sz: sz}
	b.axpy()
	b.mulAdd()
	b.scale()
	b.scaleMul()
	b.dot()
}

// blas is one vector width's BLAS-like kernels: the name suffix, the
// floats and bytes of a vector and its registers' allocator.
type blas struct {
	name  string
	width int
	vec   func() VecVirtual
	sz    int
}

// header emits a kernel's TEXT line, pragma and doc comment.
func (b blas) header(fn, sig, doc string) {
	TEXT(fn+b.name, NOSPLIT, sig)
	Pragma("noescape")
	Doc(fmt.Sprintf(doc, fn+b.name, b.width))
}

// count loads the length param's vector count.
func (b blas) count(param string) Register {
	n := Load(Param(param).Len(), GP64())
	SHRQ(U8(shift(b.width)), n)
	return n
}

// stream emits the loop over n vectors of the arrays at ptrs (labels
// p_4, p_1 and p_end): with unroll, four vectors a step (step(u, u·sz))
// while n ≥ 4; then one at a time (step(0, 0)).
func (b blas) stream(p string, n Register, ptrs []Register, unroll bool, end string, step func(u, disp int)) {
	if unroll {
		Label(p + "_4")
		CMPQ(n, U8(4))
		JB(LabelRef(p + "_1"))
		for u := 0; u < 4; u++ {
			step(u, u*b.sz)
		}
		for _, r := range ptrs {
			ADDQ(U32(4*b.sz), r)
		}
		SUBQ(U8(4), n)
		JMP(LabelRef(p + "_4"))
	}
	countLoop(p+"_1", p+"_"+end, n, func() { step(0, 0) }, U32(b.sz), ptrs...)
}

// countLoop emits a loop (labels loop and done) of n iterations: body,
// then each of ptrs moved on by step bytes.
func countLoop(loop, done string, n Register, body func(), step Constant, ptrs ...Register) {
	Label(loop)
	CMPQ(n, U8(0))
	JE(LabelRef(done))
	body()
	for _, r := range ptrs {
		ADDQ(step, r)
	}
	DECQ(n)
	JMP(LabelRef(loop))
	Label(done)
}

// axpy emits axpy: y += alpha·x.
func (b blas) axpy() {
	b.header("axpy", "func(alpha float32, x, y []float32)", "%s computes y[i] += alpha·x[i] for i < len(y) rounded down to a multiple of %d.")
	xp := Load(Param("x").Base(), GP64())
	yp := Load(Param("y").Base(), GP64())
	n := Load(Param("y").Len(), GP64())
	a := b.vec()
	VBROADCASTSS(NewParamAddr("alpha", 0), a)
	SHRQ(U8(shift(b.width)), n)
	b.stream("axpy"+b.name, n, []Register{xp, yp}, true, "done", func(_, disp int) {
		v, w := b.vec(), b.vec()
		VMOVUPS(Mem{Base: yp, Disp: disp}, v)
		VMOVUPS(Mem{Base: xp, Disp: disp}, w)
		VFMADD231PS(w, a, v)
		VMOVUPS(v, Mem{Base: yp, Disp: disp})
	})
	VZEROUPPER()
	RET()
}

// mulAdd emits mulAdd: dst += a·b (the product rounded).
func (b blas) mulAdd() {
	b.header("mulAdd", "func(dst, a, b []float32)", "%s computes dst[i] += a[i]·b[i] (the product rounded, then the sum) for i < len(dst) rounded down to a multiple of %d.")
	dp := Load(Param("dst").Base(), GP64())
	ap := Load(Param("a").Base(), GP64())
	bp := Load(Param("b").Base(), GP64())
	n := b.count("dst")
	b.stream("muladd"+b.name, n, []Register{dp, ap, bp}, true, "done", func(_, disp int) {
		v, w := b.vec(), b.vec()
		VMOVUPS(Mem{Base: ap, Disp: disp}, w)
		VMULPS(Mem{Base: bp, Disp: disp}, w, w)
		VADDPS(Mem{Base: dp, Disp: disp}, w, v)
		VMOVUPS(v, Mem{Base: dp, Disp: disp})
	})
	VZEROUPPER()
	RET()
}

// scale emits scale: x *= alpha.
func (b blas) scale() {
	b.header("scale", "func(alpha float32, x []float32)", "%s computes x[i] *= alpha for i < len(x) rounded down to a multiple of %d.")
	xp := Load(Param("x").Base(), GP64())
	n := Load(Param("x").Len(), GP64())
	a := b.vec()
	VBROADCASTSS(NewParamAddr("alpha", 0), a)
	SHRQ(U8(shift(b.width)), n)
	b.stream("scale"+b.name, n, []Register{xp}, false, "done", func(_, _ int) {
		v := b.vec()
		VMULPS(Mem{Base: xp}, a, v)
		VMOVUPS(v, Mem{Base: xp})
	})
	VZEROUPPER()
	RET()
}

// scaleMul emits scaleMul: dst = dst·alpha·a·b.
func (b blas) scaleMul() {
	b.header("scaleMul", "func(dst []float32, alpha float32, a, b []float32)", "%s computes dst[i] = dst[i]·alpha·a[i]·b[i] (left to right) for i < len(dst) rounded down to a multiple of %d.")
	dp := Load(Param("dst").Base(), GP64())
	ap := Load(Param("a").Base(), GP64())
	bp := Load(Param("b").Base(), GP64())
	n := Load(Param("dst").Len(), GP64())
	al := b.vec()
	VBROADCASTSS(NewParamAddr("alpha", 24), al)
	SHRQ(U8(shift(b.width)), n)
	b.stream("scalemul"+b.name, n, []Register{dp, ap, bp}, false, "done", func(_, _ int) {
		v := b.vec()
		VMULPS(Mem{Base: dp}, al, v)
		VMULPS(Mem{Base: ap}, v, v)
		VMULPS(Mem{Base: bp}, v, v)
		VMOVUPS(v, Mem{Base: dp})
	})
	VZEROUPPER()
	RET()
}

// dot emits dot: Σ a·b in four accumulators, summed at the end.
func (b blas) dot() {
	b.header("dot", "func(a, b []float32) float32", "%s returns Σ a[i]·b[i] for i < len(a) rounded down to a multiple of %d.")
	ap := Load(Param("a").Base(), GP64())
	bp := Load(Param("b").Base(), GP64())
	n := b.count("a")
	acc := []VecVirtual{b.vec(), b.vec(), b.vec(), b.vec()}
	for _, r := range acc {
		VXORPS(r, r, r)
	}
	b.stream("dot"+b.name, n, []Register{ap, bp}, true, "sum", func(u, disp int) {
		v := b.vec()
		VMOVUPS(Mem{Base: ap, Disp: disp}, v)
		VFMADD231PS(Mem{Base: bp, Disp: disp}, v, acc[u])
	})
	VADDPS(acc[1], acc[0], acc[0])
	VADDPS(acc[3], acc[2], acc[2])
	VADDPS(acc[2], acc[0], acc[0])
	var lo VecVirtual
	if b.width == 16 {
		hi := YMM()
		VEXTRACTF32X8(U8(1), acc[0], hi)
		VADDPS(hi, acc[0].AsY(), hi)
		lo = XMM()
		VEXTRACTF128(U8(1), hi, lo)
		VADDPS(lo, hi.AsX(), lo)
	} else {
		lo = XMM()
		VEXTRACTF128(U8(1), acc[0], lo)
		VADDPS(lo, acc[0].AsX(), lo)
	}
	reduce4(lo)
}

// actKernel: the activations on AVX-512 over the first len(g)&^15
// elements, from expKernel's exp of −x:
//
//	sigmoid: dst = 1/(1+e^−x)   silu: dst = x/(1+e^−x)   silumul: dst = x/(1+e^−x)·u
//
// NaN propagates (x is the second source of the clamps); past the clamp
// e^−x is +Inf or exp(−104), so the results are ±0, x or 1 as they should.
func actKernel(name string, mode int) {
	sig, src := "func(dst, src []float32)", "src"
	if mode == 2 {
		sig, src = "func(dst, g, u []float32)", "g"
	}
	TEXT(name, NOSPLIT, sig)
	Pragma("noescape")
	what := map[int]string{0: "1/(1+exp(−src[i]))", 1: "src[i]/(1+exp(−src[i]))", 2: "g[i]/(1+exp(−g[i]))·u[i]"}[mode]
	Doc(fmt.Sprintf("%s writes %s for i < len rounded down to a multiple of 16.", name, what))
	d := Load(Param("dst").Base(), GP64())
	sp := Load(Param(src).Base(), GP64())
	n := Load(Param(src).Len(), GP64())
	var up Register
	if mode == 2 {
		up = Load(Param("u").Base(), GP64())
	}
	SHRQ(U8(4), n)
	e := newExpZ()
	signbit := zconst(float32(math.Copysign(0, -1)))
	countLoop(name+"_loop", name+"_done", n, func() {
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
	}, U8(64), sp, d)
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
	l1p := newLog1p()
	zero := ZMM()
	VXORPS(zero, zero, zero)
	countLoop("softplus_loop", "softplus_done", n, func() {
		x, a := ZMM(), ZMM()
		VMOVUPS(Mem{Base: sp}, x)
		VORPS(signbit, x, a)    // −|x|
		l := l1p.of16(e.exp(a)) // log1p(e), e = exp(−|x|) ∈ (0, 1]
		m := ZMM()
		VMAXPS(x, zero, m) // x second: a NaN x passes through
		VADDPS(l, m, m)
		VMULPS(scale, m, m)
		VMOVUPS(m, Mem{Base: d})
	}, U8(64), sp, d)
	VZEROUPPER()
	RET()
}

// log1pD holds the float64 constants of softplusKernel's log1p: 2, 1 and
// the series' 1/17, 1/15, …, 1/3.
type log1pD struct {
	two, one VecVirtual
	c        []VecVirtual
}

// newLog1p broadcasts log1pD's constants.
func newLog1p() *log1pD {
	l := &log1pD{two: dconst(2), one: dconst(1)}
	for k := 17; k >= 3; k -= 2 {
		l.c = append(l.c, dconst(1/float64(k)))
	}
	return l
}

// dconst broadcasts the float64 v into a new zmm.
func dconst(v float64) VecVirtual {
	z := ZMM()
	g := GP64()
	MOVQ(U64(math.Float64bits(v)), g)
	VPBROADCASTQ(g, z)
	return z
}

// of16 returns log1p of the 16 f32 lanes of y: each half widened to
// float64, its log1p rounded back to f32, the halves joined.
func (l *log1pD) of16(y VecVirtual) VecVirtual {
	lo, hi := ZMM(), ZMM()
	VCVTPS2PD(y.AsY(), lo)
	eh := YMM()
	VEXTRACTF32X8(U8(1), y, eh)
	VCVTPS2PD(eh, hi)
	l0, l1 := YMM(), YMM()
	l.of8(lo, l0)
	l.of8(hi, l1)
	out := ZMM()
	VINSERTF32X8(U8(1), l1, l0.AsZ(), out)
	return out
}

// of8 emits log1p on the eight float64 lanes of y, rounded into the f32
// lanes of out.
func (l *log1pD) of8(y VecVirtual, out VecVirtual) {
	s, z, t := ZMM(), ZMM(), ZMM()
	VADDPD(l.two, y, s)
	VDIVPD(s, y, s) // s = y/(2+y)
	VMULPD(s, s, z) // z = s·s
	VMOVAPD(l.c[0], t)
	for _, cf := range l.c[1:] {
		VMULPD(t, z, t) // t = z·t
		VADDPD(cf, t, t)
	}
	VMULPD(t, z, t)
	VADDPD(l.one, t, t) // p = 1 + z·(…)
	VADDPD(s, s, s)     // 2s
	VMULPD(t, s, s)     // 2s·p
	VCVTPD2PS(s, out)
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
