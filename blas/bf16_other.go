//go:build !amd64 || purego

package blas

const useBF16 = false

func kernBF16x8x48(kp int, a *uint16, lda int, bp *uint32, c *float32, ldc int, acc int) {
	panic("blas: no bf16 kernel")
}

func roundBF16x16(n int, src *float32, dst *uint16) { panic("blas: no bf16 kernel") }

func setUseBF16(bool) {}

func packBF16x16(n int, lo, hi *float32, dst *uint32) { panic("blas: no bf16 kernel") }
