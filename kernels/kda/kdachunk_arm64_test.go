//go:build arm64 && gc && !purego

package kda

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/kerneltest"
)

// TestGemmNEON: the NEON tile against gemmGo at sizes around the 4-row
// and 16-column tiles, with leading dimensions above the widths and the
// output between NaN guard cells.
func TestGemmNEON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	fill := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		return x
	}
	for _, m := range []int{0, 1, 3, 4, 5, 8, 9} {
		for _, n := range []int{0, 1, 15, 16, 17, 33, 48} {
			for _, k := range []int{0, 1, 2, 7, 16} {
				lda, ldb, ldc := k+3, n+5, n+2
				a, b := fill(max(m*lda, 1)), fill(max(k*ldb, 1))
				c0 := fill(max(m*ldc, 1))
				want := append([]float32(nil), c0...)
				gemmGo(want, ldc, a, lda, b, ldb, m, n, k, -0.75)
				cg := kerneltest.NewGuarded(len(c0), (m+n)%4)
				copy(cg.Data(), c0)
				gemmNEON(cg.Data(), ldc, a, lda, b, ldb, m, n, k, -0.75)
				cg.CheckGuards(t)
				kerneltest.Close(t, fmt.Sprintf("m=%d n=%d k=%d", m, n, k), cg.Data(), want, tolerance(kernel.ClassF32, nil))
			}
		}
	}
}
