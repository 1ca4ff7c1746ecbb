//go:build !(cgo && openblas)

package blas

// Backend names the Sgemm implementation this binary uses.
const Backend = "go"

func sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	SgemmGo(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// backendSgemm is the backend's own sgemm for every shape: SgemmGo here.
func backendSgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	SgemmGo(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}
