//go:build arm64 && gc && !purego

// arm64 stubs, drivers and registration of the hand-written NEON and SVE
// variants:
//
//	neon          f32 activations; weights widened to an f32 block in Go
//	              (F32 read in place), mr×16 FMLA register tiles (mr ≤ 4)
//	neon_dotprod  int8 activations (quantizeRow, as generic_int8); SDOT by
//	              element against the panel lines, f32 flush per group;
//	              Q8, Q4, Q3, Q6, Q2, Q5 and the K formats Q3K…Q6K
//	sve           as neon with a vector-length-agnostic tile (WHILELO tails)
//	sve_dotprod   as neon_dotprod with SVE's own SDOT (base SVE: runs where
//	              the NEON dot product does not, e.g. A64FX); Q8, Q4, Q3, Q6,
//	              Q2, Q5, Q3K…Q6K
//
// The bf16act variants neon_bf16 and sve_bf16 (BFDOT) are in
// gemm_bf16_arm64.go.
//
// The integer kernels make the weights signed before SDOT (signed × signed):
// Q8 u XOR 0x80 = u−128 = q; Q4 nibble − 8 (Q4 with a min keeps the
// nibble and adds m·Σxq). Q3 and Q6 take the stored u ≥ 0 as it is and
// subtract z·Σxq (z = 4, 32) from the group's integer sum, as the AVX-512
// VNNI kernels do; the NEON decode per 16-byte vector (4 rows × 4 k) is
//
//	Q3: k-quads 0, 2, 4: L & 7; 1, 3, 5: L & 0x38 (= 8u, summed apart and
//	    added >> 3: SSRA); 6: ((L2 << 1) SRI 1 L0) >> 5; 7: (L2 >> 5) SRI 6 L1
//	Q6: k-quads 0…5: L & 63; 6 (7): ((L2 >> 2) SRI 4 L1) SRI 6 L0 (L5, L4, L3)
//
// (SRI n: shift right by n and insert, keeping the destination's top n
// bits). Base SVE has no SRI: its Q3/Q6 kernels combine the split k-quads
// with LSR, AND and ORR (Q3 quad 6: (L0 >> 6) | ((L2 >> 4) & 4); Q6 quad
// 6: (L0 >> 6) | ((L1 >> 4) & 12) | ((L2 >> 2) & 48)), and go through a
// group one vector-sized chunk (all its lines) at a time. Q2 takes the
// stored u ∈ [0, 3] as it is: k-quads 4c+0 and 4c+3 of line c as L & 3
// and L >> 6, 4c+1 and 4c+2 as L & 12 and (L >> 2) & 12 (= 4u, summed
// apart in accumulators that start at Σxq), so the group's integer is
// 4·Σu·xq − (c−1)·Σxq (c the scale word's offset code, subtracted as
// c·Σxq by a multiply-subtract) and the conversion divides it by 4
// (NEON: SCVTF with two fraction bits; SVE: the activation scale times
// 0.25). Q5 decodes its nibbles as Q4 (line c: k-quad 2c as L & 15,
// 2c+1 as L >> 4) and ORs in each k-quad h's fifth bits from line 4 as
// (L4 << (4−h)) & 16, L4 & 16 or (L4 >> (h−4)) & 16 (byte-lane shifts:
// NEON SHL/USHR, SVE LSL/LSR), takes the stored u ∈ [0, 31] as it is and
// subtracts 16·Σxq per group. The K formats (quant/kquant.go) decode
// their groups' value lines as Q3, Q4, Q5 and Q6 do (the same
// instructions) and take the stored u as it is (no zero point); per
// super-block the kernels read the 256-byte header, per group its 16
// scale codes (byte & 63) and min codes (byte >> 6 | the header's
// nibble << 2: NEON SHL/USHR/SRI on the byte lanes, SVE LD1B widened to
// 32-bit lanes, LSR/LSL/AND/ORR), convert them, multiply by the widened
// f16 d and dm (s = d·sc, m = dm·mc), and fold
// t += s·(xs·float(Σu·xq)) − m·(xs·float(Σxq)) with FMLA and FMLS. The f32 class widens BF16/Q8/Q4 through the generic widen:
// correct everywhere, not yet fast for quantized weights.
// Performance is unmeasured: qemu gives correctness only.
package gemm

import (
	"unsafe"

	"github.com/ktune/ktune/internal/scratch"

	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
)

// gemmNEON_4x16 computes 4 rows of a register tile over k:
//
//	for r < 4, i < 16:
//		t := 0 // or c[r·ldc+i] when acc ≠ 0
//		for j < k: t += a[r·lda+j]·b[16j+i]   // b: f32 [k][16]
//		c[r·ldc+i] = t
//
// gemmNEON_1x16, _2x16 and _3x16 are the same for 1, 2 and 3 rows.
//
//go:noescape
func gemmNEON_4x16(k int, a *float32, lda int, b *byte, c *float32, ldc int, acc int)

//go:noescape
func gemmNEON_3x16(k int, a *float32, lda int, b *byte, c *float32, ldc int, acc int)

//go:noescape
func gemmNEON_2x16(k int, a *float32, lda int, b *byte, c *float32, ldc int, acc int)

//go:noescape
func gemmNEON_1x16(k int, a *float32, lda int, b *byte, c *float32, ldc int, acc int)

// gemmSVE_16 is gemmNEON_*x16 for m rows (m ≥ 1), vector-length agnostic.
//
//go:noescape
func gemmSVE_16(m, k int, a *float32, lda int, b *byte, c *float32, ldc int, acc int)

// dotQ8NEON_1x16 computes one int8 activation row against np consecutive
// Q8 panels of ng groups at w:
//
//	for p < np, i < 16:
//		t := 0
//		for g < ng:
//			t += d[p,g,i]·(xs[g]·float32(Σ_{j<32} int32(u[p,g,i,j]−128)·int32(xq[32g+j])))
//		y[16p+i] = t  // or += when acc ≠ 0
//
// with xs the activations' group scales. dotQ4NEON_1x16 is the same over
// Q4 panels with (nibble − 8), and dotQ4MinNEON_1x16 with the nibble
// itself plus t += mn[p,g,i]·(xs[g]·float32(sums[g])),
// sums[g] = Σ_{j<32} xq[32g+j]. The SVE kernels compute the same.
//
//go:noescape
func dotQ8NEON_1x16(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)

//go:noescape
func dotQ4NEON_1x16(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)

//go:noescape
func dotQ4MinNEON_1x16(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)

// dotQ3NEON_1x16 is dotQ8NEON_1x16 over Q3 panels (quant/q3.go) with
// (u − 4) for the stored 3-bit u, and dotQ6NEON_1x16 over Q6 panels with
// (u − 32) for the stored 6-bit u. Both take Σ u·xq with SDOT (u ≥ 0 fits
// a signed byte) and subtract z·sums[g] per group:
//
//	t += d[p,g,i]·(xs[g]·float32(Σ_{j<32} int32(u[p,g,i,j])·int32(xq[32g+j]) − z·sums[g]))
//
//go:noescape
func dotQ3NEON_1x16(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)

//go:noescape
func dotQ6NEON_1x16(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)

// dotQ2NEON_1x16 is dotQ8NEON_1x16 over Q2 panels (quant/q2.go): the
// stored 2-bit u as it is and, per row and group, the scale word h's
// scale d = f16(h &^ 15) and offset t = (c−1)/4, c = h & 15:
//
//	t += d[p,g,i]·(xs[g]·float32(Σ_{j<32} int32(u[p,g,i,j])·int32(xq[32g+j]) − (c[p,g,i]−1)/4·sums[g]))
//
// (the kernels form the integer 4·Σu·xq − (c−1)·sums[g] and divide it by
// 4 in the conversion). dotQ2SVE_16 computes the same.
//
//go:noescape
func dotQ2NEON_1x16(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)

// dotQ5NEON_1x16 is dotQ3NEON_1x16 over Q5 panels (quant/q5.go): the
// stored 5-bit u (Q4's nibble plus the fifth bit of line 4) and z = 16.
// dotQ5SVE_16 computes the same.
//
//go:noescape
func dotQ5NEON_1x16(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)

//go:noescape
func dotQ8SVE_16(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)

//go:noescape
func dotQ4SVE_16(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)

//go:noescape
func dotQ4MinSVE_16(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)

//go:noescape
func dotQ3SVE_16(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)

//go:noescape
func dotQ6SVE_16(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)

//go:noescape
func dotQ2SVE_16(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)

//go:noescape
func dotQ5SVE_16(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)

// dotQ4KNEON_1x16 is dotQ8NEON_1x16 over Q4K panels (quant/kquant.go):
// the stored u ∈ [0, 15] (Q4's nibbles) as it is, ng a multiple of 8
// (whole super-blocks: a 256-byte header, then 8 groups' value lines),
// and per row and group the scale s = d·sc and min m = dm·mc (each one
// f32 multiply, quant.KScaleMin) from the super-block header:
//
//	t += s[p,g,i]·(xs[g]·float32(Σ_{j<32} int32(u[p,g,i,j])·int32(xq[32g+j]))) − m[p,g,i]·(xs[g]·float32(sums[g]))
//
// (panelsGenericInt8K's rule; the kernels fuse both into t). The Q3K,
// Q5K and Q6K kernels are the same over Q3's, Q5's and Q6's value lines,
// decoded as the Q3, Q5 and Q6 kernels do; the SVE kernels compute the
// same.
//
//go:noescape
func dotQ4KNEON_1x16(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)

//go:noescape
func dotQ3KNEON_1x16(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)

//go:noescape
func dotQ5KNEON_1x16(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)

//go:noescape
func dotQ6KNEON_1x16(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)

//go:noescape
func dotQ3KSVE_16(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)

//go:noescape
func dotQ4KSVE_16(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)

//go:noescape
func dotQ5KSVE_16(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)

//go:noescape
func dotQ6KSVE_16(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// tileFn runs the f32 register tile for m rows (1 ≤ m ≤ the variant's mr).
type tileFn func(m, k int, a *float32, lda int, b *byte, c *float32, ldc int, acc int)

var neonTiles = [4]func(k int, a *float32, lda int, b *byte, c *float32, ldc int, acc int){
	gemmNEON_1x16, gemmNEON_2x16, gemmNEON_3x16, gemmNEON_4x16}

func neonTile(m, k int, a *float32, lda int, b *byte, c *float32, ldc int, acc int) {
	neonTiles[m-1](k, a, lda, b, c, ldc, acc)
}

// armKB is the K block widened to f32 at a time (a multiple of the Q8/Q4
// group and of the BF16 pair): 256 k × 16 rows = 16 KiB, kept in L1.
const armKB = 256

var armTilePool scratch.Keep[*[armKB * pr]float32]

// tilePanels is the panelFn of an f32-class arm64 variant: for each panel
// and K block, the weights as an f32 [kb][16] block (F32 in place, the
// other formats widened), then the register tile over row tiles of mr.
func tilePanels(tile tileFn, mr int) panelFn {
	return func(a *args, p0, p1, worker int, _ kernel.Values) {
		buf := armTilePool.GetOr(func() *[armKB * pr]float32 { return new([armKB * pr]float32) })
		defer armTilePool.Put(buf)
		for p := p0; p < p1; p++ {
			panel := a.w.Panel(p)
			for k0 := 0; k0 < a.kp; k0 += armKB {
				n := min(armKB, a.kp-k0)
				var b *byte
				if a.w.DType == kernel.F32 {
					b = &panel[4*pr*k0]
				} else {
					for g := 0; g < n; g += quant.GroupK {
						widen(a.w, panel, k0+g, min(quant.GroupK, n-g), buf[g*pr:])
					}
					b = (*byte)(unsafe.Pointer(&buf[0]))
				}
				acc := btoi(a.acc || k0 > 0)
				for r0 := 0; r0 < a.m; r0 += mr {
					tile(min(mr, a.m-r0), n, &a.x[r0*a.kp+k0], a.kp, b, &a.y[r0*a.ldy+p*pr-a.ycol], a.ldy, acc)
				}
			}
		}
	}
}

// dotFn is one int8 kernel (see dotQ8NEON_1x16).
type dotFn func(w *byte, np, ng int, xq *int8, sums *int32, xs *float32, y *float32, acc int)

// dotKernels are an int8 variant's kernels per weight kind; nil where the
// variant does not serve it (its DTypes do not list it).
type dotKernels struct{ q8, q4, q4Min, q3, q6, q2, q5, q3k, q4k, q5k, q6k dotFn }

// dotPanels is the panelFn over a kernel per weight kind (Q8, Q4, Q4 with
// a min, Q3, Q6, Q2, Q5, the K formats): blocks of nb panels (kept in cache), every row against a
// block.
func dotPanels(tab dotKernels) panelFn {
	return func(a *args, p0, p1, worker int, prm kernel.Values) {
		fn := tab.q8
		switch {
		case a.w.DType == kernel.Q4 && a.w.HasMin:
			fn = tab.q4Min
		case a.w.DType == kernel.Q4:
			fn = tab.q4
		case a.w.DType == kernel.Q3:
			fn = tab.q3
		case a.w.DType == kernel.Q6:
			fn = tab.q6
		case a.w.DType == kernel.Q2:
			fn = tab.q2
		case a.w.DType == kernel.Q5:
			fn = tab.q5
		case a.w.DType == kernel.Q3K:
			fn = tab.q3k
		case a.w.DType == kernel.Q4K:
			fn = tab.q4k
		case a.w.DType == kernel.Q5K:
			fn = tab.q5k
		case a.w.DType == kernel.Q6K:
			fn = tab.q6k
		}
		ng := a.kp / quant.GroupK
		nb := prm["nb"]
		if a.m == 1 || nb < 1 {
			nb = p1 - p0
		}
		pb := a.w.PanelBytes()
		acc := btoi(a.acc)
		for b0 := p0; b0 < p1; b0 += nb {
			b1 := min(b0+nb, p1)
			for r := 0; r < a.m; r++ {
				fn(&a.w.Data[b0*pb], b1-b0, ng, &a.xq[r*a.kp], &a.xsum[r*ng], &a.xs[r*ng], &a.y[r*a.ldy+b0*pr-a.ycol], acc)
			}
		}
	}
}

// armNB: panels per block when several activation rows reuse them.
var armNB = kernel.Param{Name: "nb", Doc: "panels per cache block when M > 1", Values: []int{1, 4, 16, 64}, Default: 16}

var (
	neonReq = cpu.NewSet(cpu.ASIMD)
	dotReq  = cpu.NewSet(cpu.ASIMD, cpu.ASIMDDP)
	sveReq  = cpu.NewSet(cpu.SVE)
)

func init() {
	register(allOps, kernel.Variant{Name: "neon", Priority: 20,
		Doc:    "hand-written NEON: 4×16 FMLA register tiles over f32 blocks of the weights (widened in Go)",
		DTypes: weightDTypes, Requires: neonReq, Threaded: true, Params: []kernel.Param{grainParam}},
		&impl{act: actF32, panels: tilePanels(neonTile, 4), grain: 4})
	register(allOps, kernel.Variant{Name: "sve", Priority: 25,
		Doc:    "hand-written SVE (vector-length agnostic): predicated 16-column tiles over f32 blocks of the weights",
		DTypes: weightDTypes, Requires: sveReq, Threaded: true, Params: []kernel.Param{grainParam}},
		&impl{act: actF32, panels: tilePanels(gemmSVE_16, 1<<30), grain: 4})
	register(allOps, kernel.Variant{Name: "neon_dotprod", Priority: 40, Class: kernel.ClassInt8Act,
		Doc: "hand-written NEON SDOT (asimddp): int8 activations against the Q8/Q4/Q3/Q6/Q2/Q5 and K-format panel lines, f32 flush per group",
		DTypes: []kernel.DType{kernel.Q8, kernel.Q4, kernel.Q3, kernel.Q6, kernel.Q2, kernel.Q5,
			kernel.Q3K, kernel.Q4K, kernel.Q5K, kernel.Q6K}, Requires: dotReq, Threaded: true,
		Params: []kernel.Param{grainParam, armNB}},
		&impl{act: actInt8, panels: dotPanels(dotKernels{q8: dotQ8NEON_1x16, q4: dotQ4NEON_1x16, q4Min: dotQ4MinNEON_1x16,
			q3: dotQ3NEON_1x16, q6: dotQ6NEON_1x16, q2: dotQ2NEON_1x16, q5: dotQ5NEON_1x16,
			q3k: dotQ3KNEON_1x16, q4k: dotQ4KNEON_1x16, q5k: dotQ5KNEON_1x16, q6k: dotQ6KNEON_1x16}), grain: 4})
	register(allOps, kernel.Variant{Name: "sve_dotprod", Priority: 45, Class: kernel.ClassInt8Act,
		Doc: "hand-written SVE SDOT (vector-length agnostic): int8 activations against the Q8/Q4/Q3/Q6/Q2/Q5 and K-format panel lines",
		DTypes: []kernel.DType{kernel.Q8, kernel.Q4, kernel.Q3, kernel.Q6, kernel.Q2, kernel.Q5,
			kernel.Q3K, kernel.Q4K, kernel.Q5K, kernel.Q6K}, Requires: sveReq, Threaded: true,
		Params: []kernel.Param{grainParam, armNB}},
		&impl{act: actInt8, panels: dotPanels(dotKernels{q8: dotQ8SVE_16, q4: dotQ4SVE_16, q4Min: dotQ4MinSVE_16,
			q3: dotQ3SVE_16, q6: dotQ6SVE_16, q2: dotQ2SVE_16, q5: dotQ5SVE_16,
			q3k: dotQ3KSVE_16, q4k: dotQ4KSVE_16, q5k: dotQ5KSVE_16, q6k: dotQ6KSVE_16}), grain: 4})
}
