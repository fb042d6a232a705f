//go:build arm64 && gc && !purego

// arm64 stubs, driver and registration of the hand-written NEON and SVE
// BF16 kernels (gemm_bf16_arm64.s, gemm_bf16_sve_arm64.s): class bf16act,
// the twins of amd64's avx512_bf16. The activations are rounded to BF16
// in Go (toBF16Row, nearest even, as on amd64); BFDOT by element
// multiplies a whole panel line (16 rows × one k pair: four 8H registers)
// by one activation pair. Same regimes as avx512_bf16: one tile of ≤ 4
// rows streams the worker's panels once (GEMV); larger M runs blocks of
// nb panels × balanced row tiles of ≤ 4 rows. sve_bf16 covers a panel
// line with 2 vectors at 256…384 bits and 1 from 512 bits on
// (predicated), and runs the NEON kernels at 128 bits, where the
// registers are the same.
//
// Arithmetic: every BF16×BF16 product is exact in f32; BFDOT (FEAT_BF16
// without FEAT_EBF16, or FPCR.EBF = 0 as Go leaves it; NEON and SVE alike)
// adds the two products of a pair and then the accumulator with
// round-to-odd instead of IEEE nearest-even, flushing denormal inputs and
// results to zero. That is < 1 f32 ulp per addition where the class's
// error budget is the activations' BF16 rounding (2⁻⁹ relative), far
// inside kernel.TolBF16Act; the exact-integer tests (TestBF16Exact,
// TestBF16KernelsARM64) hold bit-for-bit since nothing rounds there.
// BFMMLA would need the panel lines regrouped as 2 rows × 4 k (the
// packing is 16 rows × 2 k), so it is not used.
//
// sve_bf16 requires SVE + BF16: the architecture requires SVE's BF16
// support (ID_AA64ZFR0_EL1.BF16, Linux's HWCAP2_SVEBF16) to equal
// AdvSIMD's (ID_AA64ISAR1_EL1.BF16, the bf16 feature), so no separate
// feature is detected. Performance is unmeasured: qemu gives correctness
// only.
package gemm

import (
	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/kernel"
)

// bf16NEON_4x16 computes 4 BF16 activation rows (pairs at xb, rows ldx
// bytes apart) against np consecutive BF16 panels at w (npairs lines of
// 16 rows × 2 k each):
//
//	for p < np, r < 4, i < 16:
//		t := Σ_{j<2·npairs} float32(W[p,i,j])·float32(x[r,j])  // BFDOT by element
//		y[r·ldy+16p+i] = t  // or += when acc ≠ 0
//
// bf16NEON_1x16, _2x16 and _3x16 are the same for 1, 2 and 3 rows.
//
//go:noescape
func bf16NEON_4x16(w *byte, np, npairs int, xb *uint16, ldx int, y *float32, ldy int, acc int)

//go:noescape
func bf16NEON_3x16(w *byte, np, npairs int, xb *uint16, ldx int, y *float32, ldy int, acc int)

//go:noescape
func bf16NEON_2x16(w *byte, np, npairs int, xb *uint16, ldx int, y *float32, ldy int, acc int)

//go:noescape
func bf16NEON_1x16(w *byte, np, npairs int, xb *uint16, ldx int, y *float32, ldy int, acc int)

// bf16SVE2_Mx16 (M = 1…4) is bf16NEON_Mx16 in SVE for vector lengths of
// 256 and 384 bits (2 predicated vectors per panel line), bf16SVE1_Mx16
// for 512 bits and more (1 predicated vector per line).
//
//go:noescape
func bf16SVE2_1x16(w *byte, np, npairs int, xb *uint16, ldx int, y *float32, ldy int, acc int)

//go:noescape
func bf16SVE2_2x16(w *byte, np, npairs int, xb *uint16, ldx int, y *float32, ldy int, acc int)

//go:noescape
func bf16SVE2_3x16(w *byte, np, npairs int, xb *uint16, ldx int, y *float32, ldy int, acc int)

//go:noescape
func bf16SVE2_4x16(w *byte, np, npairs int, xb *uint16, ldx int, y *float32, ldy int, acc int)

//go:noescape
func bf16SVE1_1x16(w *byte, np, npairs int, xb *uint16, ldx int, y *float32, ldy int, acc int)

//go:noescape
func bf16SVE1_2x16(w *byte, np, npairs int, xb *uint16, ldx int, y *float32, ldy int, acc int)

//go:noescape
func bf16SVE1_3x16(w *byte, np, npairs int, xb *uint16, ldx int, y *float32, ldy int, acc int)

//go:noescape
func bf16SVE1_4x16(w *byte, np, npairs int, xb *uint16, ldx int, y *float32, ldy int, acc int)

type bf16Fn func(w *byte, np, npairs int, xb *uint16, ldx int, y *float32, ldy int, acc int)

// bf16NEON[M] is the kernel for M rows.
var bf16NEON = []bf16Fn{nil, bf16NEON_1x16, bf16NEON_2x16, bf16NEON_3x16, bf16NEON_4x16}

var (
	bf16SVE2 = []bf16Fn{nil, bf16SVE2_1x16, bf16SVE2_2x16, bf16SVE2_3x16, bf16SVE2_4x16}
	bf16SVE1 = []bf16Fn{nil, bf16SVE1_1x16, bf16SVE1_2x16, bf16SVE1_3x16, bf16SVE1_4x16}
)

// bf16SVE returns sve_bf16's kernels for vector length bits.
func bf16SVE(bits int) []bf16Fn {
	switch {
	case bits >= 512:
		return bf16SVE1
	case bits >= 256:
		return bf16SVE2
	}
	return bf16NEON
}

func init() {
	// Class bf16act (opt-in). Priorities below sve, as amd64's avx512_bf16
	// sits below avx512: where bf16act is allowed the widest f32 variant
	// stays the default and the tuner decides.
	register(allOps, kernel.Variant{Name: "neon_bf16", Priority: 22, Class: kernel.ClassBF16Act,
		Doc:    "hand-written NEON BF16 (FEAT_BF16): BF16 activations, BFDOT by element (WORD-encoded) over the panel lines, 4×16 tiles",
		DTypes: []kernel.DType{kernel.BF16}, Requires: cpu.NewSet(cpu.ASIMD, cpu.BF16), Threaded: true,
		Params: []kernel.Param{grainParam, armNB}},
		&impl{act: actBF16, panels: bf16Panels(bf16NEON), grain: 4})
	register(allOps, kernel.Variant{Name: "sve_bf16", Priority: 24, Class: kernel.ClassBF16Act,
		Doc:    "hand-written SVE BF16 (vector-length agnostic; NEON kernels at 128 bits): BF16 activations replicated per segment (LD1RQH), BFDOT by element over the panel lines, 4×16 tiles",
		DTypes: []kernel.DType{kernel.BF16}, Requires: cpu.NewSet(cpu.SVE, cpu.BF16), Threaded: true,
		Params: []kernel.Param{grainParam, armNB}},
		&impl{act: actBF16, panels: bf16Panels(bf16SVE(cpu.Get().SVEBits)), grain: 4})
}

// bf16Panels is the panelFn over row kernels tab[1…mr]: with one row
// tile, every panel once; else blocks of nb panels, each block against
// every (balanced) row tile.
func bf16Panels(tab []bf16Fn) panelFn {
	mr := len(tab) - 1
	return func(a *args, p0, p1, worker int, prm kernel.Values) {
		npairs := a.kp / 2
		tiles := (a.m + mr - 1) / mr
		nb := prm["nb"]
		if tiles == 1 || nb < 1 {
			nb = p1 - p0
		}
		pb := a.w.PanelBytes()
		acc := btoi(a.acc)
		for b0 := p0; b0 < p1; b0 += nb {
			b1 := min(b0+nb, p1)
			for t := 0; t < tiles; t++ {
				r0, r1 := t*a.m/tiles, (t+1)*a.m/tiles
				tab[r1-r0](&a.w.Data[b0*pb], b1-b0, npairs, &a.xb[r0*a.kp], 2*a.kp,
					&a.y[r0*a.ldy+b0*pr-a.ycol], a.ldy, acc)
			}
		}
	}
}
