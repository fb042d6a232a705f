//go:generate go run . -isa avx512 -out ../../kernels/mla/mla_avx512_amd64.s -stubs ../../kernels/mla/mla_avx512_stubs_amd64.go -pkg mla
//go:generate go run . -isa avx512bf16 -out ../../kernels/mla/mla_avx512bf16_amd64.s -stubs ../../kernels/mla/mla_avx512bf16_stubs_amd64.go -pkg mla
//go:generate go run . -isa avx2 -out ../../kernels/mla/mla_avx2_amd64.s -stubs ../../kernels/mla/mla_avx2_stubs_amd64.go -pkg mla

// Command mla generates the kernels of kernels/mla's absorbed decode at
// Kimi Linear's widths (latent R = 512, row W = R + 64 = 576, compile-time
// strides), one ISA per run (-isa avx512|avx2): the scores of 4 heads
// against TB cached tokens per register tile, and the latent accumulation
// z = corr·z + P·V (4 heads × VB vectors of latent values per tile).
//
//	-isa avx512bf16  mlaScoresAVX512BF16_576 (4×4 zmm tile of VDPBF16PS over BF16
//	             rows), mlaAccumAVX512BF16_576 (BF16 rows widened by VPUNPCK,
//	             4 heads × 4 zmm), mlaToBF16AVX512BF16 (VCVTNE2PS2BF16); see bf16.go
//
//	-isa avx512  mlaScoresAVX512_576 (4×4 zmm tile), mlaAccumAVX512_576 (4 heads × 4 zmm),
//	             mlaRowMaxAVX512 (the prefill's softmax row maximum; rowmax.go)
//	-isa avx2    mlaScoresAVX2_576 (4×2 ymm tile: 8 accumulators, 2 keys, 1 query
//	             of the 16 registers), mlaAccumAVX2_576 (4 heads × 2 ymm)
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"regexp"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

const (
	R = 512
	W = 576
)

var isaFlag = flag.String("isa", "avx512", "avx512, avx512bf16 or avx2")

// isa: the vector width and the tile shapes of one instruction set.
type isa struct {
	suffix string
	lanes  int               // float32 lanes per vector
	vreg   func() VecVirtual // vector register allocator
	tb     int               // tokens per score tile (4 heads × tb; nk a multiple of tb)
	vb     int               // vectors per head per accumulation tile
	bf16   bool              // BF16 rows and queries (bf16.go)
}

var isas = map[string]*isa{
	"avx512":     {suffix: "AVX512", lanes: 16, vreg: ZMM, tb: 4, vb: 4},
	"avx512bf16": {suffix: "AVX512BF16", lanes: 16, vreg: ZMM, bf16: true},
	"avx2":       {suffix: "AVX2", lanes: 8, vreg: YMM, tb: 2, vb: 2},
}

var I *isa // the ISA being generated

// scores generates mlaScores<ISA>_576: 4 heads × tb tokens per register
// tile, vector by vector along the row.
func scores() {
	name := fmt.Sprintf("mlaScores%s_%d", I.suffix, W)
	TEXT(name, NOSPLIT, "func(q, k, s *float32, lds, nh, nk int, scale float32)")
	mult := "nh and nk multiples of 4"
	if I.tb != 4 {
		mult = fmt.Sprintf("nh a multiple of 4, nk of %d", I.tb)
	}
	Doc(
		name+" computes scaled dot products of nh query rows with nk key",
		fmt.Sprintf("rows, both of stride %d (%s):", W, mult),
		"",
		fmt.Sprintf("\tfor h < nh, j < nk: s[h*lds+j] = scale * Σ_{d<%d} q[h*%d+d]*k[j*%d+d]", W, W, W),
	)
	l := loadScoreArgs()
	scx := Load(Param("scale"), XMM())
	VBROADCASTSS(scx, scx)
	const rb = 4 * W        // row bytes
	var acc [4][]VecVirtual // 4 heads × tb tokens
	l.emit(rb, I.tb, 4*I.lanes, func() {
		for a := range acc {
			acc[a] = make([]VecVirtual, I.tb)
			for b := range acc[a] {
				acc[a][b] = I.vreg()
				zero(acc[a][b])
			}
		}
	}, func(kp, d Register) {
		scoreStep(l.q, kp, d, rb, acc)
	}, func(out, j Register) {
		if I.tb == 4 {
			reduce4x4(acc, scx, out, j, l.lds)
		} else {
			reduce4x2(acc, scx, out, j, l.lds)
		}
	})
}

// scoreStep emits one step along the rows at byte d: the tile's key
// vectors, the prefetch of the next tile's rows (a line per row per step:
// the first head group meets each cached row in DRAM, and this keeps it
// streaming), then each head's query vector FMAd with them.
func scoreStep(q, kp, d Register, rb int, acc [4][]VecVirtual) {
	kv := make([]VecVirtual, I.tb)
	for b := range kv {
		kv[b] = I.vreg()
		VMOVUPS(Mem{Base: kp, Index: d, Scale: 1, Disp: b * rb}, kv[b])
	}
	for b := 0; b < I.tb; b++ {
		PREFETCHT0(Mem{Base: kp, Index: d, Scale: 1, Disp: (I.tb + b) * rb})
	}
	for a := 0; a < 4; a++ {
		qv := I.vreg()
		VMOVUPS(Mem{Base: q, Index: d, Scale: 1, Disp: a * rb}, qv)
		for b := range kv {
			VFMADD231PS(kv[b], qv, acc[a][b])
		}
	}
}

// scoreArgs are the registers of the scores kernels' loops: the query
// rows q, the output rows s (lds bytes apart) and the heads left nh.
type scoreArgs struct {
	q, s, lds, nh Register
}

// loadScoreArgs loads the scores kernels' q, s, lds and nh.
func loadScoreArgs() scoreArgs {
	var l scoreArgs
	l.q = Load(Param("q"), GP64())
	l.s = Load(Param("s"), GP64())
	l.lds = Load(Param("lds"), GP64())
	SHLQ(U8(2), l.lds)
	l.nh = Load(Param("nh"), GP64())
	return l
}

// emit emits the scores kernels' loops: heads 4 at a time (sc_h), tiles
// of tb key rows of rb bytes (sc_j), the rows dstep bytes a step (sc_d).
// Per tile tile() starts the accumulators, step(kp, d) emits a step at
// byte d of the tile's first key row kp, and reduce(out, j) stores the
// tile's sums at column j of the output rows from out.
func (l scoreArgs) emit(rb, tb, dstep int, tile func(), step func(kp, d Register), reduce func(out, j Register)) {
	kp, j, d, out := GP64(), GP64(), GP64(), GP64()
	Label("sc_h")
	CMPQ(l.nh, U8(0))
	JE(LabelRef("sc_done"))
	Load(Param("k"), kp)
	XORQ(j, j)
	Label("sc_j")
	nk := Load(Param("nk"), GP64())
	CMPQ(j, nk)
	JAE(LabelRef("sc_jdone"))
	tile()
	XORQ(d, d)
	Label("sc_d")
	step(kp, d)
	ADDQ(U8(dstep), d)
	CMPQ(d, U32(rb))
	JB(LabelRef("sc_d"))
	MOVQ(l.s, out)
	reduce(out, j)
	ADDQ(U32(tb*rb), kp)
	ADDQ(U8(tb), j)
	JMP(LabelRef("sc_j"))
	Label("sc_jdone")
	ADDQ(U32(4*rb), l.q)
	for i := 0; i < 4; i++ {
		ADDQ(l.lds, l.s)
	}
	SUBQ(U8(4), l.nh)
	JMP(LabelRef("sc_h"))
	Label("sc_done")
	VZEROUPPER()
	RET()
}

// zero clears a vector register (VPXORD for zmm: it may be X16–X31).
func zero(v VecVirtual) {
	if I.lanes == 16 {
		VPXORD(v, v, v)
	} else {
		VXORPS(v, v, v)
	}
}

// reduce4x4 (zmm): each head's four accumulators into four lanes of an
// xmm, scaled, stored at s[h*lds+j : h*lds+j+4].
func reduce4x4(acc [4][]VecVirtual, scx, out, j, lds Register) {
	for a := 0; a < 4; a++ {
		var x [4]Register
		for b := 0; b < 4; b++ {
			hi := YMM()
			VEXTRACTF64X4(U8(1), acc[a][b], hi)
			lo := acc[a][b].AsY()
			VADDPS(hi, lo, lo)
			hx := XMM()
			VEXTRACTF32X4(U8(1), lo, hx)
			xx := acc[a][b].AsX()
			VADDPS(hx, xx, xx)
			x[b] = xx
		}
		// 4×4 transpose-and-add with EVEX-encodable unpacks (the
		// accumulators may live in X16–X31, which VHADDPS cannot reach).
		t0, t1 := XMM(), XMM()
		VUNPCKLPS(x[1], x[0], t0)
		VUNPCKHPS(x[1], x[0], t1)
		VADDPS(t1, t0, t0)
		t2, t3 := XMM(), XMM()
		VUNPCKLPS(x[3], x[2], t2)
		VUNPCKHPS(x[3], x[2], t3)
		VADDPS(t3, t2, t2)
		VUNPCKLPD(t2, t0, t1)
		VUNPCKHPD(t2, t0, t3)
		VADDPS(t3, t1, t1)
		VMULPS(scx, t1, t1)
		VMOVUPS(t1, Mem{Base: out, Index: j, Scale: 4})
		ADDQ(lds, out)
	}
}

// reduce4x2 (ymm): per pair of heads, the four sums
// [s(a,0) s(a,1) s(a+1,0) s(a+1,1)] by two rounds of VHADDPS and an add
// of the 128-bit halves, scaled; the low pair is stored at s[a*lds+j],
// the high pair at s[(a+1)*lds+j].
func reduce4x2(acc [4][]VecVirtual, scx, out, j, lds Register) {
	for a := 0; a < 4; a += 2 {
		v0, v1, v2, v3 := acc[a][0], acc[a][1], acc[a+1][0], acc[a+1][1]
		VHADDPS(v1, v0, v0)
		VHADDPS(v3, v2, v2)
		VHADDPS(v2, v0, v0) // per 128-bit half: [v0 v1 v2 v3] partial sums
		hx := XMM()
		VEXTRACTF128(U8(1), v0, hx)
		x := v0.AsX()
		VADDPS(hx, x, x)
		VMULPS(scx, x, x)
		VMOVLPS(x, Mem{Base: out, Index: j, Scale: 4})
		ADDQ(lds, out)
		VMOVHPS(x, Mem{Base: out, Index: j, Scale: 4})
		ADDQ(lds, out)
	}
}

// accum generates mlaAccum<ISA>_576: 4 heads × vb vectors of latent
// values per tile, over all key rows.
func accum() {
	name := fmt.Sprintf("mlaAccum%s_%d", I.suffix, W)
	TEXT(name, NOSPLIT, "func(z, pt, v, corr *float32, nh, nk, ldpt int)")
	Doc(
		name+" rescales and accumulates nh latent outputs z (stride "+fmt.Sprint(R)+", nh a",
		fmt.Sprintf("multiple of 4) from nk value rows v (stride %d), with the probabilities", W),
		"transposed, pt[j*ldpt+h]:",
		"",
		fmt.Sprintf("\tfor h < nh, d < %d: z[h*%d+d] = corr[h]*z[h*%d+d] + Σ_{j<nk} pt[j*ldpt+h]*v[j*%d+d]", R, R, R, W),
	)
	vbytes := 4 * I.lanes
	l := loadAccumArgs()
	l.d, l.vp, l.pp, l.j = GP64(), GP64(), GP64(), GP64()
	zat := func(a, b int) Mem { return Mem{Base: l.z, Index: l.d, Scale: 1, Disp: 4*R*a + vbytes*b} }
	var acc [4][]VecVirtual // 4 heads × vb vectors of latent values
	l.emit(4*W, U32(vbytes*I.vb), 4*R, func() {
		for a := 0; a < 4; a++ {
			c := I.vreg()
			VBROADCASTSS(Mem{Base: l.corr, Disp: 4 * a}, c)
			acc[a] = make([]VecVirtual, I.vb)
			for b := range acc[a] {
				acc[a][b] = I.vreg()
				VMULPS(zat(a, b), c, acc[a][b])
			}
		}
	}, func() {
		vv := make([]VecVirtual, I.vb)
		for b := range vv {
			vv[b] = I.vreg()
			VMOVUPS(Mem{Base: l.vp, Index: l.d, Scale: 1, Disp: vbytes * b}, vv[b])
		}
		accumToken(l.pp, vv, acc)
	}, func() {
		for a := 0; a < 4; a++ {
			for b := range acc[a] {
				VMOVUPS(acc[a][b], zat(a, b))
			}
		}
	})
}

// accumToken emits one key row's terms: each head's probability at pp
// broadcast and FMAd with the row's value vectors vv.
func accumToken(pp Register, vv []VecVirtual, acc [4][]VecVirtual) {
	for a := 0; a < 4; a++ {
		pb := I.vreg()
		VBROADCASTSS(Mem{Base: pp, Disp: 4 * a}, pb)
		for b := range vv {
			VFMADD231PS(vv[b], pb, acc[a][b])
		}
	}
}

// accumArgs are the registers of the accumulation kernels' loops: z, pt,
// corr, the heads left nh and pt's stride ldpt (bytes), loaded; the tile's
// byte offset d, the value and probability rows vp and pp and the rows
// left j, allocated by the caller.
type accumArgs struct {
	z, pt, corr, nh, ldpt Register
	d, vp, pp, j          Register
}

// loadAccumArgs loads z, pt, corr, nh and ldpt.
func loadAccumArgs() accumArgs {
	var l accumArgs
	l.z = Load(Param("z"), GP64())
	l.pt = Load(Param("pt"), GP64())
	l.corr = Load(Param("corr"), GP64())
	l.nh = Load(Param("nh"), GP64())
	l.ldpt = Load(Param("ldpt"), GP64())
	SHLQ(U8(2), l.ldpt)
	return l
}

// emit emits the accumulation kernels' loops: heads 4 at a time (ac_h),
// tiles at d = 0, dstep, … < dend (ac_d), the key rows of rb bytes
// (ac_j). Per tile load() scales z into the accumulators and store()
// writes them back; token() emits a key row.
func (l accumArgs) emit(rb int, dstep Constant, dend int, load, token, store func()) {
	Label("ac_h")
	CMPQ(l.nh, U8(0))
	JE(LabelRef("ac_done"))
	XORQ(l.d, l.d)
	Label("ac_d")
	load()
	Load(Param("v"), l.vp)
	MOVQ(l.pt, l.pp)
	Load(Param("nk"), l.j)
	Label("ac_j")
	CMPQ(l.j, U8(0))
	JE(LabelRef("ac_jdone"))
	token()
	ADDQ(U32(rb), l.vp)
	ADDQ(l.ldpt, l.pp)
	DECQ(l.j)
	JMP(LabelRef("ac_j"))
	Label("ac_jdone")
	store()
	ADDQ(dstep, l.d)
	CMPQ(l.d, U32(dend))
	JB(LabelRef("ac_d"))
	ADDQ(U32(4*4*R), l.z)
	ADDQ(U8(16), l.pt)
	ADDQ(U8(16), l.corr)
	SUBQ(U8(4), l.nh)
	JMP(LabelRef("ac_h"))
	Label("ac_done")
	VZEROUPPER()
	RET()
}

func main() {
	flag.Parse()
	var ok bool
	if I, ok = isas[*isaFlag]; !ok {
		log.Fatalf("unknown -isa %q", *isaFlag)
	}
	ConstraintExpr("amd64,gc,!purego")
	if I.bf16 {
		scoresBF16()
		accumBF16()
		toBF16()
	} else {
		scores()
		accum()
	}
	if I.suffix == "AVX512" {
		rowMax()
	}
	Generate()
	if I.lanes == 8 {
		checkVEX(flag.Lookup("out").Value.String())
	}
}

// checkVEX fails if the allocator gave an AVX2 kernel a vector register
// above 15: the Go assembler would encode it with EVEX (AVX-512).
func checkVEX(path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	if m := regexp.MustCompile(`\b[XYZ](1[6-9]|2[0-9]|3[01])\b|\bZ[0-9]+\b|\bK[0-7]\b`).Find(b); m != nil {
		log.Fatalf("%s: %s needs AVX-512", path, m)
	}
}
