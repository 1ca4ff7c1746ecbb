//go:build !amd64 || purego

package blas

const useBF16AVX2 = false

func kernBF16x8x48AVX2(kp int, a *uint16, lda int, bp *uint32, c *float32, ldc int, acc int) int {
	panic("blas: no AVX2 bf16 kernel")
}

func setUseBF16AVX2(bool) {}
