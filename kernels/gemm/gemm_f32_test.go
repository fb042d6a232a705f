package gemm

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/kerneltest"
	"github.com/ktune/ktune/internal/quant"
)

// f32Variants are the f32-class assembly variants: the generated amd64
// ones (gemm_f32_amd64.go) and the hand-written arm64 NEON and SVE ones
// (gemm_arm64.go); where they are not built (purego, other GOARCH) or the
// CPU lacks them the tests skip.
var f32Variants = []string{"avx512", "avx2", "neon", "sve"}

func forEachF32Variant(t *testing.T, op string, fn func(t *testing.T, v *kernel.Variant)) {
	kerneltest.ForEachVariant(t, op, func(t *testing.T, v *kernel.Variant) {
		for _, name := range f32Variants {
			if v.Name == name {
				fn(t, v)
				return
			}
		}
		t.Skip("not a generated f32 variant")
	})
}

// TestF32Edges runs the generated variants over every value of their mr
// and kc parameters at shapes that straddle the register tiles: M = 1…17
// (gemv up to 8, tile tails above), odd K (K tails, kc tails, one group),
// N with an odd number of panels and a partial last panel.
func TestF32Edges(t *testing.T) {
	ms := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 29, 31}
	nks := [][2]int{{16, 1}, {17, 3}, {48, 33}, {80, 97}, {33, 100}, {40, 300}}
	if testing.Short() {
		ms = []int{1, 5, 8, 9, 13, 15, 29}
		nks = [][2]int{{17, 3}, {80, 97}, {40, 300}}
	}
	forEachF32Variant(t, OpGEMM, func(t *testing.T, v *kernel.Variant) {
		for _, dt := range panelFormats(v.DTypes) {
			for _, seed := range []uint64{1, 2} {
				t.Run(fmt.Sprintf("%s/seed=%d", dt, seed), func(t *testing.T) {
					for _, m := range ms {
						for _, nk := range nks {
							s := kernel.MakeShape(shapeKeys, m, nk[0], nk[1])
							want, err := kerneltest.ReferenceOutput(kernel.LookupOp(v.Op), s, dt, seed)
							if err != nil {
								t.Fatal(err)
							}
							for _, vals := range paramSweep(v, m) {
								if _, err := kernel.Verify(v, s, dt, seed, kernel.Config{Threads: 1, Params: vals}, want); err != nil {
									t.Error(err)
								}
							}
						}
					}
				})
			}
		}
	})
}

// paramSweep lists every mr and kc value (grain fixed) for the gemm
// regime; the gemv regime ignores them. A variant without mr and kc (the
// arm64 ones: fixed K block, register tile over the rows) gets every grain.
func paramSweep(v *kernel.Variant, m int) []kernel.Values {
	base := v.DefaultConfig(nil, 1).Params
	if m <= Crossover { // the gemv regime (gemvMaxM on amd64)
		return []kernel.Values{base}
	}
	var out []kernel.Values
	if v.Param("mr") == nil || v.Param("kc") == nil {
		for _, g := range v.Param("grain").Values {
			c := base.Clone()
			c["grain"] = g
			out = append(out, c)
		}
		return out
	}
	for _, mr := range v.Param("mr").Values {
		for _, kc := range v.Param("kc").Values {
			c := base.Clone()
			c["mr"], c["kc"] = mr, kc
			out = append(out, c)
		}
	}
	return out
}

// TestF32Accumulate checks Y += X·Wᵀ in both regimes on guarded,
// misaligned buffers, with 1 and 2 threads and the smallest kc (so K
// spans several blocks, the first written and the rest accumulated).
func TestF32Accumulate(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	forEachF32Variant(t, OpGEMM, func(t *testing.T, v *kernel.Variant) {
		for _, dt := range panelFormats(v.DTypes) {
			for _, sh := range [][3]int{{1, 50, 300}, {8, 33, 64}, {20, 70, 300}, {37, 100, 130}} {
				m, n, k := sh[0], sh[1], sh[2]
				w := make([]float32, n*k)
				kerneltest.FillNormal(r, w, 0, 0.2)
				wm, err := quant.Quantize(dt, w, n, k, dt == kernel.Q4 && m%2 == 0)
				if err != nil {
					t.Fatal(err)
				}
				for threads := 1; threads <= 2; threads++ {
					for _, acc := range []bool{false, true} {
						x, y := kerneltest.NewGuarded(m*k, 1), kerneltest.NewGuarded(m*n, 2)
						kerneltest.FillNormal(r, x.Data(), 0, 1)
						kerneltest.FillNormal(r, y.Data(), 0, 1)
						y0 := append([]float32(nil), y.Data()...)
						want := make([]float32, m*n)
						ref := kernel.Reference(OpGEMM)
						Run(kernel.Choice{Variant: ref, Config: ref.DefaultConfig(nil, 1)}, want, x.Data(), wm, m, false)
						if acc {
							for i := range want {
								want[i] += y0[i]
							}
						}
						cfg := v.DefaultConfig(nil, threads)
						if kc := v.Param("kc"); kc != nil { // arm64: K = 300 spans two fixed K blocks
							cfg.Params["kc"] = kc.Values[0]
						}
						cfg.Params["grain"] = 1
						Run(kernel.Choice{Variant: v, Config: cfg}, y.Data(), x.Data(), wm, m, acc)
						label := fmt.Sprintf("%s %d×%d×%d threads=%d acc=%v", dt, m, n, k, threads, acc)
						kerneltest.Close(t, label, y.Data(), want, kernel.LookupOp(OpGEMM).Tol(v.Class, nil))
						x.CheckGuards(t)
						y.CheckGuards(t)
					}
				}
			}
		}
	})
}

// TestF32GateUp runs gemm.gateup through both regimes.
func TestF32GateUp(t *testing.T) {
	forEachF32Variant(t, OpGateUp, func(t *testing.T, v *kernel.Variant) {
		for _, dt := range panelFormats(v.DTypes) {
			shapes := []kernel.Shape{kernel.MakeShape(shapeKeys, 3, 40, 70), kernel.MakeShape(shapeKeys, 20, 40, 70)}
			kerneltest.CheckVariant(t, v, dt, shapes, 0, 1)
		}
	})
}
