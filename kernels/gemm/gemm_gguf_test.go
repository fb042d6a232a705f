package gemm

import (
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/kerneltest"
	"github.com/ktune/ktune/internal/quant"
)

// ggufShapes are the test shapes of a GGUF format: rows of one, two and
// three blocks (32 or 256 values each), output counts below, at and
// across a panel (16 rows), and row counts of decode and of prefill.
func ggufShapes(op string, dt kernel.DType) []kernel.Shape {
	t, _ := quant.GGUFType(dt)
	ms := []int{1, 2, 5, 8, 9, 33}
	if op == OpGEMV {
		ms = []int{1, 2, 3, 8}
	}
	// rows of 1, 2 and 3 units of 256 values (the SIMD kernels' unit),
	// and for the 32-value block types a row of 3 blocks (no whole unit:
	// the portable path). No output count below 16: the int8 classes'
	// tolerance is an RMS over outputs, which one or two outputs near
	// zero by chance exceed.
	nk := [][2]int{{40, 256}, {17, 512}, {16, 256}, {33, 768}}
	if t.BlockSize() < 256 {
		// a part unit of 1, 2 and 3 chunks after whole units, or alone
		// (Kimi's 128-wide rows), and a length the kernels cannot take
		nk = append(nk, [2]int{17, 128}, [2]int{19, 320}, [2]int{18, 448}, [2]int{17, 96})
	}
	if testing.Short() {
		ms, nk = ms[:3], nk[1:3]
	}
	var out []kernel.Shape
	for _, m := range ms {
		for _, s := range nk {
			out = append(out, kernel.MakeShape(shapeKeys, m, s[0], s[1]))
		}
	}
	return out
}

// TestGGUFVariants checks every variant serving a GGUF format against the
// reference (ggml's own dequantization, float64 sums) at ggufShapes, at
// its class's tolerance (gateup under its error model).
func TestGGUFVariants(t *testing.T) {
	for _, op := range allOps {
		t.Run(op, func(t *testing.T) {
			kerneltest.ForEachVariant(t, op, func(t *testing.T, v *kernel.Variant) {
				kerneltest.SkipRepeatUnderEmulation(t, v)
				for _, dt := range v.DTypes {
					if !quant.IsGGUF(dt) {
						continue
					}
					t.Run(string(dt), func(t *testing.T) {
						if op == OpGateUp {
							checkGateUpShapes(t, v, dt, 1, ggufShapes(op, dt))
							return
						}
						kerneltest.CheckVariant(t, v, dt, ggufShapes(op, dt), 2, 1)
					})
				}
			})
		})
	}
}

// BenchmarkGGUF: the GGUF formats at Kimi's shapes, one and eight rows
// (decode), 64 rows (a prefill's dense projections), from DRAM (copies of
// the weights cycled, ≥ 1 GiB) and the read ceiling in the same run
// (BenchmarkGEMM/op=read). KTUNE_BENCH_DTYPES=gguf-q4_K,… restricts the
// formats; KTUNE_BENCH_VARIANTS the variants; KTUNE_BENCH_MEM=cache times
// one copy from cache instead.
//
//	BenchmarkGGUF/op=<op>/dtype=<dt>/variant=<v>/m=<m>/n=<n>/k=<k>/mem=dram/threads=<t>
func BenchmarkGGUF(b *testing.B) {
	benchMem := "dram"
	if os.Getenv("KTUNE_BENCH_MEM") == "cache" {
		benchMem = "cache" // one copy, reused: the kernels' compute rate
	}
	r := rand.New(rand.NewPCG(2, 2))
	dts := kernel.GGUFDTypes
	if s := os.Getenv("KTUNE_BENCH_DTYPES"); s != "" {
		dts = nil
		for _, d := range strings.Split(s, ",") {
			dts = append(dts, kernel.DType(d))
		}
	}
	for _, dt := range dts {
		for _, nk := range kimiNK[:2] {
			for _, m := range []int{1, 8, 64} {
				n, k := nk[0], nk[1]
				op := OpGEMV
				if m > Crossover {
					op = OpGEMM
				}
				w, err := quant.RandomGGUF(r, dt, n, k, 0.02)
				if err != nil {
					b.Fatal(err)
				}
				var ws []*quant.Matrix
				x := make([]float32, m*k)
				for i := range x {
					x[i] = float32(r.NormFloat64())
				}
				y := make([]float32, m*n)
				s := kernel.MakeShape(shapeKeys, m, n, k)
				for _, v := range benchVariants(op, dt) {
					for threads := 1; threads <= 2; threads++ {
						b.Run(kernel.BenchName(v, dt, s, threads, "mem="+benchMem), func(b *testing.B) {
							if ws == nil {
								ws = weightCopies(w, benchMem)
							}
							plan := kernel.Choice{Variant: v, Config: v.DefaultConfig(s, threads)}
							cost := v.CostAt(s, dt, plan.Config)
							b.SetBytes(int64(cost.Bytes))
							i := 0
							for b.Loop() {
								Run(plan, y, x, ws[i], m, false)
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
}
