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
	Generate()
}
