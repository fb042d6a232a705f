// Package openblas wraps OpenBLAS's cblas_sgemm for the gemm peers
// benchmark; its code builds only with -tags peers and cgo.
package openblas
