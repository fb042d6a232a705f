//go:generate go run . -isa avx512 -out ../../roofline/read_avx512_amd64.s -stubs ../../roofline/read_avx512_stubs_amd64.go -pkg roofline
//go:generate go run . -isa avx2 -out ../../roofline/read_avx2_amd64.s -stubs ../../roofline/read_avx2_stubs_amd64.go -pkg roofline

// Command roofline generates the bandwidth microbenchmark kernels of
// package roofline: reads of S interleaved sequential streams (the buffer
// cut into S equal parts, one line of each in turn), for one ISA per run.
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

// unroll is the number of vector loads per stream per iteration.
const unroll = 2

// read generates read<S><ISA>: the S streams' loads added into
// accumulators, unroll vectors a stream per iteration.
func read(streams, width int, alloc func() VecVirtual, add func(m Mem, acc VecVirtual)) {
	suffix := map[int]string{32: "AVX2", 64: "AVX512"}[width]
	name := fmt.Sprintf("read%d%s", streams, suffix)
	step := width * unroll
	TEXT(name, NOSPLIT, "func(buf []byte) uint64")
	Doc(
		fmt.Sprintf("%s reads buf as %d interleaved streams (len(buf) must be a", name, streams),
		fmt.Sprintf("multiple of %d) and returns a checksum so the loads are not dead:", streams*step),
		"",
		fmt.Sprintf("\tpart := len(buf)/%d; for o := 0; o < part; o += %d { for s := 0; s < %d; s++ { sum += buf[s*part+o:][:%d] } }", streams, step, streams, step),
	)
	part, ptrs := streamPtrs(streams)
	acc := make([]VecVirtual, streams*unroll)
	for i := range acc {
		acc[i] = alloc()
		VPXOR(acc[i].AsY(), acc[i].AsY(), acc[i].AsY())
	}
	off := GP64()
	XORQ(off, off)
	Label(name + "_loop")
	CMPQ(off, part)
	JAE(LabelRef(name + "_done"))
	for u := 0; u < unroll; u++ {
		for s := 0; s < streams; s++ {
			add(Mem{Base: ptrs[s], Index: off, Scale: 1, Disp: u * width}, acc[s*unroll+u])
		}
	}
	ADDQ(U32(step), off)
	JMP(LabelRef(name + "_loop"))
	Label(name + "_done")
	Store(checksum(acc, width), ReturnIndex(0))
	VZEROUPPER()
	RET()
}

// streamPtrs returns the part length (bytes of each stream) and the
// streams' pointers into buf.
func streamPtrs(streams int) (Register, []Register) {
	base := Load(Param("buf").Base(), GP64())
	n := Load(Param("buf").Len(), GP64())
	part := GP64()
	MOVQ(n, part)
	SHRQ(U8(map[int]uint64{1: 0, 2: 1, 4: 2, 8: 3}[streams]), part)
	ptrs := []Register{base}
	for s := 1; s < streams; s++ {
		p := GP64()
		MOVQ(ptrs[s-1], p)
		ADDQ(part, p)
		ptrs = append(ptrs, p)
	}
	return part, ptrs
}

// checksum adds the accumulators' qwords into a GP register.
func checksum(acc []VecVirtual, width int) Register {
	for i := 1; i < len(acc); i++ {
		add2(acc[i], acc[0], width)
	}
	x := acc[0].AsX()
	if width == 64 {
		y := YMM()
		VEXTRACTI64X4(U8(1), acc[0], y)
		VPADDQ(y, acc[0].AsY(), acc[0].AsY())
	}
	hi := XMM()
	VEXTRACTI128(U8(1), acc[0].AsY(), hi)
	VPADDQ(hi, x, x)
	r := GP64()
	VPEXTRQ(U8(0), x, r)
	t := GP64()
	VPEXTRQ(U8(1), x, t)
	ADDQ(t, r)
	return r
}

func add2(src, dst VecVirtual, width int) { VPADDQ(src, dst, dst) }

func main() {
	flag.Parse()
	ConstraintExpr("amd64,gc,!purego")
	switch *isa {
	case "avx512":
		for _, s := range []int{1, 2, 4, 8} {
			read(s, 64, ZMM, func(m Mem, acc VecVirtual) { VPADDQ(m, acc, acc) })
		}
	case "avx2":
		for _, s := range []int{1, 2, 4, 8} {
			read(s, 32, YMM, func(m Mem, acc VecVirtual) { VPADDQ(m, acc, acc) })
		}
	default:
		log.Fatalf("unknown -isa %q", *isa)
	}
	Generate()
}
