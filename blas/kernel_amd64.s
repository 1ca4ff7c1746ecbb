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
