package gemm

import (
	"math/rand/v2"
	"os"
	"testing"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
)

var kDTypes = []kernel.DType{kernel.Q3K, kernel.Q4K, kernel.Q5K, kernel.Q6K}

// TestKShapes checks every candidate of gemm.gemv, gemm.gemm and
// gemm.gateup for the K formats (quant/kquant.go) against the reference,
// as TestQ5Shapes does for Q5, at shapes whose K crosses super-blocks of
// 256 (1, 31, 257, 300, 513, 1000) and whose N crosses panels, on 1, 2, 3
// and 7 threads, each non-grain parameter cycled. Under an emulator in
// -short mode each case runs at one thread count and K = 1000 only at M ≤ 2.
func TestKShapes(t *testing.T) {
	seed := uint64(1)
	emulated := testing.Short() && os.Getenv("KTUNE_TEST_EXEC") != ""
	for _, dt := range kDTypes {
		for _, m := range []int{1, 2, 3, 4, 5, 12, 13, 25} {
			for _, nk := range [][2]int{{1, 1}, {15, 31}, {17, 257}, {40, 300}, {63, 513}, {64, 256}, {200, 1000}} {
				s := kernel.MakeShape(shapeKeys, m, nk[0], nk[1])
				if !sampled(int(seed)) || emulated && nk[1] == 1000 && m > 2 {
					seed++
					continue
				}
				threadCounts := shapeThreads(seed)
				for _, op := range allOps {
					for _, v := range kernel.Candidates(op, dt, []kernel.Class{kernel.ClassF32, kernel.ClassInt8Act, kernel.ClassBF16Act}) {
						if emulatedPortable(v) {
							continue
						}
						for _, threads := range threadCounts {
							checkShapeCycled(t, op, v.Name, dt, s, seed, threads, int(seed)+threads)
						}
					}
				}
				seed++
			}
		}
	}
}

// BenchmarkKDecode compares decode GEMV (m = 1) of a 32768×2304 matrix
// streamed from DRAM in each K format and its base format (q3k, q3, q4k,
// q4, q5k, q5, q6k, q6), at 1 and 2 threads, beside the read ceiling
// (op=read, same run). GB/s counts the packed weights; KTUNE_BENCH_VARIANTS
// picks the variants.
//
//	KTUNE_BENCH_VARIANTS=avx512_vnni go test ./kernels/gemm -run '^$' -bench KDecode -count 3
func BenchmarkKDecode(b *testing.B) {
	benchDecodeShapes(b, [][2]int{{32768, 2304}},
		kernel.Q3K, kernel.Q3, kernel.Q4K, kernel.Q4, kernel.Q5K, kernel.Q5, kernel.Q6K, kernel.Q6)
}

// BenchmarkKPrefill times prefill GEMM (m = 512, n = 4096, k = 2304:
// KDA's projections, weights warm in cache as BenchmarkGEMM's prefill
// cases) in each K format and its base format, at 1 and 2 threads.
//
//	KTUNE_BENCH_VARIANTS=avx512_vnni,avx2_int8 go test ./kernels/gemm -run '^$' -bench KPrefill -count 3
func BenchmarkKPrefill(b *testing.B) {
	const m, n, k = 512, 4096, 2304
	r := rand.New(rand.NewPCG(3, 4))
	x := make([]float32, m*k)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	y := make([]float32, m*n)
	s := kernel.MakeShape(shapeKeys, m, n, k)
	for _, dt := range []kernel.DType{kernel.Q3K, kernel.Q3, kernel.Q4K, kernel.Q4, kernel.Q5K, kernel.Q5, kernel.Q6K, kernel.Q6} {
		w, err := quant.Random(r, dt, n, k, false, 0.02)
		if err != nil {
			b.Fatal(err)
		}
		for _, v := range benchVariants(OpGEMM, dt) {
			for threads := 1; threads <= 2; threads++ {
				b.Run(kernel.BenchName(v, dt, s, threads, "mem=cache"), func(b *testing.B) {
					plan := kernel.Choice{Variant: v, Config: v.DefaultConfig(s, threads)}
					for b.Loop() {
						Run(plan, y, x, w, m, false)
					}
					sec := b.Elapsed().Seconds() / float64(b.N)
					b.ReportMetric(2*m*n*k/sec/1e9, "GFLOP/s")
					b.ReportMetric(sec*1e3, "ms/op")
				})
			}
		}
	}
}
