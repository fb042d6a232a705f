package moe

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/kerneltest"
	"github.com/ktune/ktune/internal/quant"
)

// TestObserveHook: BlockOptions.Observe sees each active expert's gate and
// up on exactly its routed tokens' rows of x, in token order, its down on
// as many rows of width I, the shared expert on every row; the router is
// not observed, and the output is the same bits with the hook set.
func TestObserveHook(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 6))
	const C, I = 48, 32
	b, err := RandomBlock(r, kernel.Q8, 16, 3, C, I)
	if err != nil {
		t.Fatal(err)
	}
	b.Shared = &Expert{} // expert 1's values in matrices of its own
	b.Shared.Gate, _ = quant.Quantize(kernel.Q8, b.Experts[1].Gate.Dequantize(), I, C, false)
	b.Shared.Up, _ = quant.Quantize(kernel.Q8, b.Experts[1].Up.Dequantize(), I, C, false)
	b.Shared.Down, _ = quant.Quantize(kernel.Q8, b.Experts[1].Down.Dequantize(), C, I, false)
	for _, n := range []int{1, 7, 65} {
		x := make([]float32, n*C)
		kerneltest.FillNormal(r, x, 0, 1)
		for _, ep := range []int{-1, 1, 64} {
			opt := BlockOptions{Threads: 2, ExpertParallel: ep}
			want := make([]float32, len(x))
			b.Forward(want, x, n, opt)
			var mu sync.Mutex
			seen := map[*quant.Matrix][][]float32{} // rows observed per matrix
			opt.Observe = func(w *quant.Matrix, in []float32, rows int) {
				if len(in) != rows*w.K {
					t.Errorf("%d values for %d rows of %d", len(in), rows, w.K)
				}
				mu.Lock()
				defer mu.Unlock()
				if seen[w] != nil {
					t.Errorf("a matrix observed twice in one call")
				}
				for i := 0; i < rows; i++ {
					seen[w] = append(seen[w], slices.Clone(in[i*w.K:(i+1)*w.K]))
				}
			}
			y := make([]float32, len(x))
			rt := b.Forward(y, x, n, opt)
			if !slices.Equal(y, want) {
				t.Errorf("n=%d ep=%d: output differs with the hook set", n, ep)
			}
			if seen[b.Router] != nil {
				t.Error("the router was observed")
			}
			for e := range b.Experts {
				ex := &b.Experts[e]
				g, u, d := seen[ex.Gate], seen[ex.Up], seen[ex.Down]
				lo, hi := int(rt.Offset[e]), int(rt.Offset[e+1])
				if len(g) != hi-lo || len(u) != hi-lo || len(d) != hi-lo {
					t.Fatalf("n=%d ep=%d expert %d: %d/%d/%d rows observed, %d routed", n, ep, e, len(g), len(u), len(d), hi-lo)
				}
				for i := range g {
					tok := int(rt.Token[lo+i])
					if !slices.Equal(g[i], x[tok*C:(tok+1)*C]) || !slices.Equal(u[i], g[i]) {
						t.Fatalf("n=%d ep=%d expert %d row %d: not token %d's input", n, ep, e, i, tok)
					}
				}
			}
			if s := seen[b.Shared.Gate]; len(s) != n || len(seen[b.Shared.Down]) != n || !slices.Equal(s[n-1], x[(n-1)*C:]) {
				t.Errorf("n=%d ep=%d: the shared expert saw %d rows", n, ep, len(s))
			}
		}
	}
}
