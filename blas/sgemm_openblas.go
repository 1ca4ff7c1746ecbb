//go:build cgo && openblas

package blas

import "github.com/clawrl/clawrl/blas/internal/openblas"

// Backend names the Sgemm implementation this binary uses.
const Backend = "openblas"

// sgemm sends x·Wᵀ products (A as stored, B transposed: every linear
// layer's forward, in the model and in the trainer, LoRA included) to the
// pure-Go kernels whatever m is, and the backward's dy·W and dyᵀ·x to
// OpenBLAS.
//
// Why by shape and not by m: for x·Wᵀ the Go kernels win outright at
// decode sizes (BenchmarkCrossover on the 2-core Zen 4 box, 1024→3072:
// 23 against 1.1 GFLOP/s at m = 1, 25 against 10 at m = 16, even at
// m = 64) and OpenBLAS only pulls ahead from m ≈ 128 (62 against 51). But a
// row must come out with the same bits whatever batch it is in — decoded
// alone, with 15 other sequences, prefilled, or recomputed by the trainer
// — and the two libraries sum in different orders (about 90 % of elements
// differ in the last bit), so a crossover on m would compute one row two
// ways. OpenBLAS alone does not promise it either: a single row at k = 64
// (the tiny model) comes out differently from the same row in a batch. The
// Go kernels do (see gemmNTRangeAVX2), and in the model the prefill cost
// is small: a whole prefill on the Qwen3-0.6B shape was no faster with
// OpenBLAS (BENCHMARKS.md). The backward's products have no such contract
// and OpenBLAS is 1.5–2× faster there from m ≈ 8.
func sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if !transA && transB {
		SgemmGo(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	backendSgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// backendSgemm is OpenBLAS's sgemm for every shape.
func backendSgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if k == 0 {
		// cblas leaves C alone when k is 0 only if beta is 1; match SgemmGo.
		SgemmGo(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	openblas.Sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}
