//go:build !amd64 || purego

package blas

// use512 is a variable only so tests can set it as on amd64.
var use512 = false

func kern4x6C512(k8 int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int) {
	panic("blas: no assembly kernels on this platform")
}

func kernOP4x48C512(k int, a *float32, ars int, acs int, b *float32, ldb int, c *float32, ldc int, acc int) {
	panic("blas: no assembly kernels on this platform")
}

var usePack512 = false

func kern4x8P512(k8 int, ap *float32, b *float32, ldb int, c *float32, ldc int) {
	panic("blas: no assembly kernels on this platform")
}

func kernOP8x48P512(k int, a *float32, ars int, acs int, bp *float32, c *float32, ldc int, acc int) {
	panic("blas: no assembly kernels on this platform")
}

func kernOP16x16T512(k int, a *float32, acs int, b *float32, ldb int, c *float32, ldc int, acc int) {
	panic("blas: no assembly kernels on this platform")
}

func copyRows48(n int, src *float32, lds int, dst *float32) {
	panic("blas: no assembly kernels on this platform")
}

func packA4Group(chunks int, a *float32, lda int, dst *float32) {
	panic("blas: no assembly kernels on this platform")
}

func kern4x8P512S(k8 int, ap *float32, b *float32, ldb int, c *float32, ldc int, alpha float32, beta float32) {
	panic("blas: no assembly kernels on this platform")
}

func kernNT3x16(k8 int, a *float32, lda int, bt *float32, c *float32, ldc int) {
	panic("blas: no assembly kernels on this platform")
}

func kernNT1x16(k8 int, a *float32, bt *float32, c *float32) {
	panic("blas: no assembly kernels on this platform")
}

func kern6x8P512(k8 int, ap *float32, b *float32, ldb int, c *float32, ldc int) {
	panic("blas: no assembly kernels on this platform")
}

func packA6Group(chunks int, a *float32, lda int, dst *float32) {
	panic("blas: no assembly kernels on this platform")
}

func kernNTS16(ns int, a *float32, bt *float32, c *float32, alpha float32, beta float32) {
	panic("blas: no assembly kernels on this platform")
}
