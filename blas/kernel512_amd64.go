//go:build !purego

package blas

import (
	"os"

	"golang.org/x/sys/cpu"
)

// use512 selects the AVX-512 training kernels (kernel512_amd64.s), which
// compute the AVX2 kernels' sums bitwise at twice the width. CLAWRL_AVX512=0
// turns them off (to compare).
var use512 = useAVX2 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ && os.Getenv("CLAWRL_AVX512") != "0"

//go:noescape
func kern4x6C512(k8 int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int)

//go:noescape
func kernOP4x48C512(k int, a *float32, ars int, acs int, b *float32, ldb int, c *float32, ldc int, acc int)

// usePack512 adds the packed-A forward kernel (kern4x8P512), which also
// needs AVX-512VL (its epilogue stores a Y16+ register).
var usePack512 = use512 && cpu.X86.HasAVX512VL

//go:noescape
func kern4x8P512(k8 int, ap *float32, b *float32, ldb int, c *float32, ldc int)

//go:noescape
func kernOP8x48P512(k int, a *float32, ars int, acs int, bp *float32, c *float32, ldc int, acc int)

//go:noescape
func kernOP16x16T512(k int, a *float32, acs int, b *float32, ldb int, c *float32, ldc int, acc int)

//go:noescape
func copyRows48(n int, src *float32, lds int, dst *float32)

//go:noescape
func packA4Group(chunks int, a *float32, lda int, dst *float32)

//go:noescape
func kern4x8P512S(k8 int, ap *float32, b *float32, ldb int, c *float32, ldc int, alpha float32, beta float32)

//go:noescape
func kernNT3x16(k8 int, a *float32, lda int, bt *float32, c *float32, ldc int)

//go:noescape
func kernNT1x16(k8 int, a *float32, bt *float32, c *float32)

//go:noescape
func kern6x8P512(k8 int, ap *float32, b *float32, ldb int, c *float32, ldc int)

//go:noescape
func packA6Group(chunks int, a *float32, lda int, dst *float32)

//go:noescape
func kernNTS16(ns int, a *float32, bt *float32, c *float32, alpha float32, beta float32)
