//go:generate go run . -isa avx2 -out ../../../kernels/gemm/gemm_f32_avx2_amd64.s -stubs ../../../kernels/gemm/gemm_f32_avx2_stubs_amd64.go -pkg gemm
//go:generate go run . -isa avx512 -out ../../../kernels/gemm/gemm_f32_avx512_amd64.s -stubs ../../../kernels/gemm/gemm_f32_avx512_stubs_amd64.go -pkg gemm

// Command f32 generates the f32-class kernels of kernels/gemm (f32
// activations; F32, BF16, Q8, Q4, Q3 and Q6 weights widened in registers) for one
// ISA per run (-isa avx2|avx512):
//
//   - gemv kernels: one 16-row weight panel (or, for AVX2, one 8-row half
//     of it) against mr activation rows, the panel streamed once, weights
//     dequantized in registers;
//   - gemm micro-kernels: an mr×32 (AVX-512, two panels) or mr×16 (one
//     panel) register tile of C (+)= A·B, A row-major activations (any
//     stride: the driver passes a contiguous copy of the tile), B one or
//     two f32 [kc][16] panel blocks; one broadcast load per row and k,
//     then register FMAs (faster here than embedded-broadcast FMAs);
//   - widen kernels: a block of a BF16/Q8/Q4/Q3/Q6 panel to f32 [k][16], the B
//     operand of the micro-kernels.
//
// The packed layouts are those of internal/quant; all strides are in
// elements, all weight pointers are bytes.
package main

import (
	"flag"
	"fmt"
	"log"
	"math/bits"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

var isaFlag = flag.String("isa", "avx512", "avx2 or avx512")

// gemvPrefetch is how far ahead (bytes) the gemv kernels prefetch the
// weight stream: the hardware prefetchers alone leave the dequantizing
// kernels (Q8, Q4, BF16 with several rows) waiting on DRAM (measured).
const gemvPrefetch = 2048

// gemmUnroll is the k unroll of the micro-kernels.
const gemmUnroll = 4

// isa abstracts the vector width and the few instructions that differ.
type isa struct {
	name  string // function-name suffix
	lanes int    // f32 lanes per register: rows of a panel per register
	vec   func() VecVirtual
	// gemvMR[kind] is the largest gemv row count generated.
	gemvMR map[kind]int
	// gemmMR is the largest micro-tile height; gemmNP the panels per tile.
	gemmMR, gemmNP int
}

var isas = map[string]*isa{
	"avx2": {name: "AVX2", lanes: 8, vec: YMM,
		gemvMR: map[kind]int{kF32: 8, kBF16: 8, kQ8: 4, kQ4: 4, kQ4Min: 4, kQ3: 4, kQ6: 4}, gemmMR: 6, gemmNP: 1},
	"avx512": {name: "AVX512", lanes: 16, vec: ZMM,
		gemvMR: map[kind]int{kF32: 8, kBF16: 8, kQ8: 8, kQ4: 8, kQ4Min: 8, kQ3: 8, kQ6: 8}, gemmMR: 14, gemmNP: 2},
}

var I *isa // the ISA being generated

type kind int

const (
	kF32 kind = iota
	kBF16
	kQ8
	kQ4
	kQ4Min
	kQ3
	kQ6
)

var kindNames = map[kind]string{kF32: "F32", kBF16: "BF16", kQ8: "Q8", kQ4: "Q4", kQ4Min: "Q4Min", kQ3: "Q3", kQ6: "Q6"}

const (
	lineBytes = 64 // one interleaved line of a panel
	groupK    = 32
)

// groupBytes is the size of a Q8/Q4/Q3/Q6 group record.
func groupBytes(k kind) int {
	switch k {
	case kQ3:
		return 3*lineBytes + 32
	case kQ6:
		return 6*lineBytes + 32
	case kQ8:
		return 8*lineBytes + 32
	case kQ4:
		return 4*lineBytes + 32
	case kQ4Min:
		return 4*lineBytes + 64
	}
	panic("not quantized")
}

func nLines(k kind) int {
	switch k {
	case kQ8:
		return 8
	case kQ3:
		return 3
	case kQ6:
		return 6
	}
	return 4
}

// ---- constants -------------------------------------------------------------

var (
	cMask8, cMask4, cHi16, cNeg128, cNeg8 Mem
	cSign, cExpMant, cMagic               Mem
	cNeg4, cNeg32                         Mem
)

// vecConsts are the vector-wide 32-bit constants (32 bytes: an AVX2
// memory operand; AVX-512 broadcasts the first dword).
var vecConsts = map[uint32]Mem{}

func vecConst(v uint32) Mem {
	if m, ok := vecConsts[v]; ok {
		return m
	}
	m := GLOBL(fmt.Sprintf("vc%08x%s", v, I.name), RODATA|NOPTR)
	for i := 0; i < 32; i += 4 {
		DATA(i, U32(v))
	}
	vecConsts[v] = m
	return m
}

// andConst: dst = src & v in every 32-bit lane.
func andConst(v uint32, src, dst VecVirtual) {
	if I.lanes == 16 {
		VPANDD_BCST(vecConst(v), src, dst)
	} else {
		VPAND(vecConst(v), src, dst)
	}
}

func constant(name string, v uint32) Mem {
	m := GLOBL(name+I.name, RODATA|NOPTR)
	DATA(0, U32(v))
	return m
}

func constants() {
	cMask8 = constant("mask8", 0xff)
	cMask4 = constant("mask4", 0x0f)
	cHi16 = constant("hi16", 0xffff0000)
	cNeg128 = constant("neg128", 0xc3000000) // -128.0
	cNeg8 = constant("neg8", 0xc1000000)     // -8.0
	cNeg4 = constant("neg4", 0xc0800000)     // -4.0
	cNeg32 = constant("neg32", 0xc2000000)   // -32.0
	for _, k := range []kind{kQ3, kQ6} {
		for _, f := range fields(k) {
			vecConst(f.mask)
		}
		for _, sp := range splits(k) {
			for _, p := range sp {
				vecConst(p.mask)
			}
		}
	}
	cSign = constant("sign", 0x80000000)
	cExpMant = constant("expmant", 0x0fffe000)
	cMagic = constant("magic", 0x77800000) // 2^112
}

// ---- ISA helpers -----------------------------------------------------------

// bcast broadcasts a 32-bit constant or value from memory.
func bcast(m Mem) VecVirtual {
	v := I.vec()
	VPBROADCASTD(m, v)
	return v
}

func and(a, b, dst Op) {
	if I.lanes == 16 {
		VPANDD(a, b, dst)
	} else {
		VPAND(a, b, dst)
	}
}

func loadInt(m Mem, dst VecVirtual) {
	if I.lanes == 16 {
		VMOVDQU32(m, dst)
	} else {
		VMOVDQU(m, dst)
	}
}

// fmaX: acc += b · broadcast(m).
func fmaX(m Mem, b, acc VecVirtual) {
	if I.lanes == 16 {
		VFMADD231PS_BCST(m, b, acc)
		return
	}
	t := YMM()
	VBROADCASTSS(m, t)
	VFMADD231PS(b, t, acc)
}

func zero(v VecVirtual) { VXORPS(v.AsY(), v.AsY(), v.AsY()) }

// halfToF32 converts I.lanes f16 values at m to f32.
func halfToF32(m Mem) VecVirtual {
	v := I.vec()
	if I.lanes == 16 {
		VCVTPH2PS(m, v)
		return v
	}
	// AVX2 without F16C: rebias the exponent by multiplying by 2^112,
	// which handles zero and subnormals exactly (scales are finite).
	VPMOVZXWD(m, v)
	s, e := YMM(), YMM()
	VPSLLD(U8(16), v, s)
	VPAND(bcast(cSign), s, s)
	VPSLLD(U8(13), v, e)
	VPAND(bcast(cExpMant), e, e)
	VMULPS(bcast(cMagic), e, v)
	VORPS(s, v, v)
	return v
}

// extract puts the unsigned field at bit shift of every 32-bit lane of
// line into dst (bits 8 or 4 wide), as f32.
func extract(line, mask VecVirtual, shift, bits int, dst VecVirtual) {
	switch {
	case shift == 0:
		and(mask, line, dst)
	case shift+bits == 32:
		VPSRLD(U8(shift), line, dst)
	default:
		VPSRLD(U8(shift), line, dst)
		and(mask, dst, dst)
	}
	VCVTDQ2PS(dst, dst)
}

// rows addresses mr rows of a row-major matrix with few registers: rows
// 5i..5i+4 hang off base i at 0, ld, 2·ld, 3·ld, 4·ld.
type rows struct {
	bases  []Register
	l1, l3 Register
}

func newRows(base, ld Register, mr int) rows {
	r := rows{l1: ld}
	SHLQ(U8(2), ld)
	if mr > 3 {
		r.l3 = GP64()
		LEAQ(Mem{Base: ld, Index: ld, Scale: 2}, r.l3)
	}
	b := GP64()
	MOVQ(base, b)
	r.bases = append(r.bases, b)
	for i := 5; i < mr; i += 5 {
		nb := GP64()
		LEAQ(Mem{Base: b, Index: ld, Scale: 4}, nb)
		ADDQ(ld, nb)
		r.bases = append(r.bases, nb)
		b = nb
	}
	return r
}

func (r rows) mem(row, disp int) Mem {
	b := r.bases[row/5]
	switch row % 5 {
	case 1:
		return Mem{Base: b, Index: r.l1, Scale: 1, Disp: disp}
	case 2:
		return Mem{Base: b, Index: r.l1, Scale: 2, Disp: disp}
	case 3:
		return Mem{Base: b, Index: r.l3, Scale: 1, Disp: disp}
	case 4:
		return Mem{Base: b, Index: r.l1, Scale: 4, Disp: disp}
	}
	return Mem{Base: b, Disp: disp}
}

func (r rows) advance(bytes int) {
	for _, b := range r.bases {
		ADDQ(U32(bytes), b)
	}
}

// storeRows writes (acc ≠ 0: adds into) y row r, lanes [0, I.lanes), from v[r].
func storeRows(name string, v []VecVirtual) {
	t := make([][]VecVirtual, len(v))
	for r := range v {
		t[r] = v[r : r+1]
	}
	storeTile(name, "y", "ldy", t)
}

// storeTile writes (acc ≠ 0: adds into) row r of the matrix at param p
// (ldp elements apart), lanes [j·I.lanes, (j+1)·I.lanes) from v[r][j];
// each of the two paths ends the function.
func storeTile(name, p, ldp string, v [][]VecVirtual) {
	y := Load(Param(p), GP64())
	ld := Load(Param(ldp), GP64())
	SHLQ(U8(2), ld)
	accf := Load(Param("acc"), GP64())
	store := func(add bool) {
		for r := range v {
			for j, vj := range v[r] {
				m := Mem{Base: y, Disp: 4 * I.lanes * j}
				if add {
					VADDPS(m, vj, vj)
				}
				VMOVUPS(vj, m)
			}
			if r != len(v)-1 {
				ADDQ(ld, y)
			}
		}
	}
	TESTQ(accf, accf)
	JZ(LabelRef(name + "_set"))
	store(true)
	VZEROUPPER()
	RET()
	Label(name + "_set")
	store(false)
	VZEROUPPER()
	RET()
}

// zeros returns n rows of c new zeroed vectors.
func zeros(n, c int) [][]VecVirtual {
	v := make([][]VecVirtual, n)
	for r := range v {
		v[r] = make([]VecVirtual, c)
		for j := range v[r] {
			v[r][j] = I.vec()
			zero(v[r][j])
		}
	}
	return v
}

// unrolledLoop emits a loop of n steps (labels name_loop, name_tail,
// name_done): while n ≥ u, head, then u steps (step(0…u−1)) and
// advance(u, true); then one step at a time (step(0), advance(1, false)).
func unrolledLoop(name string, n Register, u int, head func(), step func(i int), advance func(steps int, unrolled bool)) {
	Label(name + "_loop")
	CMPQ(n, U32(u))
	JB(LabelRef(name + "_tail"))
	head()
	for i := 0; i < u; i++ {
		step(i)
	}
	advance(u, true)
	SUBQ(U32(u), n)
	JMP(LabelRef(name + "_loop"))
	Label(name + "_tail")
	TESTQ(n, n)
	JZ(LabelRef(name + "_done"))
	step(0)
	advance(1, false)
	DECQ(n)
	JMP(LabelRef(name + "_tail"))
	Label(name + "_done")
}

// sumChains folds acc[c] into acc[0] pairwise.
func sumChains(acc []VecVirtual) {
	for n := len(acc); n > 1; n = (n + 1) / 2 {
		h := (n + 1) / 2
		for i := h; i < n; i++ {
			VADDPS(acc[i], acc[i-h], acc[i-h])
		}
	}
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// ---- gemv ------------------------------------------------------------------

func gemvName(k kind, mr int) string {
	return fmt.Sprintf("gemv%s%s_%dx%d", kindNames[k], I.name, mr, I.lanes)
}

// gemvDense generates the F32 and BF16 gemv kernels: chains independent
// accumulators per row, k split round-robin over them.
func gemvDense(k kind, mr int) {
	name := gemvName(k, mr)
	TEXT(name, NOSPLIT, "func(n int, w *byte, x *float32, ldx int, y *float32, ldy int, acc int)")
	gemvDenseDoc(name, k, mr)
	C := ceilDiv(8, mr)
	if I.lanes == 8 && mr*C > 10 {
		C = 10 / mr
	}
	acc := zeros(mr, C)
	n := Load(Param("n"), GP64())
	w := Load(Param("w"), GP64())
	x := Load(Param("x"), GP64())
	ldx := Load(Param("ldx"), GP64())
	xr := newRows(x, ldx, mr)
	var mask VecVirtual
	if k == kBF16 {
		mask = bcast(cHi16)
	}
	// step: one k (F32) or one pair (BF16) per line; U lines per iteration.
	U, kpl := C, 1 // kpl: k per line
	if k == kBF16 {
		U, kpl = ceilDiv(C, 2), 2
	}
	unrolledLoop(name, n, U, func() {}, func(u int) {
		denseLine(k, w, xr, mask, acc, u)
	}, func(steps int, _ bool) {
		ADDQ(U32(lineBytes*steps), w)
		xr.advance(4 * kpl * steps)
	})
	out := make([]VecVirtual, mr)
	for r := range acc {
		sumChains(acc[r])
		out[r] = acc[r][0]
	}
	storeRows(name, out)
}

// gemvDenseDoc emits a dense gemv kernel's doc comment.
func gemvDenseDoc(name string, k kind, mr int) {
	nk, wt := "n", "f32(w[64k+4i:])"
	what := "n = K"
	if k == kBF16 {
		nk, wt, what = "2n", "bf16(w[64(k/2)+4i+2(k%2):])", "n = Kp/2 pairs of k"
	}
	Doc(
		fmt.Sprintf("%s is the %s gemv kernel for %d activation rows: w is the first", name, kindNames[k], mr),
		fmt.Sprintf("line of a panel (at lane 0 of the %d rows computed), lines of 64 B, %s:", I.lanes, what),
		"",
		fmt.Sprintf("\tfor r := 0; r < %d; r++ {", mr),
		fmt.Sprintf("\t\tfor i := 0; i < %d; i++ {", I.lanes),
		fmt.Sprintf("\t\t\ts := Σ_{k<%s} x[r·ldx+k] · %s", nk, wt),
		"\t\t\tif acc != 0 { y[r·ldy+i] += s } else { y[r·ldy+i] = s }",
		"\t\t}",
		"\t}",
	)
}

// denseLine emits line u of a dense gemv step: one k (F32) or a pair
// (BF16: the low and high halves of each lane, mask keeping the high)
// FMAd into each row's chain k % C.
func denseLine(k kind, w Register, xr rows, mask VecVirtual, acc [][]VecVirtual, u int) {
	C := len(acc[0])
	PREFETCHT0(Mem{Base: w, Disp: lineBytes*u + gemvPrefetch})
	line := I.vec()
	if k == kF32 {
		VMOVUPS(Mem{Base: w, Disp: lineBytes * u}, line)
		for r := range acc {
			fmaX(xr.mem(r, 4*u), line, acc[r][u%C])
		}
		return
	}
	loadInt(Mem{Base: w, Disp: lineBytes * u}, line)
	lo, hi := I.vec(), I.vec()
	VPSLLD(U8(16), line, lo)
	and(mask, line, hi)
	for r := range acc {
		fmaX(xr.mem(r, 8*u), lo, acc[r][(2*u)%C])
		fmaX(xr.mem(r, 8*u+4), hi, acc[r][(2*u+1)%C])
	}
}

// groupArgs are a quantized gemv kernel's group loop registers: the count
// g, the weights w and scales sc, the activation rows xr and the group
// sums xs (lds bytes apart).
type groupArgs struct {
	g, w, sc, xs, lds Register
	xr                rows
}

// loadGroupArgs loads the group loop's registers.
func loadGroupArgs(mr int) groupArgs {
	var a groupArgs
	a.g = Load(Param("groups"), GP64())
	a.w = Load(Param("w"), GP64())
	a.sc = Load(Param("sc"), GP64())
	x := Load(Param("x"), GP64())
	ldx := Load(Param("ldx"), GP64())
	a.xr = newRows(x, ldx, mr)
	a.xs = Load(Param("xs"), GP64())
	a.lds = Load(Param("lds"), GP64())
	SHLQ(U8(2), a.lds)
	return a
}

// prefetch prefetches the group record gb bytes long, gemvPrefetch ahead.
func (a groupArgs) prefetch(gb int) {
	for off := 0; off < gb; off += lineBytes {
		PREFETCHT0(Mem{Base: a.w, Disp: off + gemvPrefetch})
	}
}

// next moves on by a group of gb bytes and closes the loop (name_group).
func (a groupArgs) next(name string, gb int) {
	ADDQ(U32(gb), a.w)
	ADDQ(U32(gb), a.sc)
	a.xr.advance(4 * groupK)
	ADDQ(a.lds, a.xs)
	DECQ(a.g)
	JNZ(LabelRef(name + "_group"))
}

// quantField is field f of line l of a Q8/Q4 group: its k and the shift
// of its bits in the lane. Q8 k = 4l+f; Q4 f<4: k = 8l+f (low nibble of
// byte f), f≥4: k = 8l+f (high nibble of byte f−4).
func quantField(k kind, l, f int) (kk, shift int) {
	if k == kQ8 {
		return 4*l + f, 8 * f
	}
	return 8*l + f, 8*(f%4) + 4*(f/4)
}

// gemvQuant generates the Q8/Q4 gemv kernels. Per group the raw unsigned
// weights u are dotted with x (chains accumulators per row), then
//
//	Q8, Q4:  tot += d · (Σ x·u − z·Σx)        z = 128 or 8
//	Q4 min:  tot += d · Σ x·u + m · Σx
//
// with Σx the group sums of x supplied by the caller (xs).
func gemvQuant(k kind, mr int) {
	name := gemvName(k, mr)
	TEXT(name, NOSPLIT, "func(groups int, w *byte, sc *byte, x *float32, ldx int, xs *float32, lds int, y *float32, ldy int, acc int)")
	gemvQuantDoc(name, k, mr)
	C := 1
	switch mr {
	case 1:
		C = 4
	case 2:
		C = 2
	}
	tot := zeros(mr, 1)
	a := loadGroupArgs(mr)
	bits, mask := 8, bcast(cMask8)
	if k != kQ8 {
		bits, mask = 4, bcast(cMask4)
	}
	Label(name + "_group")
	gacc := zeros(mr, C)
	a.prefetch(groupBytes(k))
	for l := 0; l < nLines(k); l++ {
		line := I.vec()
		loadInt(Mem{Base: a.w, Disp: lineBytes * l}, line)
		for f := 0; f < 32/bits; f++ {
			kk, shift := quantField(k, l, f)
			v := I.vec()
			extract(line, mask, shift, bits, v)
			for r := 0; r < mr; r++ {
				fmaX(a.xr.mem(r, 4*kk), v, gacc[r][kk%C])
			}
		}
	}
	quantFlush(k, a, gacc, tot)
	a.next(name, groupBytes(k))
	storeTile(name, "y", "ldy", tot)
}

// gemvQuantDoc emits a Q8/Q4 gemv kernel's doc comment.
func gemvQuantDoc(name string, k kind, mr int) {
	gb := groupBytes(k)
	var u, wv string
	switch k {
	case kQ8:
		u = fmt.Sprintf("w[%d·g+64(j/4)+4i+j%%4]", gb)
		wv = "d·(u−128)"
	case kQ4:
		u = fmt.Sprintf("nibble j/4%%2 of w[%d·g+64(j/8)+4i+j%%4]", gb)
		wv = "d·(u−8)"
	case kQ4Min:
		u = fmt.Sprintf("nibble j/4%%2 of w[%d·g+64(j/8)+4i+j%%4]", gb)
		wv = "d·u + m"
	}
	Doc(
		fmt.Sprintf("%s is the %s gemv kernel for %d activation rows: w is the first", name, kindNames[k], mr),
		fmt.Sprintf("line of a panel (at lane 0 of the %d rows computed), sc its f16 scales", I.lanes),
		"(at the same rows; Q4 mins follow 32 B later), and xs the group sums",
		"xs[g·lds+r] = Σ_{j<32} x[r·ldx+32g+j]; with u the stored unsigned weight",
		fmt.Sprintf("%s,", u),
		fmt.Sprintf("d = f16(sc[%d·g+2i:]) (and m the min at +32), W = %s:", gb, wv),
		"",
		fmt.Sprintf("\tfor r := 0; r < %d; r++ {", mr),
		fmt.Sprintf("\t\tfor i := 0; i < %d; i++ {", I.lanes),
		"\t\t\ts := Σ_{g<groups} Σ_{j<32} x[r·ldx+32g+j] · W",
		"\t\t\tif acc != 0 { y[r·ldy+i] += s } else { y[r·ldy+i] = s }",
		"\t\t}",
		"\t}",
	)
}

// quantFlush emits a Q8/Q4 group's flush: each row's chains summed, the
// zero point's −z·Σx added (or, with a min, m·Σx into tot), times d into
// tot.
func quantFlush(k kind, a groupArgs, gacc, tot [][]VecVirtual) {
	d := halfToF32(Mem{Base: a.sc})
	var m, z VecVirtual
	if k == kQ4Min {
		m = halfToF32(Mem{Base: a.sc, Disp: 32})
	} else {
		z = I.vec()
		if k == kQ8 {
			VBROADCASTSS(cNeg128, z)
		} else {
			VBROADCASTSS(cNeg8, z)
		}
	}
	for r := range gacc {
		sumChains(gacc[r])
		if k == kQ4Min {
			fmaX(Mem{Base: a.xs, Disp: 4 * r}, m, tot[r][0])
		} else {
			fmaX(Mem{Base: a.xs, Disp: 4 * r}, z, gacc[r][0])
		}
		VFMADD231PS(gacc[r][0], d, tot[r][0])
	}
}

// ---- Q3 and Q6 ---------------------------------------------------------------

// field is element k of a Q3/Q6 group: the bits mask of every 32-bit lane
// (one row) of source src, a line (src < nLines) or a split quad
// assembled by splits (src − nLines).
type field struct {
	k, src int
	mask   uint32
}

// shift is the position of the field's lowest bit.
func (f field) shift() int { return bits.TrailingZeros32(f.mask) }

// top: the field ends at bit 31, so a shift alone extracts it (masked in
// place it would convert as negative).
func (f field) top() bool { return f.mask>>31 != 0 }

// exp is the power of two on the value the gemv kernels convert: the
// field masked in place is u·2^shift; a top field is shifted down (u).
func (f field) exp() int {
	if f.top() {
		return 0
	}
	return f.shift()
}

// fields lists a group's 32 elements in the kernels' order (quant/q3.go,
// quant/q6.go for the layouts).
//
//	Q3: line c, byte j: u at k = 8c+j in bits 0–2, at 8c+4+j in bits 3–5;
//	    split quads 6 and 7 as assembled by splits: u·16 and u·32 per byte
//	Q6: line c, byte j: u at k = 4c+j in bits 0–5; split quads 6, 7: u·4
func fields(k kind) []field {
	var fs []field
	switch k {
	case kQ3:
		for c := 0; c < 3; c++ {
			for h := 0; h < 2; h++ {
				for j := 0; j < 4; j++ {
					fs = append(fs, field{8*c + 4*h + j, c, 7 << (8*j + 3*h)})
				}
			}
		}
		for j := 0; j < 4; j++ {
			fs = append(fs, field{24 + j, 3, 0x70 << (8 * j)})
		}
		for j := 0; j < 4; j++ {
			fs = append(fs, field{28 + j, 4, 0xe0 << (8 * j)})
		}
	case kQ6:
		for c := 0; c < 6; c++ {
			for j := 0; j < 4; j++ {
				fs = append(fs, field{4*c + j, c, 63 << (8 * j)})
			}
		}
		for h := 0; h < 2; h++ {
			for j := 0; j < 4; j++ {
				fs = append(fs, field{24 + 4*h + j, 6 + h, 0xfc << (8 * j)})
			}
		}
	}
	return fs
}

// part is (line & mask) >> shr, one piece of a split quad (the masked bits
// stay inside their byte).
type part struct {
	line int
	mask uint32
	shr  int
}

// splits are the split quads, each the OR of its parts:
//
//	Q3 quad 6: (L0 & 0xc0) >> 2 | L2 & 0x40   u·16 (bits 4–6 of each byte)
//	Q3 quad 7: (L1 & 0xc0) >> 1 | L2 & 0x80   u·32 (bits 5–7)
//	Q6 quad 6+h: (L3h & 0xc0) >> 4 | (L3h+1 & 0xc0) >> 2 | L3h+2 & 0xc0   u·4 (bits 2–7)
func splits(k kind) [][]part {
	const c0 = 0xc0c0c0c0
	switch k {
	case kQ3:
		return [][]part{{{0, c0, 2}, {2, 0x40404040, 0}}, {{1, c0, 1}, {2, 0x80808080, 0}}}
	case kQ6:
		return [][]part{{{0, c0, 4}, {1, c0, 2}, {2, c0, 0}}, {{3, c0, 4}, {4, c0, 2}, {5, c0, 0}}}
	}
	return nil
}

// eachField loads the lines and split quads of one group and calls fn
// for every field with its sources in registers: one per offset, the
// lines at w + 64·line + offs[h] (the two halves of a panel for an AVX2
// kernel of 16 rows).
func eachField(k kind, w Register, offs []int, fn func(f field, src []VecVirtual)) {
	fs := fields(k)
	for i := 0; i < len(fs); {
		srcs := make([]VecVirtual, len(offs))
		for h, off := range offs {
			line := func(l int) Mem { return Mem{Base: w, Disp: lineBytes*l + off} }
			src := I.vec()
			srcs[h] = src
			if s := fs[i].src; s < nLines(k) {
				loadInt(line(s), src)
				continue
			}
			for pi, p := range splits(k)[fs[i].src-nLines(k)] {
				t := src
				if pi > 0 {
					t = I.vec()
				}
				loadInt(line(p.line), t)
				andConst(p.mask, t, t)
				if p.shr > 0 {
					VPSRLD(U8(p.shr), t, t)
				}
				if pi > 0 {
					if I.lanes == 16 {
						VPORD(t, src, src)
					} else {
						VPOR(t, src, src)
					}
				}
			}
		}
		j := i
		for ; j < len(fs) && fs[j].src == fs[i].src; j++ {
			fn(fs[j], srcs)
		}
		i = j
	}
}

// expTable is the exponent of each k's pre-scaling for the doc comments.
func expTable(k kind) string {
	e := make([]int, groupK)
	for _, f := range fields(k) {
		e[f.k] = f.exp()
	}
	return fmt.Sprint(e)
}

// gemvQ36 generates the Q3/Q6 gemv kernels. Each field is masked in place
// (no shift) and converted: U = u·2^e, with x pre-scaled by the caller to
// x·2^−e (exact: a power of two), so that per group
//
//	tot += d · (Σ x'·U − z·Σx)        z = 4 (Q3) or 32 (Q6)
//
// with Σx the group sums of the unscaled x (xs). halves = 2 (AVX2, one
// row: gemv{Q3,Q6}AVX2_1x16) computes both 8-row halves of the panel in
// one pass, each broadcast activation feeding two FMAs.
func gemvQ36(k kind, mr, halves int) {
	name := gemvName(k, mr)
	if halves == 2 {
		name = fmt.Sprintf("gemv%s%s_%dx16", kindNames[k], I.name, mr)
	}
	TEXT(name, NOSPLIT, "func(groups int, w *byte, sc *byte, x *float32, ldx int, xs *float32, lds int, y *float32, ldy int, acc int)")
	gemvQ36Doc(name, k, mr, I.lanes*halves)
	C := q36Chains(mr, halves)
	tot := zeros(mr, halves)
	a := loadGroupArgs(mr)
	Label(name + "_group")
	// gacc[r][h][c]: chain c of row r, half h
	gacc := make([][][]VecVirtual, mr)
	for r := range gacc {
		gacc[r] = zeros(halves, C)
	}
	a.prefetch(groupBytes(k))
	q36Dots(k, a, gacc)
	zv := I.vec()
	if k == kQ3 {
		VBROADCASTSS(cNeg4, zv)
	} else {
		VBROADCASTSS(cNeg32, zv)
	}
	for h := 0; h < halves; h++ {
		d := halfToF32(Mem{Base: a.sc, Disp: 2 * I.lanes * h})
		for r := 0; r < mr; r++ {
			sumChains(gacc[r][h])
			fmaX(Mem{Base: a.xs, Disp: 4 * r}, zv, gacc[r][h][0])
			VFMADD231PS(gacc[r][h][0], d, tot[r][h])
		}
	}
	a.next(name, groupBytes(k))
	storeTile(name, "y", "ldy", tot)
}

// gemvQ36Doc emits a Q3/Q6 gemv kernel's doc comment (rowsDone: the
// panel rows it computes).
func gemvQ36Doc(name string, k kind, mr, rowsDone int) {
	z := 4
	layout := "quant/q3.go"
	if k == kQ6 {
		z, layout = 32, "quant/q6.go"
	}
	Doc(
		fmt.Sprintf("%s is the %s gemv kernel for %d activation rows: w is the first", name, kindNames[k], mr),
		fmt.Sprintf("line of a panel (at lane 0 of the %d rows computed), sc its f16 scales", rowsDone),
		"(at the same rows), and xs the group sums xs[g·lds+r] = Σ_{j<32} x₀[r·ldx+32g+j]",
		"of the activations x₀; x holds them pre-scaled, x[r·ldx+32g+j] = x₀[…]·2^−e[j],",
		fmt.Sprintf("e = %s. With u the stored weight of row i, k = 32g+j (%s),", expTable(k), layout),
		fmt.Sprintf("d = f16(sc[%d·g+2i:]):", groupBytes(k)),
		"",
		fmt.Sprintf("\tfor r := 0; r < %d; r++ {", mr),
		fmt.Sprintf("\t\tfor i := 0; i < %d; i++ {", rowsDone),
		fmt.Sprintf("\t\t\ts := Σ_{g<groups} d · (Σ_{j<32} x[r·ldx+32g+j] · float32(u<<e[j]) − %d·xs[g·lds+r])", z),
		"\t\t\tif acc != 0 { y[r·ldy+i] += s } else { y[r·ldy+i] = s }",
		"\t\t}",
		"\t}",
	)
}

// q36Chains is the independent accumulators per row (and half): enough
// FMA chains to hide the FMA latency at one row (the mask and the convert
// are the rest).
func q36Chains(mr, halves int) int {
	C := 1
	switch mr {
	case 1:
		C = 8
	case 2:
		C = 4
	case 3:
		C = 2
	}
	if I.lanes == 16 {
		C = max(C, 2)
	}
	if halves == 2 {
		C = 4 // per half: 8 chains
	}
	return C
}

// q36Dots emits a Q3/Q6 group's products: each field masked in place (or
// a top one shifted) and converted, per half, then FMAd with each row's
// activation into chain n % C (halves: one broadcast for both).
func q36Dots(k kind, a groupArgs, gacc [][][]VecVirtual) {
	halves, C := len(gacc[0]), len(gacc[0][0])
	offs := []int{0, 4 * I.lanes}[:halves]
	n := 0
	eachField(k, a.w, offs, func(f field, src []VecVirtual) {
		v := make([]VecVirtual, halves)
		for h := range v {
			v[h] = I.vec()
			if f.top() {
				VPSRLD(U8(f.shift()), src[h], v[h])
			} else {
				andConst(f.mask, src[h], v[h])
			}
			VCVTDQ2PS(v[h], v[h])
		}
		for r := range gacc {
			if halves == 1 {
				fmaX(a.xr.mem(r, 4*f.k), v[0], gacc[r][0][n%C])
				continue
			}
			t := I.vec()
			VBROADCASTSS(a.xr.mem(r, 4*f.k), t)
			for h := range v {
				VFMADD231PS(v[h], t, gacc[r][h][n%C])
			}
		}
		n++
	})
}

// ---- gemm micro-kernels ------------------------------------------------------

func gemmName(mr, np int) string {
	return fmt.Sprintf("gemm%s_%dx%d", I.name, mr, 16*np)
}

// gemmKernel generates an mr×(16·np) micro-kernel: C (+)= A·B over kc, A
// row-major (lda), B np blocks of [kc][16] f32, C row-major (ldc), with
// the prefetches of the driver's next tile and next B block (pfa, pfb).
func gemmKernel(mr, np int) {
	name := gemmName(mr, np)
	TEXT(name, NOSPLIT, "func(kc int, a *float32, lda int, b0, b1 *byte, c *float32, ldc int, acc int, pfa *float32, pfb *byte)")
	gemmDoc(name, mr, np)
	vpr := 16 * np / I.lanes // vectors per row
	acc := zeros(mr, vpr)
	kc := Load(Param("kc"), GP64())
	a := Load(Param("a"), GP64())
	lda := Load(Param("lda"), GP64())
	ar := newRows(a, lda, mr)
	bp := []Register{Load(Param("b0"), GP64())}
	if np == 2 {
		bp = append(bp, Load(Param("b1"), GP64()))
	}
	prefetchC(mr, np)
	pfa := Load(Param("pfa"), GP64())
	pfb := Load(Param("pfb"), GP64())
	unrolledLoop(name, kc, gemmUnroll, func() {
		PREFETCHT0(Mem{Base: pfa})
		PREFETCHT1(Mem{Base: pfb})
	}, func(u int) {
		gemmStep(ar, bp, acc, u)
	}, func(steps int, unrolled bool) {
		for _, p := range bp {
			ADDQ(U32(steps*lineBytes), p)
		}
		if unrolled {
			ADDQ(U32(4*steps), pfa)
			ADDQ(U32(16*steps), pfb)
		}
		ar.advance(4 * steps)
	})
	storeTile(name, "c", "ldc", acc)
}

// gemmDoc emits the micro-kernel's doc comment.
func gemmDoc(name string, mr, np int) {
	bdesc := "b0 [kc][16]f32"
	col := "b0[16k+j]"
	if np == 2 {
		bdesc = "b0, b1 [kc][16]f32 (columns 0–15, 16–31)"
		col = "b_{j/16}[16k+j%16]"
	}
	Doc(
		fmt.Sprintf("%s is the %d×%d micro-kernel: C (+)= A·B with A row-major (lda),", name, mr, 16*np),
		fmt.Sprintf("%s and C row-major (ldc):", bdesc),
		"",
		fmt.Sprintf("\tfor r := 0; r < %d; r++ {", mr),
		fmt.Sprintf("\t\tfor j := 0; j < %d; j++ {", 16*np),
		fmt.Sprintf("\t\t\ts := Σ_{k<kc} a[r·lda+k] · %s", col),
		"\t\t\tif acc != 0 { c[r·ldc+j] += s } else { c[r·ldc+j] = s }",
		"\t\t}",
		"\t}",
		"",
		"While it runs, it prefetches the 4·kc bytes at pfa into L1 (the next",
		"tile's activations) and the 16·kc bytes at pfb into L2 (the next B block).",
	)
}

// gemmStep emits k step u: the row of B (vector j from block j/per at
// lineBytes·u) and per row of A one broadcast load, then reg-reg FMAs:
// faster than embedded-broadcast FMAs with indexed addresses (measured).
func gemmStep(ar rows, bp []Register, acc [][]VecVirtual, u int) {
	per := 16 / I.lanes
	b := make([]VecVirtual, len(acc[0]))
	for j := range b {
		b[j] = I.vec()
		VMOVUPS(Mem{Base: bp[j/per], Disp: lineBytes*u + 4*I.lanes*(j%per)}, b[j])
	}
	for r := range acc {
		t := I.vec()
		VBROADCASTSS(ar.mem(r, 4*u), t)
		for j := range b {
			VFMADD231PS(b[j], t, acc[r][j])
		}
	}
}

// prefetchC prefetches the C tile (first and last byte of each row) so
// that its cache misses overlap the k loop instead of stalling the store.
func prefetchC(mr, np int) {
	c := Load(Param("c"), GP64())
	ldc := Load(Param("ldc"), GP64())
	SHLQ(U8(2), ldc)
	for r := 0; r < mr; r++ {
		for off := 0; off < 64*np; off += 64 {
			PREFETCHT0(Mem{Base: c, Disp: off})
		}
		PREFETCHT0(Mem{Base: c, Disp: 64*np - 4})
		if r != mr-1 {
			ADDQ(ldc, c)
		}
	}
}

// ---- widening (gemm B operand) ---------------------------------------------

// widen generates widen<Kind><ISA>(dst *float32, w *byte, n int): n pairs
// (BF16) or groups (Q8/Q4) of a panel to f32 dst[k·16+i] = W[16p+i, k].
func widen(k kind) {
	name := fmt.Sprintf("widen%s%s", kindNames[k], I.name)
	unit := "groups of 32 k"
	if k == kBF16 {
		unit = "pairs of k"
	}
	TEXT(name, NOSPLIT, "func(dst *float32, w *byte, n int)")
	Doc(
		fmt.Sprintf("%s widens n %s of a packed %s panel (w at the first) to f32:", name, unit, kindNames[k]),
		"",
		"\tfor k := range n·(k per unit) { for i := 0; i < 16; i++ { dst[16k+i] = W[i, k] } }",
		"",
		"(see widen in gemm_generic.go for the same in Go).",
	)
	dst := Load(Param("dst"), GP64())
	w := Load(Param("w"), GP64())
	n := Load(Param("n"), GP64())
	switch k {
	case kBF16:
		widenBF16(name, dst, w, n)
	case kQ3, kQ6:
		widenQ36(name, k, dst, w, n)
	default:
		widenQuant(name, k, dst, w, n)
	}
}

// widenBF16 is widen's loop for BF16: each lane's low and high bf16 to
// the f32 rows of k and k+1.
func widenBF16(name string, dst, w, n Register) {
	halves := 16 / I.lanes
	hb := 4 * I.lanes // bytes of one f32 vector
	mask := bcast(cHi16)
	Label(name + "_loop")
	for h := 0; h < halves; h++ {
		line, lo := I.vec(), I.vec()
		loadInt(Mem{Base: w, Disp: 2 * hb * h / 2}, line)
		VPSLLD(U8(16), line, lo)
		and(mask, line, line)
		VMOVUPS(lo, Mem{Base: dst, Disp: hb * h})
		VMOVUPS(line, Mem{Base: dst, Disp: 64 + hb*h})
	}
	ADDQ(U32(lineBytes), w)
	ADDQ(U32(128), dst)
	DECQ(n)
	JNZ(LabelRef(name + "_loop"))
	VZEROUPPER()
	RET()
}

// widenQuant is widen's loop for Q8 and Q4: each field extracted and
// converted, then d·u + b with b = −z·d (or the min).
func widenQuant(name string, k kind, dst, w, n Register) {
	halves := 16 / I.lanes
	hb := 4 * I.lanes // bytes of one f32 vector
	bits, maskC := 8, cMask8
	if k != kQ8 {
		bits, maskC = 4, cMask4
	}
	mask := bcast(maskC)
	scOff := nLines(k) * lineBytes
	Label(name + "_group")
	for h := 0; h < halves; h++ {
		d := halfToF32(Mem{Base: w, Disp: scOff + 2*I.lanes*h})
		b := I.vec()
		if k == kQ4Min {
			b = halfToF32(Mem{Base: w, Disp: scOff + 32 + 2*I.lanes*h})
		} else if k == kQ8 {
			VMULPS(bcast(cNeg128), d, b)
		} else {
			VMULPS(bcast(cNeg8), d, b)
		}
		for l := 0; l < nLines(k); l++ {
			line := I.vec()
			loadInt(Mem{Base: w, Disp: lineBytes*l + hb*h}, line)
			for f := 0; f < 32/bits; f++ {
				kk, shift := quantField(k, l, f)
				v := I.vec()
				extract(line, mask, shift, bits, v)
				VFMADD213PS(b, d, v) // v = d·v + b
				VMOVUPS(v, Mem{Base: dst, Disp: 64*kk + hb*h})
			}
		}
	}
	ADDQ(U32(groupBytes(k)), w)
	ADDQ(U32(64*groupK), dst)
	DECQ(n)
	JNZ(LabelRef(name + "_group"))
	VZEROUPPER()
	RET()
}

// widenQ36 is widen's loop for Q3 and Q6: each field masked, shifted
// down and converted, then d·u − z·d.
func widenQ36(name string, k kind, dst, w, n Register) {
	halves := 16 / I.lanes
	hb := 4 * I.lanes
	neg := cNeg4
	if k == kQ6 {
		neg = cNeg32
	}
	Label(name + "_group")
	for h := 0; h < halves; h++ {
		d := halfToF32(Mem{Base: w, Disp: nLines(k)*lineBytes + 2*I.lanes*h})
		b := I.vec()
		VMULPS(bcast(neg), d, b)
		eachField(k, w, []int{hb * h}, func(f field, srcs []VecVirtual) {
			v, src := I.vec(), srcs[0]
			if f.top() {
				VPSRLD(U8(f.shift()), src, v)
			} else {
				andConst(f.mask, src, v)
				if f.shift() > 0 {
					VPSRLD(U8(f.shift()), v, v)
				}
			}
			VCVTDQ2PS(v, v)
			VFMADD213PS(b, d, v) // v = d·v + b
			VMOVUPS(v, Mem{Base: dst, Disp: 64*f.k + hb*h})
		})
	}
	ADDQ(U32(groupBytes(k)), w)
	ADDQ(U32(64*groupK), dst)
	DECQ(n)
	JNZ(LabelRef(name + "_group"))
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
	constants()
	for _, k := range []kind{kF32, kBF16} {
		for mr := 1; mr <= I.gemvMR[k]; mr++ {
			gemvDense(k, mr)
		}
	}
	for _, k := range []kind{kQ8, kQ4, kQ4Min} {
		for mr := 1; mr <= I.gemvMR[k]; mr++ {
			gemvQuant(k, mr)
		}
	}
	for _, k := range []kind{kQ3, kQ6} {
		for mr := 1; mr <= I.gemvMR[k]; mr++ {
			gemvQ36(k, mr, 1)
		}
		if I.lanes == 8 {
			gemvQ36(k, 1, 2)
		}
	}
	for np := 1; np <= I.gemmNP; np++ {
		for mr := 1; mr <= I.gemmMR; mr++ {
			gemmKernel(mr, np)
		}
	}
	for _, k := range []kind{kBF16, kQ8, kQ4, kQ4Min, kQ3, kQ6} {
		widen(k)
	}
	Generate()
}
