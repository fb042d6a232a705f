//go:generate go run . -out ../../../kernels/gemm/gemm_bf16_amd64.s -stubs ../../../kernels/gemm/gemm_bf16_stubs_amd64.go -pkg gemm

// Command bf16 generates the BF16-activation micro-kernels of kernels/gemm
// (AVX512_BF16): M activation rows (BF16 pairs) against 16-row BF16 weight
// panels of package quant, [Kp/2][16 rows][2 k]: one 64-byte line is the
// VDPBF16PS operand for 16 rows × 2 k, the row's activation pair is
// broadcast into a register (VPBROADCASTD), and each row keeps U
// independent f32 accumulators (U·M ≤ 16) so small M still has enough
// chains to cover the instruction's latency.
//
// VDPBF16PS is BYTE-encoded (internal/x86), so every vector register here
// is physical: accumulators Z0…Z15, lines Z16/Z17, broadcasts Z18…Z21.
package main

import (
	"fmt"

	"github.com/ktune/ktune/_asm/internal/rows"
	"github.com/ktune/ktune/_asm/internal/x86"
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

const maxM = 12

var zmm = []VecPhysical{Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15,
	Z16, Z17, Z18, Z19, Z20, Z21}

// chains is the number of accumulators per row for M rows.
func chains(m int) int {
	switch {
	case m <= 2:
		return 8
	case m <= 4:
		return 4
	case m <= 8:
		return 2
	}
	return 1
}

// kernel generates bf16_{m}x16: each panel's pairs of k, u per step (one
// per accumulator chain) while they last, then one at a time; the chains
// summed and the rows stored.
func kernel(m int) {
	p := &panel{m: m, u: chains(m), name: fmt.Sprintf("bf16_%dx16", m)}
	name, u := p.name, p.u
	TEXT(name, NOSPLIT, "func(w *byte, np, npairs int, xb *uint16, ldx int, y *float32, ldy int, acc bool)")
	p.doc()
	p.wp = Load(Param("w"), GP64())
	np := Load(Param("np"), GP64())
	yp := Load(Param("y"), GP64())

	Label(name + "_panel")
	xp := Load(Param("xb"), GP64())
	if m == 1 {
		p.x = rows.New(1, xp, nil)
	} else {
		p.x = rows.New(m, xp, Load(Param("ldx"), GP64()))
	}
	for i := 0; i < m*u; i++ {
		VPXORD(zmm[i], zmm[i], zmm[i])
	}
	cnt := Load(Param("npairs"), GP64())
	p.pairs(cnt)
	Label(name + "_sum")
	sums := make([]VecPhysical, m)
	for r := 0; r < m; r++ {
		for w := u; w > 1; w /= 2 {
			for c := 0; c < w/2; c++ {
				VADDPS(p.f(r, c+w/2), p.f(r, c), p.f(r, c))
			}
		}
		sums[r] = p.f(r, 0)
	}

	ldy := Load(Param("ldy"), GP64())
	SHLQ(U8(2), ldy)
	row := GP64()
	MOVQ(yp, row)
	a := Load(Param("acc"), GP8())
	rows.Store(name+"_store", name+"_stored", ldy, row, a, sums)
	ADDQ(U8(64), yp)
	DECQ(np)
	JNZ(LabelRef(name + "_panel"))
	VZEROUPPER()
	RET()
}

// panel is what a kernel's steps share: m rows of u chains, the weights
// wp, the activation rows x and the broadcasts emitted so far (they cycle
// through bcastRegs).
type panel struct {
	m, u int
	name string
	wp   Register
	x    rows.Addr
	nb   int
}

// lineRegs take the weight lines, bcastRegs the activation broadcasts.
var (
	lineRegs  = []VecPhysical{Z16, Z17}
	bcastRegs = []VecPhysical{Z18, Z19, Z20, Z21}
)

// f is chain c of row r.
func (p *panel) f(r, c int) VecPhysical { return zmm[r*p.u+c] }

// doc emits the kernel's doc comment.
func (p *panel) doc() {
	rowWord := "rows"
	if p.m == 1 {
		rowWord = "row"
	}
	Doc(
		fmt.Sprintf("%s computes %d BF16 activation %s (pairs at xb, rows ldx bytes apart)", p.name, p.m, rowWord),
		"against np consecutive BF16 panels at w (npairs lines of 16 rows × 2 k each):",
		"",
		fmt.Sprintf("\tfor p < np, r < %d, i < 16:", p.m),
		"\t\tt := Σ_{j<2·npairs} float32(W[p,i,j])·float32(x[r,j])  // VDPBF16PS, "+fmt.Sprint(p.u)+" chains per row",
		"\t\ty[r·ldy+16p+i] = t  // or += when acc",
	)
}

// step emits line c (the pair at disp in each activation row) into the
// rows' chains c.
func (p *panel) step(c, disp int) {
	l := lineRegs[c%2]
	VMOVDQU32(Mem{Base: p.wp, Disp: 64 * c}, l)
	for r := 0; r < p.m; r++ {
		b := bcastRegs[p.nb%len(bcastRegs)]
		p.nb++
		VPBROADCASTD(p.x.At(r, disp), b)
		x86.VDPBF16PSZ(l, b, p.f(r, c))
	}
}

// pairs emits the loop over the cnt pairs of k: u at a time (with u > 1)
// while they last, then one at a time; it ends at name_sum.
func (p *panel) pairs(cnt Register) {
	name, u := p.name, p.u
	if u > 1 {
		Label(name + "_big")
		CMPQ(cnt, U8(u))
		JL(LabelRef(name + "_tail"))
		for c := 0; c < u; c++ {
			p.step(c, 4*c)
		}
		ADDQ(U32(64*u), p.wp)
		p.x.Advance(U8(4 * u))
		SUBQ(U8(u), cnt)
		JMP(LabelRef(name + "_big"))
		Label(name + "_tail")
		TESTQ(cnt, cnt)
		JZ(LabelRef(name + "_sum"))
	}
	Label(name + "_one")
	p.step(0, 0)
	ADDQ(U8(64), p.wp)
	p.x.Advance(U8(4))
	DECQ(cnt)
	JNZ(LabelRef(name + "_one"))
}

func main() {
	ConstraintExpr("amd64,gc,!purego")
	for m := 1; m <= maxM; m++ {
		kernel(m)
	}
	Generate()
}
