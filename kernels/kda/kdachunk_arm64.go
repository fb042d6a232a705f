//go:build arm64 && gc && !purego

// arm64 stubs of the NEON and SVE GEMM tiles and registration of the
// NEON and SVE chunked prefills (the driver is chunkGEMM, kdachunk_gemm.go).
package kda

import (
	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/kernel"
)

// kdacGemmNEON_16 is gemmGo on nb blocks of 16 columns (n = 16·nb),
// 4-row tiles and then single rows (m, k, nb ≥ 0; any zero returns):
//
//	for i < m { for j < 16*nb { var acc float32; for p < k { acc += a[i*lda+p]·b[p*ldb+j] }; c[i*ldc+j] += alpha·acc } }
//
//go:noescape
func kdacGemmNEON_16(c *float32, ldc int, a *float32, lda int, b *float32, ldb int, m int, k int, nb int, alpha float32)

// gemmNEON is gemmFn: the NEON tiles on the whole 16-column blocks, Go
// (gemmGo) on the remaining n%16 columns. The bounds are checked here.
func gemmNEON(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, n, k int, alpha float32) {
	if m <= 0 || n <= 0 || k <= 0 {
		return
	}
	_, _, _ = c[(m-1)*ldc+n-1], a[(m-1)*lda+k-1], b[(k-1)*ldb+n-1]
	nb := n / 16
	if nb > 0 {
		kdacGemmNEON_16(&c[0], ldc, &a[0], lda, &b[0], ldb, m, k, nb, alpha)
	}
	if j := 16 * nb; j < n {
		gemmGo(c[j:], ldc, a, lda, b[j:], ldb, m, n-j, k, alpha)
	}
}

// kdacGemmSVE is gemmGo for any n, vector-length agnostic: blocks of four
// SVE vectors of columns (the last one narrower, predicated), 4-row tiles
// and then single rows (m, n, k ≥ 0; any zero returns):
//
//	for i < m { for j < n { var acc float32; for p < k { acc += a[i*lda+p]·b[p*ldb+j] }; c[i*ldc+j] += alpha·acc } }
//
//go:noescape
func kdacGemmSVE(c *float32, ldc int, a *float32, lda int, b *float32, ldb int, m int, n int, k int, alpha float32)

// gemmSVE is gemmFn: the SVE tile on all of C, no Go tail. The bounds are
// checked here.
func gemmSVE(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, n, k int, alpha float32) {
	if m <= 0 || n <= 0 || k <= 0 {
		return
	}
	_, _, _ = c[(m-1)*ldc+n-1], a[(m-1)*lda+k-1], b[(k-1)*ldb+n-1]
	kdacGemmSVE(&c[0], ldc, &a[0], lda, &b[0], ldb, m, n, k, alpha)
}

func init() {
	register(OpPrefill, kernel.Variant{Name: "neon_chunk", Doc: "chunked WY/UT form with its products in hand-written NEON 4×16 GEMM tiles", Priority: 18,
		Requires: cpu.NewSet(cpu.ASIMD), Threaded: true, Params: []kernel.Param{chunkParam}}, chunkGEMM(gemmNEON))
	// Above neon_chunk (its tile, four vectors of columns, is at least as
	// wide and takes a quarter of the a loads), below the neon and sve
	// recurrences until the chunked form is measured on hardware.
	register(OpPrefill, kernel.Variant{Name: "sve_chunk", Doc: "chunked WY/UT form with its products in a hand-written SVE GEMM tile (vector-length agnostic: 4 rows × 4 vectors, predicated column tail)", Priority: 19,
		Requires: cpu.NewSet(cpu.SVE), Threaded: true, Params: []kernel.Param{chunkParam}}, chunkGEMM(gemmSVE))
}
