//go:build peers && cgo

// Peers of the f32 gemm, timed in the same run as BenchmarkGEMM's gemm
// cases and at the same shapes: OpenBLAS sgemm (cgo, libopenblas-dev) and
// gonum blas32.Gemm, single-threaded, reporting GFLOP/s:
//
//	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE \
//	    go test -tags peers -run '^$' -bench 'Peers|GEMM/op=gemm/dtype=f32' ./kernels/gemm/
//
// OPENBLAS_CORETYPE is set in this environment (to Haswell), which forces
// OpenBLAS's AVX2 kernel, and OPENBLAS_L2_SIZE overrides its blocking:
// unset both in the benchmark command only (as above), so that OpenBLAS
// detects the CPU and runs its AVX-512 kernel, the fair comparison.
package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/ktune/ktune/kernels/gemm/internal/openblas"
)

// peerShapes are the f32 gemm shapes of BenchmarkGEMM: 1024³ and M = 512
// at Kimi Linear's projections.
func peerShapes() [][3]int {
	out := [][3]int{{1024, 1024, 1024}}
	for _, nk := range kimiNK {
		out = append(out, [3]int{512, nk[0], nk[1]})
	}
	return out
}

type peer struct {
	name string
	run  func(y, x, w []float32, m, n, k int)
}

var peers = []peer{
	{"openblas", func(y, x, w []float32, m, n, k int) { openblas.SGEMM(y, x, w, m, n, k, 1) }},
	{"gonum", func(y, x, w []float32, m, n, k int) {
		blas32.Gemm(blas.NoTrans, blas.Trans, 1,
			blas32.General{Rows: m, Cols: k, Stride: k, Data: x},
			blas32.General{Rows: n, Cols: k, Stride: k, Data: w},
			0, blas32.General{Rows: m, Cols: n, Stride: n, Data: y})
	}},
}

func BenchmarkPeers(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 7))
	for _, sh := range peerShapes() {
		m, n, k := sh[0], sh[1], sh[2]
		x, w, y := make([]float32, m*k), make([]float32, n*k), make([]float32, m*n)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		for i := range w {
			w[i] = float32(r.NormFloat64() * 0.02)
		}
		for _, p := range peers {
			b.Run(fmt.Sprintf("op=gemm/dtype=f32/variant=%s/m=%d/n=%d/k=%d/threads=1", p.name, m, n, k), func(b *testing.B) {
				clear(y)
				p.run(y, x, w, m, n, k)
				checkSample(b, r, y, x, w, m, n, k)
				for b.Loop() {
					p.run(y, x, w, m, n, k)
				}
				b.ReportMetric(2*float64(m)*float64(n)*float64(k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// checkSample compares 256 random outputs with float64 dot products.
func checkSample(b *testing.B, r *rand.Rand, y, x, w []float32, m, n, k int) {
	b.Helper()
	for t := 0; t < 256; t++ {
		i, j := r.IntN(m), r.IntN(n)
		var s, mag float64
		for l := 0; l < k; l++ {
			p := float64(x[i*k+l]) * float64(w[j*k+l])
			s += p
			mag += math.Abs(p)
		}
		if d := math.Abs(float64(y[i*n+j]) - s); d > 1e-5*mag+1e-30 {
			b.Fatalf("y[%d,%d] = %v, want %v", i, j, y[i*n+j], s)
		}
	}
}
