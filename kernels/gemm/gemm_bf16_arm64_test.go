//go:build arm64 && gc && !purego

package gemm

import (
	"math/rand/v2"
	"testing"

	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/half"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/kerneltest"
	"github.com/ktune/ktune/internal/quant"
)

// TestBF16KernelsARM64 drives every BF16 kernel table the machine can run
// directly (NEON; SVE with 2 vectors per line from 256 bits, with 1 from
// 512: so the wider vector lengths check both SVE tables) with small
// integers, exact in BF16 and in every f32 sum: M = 1…4 rows, K pairs
// around the 4-pair step, several panels, stride gaps, with and without
// accumulation; outputs must equal the integer dot products, and the
// columns beyond the panels must stay untouched.
func TestBF16KernelsARM64(t *testing.T) {
	kerneltest.Features(t, cpu.NewSet(cpu.BF16))
	tabs := map[string][]bf16Fn{"neon": bf16NEON}
	if bits := cpu.Get().SVEBits; cpu.Has(cpu.SVE) && bits >= 256 {
		tabs["sve2"] = bf16SVE2
		if bits >= 512 {
			tabs["sve1"] = bf16SVE1
		}
	}
	r := rand.New(rand.NewPCG(21, 22))
	for name, tab := range tabs {
		for m := 1; m < len(tab); m++ {
			for _, k := range []int{1, 2, 6, 8, 10, 33, 100} {
				for _, np := range []int{1, 3} {
					for _, acc := range []int{0, 1} {
						n := np * quant.PanelRows
						w, err := quant.New(kernel.BF16, n, k, false)
						if err != nil {
							t.Fatal(err)
						}
						kp := w.Kp
						wv := make([]float32, n*k)
						for i := range wv {
							wv[i] = float32(r.IntN(33) - 16)
						}
						if w, err = quant.Quantize(kernel.BF16, wv, n, k, false); err != nil {
							t.Fatal(err)
						}
						ldx, ldy := kp+2, n+5 // gaps between rows
						xb := make([]uint16, m*ldx)
						xv := make([]float32, m*ldx)
						for i := range xb {
							xv[i] = float32(r.IntN(255) - 127)
							if i%ldx >= k {
								xv[i] = 0 // padding (kp > k) zero, as toBF16Row writes it; the gap is never read
								if i%ldx >= kp {
									xv[i] = 1e30
								}
							}
							xb[i] = half.F32ToBF16(xv[i])
						}
						y := make([]float32, m*ldy)
						for i := range y {
							y[i] = float32(i % 7)
						}
						y0 := append([]float32(nil), y...)
						tab[m](&w.Data[0], np, kp/2, &xb[0], 2*ldx, &y[0], ldy, acc)
						for row := 0; row < m; row++ {
							for c := 0; c < ldy; c++ {
								want := y0[row*ldy+c]
								if c < n {
									var dot float64
									for j := 0; j < k; j++ {
										dot += float64(wv[c*k+j]) * float64(xv[row*ldx+j])
									}
									want = float32(dot) + float32(acc)*want
								}
								if got := y[row*ldy+c]; got != want {
									t.Fatalf("%s m=%d k=%d np=%d acc=%d: y[%d,%d] = %v, want %v", name, m, k, np, acc, row, c, got, want)
								}
							}
						}
					}
				}
			}
		}
		t.Logf("%s: M = 1…%d checked", name, len(tab)-1)
	}
}
