package main

// -isa avx512bf16: the BF16 twins of the AVX-512 kernels, over BF16 rows
// (row stride 2·576 bytes) and BF16 queries.
//
// Scores: the same 4 heads × 4 tokens tile as avx512, with VDPBF16PS
// (32 BF16 products per instruction, f32 accumulation). VDPBF16PS is
// BYTE-encoded (internal/x86), so every vector register there is
// physical: accumulators Z0…Z15, keys Z16…Z19, queries Z20…Z23, scale Z24,
// reduction temporaries Z25…Z30.
//
// Latent accumulation: BF16 → f32 widening by VPUNPCKLWD/VPUNPCKHWD with a
// zero register (dword i = 0 | bf16 << 16, exact): one shuffle (port 5)
// per 16 values, where VPMOVZXWD + VPSLLD 16 costs a shuffle and a shift
// (port 0, which the FMAs also need). The unpacks work within 128-bit
// lanes, so the 32 values of one 64-byte line come out as
// lo = {0–3, 8–11, 16–19, 24–27}, hi = {4–7, 12–15, 20–23, 28–31}; the
// accumulators keep that order, and z is permuted into it (VPERMT2PS) when
// loaded and back when stored, once per key block, not per token.
//
// Conversion: f32 rows (an f32 or dequantised q8 cache, the queries) to
// BF16 with VCVTNE2PS2BF16 (round to nearest even), also BYTE-encoded.

import (
	"fmt"

	"github.com/ktune/ktune/_asm/internal/x86"
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

var zmmP = []VecPhysical{Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15,
	Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23, Z24, Z25, Z26, Z27, Z28, Z29, Z30, Z31}

// scoresBF16 generates mlaScoresAVX512BF16_576: scores' 4×4 tile with
// VDPBF16PS over BF16 rows, on physical registers.
func scoresBF16() {
	name := fmt.Sprintf("mlaScores%s_%d", I.suffix, W)
	TEXT(name, NOSPLIT, "func(q, k *uint16, s *float32, lds, nh, nk int, scale float32)")
	Doc(
		name+" computes scaled dot products of nh BF16 query rows with nk",
		fmt.Sprintf("BF16 key rows, both of stride %d (nh and nk multiples of 4), by VDPBF16PS:", W),
		"",
		fmt.Sprintf("\tfor h < nh, j < nk: s[h*lds+j] = scale * Σ_{d<%d} bf16(q[h*%d+d])*bf16(k[j*%d+d])", W, W, W),
		"",
		"(products exact in f32, summed in f32 pairwise per lane, then across lanes).",
	)
	l := loadScoreArgs()
	sc, err := Param("scale").Resolve()
	if err != nil {
		panic(err)
	}
	scale := Z24
	VBROADCASTSS(sc.Addr, scale)
	const rb = 2 * W         // row bytes
	var acc [4][]VecPhysical // heads × tokens: Z(4a+b)
	kv, qv := zmmP[16:20], zmmP[20:24]
	l.emit(rb, 4, 64, func() {
		for a := range acc {
			acc[a] = zmmP[4*a : 4*a+4]
			for _, r := range acc[a] {
				VPXORD(r, r, r)
			}
		}
	}, func(kp, d Register) {
		for b := range kv {
			VMOVDQU32(Mem{Base: kp, Index: d, Scale: 1, Disp: b * rb}, kv[b])
		}
		for a := 0; a < 4; a++ {
			VMOVDQU32(Mem{Base: l.q, Index: d, Scale: 1, Disp: a * rb}, qv[a])
			for b := range kv {
				x86.VDPBF16PSZ(qv[a], kv[b], acc[a][b])
			}
		}
	}, func(out, j Register) {
		reduce4x4P(acc, scale.AsX(), out, j, l.lds)
	})
}

// reduce4x4P is reduce4x4 on physical registers (temporaries Z25…Z30).
func reduce4x4P(acc [4][]VecPhysical, scx, out, j, lds Register) {
	for a := 0; a < 4; a++ {
		var x [4]Register
		for b := 0; b < 4; b++ {
			hi := Y25
			VEXTRACTF64X4(U8(1), acc[a][b], hi)
			lo := acc[a][b].AsY()
			VADDPS(hi, lo, lo)
			hx := X26
			VEXTRACTF32X4(U8(1), lo, hx)
			xx := acc[a][b].AsX()
			VADDPS(hx, xx, xx)
			x[b] = xx
		}
		t0, t1, t2, t3 := X27, X28, X29, X30
		VUNPCKLPS(x[1], x[0], t0)
		VUNPCKHPS(x[1], x[0], t1)
		VADDPS(t1, t0, t0)
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

// permTables: VPERMT2PS indices between natural z order (A = values 0–15,
// B = 16–31 of a 32-value group) and unpack order (lo, hi).
func permTables() Mem {
	t := GLOBL("mlabf16perm", RODATA|NOPTR)
	var idx [4][16]uint32
	for i := 0; i < 16; i++ {
		lane, k := i/4, i%4
		idx[0][i] = uint32(8*lane + k)     // lo ← (A, B)
		idx[1][i] = uint32(8*lane + 4 + k) // hi ← (A, B)
		// A ← (lo, hi): value i = 8·(i/8) + 4·half + k
		v := i
		idx[2][i] = natural(v)
		idx[3][i] = natural(16 + v)
	}
	for n := range idx {
		for i, x := range idx[n] {
			DATA(64*n+4*i, U32(x))
		}
	}
	return t
}

// natural gives, for natural value v (< 32) of a group, its place in the
// concatenation (lo, hi) of the unpack order: lo holds values with bit 2
// clear, hi those with bit 2 set, 4 per 128-bit lane.
func natural(v int) uint32 {
	lane, k := v/8, v%4
	if v&4 == 0 {
		return uint32(4*lane + k)
	}
	return uint32(16 + 4*lane + k)
}

// accumBF16 generates mlaAccumAVX512BF16_576: accum over BF16 value rows
// widened by unpacks, the accumulators in unpack order (z permuted into
// it when loaded and back when stored).
func accumBF16() {
	name := fmt.Sprintf("mlaAccum%s_%d", I.suffix, W)
	TEXT(name, NOSPLIT, "func(z, pt *float32, v *uint16, corr *float32, nh, nk, ldpt int)")
	Doc(
		name+" rescales and accumulates nh latent outputs z (stride "+fmt.Sprint(R)+", nh a",
		fmt.Sprintf("multiple of 4) from nk BF16 value rows v (stride %d), widened exactly to", W),
		"f32, with the probabilities transposed, pt[j*ldpt+h]:",
		"",
		fmt.Sprintf("\tfor h < nh, d < %d: z[h*%d+d] = corr[h]*z[h*%d+d] + Σ_{j<nk} pt[j*ldpt+h]*bf16(v[j*%d+d])", R, R, R, W),
	)
	perm := permTables()
	l := loadAccumArgs()
	l.d, l.vp, l.pp, l.j = GP64(), GP64(), GP64(), GP64()
	tb := GP64()
	LEAQ(perm, tb)
	zero := ZMM()
	VPXORD(zero, zero, zero)
	// 4 heads × 64 latent values: BF16 bytes dv..dv+128, f32 bytes 2·dv...
	zat := func(a, off int) Mem { return Mem{Base: l.z, Index: l.d, Scale: 2, Disp: 4*R*a + off} }
	var acc [4][]VecVirtual // per head: lo(0–31), hi(0–31), lo(32–63), hi(32–63)
	l.emit(2*W, U8(128), 2*R, func() {
		for a := 0; a < 4; a++ {
			acc[a] = loadZ(l.corr, tb, a, zat)
		}
	}, func() {
		var wv [4]VecVirtual
		for g := 0; g < 2; g++ {
			line := Mem{Base: l.vp, Index: l.d, Scale: 1, Disp: 64 * g}
			wv[2*g], wv[2*g+1] = ZMM(), ZMM()
			VPUNPCKLWD(line, zero, wv[2*g])
			VPUNPCKHWD(line, zero, wv[2*g+1])
		}
		accumToken(l.pp, wv[:], acc)
	}, func() {
		for a := 0; a < 4; a++ {
			storeZ(tb, acc[a], a, zat)
		}
	})
}

// loadZ returns head a's accumulators: its 64 values of z (at zat) times
// corr[a], permuted into unpack order (lo, hi of each 32) by the tables
// at tb.
func loadZ(corr, tb Register, a int, zat func(a, off int) Mem) []VecVirtual {
	acc := make([]VecVirtual, 4)
	c := ZMM()
	VBROADCASTSS(Mem{Base: corr, Disp: 4 * a}, c)
	for g := 0; g < 2; g++ {
		for h := 0; h < 2; h++ {
			r, ix := ZMM(), ZMM()
			VMOVDQU32(Mem{Base: tb, Disp: 64 * h}, ix)
			VMOVUPS(zat(a, 128*g), r)
			VPERMT2PS(zat(a, 128*g+64), ix, r)
			VMULPS(c, r, r)
			acc[2*g+h] = r
		}
	}
	return acc
}

// storeZ permutes head a's accumulators back to natural order and stores
// them to z (at zat).
func storeZ(tb Register, acc []VecVirtual, a int, zat func(a, off int) Mem) {
	for g := 0; g < 2; g++ {
		lo, hi := acc[2*g], acc[2*g+1]
		ia, ib, t := ZMM(), ZMM(), ZMM()
		VMOVDQU32(Mem{Base: tb, Disp: 128}, ia)
		VMOVDQU32(Mem{Base: tb, Disp: 192}, ib)
		VMOVAPS(lo, t)
		VPERMT2PS(hi, ia, t)
		VPERMT2PS(hi, ib, lo)
		VMOVUPS(t, zat(a, 128*g))
		VMOVUPS(lo, zat(a, 128*g+64))
	}
}

func toBF16() {
	name := "mlaToBF16" + I.suffix
	TEXT(name, NOSPLIT, "func(dst *uint16, src *float32, n int)")
	Doc(
		name+" rounds n f32 values (n a multiple of 32) to BF16, nearest even,",
		"by VCVTNE2PS2BF16:",
		"",
		"\tfor i < n: dst[i] = bf16(src[i])",
	)
	dst := Load(Param("dst"), GP64())
	src := Load(Param("src"), GP64())
	n := Load(Param("n"), GP64())
	Label("cv_loop")
	CMPQ(n, U8(0))
	JE(LabelRef("cv_done"))
	VMOVUPS(Mem{Base: src}, Z0)
	VMOVUPS(Mem{Base: src, Disp: 64}, Z1)
	x86.VCVTNE2PS2BF16Z(Z0, Z1, Z2)
	VMOVDQU32(Z2, Mem{Base: dst})
	ADDQ(U8(128), src)
	ADDQ(U8(64), dst)
	SUBQ(U8(32), n)
	JMP(LabelRef("cv_loop"))
	Label("cv_done")
	VZEROUPPER()
	RET()
}
