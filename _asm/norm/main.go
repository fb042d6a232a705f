//go:generate go run . -isa avx2 -out ../../kernels/norm/norm_avx2_amd64.s -stubs ../../kernels/norm/norm_avx2_stubs_amd64.go -pkg norm
//go:generate go run . -isa avx512 -out ../../kernels/norm/norm_avx512_amd64.s -stubs ../../kernels/norm/norm_avx512_stubs_amd64.go -pkg norm

// Command norm generates the RMSNorm row kernels of kernels/norm for one
// ISA per run (-isa avx2|avx512), following the bulk/tail contract: the asm
// handles the largest multiple of the vector width, Go finishes the tail.
package main

import (
	"flag"
	"fmt"
	"log"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

var isa = flag.String("isa", "avx512", "avx2 or avx512")

// vec abstracts the register width.
type vec struct {
	name  string // function suffix
	lanes int    // float32 lanes
	alloc func() VecVirtual
	zero  func(VecVirtual)
	// reduce horizontally adds v into the low lane of an XMM register.
	reduce func(v VecVirtual) Register
}

var isas = map[string]vec{
	"avx2": {
		name: "AVX2", lanes: 8, alloc: YMM,
		zero: func(v VecVirtual) { VXORPS(v, v, v) },
		reduce: func(v VecVirtual) Register {
			hi := XMM()
			VEXTRACTF128(U8(1), v, hi)
			lo := v.AsX()
			VADDPS(hi, lo, lo)
			return lo
		},
	},
	"avx512": {
		name: "AVX512", lanes: 16, alloc: ZMM,
		zero: func(v VecVirtual) { VXORPS(v.AsY(), v.AsY(), v.AsY()) },
		reduce: func(v VecVirtual) Register {
			hi := YMM()
			VEXTRACTF64X4(U8(1), v, hi)
			lo := v.AsY()
			VADDPS(hi, lo, lo)
			hx := XMM()
			VEXTRACTF128(U8(1), lo, hx)
			x := v.AsX()
			VADDPS(hx, x, x)
			return x
		},
	},
}

const unroll = 4

func sumSquares(v vec) {
	name := "sumSquares" + v.name
	TEXT(name, NOSPLIT, "func(x []float32) float32")
	Doc(
		name+" returns the sum of squares of the first len(x) rounded down to",
		fmt.Sprintf("a multiple of %d elements; the caller adds the tail:", v.lanes),
		"",
		fmt.Sprintf("\tfor i := 0; i < len(x)&^%d; i++ { s += x[i] * x[i] }", v.lanes-1),
	)
	p := Load(Param("x").Base(), GP64())
	n := Load(Param("x").Len(), GP64())
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
		t := v.alloc()
		VMOVUPS(Mem{Base: p, Disp: 4 * v.lanes * i}, t)
		VFMADD231PS(t, t, acc[i])
	}
	ADDQ(U32(4*step), p)
	SUBQ(U32(step), n)
	JMP(LabelRef(name + "_big"))
	Label(name + "_single")
	CMPQ(n, U32(v.lanes))
	JL(LabelRef(name + "_done"))
	t := v.alloc()
	VMOVUPS(Mem{Base: p}, t)
	VFMADD231PS(t, t, acc[0])
	ADDQ(U32(4*v.lanes), p)
	SUBQ(U32(v.lanes), n)
	JMP(LabelRef(name + "_single"))
	Label(name + "_done")
	VADDPS(acc[1], acc[0], acc[0])
	VADDPS(acc[3], acc[2], acc[2])
	VADDPS(acc[2], acc[0], acc[0])
	x := v.reduce(acc[0])
	VHADDPS(x, x, x)
	VHADDPS(x, x, x)
	Store(x, ReturnIndex(0))
	VZEROUPPER()
	RET()
}

func scaleMul(v vec) {
	name := "scaleMul" + v.name
	TEXT(name, NOSPLIT, "func(dst, x, w []float32, scale float32)")
	Doc(
		name+" writes x·scale·w elementwise for the first len(x) rounded down",
		fmt.Sprintf("to a multiple of %d elements; dst and w must be at least as long as x:", v.lanes),
		"",
		fmt.Sprintf("\tfor i := 0; i < len(x)&^%d; i++ { dst[i] = x[i] * scale * w[i] }", v.lanes-1),
	)
	d := Load(Param("dst").Base(), GP64())
	p := Load(Param("x").Base(), GP64())
	w := Load(Param("w").Base(), GP64())
	n := Load(Param("x").Len(), GP64())
	sc := Load(Param("scale"), XMM())
	s := v.alloc()
	VBROADCASTSS(sc, s)
	i := GP64()
	XORQ(i, i)
	SHRQ(U8(map[int]uint64{8: 3, 16: 4}[v.lanes]), n)
	Label(name + "_loop")
	CMPQ(n, U8(0))
	JE(LabelRef(name + "_done"))
	a, b := v.alloc(), v.alloc()
	VMULPS(Mem{Base: p, Index: i, Scale: 1}, s, a)
	VMOVUPS(Mem{Base: w, Index: i, Scale: 1}, b)
	VMULPS(b, a, a)
	VMOVUPS(a, Mem{Base: d, Index: i, Scale: 1})
	ADDQ(U32(4*v.lanes), i)
	DECQ(n)
	JMP(LabelRef(name + "_loop"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

func main() {
	flag.Parse()
	v, ok := isas[*isa]
	if !ok {
		log.Fatalf("unknown -isa %q", *isa)
	}
	ConstraintExpr("amd64,gc,!purego")
	sumSquares(v)
	scaleMul(v)
	Generate()
}
