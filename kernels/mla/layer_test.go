package mla

import (
	"fmt"
	"math"
	"testing"

	"github.com/ktune/ktune/internal/golden"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/kerneltest"
)

// TestCtxBucket: for profiles tuned at power-of-two contexts (ktune's
// 4096, 32768, 131072, and a denser set), the entry nearest in log2 to
// ctxBucket(n) is the one nearest to n itself, for every n up to 2^18 but
// the exact midpoints (ties the profile breaks by speed). Rounding n to
// the nearest power of two, the first form, is shown to fail it.
func TestCtxBucket(t *testing.T) {
	nearest := func(tuned []int, n int) int {
		best, bd := -1, math.Inf(1)
		for i, c := range tuned {
			d := math.Abs(math.Log2(float64(c) / float64(n)))
			if d < bd-1e-9 {
				best, bd = i, d
			} else if math.Abs(d-bd) <= 1e-9 {
				best = -1 // a tie
			}
		}
		return best
	}
	pow2 := func(n int) int { return 1 << int(math.Round(math.Log2(float64(n)))) }
	for _, tuned := range [][]int{{4096, 32768, 131072}, {1024, 2048, 8192, 65536}, {512, 4096}} {
		bad := 0
		for n := 1; n <= 1<<18; n++ {
			want := nearest(tuned, n)
			if want < 0 {
				continue
			}
			if got := nearest(tuned, ctxBucket(n)); got != want {
				pick := "a tie"
				if got >= 0 {
					pick = fmt.Sprint(tuned[got])
				}
				t.Fatalf("tuned %v, context %d: bucket %d picks %s, the exact length %d", tuned, n, ctxBucket(n), pick, tuned[want])
			}
			if nearest(tuned, pow2(n)) != want {
				bad++
			}
		}
		if tuned[0] == 4096 && bad == 0 {
			t.Errorf("tuned %v: rounding to a power of two never picked another entry; the check cannot fail", tuned)
		}
	}
	for n := 1; n < 1<<20; n++ {
		if ctxBucket(n) < ctxBucket(max(n-1, 1)) {
			t.Fatalf("ctxBucket(%d) = %d < ctxBucket(%d) = %d", n, ctxBucket(n), n-1, ctxBucket(n-1))
		}
	}
}

// TestLayerRows: Forward with RowsLast writes each sequence's last row
// only, within 1e-5 of the every-row output (the last query through the
// prefill variant the whole prompt runs), and RowsNone writes nothing;
// both leave the caches bit for bit as RowsAll does. Every prefill
// variant, on every mla golden file, as a prompt and then as an extension
// over that cached prefix.
func TestLayerRows(t *testing.T) {
	for _, f := range golden.Load(t, golden.MLA) {
		t.Run(f.Name(), func(t *testing.T) {
			w := loadLayer(t, f)
			B, C := f.Dims(t, "x")[0], w.Hidden
			kerneltest.ForEachVariant(t, OpPrefill, func(t *testing.T, pv *kernel.Variant) {
				caches := make([]*LayerCache, 3) // RowsAll, RowsLast, RowsNone
				for i := range caches {
					c, err := w.NewLayerCache(B, kernel.F32)
					if err != nil {
						t.Fatal(err)
					}
					caches[i] = c
				}
				for _, ph := range []string{"", "_extend"} {
					x := f.F32(t, "x"+ph)
					T := f.Dims(t, "x"+ph)[1]
					ys := make([][]float32, 3)
					for i, rows := range []Rows{RowsAll, RowsLast, RowsNone} {
						ys[i] = make([]float32, len(x))
						for j := range ys[i] {
							ys[i][j] = float32(math.NaN()) // what a row left unwritten keeps
						}
						opt := LayerOptions{Threads: 2, Rows: rows, Prefill: &kernel.Choice{Variant: pv, Config: pv.DefaultConfig(nil, 2)}}
						w.Forward(ys[i], x, B, T, caches[i], opt)
					}
					for b := 0; b < B; b++ {
						want := ys[0][(b*T+T-1)*C : (b*T+T)*C]
						kerneltest.Close(t, fmt.Sprintf("x%s seq %d last row", ph, b), ys[1][b*C:(b+1)*C], want, kernel.Tolerance{RelRMS: 1e-5, MaxRel: 1e-4})
					}
					if !math.IsNaN(float64(ys[1][B*C])) {
						t.Errorf("x%s: RowsLast wrote past its %d rows", ph, B)
					}
					for j, v := range ys[2] {
						if !math.IsNaN(float64(v)) {
							t.Fatalf("x%s: RowsNone wrote y[%d] = %v", ph, j, v)
						}
					}
					for i := 1; i < 3; i++ {
						for b := 0; b < B; b++ {
							S := caches[0].Seqs[b].Len()
							if got := caches[i].Seqs[b].Len(); got != S {
								t.Fatalf("x%s: sequence %d's cache holds %d tokens; want %d", ph, b, got, S)
							}
							want, got := make([]float32, S*(w.R+w.DR)), make([]float32, S*(w.R+w.DR))
							caches[0].Seqs[b].Block(0, S, want)
							caches[i].Seqs[b].Block(0, S, got)
							for j := range want {
								if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
									t.Fatalf("x%s: rows %d: sequence %d's cache differs at %d: %v vs %v", ph, i, b, j, got[j], want[j])
								}
							}
						}
					}
				}
			})
		})
	}
}
