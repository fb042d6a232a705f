package kda

import (
	"testing"

	"github.com/ktune/ktune/internal/kernel"
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
