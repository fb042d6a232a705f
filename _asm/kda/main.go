//go:generate go run . -isa avx512 -out ../../kernels/kda/kda_avx512_amd64.s -stubs ../../kernels/kda/kda_avx512_stubs_amd64.go -pkg kda
//go:generate go run . -isa avx2 -out ../../kernels/kda/kda_avx2_amd64.s -stubs ../../kernels/kda/kda_avx2_stubs_amd64.go -pkg kda

// Command kda generates the KDA recurrent-step kernels of kernels/kda for
// one ISA per run (-isa avx512|avx2): one token of one head over strips
// of W value columns (1, 2 or 4 vectors per state row), the two phases of
// kda_generic.go's recurrentGeneric run while the strip stays in L1; and a
// vector exp.
package main

import (
	"flag"
	"fmt"
	"log"
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

var isa = flag.String("isa", "avx512", "avx512 or avx2")

// vector width in float32 lanes, register allocator and name suffix.
var (
	lanes  = 16
	vreg   = ZMM
	suffix = "AVX512"
)

func strips(zr int) {
	w := lanes * zr
	ZMM := vreg
	name := fmt.Sprintf("kdaStrips%s_%d", suffix, w)
	TEXT(name, NOSPLIT, "func(s *float32, lds int, k int, alpha, kk, qs, v *float32, beta float32, o *float32, nstrips int)")
	Doc(
		fmt.Sprintf("%s runs one KDA token on nstrips strips of %d value columns", name, w),
		"of a K×lds row-major state s (k rows): per strip, see recurrentGeneric:",
		"",
		"\tfor i < k { p += kk[i]·(alpha[i]·S[i,strip]) }",
		"\tu = beta·(v[strip] − p)",
		"\tfor i < k { S[i,strip] = alpha[i]·S[i,strip] + kk[i]·u; o[strip] += qs[i]·S[i,strip] }",
	)
	sp := Load(Param("s"), GP64())
	lds := Load(Param("lds"), GP64())
	SHLQ(U8(2), lds)
	kn := Load(Param("k"), GP64())
	pa := Load(Param("alpha"), GP64())
	pk := Load(Param("kk"), GP64())
	pq := Load(Param("qs"), GP64())
	pv := Load(Param("v"), GP64())
	po := Load(Param("o"), GP64())
	ns := Load(Param("nstrips"), GP64())
	bx := Load(Param("beta"), XMM())
	beta := ZMM()
	VBROADCASTSS(bx, beta)

	// chains × zr accumulators hide the FMA latency of the row reductions.
	chains := max(1, 4/zr)
	acc := make([][]VecVirtual, chains)
	for c := range acc {
		acc[c] = make([]VecVirtual, zr)
		for z := range acc[c] {
			acc[c][z] = ZMM()
		}
	}
	u := make([]VecVirtual, zr)
	for z := range u {
		u[z] = ZMM()
	}
	row, i, kleft := GP64(), GP64(), GP64()

	Label(name + "_strip")
	CMPQ(ns, U8(0))
	JE(LabelRef(name + "_done"))

	// phase 1: decay and predict.
	zero := func() {
		for c := range acc {
			for z := range acc[c] {
				VXORPS(acc[c][z].AsY(), acc[c][z].AsY(), acc[c][z].AsY())
			}
		}
	}
	reduce := func() {
		for c := 1; c < chains; c++ {
			for z := 0; z < zr; z++ {
				VADDPS(acc[c][z], acc[0][z], acc[0][z])
			}
		}
	}
	// rowLoop emits a loop over k rows, chains rows per iteration (a
	// remainder loop of one row per iteration finishes).
	rowLoop := func(tag string, body func(c int, rowReg, idx Register)) {
		MOVQ(sp, row)
		XORQ(i, i)
		MOVQ(kn, kleft)
		Label(name + tag + "_multi")
		CMPQ(kleft, U32(chains))
		JL(LabelRef(name + tag + "_single"))
		for c := 0; c < chains; c++ {
			body(c, row, i)
			ADDQ(lds, row)
			INCQ(i)
		}
		SUBQ(U32(chains), kleft)
		JMP(LabelRef(name + tag + "_multi"))
		Label(name + tag + "_single")
		CMPQ(kleft, U8(0))
		JE(LabelRef(name + tag + "_end"))
		body(0, row, i)
		ADDQ(lds, row)
		INCQ(i)
		DECQ(kleft)
		JMP(LabelRef(name + tag + "_single"))
		Label(name + tag + "_end")
	}

	zero()
	// The decayed state is not stored here: phase 2 decays it again in
	// registers, which saves a store per element.
	rowLoop("_p1", func(c int, r, idx Register) {
		a, kb := ZMM(), ZMM()
		VBROADCASTSS(Mem{Base: pa, Index: idx, Scale: 4}, a)
		VBROADCASTSS(Mem{Base: pk, Index: idx, Scale: 4}, kb)
		for z := 0; z < zr; z++ {
			t := ZMM()
			VMULPS(Mem{Base: r, Disp: 4 * lanes * z}, a, t)
			VFMADD231PS(t, kb, acc[c][z])
		}
	})
	reduce()
	for z := 0; z < zr; z++ {
		VMOVUPS(Mem{Base: pv, Disp: 4 * lanes * z}, u[z])
		VSUBPS(acc[0][z], u[z], u[z])
		VMULPS(beta, u[z], u[z])
	}
	// phase 2: write and read out.
	zero()
	rowLoop("_p2", func(c int, r, idx Register) {
		a, kb, qb := ZMM(), ZMM(), ZMM()
		VBROADCASTSS(Mem{Base: pa, Index: idx, Scale: 4}, a)
		VBROADCASTSS(Mem{Base: pk, Index: idx, Scale: 4}, kb)
		VBROADCASTSS(Mem{Base: pq, Index: idx, Scale: 4}, qb)
		for z := 0; z < zr; z++ {
			t := ZMM()
			VMULPS(Mem{Base: r, Disp: 4 * lanes * z}, a, t)
			VFMADD231PS(u[z], kb, t)
			VMOVUPS(t, Mem{Base: r, Disp: 4 * lanes * z})
			VFMADD231PS(t, qb, acc[c][z])
		}
	})
	reduce()
	for z := 0; z < zr; z++ {
		VMOVUPS(acc[0][z], Mem{Base: po, Disp: 4 * lanes * z})
	}
	ADDQ(U32(4*w), sp)
	ADDQ(U32(4*w), pv)
	ADDQ(U32(4*w), po)
	DECQ(ns)
	JMP(LabelRef(name + "_strip"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// expKernel: dst[i] = exp(src[i]) for the first len(src)&^15 elements,
// by range reduction x = n·ln2 + r (|r| ≤ ln2/2), a degree-6 polynomial
// for exp(r) (Cephes expf coefficients) and VSCALEFPS for 2ⁿ, which
// underflows gracefully to subnormals and zero.
func expKernel() {
	if *isa == "avx2" {
		expKernelAVX2()
		return
	}
	TEXT("expAVX512", NOSPLIT, "func(dst, src []float32)")
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
	c := func(v float32) VecVirtual {
		z := ZMM()
		g := GP32()
		MOVL(U32(math.Float32bits(v)), g)
		VPBROADCASTD(g, z)
		return z
	}
	hi, lo := c(89), c(-104)
	log2e, ln2hi, ln2lo := c(1.44269504088896341), c(0.693359375), c(-2.12194440e-4)
	p := []VecVirtual{c(1.9875691500e-4), c(1.3981999507e-3), c(8.3334519073e-3), c(4.1665795894e-2), c(1.6666665459e-1), c(5.0000001201e-1)}
	one := c(1)
	Label("exp_loop")
	CMPQ(n, U8(0))
	JE(LabelRef("exp_done"))
	x, k, r, y := ZMM(), ZMM(), ZMM(), ZMM()
	VMOVUPS(Mem{Base: sp}, x)
	VMINPS(hi, x, x)
	VMAXPS(lo, x, x)
	VMULPS(log2e, x, k)
	VRNDSCALEPS(U8(0), k, k) // round to nearest
	VMOVAPS(x, r)
	VFNMADD231PS(ln2hi, k, r) // r = x − k·ln2hi
	VFNMADD231PS(ln2lo, k, r) // r −= k·ln2lo
	VMOVAPS(p[0], y)
	for _, cf := range p[1:] {
		VFMADD213PS(cf, r, y) // y = y·r + cf
	}
	r2 := ZMM()
	VMULPS(r, r, r2)
	VFMADD213PS(r, r2, y) // y = y·r² + r
	VADDPS(one, y, y)
	VSCALEFPS(k, y, y)
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
	VMINPS(hi, x, x)
	VMAXPS(lo, x, x)
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

func main() {
	flag.Parse()
	switch *isa {
	case "avx512":
	case "avx2":
		lanes, vreg, suffix = 8, YMM, "AVX2"
	default:
		log.Fatalf("unknown -isa %q", *isa)
	}
	ConstraintExpr("amd64,gc,!purego")
	for _, zr := range []int{1, 2, 4} {
		strips(zr)
	}
	expKernel()
	Generate()
}
