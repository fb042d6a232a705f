package norm

import (
	"testing"

	"github.com/ktune/ktune/internal/kernel"
)

// BenchmarkNorm/op=rmsnorm/dtype=f32/variant=<v>/m=<m>/n=<n>/threads=1
// (in cache: the rows are reused).
func BenchmarkNorm(b *testing.B) {
	for _, v := range kernel.Variants(OpRMSNorm) {
		if !v.Available() {
			continue
		}
		for _, m := range []int{1, 64} {
			s := kernel.MakeShape(rmsKeys, m, 2304)
			b.Run(kernel.BenchName(v, kernel.F32, s, 1, "mem=cache"), func(b *testing.B) {
				p, err := newRMSProblem(s, kernel.F32, 1)
				if err != nil {
					b.Fatal(err)
				}
				inst, err := v.Instantiate(p, v.DefaultConfig(s, 1))
				if err != nil {
					b.Fatal(err)
				}
				c := v.CostAt(s, kernel.F32, kernel.Config{Threads: 1})
				b.SetBytes(int64(c.Bytes))
				for b.Loop() {
					inst.Run()
				}
				sec := b.Elapsed().Seconds() / float64(b.N)
				b.ReportMetric(c.FLOPs/sec/1e9, "GFLOP/s")
			})
		}
	}
}
