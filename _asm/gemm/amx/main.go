//go:generate go run . -out ../../../kernels/gemm/gemm_amx_amd64.s -stubs ../../../kernels/gemm/gemm_amx_stubs_amd64.go -pkg gemm

// Command amx generates the Intel AMX (TMUL) int8-activation micro-kernel
// of kernels/gemm for the Q8 panel format of package quant: 16 activation
// rows against 16-row weight panels, one TDPBSUD per (panel, group of 32
// k), flushed per group into f32 accumulators with AVX-512.
//
// A Q8 group record of a panel is 8 lines of 64 bytes, line c holding
// k = 4c…4c+3 of the 16 weight rows as [16 rows][4 bytes]: exactly an
// 8-row × 64-byte AMX B tile in VNNI layout. The activations (s8, row
// stride ldx) are the 16-row × 32-byte A tile, so per group
//
//	C[r][i] = Σ_{k<32} s8(xq[r][32g+k]) · u8(w[i][32g+k])
//
// and the kernel then adds aux (−128·Σxq, the weights' zero point),
// converts, multiplies by the row's activation scale xs and accumulates
// with the group's 16 f16 weight scales, as the VNNI kernels do
// (kernels/gemm/gemm_vnni_amd64.go documents the contract).
//
// The AMX instructions are BYTE-encoded through internal/x86, which is
// invisible to avo's register allocator: the kernel names every register
// physically.
package main

import (
	"flag"

	"github.com/ktune/ktune/_asm/internal/x86"
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

const (
	gb       = 544 // Q8 group record bytes: 8 lines + 16 f16 scales
	scaleOff = 512
)

// Tiles: two C (int32 16×16), two A (s8 16×32), two B (u8 8×64), so that
// two groups are in flight.
const (
	tC0, tC1 = 0, 1
	tA0, tA1 = 2, 3
	tB0, tB1 = 4, 5
)

// General-purpose registers.
var (
	rW    = RSI // weights: the current group record
	rX    = RDI // activations: row 0 of the tile at the current group
	rLdx  = RDX // activation row stride (the A tile stride)
	rAux  = RCX // aux at the current group
	rXs   = RBX // xs at the current group
	rLda  = R8  // ldaux (bytes between groups in aux and xs)
	rG    = R9  // group counter
	rTmp  = R10 // 2 KiB scratch for the C tiles
	r64   = R11 // 64: the B tile and scratch stride
	rNp   = R12 // panel counter
	rY    = R13 // output: the current panel's first column
	rTmp2 = RAX
)

func mem(base, index Physical, disp int) x86.Mem {
	return x86.Mem{Base: x86.GP(base), Index: x86.GP(index), Scale: 1, Disp: int32(disp)}
}

// f[r] is row r's f32 accumulator; zD the group's weight scales; zT the
// temporaries.
var (
	f  = []VecPhysical{Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23, Z24, Z25, Z26, Z27, Z28, Z29, Z30, Z31}
	zD = Z15
	zT = []VecPhysical{Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z11, Z12, Z13, Z14}
)

// group computes one group: tiles c, a, b; the group record at rW+wd, its
// activations at rX+xd, its aux and xs at rAux/rXs (+ rLda when second),
// scratch at rTmp+td.
func dot(c, a, b, wd, xd int) {
	x86.TILELOADDT(a, mem(rX, rLdx, xd))
	x86.TILELOADDT(b, mem(rW, r64, wd))
	x86.TILEZEROT(c)
	x86.TDPBSUDT(c, a, b)
}

func flush(c, wd, td int, second bool) {
	x86.TILESTOREDT(mem(rTmp, r64, td), c)
	VCVTPH2PS(Mem{Base: rW, Disp: wd + scaleOff}, zD)
	for r := 0; r < 16; r++ {
		t := zT[r%len(zT)]
		am, xm := Mem{Base: rAux, Disp: 4 * r}, Mem{Base: rXs, Disp: 4 * r}
		if second {
			am, xm = am.Idx(rLda, 1), xm.Idx(rLda, 1)
		}
		VMOVDQU32(Mem{Base: rTmp, Disp: td + 64*r}, t)
		VPADDD_BCST(am, t, t)
		VCVTDQ2PS(t, t)
		VMULPS_BCST(xm, t, t)
		VFMADD231PS(t, zD, f[r])
	}
}

func kernel() {
	const name = "amxQ8_16x16"
	TEXT(name, NOSPLIT, "func(w *byte, np, ng int, xq *int8, ldx int, aux *int32, ldaux int, xs *float32, y *float32, ldy int, acc bool, tmp *int32)")
	Doc(name+" computes 16 activation rows against np consecutive Q8 panels",
		"(ng groups of 544 bytes each) at w with AMX TDPBSUD; xq rows are ldx",
		"bytes apart, y rows ldy floats; tmp is 2 KiB of scratch (512 int32):",
		"",
		"\tfor p < np, r < 16, i < 16:",
		"\t\tt := Σ_{g<ng} d[p,g,i]·(xs[g·ldaux/4+r]·float32(Σ_{j<32} int32(u[p,g,i,j])·int32(xq[r·ldx+32g+j]) + aux[g·ldaux/4+r]))",
		"\t\t\t// aux = −128·Σxq: the weights' zero point; xs: the activations' group scales",
		"\t\ty[r·ldy+16p+i] = t  // or += when acc",
		"",
		"with u the stored weights of panel p and d its f16 scales: see package quant.",
		"The caller must hold the Linux AMX permission (internal/cpu); the kernel",
		"loads its tile configuration and releases the tiles before returning.")
	cfg := GLOBL("amxQ8cfg", RODATA|NOPTR)
	// palette 1; colsb (uint16) at 16+2t, rows at 48+t; the Go assembler
	// wants the DATA entries in order, so the 64 bytes go as 8 quadwords.
	var b [64]byte
	b[0] = 1
	for t, sh := range [][2]int{{64, 16}, {64, 16}, {32, 16}, {32, 16}, {64, 8}, {64, 8}} {
		b[16+2*t], b[16+2*t+1] = byte(sh[0]), byte(sh[0]>>8)
		b[48+t] = byte(sh[1])
	}
	for q := 0; q < 8; q++ {
		var v uint64
		for j := 7; j >= 0; j-- {
			v = v<<8 | uint64(b[8*q+j])
		}
		DATA(8*q, U64(v))
	}

	LEAQ(cfg, rTmp2)
	x86.LDTILECFGM(x86.Mem{Base: x86.GP(rTmp2), Index: -1})
	Load(Param("w"), rW)
	Load(Param("np"), rNp)
	Load(Param("y"), rY)
	Load(Param("ldx"), rLdx)
	Load(Param("ldaux"), rLda)
	Load(Param("tmp"), rTmp)
	MOVQ(U32(64), r64)

	Label(name + "_panel")
	Load(Param("xq"), rX)
	Load(Param("aux"), rAux)
	Load(Param("xs"), rXs)
	for _, z := range f {
		VPXORD(z, z, z)
	}
	Load(Param("ng"), rG)
	SHRQ(U8(1), rG)
	JZ(LabelRef(name + "_tail"))

	Label(name + "_pair")
	dot(tC0, tA0, tB0, 0, 0)
	dot(tC1, tA1, tB1, gb, 32)
	flush(tC0, 0, 0, false)
	flush(tC1, gb, 1024, true)
	ADDQ(U32(2*gb), rW)
	ADDQ(U8(64), rX)
	LEAQ(Mem{Base: rAux, Index: rLda, Scale: 2}, rAux)
	LEAQ(Mem{Base: rXs, Index: rLda, Scale: 2}, rXs)
	DECQ(rG)
	JNZ(LabelRef(name + "_pair"))

	Label(name + "_tail")
	Load(Param("ng"), rG)
	TESTQ(U32(1), rG)
	JZ(LabelRef(name + "_groups_done"))
	dot(tC0, tA0, tB0, 0, 0)
	flush(tC0, 0, 0, false)
	ADDQ(U32(gb), rW)

	Label(name + "_groups_done")
	// store the 16 rows (rAux, rXs are free until the next panel)
	Load(Param("ldy"), rTmp2)
	SHLQ(U8(2), rTmp2)
	MOVQ(rY, rAux)
	Load(Param("acc"), BL)
	TESTB(BL, BL)
	JZ(LabelRef(name + "_store"))
	for r := range f {
		VADDPS(Mem{Base: rAux}, f[r], f[r])
		VMOVUPS(f[r], Mem{Base: rAux})
		if r+1 < len(f) {
			ADDQ(rTmp2, rAux)
		}
	}
	JMP(LabelRef(name + "_stored"))
	Label(name + "_store")
	for r := range f {
		VMOVUPS(f[r], Mem{Base: rAux})
		if r+1 < len(f) {
			ADDQ(rTmp2, rAux)
		}
	}
	Label(name + "_stored")
	ADDQ(U8(64), rY)
	DECQ(rNp)
	JNZ(LabelRef(name + "_panel"))

	x86.TILERELEASEI()
	VZEROUPPER()
	RET()
}

func main() {
	flag.Parse()
	ConstraintExpr("amd64,gc,!purego")
	kernel()
	Generate()
}
