//go:generate go run . -out ../../../kernels/gemm/gemm_amx_amd64.s -stubs ../../../kernels/gemm/gemm_amx_stubs_amd64.go -pkg gemm

// Command amx generates the Intel AMX (TMUL) int8-activation micro-kernels
// of kernels/gemm for the Q8 panel format of package quant (amxQ8_16x16)
// and for Q4 panels the caller has unpacked to the Q8 record layout
// (amxQ4_16x16, zero point 8): 16 activation rows against 16-row weight
// panels, one TDPBSUD per (panel, group of 32 k), flushed per group into
// f32 accumulators with AVX-512.
//
// A Q8 group record of a panel is 8 lines of 64 bytes, line c holding
// k = 4c…4c+3 of the 16 weight rows as [16 rows][4 bytes]: exactly an
// 8-row × 64-byte AMX B tile in VNNI layout. The activations (s8, row
// stride ldx, group g at xq + g·xg: row-major with ldx = Kp, xg = 32, or
// packed per group with ldx = 32, xg = 512) are the 16-row × 32-byte A
// tile, so per group
//
//	C[r][i] = Σ_{k<32} s8(x[r][32g+k]) · u8(w[i][32g+k])
//
// plus −128·Σx (the weights' zero point, by a second product, TDPBSSD
// with a constant tile of −128); the kernel then converts, multiplies by
// the row's activation scale xs and accumulates with the group's 16 f16
// weight scales, as the VNNI kernels do (kernels/gemm/gemm_vnni_amd64.go).
//
// The AMX instructions are BYTE-encoded through internal/x86, which is
// invisible to avo's register allocator: the kernel names every register
// physically.
package main

import (
	"flag"
	"fmt"

	"github.com/ktune/ktune/_asm/internal/rows"
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
// two groups are in flight, and a constant B of −z (s8; z = 128 for Q8, 8
// for Q4) with which a TDPBSSD adds the weights' zero-point term −z·Σxq to
// C (the vector flush then needs no aux).
const (
	tC0, tC1 = 0, 1
	tA0, tA1 = 2, 3
	tB0, tB1 = 4, 5
	tNeg     = 6 // 8 rows × 64 bytes of −z: C += −z·Σxq, the zero point
)

// General-purpose registers.
var (
	rW    = RSI // weights: the current group record
	rX    = RDI // activations: row 0 of the A tile of the current group
	rX1   = RCX // … and of the pair's second group (the loop)
	rXg2  = RAX // 2·xg (the loop)
	rLdx  = RDX // activation row stride (the A tile stride)
	rRow  = RCX // output row pointer (the stores, after the loop)
	rXs   = RBX // xs at the current group
	rLda  = R8  // ldxs (bytes between groups in xs)
	rG    = R9  // group counter
	rTmp  = R10 // 2 KiB scratch the current pair of C tiles is stored to
	rPrev = R14 // 2 KiB scratch holding the previous pair
	r64   = R11 // 64: the B tile and scratch stride
	rNp   = R12 // panel counter
	rY    = R13 // output: the current panel's first column
	rTmp2 = RAX // temporary outside the loop
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

// dot computes one group: tiles c, a, b; the group record at rW+wd, its
// activations at x.
func dot(c, a, b, wd int, x Physical) {
	x86.TILELOADDT(a, mem(x, rLdx, 0))
	x86.TILELOADDT(b, mem(rW, r64, wd))
	x86.TILEZEROT(c)
	x86.TDPBSUDT(c, a, b)
	x86.TDPBSSDT(c, a, tNeg)
}

// flush converts one stored C tile (16 rows of 16 int32 at buf+td) into
// the accumulators: the group's scales at rW+wd, its xs at rXs (+ rLda
// when second).
func flush(buf Physical, wd, td int, second bool) {
	VCVTPH2PS(Mem{Base: rW, Disp: wd + scaleOff}, zD)
	for r := 0; r < 16; r++ {
		t := zT[r%len(zT)]
		xm := Mem{Base: rXs, Disp: 4 * r}
		if second {
			xm = xm.Idx(rLda, 1)
		}
		VMOVDQU32(Mem{Base: buf, Disp: td + 64*r}, t)
		VCVTDQ2PS(t, t)
		VMULPS_BCST(xm, t, t)
		VFMADD231PS(t, zD, f[r])
	}
}

// cfgSym is the tile configuration, shared by the kernels.
var cfgSym Mem

func tileConfig() {
	cfgSym = GLOBL("amxcfg", RODATA|NOPTR)
	// palette 1; colsb (uint16) at 16+2t, rows at 48+t; the Go assembler
	// wants the DATA entries in order, so the 64 bytes go as 8 quadwords.
	var b [64]byte
	b[0] = 1
	for t, sh := range [][2]int{{64, 16}, {64, 16}, {32, 16}, {32, 16}, {64, 8}, {64, 8}, {64, 8}} {
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
}

// kind is a weight format as the kernel reads it: Q8 records, or Q4
// records unpacked by the caller into the Q8 record layout (one nibble
// value 0…15 per byte); z is the zero point.
type kind struct {
	name string
	z    int
}

// kernel generates amx{k}_16x16: per panel, the groups in software-
// pipelined pairs, then an odd last group, then the 16 rows' stores.
func kernel(k kind) {
	name := "amx" + k.name + "_16x16"
	TEXT(name, NOSPLIT, "func(w *byte, np, ng int, xq *int8, ldx, xg int, xs *float32, ldxs int, y *float32, ldy int, acc bool, tmp *int32)")
	kernelDoc(name, k)
	setup(k)

	Label(name + "_panel")
	Load(Param("xq"), rX)
	Load(Param("xg"), rXg2)
	LEAQ(Mem{Base: rX, Index: rXg2, Scale: 1}, rX1)
	SHLQ(U8(1), rXg2)
	Load(Param("xs"), rXs)
	for _, z := range f {
		VPXORD(z, z, z)
	}
	groupPairs(name)
	Label(name + "_tail")
	Load(Param("ng"), rG)
	TESTQ(U32(1), rG)
	JZ(LabelRef(name + "_groups_done"))
	dot(tC0, tA0, tB0, 0, rX)
	x86.TILESTOREDT(mem(rTmp, r64, 0), tC0)
	flush(rTmp, 0, 0, false)
	ADDQ(U32(gb), rW)

	Label(name + "_groups_done")
	// store the 16 rows (rRow is free until the next panel)
	Load(Param("ldy"), rTmp2)
	SHLQ(U8(2), rTmp2)
	MOVQ(rY, rRow)
	Load(Param("acc"), BL)
	rows.Store(name+"_store", name+"_stored", rTmp2, rRow, BL, f)
	ADDQ(U8(64), rY)
	DECQ(rNp)
	JNZ(LabelRef(name + "_panel"))

	x86.TILERELEASEI()
	VZEROUPPER()
	RET()
}

// kernelDoc emits the kernel's doc comment.
func kernelDoc(name string, k kind) {
	src := "Q8 panels"
	if k.name != "Q8" {
		src = k.name + " panels unpacked to the Q8 record layout (a nibble per byte)"
	}
	Doc(name+" computes 16 activation rows against np consecutive "+src,
		"(ng groups of 544 bytes each) at w with AMX TDPBSUD; xq rows are ldx",
		"bytes apart and group g starts at xq + g·xg (32 bytes per row), y rows",
		"are ldy floats apart; tmp is 4 KiB of scratch (1024 int32):",
		"",
		"\tfor p < np, r < 16, i < 16:",
		fmt.Sprintf("\t\tt := Σ_{g<ng} d[p,g,i]·(xs[g·ldxs/4+r]·float32(Σ_{j<32} (int32(u[p,g,i,j])−%d)·int32(xq[r·ldx+g·xg+j])))", k.z),
		fmt.Sprintf("\t\t\t// %d: the weights' zero point; xs: the activations' group scales (group-major)", k.z),
		"\t\ty[r·ldy+16p+i] = t  // or += when acc",
		"",
		"with u the stored weights of panel p and d its f16 scales: see package quant.",
		"The caller must hold the Linux AMX permission (internal/cpu); the kernel",
		"loads its tile configuration and releases the tiles before returning.")
}

// setup emits the kernel's −z table, loads the tile configuration and the
// −z tile, and the arguments that stay in registers.
func setup(k kind) {
	neg := GLOBL("amx"+k.name+"neg", RODATA|NOPTR)
	nb := uint64(byte(int8(-k.z)))
	for q := 0; q < 8; q++ {
		DATA(8*q, U64(nb*0x0101010101010101))
	}
	LEAQ(cfgSym, rTmp2)
	x86.LDTILECFGM(x86.Mem{Base: x86.GP(rTmp2), Index: -1})
	LEAQ(neg, rTmp2)
	XORQ(rG, rG)
	x86.TILELOADDT(tNeg, mem(rTmp2, rG, 0)) // stride 0: every row the same 64 bytes
	Load(Param("w"), rW)
	Load(Param("np"), rNp)
	Load(Param("y"), rY)
	Load(Param("ldx"), rLdx)
	Load(Param("ldxs"), rLda)
	Load(Param("tmp"), rTmp)
	LEAQ(Mem{Base: rTmp, Disp: 2048}, rPrev)
	MOVQ(U32(64), r64)
}

// groupPairs emits the loop over the panel's pairs of groups (C0, C1),
// software-pipelined: a pair's tiles are stored while the previous pair
// is converted from the other scratch half, so that the vector loads
// never wait on a tile store that cannot be forwarded. It ends at the
// label name_tail.
func groupPairs(name string) {
	Load(Param("ng"), rG)
	SHRQ(U8(1), rG)
	JZ(LabelRef(name + "_tail"))
	dot(tC0, tA0, tB0, 0, rX)
	dot(tC1, tA1, tB1, gb, rX1)
	x86.TILESTOREDT(mem(rTmp, r64, 0), tC0)
	x86.TILESTOREDT(mem(rTmp, r64, 1024), tC1)
	ADDQ(U32(2*gb), rW)
	ADDQ(rXg2, rX)
	ADDQ(rXg2, rX1)
	XCHGQ(rTmp, rPrev)
	DECQ(rG)
	JZ(LabelRef(name + "_drain"))

	Label(name + "_pair")
	dot(tC0, tA0, tB0, 0, rX)
	flush(rPrev, -2*gb, 0, false)
	dot(tC1, tA1, tB1, gb, rX1)
	x86.TILESTOREDT(mem(rTmp, r64, 0), tC0)
	flush(rPrev, -gb, 1024, true)
	x86.TILESTOREDT(mem(rTmp, r64, 1024), tC1)
	ADDQ(U32(2*gb), rW)
	ADDQ(rXg2, rX)
	ADDQ(rXg2, rX1)
	LEAQ(Mem{Base: rXs, Index: rLda, Scale: 2}, rXs)
	XCHGQ(rTmp, rPrev)
	DECQ(rG)
	JNZ(LabelRef(name + "_pair"))

	Label(name + "_drain")
	flush(rPrev, -2*gb, 0, false)
	flush(rPrev, -gb, 1024, true)
	LEAQ(Mem{Base: rXs, Index: rLda, Scale: 2}, rXs)
}

// unpackQ4 generates amxUnpackQ4: n Q4 group records (288 bytes) at src
// to n Q8-layout records (544 bytes) at dst, line 2c = the low nibbles of
// line c, line 2c+1 the high ones, then the 16 f16 scales.
func unpackQ4() {
	TEXT("amxUnpackQ4", NOSPLIT, "func(dst, src *byte, n int)")
	Doc("amxUnpackQ4 unpacks n Q4 group records (288 bytes each) at src into the",
		"Q8 record layout (544 bytes each) at dst: line 2c holds the low nibbles of",
		"Q4 line c (k = 8c…8c+3), line 2c+1 the high ones (k = 8c+4…8c+7), one",
		"value 0…15 per byte; then the 16 f16 scales.")
	d := Load(Param("dst"), GP64())
	sp := Load(Param("src"), GP64())
	n := Load(Param("n"), GP64())
	t := GP32()
	MOVL(U32(0x0f0f0f0f), t)
	mask := ZMM()
	VPBROADCASTD(t, mask)
	TESTQ(n, n)
	JZ(LabelRef("amxUnpackQ4_done"))
	Label("amxUnpackQ4_rec")
	for c := 0; c < 4; c++ {
		lo, hi := ZMM(), ZMM()
		VMOVDQU32(Mem{Base: sp, Disp: 64 * c}, lo)
		VPSRLW(U8(4), lo, hi)
		VPANDD(mask, lo, lo)
		VPANDD(mask, hi, hi)
		VMOVDQU32(lo, Mem{Base: d, Disp: 128 * c})
		VMOVDQU32(hi, Mem{Base: d, Disp: 128*c + 64})
	}
	sc := YMM()
	VMOVDQU(Mem{Base: sp, Disp: 256}, sc)
	VMOVDQU(sc, Mem{Base: d, Disp: 512})
	ADDQ(U32(288), sp)
	ADDQ(U32(gb), d)
	DECQ(n)
	JNZ(LabelRef("amxUnpackQ4_rec"))
	Label("amxUnpackQ4_done")
	VZEROUPPER()
	RET()
}

func main() {
	flag.Parse()
	ConstraintExpr("amd64,gc,!purego")
	tileConfig()
	for _, k := range []kind{{"Q8", 128}, {"Q4", 8}} {
		kernel(k)
	}
	unpackQ4()
	Generate()
}
