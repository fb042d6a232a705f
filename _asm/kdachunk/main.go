//go:generate go run . -out ../../kernels/kda/kdachunk_avx512_amd64.s -stubs ../../kernels/kda/kdachunk_avx512_stubs_amd64.go -pkg kda

// Command kdachunk generates the AVX-512 kernels of the chunked KDA prefill
// (kernels/kda/kdachunk_amd64.go, the WY/UT form of kda_generic.go's
// chunkGeneric): the per-16-token-block gate preparation (cumulative log
// gates and their exponentials), the diagonal 16×16 blocks of L and A by
// running products of the per-token decays, an 8×32 register-tile GEMM for
// the off-diagonal blocks, a two-row forward substitution, the fused end of
// a chunk (Ṽ = U − W·S, O = QG·S + A·Ṽ and the state update, one 32-column
// tile of the state at a time), and small helpers (16×16 transpose, row
// scaling, packing the state by column tiles). Every exponential has a
// non-positive argument.
package main

import (
	"fmt"
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// ---- MXCSR ----------------------------------------------------------------

// ftzOn sets flush-to-zero and denormals-are-zero for the rest of the
// kernel (an asm function is never preempted, so the thread's MXCSR is
// restored before any Go code runs again) and returns the saved word for
// ret. Products of decays underflow routinely (g ≈ −50 per token), and
// each subnormal result or operand costs a microcode assist of ~150 cycles.
func ftzOn() Mem {
	save, tmp := AllocLocal(4), AllocLocal(4)
	STMXCSR(save)
	x := GP32()
	MOVL(save, x)
	ORL(U32(0x8040), x)
	MOVL(x, tmp)
	LDMXCSR(tmp)
	return save
}

// ret restores MXCSR and returns.
func ret(save Mem) {
	LDMXCSR(save)
	VZEROUPPER()
	RET()
}

// ---- GEMM ----------------------------------------------------------------

// gemmSpec is one flavour of the 8×32 tile GEMM C (m×n) ∘= A (m×k) · B (k×n).
type gemmSpec struct {
	name  string
	colA  bool   // A[i,kk] = a[kk·lda+i] (else a[i·lda+kk])
	init  string // "zero", "load" (C), "scale" (C[i,:]·rs[i])
	sub   bool   // C = init − A·B (else init + A·B)
	c2off int    // byte offset in C of the tile's second 16 columns (64: contiguous)
	doc   []string
}

const mr = 8 // tile rows

type tile [mr][2]VecVirtual

func newTile() *tile {
	var t tile
	for i := range t {
		for j := range t[i] {
			t[i][j] = ZMM()
		}
	}
	return &t
}

func (t *tile) zero() {
	for i := range t {
		for j := range t[i] {
			VPXORD(t[i][j], t[i][j], t[i][j])
		}
	}
}

// load reads the tile from c (row stride ldc bytes; second half at c2off),
// scaled by rs[i] per row if rs is not nil.
func (t *tile) load(c, ldc Register, c2off int, rs Register) {
	pc := GP64()
	MOVQ(c, pc)
	for i := range t {
		VMOVUPS(Mem{Base: pc}, t[i][0])
		VMOVUPS(Mem{Base: pc, Disp: c2off}, t[i][1])
		if rs != nil {
			VMULPS_BCST(Mem{Base: rs, Disp: 4 * i}, t[i][0], t[i][0])
			VMULPS_BCST(Mem{Base: rs, Disp: 4 * i}, t[i][1], t[i][1])
		}
		if i < mr-1 {
			ADDQ(ldc, pc)
		}
	}
}

// store writes the tile to c and returns c advanced by mr rows.
func (t *tile) store(c, ldc Register, c2off int) {
	for i := range t {
		VMOVUPS(t[i][0], Mem{Base: c})
		VMOVUPS(t[i][1], Mem{Base: c, Disp: c2off})
		ADDQ(ldc, c)
	}
}

// kloop emits acc ±= A·B over kc steps: A from a (row-major with byte
// stride lda, lda3 = 3·lda; or column-major with byte stride lda), B rows
// of 32 floats at b with byte stride ldb. It clobbers a, b and kc. Every
// 16 steps it prefetches 256 bytes at the next address of the list pf
// (see popRow), with pfDefault when the list is empty.
func kloop(tag string, t *tile, colA, sub bool, a, lda, lda3, b, ldb, kc Register) {
	var p1 GPVirtual
	if !colA {
		p1 = GP64()
		LEAQ(Mem{Base: a, Index: lda3, Scale: 1}, p1)
	}
	aMem := func(i, u int) Mem {
		if colA {
			if u == 0 {
				return Mem{Base: a, Disp: 4 * i}
			}
			return Mem{Base: a, Index: lda, Scale: 1, Disp: 4 * i}
		}
		d := 4 * u
		switch i {
		case 0:
			return Mem{Base: a, Disp: d}
		case 1:
			return Mem{Base: a, Index: lda, Scale: 1, Disp: d}
		case 2:
			return Mem{Base: a, Index: lda, Scale: 2, Disp: d}
		case 3:
			return Mem{Base: p1, Disp: d}
		case 4:
			return Mem{Base: a, Index: lda, Scale: 4, Disp: d}
		case 5:
			return Mem{Base: p1, Index: lda, Scale: 2, Disp: d}
		case 6:
			return Mem{Base: p1, Index: lda3, Scale: 1, Disp: d}
		default:
			return Mem{Base: p1, Index: lda, Scale: 4, Disp: d}
		}
	}
	step := func(u int) {
		b0, b1 := ZMM(), ZMM()
		if u == 0 {
			VMOVUPS(Mem{Base: b}, b0)
			VMOVUPS(Mem{Base: b, Disp: 64}, b1)
		} else {
			VMOVUPS(Mem{Base: b, Index: ldb, Scale: 1}, b0)
			VMOVUPS(Mem{Base: b, Index: ldb, Scale: 1, Disp: 64}, b1)
		}
		for i := 0; i < mr; i++ {
			x := ZMM()
			VBROADCASTSS(aMem(i, u), x)
			if sub {
				VFNMADD231PS(x, b0, t[i][0])
				VFNMADD231PS(x, b1, t[i][1])
			} else {
				VFMADD231PS(x, b0, t[i][0])
				VFMADD231PS(x, b1, t[i][1])
			}
		}
	}
	advance := func(u int) {
		if u == 2 {
			LEAQ(Mem{Base: b, Index: ldb, Scale: 2}, b)
		} else {
			ADDQ(ldb, b)
		}
		if colA {
			if u == 2 {
				LEAQ(Mem{Base: a, Index: lda, Scale: 2}, a)
			} else {
				ADDQ(lda, a)
			}
		} else {
			ADDQ(U8(4*u), a)
			ADDQ(U8(4*u), p1)
		}
	}
	// 16 k-steps per iteration, prefetching the 256 bytes at the next list
	// address a line at a time: about a line per 32 cycles, which keeps the
	// ~16 fill buffers busy without stalling the FMAs (a burst of misses
	// would)
	Label(tag + "_k16")
	CMPQ(kc, U8(16))
	JL(LabelRef(tag + "_k2"))
	{
		row := popRow(tag, b)
		for u := 0; u < 8; u++ {
			if u%2 == 0 {
				PREFETCHT1(Mem{Base: row, Disp: 32 * u})
			}
			step(0)
			step(1)
			advance(2)
		}
	}
	SUBQ(U8(16), kc)
	JMP(LabelRef(tag + "_k16"))
	Label(tag + "_k2")
	CMPQ(kc, U8(2))
	JL(LabelRef(tag + "_k1"))
	step(0)
	step(1)
	advance(2)
	SUBQ(U8(2), kc)
	JMP(LabelRef(tag + "_k2"))
	Label(tag + "_k1")
	TESTQ(kc, kc)
	JZ(LabelRef(tag + "_kend"))
	step(0)
	advance(1)
	Label(tag + "_kend")
}

// bytes loads an int parameter scaled to bytes (×4).
func bytes(name string) GPVirtual {
	r := Load(Param(name), GP64()).(GPVirtual)
	SHLQ(U8(2), r)
	return r
}

func gemm(s gemmSpec) {
	TEXT(s.name, NOSPLIT, "func(a *float32, lda int, b *float32, ldb int, c *float32, ldc int, m, n, k, kinc int, rs *float32, pf *uintptr, npf int)")
	Doc(s.doc...)
	save := ftzOn()
	lda, ldb := bytes("lda"), bytes("ldb")
	var lda3 GPVirtual
	if !s.colA {
		lda3 = GP64()
		LEAQ(Mem{Base: lda, Index: lda, Scale: 2}, lda3)
	}
	acc := newTile()
	joff := GP64()
	XORQ(joff, joff)

	Label(s.name + "_col")
	nb := bytes("n")
	CMPQ(joff, nb)
	JGE(LabelRef(s.name + "_done"))
	arow := Load(Param("a"), GP64())
	ctile := Load(Param("c"), GP64())
	ADDQ(joff, ctile)
	kk := Load(Param("k"), GP64())
	mi := Load(Param("m"), GP64())
	SHRQ(U8(3), mi)
	var rsp Register
	if s.init == "scale" {
		rsp = Load(Param("rs"), GP64())
	}

	Label(s.name + "_row")
	TESTQ(mi, mi)
	JZ(LabelRef(s.name + "_nextcol"))
	switch s.init {
	case "zero":
		acc.zero()
	default:
		acc.load(ctile, bytes("ldc"), s.c2off, rsp)
	}
	pb := Load(Param("b"), GP64())
	ADDQ(joff, pb)
	kc, pa := GP64(), GP64()
	MOVQ(kk, kc)
	MOVQ(arow, pa)
	kloop(s.name, acc, s.colA, s.sub, pa, lda, lda3, pb, ldb, kc)
	acc.store(ctile, bytes("ldc"), s.c2off)
	if s.colA {
		ADDQ(U8(4*mr), arow)
	} else {
		LEAQ(Mem{Base: arow, Index: lda, Scale: 8}, arow)
	}
	if s.init == "scale" {
		ADDQ(U8(4*mr), rsp)
	}
	ki := Load(Param("kinc"), GP64())
	ADDQ(ki, kk)
	DECQ(mi)
	JMP(LabelRef(s.name + "_row"))

	Label(s.name + "_nextcol")
	ADDQ(U8(128), joff)
	JMP(LabelRef(s.name + "_col"))
	Label(s.name + "_done")
	ret(save)
}

// out emits kdacOutAVX512: per 32-column tile of S, first Ṽ = U − W·S over
// all row tiles, then O = QG·S + A·Ṽ (A lower triangular, stored
// transposed), so the S tile is read from L1 by both.
func out() {
	const name = "kdacOutAVX512"
	TEXT(name, NOSPLIT, "func(w, qg *float32, lda int, s *float32, lds, stile int, u *float32, ldu int, at *float32, ldat int, o *float32, ldo int, kd *float32, e *float32, m, n, k int, pf *uintptr, npf int)")
	Doc(
		name+" finishes a chunk, in 8×32 tiles (m and k multiples of 8, n of",
		"32), with W, QG and KD m×k row-major (W and QG of stride lda, KD of",
		"stride k), S k×n (rows of stride lds, 32-column tiles stile floats",
		"apart: packed by tiles, or stile = 32 for row-major), U and O m×n, and",
		"A[i,j] = at[j*ldat+i]",
		"for j < 8·(i/8+1); column tile by column tile of S:",
		"",
		"\tU = U − W·S               (Ṽ, in place)",
		"\tO = QG·S + A·U",
		"\tS = diag(e)·S + KDᵀ·U",
		"",
		"Every 16 k-steps it also prefetches 256 bytes at the next of the npf",
		"addresses at pf (see the GEMMs).",
	)
	save := ftzOn()
	// strides are reloaded per phase: registers are short in the S phase
	strides := func() (lda, lda3, lds GPVirtual) {
		lda, lds = bytes("lda"), bytes("lds")
		lda3 = GP64()
		LEAQ(Mem{Base: lda, Index: lda, Scale: 2}, lda3)
		return
	}
	acc := newTile()
	joff := GP64()
	XORQ(joff, joff)
	// sTile returns the address of S's current column tile.
	sTile := func() GPVirtual {
		p := GP64()
		MOVQ(joff, p)
		SHRQ(U8(7), p)
		st := bytes("stile")
		IMULQ(st, p)
		sp := Load(Param("s"), GP64())
		ADDQ(sp, p)
		return p
	}
	Label(name + "_col")
	nb := bytes("n")
	CMPQ(joff, nb)
	JGE(LabelRef(name + "_done"))
	// Ṽ = U − W·S
	{
		arow := Load(Param("w"), GP64())
		ctile := Load(Param("u"), GP64())
		ADDQ(joff, ctile)
		mi := Load(Param("m"), GP64())
		SHRQ(U8(3), mi)
		Label(name + "_v")
		TESTQ(mi, mi)
		JZ(LabelRef(name + "_vend"))
		lda, lda3, lds := strides()
		acc.load(ctile, bytes("ldu"), 64, nil)
		pb := sTile()
		kc, pa := Load(Param("k"), GP64()), GP64()
		MOVQ(arow, pa)
		kloop(name+"_vk", acc, false, true, pa, lda, lda3, pb, lds, kc)
		acc.store(ctile, bytes("ldu"), 64)
		lda = bytes("lda")
		LEAQ(Mem{Base: arow, Index: lda, Scale: 8}, arow)
		DECQ(mi)
		JMP(LabelRef(name + "_v"))
		Label(name + "_vend")
	}
	// O = QG·S + A·Ṽ
	{
		arow := Load(Param("qg"), GP64())
		ctile := Load(Param("o"), GP64())
		ADDQ(joff, ctile)
		ti := GP64()
		XORQ(ti, ti)
		Label(name + "_o")
		mi := Load(Param("m"), GP64())
		SHRQ(U8(3), mi)
		CMPQ(ti, mi)
		JGE(LabelRef(name + "_oend"))
		acc.zero()
		lda, lda3, lds := strides()
		pb := sTile()
		kc, pa := Load(Param("k"), GP64()), GP64()
		MOVQ(arow, pa)
		kloop(name+"_ok", acc, false, false, pa, lda, lda3, pb, lds, kc)
		// + A·Ṽ: rows 8ti.., k = 8(ti+1)
		{
			pat := Load(Param("at"), GP64())
			t32 := GP64()
			MOVQ(ti, t32)
			SHLQ(U8(5), t32) // 4·mr bytes per row tile
			ADDQ(t32, pat)
			pv := Load(Param("u"), GP64())
			ADDQ(joff, pv)
			kt := GP64()
			LEAQ(Mem{Base: ti, Disp: 1}, kt)
			SHLQ(U8(3), kt)
			kloop(name+"_ak", acc, true, false, pat, bytes("ldat"), nil, pv, bytes("ldu"), kt)
		}
		acc.store(ctile, bytes("ldo"), 64)
		lda = bytes("lda")
		LEAQ(Mem{Base: arow, Index: lda, Scale: 8}, arow)
		INCQ(ti)
		JMP(LabelRef(name + "_o"))
		Label(name + "_oend")
	}
	// S = diag(e)·S + KDᵀ·Ṽ
	{
		acol := Load(Param("kd"), GP64())
		rsp := Load(Param("e"), GP64())
		ctile := sTile()
		mi := Load(Param("k"), GP64())
		SHRQ(U8(3), mi)
		Label(name + "_s")
		TESTQ(mi, mi)
		JZ(LabelRef(name + "_send"))
		acc.load(ctile, bytes("lds"), 64, rsp)
		pv := Load(Param("u"), GP64())
		ADDQ(joff, pv)
		kc, pa := Load(Param("m"), GP64()), GP64()
		MOVQ(acol, pa)
		kloop(name+"_sk", acc, true, false, pa, bytes("k"), nil, pv, bytes("ldu"), kc)
		acc.store(ctile, bytes("lds"), 64)
		ADDQ(U8(4*mr), acol)
		ADDQ(U8(4*mr), rsp)
		DECQ(mi)
		JMP(LabelRef(name + "_s"))
		Label(name + "_send")
	}
	ADDQ(U8(128), joff)
	JMP(LabelRef(name + "_col"))
	Label(name + "_done")
	ret(save)
}

// popRow returns the next address of the prefetch list pf (npf left), or
// dflt when the list is empty. The list holds the halves of the next
// chunk's input and output rows: one row per 4-KiB page, so the hardware
// prefetchers do not fetch them.
func popRow(name string, dflt Register) Register {
	row := GP64()
	MOVQ(dflt, row)
	cnt := Load(Param("npf"), GP64())
	TESTQ(cnt, cnt)
	JZ(LabelRef(name + "_pfnone"))
	p := Load(Param("pf"), GP64())
	MOVQ(Mem{Base: p}, row)
	ADDQ(U8(8), p)
	Store(p, Param("pf"))
	DECQ(cnt)
	Store(cnt, Param("npf"))
	Label(name + "_pfnone")
	return row
}

// ---- forward substitution -------------------------------------------------

// trsm emits kdacTrsmAVX512_<w>: the unit lower-triangular solve of the WY
// factors over nstrips strips of 16·w columns, two rows at a time.
func trsm(w int) {
	name := fmt.Sprintf("kdacTrsmAVX512_%d", w)
	TEXT(name, NOSPLIT, "func(lt *float32, ldl int, beta, src *float32, lds int, dst *float32, ldd int, n, nstrips int)")
	Doc(
		fmt.Sprintf("%s solves (I + L)·X = diag(beta)·Src for X (n×16·w·nstrips, n even),", name),
		"row by row, where L is strictly lower triangular and stored transposed,",
		"L[r,s] = lt[s*ldl+r]; src and dst may be the same rows:",
		"",
		"\tfor r := 0; r < n; r++ {",
		"\t\tfor j := range cols { x[j] = beta[r]*src[r*lds+j] }",
		"\t\tfor s := 0; s < r; s++ { for j := range cols { x[j] -= lt[s*ldl+r] * dst[s*ldd+j] } }",
		"\t\tcopy(dst[r*ldd:], x)",
		"\t}",
	)
	save := ftzOn()
	ldl := Load(Param("ldl"), GP64())
	SHLQ(U8(2), ldl)
	ldd := Load(Param("ldd"), GP64())
	SHLQ(U8(2), ldd)
	coff := GP64() // column byte offset of the strip
	XORQ(coff, coff)
	strips := Load(Param("nstrips"), GP64())
	accA, accB := make([]VecVirtual, w), make([]VecVirtual, w)
	for z := range accA {
		accA[z], accB[z] = ZMM(), ZMM()
	}
	Label(name + "_strip")
	TESTQ(strips, strips)
	JZ(LabelRef(name + "_done"))
	r := GP64()
	XORQ(r, r)
	Label(name + "_row")
	n := Load(Param("n"), GP64())
	CMPQ(r, n)
	JGE(LabelRef(name + "_nextstrip"))
	{
		// init: x = beta[r]·src[r], beta[r+1]·src[r+1]
		lds := Load(Param("lds"), GP64())
		SHLQ(U8(2), lds)
		ps := Load(Param("src"), GP64())
		ADDQ(coff, ps)
		t := GP64()
		MOVQ(r, t)
		IMULQ(lds, t)
		ADDQ(t, ps)
		pbeta := Load(Param("beta"), GP64())
		for z := 0; z < w; z++ {
			VMOVUPS(Mem{Base: ps, Disp: 64 * z}, accA[z])
			VMULPS_BCST(Mem{Base: pbeta, Index: r, Scale: 4}, accA[z], accA[z])
			VMOVUPS(Mem{Base: ps, Index: lds, Scale: 1, Disp: 64 * z}, accB[z])
			VMULPS_BCST(Mem{Base: pbeta, Index: r, Scale: 4, Disp: 4}, accB[z], accB[z])
		}
	}
	pl := Load(Param("lt"), GP64())
	LEAQ(Mem{Base: pl, Index: r, Scale: 4}, pl)
	pd := Load(Param("dst"), GP64())
	ADDQ(coff, pd)
	cnt := GP64()
	MOVQ(r, cnt)
	Label(name + "_s")
	TESTQ(cnt, cnt)
	JZ(LabelRef(name + "_diag"))
	{
		la, lb := ZMM(), ZMM()
		VBROADCASTSS(Mem{Base: pl}, la)
		VBROADCASTSS(Mem{Base: pl, Disp: 4}, lb)
		for z := 0; z < w; z++ {
			x := ZMM()
			VMOVUPS(Mem{Base: pd, Disp: 64 * z}, x)
			VFNMADD231PS(la, x, accA[z])
			VFNMADD231PS(lb, x, accB[z])
		}
	}
	ADDQ(ldl, pl)
	ADDQ(ldd, pd)
	DECQ(cnt)
	JMP(LabelRef(name + "_s"))
	Label(name + "_diag")
	{
		lb := ZMM()
		VBROADCASTSS(Mem{Base: pl, Disp: 4}, lb)
		for z := 0; z < w; z++ {
			VMOVUPS(accA[z], Mem{Base: pd, Disp: 64 * z})
			VFNMADD231PS(lb, accA[z], accB[z])
			VMOVUPS(accB[z], Mem{Base: pd, Index: ldd, Scale: 1, Disp: 64 * z})
		}
	}
	ADDQ(U8(2), r)
	JMP(LabelRef(name + "_row"))
	Label(name + "_nextstrip")
	ADDQ(U32(64*w), coff)
	DECQ(strips)
	JMP(LabelRef(name + "_strip"))
	Label(name + "_done")
	ret(save)
}

// ---- exp ------------------------------------------------------------------

// expc holds the constants of the vector exp in registers.
type expc struct {
	lo, log2e, magic, ln2hi, ln2lo, one VecVirtual
	p                                   []VecVirtual
}

func bcastConst(v float32) VecVirtual {
	z := ZMM()
	g := GP32()
	MOVL(U32(math.Float32bits(v)), g)
	VPBROADCASTD(g, z)
	return z
}

// expCoef holds the polynomial coefficients (p[0..5], then 1) for expN's
// embedded-broadcast operands.
var expCoef Mem

func expCoefTable() {
	expCoef = GLOBL("kdacExpCoef", RODATA|NOPTR)
	for i, v := range []float32{1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1, 1} {
		DATA(4*i, F32(v))
	}
}

// expN is exp for several independent inputs, emitted stage by stage so
// that their dependency chains (about 50 cycles each) overlap; the
// polynomial coefficients come from memory (embedded broadcast), which
// leaves registers for more chains.
func (c *expc) expN(xs ...VecVirtual) []VecVirtual {
	n := len(xs)
	r, k, y := make([]VecVirtual, n), make([]VecVirtual, n), make([]VecVirtual, n)
	for i := range xs {
		r[i], k[i], y[i] = ZMM(), ZMM(), ZMM()
		VMAXPS(c.lo, xs[i], r[i])
		VMOVAPS(c.magic, k[i])
	}
	for i := range xs {
		VFMADD231PS(c.log2e, r[i], k[i])
	}
	for i := range xs {
		VSUBPS(c.magic, k[i], k[i])
	}
	for i := range xs {
		VFNMADD231PS(c.ln2hi, k[i], r[i])
	}
	for i := range xs {
		VFNMADD231PS(c.ln2lo, k[i], r[i])
		VBROADCASTSS(expCoef.Offset(0), y[i])
	}
	for j := 1; j <= 7; j++ {
		off := 4 * min(j, 6)
		for i := range xs {
			VFMADD213PS_BCST(expCoef.Offset(off), r[i], y[i])
		}
	}
	for i := range xs {
		VSCALEFPS(k[i], y[i], y[i])
	}
	return y
}

// newExpcN allocates only the range-reduction constants (expN).
func newExpcN() *expc {
	return &expc{
		lo:    bcastConst(-104),
		log2e: bcastConst(1.44269504088896341),
		magic: bcastConst(12582912),
		ln2hi: bcastConst(0.693359375),
		ln2lo: bcastConst(-2.12194440e-4),
	}
}

// ---- gate preparation -------------------------------------------------------

func prep() {
	const name = "kdacPrepAVX512"
	TEXT(name, NOSPLIT, "func(q, k, gate *float32, ldi int, beta *float32, scale float32, e *float32, nz int, offd int, alp, qs, qrb, krb, qg, kg, ks, cend *float32)")
	Doc(
		name+" prepares one block of 16 tokens (rows of q, k, gate with stride ldi; the",
		"outputs are 16 rows of stride 16·nz; e holds exp(Γ) at the token before",
		"the block and is advanced to the block's last token; qrb and krb are",
		"written only if offd != 0). With λ the cumulative log gate from the block",
		"start and λe its value at the block's last token, column by column:",
		"",
		"\tfor r := 0; r < 16; r++ {",
		"\t\tλ += gate[r]; alp[r] = exp(gate[r]); el := exp(λ)",
		"\t\tqs[r] = scale*q[r]; qrb[r] = qs[r]*el; qg[r] = qrb[r]*e",
		"\t\tkrb[r] = beta[r]*k[r]*el; kg[r] = k[r]*el*e; ks[r] = k[r]*exp(λe-λ)",
		"\t}",
		"\tcend = exp(λe); e *= cend",
	)
	save := ftzOn()
	ldi := Load(Param("ldi"), GP64())
	SHLQ(U8(2), ldi)
	ldo := Load(Param("nz"), GP64())
	SHLQ(U8(6), ldo)
	sc := ZMM()
	{
		x := Load(Param("scale"), XMM())
		VBROADCASTSS(x, sc)
	}
	c := newExpcN()
	zoff := GP64()
	XORQ(zoff, zoff)
	Label(name + "_z")
	CMPQ(zoff, ldo)
	JGE(LabelRef(name + "_done"))
	E := ZMM()
	{
		pe := Load(Param("e"), GP64())
		VMOVUPS(Mem{Base: pe, Index: zoff, Scale: 1}, E)
	}
	// λe, summed in the same order as the running λ below
	lend := ZMM()
	{
		pg := Load(Param("gate"), GP64())
		ADDQ(zoff, pg)
		VMOVUPS(Mem{Base: pg}, lend)
		for r := 1; r < 16; r++ {
			ADDQ(ldi, pg)
			VADDPS(Mem{Base: pg}, lend, lend)
		}
	}
	lam := ZMM()
	VPXORD(lam, lam, lam)
	offi, offo, cnt := GP64(), GP64(), GP64()
	MOVQ(zoff, offi)
	MOVQ(zoff, offo)
	XORQ(cnt, cnt)
	el := ZMM()
	in := func(p string) Mem {
		b := Load(Param(p), GP64())
		return Mem{Base: b, Index: offi, Scale: 1}
	}
	out := func(p string) Mem {
		b := Load(Param(p), GP64())
		return Mem{Base: b, Index: offo, Scale: 1}
	}
	Label(name + "_r")
	{
		// rows r (offsets offi, offo) and r+1 (+ldi, +ldo)
		g0, g1, lam1 := ZMM(), ZMM(), ZMM()
		VMOVUPS(in("gate"), g0)
		{
			b := Load(Param("gate"), GP64())
			ADDQ(offi, b)
			VMOVUPS(Mem{Base: b, Index: ldi, Scale: 1}, g1)
		}
		VADDPS(g0, lam, lam)
		VADDPS(g1, lam, lam1)
		x0, x1 := ZMM(), ZMM()
		VSUBPS(lam, lend, x0)
		VSUBPS(lam1, lend, x1)
		ys := c.expN(g0, lam, x0, g1, lam1, x1)
		VMOVAPS(lam1, lam)
		for h := 0; h < 2; h++ {
			a, e, eks := ys[3*h], ys[3*h+1], ys[3*h+2]
			if h == 1 {
				ADDQ(ldi, offi)
				ADDQ(ldo, offo)
				INCQ(cnt)
			}
			VMOVUPS(a, out("alp"))
			kv := ZMM()
			VMOVUPS(in("k"), kv)
			VMULPS(kv, eks, eks)
			VMOVUPS(eks, out("ks"))
			qsv := ZMM()
			VMULPS(in("q"), sc, qsv)
			VMOVUPS(qsv, out("qs"))
			VMULPS(e, qsv, qsv)
			VMULPS(e, kv, kv)
			qgv, kgv := ZMM(), ZMM()
			VMULPS(E, qsv, qgv)
			VMOVUPS(qgv, out("qg"))
			VMULPS(E, kv, kgv)
			VMOVUPS(kgv, out("kg"))
			if h == 1 {
				VMOVAPS(e, el)
			}
			f := Load(Param("offd"), GP64())
			TESTQ(f, f)
			JZ(LabelRef(fmt.Sprintf("%s_nooff%d", name, h)))
			VMOVUPS(qsv, out("qrb"))
			pb := Load(Param("beta"), GP64())
			VMULPS_BCST(Mem{Base: pb, Index: cnt, Scale: 4}, kv, kv)
			VMOVUPS(kv, out("krb"))
			Label(fmt.Sprintf("%s_nooff%d", name, h))
		}
	}
	ADDQ(ldi, offi)
	ADDQ(ldo, offo)
	INCQ(cnt)
	CMPQ(cnt, U8(16))
	JL(LabelRef(name + "_r"))
	{
		pc := Load(Param("cend"), GP64())
		VMOVUPS(el, Mem{Base: pc, Index: zoff, Scale: 1})
		VMULPS(el, E, E)
		pe := Load(Param("e"), GP64())
		VMOVUPS(E, Mem{Base: pe, Index: zoff, Scale: 1})
	}
	ADDQ(U8(64), zoff)
	JMP(LabelRef(name + "_z"))
	Label(name + "_done")
	ret(save)
}

// ---- diagonal blocks -------------------------------------------------------

// treduce loads the 16 vectors at base+Disp(64·i) and returns one vector
// whose lane i is the sum of the lanes of vector i (45 shuffles and adds).
func treduce(base Register, disp int) VecVirtual {
	var v [16]VecVirtual
	for m := range v {
		v[m] = ZMM()
		src := (m%4)*4 + m/4 // the tree leaves lane 4L+e with position 4e+L
		VMOVUPS(Mem{Base: base, Disp: disp + 64*src}, v[m])
	}
	// 1: pairs → 256-bit halves
	var s1 [8]VecVirtual
	for i := range s1 {
		a, b := v[2*i], v[2*i+1]
		x, y := ZMM(), ZMM()
		VSHUFF32X4(U8(0x44), b, a, x)
		VSHUFF32X4(U8(0xEE), b, a, y)
		VADDPS(y, x, x)
		s1[i] = x
	}
	// 2: → 128-bit lanes
	var s2 [4]VecVirtual
	for i := range s2 {
		a, b := s1[2*i], s1[2*i+1]
		x, y := ZMM(), ZMM()
		VSHUFF32X4(U8(0x88), b, a, x)
		VSHUFF32X4(U8(0xDD), b, a, y)
		VADDPS(y, x, x)
		s2[i] = x
	}
	// 3: → pairs of floats
	var s3 [2]VecVirtual
	for i := range s3 {
		a, b := s2[2*i], s2[2*i+1]
		x, y := ZMM(), ZMM()
		VSHUFPS(U8(0x44), b, a, x)
		VSHUFPS(U8(0xEE), b, a, y)
		VADDPS(y, x, x)
		s3[i] = x
	}
	// 4: → floats
	x, y := ZMM(), ZMM()
	VSHUFPS(U8(0x88), s3[1], s3[0], x)
	VSHUFPS(U8(0xDD), s3[1], s3[0], y)
	VADDPS(y, x, x)
	return x
}

func diag(nz int) {
	name := fmt.Sprintf("kdacDiagAVX512_%d", nz)
	TEXT(name, NOSPLIT, "func(k *float32, ldk int, qs, alp, beta, la *float32, ldla int, tmp *float32)")
	Doc(
		fmt.Sprintf("%s computes the diagonal 16×16 block of L and A for one block of", name),
		fmt.Sprintf("16 tokens (K = %d): k rows of stride ldk, qs and alp (the per-token", 16*nz),
		fmt.Sprintf("decays) rows of stride %d, stored transposed into la (row s: Lᵀ at", 16*nz),
		"la[s*ldla:], Aᵀ at la[s*ldla+64:]); tmp is 512 floats of scratch:",
		"",
		"\tfor s := 0; s < 16; s++ {",
		"\t\tf := k[s]",
		"\t\tfor r := s; r < 16; r++ {",
		"\t\t\tif r > s { f = f ⊙ alp[r] }",
		"\t\t\tla[s*ldla+64+r] = dot(qs[r], f)",
		"\t\t\tla[s*ldla+r] = 0 if r == s, else beta[r]*dot(k[r], f)",
		"\t\t}",
		"\t\t(entries r < s are 0)",
		"\t}",
	)
	save := ftzOn()
	rowb := 64 * nz
	ldk := Load(Param("ldk"), GP64())
	SHLQ(U8(2), ldk)
	betav := ZMM()
	{
		pb := Load(Param("beta"), GP64())
		VMOVUPS(Mem{Base: pb}, betav)
	}
	zero := ZMM()
	VPXORD(zero, zero, zero)
	mA := GP32()
	MOVL(U32(0xFFFF), mA)
	ksp := Load(Param("k"), GP64())
	qsS := Load(Param("qs"), GP64())
	alS := Load(Param("alp"), GP64())
	laS := Load(Param("la"), GP64())
	sc := GP64()
	XORQ(sc, sc)
	f := make([]VecVirtual, nz)
	for z := range f {
		f[z] = ZMM()
	}
	// dot returns Σ_z mem(z)·f[z] as a vector of partial sums.
	dot := func(mem func(z int) Mem) VecVirtual {
		a0 := ZMM()
		VMULPS(mem(0), f[0], a0)
		if nz == 1 {
			return a0
		}
		a1 := ZMM()
		VMULPS(mem(1), f[1], a1)
		for z := 2; z < nz; z++ {
			if z%2 == 0 {
				VFMADD231PS(mem(z), f[z], a0)
			} else {
				VFMADD231PS(mem(z), f[z], a1)
			}
		}
		VADDPS(a1, a0, a0)
		return a0
	}
	Label(name + "_s")
	for z := range f {
		VMOVUPS(Mem{Base: ksp, Disp: 64 * z}, f[z])
	}
	tp := Load(Param("tmp"), GP64())
	{
		t := GP64()
		MOVQ(sc, t)
		SHLQ(U8(6), t)
		ADDQ(t, tp)
	}
	qsp, alp, krp := GP64(), GP64(), GP64()
	MOVQ(qsS, qsp)
	MOVQ(alS, alp)
	MOVQ(ksp, krp)
	{
		pa := dot(func(z int) Mem { return Mem{Base: qsp, Disp: 64 * z} })
		VMOVUPS(pa, Mem{Base: tp, Disp: 1024})
		VMOVUPS(zero, Mem{Base: tp})
	}
	cnt := GP64()
	MOVQ(U32(15), cnt)
	SUBQ(sc, cnt)
	Label(name + "_r")
	TESTQ(cnt, cnt)
	JZ(LabelRef(name + "_red"))
	ADDQ(ldk, krp)
	ADDQ(U32(rowb), qsp)
	ADDQ(U32(rowb), alp)
	ADDQ(U8(64), tp)
	for z := range f {
		VMULPS(Mem{Base: alp, Disp: 64 * z}, f[z], f[z])
	}
	{
		pl := dot(func(z int) Mem { return Mem{Base: krp, Disp: 64 * z} })
		VMOVUPS(pl, Mem{Base: tp})
		pa := dot(func(z int) Mem { return Mem{Base: qsp, Disp: 64 * z} })
		VMOVUPS(pa, Mem{Base: tp, Disp: 1024})
	}
	DECQ(cnt)
	JMP(LabelRef(name + "_r"))

	Label(name + "_red")
	{
		tb := Load(Param("tmp"), GP64())
		kA, kL := K(), K()
		KMOVW(mA, kA)
		t := GP32()
		MOVL(mA, t)
		SHLL(U8(1), t)
		KMOVW(t, kL)
		vL := treduce(tb, 0)
		VMULPS_Z(betav, vL, kL, vL)
		VMOVUPS(vL, Mem{Base: laS})
		vA := treduce(tb, 1024)
		VMOVUPS_Z(vA, kA, vA)
		VMOVUPS(vA, Mem{Base: laS, Disp: 256})
	}
	ldla := Load(Param("ldla"), GP64())
	SHLQ(U8(2), ldla)
	ADDQ(ldla, laS)
	ADDQ(ldk, ksp)
	ADDQ(U32(rowb), qsS)
	ADDQ(U32(rowb), alS)
	SHLL(U8(1), mA)
	INCQ(sc)
	CMPQ(sc, U8(16))
	JL(LabelRef(name + "_s"))
	ret(save)
}

// ---- small helpers ---------------------------------------------------------

func transpose() {
	const name = "kdacTransposeAVX512"
	TEXT(name, NOSPLIT, "func(src *float32, lds int, dst *float32, ldd int, nblk int)")
	Doc(
		name+" transposes nblk 16×16 blocks: the 16 rows of src (stride lds),",
		"columns 16b..16b+15, become rows 16b..16b+15 of dst (stride ldd), 16 columns:",
		"",
		"\tfor r := 0; r < 16; r++ { for c := 0; c < 16*nblk; c++ { dst[c*ldd+r] = src[r*lds+c] } }",
	)
	lds := Load(Param("lds"), GP64())
	SHLQ(U8(2), lds)
	ldd := Load(Param("ldd"), GP64())
	SHLQ(U8(2), ldd)
	ps := Load(Param("src"), GP64())
	pd := Load(Param("dst"), GP64())
	nb := Load(Param("nblk"), GP64())
	Label(name + "_blk")
	TESTQ(nb, nb)
	JZ(LabelRef(name + "_done"))
	var rw [16]VecVirtual
	p := GP64()
	MOVQ(ps, p)
	for i := range rw {
		rw[i] = ZMM()
		VMOVUPS(Mem{Base: p}, rw[i])
		if i < 15 {
			ADDQ(lds, p)
		}
	}
	var t [16]VecVirtual
	for i := 0; i < 8; i++ {
		t[2*i], t[2*i+1] = ZMM(), ZMM()
		VUNPCKLPS(rw[2*i+1], rw[2*i], t[2*i])
		VUNPCKHPS(rw[2*i+1], rw[2*i], t[2*i+1])
	}
	var u [16]VecVirtual
	for i := 0; i < 4; i++ {
		for c := 0; c < 4; c++ {
			u[4*i+c] = ZMM()
		}
		VUNPCKLPD(t[4*i+2], t[4*i], u[4*i+0])
		VUNPCKHPD(t[4*i+2], t[4*i], u[4*i+1])
		VUNPCKLPD(t[4*i+3], t[4*i+1], u[4*i+2])
		VUNPCKHPD(t[4*i+3], t[4*i+1], u[4*i+3])
	}
	// u[4i+c], 128-bit lane L = column 4L+c of rows 4i..4i+3.
	q := GP64()
	for c := 0; c < 4; c++ {
		v01, v01h, v23, v23h := ZMM(), ZMM(), ZMM(), ZMM()
		VSHUFF32X4(U8(0x44), u[4+c], u[c], v01)
		VSHUFF32X4(U8(0xEE), u[4+c], u[c], v01h)
		VSHUFF32X4(U8(0x44), u[12+c], u[8+c], v23)
		VSHUFF32X4(U8(0xEE), u[12+c], u[8+c], v23h)
		for L := 0; L < 4; L++ {
			o := ZMM()
			a, b := v01, v23
			if L >= 2 {
				a, b = v01h, v23h
			}
			imm := 0x88
			if L%2 == 1 {
				imm = 0xDD
			}
			VSHUFF32X4(U8(imm), b, a, o)
			// row 4L+c of dst
			IMUL3Q(U32(4*L+c), ldd, q)
			VMOVUPS(o, Mem{Base: pd, Index: q, Scale: 1})
		}
	}
	ADDQ(U8(64), ps)
	MOVQ(ldd, q)
	SHLQ(U8(4), q)
	ADDQ(q, pd)
	DECQ(nb)
	JMP(LabelRef(name + "_blk"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// pack emits kdacPackAVX512 / kdacUnpackAVX512: a K×V row-major matrix to
// and from 32-column tiles stored one after another (tile j: K rows of 32).
func pack(unpack bool) {
	name := "kdacPackAVX512"
	doc := "\tfor r < rows { for c < 32*ntiles { dst[(c/32)*rows*32 + r*32 + c%32] = src[r*lds+c] } }"
	if unpack {
		name = "kdacUnpackAVX512"
		doc = "\tfor r < rows { for c < 32*ntiles { dst[r*lds+c] = src[(c/32)*rows*32 + r*32 + c%32] } }"
	}
	TEXT(name, NOSPLIT, "func(dst, src *float32, lds, rows, ntiles int)")
	Doc(name+" converts between row-major (stride lds) and 32-column tiles:", "", doc)
	lds := bytes("lds")
	pd := Load(Param("dst"), GP64())
	ps := Load(Param("src"), GP64())
	tiles := Load(Param("ntiles"), GP64())
	Label(name + "_t")
	TESTQ(tiles, tiles)
	JZ(LabelRef(name + "_done"))
	rows := Load(Param("rows"), GP64())
	p := GP64()
	MOVQ(ps, p)
	if unpack {
		MOVQ(pd, p)
	}
	Label(name + "_r")
	x0, x1 := ZMM(), ZMM()
	if unpack {
		VMOVUPS(Mem{Base: ps}, x0)
		VMOVUPS(Mem{Base: ps, Disp: 64}, x1)
		VMOVUPS(x0, Mem{Base: p})
		VMOVUPS(x1, Mem{Base: p, Disp: 64})
		ADDQ(U8(128), ps)
	} else {
		VMOVUPS(Mem{Base: p}, x0)
		VMOVUPS(Mem{Base: p, Disp: 64}, x1)
		VMOVUPS(x0, Mem{Base: pd})
		VMOVUPS(x1, Mem{Base: pd, Disp: 64})
		ADDQ(U8(128), pd)
	}
	ADDQ(lds, p)
	DECQ(rows)
	JNZ(LabelRef(name + "_r"))
	if unpack {
		ADDQ(U8(128), pd)
	} else {
		ADDQ(U8(128), ps)
	}
	DECQ(tiles)
	JMP(LabelRef(name + "_t"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

func rowScale() {
	const name = "kdacRowScaleAVX512"
	TEXT(name, NOSPLIT, "func(x *float32, ldx int, v *float32, rows, nz int)")
	Doc(
		name+" scales each of rows rows of x (stride ldx, 16·nz columns) by v:",
		"",
		"\tfor r := 0; r < rows; r++ { for j := 0; j < 16*nz; j++ { x[r*ldx+j] *= v[j] } }",
	)
	save := ftzOn()
	ldx := Load(Param("ldx"), GP64())
	SHLQ(U8(2), ldx)
	px := Load(Param("x"), GP64())
	rows := Load(Param("rows"), GP64())
	Label(name + "_r")
	TESTQ(rows, rows)
	JZ(LabelRef(name + "_done"))
	pv := Load(Param("v"), GP64())
	nz := Load(Param("nz"), GP64())
	p := GP64()
	MOVQ(px, p)
	Label(name + "_z")
	TESTQ(nz, nz)
	JZ(LabelRef(name + "_next"))
	x := ZMM()
	VMOVUPS(Mem{Base: p}, x)
	VMULPS(Mem{Base: pv}, x, x)
	VMOVUPS(x, Mem{Base: p})
	ADDQ(U8(64), p)
	ADDQ(U8(64), pv)
	DECQ(nz)
	JMP(LabelRef(name + "_z"))
	Label(name + "_next")
	ADDQ(ldx, px)
	DECQ(rows)
	JMP(LabelRef(name + "_r"))
	Label(name + "_done")
	ret(save)
}

func gemmDoc(name, what string, loop ...string) []string {
	d := []string{
		name + " " + what + ",",
		"in 8×32 register tiles (m a multiple of 8, n of 32); row tile t uses",
		"k + t·kinc terms. Every 16 k-steps also prefetch (into L2) 256 bytes",
		"at the next of the npf addresses at pf:",
		"",
	}
	return append(d, loop...)
}

func main() {
	ConstraintExpr("amd64,gc,!purego")
	expCoefTable()
	gemm(gemmSpec{name: "kdacGemmSplitAVX512", init: "zero", c2off: 256,
		doc: gemmDoc("kdacGemmSplitAVX512", "is C = A·B with A row-major and n = 32, the second 16 columns stored 64 floats on",
			"\tfor i < m { for j < 32 { c[i*ldc+j+48*(j/16)] = Σ_{kk < k+(i/8)*kinc} a[i*lda+kk] * b[kk*ldb+j] } }")})
	out()
	for _, w := range []int{8, 4, 2, 1} {
		trsm(w)
	}
	prep()
	for nz := 1; nz <= 8; nz++ {
		diag(nz)
	}
	transpose()
	rowScale()
	pack(false)
	pack(true)
	Generate()
}
