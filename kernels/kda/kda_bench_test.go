package kda

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
)

// BenchmarkKDA/op=<decode|prefill>/dtype=f32/variant=<v>/<shape>/threads=<n>
// at Kimi shapes (32 heads × 128). Metrics: tokens/s (per sequence-token),
// GB/s of state traffic (one read and one write of the state per call),
// and GFLOP/s at the fixed count of 7·dk·dv per head per token.
func BenchmarkKDA(b *testing.B) {
	cases := []struct {
		op string
		s  kernel.Shape
	}{
		{OpDecode, kernel.MakeShape(decodeKeys, 1, 32, 128, 128)},
		{OpDecode, kernel.MakeShape(decodeKeys, 8, 32, 128, 128)},
		{OpPrefill, kernel.MakeShape(prefillKeys, 1, 512, 32, 128, 128)},
		{OpPrefill, kernel.MakeShape(prefillKeys, 1, 4096, 32, 128, 128)},
	}
	for _, c := range cases {
		op := kernel.LookupOp(c.op)
		for _, v := range kernel.Candidates(c.op, kernel.F32, nil) {
			if c.s.Get("t") > 512 && v.Requires.Len() == 0 {
				continue // the pure-Go variants take tens of seconds per call here
			}
			layouts := []int{LayoutKV}
			if v.Param("layout") != nil && c.op == OpDecode {
				layouts = append(layouts, LayoutVK)
			}
			for _, layout := range layouts {
				for threads := 1; threads <= 2; threads++ {
					var extra []string
					if layout == LayoutVK {
						extra = []string{"layout=vk"}
					}
					b.Run(kernel.BenchName(v, kernel.F32, c.s, threads, extra...), func(b *testing.B) {
						p, err := op.NewProblem(c.s, kernel.F32, 1)
						if err != nil {
							b.Fatal(err)
						}
						cfg := v.DefaultConfig(c.s, threads)
						if v.Param("layout") != nil {
							cfg.Params["layout"] = layout
						}
						inst, err := v.Instantiate(p, cfg)
						if err != nil {
							b.Fatal(err)
						}
						p.Reset() // the state carries over from call to call, as in decoding
						for b.Loop() {
							inst.Run()
						}
						sec := b.Elapsed().Seconds() / float64(b.N)
						cost := v.CostAt(c.s, kernel.F32, cfg)
						tokens := float64(c.s.Get("b") * max(c.s.Get("t"), 1))
						state := float64(2 * 4 * c.s.Get("b") * c.s.Get("h") * c.s.Get("dk") * c.s.Get("dv"))
						b.ReportMetric(tokens/sec, "tokens/s")
						b.ReportMetric(state/sec/1e9, "GB/s")
						b.ReportMetric(cost.FLOPs/sec/1e9, "GFLOP/s")
					})
				}
			}
		}
	}
}

// BenchmarkLayer/op=layer/dtype=q4/b=1/t=<T>/threads=<n>: the whole KDA
// layer (projections, short convolution, gates, chunked recurrence, gated
// norm, output projection) at Kimi shapes (hidden 2304, 32 heads × 128,
// width 4), the projections in Q4 and the gates in F32 as the q4-all
// preset packs them, on one cache carried from call to call. Metrics:
// tokens/s, and the process's CPU time per call (cpu-ns/op: user +
// system, all threads), which a machine shared with other jobs inflates
// less than the wall time.
func BenchmarkLayer(b *testing.B) {
	const C, H, D, W = 2304, 32, 128, 4
	r := rand.New(rand.NewPCG(7, 8))
	mat := func(dt kernel.DType, n, k int) *quant.Matrix {
		m, err := quant.Random(r, dt, n, k, false, 0.02)
		if err != nil {
			b.Fatal(err)
		}
		return m
	}
	vec := func(n int, mean, std float64) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(mean + std*r.NormFloat64())
		}
		return s
	}
	HD := H * D
	w := &LayerWeights{Hidden: C, Heads: H, HeadDim: D, ConvWidth: W, Eps: 1e-6,
		Q: mat(kernel.Q4, HD, C), K: mat(kernel.Q4, HD, C), V: mat(kernel.Q4, HD, C), O: mat(kernel.Q4, C, HD),
		FA: mat(kernel.F32, D, C), FB: mat(kernel.F32, HD, D), GA: mat(kernel.F32, D, C), GB: mat(kernel.F32, HD, D),
		Beta:  mat(kernel.F32, H, C),
		ConvQ: vec(HD*W, 0, 0.3), ConvK: vec(HD*W, 0, 0.3), ConvV: vec(HD*W, 0, 0.3),
		ALog: vec(H, 0, 1), DtBias: vec(HD, 0, 1), ONorm: vec(D, 1, 0.1)}
	if err := w.Validate(); err != nil {
		b.Fatal(err)
	}
	for _, T := range []int{1, 64, 512} {
		x := vec(T*C, 0, 1)
		y := make([]float32, T*C)
		for threads := 1; threads <= 2; threads++ {
			b.Run(fmt.Sprintf("op=layer/dtype=q4/b=1/t=%d/threads=%d", T, threads), func(b *testing.B) {
				opt := LayerOptions{Threads: threads}
				// one cache, carried on (a KDA cache does not grow): a new
				// one per call timed its 2 MiB allocation and page faults
				c := w.NewLayerCache(1)
				cpu0 := cpuTime()
				for b.Loop() {
					w.Forward(y, x, 1, T, c, opt)
				}
				b.ReportMetric(float64(T)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
				if cpu0 >= 0 {
					b.ReportMetric((cpuTime()-cpu0)/float64(b.N)*1e9, "cpu-ns/op")
				}
			})
		}
	}
}
