package moe

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
)

// TestGroupedLinear: every slot's row equals x[token]·W_e^T computed from
// the dequantized weights in float64, for skewed (all to one expert) and
// uniform routing, 1..64 tokens, both regimes, and 1 and 2 threads.
func TestGroupedLinear(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	E, K, C, NO := 16, 4, 96, 40
	for _, dt := range []kernel.DType{kernel.F32, kernel.Q8, kernel.Q4} {
		ws := make([]*quant.Matrix, E)
		deq := make([][]float32, E)
		for e := range ws {
			w, err := quant.Random(r, dt, NO, C, false, 0.1)
			if err != nil {
				t.Fatal(err)
			}
			ws[e], deq[e] = w, w.Dequantize()
		}
		for _, n := range []int{1, 2, 7, 64} {
			for _, skew := range []bool{false, true} {
				ids := make([]int32, n*K)
				for tk := 0; tk < n; tk++ {
					perm := r.Perm(E)
					for k := 0; k < K; k++ {
						ids[tk*K+k] = int32(perm[k])
						if skew && k == 0 {
							ids[tk*K+k] = 3 // every token's first expert is 3
						}
						if skew && k > 0 && perm[k] == 3 {
							ids[tk*K+k] = int32(perm[K]) // keep a token's experts distinct
						}
					}
				}
				x := make([]float32, n*C)
				for i := range x {
					x[i] = float32(r.NormFloat64())
				}
				rt := Permute(ids, make([]float32, n*K), n, K, E)
				for _, ep := range []int{1, 8} {
					for _, th := range []int{1, 2} {
						name := fmt.Sprintf("%s/n=%d/skew=%v/ep=%d/threads=%d", dt, n, skew, ep, th)
						y := make([]float32, n*K*NO)
						for i := range y {
							y[i] = float32(math.NaN()) // must be overwritten
						}
						if err := GroupedLinear(y, x, ws, rt, ep, th, kernel.DefaultClasses...); err != nil {
							t.Fatal(err)
						}
						want := make([]float32, n*K*NO)
						for s := 0; s < n*K; s++ {
							tk, e := s/K, ids[s]
							for o := 0; o < NO; o++ {
								want[s*NO+o] = float32(kernel.Dot64(x[tk*C:(tk+1)*C], deq[e][o*C:(o+1)*C]))
							}
						}
						tol := kernel.ClassTolerance(kernel.ClassInt8Act)
						if dt == kernel.F32 {
							tol = kernel.TolF32
						}
						if _, err := kernel.Compare(y, want, tol); err != nil {
							t.Errorf("%s: %v", name, err)
						}
					}
				}
			}
		}
	}
	if err := GroupedLinear(nil, nil, nil, Permute(nil, nil, 0, 1, 2), 1, 1); err == nil {
		t.Error("mismatched expert count accepted")
	}
}
