//go:build !purego

#include "textflag.h"

// Horizontal sum of the 8 lanes of Y register acc (X alias xacc) into one
// float32 stored at off(BX). Clobbers X15.
#define HSUM(acc, xacc, off) \
	VEXTRACTF128 $1, acc, X15; \
	VADDPS X15, xacc, xacc; \
	VHADDPS xacc, xacc, xacc; \
	VHADDPS xacc, xacc, xacc; \
	VMOVSS xacc, off(BX)

// func kern4x3(k8 int, a *float32, lda int, b *float32, ldb int, out *[12]float32)
// out[3r+q] = dot(a row r, b row q) over the first k8 elements (k8 % 8 == 0,
// k8 > 0); lda and ldb are row strides in elements. 12 accumulators, 3 B
// rows and 1 A row in the 16 YMM registers.
TEXT ·kern4x3(SB), NOSPLIT, $0-48
	MOVQ k8+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R8
	MOVQ b+24(FP), DI
	MOVQ ldb+32(FP), R9
	MOVQ out+40(FP), BX
	SHLQ $2, R8
	SHLQ $2, R9
	LEAQ (SI)(R8*1), R10
	LEAQ (R10)(R8*1), R11
	LEAQ (R11)(R8*1), R12
	LEAQ (DI)(R9*1), R13
	LEAQ (R13)(R9*1), R14
	SHRQ $3, CX
	XORQ AX, AX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11

loop4x3:
	VMOVUPS (DI)(AX*1), Y12
	VMOVUPS (R13)(AX*1), Y13
	VMOVUPS (R14)(AX*1), Y14
	VMOVUPS (SI)(AX*1), Y15
	VFMADD231PS Y12, Y15, Y0
	VFMADD231PS Y13, Y15, Y1
	VFMADD231PS Y14, Y15, Y2
	VMOVUPS (R10)(AX*1), Y15
	VFMADD231PS Y12, Y15, Y3
	VFMADD231PS Y13, Y15, Y4
	VFMADD231PS Y14, Y15, Y5
	VMOVUPS (R11)(AX*1), Y15
	VFMADD231PS Y12, Y15, Y6
	VFMADD231PS Y13, Y15, Y7
	VFMADD231PS Y14, Y15, Y8
	VMOVUPS (R12)(AX*1), Y15
	VFMADD231PS Y12, Y15, Y9
	VFMADD231PS Y13, Y15, Y10
	VFMADD231PS Y14, Y15, Y11
	ADDQ $32, AX
	DECQ CX
	JNZ loop4x3

	HSUM(Y0, X0, 0)
	HSUM(Y1, X1, 4)
	HSUM(Y2, X2, 8)
	HSUM(Y3, X3, 12)
	HSUM(Y4, X4, 16)
	HSUM(Y5, X5, 20)
	HSUM(Y6, X6, 24)
	HSUM(Y7, X7, 28)
	HSUM(Y8, X8, 32)
	HSUM(Y9, X9, 36)
	HSUM(Y10, X10, 40)
	HSUM(Y11, X11, 44)
	VZEROUPPER
	RET

// func kern1x4(k8 int, a *float32, b *float32, ldb int, out *[4]float32)
// out[q] = dot(a, b row q) over the first k8 elements (k8 % 8 == 0, k8 > 0).
// One accumulator per output, like kern4x3, so that every element of C is
// summed in the same order whichever kernel computes it: a row's result does
// not depend on the rows batched with it.
TEXT ·kern1x4(SB), NOSPLIT, $0-40
	MOVQ k8+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DI
	MOVQ ldb+24(FP), R9
	MOVQ out+32(FP), BX
	SHLQ $2, R9
	LEAQ (DI)(R9*1), R13
	LEAQ (R13)(R9*1), R14
	LEAQ (R14)(R9*1), R15
	SHRQ $3, CX
	XORQ AX, AX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

loop1x4:
	VMOVUPS (SI)(AX*1), Y8
	VMOVUPS (DI)(AX*1), Y12
	VMOVUPS (R13)(AX*1), Y13
	VMOVUPS (R14)(AX*1), Y14
	VMOVUPS (R15)(AX*1), Y15
	VFMADD231PS Y12, Y8, Y0
	VFMADD231PS Y13, Y8, Y1
	VFMADD231PS Y14, Y8, Y2
	VFMADD231PS Y15, Y8, Y3
	ADDQ $32, AX
	DECQ CX
	JNZ loop1x4

	HSUM(Y0, X0, 0)
	HSUM(Y1, X1, 4)
	HSUM(Y2, X2, 8)
	HSUM(Y3, X3, 12)
	VZEROUPPER
	RET

// func kern1x1(k8 int, a *float32, b *float32) float32
// dot(a, b) over the first k8 elements, in the same order as the other
// kernels (for the columns left over from a tile).
TEXT ·kern1x1(SB), NOSPLIT, $0-28
	MOVQ k8+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DI
	SHRQ $3, CX
	XORQ AX, AX
	VXORPS Y0, Y0, Y0

loop1x1:
	VMOVUPS (SI)(AX*1), Y8
	VMOVUPS (DI)(AX*1), Y12
	VFMADD231PS Y12, Y8, Y0
	ADDQ $32, AX
	DECQ CX
	JNZ loop1x1

	VEXTRACTF128 $1, Y0, X15
	VADDPS X15, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// func kern1x4bf16(k8 int, a *float32, b *uint16, ldb int, out *[4]float32)
// out[q] = dot(a, widen(b row q)) over the first k8 elements (k8 % 8 == 0,
// k8 > 0), b holding bfloat16 bits: zero-extend to 32 bits and shift left
// 16 to get the float32 (exact).
TEXT ·kern1x4bf16(SB), NOSPLIT, $0-40
	MOVQ k8+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DI
	MOVQ ldb+24(FP), R9
	MOVQ out+32(FP), BX
	SHLQ $1, R9
	LEAQ (DI)(R9*1), R13
	LEAQ (R13)(R9*1), R14
	LEAQ (R14)(R9*1), R15
	SHRQ $3, CX
	XORQ AX, AX
	XORQ DX, DX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

loopbf16:
	VMOVUPS (SI)(AX*1), Y8
	VPMOVZXWD (DI)(DX*1), Y12
	VPMOVZXWD (R13)(DX*1), Y13
	VPMOVZXWD (R14)(DX*1), Y14
	VPMOVZXWD (R15)(DX*1), Y15
	VPSLLD $16, Y12, Y12
	VPSLLD $16, Y13, Y13
	VPSLLD $16, Y14, Y14
	VPSLLD $16, Y15, Y15
	VFMADD231PS Y12, Y8, Y0
	VFMADD231PS Y13, Y8, Y1
	VFMADD231PS Y14, Y8, Y2
	VFMADD231PS Y15, Y8, Y3
	ADDQ $32, AX
	ADDQ $16, DX
	DECQ CX
	JNZ loopbf16

	HSUM(Y0, X0, 0)
	HSUM(Y1, X1, 4)
	HSUM(Y2, X2, 8)
	HSUM(Y3, X3, 12)
	VZEROUPPER
	RET

// func axpy8(n8 int, alpha float32, x *float32, y *float32)
// y[i] += alpha·x[i] (fused) for the first n8 elements (n8 % 8 == 0, n8 > 0).
TEXT ·axpy8(SB), NOSPLIT, $0-32
	MOVQ n8+0(FP), CX
	VBROADCASTSS alpha+8(FP), Y0
	MOVQ x+16(FP), SI
	MOVQ y+24(FP), DI
	SHRQ $3, CX
	XORQ AX, AX

loopaxpy:
	VMOVUPS (SI)(AX*1), Y1
	VMOVUPS (DI)(AX*1), Y2
	VFMADD231PS Y1, Y0, Y2
	VMOVUPS Y2, (DI)(AX*1)
	ADDQ $32, AX
	DECQ CX
	JNZ loopaxpy
	VZEROUPPER
	RET

// Constants for expShift8 (Cephes expf).
DATA expconst<>+0(SB)/4, $0x3fb8aa3b   // log2(e)
DATA expconst<>+4(SB)/4, $0x3f318000   // C1 = 0.693359375
DATA expconst<>+8(SB)/4, $0xb95e8083   // C2 = -2.12194440e-4
DATA expconst<>+12(SB)/4, $0x394faaee  // p0 1.9875691500e-4
DATA expconst<>+16(SB)/4, $0x3ab743ce  // p1 1.3981999507e-3
DATA expconst<>+20(SB)/4, $0x3c088908  // p2 8.3334519073e-3
DATA expconst<>+24(SB)/4, $0x3d2aa9c1  // p3 4.1665795894e-2
DATA expconst<>+28(SB)/4, $0x3e2aaaaa  // p4 1.6666665459e-1
DATA expconst<>+32(SB)/4, $0x3f000000  // p5 0.5
DATA expconst<>+36(SB)/4, $0x3f800000  // 1
DATA expconst<>+40(SB)/4, $0xc2aeac50  // -87.33654 (lowest argument kept normal)
DATA expconst<>+44(SB)/4, $0x0000007f  // 127
GLOBL expconst<>(SB), RODATA|NOPTR, $48

// func expShift8(n8 int, x *float32, shift float32) float32
// x[i] = exp(x[i] − shift) for i < n8 (n8 % 8 == 0, n8 > 0), arguments below
// −87.3 clamped there; returns the sum of the results. For softmax, where
// every argument is ≤ 0.
TEXT ·expShift8(SB), NOSPLIT, $0-28
	MOVQ n8+0(FP), CX
	MOVQ x+8(FP), SI
	VBROADCASTSS shift+16(FP), Y15
	VBROADCASTSS expconst<>+0(SB), Y14
	VBROADCASTSS expconst<>+4(SB), Y13
	VBROADCASTSS expconst<>+8(SB), Y12
	VBROADCASTSS expconst<>+36(SB), Y11
	VBROADCASTSS expconst<>+40(SB), Y10
	VBROADCASTSS expconst<>+32(SB), Y9
	SHRQ $3, CX
	XORQ AX, AX
	VXORPS Y0, Y0, Y0

loopexp:
	VMOVUPS (SI)(AX*1), Y1
	VSUBPS Y15, Y1, Y1              // t = x − shift
	VMAXPS Y10, Y1, Y1              // clamp
	VMOVAPS Y1, Y2
	VFMADD213PS Y9, Y14, Y2         // t·log2e + 0.5
	VROUNDPS $1, Y2, Y2             // n = floor(·)
	VFNMADD231PS Y13, Y2, Y1        // r = t − n·C1
	VFNMADD231PS Y12, Y2, Y1        // r −= n·C2
	VBROADCASTSS expconst<>+12(SB), Y3
	VBROADCASTSS expconst<>+16(SB), Y4
	VFMADD213PS Y4, Y1, Y3          // p0·r + p1
	VBROADCASTSS expconst<>+20(SB), Y4
	VFMADD213PS Y4, Y1, Y3          // ·r + p2
	VBROADCASTSS expconst<>+24(SB), Y4
	VFMADD213PS Y4, Y1, Y3          // ·r + p3
	VBROADCASTSS expconst<>+28(SB), Y4
	VFMADD213PS Y4, Y1, Y3          // ·r + p4
	VFMADD213PS Y9, Y1, Y3          // ·r + p5
	VMULPS Y1, Y1, Y5               // z = r²
	VFMADD213PS Y1, Y5, Y3          // y = poly·z + r
	VADDPS Y11, Y3, Y3              // + 1
	VCVTTPS2DQ Y2, Y6               // n as int32
	VPBROADCASTD expconst<>+44(SB), Y7
	VPADDD Y7, Y6, Y6
	VPSLLD $23, Y6, Y6              // 2^n
	VMULPS Y6, Y3, Y3
	VMOVUPS Y3, (SI)(AX*1)
	VADDPS Y3, Y0, Y0
	ADDQ $32, AX
	DECQ CX
	JNZ loopexp

	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// func wsum32(n int, w *float32, rows *float32, ld int, out *float32)
// out[0:32] = Σ_{p<n} w[p]·rows[p·ld : p·ld+32], each element summed in p
// order with fused multiply-adds (n > 0).
TEXT ·wsum32(SB), NOSPLIT, $0-40
	MOVQ n+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ rows+16(FP), DI
	MOVQ ld+24(FP), R9
	MOVQ out+32(FP), BX
	SHLQ $2, R9
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

loopw32:
	VBROADCASTSS (SI), Y8
	VFMADD231PS (DI), Y8, Y0
	VFMADD231PS 32(DI), Y8, Y1
	VFMADD231PS 64(DI), Y8, Y2
	VFMADD231PS 96(DI), Y8, Y3
	ADDQ $4, SI
	ADDQ R9, DI
	DECQ CX
	JNZ loopw32

	VMOVUPS Y0, (BX)
	VMOVUPS Y1, 32(BX)
	VMOVUPS Y2, 64(BX)
	VMOVUPS Y3, 96(BX)
	VZEROUPPER
	RET

// func wsum8(n int, w *float32, rows *float32, ld int, out *float32)
// out[0:8] = Σ_{p<n} w[p]·rows[p·ld : p·ld+8], in p order, fused (n > 0).
TEXT ·wsum8(SB), NOSPLIT, $0-40
	MOVQ n+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ rows+16(FP), DI
	MOVQ ld+24(FP), R9
	MOVQ out+32(FP), BX
	SHLQ $2, R9
	VXORPS Y0, Y0, Y0

loopw8:
	VBROADCASTSS (SI), Y8
	VFMADD231PS (DI), Y8, Y0
	ADDQ $4, SI
	ADDQ R9, DI
	DECQ CX
	JNZ loopw8

	VMOVUPS Y0, (BX)
	VZEROUPPER
	RET

// func sumExpShift8(n8 int, x *float32, shift float32) float32
// Σ exp(x[i] − shift) for i < n8, like expShift8 without storing.
TEXT ·sumExpShift8(SB), NOSPLIT, $0-28
	MOVQ n8+0(FP), CX
	MOVQ x+8(FP), SI
	VBROADCASTSS shift+16(FP), Y15
	VBROADCASTSS expconst<>+0(SB), Y14
	VBROADCASTSS expconst<>+4(SB), Y13
	VBROADCASTSS expconst<>+8(SB), Y12
	VBROADCASTSS expconst<>+36(SB), Y11
	VBROADCASTSS expconst<>+40(SB), Y10
	VBROADCASTSS expconst<>+32(SB), Y9
	SHRQ $3, CX
	XORQ AX, AX
	VXORPS Y0, Y0, Y0

loopsumexp:
	VMOVUPS (SI)(AX*1), Y1
	VSUBPS Y15, Y1, Y1              // t = x − shift
	VMAXPS Y10, Y1, Y1              // clamp
	VMOVAPS Y1, Y2
	VFMADD213PS Y9, Y14, Y2         // t·log2e + 0.5
	VROUNDPS $1, Y2, Y2             // n = floor(·)
	VFNMADD231PS Y13, Y2, Y1        // r = t − n·C1
	VFNMADD231PS Y12, Y2, Y1        // r −= n·C2
	VBROADCASTSS expconst<>+12(SB), Y3
	VBROADCASTSS expconst<>+16(SB), Y4
	VFMADD213PS Y4, Y1, Y3          // p0·r + p1
	VBROADCASTSS expconst<>+20(SB), Y4
	VFMADD213PS Y4, Y1, Y3          // ·r + p2
	VBROADCASTSS expconst<>+24(SB), Y4
	VFMADD213PS Y4, Y1, Y3          // ·r + p3
	VBROADCASTSS expconst<>+28(SB), Y4
	VFMADD213PS Y4, Y1, Y3          // ·r + p4
	VFMADD213PS Y9, Y1, Y3          // ·r + p5
	VMULPS Y1, Y1, Y5               // z = r²
	VFMADD213PS Y1, Y5, Y3          // y = poly·z + r
	VADDPS Y11, Y3, Y3              // + 1
	VCVTTPS2DQ Y2, Y6               // n as int32
	VPBROADCASTD expconst<>+44(SB), Y7
	VPADDD Y7, Y6, Y6
	VPSLLD $23, Y6, Y6              // 2^n
	VMULPS Y6, Y3, Y3
	VADDPS Y3, Y0, Y0
	ADDQ $32, AX
	DECQ CX
	JNZ loopsumexp

	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// func kernOP4x24(k int, a *float32, ars int, acs int, b *float32, ldb int, out *[96]float32, acc int)
// out[24r+q] (+)= Σ_{p<k} a[r·ars + p·acs] · b[p·ldb + q] for r < 4, q < 24
// (k > 0; strides in elements): a 4×24 tile of an outer-product GEMM that
// reads A through any pair of strides (A or Aᵀ) and B row-major, so neither
// needs a transposed copy. Each element is one fused multiply-add chain in p
// order; acc ≠ 0 starts the chains from out (continuing an earlier k
// block, which keeps that order), acc = 0 from zero. 12 accumulators, 3
// B vectors and 1 broadcast in the 16 YMM registers.
TEXT ·kernOP4x24(SB), NOSPLIT, $0-64
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ ars+16(FP), R8
	MOVQ acs+24(FP), R9
	MOVQ b+32(FP), DI
	MOVQ ldb+40(FP), R10
	MOVQ out+48(FP), BX
	MOVQ acc+56(FP), DX
	SHLQ $2, R8
	SHLQ $2, R9
	SHLQ $2, R10
	LEAQ (R8)(R8*2), R11
	TESTQ DX, DX
	JZ opzero
	VMOVUPS 0(BX), Y0
	VMOVUPS 32(BX), Y1
	VMOVUPS 64(BX), Y2
	VMOVUPS 96(BX), Y3
	VMOVUPS 128(BX), Y4
	VMOVUPS 160(BX), Y5
	VMOVUPS 192(BX), Y6
	VMOVUPS 224(BX), Y7
	VMOVUPS 256(BX), Y8
	VMOVUPS 288(BX), Y9
	VMOVUPS 320(BX), Y10
	VMOVUPS 352(BX), Y11
	JMP oploop

opzero:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11

oploop:
	VMOVUPS (DI), Y12
	VMOVUPS 32(DI), Y13
	VMOVUPS 64(DI), Y14
	VBROADCASTSS (SI), Y15
	VFMADD231PS Y12, Y15, Y0
	VFMADD231PS Y13, Y15, Y1
	VFMADD231PS Y14, Y15, Y2
	VBROADCASTSS (SI)(R8*1), Y15
	VFMADD231PS Y12, Y15, Y3
	VFMADD231PS Y13, Y15, Y4
	VFMADD231PS Y14, Y15, Y5
	VBROADCASTSS (SI)(R8*2), Y15
	VFMADD231PS Y12, Y15, Y6
	VFMADD231PS Y13, Y15, Y7
	VFMADD231PS Y14, Y15, Y8
	VBROADCASTSS (SI)(R11*1), Y15
	VFMADD231PS Y12, Y15, Y9
	VFMADD231PS Y13, Y15, Y10
	VFMADD231PS Y14, Y15, Y11
	ADDQ R9, SI
	ADDQ R10, DI
	DECQ CX
	JNZ oploop

	VMOVUPS Y0, 0(BX)
	VMOVUPS Y1, 32(BX)
	VMOVUPS Y2, 64(BX)
	VMOVUPS Y3, 96(BX)
	VMOVUPS Y4, 128(BX)
	VMOVUPS Y5, 160(BX)
	VMOVUPS Y6, 192(BX)
	VMOVUPS Y7, 224(BX)
	VMOVUPS Y8, 256(BX)
	VMOVUPS Y9, 288(BX)
	VMOVUPS Y10, 320(BX)
	VMOVUPS Y11, 352(BX)
	VZEROUPPER
	RET

// func kernOP4x24C(k int, a *float32, ars int, acs int, b *float32, ldb int, c *float32, ldc int, acc int)
// kernOP4x24 writing its tile straight into C (row stride ldc elements):
// C[r, q] = Σ_{p<k} a[r·ars + p·acs] · b[p·ldb + q], the chain starting from
// C[r, q] itself when acc ≠ 0 (C += A·B, or a later k block), from zero
// otherwise. For alpha = 1, beta ∈ {0, 1}: no tile buffer, no store loop.
TEXT ·kernOP4x24C(SB), NOSPLIT, $0-72
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ ars+16(FP), R8
	MOVQ acs+24(FP), R9
	MOVQ b+32(FP), DI
	MOVQ ldb+40(FP), R10
	MOVQ c+48(FP), BX
	MOVQ ldc+56(FP), R12
	MOVQ acc+64(FP), DX
	SHLQ $2, R8
	SHLQ $2, R9
	SHLQ $2, R10
	SHLQ $2, R12
	LEAQ (R8)(R8*2), R11
	LEAQ (BX)(R12*1), R13
	LEAQ (R13)(R12*1), R14
	LEAQ (R14)(R12*1), R15
	TESTQ DX, DX
	JZ opczero
	VMOVUPS 0(BX), Y0
	VMOVUPS 32(BX), Y1
	VMOVUPS 64(BX), Y2
	VMOVUPS 0(R13), Y3
	VMOVUPS 32(R13), Y4
	VMOVUPS 64(R13), Y5
	VMOVUPS 0(R14), Y6
	VMOVUPS 32(R14), Y7
	VMOVUPS 64(R14), Y8
	VMOVUPS 0(R15), Y9
	VMOVUPS 32(R15), Y10
	VMOVUPS 64(R15), Y11
	JMP opcloop

opczero:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11

opcloop:
	VMOVUPS (DI), Y12
	VMOVUPS 32(DI), Y13
	VMOVUPS 64(DI), Y14
	VBROADCASTSS (SI), Y15
	VFMADD231PS Y12, Y15, Y0
	VFMADD231PS Y13, Y15, Y1
	VFMADD231PS Y14, Y15, Y2
	VBROADCASTSS (SI)(R8*1), Y15
	VFMADD231PS Y12, Y15, Y3
	VFMADD231PS Y13, Y15, Y4
	VFMADD231PS Y14, Y15, Y5
	VBROADCASTSS (SI)(R8*2), Y15
	VFMADD231PS Y12, Y15, Y6
	VFMADD231PS Y13, Y15, Y7
	VFMADD231PS Y14, Y15, Y8
	VBROADCASTSS (SI)(R11*1), Y15
	VFMADD231PS Y12, Y15, Y9
	VFMADD231PS Y13, Y15, Y10
	VFMADD231PS Y14, Y15, Y11
	ADDQ R9, SI
	ADDQ R10, DI
	DECQ CX
	JNZ opcloop

	VMOVUPS Y0, 0(BX)
	VMOVUPS Y1, 32(BX)
	VMOVUPS Y2, 64(BX)
	VMOVUPS Y3, 0(R13)
	VMOVUPS Y4, 32(R13)
	VMOVUPS Y5, 64(R13)
	VMOVUPS Y6, 0(R14)
	VMOVUPS Y7, 32(R14)
	VMOVUPS Y8, 64(R14)
	VMOVUPS Y9, 0(R15)
	VMOVUPS Y10, 32(R15)
	VMOVUPS Y11, 64(R15)
	VZEROUPPER
	RET

// func wsum64(n int, w *float32, rows *float32, ld int, out *float32)
// wsum32 over 64 columns: eight independent chains keep both FMA ports
// busy (four leave half the throughput to latency). Same order per element.
TEXT ·wsum64(SB), NOSPLIT, $0-40
	MOVQ n+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ rows+16(FP), DI
	MOVQ ld+24(FP), R9
	MOVQ out+32(FP), BX
	SHLQ $2, R9
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7

loopw64:
	VBROADCASTSS (SI), Y8
	VFMADD231PS (DI), Y8, Y0
	VFMADD231PS 32(DI), Y8, Y1
	VFMADD231PS 64(DI), Y8, Y2
	VFMADD231PS 96(DI), Y8, Y3
	VFMADD231PS 128(DI), Y8, Y4
	VFMADD231PS 160(DI), Y8, Y5
	VFMADD231PS 192(DI), Y8, Y6
	VFMADD231PS 224(DI), Y8, Y7
	ADDQ $4, SI
	ADDQ R9, DI
	DECQ CX
	JNZ loopw64

	VMOVUPS Y0, (BX)
	VMOVUPS Y1, 32(BX)
	VMOVUPS Y2, 64(BX)
	VMOVUPS Y3, 96(BX)
	VMOVUPS Y4, 128(BX)
	VMOVUPS Y5, 160(BX)
	VMOVUPS Y6, 192(BX)
	VMOVUPS Y7, 224(BX)
	VZEROUPPER
	RET

// func wsum16(n int, w *float32, rows *float32, ld int, out *float32)
// wsum8 over 16 columns in one pass: two chains overlap their latency
// instead of running one after the other. Same order per element.
TEXT ·wsum16(SB), NOSPLIT, $0-40
	MOVQ n+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ rows+16(FP), DI
	MOVQ ld+24(FP), R9
	MOVQ out+32(FP), BX
	SHLQ $2, R9
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1

loopw16:
	VBROADCASTSS (SI), Y8
	VFMADD231PS (DI), Y8, Y0
	VFMADD231PS 32(DI), Y8, Y1
	ADDQ $4, SI
	ADDQ R9, DI
	DECQ CX
	JNZ loopw16

	VMOVUPS Y0, (BX)
	VMOVUPS Y1, 32(BX)
	VZEROUPPER
	RET

// func wsum16x4(n int, w *float32, ldw int, rows *float32, ld int, out *float32, ldo int)
// out[r·ldo + c] = Σ_{p<n} w[r·ldw + p]·rows[p·ld + c] for r < 4, c < 16:
// wsum16 for four weight vectors at once, sharing each row's loads; eight
// independent chains, each in p order like wsum16's (n > 0).
TEXT ·wsum16x4(SB), NOSPLIT, $0-56
	MOVQ n+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ ldw+16(FP), R8
	MOVQ rows+24(FP), DI
	MOVQ ld+32(FP), R9
	MOVQ out+40(FP), BX
	MOVQ ldo+48(FP), R10
	SHLQ $2, R8
	SHLQ $2, R9
	SHLQ $2, R10
	LEAQ (R8)(R8*2), R11
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7

loopw16x4:
	VMOVUPS (DI), Y12
	VMOVUPS 32(DI), Y13
	VBROADCASTSS (SI), Y15
	VFMADD231PS Y12, Y15, Y0
	VFMADD231PS Y13, Y15, Y1
	VBROADCASTSS (SI)(R8*1), Y15
	VFMADD231PS Y12, Y15, Y2
	VFMADD231PS Y13, Y15, Y3
	VBROADCASTSS (SI)(R8*2), Y15
	VFMADD231PS Y12, Y15, Y4
	VFMADD231PS Y13, Y15, Y5
	VBROADCASTSS (SI)(R11*1), Y15
	VFMADD231PS Y12, Y15, Y6
	VFMADD231PS Y13, Y15, Y7
	ADDQ $4, SI
	ADDQ R9, DI
	DECQ CX
	JNZ loopw16x4

	VMOVUPS Y0, (BX)
	VMOVUPS Y1, 32(BX)
	ADDQ R10, BX
	VMOVUPS Y2, (BX)
	VMOVUPS Y3, 32(BX)
	ADDQ R10, BX
	VMOVUPS Y4, (BX)
	VMOVUPS Y5, 32(BX)
	ADDQ R10, BX
	VMOVUPS Y6, (BX)
	VMOVUPS Y7, 32(BX)
	VZEROUPPER
	RET

// func adamw8(n8 int, p *float32, grad *float32, m *float32, v *float32, c *[8]float32)
// One AdamW step on n8 elements (n8 % 8 == 0, n8 > 0), c = decay, β1, 1−β1,
// β2, 1−β2, √(1−β2ᵗ), ε, lr/(1−β1ᵗ); the same float32 operations in the
// same order as AdamW's scalar loop (see adamW below), so the same bits:
//
//	x = p·decay;  m = β1·m + (1−β1)·g;  v = β2·v + ((1−β2)·g)·g
//	p = x − step·(m / (√v/√(1−β2ᵗ) + ε))
TEXT ·adamw8(SB), NOSPLIT, $0-48
	MOVQ n8+0(FP), CX
	MOVQ p+8(FP), DI
	MOVQ grad+16(FP), SI
	MOVQ m+24(FP), R8
	MOVQ v+32(FP), R9
	MOVQ c+40(FP), BX
	VBROADCASTSS 0(BX), Y8
	VBROADCASTSS 4(BX), Y9
	VBROADCASTSS 8(BX), Y10
	VBROADCASTSS 12(BX), Y11
	VBROADCASTSS 16(BX), Y12
	VBROADCASTSS 20(BX), Y13
	VBROADCASTSS 24(BX), Y14
	VBROADCASTSS 28(BX), Y15
	SHRQ $3, CX
	XORQ AX, AX

loopadamw:
	VMOVUPS (SI)(AX*1), Y0          // g
	VMULPS (DI)(AX*1), Y8, Y1       // x = p·decay
	VMULPS (R8)(AX*1), Y9, Y2       // β1·m
	VMULPS Y0, Y10, Y3              // (1−β1)·g
	VADDPS Y3, Y2, Y2               // m
	VMOVUPS Y2, (R8)(AX*1)
	VMULPS (R9)(AX*1), Y11, Y4      // β2·v
	VMULPS Y0, Y12, Y5              // (1−β2)·g
	VMULPS Y0, Y5, Y5               // ·g
	VADDPS Y5, Y4, Y4               // v
	VMOVUPS Y4, (R9)(AX*1)
	VSQRTPS Y4, Y4
	VDIVPS Y13, Y4, Y4              // √v / √(1−β2ᵗ)
	VADDPS Y14, Y4, Y4              // + ε
	VDIVPS Y4, Y2, Y2               // m / denom
	VMULPS Y2, Y15, Y2              // step·(…)
	VSUBPS Y2, Y1, Y1               // x − …
	VMOVUPS Y1, (DI)(AX*1)
	ADDQ $32, AX
	DECQ CX
	JNZ loopadamw
	VZEROUPPER
	RET

// func max32(n32 int, x *float32, m float32) float32
// The largest of m and x[0:n32] (n32 % 32 == 0, n32 > 0). Each step keeps
// the running maximum unless x is larger (VMAXPS with x first), so NaNs in
// x are skipped, like `if v > m { m = v }`. Four accumulators hide latency.
TEXT ·max32(SB), NOSPLIT, $0-28
	MOVQ n32+0(FP), CX
	MOVQ x+8(FP), SI
	VBROADCASTSS m+16(FP), Y0
	VMOVAPS Y0, Y1
	VMOVAPS Y0, Y2
	VMOVAPS Y0, Y3
	SHRQ $5, CX

loopmax:
	VMOVUPS (SI), Y4
	VMOVUPS 32(SI), Y5
	VMOVUPS 64(SI), Y6
	VMOVUPS 96(SI), Y7
	VMAXPS Y0, Y4, Y0
	VMAXPS Y1, Y5, Y1
	VMAXPS Y2, Y6, Y2
	VMAXPS Y3, Y7, Y3
	ADDQ $128, SI
	DECQ CX
	JNZ loopmax

	VMAXPS Y1, Y0, Y0
	VMAXPS Y3, Y2, Y2
	VMAXPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0x4e, X0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0xb1, X0, X1
	VMAXPS X1, X0, X0
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// Horizontal sum of the 8 lanes of acc (X alias xacc) stored at off(reg).
// Clobbers X15.
#define HSUMAT(acc, xacc, off, reg) \
	VEXTRACTF128 $1, acc, X15; \
	VADDPS X15, xacc, xacc; \
	VHADDPS xacc, xacc, xacc; \
	VHADDPS xacc, xacc, xacc; \
	VMOVSS xacc, off(reg)

// func kern4x3C(k8 int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int)
// kern4x3 storing its 4×3 tile straight into C (row stride ldc elements):
// the same sums in the same order, for alpha = 1, beta = 0 and no tail.
TEXT ·kern4x3C(SB), NOSPLIT, $0-56
	MOVQ k8+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R8
	MOVQ b+24(FP), DI
	MOVQ ldb+32(FP), R9
	SHLQ $2, R8
	SHLQ $2, R9
	LEAQ (SI)(R8*1), R10
	LEAQ (R10)(R8*1), R11
	LEAQ (R11)(R8*1), R12
	LEAQ (DI)(R9*1), R13
	LEAQ (R13)(R9*1), R14
	SHRQ $3, CX
	XORQ AX, AX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11

loop4x3c:
	VMOVUPS (DI)(AX*1), Y12
	VMOVUPS (R13)(AX*1), Y13
	VMOVUPS (R14)(AX*1), Y14
	VMOVUPS (SI)(AX*1), Y15
	VFMADD231PS Y12, Y15, Y0
	VFMADD231PS Y13, Y15, Y1
	VFMADD231PS Y14, Y15, Y2
	VMOVUPS (R10)(AX*1), Y15
	VFMADD231PS Y12, Y15, Y3
	VFMADD231PS Y13, Y15, Y4
	VFMADD231PS Y14, Y15, Y5
	VMOVUPS (R11)(AX*1), Y15
	VFMADD231PS Y12, Y15, Y6
	VFMADD231PS Y13, Y15, Y7
	VFMADD231PS Y14, Y15, Y8
	VMOVUPS (R12)(AX*1), Y15
	VFMADD231PS Y12, Y15, Y9
	VFMADD231PS Y13, Y15, Y10
	VFMADD231PS Y14, Y15, Y11
	ADDQ $32, AX
	DECQ CX
	JNZ loop4x3c

	MOVQ c+40(FP), SI
	MOVQ ldc+48(FP), R8
	SHLQ $2, R8
	LEAQ (SI)(R8*1), R10
	LEAQ (R10)(R8*1), R11
	LEAQ (R11)(R8*1), R12
	HSUMAT(Y0, X0, 0, SI)
	HSUMAT(Y1, X1, 4, SI)
	HSUMAT(Y2, X2, 8, SI)
	HSUMAT(Y3, X3, 0, R10)
	HSUMAT(Y4, X4, 4, R10)
	HSUMAT(Y5, X5, 8, R10)
	HSUMAT(Y6, X6, 0, R11)
	HSUMAT(Y7, X7, 4, R11)
	HSUMAT(Y8, X8, 8, R11)
	HSUMAT(Y9, X9, 0, R12)
	HSUMAT(Y10, X10, 4, R12)
	HSUMAT(Y11, X11, 8, R12)
	VZEROUPPER
	RET

// func scal8(n8 int, s float32, x *float32)
// x[i] *= s for i < n8 (n8 % 8 == 0, n8 > 0).
TEXT ·scal8(SB), NOSPLIT, $0-24
	MOVQ n8+0(FP), CX
	VBROADCASTSS s+8(FP), Y0
	MOVQ x+16(FP), SI
	SHRQ $3, CX

loopscal:
	VMULPS (SI), Y0, Y1
	VMOVUPS Y1, (SI)
	ADDQ $32, SI
	DECQ CX
	JNZ loopscal
	VZEROUPPER
	RET

// func swigluBwd8(n8 int, gate *float32, up *float32, dout *float32, dgate *float32, dup *float32)
// SwiGLU's backward for i < n8 (n8 % 8 == 0, n8 > 0), the same float32
// operations in the same order as the scalar loop in SwiGLUBackward:
// e = exp(−|g|) as expShift8 computes it, s = 1/(1+e), s = e·s where g < 0,
// dup = dy·(g·s), dgate = ((dy·up)·s)·(1 + g·(1−s)).
TEXT ·swigluBwd8(SB), NOSPLIT, $0-48
	MOVQ n8+0(FP), CX
	MOVQ gate+8(FP), SI
	MOVQ up+16(FP), R8
	MOVQ dout+24(FP), R9
	MOVQ dgate+32(FP), R10
	MOVQ dup+40(FP), R11
	VBROADCASTSS expconst<>+0(SB), Y14
	VBROADCASTSS expconst<>+4(SB), Y13
	VBROADCASTSS expconst<>+8(SB), Y12
	VBROADCASTSS expconst<>+36(SB), Y11
	VBROADCASTSS expconst<>+40(SB), Y10
	VBROADCASTSS expconst<>+32(SB), Y9
	VPCMPEQD Y8, Y8, Y8
	VPSRLD $1, Y8, Y8               // 0x7fffffff: |·| mask
	SHRQ $3, CX
	XORQ AX, AX

loopswiglu:
	VMOVUPS (SI)(AX*1), Y0          // g
	VANDPS Y8, Y0, Y1
	VXORPS Y15, Y15, Y15
	VSUBPS Y1, Y15, Y1              // −|g| (0 − |g|: exact)
	VMAXPS Y10, Y1, Y1              // clamp
	VMOVAPS Y1, Y2
	VFMADD213PS Y9, Y14, Y2         // t·log2e + 0.5
	VROUNDPS $1, Y2, Y2             // n = floor(·)
	VFNMADD231PS Y13, Y2, Y1        // r = t − n·C1
	VFNMADD231PS Y12, Y2, Y1        // r −= n·C2
	VBROADCASTSS expconst<>+12(SB), Y3
	VBROADCASTSS expconst<>+16(SB), Y4
	VFMADD213PS Y4, Y1, Y3          // p0·r + p1
	VBROADCASTSS expconst<>+20(SB), Y4
	VFMADD213PS Y4, Y1, Y3          // ·r + p2
	VBROADCASTSS expconst<>+24(SB), Y4
	VFMADD213PS Y4, Y1, Y3          // ·r + p3
	VBROADCASTSS expconst<>+28(SB), Y4
	VFMADD213PS Y4, Y1, Y3          // ·r + p4
	VFMADD213PS Y9, Y1, Y3          // ·r + p5
	VMULPS Y1, Y1, Y5               // z = r²
	VFMADD213PS Y1, Y5, Y3          // y = poly·z + r
	VADDPS Y11, Y3, Y3              // + 1
	VCVTTPS2DQ Y2, Y6               // n as int32
	VPBROADCASTD expconst<>+44(SB), Y7
	VPADDD Y7, Y6, Y6
	VPSLLD $23, Y6, Y6              // 2^n
	VMULPS Y6, Y3, Y3               // e
	VADDPS Y11, Y3, Y4              // 1 + e
	VDIVPS Y4, Y11, Y4              // s = 1/(1+e)
	VMULPS Y4, Y3, Y5               // e·s
	VCMPPS $1, Y15, Y0, Y6          // g < 0
	VBLENDVPS Y6, Y5, Y4, Y4        // s = e·s where g < 0
	VMOVUPS (R9)(AX*1), Y1          // dy
	VMULPS Y4, Y0, Y2               // g·s
	VMULPS Y2, Y1, Y2               // dy·(g·s)
	VMOVUPS Y2, (R11)(AX*1)
	VMULPS (R8)(AX*1), Y1, Y1       // dy·up
	VMULPS Y4, Y1, Y1               // ·s
	VSUBPS Y4, Y11, Y5              // 1 − s
	VMULPS Y5, Y0, Y5               // g·(1−s)
	VADDPS Y11, Y5, Y5              // 1 + g·(1−s)
	VMULPS Y5, Y1, Y1
	VMOVUPS Y1, (R10)(AX*1)
	ADDQ $32, AX
	DECQ CX
	JNZ loopswiglu
	VZEROUPPER
	RET
