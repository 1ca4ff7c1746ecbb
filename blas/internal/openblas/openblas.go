//go:build cgo && openblas

// Package openblas calls OpenBLAS's cblas_sgemm through cgo. It is its own
// package because a package with cgo cannot also hold Go assembly, and
// package blas has both the pure-Go assembly kernels and this backend.
package openblas

/*
#cgo pkg-config: openblas
#include <cblas.h>
*/
import "C"

// Sgemm is cblas_sgemm for row-major float32 matrices; the caller has
// checked the arguments and that k > 0.
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	ta, tb := C.enum_CBLAS_TRANSPOSE(C.CblasNoTrans), C.enum_CBLAS_TRANSPOSE(C.CblasNoTrans)
	if transA {
		ta = C.CblasTrans
	}
	if transB {
		tb = C.CblasTrans
	}
	C.cblas_sgemm(C.CblasRowMajor, ta, tb, C.blasint(m), C.blasint(n), C.blasint(k),
		C.float(alpha), (*C.float)(&a[0]), C.blasint(lda), (*C.float)(&b[0]), C.blasint(ldb),
		C.float(beta), (*C.float)(&c[0]), C.blasint(ldc))
}
