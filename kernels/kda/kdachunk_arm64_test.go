//go:build arm64 && gc && !purego

package kda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/kerneltest"
)

// checkGemm holds gemm to gemmGo at every m × n × k, with leading
// dimensions above the widths: the padding of a and b is NaN (a tile that
// reads it into a result fails), that of c random (a tile that writes it
// fails), and c sits between NaN guard cells.
func checkGemm(t *testing.T, gemm gemmFn, ms, ns, ks []int) {
	r := rand.New(rand.NewPCG(1, 2))
	nan := float32(math.NaN())
	matrix := func(rows, cols, ld int, pad float32) []float32 {
		x := make([]float32, max(rows*ld, 1))
		for i := range x {
			x[i] = pad
			if i%ld < cols {
				x[i] = float32(r.NormFloat64())
			}
		}
		return x
	}
	for _, m := range ms {
		for _, n := range ns {
			for _, k := range ks {
				lda, ldb, ldc := k+3, n+5, n+2
				a, b := matrix(m, k, lda, nan), matrix(k, n, ldb, nan)
				c0 := matrix(m, ldc, ldc, 0)
				want := append([]float32(nil), c0...)
				gemmGo(want, ldc, a, lda, b, ldb, m, n, k, -0.75)
				cg := kerneltest.NewGuarded(len(c0), (m+n)%4)
				copy(cg.Data(), c0)
				gemm(cg.Data(), ldc, a, lda, b, ldb, m, n, k, -0.75)
				cg.CheckGuards(t)
				kerneltest.Close(t, fmt.Sprintf("m=%d n=%d k=%d", m, n, k), cg.Data(), want, tolerance(kernel.ClassF32, nil))
			}
		}
	}
}

// TestGemmNEON: the NEON tile at sizes around the 4-row and 16-column
// tiles.
func TestGemmNEON(t *testing.T) {
	checkGemm(t, gemmNEON, []int{0, 1, 3, 4, 5, 8, 9}, []int{0, 1, 15, 16, 17, 33, 48}, []int{0, 1, 2, 7, 16})
}

// TestGemmSVE: the SVE tile at sizes around the 4-row tiles, the four-step
// k loop and this machine's vector length (one vector, a block of four, a
// block and a part), and at the driver's widths.
func TestGemmSVE(t *testing.T) {
	kerneltest.Features(t, cpu.NewSet(cpu.SVE))
	lanes := cpu.Get().SVEBits / 32
	t.Logf("SVE %d bits: %d columns per vector", cpu.Get().SVEBits, lanes)
	ns := []int{0, 1, lanes - 1, lanes + 1, 4*lanes - 1, 4 * lanes, 4*lanes + 1, 8*lanes + 3, 16, 48, 128}
	checkGemm(t, gemmSVE, []int{0, 1, 2, 4, 5, 7, 9}, ns, []int{0, 1, 3, 4, 5, 9, 16})
}
