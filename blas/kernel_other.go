//go:build !amd64 || purego

package blas

const useAVX2 = false

func kern4x3(k8 int, a *float32, lda int, b *float32, ldb int, out *[12]float32) {
	panic("blas: no assembly kernels on this platform")
}

func kern1x4(k8 int, a *float32, b *float32, ldb int, out *[4]float32) {
	panic("blas: no assembly kernels on this platform")
}

func kern1x4bf16(k8 int, a *float32, b *uint16, ldb int, out *[4]float32) {
	panic("blas: no assembly kernels on this platform")
}

func kern1x1(k8 int, a *float32, b *float32) float32 {
	panic("blas: no assembly kernels on this platform")
}
