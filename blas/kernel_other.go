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

func axpy8(n8 int, alpha float32, x *float32, y *float32) {
	panic("blas: no assembly kernels on this platform")
}

func expShift8(n8 int, x *float32, shift float32) float32 {
	panic("blas: no assembly kernels on this platform")
}

func wsum32(n int, w *float32, rows *float32, ld int, out *float32) {
	panic("blas: no assembly kernels on this platform")
}

func wsum8(n int, w *float32, rows *float32, ld int, out *float32) {
	panic("blas: no assembly kernels on this platform")
}

func sumExpShift8(n8 int, x *float32, shift float32) float32 {
	panic("blas: no assembly kernels on this platform")
}

func kernOP4x24(k int, a *float32, ars int, acs int, b *float32, ldb int, out *[96]float32, acc int) {
	panic("blas: no assembly kernels on this platform")
}

func kernOP4x24C(k int, a *float32, ars int, acs int, b *float32, ldb int, c *float32, ldc int, acc int) {
	panic("blas: no assembly kernels on this platform")
}

func wsum64(n int, w *float32, rows *float32, ld int, out *float32) {
	panic("blas: no assembly kernels on this platform")
}

func wsum16(n int, w *float32, rows *float32, ld int, out *float32) {
	panic("blas: no assembly kernels on this platform")
}

func wsum16x4(n int, w *float32, ldw int, rows *float32, ld int, out *float32, ldo int) {
	panic("blas: no assembly kernels on this platform")
}

func adamw8(n8 int, p *float32, grad *float32, m *float32, v *float32, c *[8]float32) {
	panic("blas: no assembly kernels on this platform")
}

func max32(n32 int, x *float32, m float32) float32 {
	panic("blas: no assembly kernels on this platform")
}

func kern4x3C(k8 int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int) {
	panic("blas: no assembly kernels on this platform")
}

func scal8(n8 int, s float32, x *float32) {
	panic("blas: no assembly kernels on this platform")
}

func swigluBwd8(n8 int, gate *float32, up *float32, dout *float32, dgate *float32, dup *float32) {
	panic("blas: no assembly kernels on this platform")
}

func siluMul8(n8 int, out *float32, gate *float32, up *float32) int {
	panic("blas: no assembly kernels on this platform")
}
