//go:generate go run . -isa avx512 -out ../../../roofline/stream_avx512_amd64.s -stubs ../../../roofline/stream_avx512_stubs_amd64.go -pkg roofline
//go:generate go run . -isa avx2 -out ../../../roofline/stream_avx2_amd64.s -stubs ../../../roofline/stream_avx2_stubs_amd64.go -pkg roofline

// Command stream generates the write, copy and triad bandwidth kernels of
// package roofline (read lives in ../main.go), for one ISA per run. All
// stores are regular (write-allocate) stores, as a C loop compiled by gcc
// -O3 issues them, not non-temporal ones: a written line is also read
// into the cache first, and that traffic is not counted (STREAM's rule).
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

// unroll is the number of vectors per loop trip.
const unroll = 4

type vec struct {
	width  int // bytes
	suffix string
	alloc  func() VecVirtual
	load   func(m Mem, r VecVirtual)
	store  func(r VecVirtual, m Mem)
}

func write(v vec) {
	name := "write" + v.suffix
	step := v.width * unroll
	TEXT(name, NOSPLIT, "func(dst []byte, x uint64)")
	Doc(fmt.Sprintf("%s stores the 8 bytes of x over dst (len(dst) a multiple of %d):", name, step), "",
		"\tfor i := 0; i < len(dst); i += 8 { binary.LittleEndian.PutUint64(dst[i:], x) }")
	p := Load(Param("dst").Base(), GP64())
	n := Load(Param("dst").Len(), GP64())
	g := Load(Param("x"), GP64())
	t := XMM()
	MOVQ(g, t)
	x := v.alloc()
	VPBROADCASTQ(t, x)
	loop(name, n, step, func(off GPVirtual) {
		for u := 0; u < unroll; u++ {
			v.store(x, Mem{Base: p, Index: off, Scale: 1, Disp: u * v.width})
		}
	})
	VZEROUPPER()
	RET()
}

func copyKernel(v vec) {
	name := "copy" + v.suffix
	step := v.width * unroll
	TEXT(name, NOSPLIT, "func(dst, src []byte)")
	Doc(fmt.Sprintf("%s copies src to dst (same length, a multiple of %d):", name, step), "",
		"\tfor i := range dst { dst[i] = src[i] }")
	d := Load(Param("dst").Base(), GP64())
	s := Load(Param("src").Base(), GP64())
	n := Load(Param("dst").Len(), GP64())
	r := make([]VecVirtual, unroll)
	for i := range r {
		r[i] = v.alloc()
	}
	loop(name, n, step, func(off GPVirtual) {
		for u := range r {
			v.load(Mem{Base: s, Index: off, Scale: 1, Disp: u * v.width}, r[u])
		}
		for u := range r {
			v.store(r[u], Mem{Base: d, Index: off, Scale: 1, Disp: u * v.width})
		}
	})
	VZEROUPPER()
	RET()
}

func triad(v vec) {
	name := "triad" + v.suffix
	step := v.width * unroll
	TEXT(name, NOSPLIT, "func(a, b, c []float32, s float32)")
	Doc(fmt.Sprintf("%s computes a = b + s·c (same lengths, a multiple of %d):", name, step/4), "",
		"\tfor i := range a { a[i] = b[i] + s*c[i] }")
	pa := Load(Param("a").Base(), GP64())
	pb := Load(Param("b").Base(), GP64())
	pc := Load(Param("c").Base(), GP64())
	n := Load(Param("a").Len(), GP64())
	SHLQ(U8(2), n) // bytes
	sx := Load(Param("s"), XMM())
	sv := v.alloc()
	VBROADCASTSS(sx, sv)
	r := make([]VecVirtual, unroll)
	for i := range r {
		r[i] = v.alloc()
	}
	loop(name, n, step, func(off GPVirtual) {
		for u := range r {
			v.load(Mem{Base: pb, Index: off, Scale: 1, Disp: u * v.width}, r[u])
		}
		for u := range r {
			VFMADD231PS(Mem{Base: pc, Index: off, Scale: 1, Disp: u * v.width}, sv, r[u])
		}
		for u := range r {
			v.store(r[u], Mem{Base: pa, Index: off, Scale: 1, Disp: u * v.width})
		}
	})
	VZEROUPPER()
	RET()
}

// loop runs body(off) for off = 0, step, ... < n (bytes).
func loop(name string, n Register, step int, body func(off GPVirtual)) {
	off := GP64()
	XORQ(off, off)
	Label(name + "_loop")
	CMPQ(off, n)
	JAE(LabelRef(name + "_done"))
	body(off)
	ADDQ(U32(step), off)
	JMP(LabelRef(name + "_loop"))
	Label(name + "_done")
}

func main() {
	flag.Parse()
	ConstraintExpr("amd64,gc,!purego")
	var v vec
	switch *isa {
	case "avx512":
		v = vec{64, "AVX512", func() VecVirtual { return ZMM() },
			func(m Mem, r VecVirtual) { VMOVUPS(m, r) }, func(r VecVirtual, m Mem) { VMOVUPS(r, m) }}
	case "avx2":
		v = vec{32, "AVX2", func() VecVirtual { return YMM() },
			func(m Mem, r VecVirtual) { VMOVUPS(m, r) }, func(r VecVirtual, m Mem) { VMOVUPS(r, m) }}
	default:
		log.Fatalf("unknown -isa %q", *isa)
	}
	write(v)
	copyKernel(v)
	triad(v)
	Generate()
}
