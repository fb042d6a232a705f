package mla

import (
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/ktune/ktune/internal/kernel"
)

// BenchmarkMLA at Kimi's widths (32 heads, r=512, dr=64, dn=dv=128):
//
//	op=decode/dtype=f32/variant=<v>/b=1/c=<ctx>/nh=32/r=512/dr=64/threads=<n>      contexts 4K, 32K, 128K
//	op=prefill/dtype=f32/variant=<v>/t=<T>/p=0/nh=32/dn=128/dr=64/dv=128/r=512/threads=<n>   prompts 64, 512, 4096
//	op=prefill/…/t=<T>/p=4096/…                                                         64, 512 tokens over a 4K cached prefix
//	                                                                                    (where absorbedAt's rule applies)
//
// GFLOP/s (the op's cost count), GB/s of cache read and ms per call.
// KTUNE_BENCH_VARIANTS (comma-separated names) restricts the variants;
// every accuracy class is benchmarked (bf16act included). The problems hold
// an f32 cache; BenchmarkMLACache compares cache dtypes.
func BenchmarkMLA(b *testing.B) {
	for _, ctx := range []int{4096, 32768, 131072} {
		benchOp(b, OpDecode, kernel.MakeShape(decodeKeys, 1, ctx, 32, 512, 64))
	}
	for _, t := range []int{64, 512, 4096} {
		benchOp(b, OpPrefill, kernel.MakeShape(prefillKeys, t, 0, 32, 128, 64, 128, 512))
	}
	for _, t := range []int{64, 512} {
		benchOp(b, OpPrefill, kernel.MakeShape(prefillKeys, t, 4096, 32, 128, 64, 128, 512))
	}
}

func benchOp(b *testing.B, opName string, s kernel.Shape) {
	op := kernel.LookupOp(opName)
	only := os.Getenv("KTUNE_BENCH_VARIANTS")
	var p kernel.Problem
	for _, v := range kernel.Candidates(opName, kernel.F32, allClasses) {
		if only != "" && !strings.Contains(","+only+",", ","+v.Name+",") {
			continue
		}
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
				b.ReportMetric(sec*1e3, "ms/op")
			})
		}
	}
}

var allClasses = []kernel.Class{kernel.ClassF32, kernel.ClassInt8Act, kernel.ClassBF16Act}

// BenchmarkMLACache: decode at 32K context over an f32 and a BF16 cache
// (the same tokens), every decode variant:
//
//	op=decode/dtype=f32/variant=<v>/b=1/c=32768/nh=32/r=512/dr=64/cache=<f32|bf16>/threads=<n>
func BenchmarkMLACache(b *testing.B) {
	s := kernel.MakeShape(decodeKeys, 1, 32768, 32, 512, 64)
	p, err := newDecodeProblem(s, kernel.F32, 1)
	if err != nil {
		b.Fatal(err)
	}
	d := p.(*problem).dec
	c32 := d.Caches[0]
	c16, _ := NewCache(c32.R, c32.DR, kernel.BF16)
	row := make([]float32, c32.Width())
	for j := 0; j < c32.Len(); j++ {
		c32.Block(j, 1, row)
		c16.Append(row[:c32.R], row[c32.R:])
	}
	only := os.Getenv("KTUNE_BENCH_VARIANTS")
	for _, v := range kernel.Candidates(OpDecode, kernel.F32, allClasses) {
		if only != "" && !strings.Contains(","+only+",", ","+v.Name+",") {
			continue
		}
		for _, c := range []*Cache{c32, c16} {
			for threads := 1; threads <= 2; threads++ {
				b.Run(kernel.BenchName(v, kernel.F32, s, threads, "cache="+string(c.DType)), func(b *testing.B) {
					d.Caches[0] = c
					defer func() { d.Caches[0] = c32 }()
					cfg := v.DefaultConfig(s, threads)
					inst, err := v.Instantiate(p, cfg)
					if err != nil {
						b.Fatal(err)
					}
					for b.Loop() {
						inst.Run()
					}
					sec := b.Elapsed().Seconds() / float64(b.N)
					b.ReportMetric(v.CostAt(s, kernel.F32, cfg).FLOPs/sec/1e9, "GFLOP/s")
					b.ReportMetric(float64(c.Len()*c.RowBytes())/sec/1e9, "GB/s")
					b.ReportMetric(sec*1e3, "ms/op")
				})
			}
		}
	}
}

// BenchmarkPackKeysQ8: one head's keys at pp512 (512 rows of 128 + 64).
func BenchmarkPackKeysQ8(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	kn, pe := randn(r, 512*128, 1), randn(r, 512*64, 2)
	m, _ := newQ8(512, 192)
	row := make([]float32, m.Kp)
	var kr, pr [16][]float32
	pb := m.PanelBytes()
	for b.Loop() {
		for p := 0; p < m.Panels(); p++ {
			for l := range 16 {
				j := 16*p + l
				kr[l], pr[l] = kn[j*128:(j+1)*128], pe[j*64:(j+1)*64]
			}
			packKeysQ8(m.Data[p*pb:(p+1)*pb], &kr, &pr, row)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(512*192), "ns/value")
}
