//go:build arm64 && gc && !purego

package gemm

import (
	"testing"

	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
)

// armQ3Q6Variants are the arm64 variants with Q3, Q6, Q2, Q5 and K-format
// kernels.
var armQ3Q6Variants = []string{"neon_dotprod", "sve_dotprod"}

// TestQ3Q6ShapesARM64: testQ3Q6Shapes over the arm64 variants (their nb
// parameter cycled through 1, 4, 16 and 64 panels per block).
func TestQ3Q6ShapesARM64(t *testing.T) {
	testQ3Q6Shapes(t, armQ3Q6Variants, kernel.Q3, kernel.Q6)
}

// TestQ2ShapesARM64: the same shapes, threads, ops and nb values over the
// arm64 Q2 kernels (TestQ2Shapes runs each variant's default
// configuration and not gateup).
func TestQ2ShapesARM64(t *testing.T) { testQ3Q6Shapes(t, armQ3Q6Variants, kernel.Q2) }

// TestQ5ShapesARM64: the same over the arm64 Q5 kernels (TestQ5Shapes
// samples its shapes under -short and runs each variant's default nb).
func TestQ5ShapesARM64(t *testing.T) { testQ3Q6Shapes(t, armQ3Q6Variants, kernel.Q5) }

// TestKShapesARM64: the same over the arm64 K-format kernels (Q3K…Q6K:
// K = 257 and 288 cross a super-block; TestKShapes adds 513 and 1000).
func TestKShapesARM64(t *testing.T) { testQ3Q6Shapes(t, armQ3Q6Variants, kDTypes...) }

// TestFastRepackARM64: on arm64, GGUF fast mode packs Q6_K as Q6 and Q5_0
// as Q5 where the NEON dot product or SVE serves them, and neither once
// both are masked.
func TestFastRepackARM64(t *testing.T) {
	fast := func() bool { return cpu.Has(cpu.ASIMDDP) || cpu.Has(cpu.SVE) }
	for _, c := range []struct {
		name string
		fn   func() bool
	}{{"FastQ6", quant.FastQ6}, {"FastQ5", quant.FastQ5}} {
		if got, want := c.fn(), fast(); got != want {
			t.Errorf("%s() = %v with asimddp %v, sve %v", c.name, got, cpu.Has(cpu.ASIMDDP), cpu.Has(cpu.SVE))
		}
		for _, f := range []cpu.Feature{cpu.ASIMDDP, cpu.SVE} {
			restore := cpu.Disable(f)
			if got, want := c.fn(), fast(); got != want {
				t.Errorf("%s() = %v with %v disabled (want %v)", c.name, got, f, want)
			}
			restore()
		}
		restore := cpu.Disable(cpu.ASIMDDP, cpu.SVE)
		if c.fn() {
			t.Errorf("%s() with asimddp and sve disabled", c.name)
		}
		restore()
	}
}
