package moe

import (
	"fmt"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/pool"
	"github.com/ktune/ktune/internal/quant"
	"github.com/ktune/ktune/internal/scratch"
	"github.com/ktune/ktune/kernels/gemm"
)

// GroupedLinear is the grouped quantized matmul of a MoE layer (ggml's
// MUL_MAT_ID): for every slot s = n·K+k of the routing, y[s] = x[n]·W_e^T
// with e = r.IDs[s]; ws[e] are [N_out, C] matrices of one shape and format.
// Each active expert multiplies its gathered token rows in one GEMV/GEMM;
// experts with at most ep rows run one per thread (decode), larger ones one
// after another on all threads (prefill). y is [N·K, N_out] in slot order.
func GroupedLinear(y, x []float32, ws []*quant.Matrix, r *Routing, ep, threads int, classes ...kernel.Class) error {
	if len(ws) != r.E {
		return fmt.Errorf("moe: %d expert matrices for %d experts", len(ws), r.E)
	}
	C, NO := ws[0].K, ws[0].N
	for e, w := range ws {
		if w.K != C || w.N != NO || w.DType != ws[0].DType {
			return fmt.Errorf("moe: expert %d is %s %d×%d, want %s %d×%d", e, w.DType, w.N, w.K, ws[0].DType, NO, C)
		}
	}
	if len(x) < r.N*C || len(y) < r.N*r.K*NO {
		return fmt.Errorf("moe: x has %d values (want %d), y %d (want %d)", len(x), r.N*C, len(y), r.N*r.K*NO)
	}
	ep = max(ep, 1)
	run := func(e, th int) {
		lo, hi := int(r.Offset[e]), int(r.Offset[e+1])
		m := hi - lo
		xe, ye := scratch.Get(m*C), scratch.Get(m*NO)
		defer scratch.Put(xe, ye)
		for i := 0; i < m; i++ {
			t := int(r.Token[lo+i])
			copy(xe[i*C:(i+1)*C], x[t*C:(t+1)*C])
		}
		gemm.LinearWith(kernel.Rules{Classes: classes}, ye, xe, ws[e], m, false, th)
		for i := 0; i < m; i++ {
			s := int(r.Slot[lo+i])
			copy(y[s*NO:(s+1)*NO], ye[i*NO:(i+1)*NO])
		}
	}
	var small, large []int
	for _, e := range r.Active() {
		if int(r.Count[e]) <= ep {
			small = append(small, e)
		} else {
			large = append(large, e)
		}
	}
	pool.Default().ForEach(threads, len(small), func(_, i int) { run(small[i], 1) })
	for _, e := range large {
		run(e, threads)
	}
	return nil
}
