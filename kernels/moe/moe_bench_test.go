package moe

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
	"github.com/ktune/ktune/roofline"
)

// kimiBlock builds a 256-expert block at Kimi Linear's widths (hidden
// 2304, experts of 1024, top-8, one shared expert) whose experts are
// copies of one quantized expert placed in one buffer (≈ 1 GiB at Q4, so
// decode streams DRAM; the values do not matter for speed).
func kimiBlock(b *testing.B, dt kernel.DType) *BlockWeights {
	const E, K, C, I = 256, 8, 2304, 1024
	r := rand.New(rand.NewPCG(1, 2))
	one, err := RandomBlock(r, dt, 1, 1, C, I)
	if err != nil {
		b.Fatal(err)
	}
	router, _ := RandomBlock(r, kernel.F32, E, K, C, 8)
	blk := &BlockWeights{Hidden: C, Router: router.Router, Bias: router.Bias, Cfg: router.Cfg, Shared: one.Shared}
	ex := one.Experts[0]
	per := len(ex.Gate.Data) + len(ex.Up.Data) + len(ex.Down.Data)
	buf := make([]byte, E*per)
	view := func(off int, m *quant.Matrix) *quant.Matrix {
		copy(buf[off:], m.Data)
		v, err := quant.View(m.DType, m.N, m.K, m.HasMin, buf[off:off+len(m.Data)])
		if err != nil {
			b.Fatal(err)
		}
		return v
	}
	for e := 0; e < E; e++ {
		o := e * per
		g := view(o, ex.Gate)
		u := view(o+len(ex.Gate.Data), ex.Up)
		d := view(o+len(ex.Gate.Data)+len(ex.Up.Data), ex.Down)
		blk.Experts = append(blk.Experts, Expert{g, u, d})
	}
	if err := blk.Validate(); err != nil {
		b.Fatal(err)
	}
	return blk
}

// BenchmarkMoE/op=block/dtype=<dt>/variant=<class>/n=<tokens>/e=256/k=8/c=2304/i=1024/mem=dram/ep=<ep>/threads=<t>
// (ep=-1: every expert row-parallel),
// and the read ceiling of the same run. GB/s counts the bytes of the
// experts actually touched (routed + shared) and the router.
func BenchmarkMoE(b *testing.B) {
	for threads := 1; threads <= 2; threads++ {
		b.Run(fmt.Sprintf("op=read/streams=4/mem=dram/threads=%d", threads), func(b *testing.B) {
			buf := make([]byte, 1<<30)
			for i := range buf {
				buf[i] = byte(i)
			}
			for b.Loop() {
				roofline.ReadParallel(buf, 4, threads)
			}
			b.ReportMetric(float64(len(buf))*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
	for _, dt := range []kernel.DType{kernel.Q4, kernel.Q8} {
		var blk *BlockWeights
		for _, cls := range []kernel.Class{kernel.ClassInt8Act, kernel.ClassF32} {
			for _, n := range []int{1, 8} {
				for threads := 1; threads <= 2; threads++ {
					for _, ep := range []int{DefaultExpertParallel, -1} {
						if ep < 0 && threads == 1 {
							continue
						}
						name := fmt.Sprintf("op=block/dtype=%s/variant=%s/n=%d/e=256/k=8/c=2304/i=1024/mem=dram/ep=%d/threads=%d", dt, cls, n, ep, threads)
						b.Run(name, func(b *testing.B) {
							if blk == nil {
								blk = kimiBlock(b, dt)
							}
							r := rand.New(rand.NewPCG(3, 4))
							xs := make([][]float32, 64) // different tokens each call: different experts
							for i := range xs {
								xs[i] = make([]float32, n*2304)
								for j := range xs[i] {
									xs[i][j] = float32(r.NormFloat64())
								}
							}
							y := make([]float32, n*2304)
							var bytes float64
							ex := blk.Experts[0]
							per := float64(len(ex.Gate.Data) + len(ex.Up.Data) + len(ex.Down.Data))
							i := 0
							for b.Loop() {
								rt := blk.Forward(y, xs[i%len(xs)], n, BlockOptions{Threads: threads, ExpertParallel: ep, Rules: kernel.Rules{Classes: []kernel.Class{cls}}})
								bytes += float64(rt.Stats().Active+1)*per + float64(len(blk.Router.Data))
								i++
							}
							sec := b.Elapsed().Seconds()
							b.ReportMetric(bytes/sec/1e9, "GB/s")
							b.ReportMetric(float64(n*b.N)/sec, "tokens/s")
						})
					}
				}
			}
		}
	}
}

// BenchmarkMoEMatmulID is the grouped matmul alone, shaped like ggml's
// MUL_MAT_ID perf case (test-backend-ops): 256 experts of [m×k], top-8, n
// tokens with fixed random ids, so the same experts are touched every run
// (the "in cache" regime of the peer's figures; at q8 one token's 8
// experts are 20 MB, and from 8 tokens up the experts touched outgrow the
// caches, as the peer's do):
// op=matmul_id/dtype=<dt>/n=<n>/e=256/k=8/m=<m>/c=<k>/threads=<t>.
func BenchmarkMoEMatmulID(b *testing.B) {
	const E, K = 256, 8
	for _, dt := range []kernel.DType{kernel.Q8, kernel.Q4} {
		for _, mk := range [][2]int{{1024, 2304}, {2304, 1024}} {
			NO, C := mk[0], mk[1]
			var ws []*quant.Matrix
			for _, n := range []int{1, 8, 64, 512} {
				for threads := 1; threads <= 2; threads++ {
					b.Run(fmt.Sprintf("op=matmul_id/dtype=%s/n=%d/e=%d/k=%d/m=%d/c=%d/threads=%d", dt, n, E, K, NO, C, threads), func(b *testing.B) {
						r := rand.New(rand.NewPCG(7, 8))
						if ws == nil {
							for e := 0; e < E; e++ {
								w, err := quant.Random(r, dt, NO, C, false, 0.05)
								if err != nil {
									b.Fatal(err)
								}
								ws = append(ws, w)
							}
						}
						ids := make([]int32, n*K)
						for t := 0; t < n; t++ {
							for k, e := range r.Perm(E)[:K] {
								ids[t*K+k] = int32(e)
							}
						}
						x := make([]float32, n*C)
						for i := range x {
							x[i] = float32(r.NormFloat64())
						}
						y := make([]float32, n*K*NO)
						for b.Loop() {
							rt := Permute(ids, nil, n, K, E)
							if err := GroupedLinear(y, x, ws, rt, DefaultExpertParallel, threads); err != nil {
								b.Fatal(err)
							}
						}
						sec := b.Elapsed().Seconds() / float64(b.N)
						b.ReportMetric(2*float64(n*K*NO*C)/sec/1e9, "GFLOP/s")
						b.ReportMetric(sec*1e6, "us/op")
					})
				}
			}
		}
	}
}
