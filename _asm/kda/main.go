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

// strips generates kdaStrips<ISA>_<W>: one token over strips of W =
// lanes·zr value columns, both phases per strip.
func strips(zr int) {
	w := lanes * zr
	s := &stripOps{name: fmt.Sprintf("kdaStrips%s_%d", suffix, w), zr: zr}
	name := s.name
	TEXT(name, NOSPLIT, "func(s *float32, lds int, k int, alpha, kk, qs, v *float32, beta float32, o *float32, nstrips int)")
	Doc(
		fmt.Sprintf("%s runs one KDA token on nstrips strips of %d value columns", name, w),
		"of a K×lds row-major state s (k rows): per strip, see recurrentGeneric:",
		"",
		"\tfor i < k { p += kk[i]·(alpha[i]·S[i,strip]) }",
		"\tu = beta·(v[strip] − p)",
		"\tfor i < k { S[i,strip] = alpha[i]·S[i,strip] + kk[i]·u; o[strip] += qs[i]·S[i,strip] }",
	)
	s.args()
	s.registers()

	Label(name + "_strip")
	CMPQ(s.ns, U8(0))
	JE(LabelRef(name + "_done"))
	s.predict()
	s.update()
	ADDQ(U32(4*w), s.sp)
	ADDQ(U32(4*w), s.pv)
	ADDQ(U32(4*w), s.po)
	DECQ(s.ns)
	JMP(LabelRef(name + "_strip"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// stripOps are what strips' steps share: the arguments, the chains × zr
// accumulators, the strip's u and the row loop's cursors.
type stripOps struct {
	name                                string
	zr, chains                          int
	sp, lds, kn, pa, pk, pq, pv, po, ns Register
	beta                                VecVirtual
	acc                                 [][]VecVirtual
	u                                   []VecVirtual
	row, i, kleft                       Register
}

// args loads the arguments.
func (s *stripOps) args() {
	s.sp = Load(Param("s"), GP64())
	s.lds = Load(Param("lds"), GP64())
	SHLQ(U8(2), s.lds)
	s.kn = Load(Param("k"), GP64())
	s.pa = Load(Param("alpha"), GP64())
	s.pk = Load(Param("kk"), GP64())
	s.pq = Load(Param("qs"), GP64())
	s.pv = Load(Param("v"), GP64())
	s.po = Load(Param("o"), GP64())
	s.ns = Load(Param("nstrips"), GP64())
	bx := Load(Param("beta"), XMM())
	s.beta = vreg()
	VBROADCASTSS(bx, s.beta)
}

// registers allocates the accumulators (chains × zr of them hide the FMA
// latency of the row reductions), u and the row cursors.
func (s *stripOps) registers() {
	s.chains = max(1, 4/s.zr)
	s.acc = make([][]VecVirtual, s.chains)
	for c := range s.acc {
		s.acc[c] = make([]VecVirtual, s.zr)
		for z := range s.acc[c] {
			s.acc[c][z] = vreg()
		}
	}
	s.u = make([]VecVirtual, s.zr)
	for z := range s.u {
		s.u[z] = vreg()
	}
	s.row, s.i, s.kleft = GP64(), GP64(), GP64()
}

// zero zeroes the accumulators.
func (s *stripOps) zero() {
	for c := range s.acc {
		for z := range s.acc[c] {
			VXORPS(s.acc[c][z].AsY(), s.acc[c][z].AsY(), s.acc[c][z].AsY())
		}
	}
}

// reduce adds the chains into acc[0].
func (s *stripOps) reduce() {
	for c := 1; c < s.chains; c++ {
		for z := 0; z < s.zr; z++ {
			VADDPS(s.acc[c][z], s.acc[0][z], s.acc[0][z])
		}
	}
}

// rowLoop emits a loop over k rows, chains rows per iteration (a
// remainder loop of one row per iteration finishes).
func (s *stripOps) rowLoop(tag string, body func(c int, rowReg, idx Register)) {
	l := s.name + tag
	MOVQ(s.sp, s.row)
	XORQ(s.i, s.i)
	MOVQ(s.kn, s.kleft)
	Label(l + "_multi")
	CMPQ(s.kleft, U32(s.chains))
	JL(LabelRef(l + "_single"))
	for c := 0; c < s.chains; c++ {
		body(c, s.row, s.i)
		ADDQ(s.lds, s.row)
		INCQ(s.i)
	}
	SUBQ(U32(s.chains), s.kleft)
	JMP(LabelRef(l + "_multi"))
	Label(l + "_single")
	CMPQ(s.kleft, U8(0))
	JE(LabelRef(l + "_end"))
	body(0, s.row, s.i)
	ADDQ(s.lds, s.row)
	INCQ(s.i)
	DECQ(s.kleft)
	JMP(LabelRef(l + "_single"))
	Label(l + "_end")
}

// predict emits phase 1, decay and predict: u = beta·(v − Σ kk·(alpha·S)).
// The decayed state is not stored here: phase 2 decays it again in
// registers, which saves a store per element.
func (s *stripOps) predict() {
	s.zero()
	s.rowLoop("_p1", func(c int, r, idx Register) {
		a, kb := vreg(), vreg()
		VBROADCASTSS(Mem{Base: s.pa, Index: idx, Scale: 4}, a)
		VBROADCASTSS(Mem{Base: s.pk, Index: idx, Scale: 4}, kb)
		for z := 0; z < s.zr; z++ {
			t := vreg()
			VMULPS(Mem{Base: r, Disp: 4 * lanes * z}, a, t)
			VFMADD231PS(t, kb, s.acc[c][z])
		}
	})
	s.reduce()
	for z := 0; z < s.zr; z++ {
		VMOVUPS(Mem{Base: s.pv, Disp: 4 * lanes * z}, s.u[z])
		VSUBPS(s.acc[0][z], s.u[z], s.u[z])
		VMULPS(s.beta, s.u[z], s.u[z])
	}
}

// update emits phase 2, write and read out: S = alpha·S + kk·u stored, o
// = Σ qs·S.
func (s *stripOps) update() {
	s.zero()
	s.rowLoop("_p2", func(c int, r, idx Register) {
		a, kb, qb := vreg(), vreg(), vreg()
		VBROADCASTSS(Mem{Base: s.pa, Index: idx, Scale: 4}, a)
		VBROADCASTSS(Mem{Base: s.pk, Index: idx, Scale: 4}, kb)
		VBROADCASTSS(Mem{Base: s.pq, Index: idx, Scale: 4}, qb)
		for z := 0; z < s.zr; z++ {
			t := vreg()
			VMULPS(Mem{Base: r, Disp: 4 * lanes * z}, a, t)
			VFMADD231PS(s.u[z], kb, t)
			VMOVUPS(t, Mem{Base: r, Disp: 4 * lanes * z})
			VFMADD231PS(t, qb, s.acc[c][z])
		}
	})
	s.reduce()
	for z := 0; z < s.zr; z++ {
		VMOVUPS(s.acc[0][z], Mem{Base: s.po, Disp: 4 * lanes * z})
	}
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
