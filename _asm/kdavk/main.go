//go:generate go run . -out ../../kernels/kda/kdavk_avx512_amd64.s -stubs ../../kernels/kda/kdavk_avx512_stubs_amd64.go -pkg kda

// Command kdavk generates the AVX-512 KDA recurrent step for the value-major
// state layout ([V][K] per head): each value column is a contiguous row of
// K key channels, so a token is one pass over the state — per row, the
// decayed row, its prediction, the delta write and the output dot product.
package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// maxVecs bounds K at 16·maxVecs key channels (Kimi: K = 128).
const maxVecs = 8

// hsum reduces v to its lane sum in the low lane of an xmm (EVEX-safe ops).
func hsum(v VecVirtual) Register {
	y := YMM()
	VEXTRACTF64X4(U8(1), v, y)
	lo := v.AsY()
	VADDPS(y, lo, lo)
	x := XMM()
	VEXTRACTF32X4(U8(1), lo, x)
	lx := v.AsX()
	VADDPS(x, lx, lx)
	t := XMM()
	VSHUFPS(U8(0x4e), lx, lx, t) // swap 64-bit halves
	VADDPS(t, lx, lx)
	VSHUFPS(U8(0xb1), lx, lx, t) // swap adjacent lanes
	VADDPS(t, lx, lx)
	return lx
}

// rows generates kdaRowsVKAVX512_<16·nv>: per value row, decay and
// predict, the delta u, then write and read out.
func rows(nv int) {
	name := fmt.Sprintf("kdaRowsVKAVX512_%d", 16*nv)
	TEXT(name, NOSPLIT, "func(s *float32, nrows int, alpha, kk, qs, v *float32, beta float32, o *float32)")
	Doc(
		name+" runs one KDA token over nrows value rows of a value-major",
		fmt.Sprintf("state (rows of K = %d key channels, contiguous):", 16*nv),
		"",
		"\tfor j < nrows { t = alpha⊙S[j]; p = kk·t; u = beta·(v[j] − p); S[j] = t + u·kk; o[j] = qs·S[j] }",
	)
	sp := Load(Param("s"), GP64())
	n := Load(Param("nrows"), GP64())
	pa := Load(Param("alpha"), GP64())
	pk := Load(Param("kk"), GP64())
	pq := Load(Param("qs"), GP64())
	pv := Load(Param("v"), GP64())
	po := Load(Param("o"), GP64())
	bx := Load(Param("beta"), XMM())
	Label(name + "_row")
	CMPQ(n, U8(0))
	JE(LabelRef(name + "_done"))
	t, p := predict(nv, sp, pa, pk)
	// u = β·(v[j] − p), broadcast
	xv := XMM()
	VMOVSS(Mem{Base: pv}, xv)
	VSUBSS(p, xv, xv)
	VMULSS(bx, xv, xv)
	u := ZMM()
	VBROADCASTSS(xv, u)
	ov := writeRow(t, u, sp, pk, pq)
	VMOVSS(ov, Mem{Base: po})
	ADDQ(U32(64*nv), sp)
	ADDQ(U8(4), pv)
	ADDQ(U8(4), po)
	DECQ(n)
	JMP(LabelRef(name + "_row"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// zeroPair returns two zeroed zmm accumulators.
func zeroPair() [2]VecVirtual {
	acc := [2]VecVirtual{ZMM(), ZMM()}
	for _, a := range acc {
		VPXORD(a, a, a)
	}
	return acc
}

// predict emits the row's decay and prediction: t = α⊙S[j] (nv vectors)
// and p = kk·t (in an xmm's low lane).
func predict(nv int, sp, pa, pk Register) ([]VecVirtual, Register) {
	t := make([]VecVirtual, nv)
	acc := zeroPair()
	for i := 0; i < nv; i++ {
		t[i] = ZMM()
		VMOVUPS(Mem{Base: sp, Disp: 64 * i}, t[i])
		VMULPS(Mem{Base: pa, Disp: 64 * i}, t[i], t[i])
		VFMADD231PS(Mem{Base: pk, Disp: 64 * i}, t[i], acc[i%2])
	}
	VADDPS(acc[1], acc[0], acc[0])
	return t, hsum(acc[0])
}

// writeRow emits the write and read out: S[j] = t + u·kk stored, and
// returns o[j] = qs·S[j] (in an xmm's low lane).
func writeRow(t []VecVirtual, u VecVirtual, sp, pk, pq Register) Register {
	oacc := zeroPair()
	for i := range t {
		VFMADD231PS(Mem{Base: pk, Disp: 64 * i}, u, t[i])
		VMOVUPS(t[i], Mem{Base: sp, Disp: 64 * i})
		VFMADD231PS(Mem{Base: pq, Disp: 64 * i}, t[i], oacc[i%2])
	}
	VADDPS(oacc[1], oacc[0], oacc[0])
	return hsum(oacc[0])
}

func main() {
	ConstraintExpr("amd64,gc,!purego")
	for nv := 1; nv <= maxVecs; nv++ {
		rows(nv)
	}
	Generate()
}
