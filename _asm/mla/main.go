//go:generate go run . -out ../../kernels/mla/mla_avx512_amd64.s -stubs ../../kernels/mla/mla_avx512_stubs_amd64.go -pkg mla

// Command mla generates the AVX-512 kernels of kernels/mla's absorbed
// decode at Kimi Linear's widths (latent R = 512, row W = R + 64 = 576,
// compile-time strides): the scores of 4 heads against 4 cached tokens per
// register tile, and the latent accumulation z = corr·z + P·V (4 heads ×
// 64 latent values per tile).
package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

const (
	R = 512
	W = 576
)

func scores() {
	name := fmt.Sprintf("mlaScoresAVX512_%d", W)
	TEXT(name, NOSPLIT, "func(q, k, s *float32, lds, nh, nk int, scale float32)")
	Doc(
		name+" computes scaled dot products of nh query rows with nk key",
		fmt.Sprintf("rows, both of stride %d (nh and nk multiples of 4):", W),
		"",
		fmt.Sprintf("\tfor h < nh, j < nk: s[h*lds+j] = scale * Σ_{d<%d} q[h*%d+d]*k[j*%d+d]", W, W, W),
	)
	q := Load(Param("q"), GP64())
	s := Load(Param("s"), GP64())
	lds := Load(Param("lds"), GP64())
	SHLQ(U8(2), lds)
	nh := Load(Param("nh"), GP64())
	scx := Load(Param("scale"), XMM())
	VBROADCASTSS(scx, scx)
	kp, j, d, out := GP64(), GP64(), GP64(), GP64()
	const rb = 4 * W // row bytes
	Label("sc_h")
	CMPQ(nh, U8(0))
	JE(LabelRef("sc_done"))
	Load(Param("k"), kp)
	XORQ(j, j)
	Label("sc_j")
	nk := Load(Param("nk"), GP64())
	CMPQ(j, nk)
	JAE(LabelRef("sc_jdone"))
	var acc [4][4]VecVirtual
	for a := range acc {
		for b := range acc[a] {
			acc[a][b] = ZMM()
			VPXORD(acc[a][b], acc[a][b], acc[a][b])
		}
	}
	XORQ(d, d)
	Label("sc_d")
	var kv [4]VecVirtual
	for b := range kv {
		kv[b] = ZMM()
		VMOVUPS(Mem{Base: kp, Index: d, Scale: 1, Disp: b * rb}, kv[b])
	}
	for a := 0; a < 4; a++ {
		qv := ZMM()
		VMOVUPS(Mem{Base: q, Index: d, Scale: 1, Disp: a * rb}, qv)
		for b := 0; b < 4; b++ {
			VFMADD231PS(kv[b], qv, acc[a][b])
		}
	}
	ADDQ(U8(64), d)
	CMPQ(d, U32(rb))
	JB(LabelRef("sc_d"))
	// reduce each head's four accumulators into four lanes of an xmm
	MOVQ(s, out)
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
	ADDQ(U32(4*rb), kp)
	ADDQ(U8(4), j)
	JMP(LabelRef("sc_j"))
	Label("sc_jdone")
	ADDQ(U32(4*rb), q)
	for i := 0; i < 4; i++ {
		ADDQ(lds, s)
	}
	SUBQ(U8(4), nh)
	JMP(LabelRef("sc_h"))
	Label("sc_done")
	VZEROUPPER()
	RET()
}

func accum() {
	name := fmt.Sprintf("mlaAccumAVX512_%d", W)
	TEXT(name, NOSPLIT, "func(z, pt, v, corr *float32, nh, nk, ldpt int)")
	Doc(
		name+" rescales and accumulates nh latent outputs z (stride "+fmt.Sprint(R)+", nh a",
		fmt.Sprintf("multiple of 4) from nk value rows v (stride %d), with the probabilities", W),
		"transposed, pt[j*ldpt+h]:",
		"",
		fmt.Sprintf("\tfor h < nh, d < %d: z[h*%d+d] = corr[h]*z[h*%d+d] + Σ_{j<nk} pt[j*ldpt+h]*v[j*%d+d]", R, R, R, W),
	)
	z := Load(Param("z"), GP64())
	pt := Load(Param("pt"), GP64())
	corr := Load(Param("corr"), GP64())
	nh := Load(Param("nh"), GP64())
	ldpt := Load(Param("ldpt"), GP64())
	SHLQ(U8(2), ldpt)
	d, vp, pp, j := GP64(), GP64(), GP64(), GP64()
	Label("ac_h")
	CMPQ(nh, U8(0))
	JE(LabelRef("ac_done"))
	XORQ(d, d)
	Label("ac_d")
	var acc [4][4]VecVirtual
	for a := 0; a < 4; a++ {
		c := ZMM()
		VBROADCASTSS(Mem{Base: corr, Disp: 4 * a}, c)
		for b := 0; b < 4; b++ {
			acc[a][b] = ZMM()
			VMULPS(Mem{Base: z, Index: d, Scale: 1, Disp: 4*R*a + 64*b}, c, acc[a][b])
		}
	}
	Load(Param("v"), vp)
	MOVQ(pt, pp)
	Load(Param("nk"), j)
	Label("ac_j")
	CMPQ(j, U8(0))
	JE(LabelRef("ac_jdone"))
	var vv [4]VecVirtual
	for b := range vv {
		vv[b] = ZMM()
		VMOVUPS(Mem{Base: vp, Index: d, Scale: 1, Disp: 64 * b}, vv[b])
	}
	for a := 0; a < 4; a++ {
		pb := ZMM()
		VBROADCASTSS(Mem{Base: pp, Disp: 4 * a}, pb)
		for b := 0; b < 4; b++ {
			VFMADD231PS(vv[b], pb, acc[a][b])
		}
	}
	ADDQ(U32(4*W), vp)
	ADDQ(ldpt, pp)
	DECQ(j)
	JMP(LabelRef("ac_j"))
	Label("ac_jdone")
	for a := 0; a < 4; a++ {
		for b := 0; b < 4; b++ {
			VMOVUPS(acc[a][b], Mem{Base: z, Index: d, Scale: 1, Disp: 4*R*a + 64*b})
		}
	}
	ADDQ(U32(256), d)
	CMPQ(d, U32(4*R))
	JB(LabelRef("ac_d"))
	ADDQ(U32(4*4*R), z)
	ADDQ(U8(16), pt)
	ADDQ(U8(16), corr)
	SUBQ(U8(4), nh)
	JMP(LabelRef("ac_h"))
	Label("ac_done")
	VZEROUPPER()
	RET()
}

func main() {
	ConstraintExpr("amd64,gc,!purego")
	scores()
	accum()
	Generate()
}
