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
	k := &kOps{t: t, colA: colA, sub: sub, a: a, lda: lda, lda3: lda3, b: b, ldb: ldb}
	if !colA {
		k.p1 = GP64()
		LEAQ(Mem{Base: a, Index: lda3, Scale: 1}, k.p1)
	}
	// 16 k-steps per iteration, prefetching the 256 bytes at the next list
	// address a line at a time: about a line per 32 cycles, which keeps the
	// ~16 fill buffers busy without stalling the FMAs (a burst of misses
	// would)
	Label(tag + "_k16")
	CMPQ(kc, U8(16))
	JL(LabelRef(tag + "_k2"))
	row := popRow(tag, b)
	for u := 0; u < 8; u++ {
		if u%2 == 0 {
			PREFETCHT1(Mem{Base: row, Disp: 32 * u})
		}
		k.step(0)
		k.step(1)
		k.advance(2)
	}
	SUBQ(U8(16), kc)
	JMP(LabelRef(tag + "_k16"))
	Label(tag + "_k2")
	CMPQ(kc, U8(2))
	JL(LabelRef(tag + "_k1"))
	k.step(0)
	k.step(1)
	k.advance(2)
	SUBQ(U8(2), kc)
	JMP(LabelRef(tag + "_k2"))
	Label(tag + "_k1")
	TESTQ(kc, kc)
	JZ(LabelRef(tag + "_kend"))
	k.step(0)
	k.advance(1)
	Label(tag + "_kend")
}

// kOps are one kloop's operands (see kloop); p1 = a + 3·lda addresses
// rows 3…7 of a row-major A.
type kOps struct {
	t                    *tile
	colA, sub            bool
	a, lda, lda3, b, ldb Register
	p1                   GPVirtual
}

// aMem addresses A[i, k + u] (u < 2).
func (k *kOps) aMem(i, u int) Mem {
	a, lda := k.a, k.lda
	if k.colA {
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
		return Mem{Base: k.p1, Disp: d}
	case 4:
		return Mem{Base: a, Index: lda, Scale: 4, Disp: d}
	case 5:
		return Mem{Base: k.p1, Index: lda, Scale: 2, Disp: d}
	case 6:
		return Mem{Base: k.p1, Index: k.lda3, Scale: 1, Disp: d}
	default:
		return Mem{Base: k.p1, Index: lda, Scale: 4, Disp: d}
	}
}

// step emits k-step u (0 or 1 past the cursors): B's row, then per tile
// row a broadcast of A and two FMAs.
func (k *kOps) step(u int) {
	b0, b1 := ZMM(), ZMM()
	if u == 0 {
		VMOVUPS(Mem{Base: k.b}, b0)
		VMOVUPS(Mem{Base: k.b, Disp: 64}, b1)
	} else {
		VMOVUPS(Mem{Base: k.b, Index: k.ldb, Scale: 1}, b0)
		VMOVUPS(Mem{Base: k.b, Index: k.ldb, Scale: 1, Disp: 64}, b1)
	}
	for i := 0; i < mr; i++ {
		x := ZMM()
		VBROADCASTSS(k.aMem(i, u), x)
		if k.sub {
			VFNMADD231PS(x, b0, k.t[i][0])
			VFNMADD231PS(x, b1, k.t[i][1])
		} else {
			VFMADD231PS(x, b0, k.t[i][0])
			VFMADD231PS(x, b1, k.t[i][1])
		}
	}
}

// advance moves the A and B cursors on by u (1 or 2) k-steps.
func (k *kOps) advance(u int) {
	if u == 2 {
		LEAQ(Mem{Base: k.b, Index: k.ldb, Scale: 2}, k.b)
	} else {
		ADDQ(k.ldb, k.b)
	}
	switch {
	case k.colA && u == 2:
		LEAQ(Mem{Base: k.a, Index: k.lda, Scale: 2}, k.a)
	case k.colA:
		ADDQ(k.lda, k.a)
	default:
		ADDQ(U8(4*u), k.a)
		ADDQ(U8(4*u), k.p1)
	}
}

// bytes loads an int parameter scaled to bytes (×4).
func bytes(name string) GPVirtual {
	r := Load(Param(name), GP64()).(GPVirtual)
	SHLQ(U8(2), r)
	return r
}

// gemm emits the tile GEMM s: column tile by column tile of C, row tile
// by row tile.
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
	gemmRows(s, acc, joff, lda, lda3, ldb)
	Label(s.name + "_nextcol")
	ADDQ(U8(128), joff)
	JMP(LabelRef(s.name + "_col"))
	Label(s.name + "_done")
	ret(save)
}

// gemmRows emits the row tiles of column tile joff (bytes): each tile
// initialised, its k loop (k + t·kinc terms) and its store.
func gemmRows(s gemmSpec, acc *tile, joff, lda, lda3, ldb Register) {
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
	acc := newTile()
	joff := GP64()
	XORQ(joff, joff)
	Label(name + "_col")
	nb := bytes("n")
	CMPQ(joff, nb)
	JGE(LabelRef(name + "_done"))
	outV(name, acc, joff)
	outO(name, acc, joff)
	outS(name, acc, joff)
	ADDQ(U8(128), joff)
	JMP(LabelRef(name + "_col"))
	Label(name + "_done")
	ret(save)
}

// outStrides loads out's A and S strides: reloaded per phase, registers
// are short in the S phase.
func outStrides() (lda, lda3, lds GPVirtual) {
	lda, lds = bytes("lda"), bytes("lds")
	lda3 = GP64()
	LEAQ(Mem{Base: lda, Index: lda, Scale: 2}, lda3)
	return
}

// sTile returns the address of S's column tile joff (bytes into a row).
func sTile(joff Register) GPVirtual {
	p := GP64()
	MOVQ(joff, p)
	SHRQ(U8(7), p)
	st := bytes("stile")
	IMULQ(st, p)
	sp := Load(Param("s"), GP64())
	ADDQ(sp, p)
	return p
}

// outV emits out's first phase on column tile joff: Ṽ = U − W·S.
func outV(name string, acc *tile, joff Register) {
	arow := Load(Param("w"), GP64())
	ctile := Load(Param("u"), GP64())
	ADDQ(joff, ctile)
	mi := Load(Param("m"), GP64())
	SHRQ(U8(3), mi)
	Label(name + "_v")
	TESTQ(mi, mi)
	JZ(LabelRef(name + "_vend"))
	lda, lda3, lds := outStrides()
	acc.load(ctile, bytes("ldu"), 64, nil)
	pb := sTile(joff)
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

// outO emits out's second phase on column tile joff: O = QG·S + A·Ṽ.
func outO(name string, acc *tile, joff Register) {
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
	lda, lda3, lds := outStrides()
	pb := sTile(joff)
	kc, pa := Load(Param("k"), GP64()), GP64()
	MOVQ(arow, pa)
	kloop(name+"_ok", acc, false, false, pa, lda, lda3, pb, lds, kc)
	outAV(name, acc, joff, ti)
	acc.store(ctile, bytes("ldo"), 64)
	lda = bytes("lda")
	LEAQ(Mem{Base: arow, Index: lda, Scale: 8}, arow)
	INCQ(ti)
	JMP(LabelRef(name + "_o"))
	Label(name + "_oend")
}

// outAV emits + A·Ṽ for row tile ti: rows 8ti.., k = 8(ti+1).
func outAV(name string, acc *tile, joff, ti Register) {
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

// outS emits out's state update on column tile joff: S = diag(e)·S +
// KDᵀ·Ṽ.
func outS(name string, acc *tile, joff Register) {
	acol := Load(Param("kd"), GP64())
	rsp := Load(Param("e"), GP64())
	ctile := sTile(joff)
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
	t := &trsmOps{name: name, w: w}
	t.ldl = Load(Param("ldl"), GP64())
	SHLQ(U8(2), t.ldl)
	t.ldd = Load(Param("ldd"), GP64())
	SHLQ(U8(2), t.ldd)
	t.coff = GP64()
	XORQ(t.coff, t.coff)
	strips := Load(Param("nstrips"), GP64())
	t.accA, t.accB = make([]VecVirtual, w), make([]VecVirtual, w)
	for z := range t.accA {
		t.accA[z], t.accB[z] = ZMM(), ZMM()
	}
	Label(name + "_strip")
	TESTQ(strips, strips)
	JZ(LabelRef(name + "_done"))
	t.rows()
	Label(name + "_nextstrip")
	ADDQ(U32(64*w), t.coff)
	DECQ(strips)
	JMP(LabelRef(name + "_strip"))
	Label(name + "_done")
	ret(save)
}

// trsmOps are what trsm's steps share: the strides of L and X in bytes,
// the strip's column byte offset coff, the row index r and the two rows'
// accumulators (w vectors each).
type trsmOps struct {
	name           string
	w              int
	ldl, ldd, coff Register
	r              Register
	accA, accB     []VecVirtual
}

// rows emits a strip's loop over row pairs r, r+1: their start, the
// subtraction of each solved row s < r, then the pair's own solve and
// stores.
func (t *trsmOps) rows() {
	name := t.name
	t.r = GP64()
	XORQ(t.r, t.r)
	Label(name + "_row")
	n := Load(Param("n"), GP64())
	CMPQ(t.r, n)
	JGE(LabelRef(name + "_nextstrip"))
	t.init()
	pl := Load(Param("lt"), GP64())
	LEAQ(Mem{Base: pl, Index: t.r, Scale: 4}, pl)
	pd := Load(Param("dst"), GP64())
	ADDQ(t.coff, pd)
	cnt := GP64()
	MOVQ(t.r, cnt)
	Label(name + "_s")
	TESTQ(cnt, cnt)
	JZ(LabelRef(name + "_diag"))
	la, lb := ZMM(), ZMM()
	VBROADCASTSS(Mem{Base: pl}, la)
	VBROADCASTSS(Mem{Base: pl, Disp: 4}, lb)
	for z := 0; z < t.w; z++ {
		x := ZMM()
		VMOVUPS(Mem{Base: pd, Disp: 64 * z}, x)
		VFNMADD231PS(la, x, t.accA[z])
		VFNMADD231PS(lb, x, t.accB[z])
	}
	ADDQ(t.ldl, pl)
	ADDQ(t.ldd, pd)
	DECQ(cnt)
	JMP(LabelRef(name + "_s"))
	Label(name + "_diag")
	t.diag(pl, pd)
	ADDQ(U8(2), t.r)
	JMP(LabelRef(name + "_row"))
}

// init emits x = beta[r]·src[r], beta[r+1]·src[r+1].
func (t *trsmOps) init() {
	lds := Load(Param("lds"), GP64())
	SHLQ(U8(2), lds)
	ps := Load(Param("src"), GP64())
	ADDQ(t.coff, ps)
	tr := GP64()
	MOVQ(t.r, tr)
	IMULQ(lds, tr)
	ADDQ(tr, ps)
	pbeta := Load(Param("beta"), GP64())
	for z := 0; z < t.w; z++ {
		VMOVUPS(Mem{Base: ps, Disp: 64 * z}, t.accA[z])
		VMULPS_BCST(Mem{Base: pbeta, Index: t.r, Scale: 4}, t.accA[z], t.accA[z])
		VMOVUPS(Mem{Base: ps, Index: lds, Scale: 1, Disp: 64 * z}, t.accB[z])
		VMULPS_BCST(Mem{Base: pbeta, Index: t.r, Scale: 4, Disp: 4}, t.accB[z], t.accB[z])
	}
}

// diag emits the pair's own step: row r stored, then row r+1 less
// L[r+1,r]·x_r (at pl + 4) stored.
func (t *trsmOps) diag(pl, pd Register) {
	lb := ZMM()
	VBROADCASTSS(Mem{Base: pl, Disp: 4}, lb)
	for z := 0; z < t.w; z++ {
		VMOVUPS(t.accA[z], Mem{Base: pd, Disp: 64 * z})
		VFNMADD231PS(lb, t.accA[z], t.accB[z])
		VMOVUPS(t.accB[z], Mem{Base: pd, Index: t.ldd, Scale: 1, Disp: 64 * z})
	}
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

// prep emits kdacPrepAVX512: one block of 16 tokens' gates and scaled
// inputs, 16 columns (a zmm) at a time.
func prep() {
	p := &prepOps{name: "kdacPrepAVX512"}
	name := p.name
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
	p.ldi = Load(Param("ldi"), GP64())
	SHLQ(U8(2), p.ldi)
	p.ldo = Load(Param("nz"), GP64())
	SHLQ(U8(6), p.ldo)
	p.sc = ZMM()
	x := Load(Param("scale"), XMM())
	VBROADCASTSS(x, p.sc)
	p.c = newExpcN()
	p.zoff = GP64()
	XORQ(p.zoff, p.zoff)
	Label(name + "_z")
	CMPQ(p.zoff, p.ldo)
	JGE(LabelRef(name + "_done"))
	p.column()
	ADDQ(U8(64), p.zoff)
	JMP(LabelRef(name + "_z"))
	Label(name + "_done")
	ret(save)
}

// prepOps are what prep's steps share: the strides ldi, ldo (bytes), the
// scale sc, the exp constants, the column offset zoff, the column's e
// (E), λe (lend), running λ (lam) and last exp(λ) (el), and the row
// cursors offi, offo and index cnt.
type prepOps struct {
	name                 string
	ldi, ldo, zoff       Register
	sc, E, lend, lam, el VecVirtual
	c                    *expc
	offi, offo, cnt      Register
}

// in addresses the current row of the input param.
func (p *prepOps) in(param string) Mem {
	b := Load(Param(param), GP64())
	return Mem{Base: b, Index: p.offi, Scale: 1}
}

// out addresses the current row of the output param.
func (p *prepOps) out(param string) Mem {
	b := Load(Param(param), GP64())
	return Mem{Base: b, Index: p.offo, Scale: 1}
}

// column emits one column of 16: e and λe loaded (λe summed in the same
// order as the running λ), the rows two at a time, then cend and e.
func (p *prepOps) column() {
	p.E = ZMM()
	pe := Load(Param("e"), GP64())
	VMOVUPS(Mem{Base: pe, Index: p.zoff, Scale: 1}, p.E)
	p.lend = ZMM()
	pg := Load(Param("gate"), GP64())
	ADDQ(p.zoff, pg)
	VMOVUPS(Mem{Base: pg}, p.lend)
	for r := 1; r < 16; r++ {
		ADDQ(p.ldi, pg)
		VADDPS(Mem{Base: pg}, p.lend, p.lend)
	}
	p.lam = ZMM()
	VPXORD(p.lam, p.lam, p.lam)
	p.offi, p.offo, p.cnt = GP64(), GP64(), GP64()
	MOVQ(p.zoff, p.offi)
	MOVQ(p.zoff, p.offo)
	XORQ(p.cnt, p.cnt)
	p.el = ZMM()
	Label(p.name + "_r")
	p.rowPair()
	ADDQ(p.ldi, p.offi)
	ADDQ(p.ldo, p.offo)
	INCQ(p.cnt)
	CMPQ(p.cnt, U8(16))
	JL(LabelRef(p.name + "_r"))
	pc := Load(Param("cend"), GP64())
	VMOVUPS(p.el, Mem{Base: pc, Index: p.zoff, Scale: 1})
	VMULPS(p.el, p.E, p.E)
	pe = Load(Param("e"), GP64())
	VMOVUPS(p.E, Mem{Base: pe, Index: p.zoff, Scale: 1})
}

// rowPair emits rows r (offsets offi, offo) and r+1 (+ldi, +ldo): their
// gates into λ, the six exponentials at once, then each row's outputs.
func (p *prepOps) rowPair() {
	g0, g1, lam1 := ZMM(), ZMM(), ZMM()
	VMOVUPS(p.in("gate"), g0)
	b := Load(Param("gate"), GP64())
	ADDQ(p.offi, b)
	VMOVUPS(Mem{Base: b, Index: p.ldi, Scale: 1}, g1)
	VADDPS(g0, p.lam, p.lam)
	VADDPS(g1, p.lam, lam1)
	x0, x1 := ZMM(), ZMM()
	VSUBPS(p.lam, p.lend, x0)
	VSUBPS(lam1, p.lend, x1)
	ys := p.c.expN(g0, p.lam, x0, g1, lam1, x1)
	VMOVAPS(lam1, p.lam)
	for h := 0; h < 2; h++ {
		if h == 1 {
			ADDQ(p.ldi, p.offi)
			ADDQ(p.ldo, p.offo)
			INCQ(p.cnt)
		}
		p.rowOut(h, ys[3*h], ys[3*h+1], ys[3*h+2])
	}
}

// rowOut emits row h of the pair's outputs from its exp(gate) a, exp(λ)
// e and exp(λe − λ) eks.
func (p *prepOps) rowOut(h int, a, e, eks VecVirtual) {
	VMOVUPS(a, p.out("alp"))
	kv := ZMM()
	VMOVUPS(p.in("k"), kv)
	VMULPS(kv, eks, eks)
	VMOVUPS(eks, p.out("ks"))
	qsv := ZMM()
	VMULPS(p.in("q"), p.sc, qsv)
	VMOVUPS(qsv, p.out("qs"))
	VMULPS(e, qsv, qsv)
	VMULPS(e, kv, kv)
	qgv, kgv := ZMM(), ZMM()
	VMULPS(p.E, qsv, qgv)
	VMOVUPS(qgv, p.out("qg"))
	VMULPS(p.E, kv, kgv)
	VMOVUPS(kgv, p.out("kg"))
	if h == 1 {
		VMOVAPS(e, p.el)
	}
	f := Load(Param("offd"), GP64())
	TESTQ(f, f)
	JZ(LabelRef(fmt.Sprintf("%s_nooff%d", p.name, h)))
	VMOVUPS(qsv, p.out("qrb"))
	pb := Load(Param("beta"), GP64())
	VMULPS_BCST(Mem{Base: pb, Index: p.cnt, Scale: 4}, kv, kv)
	VMOVUPS(kv, p.out("krb"))
	Label(fmt.Sprintf("%s_nooff%d", p.name, h))
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

// diag emits kdacDiagAVX512_<nz>: the diagonal block's columns s of Lᵀ
// and Aᵀ, each by a running product of the decays from token s on.
func diag(nz int) {
	d := &diagOps{name: fmt.Sprintf("kdacDiagAVX512_%d", nz), nz: nz, rowb: 64 * nz}
	name := d.name
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
	d.args()
	Label(name + "_s")
	d.products()
	d.reduce()
	ldla := Load(Param("ldla"), GP64())
	SHLQ(U8(2), ldla)
	ADDQ(ldla, d.laS)
	ADDQ(d.ldk, d.ksp)
	ADDQ(U32(d.rowb), d.qsS)
	ADDQ(U32(d.rowb), d.alS)
	SHLL(U8(1), d.mA)
	INCQ(d.sc)
	CMPQ(d.sc, U8(16))
	JL(LabelRef(name + "_s"))
	ret(save)
}

// diagOps are what diag's steps share: the row bytes of qs and alp, k's
// stride, beta, a zero vector, the lane mask of column s (mA), the
// column's row pointers into k, qs, alp and la, its index sc and the
// running product f (nz vectors).
type diagOps struct {
	name                   string
	nz, rowb               int
	ldk                    Register
	betav, zero            VecVirtual
	mA                     GPVirtual
	ksp, qsS, alS, laS, sc Register
	f                      []VecVirtual
}

// args loads diag's arguments and constants.
func (d *diagOps) args() {
	d.ldk = Load(Param("ldk"), GP64())
	SHLQ(U8(2), d.ldk)
	d.betav = ZMM()
	pb := Load(Param("beta"), GP64())
	VMOVUPS(Mem{Base: pb}, d.betav)
	d.zero = ZMM()
	VPXORD(d.zero, d.zero, d.zero)
	d.mA = GP32()
	MOVL(U32(0xFFFF), d.mA)
	d.ksp = Load(Param("k"), GP64())
	d.qsS = Load(Param("qs"), GP64())
	d.alS = Load(Param("alp"), GP64())
	d.laS = Load(Param("la"), GP64())
	d.sc = GP64()
	XORQ(d.sc, d.sc)
	d.f = make([]VecVirtual, d.nz)
	for z := range d.f {
		d.f[z] = ZMM()
	}
}

// dot returns Σ_z base[64z]·f[z] as a vector of partial sums.
func (d *diagOps) dot(base Register) VecVirtual {
	mem := func(z int) Mem { return Mem{Base: base, Disp: 64 * z} }
	a0 := ZMM()
	VMULPS(mem(0), d.f[0], a0)
	if d.nz == 1 {
		return a0
	}
	a1 := ZMM()
	VMULPS(mem(1), d.f[1], a1)
	for z := 2; z < d.nz; z++ {
		if z%2 == 0 {
			VFMADD231PS(mem(z), d.f[z], a0)
		} else {
			VFMADD231PS(mem(z), d.f[z], a1)
		}
	}
	VADDPS(a1, a0, a0)
	return a0
}

// products emits column s's partial dot products into tmp (row r's L
// sums at 64r, A sums at 1024 + 64r): f = k[s], then for r > s f ⊙=
// alp[r].
func (d *diagOps) products() {
	name := d.name
	for z := range d.f {
		VMOVUPS(Mem{Base: d.ksp, Disp: 64 * z}, d.f[z])
	}
	tp := Load(Param("tmp"), GP64())
	t := GP64()
	MOVQ(d.sc, t)
	SHLQ(U8(6), t)
	ADDQ(t, tp)
	qsp, alp, krp := GP64(), GP64(), GP64()
	MOVQ(d.qsS, qsp)
	MOVQ(d.alS, alp)
	MOVQ(d.ksp, krp)
	pa := d.dot(qsp)
	VMOVUPS(pa, Mem{Base: tp, Disp: 1024})
	VMOVUPS(d.zero, Mem{Base: tp})
	cnt := GP64()
	MOVQ(U32(15), cnt)
	SUBQ(d.sc, cnt)
	Label(name + "_r")
	TESTQ(cnt, cnt)
	JZ(LabelRef(name + "_red"))
	ADDQ(d.ldk, krp)
	ADDQ(U32(d.rowb), qsp)
	ADDQ(U32(d.rowb), alp)
	ADDQ(U8(64), tp)
	for z := range d.f {
		VMULPS(Mem{Base: alp, Disp: 64 * z}, d.f[z], d.f[z])
	}
	pl := d.dot(krp)
	VMOVUPS(pl, Mem{Base: tp})
	pa = d.dot(qsp)
	VMOVUPS(pa, Mem{Base: tp, Disp: 1024})
	DECQ(cnt)
	JMP(LabelRef(name + "_r"))
}

// reduce emits the column's sums: tmp's partial sums reduced, L's times
// beta, and both masked to the rows r ≥ s (L: r > s) and stored.
func (d *diagOps) reduce() {
	Label(d.name + "_red")
	tb := Load(Param("tmp"), GP64())
	kA, kL := K(), K()
	KMOVW(d.mA, kA)
	t := GP32()
	MOVL(d.mA, t)
	SHLL(U8(1), t)
	KMOVW(t, kL)
	vL := treduce(tb, 0)
	VMULPS_Z(d.betav, vL, kL, vL)
	VMOVUPS(vL, Mem{Base: d.laS})
	vA := treduce(tb, 1024)
	VMOVUPS_Z(vA, kA, vA)
	VMOVUPS(vA, Mem{Base: d.laS, Disp: 256})
}

// ---- small helpers ---------------------------------------------------------

// transpose emits kdacTransposeAVX512: 16×16 blocks transposed in
// registers (unpacks of floats, then of pairs, then 128-bit shuffles).
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
	u := unpackQuads(loadBlock(ps, lds))
	q := GP64()
	storeColumns(u, pd, ldd, q)
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

// loadBlock loads the 16 rows (stride lds) of the block at ps.
func loadBlock(ps, lds Register) [16]VecVirtual {
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
	return rw
}

// unpackQuads transposes the 4×4 float blocks of each 128-bit lane of the
// rows rw: u[4i+c], 128-bit lane L = column 4L+c of rows 4i..4i+3.
func unpackQuads(rw [16]VecVirtual) [16]VecVirtual {
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
	return u
}

// storeColumns gathers the 128-bit lanes of u into the 16 rows of dst
// (stride ldd at pd; q: scratch): row 4L+c from lane L of u[c], u[4+c],
// u[8+c], u[12+c].
func storeColumns(u [16]VecVirtual, pd, ldd, q Register) {
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
			IMUL3Q(U32(4*L+c), ldd, q)
			VMOVUPS(o, Mem{Base: pd, Index: q, Scale: 1})
		}
	}
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
	if unpack {
		copy32(Mem{Base: ps}, Mem{Base: p})
		ADDQ(U8(128), ps)
	} else {
		copy32(Mem{Base: p}, Mem{Base: pd})
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

// copy32 copies the 32 floats at src to dst.
func copy32(src, dst Mem) {
	x0, x1 := ZMM(), ZMM()
	VMOVUPS(src, x0)
	VMOVUPS(src.Offset(64), x1)
	VMOVUPS(x0, dst)
	VMOVUPS(x1, dst.Offset(64))
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
