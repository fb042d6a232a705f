//go:build amd64 && gc && !purego

// amd64 registration of the generated RMSNorm row kernels.
package norm

import (
	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/kernel"
)

func init() {
	registerRow(kernel.Variant{Name: "avx2", Doc: "generated AVX2+FMA row kernel", Priority: 20,
		Requires: cpu.NewSet(cpu.AVX2, cpu.FMA)}, rmsRowAVX2)
	registerRow(kernel.Variant{Name: "avx512", Doc: "generated AVX-512 row kernel", Priority: 30,
		Requires: cpu.NewSet(cpu.AVX512F)}, rmsRowAVX512)
}

// rmsRowAVX2: the bulk in sumSquaresAVX2/scaleMulAVX2, the tail (< 8) in Go.
func rmsRowAVX2(dst, x, w []float32, eps float32) {
	n := len(x)
	dst, w = dst[:n], w[:n]
	ss := sumSquaresAVX2(x)
	for i := n &^ 7; i < n; i++ {
		ss += x[i] * x[i]
	}
	scale := rmsScale(ss, n, eps)
	scaleMulAVX2(dst, x, w, scale)
	for i := n &^ 7; i < n; i++ {
		dst[i] = x[i] * scale * w[i]
	}
}

// rmsRowAVX512: the bulk in sumSquaresAVX512/scaleMulAVX512, the tail (< 16) in Go.
func rmsRowAVX512(dst, x, w []float32, eps float32) {
	n := len(x)
	dst, w = dst[:n], w[:n]
	ss := sumSquaresAVX512(x)
	for i := n &^ 15; i < n; i++ {
		ss += x[i] * x[i]
	}
	scale := rmsScale(ss, n, eps)
	scaleMulAVX512(dst, x, w, scale)
	for i := n &^ 15; i < n; i++ {
		dst[i] = x[i] * scale * w[i]
	}
}
