//go:build cgo && openblas

package blas

import "github.com/clawrl/clawrl/blas/internal/openblas"

// Backend names the Sgemm implementation this binary uses.
const Backend = "openblas"

func sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if k == 0 {
		// cblas leaves C alone when k is 0 only if beta is 1; match SgemmGo.
		SgemmGo(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	openblas.Sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}
