//go:build !amd64 || purego

package blas

const useBF16AVX2 = false

func kernBF16x8x48AVX2(kp int, a *float32, lda int, bw *float32, c *float32, ldc int, acc int) int {
	panic("blas: no AVX2 bf16 kernel")
}

func widenPanelBF16AVX2(bw *float32, bp *uint32, kp int) {
	panic("blas: no AVX2 bf16 kernel")
}

func setUseBF16AVX2(bool) {}
