package gemm

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
	"github.com/ktune/ktune/roofline"
)

// Benchmarks, in the project's naming scheme:
//
//	BenchmarkGEMM/op=<gemv|gemm|gateup>/dtype=<dt>/variant=<v>/m=<m>/n=<n>/k=<k>/mem=<dram|cache>/threads=<t>
//	BenchmarkGEMM/op=read/streams=4/mem=dram/threads=<t>   (the read ceiling, same run)
//
// mem=dram cycles over copies of the packed weights totalling ≥ 1 GiB, so
// every call streams its weights from DRAM; mem=cache reuses one copy.
// KTUNE_BENCH_VARIANTS=a,b restricts the variants (default: every
// available candidate of every class, plus generic).

// Kimi Linear's projection shapes (n = out, k = in): KDA q/k/v/gates
// (4096×2304), experts' gate/up (1024×2304), o_proj / down (2304×4096).
var kimiNK = [][2]int{{4096, 2304}, {1024, 2304}, {2304, 4096}}

const dramBytes = 1 << 30

func benchVariants(op string, dt kernel.DType) []*kernel.Variant {
	all := kernel.Candidates(op, dt, []kernel.Class{kernel.ClassF32, kernel.ClassInt8Act, kernel.ClassBF16Act})
	want := os.Getenv("KTUNE_BENCH_VARIANTS")
	if want == "" {
		return all
	}
	var out []*kernel.Variant
	for _, v := range all {
		for _, w := range strings.Split(want, ",") {
			if v.Name == w {
				out = append(out, v)
			}
		}
	}
	return out
}

// weightCopies returns enough views of w's packed bytes to exceed every
// cache (copies of one quantized matrix: the kernels read the bytes, the
// values do not matter for speed).
func weightCopies(w *quant.Matrix, mem string) []*quant.Matrix {
	if mem == "cache" {
		return []*quant.Matrix{w}
	}
	n := max(2, dramBytes/len(w.Data)+1)
	big := make([]byte, n*len(w.Data))
	out := make([]*quant.Matrix, n)
	for i := range out {
		b := big[i*len(w.Data) : (i+1)*len(w.Data)]
		copy(b, w.Data)
		v, err := quant.View(w.DType, w.N, w.K, w.HasMin, b)
		if err != nil {
			panic(err)
		}
		out[i] = v
	}
	return out
}

func BenchmarkGEMM(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	for threads := 1; threads <= 2; threads++ {
		b.Run(fmt.Sprintf("op=read/streams=4/mem=dram/threads=%d", threads), func(b *testing.B) {
			buf := make([]byte, dramBytes)
			for i := range buf {
				buf[i] = byte(i)
			}
			b.SetBytes(dramBytes)
			for b.Loop() {
				roofline.ReadParallel(buf, 4, threads)
			}
			b.ReportMetric(dramBytes*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
	type cse struct {
		op  string
		m   int
		nk  [2]int
		mem string
	}
	var cases []cse
	for _, nk := range kimiNK {
		for _, m := range []int{1, 8} {
			for _, mem := range []string{"dram", "cache"} {
				cases = append(cases, cse{OpGEMV, m, nk, mem})
			}
		}
		cases = append(cases, cse{OpGEMM, 512, nk, "cache"})
	}
	cases = append(cases, cse{OpGEMM, 1024, [2]int{1024, 1024}, "cache"})
	for _, c := range cases {
		n, k := c.nk[0], c.nk[1]
		for _, dt := range panelFormats(opDTypes) {
			if c.m == 1024 && dt != kernel.F32 {
				continue
			}
			wf := make([]float32, n*k)
			for i := range wf {
				wf[i] = float32(r.NormFloat64() * 0.02)
			}
			w, err := quant.Quantize(dt, wf, n, k, false)
			if err != nil {
				b.Fatal(err)
			}
			var ws []*quant.Matrix
			x := make([]float32, c.m*k)
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			y := make([]float32, c.m*n)
			s := kernel.MakeShape(shapeKeys, c.m, n, k)
			for _, v := range benchVariants(c.op, dt) {
				for threads := 1; threads <= 2; threads++ {
					name := kernel.BenchName(v, dt, s, threads, "mem="+c.mem)
					b.Run(name, func(b *testing.B) {
						if ws == nil {
							ws = weightCopies(w, c.mem)
						}
						plan := kernel.Choice{Variant: v, Config: v.DefaultConfig(s, threads)}
						cost := v.CostAt(s, dt, plan.Config)
						b.SetBytes(int64(cost.Bytes))
						i := 0
						for b.Loop() {
							Run(plan, y, x, ws[i], c.m, false)
							if i++; i == len(ws) {
								i = 0
							}
						}
						sec := b.Elapsed().Seconds() / float64(b.N)
						b.ReportMetric(cost.FLOPs/sec/1e9, "GFLOP/s")
						b.ReportMetric(float64(len(w.Data))/sec/1e9, "GB/s")
					})
				}
			}
		}
	}
}
