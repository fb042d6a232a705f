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

func kernel(m int) {
	u := chains(m)
	name := fmt.Sprintf("bf16_%dx16", m)
	TEXT(name, NOSPLIT, "func(w *byte, np, npairs int, xb *uint16, ldx int, y *float32, ldy int, acc bool)")
	rows := "rows"
	if m == 1 {
		rows = "row"
	}
	Doc(
		fmt.Sprintf("%s computes %d BF16 activation %s (pairs at xb, rows ldx bytes apart)", name, m, rows),
		"against np consecutive BF16 panels at w (npairs lines of 16 rows × 2 k each):",
		"",
		fmt.Sprintf("\tfor p < np, r < %d, i < 16:", m),
		"\t\tt := Σ_{j<2·npairs} float32(W[p,i,j])·float32(x[r,j])  // VDPBF16PS, "+fmt.Sprint(u)+" chains per row",
		"\t\ty[r·ldy+16p+i] = t  // or += when acc",
	)
	f := func(r, c int) VecPhysical { return zmm[r*u+c] }
	lines := []VecPhysical{Z16, Z17}
	bcast := []VecPhysical{Z18, Z19, Z20, Z21}
	nb := 0

	wp := Load(Param("w"), GP64())
	np := Load(Param("np"), GP64())
	yp := Load(Param("y"), GP64())

	Label(name + "_panel")
	xp := Load(Param("xb"), GP64())
	var s, s3 Register
	base := []Register{xp}
	if m > 1 {
		s = Load(Param("ldx"), GP64())
		if m > 3 {
			s3 = GP64()
			LEAQ(Mem{Base: s, Index: s, Scale: 2}, s3)
		}
		for q := 1; q*4 < m; q++ {
			b := GP64()
			LEAQ(Mem{Base: base[q-1], Index: s, Scale: 4}, b)
			base = append(base, b)
		}
	}
	at := func(r, disp int) Mem {
		b := base[r/4]
		switch r % 4 {
		case 1:
			return Mem{Base: b, Index: s, Scale: 1, Disp: disp}
		case 2:
			return Mem{Base: b, Index: s, Scale: 2, Disp: disp}
		case 3:
			return Mem{Base: b, Index: s3, Scale: 1, Disp: disp}
		}
		return Mem{Base: b, Disp: disp}
	}
	advance := func(n int) {
		for _, b := range base {
			ADDQ(U8(n), b)
		}
	}
	for i := 0; i < m*u; i++ {
		VPXORD(zmm[i], zmm[i], zmm[i])
	}
	cnt := Load(Param("npairs"), GP64())
	step := func(c, disp int) {
		l := lines[c%2]
		VMOVDQU32(Mem{Base: wp, Disp: 64 * c}, l)
		for r := 0; r < m; r++ {
			b := bcast[nb%len(bcast)]
			nb++
			VPBROADCASTD(at(r, disp), b)
			x86.VDPBF16PSZ(l, b, f(r, c))
		}
	}
	if u > 1 {
		Label(name + "_big")
		CMPQ(cnt, U8(u))
		JL(LabelRef(name + "_tail"))
		for c := 0; c < u; c++ {
			step(c, 4*c)
		}
		ADDQ(U32(64*u), wp)
		advance(4 * u)
		SUBQ(U8(u), cnt)
		JMP(LabelRef(name + "_big"))
		Label(name + "_tail")
		TESTQ(cnt, cnt)
		JZ(LabelRef(name + "_sum"))
	}
	Label(name + "_one")
	step(0, 0)
	ADDQ(U8(64), wp)
	advance(4)
	DECQ(cnt)
	JNZ(LabelRef(name + "_one"))
	Label(name + "_sum")
	for r := 0; r < m; r++ {
		for w := u; w > 1; w /= 2 {
			for c := 0; c < w/2; c++ {
				VADDPS(f(r, c+w/2), f(r, c), f(r, c))
			}
		}
	}

	ldy := Load(Param("ldy"), GP64())
	SHLQ(U8(2), ldy)
	row := GP64()
	MOVQ(yp, row)
	a := Load(Param("acc"), GP8())
	TESTB(a, a)
	JZ(LabelRef(name + "_store"))
	for r := 0; r < m; r++ {
		VADDPS(Mem{Base: row}, f(r, 0), f(r, 0))
		VMOVUPS(f(r, 0), Mem{Base: row})
		if r+1 < m {
			ADDQ(ldy, row)
		}
	}
	JMP(LabelRef(name + "_stored"))
	Label(name + "_store")
	for r := 0; r < m; r++ {
		VMOVUPS(f(r, 0), Mem{Base: row})
		if r+1 < m {
			ADDQ(ldy, row)
		}
	}
	Label(name + "_stored")
	ADDQ(U8(64), yp)
	DECQ(np)
	JNZ(LabelRef(name + "_panel"))
	VZEROUPPER()
	RET()
}

func main() {
	ConstraintExpr("amd64,gc,!purego")
	for m := 1; m <= maxM; m++ {
		kernel(m)
	}
	Generate()
}
