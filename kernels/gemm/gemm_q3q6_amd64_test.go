//go:build amd64 && gc && !purego

package gemm

import (
	"testing"

	"github.com/ktune/ktune/internal/kernel"
)

// amdQ3Q6Variants are the amd64 variants with Q3 and Q6 kernels (avx_vnni
// runs only on AVX-VNNI hardware, its test twins by TestAVXVNNITwinsExact
// on any AVX2 machine).
var amdQ3Q6Variants = []string{"avx2", "avx2_int8", "avx512", "avx512_vnni", "avx_vnni"}

// TestQ3Q6ShapesAMD64: testQ3Q6Shapes over the amd64 variants.
func TestQ3Q6ShapesAMD64(t *testing.T) {
	testQ3Q6Shapes(t, amdQ3Q6Variants, kernel.Q3, kernel.Q6)
}
