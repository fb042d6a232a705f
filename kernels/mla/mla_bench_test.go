package mla

import (
	"testing"

	"github.com/ktune/ktune/internal/kernel"
)

// BenchmarkMLA/op=decode/dtype=f32/variant=<v>/b=1/c=<ctx>/nh=32/r=512/dr=64/threads=<n>
// at Kimi's widths: GFLOP/s (2·nh·(2r+dr) per cached token) and GB/s of
// cache read (f32 rows, in cache when they fit).
func BenchmarkMLA(b *testing.B) {
	op := kernel.LookupOp(OpDecode)
	for _, ctx := range []int{4096, 32768, 131072} {
		s := kernel.MakeShape(decodeKeys, 1, ctx, 32, 512, 64)
		var p kernel.Problem
		for _, v := range kernel.Candidates(OpDecode, kernel.F32, nil) {
			for threads := 1; threads <= 2; threads++ {
				b.Run(kernel.BenchName(v, kernel.F32, s, threads), func(b *testing.B) {
					if p == nil {
						var err error
						if p, err = op.NewProblem(s, kernel.F32, 1); err != nil {
							b.Fatal(err)
						}
					}
					cfg := v.DefaultConfig(s, threads)
					inst, err := v.Instantiate(p, cfg)
					if err != nil {
						b.Fatal(err)
					}
					for b.Loop() {
						inst.Run()
					}
					sec := b.Elapsed().Seconds() / float64(b.N)
					c := v.CostAt(s, kernel.F32, cfg)
					b.ReportMetric(c.FLOPs/sec/1e9, "GFLOP/s")
					b.ReportMetric(c.Bytes/sec/1e9, "GB/s")
					b.ReportMetric(sec*1e3, "ms/token")
				})
			}
		}
	}
}
