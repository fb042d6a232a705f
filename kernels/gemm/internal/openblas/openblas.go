//go:build peers && cgo

// OpenBLAS through cgo, for kernels/gemm/peers_test.go. A package of its
// own because a package using cgo cannot hold Go assembly; the peers tag
// keeps it (and the libopenblas-dev dependency) out of every normal build.
package openblas

/*
#cgo LDFLAGS: -lopenblas
#include <cblas.h>
void openblas_set_num_threads(int);
*/
import "C"

// SGEMM computes Y [m×n] = X [m×k]·Wᵀ (W [n×k], all row-major) with
// cblas_sgemm on the given number of OpenBLAS threads.
func SGEMM(y, x, w []float32, m, n, k, threads int) {
	if len(x) < m*k || len(w) < n*k || len(y) < m*n {
		panic("openblas: short buffers")
	}
	C.openblas_set_num_threads(C.int(threads))
	C.cblas_sgemm(C.CblasRowMajor, C.CblasNoTrans, C.CblasTrans, C.blasint(m), C.blasint(n), C.blasint(k),
		1, (*C.float)(&x[0]), C.blasint(k), (*C.float)(&w[0]), C.blasint(k), 0, (*C.float)(&y[0]), C.blasint(n))
}
