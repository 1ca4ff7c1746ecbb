//go:build !purego

#include "textflag.h"

// AVX-512 versions of the two training GEMM kernels. Each computes exactly
// the sums its AVX2 counterpart does (same lanes, same order, same
// reductions), only twice as many of them per instruction, so results stay
// bitwise those of the AVX2 kernels: a row's numbers do not depend on the
// CPU's vector width, on its batch, or on which kernel ran it.

// Horizontal sum of the 8 lanes of Y register acc (X alias xacc) into one
// float32 stored at off(reg), in kern4x3C's order (HSUMAT). Clobbers tmp.
#define HSUM8(acc, xacc, tmp, off, reg) \
	VEXTRACTF128 $1, acc, tmp; \
	VADDPS tmp, xacc, xacc; \
	VHADDPS xacc, xacc, xacc; \
	VHADDPS xacc, xacc, xacc; \
	VMOVSS xacc, off(reg)

// Both halves of ZMM accumulator n: the high half (row hi) first, through
// Y14, then the low half (row lo) in place. Column offset off bytes.
#define HSUMPAIR(zacc, yacc, xacc, off, lo, hi) \
	VEXTRACTF32X8 $1, zacc, Y14; \
	HSUM8(Y14, X14, X15, off, hi); \
	HSUM8(yacc, xacc, X15, off, lo)

// func kern4x6C512(k8 int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int)
// C[r, q] = dot(a row r, b row q) over the first k8 elements for r < 4,
// q < 6 (k8 % 8 == 0, k8 > 0), stored into C (row stride ldc elements): two
// kern4x3C tiles side by side, bitwise. Each ZMM accumulator holds one
// column's 8-lane partial sums for two rows of A (rows 0,1 or 2,3: a pair
// of A rows is loaded into the two halves of one register, each B row
// broadcast to both halves), reduced exactly as kern4x3C reduces its YMM
// accumulators.
TEXT ·kern4x6C512(SB), NOSPLIT, $0-56
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
	LEAQ (R14)(R9*1), R15
	LEAQ (R15)(R9*1), DX
	LEAQ (DX)(R9*1), BX
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

loop4x6:
	VMOVUPS (SI)(AX*1), Y12
	VINSERTF32X8 $1, (R10)(AX*1), Z12, Z12
	VMOVUPS (R11)(AX*1), Y13
	VINSERTF32X8 $1, (R12)(AX*1), Z13, Z13
	VBROADCASTF32X8 (DI)(AX*1), Z14
	VFMADD231PS Z14, Z12, Z0
	VFMADD231PS Z14, Z13, Z1
	VBROADCASTF32X8 (R13)(AX*1), Z15
	VFMADD231PS Z15, Z12, Z2
	VFMADD231PS Z15, Z13, Z3
	VBROADCASTF32X8 (R14)(AX*1), Z14
	VFMADD231PS Z14, Z12, Z4
	VFMADD231PS Z14, Z13, Z5
	VBROADCASTF32X8 (R15)(AX*1), Z15
	VFMADD231PS Z15, Z12, Z6
	VFMADD231PS Z15, Z13, Z7
	VBROADCASTF32X8 (DX)(AX*1), Z14
	VFMADD231PS Z14, Z12, Z8
	VFMADD231PS Z14, Z13, Z9
	VBROADCASTF32X8 (BX)(AX*1), Z15
	VFMADD231PS Z15, Z12, Z10
	VFMADD231PS Z15, Z13, Z11
	ADDQ $32, AX
	DECQ CX
	JNZ loop4x6

	MOVQ c+40(FP), SI
	MOVQ ldc+48(FP), R8
	SHLQ $2, R8
	LEAQ (SI)(R8*1), R10
	LEAQ (R10)(R8*1), R11
	LEAQ (R11)(R8*1), R12
	// Z(2q) holds rows 0 (low) and 1 (high) of column q, Z(2q+1) rows 2
	// and 3.
	HSUMPAIR(Z0, Y0, X0, 0, SI, R10)
	HSUMPAIR(Z1, Y1, X1, 0, R11, R12)
	HSUMPAIR(Z2, Y2, X2, 4, SI, R10)
	HSUMPAIR(Z3, Y3, X3, 4, R11, R12)
	HSUMPAIR(Z4, Y4, X4, 8, SI, R10)
	HSUMPAIR(Z5, Y5, X5, 8, R11, R12)
	HSUMPAIR(Z6, Y6, X6, 12, SI, R10)
	HSUMPAIR(Z7, Y7, X7, 12, R11, R12)
	HSUMPAIR(Z8, Y8, X8, 16, SI, R10)
	HSUMPAIR(Z9, Y9, X9, 16, R11, R12)
	HSUMPAIR(Z10, Y10, X10, 20, SI, R10)
	HSUMPAIR(Z11, Y11, X11, 20, R11, R12)
	VZEROUPPER
	RET

// func kernOP4x48C512(k int, a *float32, ars int, acs int, b *float32, ldb int, c *float32, ldc int, acc int)
// kernOP4x24C over 48 columns: C[r, 0:48] (+)= Σ_p a(r, p)·B[p, 0:48] for
// r < 4, each element one FMA chain over p in order (from C when acc is
// non-zero, else from zero), bitwise two kernOP4x24C tiles side by side.
TEXT ·kernOP4x48C512(SB), NOSPLIT, $0-72
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
	JZ op48zero
	VMOVUPS 0(BX), Z0
	VMOVUPS 64(BX), Z1
	VMOVUPS 128(BX), Z2
	VMOVUPS 0(R13), Z3
	VMOVUPS 64(R13), Z4
	VMOVUPS 128(R13), Z5
	VMOVUPS 0(R14), Z6
	VMOVUPS 64(R14), Z7
	VMOVUPS 128(R14), Z8
	VMOVUPS 0(R15), Z9
	VMOVUPS 64(R15), Z10
	VMOVUPS 128(R15), Z11
	JMP op48loop

op48zero:
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

op48loop:
	VMOVUPS (DI), Z12
	VMOVUPS 64(DI), Z13
	VMOVUPS 128(DI), Z14
	VBROADCASTSS (SI), Z15
	VFMADD231PS Z12, Z15, Z0
	VFMADD231PS Z13, Z15, Z1
	VFMADD231PS Z14, Z15, Z2
	VBROADCASTSS (SI)(R8*1), Z15
	VFMADD231PS Z12, Z15, Z3
	VFMADD231PS Z13, Z15, Z4
	VFMADD231PS Z14, Z15, Z5
	VBROADCASTSS (SI)(R8*2), Z15
	VFMADD231PS Z12, Z15, Z6
	VFMADD231PS Z13, Z15, Z7
	VFMADD231PS Z14, Z15, Z8
	VBROADCASTSS (SI)(R11*1), Z15
	VFMADD231PS Z12, Z15, Z9
	VFMADD231PS Z13, Z15, Z10
	VFMADD231PS Z14, Z15, Z11
	ADDQ R9, SI
	ADDQ R10, DI
	DECQ CX
	JNZ op48loop

	VMOVUPS Z0, 0(BX)
	VMOVUPS Z1, 64(BX)
	VMOVUPS Z2, 128(BX)
	VMOVUPS Z3, 0(R13)
	VMOVUPS Z4, 64(R13)
	VMOVUPS Z5, 128(R13)
	VMOVUPS Z6, 0(R14)
	VMOVUPS Z7, 64(R14)
	VMOVUPS Z8, 128(R14)
	VMOVUPS Z9, 0(R15)
	VMOVUPS Z10, 64(R15)
	VMOVUPS Z11, 128(R15)
	VZEROUPPER
	RET

// One pair-accumulator group's epilogue for kern4x8P512: the eight ZMM
// accumulators z0..z7 (columns 0..7; rows lo in the low half, hi in the
// high half, 8 lanes each) are reduced to 16 sums in HSUM8's order,
// ((L0+L4) + (L1+L5)) + ((L2+L6) + (L3+L7)), with the additions done eight
// or sixteen at a time after shuffles: the same additions on the same
// operands, so the same bits as kern4x3C. Row lo's eight sums go to
// (rlo), row hi's to (rhi). It works in its inputs' registers with one
// temporary (t; yz0 is z0's Y name), so kern6x8P512's 24 accumulators
// leave it enough: clobbers z0–z7 and t.
//
// Step 1 pairs column q with q+4: S = [q.lo L0-3, q.hi L0-3, q'.lo L0-3,
// q'.hi L0-3] + the same lanes' L4-7, that is Lj + Lj+4. Steps 2 and 3 are
// horizontal adds within 128-bit lanes (even + odd elements), which leave
// the sums as [lo c0-3, hi c0-3, lo c4-7, hi c4-7]; a last lane shuffle
// puts row lo's eight columns in the low half.
#define PAIRS8(z0, z1, z2, z3, z4, z5, z6, z7, t, yz0, rlo, rhi) \
	VSHUFF32X4 $0x88, z4, z0, t; \
	VSHUFF32X4 $0xDD, z4, z0, z4; \
	VADDPS z4, t, z0; \
	VSHUFF32X4 $0x88, z5, z1, t; \
	VSHUFF32X4 $0xDD, z5, z1, z5; \
	VADDPS z5, t, z1; \
	VSHUFF32X4 $0x88, z6, z2, t; \
	VSHUFF32X4 $0xDD, z6, z2, z6; \
	VADDPS z6, t, z2; \
	VSHUFF32X4 $0x88, z7, z3, t; \
	VSHUFF32X4 $0xDD, z7, z3, z7; \
	VADDPS z7, t, z3; \
	VSHUFPS $0x88, z1, z0, t; \
	VSHUFPS $0xDD, z1, z0, z1; \
	VADDPS z1, t, z0; \
	VSHUFPS $0x88, z3, z2, t; \
	VSHUFPS $0xDD, z3, z2, z3; \
	VADDPS z3, t, z2; \
	VSHUFPS $0x88, z2, z0, t; \
	VSHUFPS $0xDD, z2, z0, z2; \
	VADDPS z2, t, z0; \
	VSHUFF32X4 $0xD8, z0, z0, z0; \
	VMOVUPS yz0, (rlo); \
	VEXTRACTF32X8 $1, z0, (rhi)

// func kern4x8P512(k8 int, ap *float32, b *float32, ldb int, c *float32, ldc int)
// C[r, q] = dot(a row r, b row q) over the first k8 elements for r < 4,
// q < 8 (k8 % 8 == 0, k8 > 0), stored into C: kern4x3C's sums, bitwise.
// A comes packed (packA4): for each 8-element chunk of k, rows 0 and 1's
// chunks side by side (one ZMM load) and then rows 2 and 3's, so the loop
// has no lane inserts and is all FMAs and loads; its 16 accumulators are
// reduced with whole-register shuffles (PAIRS8) rather than one sum at a
// time.
TEXT ·kern4x8P512(SB), NOSPLIT, $0-48
	MOVQ k8+0(FP), CX
	MOVQ ap+8(FP), SI
	MOVQ b+16(FP), DI
	MOVQ ldb+24(FP), R8
	SHLQ $2, R8
	LEAQ (DI)(R8*1), R9
	LEAQ (R9)(R8*1), R10
	LEAQ (R10)(R8*1), R11
	LEAQ (R11)(R8*1), R12
	LEAQ (R12)(R8*1), R13
	LEAQ (R13)(R8*1), R14
	LEAQ (R14)(R8*1), R15
	SHRQ $3, CX
	XORQ AX, AX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15

loop4x8p:
	VMOVUPS 0(SI), Z30
	VMOVUPS 64(SI), Z31
	VBROADCASTF32X8 (DI)(AX*1), Z28
	VFMADD231PS Z28, Z30, Z0
	VFMADD231PS Z28, Z31, Z1
	VBROADCASTF32X8 (R9)(AX*1), Z29
	VFMADD231PS Z29, Z30, Z2
	VFMADD231PS Z29, Z31, Z3
	VBROADCASTF32X8 (R10)(AX*1), Z28
	VFMADD231PS Z28, Z30, Z4
	VFMADD231PS Z28, Z31, Z5
	VBROADCASTF32X8 (R11)(AX*1), Z29
	VFMADD231PS Z29, Z30, Z6
	VFMADD231PS Z29, Z31, Z7
	VBROADCASTF32X8 (R12)(AX*1), Z28
	VFMADD231PS Z28, Z30, Z8
	VFMADD231PS Z28, Z31, Z9
	VBROADCASTF32X8 (R13)(AX*1), Z29
	VFMADD231PS Z29, Z30, Z10
	VFMADD231PS Z29, Z31, Z11
	VBROADCASTF32X8 (R14)(AX*1), Z28
	VFMADD231PS Z28, Z30, Z12
	VFMADD231PS Z28, Z31, Z13
	VBROADCASTF32X8 (R15)(AX*1), Z29
	VFMADD231PS Z29, Z30, Z14
	VFMADD231PS Z29, Z31, Z15
	ADDQ $128, SI
	ADDQ $32, AX
	DECQ CX
	JNZ loop4x8p

	MOVQ c+32(FP), SI
	MOVQ ldc+40(FP), R8
	SHLQ $2, R8
	LEAQ (SI)(R8*1), R10
	LEAQ (R10)(R8*1), R11
	LEAQ (R11)(R8*1), R12
	// Z(2q) holds rows 0 (low) and 1 (high) of column q, Z(2q+1) rows 2
	// and 3.
	PAIRS8(Z0, Z2, Z4, Z6, Z8, Z10, Z12, Z14, Z16, Y0, SI, R10)
	PAIRS8(Z1, Z3, Z5, Z7, Z9, Z11, Z13, Z15, Z16, Y1, R11, R12)
	VZEROUPPER
	RET

// func kernOP8x48P512(k int, a *float32, ars int, acs int, bp *float32, c *float32, ldc int, acc int)
// C[r, q] (+)= Σ_p a[r*ars+p*acs]·bp[p*48+q] for r < 8, q < 48, k > 0: the
// outer-product kernel on eight rows of A and a packed 48-column panel of B
// (k rows of 48 contiguous floats). Each element is one FMA chain over p in
// order, starting from C when acc ≠ 0, from zero otherwise: the chains of
// kernOP4x48C512 (and kernOP4x24C), bitwise. Eight rows read each loaded B
// row twice as often as four, and the packed panel stays in L1 where the
// rows of B in place (19 KB apart for a 4,864-wide weight) did not.
// The caller walks a 48-column panel down the rows, so C is read three
// lines a row at a stride the prefetchers do not follow; LoRA's dx += g·A
// (k = 16) reads a C long out of cache and waited on it at every call.
// Prefetching the next call's eight rows took that product from 29 to 38
// GFLOP per CPU-second with C in memory (34 with n = 1,536, from 27).
TEXT ·kernOP8x48P512(SB), NOSPLIT, $0-64
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ ars+16(FP), R8
	MOVQ acs+24(FP), R9
	MOVQ bp+32(FP), DI
	MOVQ c+40(FP), BX
	MOVQ ldc+48(FP), R12
	MOVQ acc+56(FP), R10
	SHLQ $2, R8
	SHLQ $2, R9
	SHLQ $2, R12
	LEAQ (R8)(R8*2), R11
	LEAQ (R12)(R12*2), R13
	LEAQ (SI)(R8*4), AX
	LEAQ (BX)(R12*4), DX
	// Prefetch the next call's rows of C (rows 8–15: the caller walks a
	// panel down the rows).
	LEAQ (DX)(R12*4), R14
	LEAQ (R14)(R12*4), R15
	PREFETCHT0 0(R14)
	PREFETCHT0 64(R14)
	PREFETCHT0 128(R14)
	PREFETCHT0 0(R14)(R12*1)
	PREFETCHT0 64(R14)(R12*1)
	PREFETCHT0 128(R14)(R12*1)
	PREFETCHT0 0(R14)(R12*2)
	PREFETCHT0 64(R14)(R12*2)
	PREFETCHT0 128(R14)(R12*2)
	PREFETCHT0 0(R14)(R13*1)
	PREFETCHT0 64(R14)(R13*1)
	PREFETCHT0 128(R14)(R13*1)
	PREFETCHT0 0(R15)
	PREFETCHT0 64(R15)
	PREFETCHT0 128(R15)
	PREFETCHT0 0(R15)(R12*1)
	PREFETCHT0 64(R15)(R12*1)
	PREFETCHT0 128(R15)(R12*1)
	PREFETCHT0 0(R15)(R12*2)
	PREFETCHT0 64(R15)(R12*2)
	PREFETCHT0 128(R15)(R12*2)
	PREFETCHT0 0(R15)(R13*1)
	PREFETCHT0 64(R15)(R13*1)
	PREFETCHT0 128(R15)(R13*1)
	TESTQ R10, R10
	JZ op8zero
	VMOVUPS 0(BX), Z0
	VMOVUPS 64(BX), Z1
	VMOVUPS 128(BX), Z2
	VMOVUPS 0(BX)(R12*1), Z3
	VMOVUPS 64(BX)(R12*1), Z4
	VMOVUPS 128(BX)(R12*1), Z5
	VMOVUPS 0(BX)(R12*2), Z6
	VMOVUPS 64(BX)(R12*2), Z7
	VMOVUPS 128(BX)(R12*2), Z8
	VMOVUPS 0(BX)(R13*1), Z9
	VMOVUPS 64(BX)(R13*1), Z10
	VMOVUPS 128(BX)(R13*1), Z11
	VMOVUPS 0(DX), Z12
	VMOVUPS 64(DX), Z13
	VMOVUPS 128(DX), Z14
	VMOVUPS 0(DX)(R12*1), Z15
	VMOVUPS 64(DX)(R12*1), Z16
	VMOVUPS 128(DX)(R12*1), Z17
	VMOVUPS 0(DX)(R12*2), Z18
	VMOVUPS 64(DX)(R12*2), Z19
	VMOVUPS 128(DX)(R12*2), Z20
	VMOVUPS 0(DX)(R13*1), Z21
	VMOVUPS 64(DX)(R13*1), Z22
	VMOVUPS 128(DX)(R13*1), Z23
	JMP op8loop

op8zero:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23

op8loop:
	VMOVUPS (DI), Z24
	VMOVUPS 64(DI), Z25
	VMOVUPS 128(DI), Z26
	VBROADCASTSS (SI), Z27
	VFMADD231PS Z24, Z27, Z0
	VFMADD231PS Z25, Z27, Z1
	VFMADD231PS Z26, Z27, Z2
	VBROADCASTSS (SI)(R8*1), Z28
	VFMADD231PS Z24, Z28, Z3
	VFMADD231PS Z25, Z28, Z4
	VFMADD231PS Z26, Z28, Z5
	VBROADCASTSS (SI)(R8*2), Z29
	VFMADD231PS Z24, Z29, Z6
	VFMADD231PS Z25, Z29, Z7
	VFMADD231PS Z26, Z29, Z8
	VBROADCASTSS (SI)(R11*1), Z30
	VFMADD231PS Z24, Z30, Z9
	VFMADD231PS Z25, Z30, Z10
	VFMADD231PS Z26, Z30, Z11
	VBROADCASTSS (AX), Z27
	VFMADD231PS Z24, Z27, Z12
	VFMADD231PS Z25, Z27, Z13
	VFMADD231PS Z26, Z27, Z14
	VBROADCASTSS (AX)(R8*1), Z28
	VFMADD231PS Z24, Z28, Z15
	VFMADD231PS Z25, Z28, Z16
	VFMADD231PS Z26, Z28, Z17
	VBROADCASTSS (AX)(R8*2), Z29
	VFMADD231PS Z24, Z29, Z18
	VFMADD231PS Z25, Z29, Z19
	VFMADD231PS Z26, Z29, Z20
	VBROADCASTSS (AX)(R11*1), Z30
	VFMADD231PS Z24, Z30, Z21
	VFMADD231PS Z25, Z30, Z22
	VFMADD231PS Z26, Z30, Z23
	ADDQ R9, SI
	ADDQ R9, AX
	ADDQ $192, DI
	DECQ CX
	JNZ op8loop

	VMOVUPS Z0, 0(BX)
	VMOVUPS Z1, 64(BX)
	VMOVUPS Z2, 128(BX)
	VMOVUPS Z3, 0(BX)(R12*1)
	VMOVUPS Z4, 64(BX)(R12*1)
	VMOVUPS Z5, 128(BX)(R12*1)
	VMOVUPS Z6, 0(BX)(R12*2)
	VMOVUPS Z7, 64(BX)(R12*2)
	VMOVUPS Z8, 128(BX)(R12*2)
	VMOVUPS Z9, 0(BX)(R13*1)
	VMOVUPS Z10, 64(BX)(R13*1)
	VMOVUPS Z11, 128(BX)(R13*1)
	VMOVUPS Z12, 0(DX)
	VMOVUPS Z13, 64(DX)
	VMOVUPS Z14, 128(DX)
	VMOVUPS Z15, 0(DX)(R12*1)
	VMOVUPS Z16, 64(DX)(R12*1)
	VMOVUPS Z17, 128(DX)(R12*1)
	VMOVUPS Z18, 0(DX)(R12*2)
	VMOVUPS Z19, 64(DX)(R12*2)
	VMOVUPS Z20, 128(DX)(R12*2)
	VMOVUPS Z21, 0(DX)(R13*1)
	VMOVUPS Z22, 64(DX)(R13*1)
	VMOVUPS Z23, 128(DX)(R13*1)
	VZEROUPPER
	RET

// func kernOP16x16T512(k int, a *float32, acs int, b *float32, ldb int, c *float32, ldc int, acc int)
// C[r, q] (+)= Σ_p a[r+p*acs]·b[p*ldb+q] for r < 16, q < 16, k > 0: the
// outer-product kernel for an op(A) of 16 rows stored as its transpose (a
// column's 16 values contiguous: LoRA's dA = gᵀ·x and dBᵀ = (s·u)ᵀ·dy, r =
// 16). Each A value enters its FMA as an embedded broadcast, so B is read
// once for all 16 rows (the 4- and 8-row kernels read it four and two
// times). Each element is one FMA chain over p in order, starting from C
// when acc ≠ 0, from zero otherwise: kernOP4x48C512's chains, bitwise.
// It reads one line of each row of B down the strip, a stride the hardware
// prefetchers do not follow; in the step B is a layer's input saved by the
// forward, long out of cache, and without the software prefetch 32 rows
// ahead the kernel ran at a quarter of its speed on cached B (25 against
// 100 GFLOP per CPU-second; with it, 40–46: BenchmarkLoRAGrads' cold rows).
TEXT ·kernOP16x16T512(SB), NOSPLIT, $0-64
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ acs+16(FP), R9
	MOVQ b+24(FP), DI
	MOVQ ldb+32(FP), R8
	MOVQ c+40(FP), BX
	MOVQ ldc+48(FP), R12
	MOVQ acc+56(FP), R10
	SHLQ $2, R9
	SHLQ $2, R8
	MOVQ R8, R11
	SHLQ $5, R11
	SHLQ $2, R12
	TESTQ R10, R10
	JZ op16zero
	MOVQ BX, DX
	VMOVUPS (DX), Z0
	ADDQ R12, DX
	VMOVUPS (DX), Z1
	ADDQ R12, DX
	VMOVUPS (DX), Z2
	ADDQ R12, DX
	VMOVUPS (DX), Z3
	ADDQ R12, DX
	VMOVUPS (DX), Z4
	ADDQ R12, DX
	VMOVUPS (DX), Z5
	ADDQ R12, DX
	VMOVUPS (DX), Z6
	ADDQ R12, DX
	VMOVUPS (DX), Z7
	ADDQ R12, DX
	VMOVUPS (DX), Z8
	ADDQ R12, DX
	VMOVUPS (DX), Z9
	ADDQ R12, DX
	VMOVUPS (DX), Z10
	ADDQ R12, DX
	VMOVUPS (DX), Z11
	ADDQ R12, DX
	VMOVUPS (DX), Z12
	ADDQ R12, DX
	VMOVUPS (DX), Z13
	ADDQ R12, DX
	VMOVUPS (DX), Z14
	ADDQ R12, DX
	VMOVUPS (DX), Z15
	JMP op16loop

op16zero:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15

op16loop:
	PREFETCHT0 (DI)(R11*1)
	VMOVUPS (DI), Z16
	VFMADD231PS.BCST 0(SI), Z16, Z0
	VFMADD231PS.BCST 4(SI), Z16, Z1
	VFMADD231PS.BCST 8(SI), Z16, Z2
	VFMADD231PS.BCST 12(SI), Z16, Z3
	VFMADD231PS.BCST 16(SI), Z16, Z4
	VFMADD231PS.BCST 20(SI), Z16, Z5
	VFMADD231PS.BCST 24(SI), Z16, Z6
	VFMADD231PS.BCST 28(SI), Z16, Z7
	VFMADD231PS.BCST 32(SI), Z16, Z8
	VFMADD231PS.BCST 36(SI), Z16, Z9
	VFMADD231PS.BCST 40(SI), Z16, Z10
	VFMADD231PS.BCST 44(SI), Z16, Z11
	VFMADD231PS.BCST 48(SI), Z16, Z12
	VFMADD231PS.BCST 52(SI), Z16, Z13
	VFMADD231PS.BCST 56(SI), Z16, Z14
	VFMADD231PS.BCST 60(SI), Z16, Z15
	ADDQ R9, SI
	ADDQ R8, DI
	DECQ CX
	JNZ op16loop
	MOVQ BX, DX
	VMOVUPS Z0, (DX)
	ADDQ R12, DX
	VMOVUPS Z1, (DX)
	ADDQ R12, DX
	VMOVUPS Z2, (DX)
	ADDQ R12, DX
	VMOVUPS Z3, (DX)
	ADDQ R12, DX
	VMOVUPS Z4, (DX)
	ADDQ R12, DX
	VMOVUPS Z5, (DX)
	ADDQ R12, DX
	VMOVUPS Z6, (DX)
	ADDQ R12, DX
	VMOVUPS Z7, (DX)
	ADDQ R12, DX
	VMOVUPS Z8, (DX)
	ADDQ R12, DX
	VMOVUPS Z9, (DX)
	ADDQ R12, DX
	VMOVUPS Z10, (DX)
	ADDQ R12, DX
	VMOVUPS Z11, (DX)
	ADDQ R12, DX
	VMOVUPS Z12, (DX)
	ADDQ R12, DX
	VMOVUPS Z13, (DX)
	ADDQ R12, DX
	VMOVUPS Z14, (DX)
	ADDQ R12, DX
	VMOVUPS Z15, (DX)
	VZEROUPPER
	RET

// func copyRows48(n int, src *float32, lds int, dst *float32)
// Copies n rows of 48 floats, row r at src[r*lds], to dst[r*48]: the packed
// path's panel of B, one call per k block instead of a runtime.memmove call
// per row.
TEXT ·copyRows48(SB), NOSPLIT, $0-32
	MOVQ n+0(FP), CX
	MOVQ src+8(FP), SI
	MOVQ lds+16(FP), R8
	MOVQ dst+24(FP), DI
	SHLQ $2, R8

cr48loop:
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z1
	VMOVUPS 128(SI), Z2
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	ADDQ R8, SI
	ADDQ $192, DI
	DECQ CX
	JNZ cr48loop
	VZEROUPPER
	RET

// func packA4Group(chunks int, a *float32, lda int, dst *float32)
// packA4 for one group of four rows of A: for each 8-element chunk of k,
// rows 0..3's chunks in turn (32 floats), where a Go copy of 8 floats was a
// runtime.memmove call each.
TEXT ·packA4Group(SB), NOSPLIT, $0-32
	MOVQ chunks+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R8
	MOVQ dst+24(FP), DI
	SHLQ $2, R8
	LEAQ (R8)(R8*2), R9

pa4loop:
	VMOVUPS (SI), Y0
	VMOVUPS (SI)(R8*1), Y1
	VMOVUPS (SI)(R8*2), Y2
	VMOVUPS (SI)(R9*1), Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ $32, SI
	ADDQ $128, DI
	DECQ CX
	JNZ pa4loop
	VZEROUPPER
	RET

// One pair-accumulator group's epilogue for kern4x8P512S: PAIRS8's sums,
// then C = alpha·sum + beta·C, each product rounded and then the sum, as
// Go's float32(alpha*t) + float32(beta*c). Clobbers Z16–Z27; reads alpha
// and beta from Y28 and Y29.
#define PAIRS8S(z0, z1, z2, z3, z4, z5, z6, z7, rlo, rhi) \
	VSHUFF32X4 $0x88, z4, z0, Z16; \
	VSHUFF32X4 $0xDD, z4, z0, Z17; \
	VADDPS Z17, Z16, Z16; \
	VSHUFF32X4 $0x88, z5, z1, Z18; \
	VSHUFF32X4 $0xDD, z5, z1, Z19; \
	VADDPS Z19, Z18, Z18; \
	VSHUFF32X4 $0x88, z6, z2, Z20; \
	VSHUFF32X4 $0xDD, z6, z2, Z21; \
	VADDPS Z21, Z20, Z20; \
	VSHUFF32X4 $0x88, z7, z3, Z22; \
	VSHUFF32X4 $0xDD, z7, z3, Z23; \
	VADDPS Z23, Z22, Z22; \
	VSHUFPS $0x88, Z18, Z16, Z24; \
	VSHUFPS $0xDD, Z18, Z16, Z25; \
	VADDPS Z25, Z24, Z24; \
	VSHUFPS $0x88, Z22, Z20, Z26; \
	VSHUFPS $0xDD, Z22, Z20, Z27; \
	VADDPS Z27, Z26, Z26; \
	VSHUFPS $0x88, Z26, Z24, Z16; \
	VSHUFPS $0xDD, Z26, Z24, Z17; \
	VADDPS Z17, Z16, Z16; \
	VSHUFF32X4 $0xD8, Z16, Z16, Z16; \
	VEXTRACTF32X8 $1, Z16, Y17; \
	VMULPS Y28, Y16, Y16; \
	VMULPS (rlo), Y29, Y18; \
	VADDPS Y18, Y16, Y16; \
	VMOVUPS Y16, (rlo); \
	VMULPS Y28, Y17, Y17; \
	VMULPS (rhi), Y29, Y19; \
	VADDPS Y19, Y17, Y17; \
	VMOVUPS Y17, (rhi)

// func kern4x8P512S(k8 int, ap *float32, b *float32, ldb int, c *float32, ldc int, alpha float32, beta float32)
// kern4x8P512 with the scaled store block512ScaledPacked did in Go:
// C[r, q] = alpha·dot + beta·C[r, q] (the dot kern4x3C's sum, bitwise; two
// rounded products, then their rounded sum). For LoRA's out += s·(u·Bᵀ),
// where k is the rank (16) and the Go loop over the 4×8 tile cost about as
// much as the kernel.
TEXT ·kern4x8P512S(SB), NOSPLIT, $0-56
	MOVQ k8+0(FP), CX
	MOVQ ap+8(FP), SI
	MOVQ b+16(FP), DI
	MOVQ ldb+24(FP), R8
	SHLQ $2, R8
	LEAQ (DI)(R8*1), R9
	LEAQ (R9)(R8*1), R10
	LEAQ (R10)(R8*1), R11
	LEAQ (R11)(R8*1), R12
	LEAQ (R12)(R8*1), R13
	LEAQ (R13)(R8*1), R14
	LEAQ (R14)(R8*1), R15
	SHRQ $3, CX
	XORQ AX, AX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15

loop4x8ps:
	VMOVUPS 0(SI), Z30
	VMOVUPS 64(SI), Z31
	VBROADCASTF32X8 (DI)(AX*1), Z28
	VFMADD231PS Z28, Z30, Z0
	VFMADD231PS Z28, Z31, Z1
	VBROADCASTF32X8 (R9)(AX*1), Z29
	VFMADD231PS Z29, Z30, Z2
	VFMADD231PS Z29, Z31, Z3
	VBROADCASTF32X8 (R10)(AX*1), Z28
	VFMADD231PS Z28, Z30, Z4
	VFMADD231PS Z28, Z31, Z5
	VBROADCASTF32X8 (R11)(AX*1), Z29
	VFMADD231PS Z29, Z30, Z6
	VFMADD231PS Z29, Z31, Z7
	VBROADCASTF32X8 (R12)(AX*1), Z28
	VFMADD231PS Z28, Z30, Z8
	VFMADD231PS Z28, Z31, Z9
	VBROADCASTF32X8 (R13)(AX*1), Z29
	VFMADD231PS Z29, Z30, Z10
	VFMADD231PS Z29, Z31, Z11
	VBROADCASTF32X8 (R14)(AX*1), Z28
	VFMADD231PS Z28, Z30, Z12
	VFMADD231PS Z28, Z31, Z13
	VBROADCASTF32X8 (R15)(AX*1), Z29
	VFMADD231PS Z29, Z30, Z14
	VFMADD231PS Z29, Z31, Z15
	ADDQ $128, SI
	ADDQ $32, AX
	DECQ CX
	JNZ loop4x8ps

	VBROADCASTSS alpha+48(FP), Y28
	VBROADCASTSS beta+52(FP), Y29
	MOVQ c+32(FP), SI
	MOVQ ldc+40(FP), R8
	SHLQ $2, R8
	LEAQ (SI)(R8*1), R10
	LEAQ (R10)(R8*1), R11
	LEAQ (R11)(R8*1), R12
	// Z(2q) holds rows 0 (low) and 1 (high) of column q, Z(2q+1) rows 2
	// and 3.
	PAIRS8S(Z0, Z2, Z4, Z6, Z8, Z10, Z12, Z14, SI, R10)
	PAIRS8S(Z1, Z3, Z5, Z7, Z9, Z11, Z13, Z15, R11, R12)
	VZEROUPPER
	RET

// func kernNT3x16(k8 int, a *float32, lda int, bt *float32, c *float32, ldc int)
// C[r, q] = Σ_p a[r*lda+p]·bt[p*16+q] for r < 3, q < 16, stored: the dot
// products of three rows of A with 16 rows of B (k8 a multiple of 8, > 0)
// when B comes transposed (bt, k × 16: LoRA's x·Aᵀ and dy·(s·B) at r = 16).
// Each element is kern4x3C's sum, bitwise: eight chains, chain l adding
// the products p ≡ l (mod 8) in order by FMA from zero, reduced as
// ((l0+l4)+(l1+l5))+((l2+l6)+(l3+l7)). Here the eight chains of one row
// are eight registers of 16 columns (Z8r+l), each FMA a whole register of
// useful products with an embedded broadcast of A, where the dot-product
// kernels at 16 columns spent most of their time reducing lanes.
TEXT ·kernNT3x16(SB), NOSPLIT, $0-48
	MOVQ k8+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R8
	MOVQ bt+24(FP), DI
	SHLQ $2, R8
	SHRQ $3, CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23

nt3x16loop:
	VMOVUPS 0(DI), Z24
	VFMADD231PS.BCST 0(SI), Z24, Z0
	VFMADD231PS.BCST 0(SI)(R8*1), Z24, Z8
	VFMADD231PS.BCST 0(SI)(R8*2), Z24, Z16
	VMOVUPS 64(DI), Z24
	VFMADD231PS.BCST 4(SI), Z24, Z1
	VFMADD231PS.BCST 4(SI)(R8*1), Z24, Z9
	VFMADD231PS.BCST 4(SI)(R8*2), Z24, Z17
	VMOVUPS 128(DI), Z24
	VFMADD231PS.BCST 8(SI), Z24, Z2
	VFMADD231PS.BCST 8(SI)(R8*1), Z24, Z10
	VFMADD231PS.BCST 8(SI)(R8*2), Z24, Z18
	VMOVUPS 192(DI), Z24
	VFMADD231PS.BCST 12(SI), Z24, Z3
	VFMADD231PS.BCST 12(SI)(R8*1), Z24, Z11
	VFMADD231PS.BCST 12(SI)(R8*2), Z24, Z19
	VMOVUPS 256(DI), Z24
	VFMADD231PS.BCST 16(SI), Z24, Z4
	VFMADD231PS.BCST 16(SI)(R8*1), Z24, Z12
	VFMADD231PS.BCST 16(SI)(R8*2), Z24, Z20
	VMOVUPS 320(DI), Z24
	VFMADD231PS.BCST 20(SI), Z24, Z5
	VFMADD231PS.BCST 20(SI)(R8*1), Z24, Z13
	VFMADD231PS.BCST 20(SI)(R8*2), Z24, Z21
	VMOVUPS 384(DI), Z24
	VFMADD231PS.BCST 24(SI), Z24, Z6
	VFMADD231PS.BCST 24(SI)(R8*1), Z24, Z14
	VFMADD231PS.BCST 24(SI)(R8*2), Z24, Z22
	VMOVUPS 448(DI), Z24
	VFMADD231PS.BCST 28(SI), Z24, Z7
	VFMADD231PS.BCST 28(SI)(R8*1), Z24, Z15
	VFMADD231PS.BCST 28(SI)(R8*2), Z24, Z23
	ADDQ $32, SI
	ADDQ $512, DI
	DECQ CX
	JNZ nt3x16loop

	MOVQ c+32(FP), SI
	MOVQ ldc+40(FP), R8
	SHLQ $2, R8
	VADDPS Z4, Z0, Z0
	VADDPS Z5, Z1, Z1
	VADDPS Z6, Z2, Z2
	VADDPS Z7, Z3, Z3
	VADDPS Z1, Z0, Z0
	VADDPS Z3, Z2, Z2
	VADDPS Z2, Z0, Z0
	VMOVUPS Z0, (SI)
	VADDPS Z12, Z8, Z8
	VADDPS Z13, Z9, Z9
	VADDPS Z14, Z10, Z10
	VADDPS Z15, Z11, Z11
	VADDPS Z9, Z8, Z8
	VADDPS Z11, Z10, Z10
	VADDPS Z10, Z8, Z8
	VMOVUPS Z8, (SI)(R8*1)
	VADDPS Z20, Z16, Z16
	VADDPS Z21, Z17, Z17
	VADDPS Z22, Z18, Z18
	VADDPS Z23, Z19, Z19
	VADDPS Z17, Z16, Z16
	VADDPS Z19, Z18, Z18
	VADDPS Z18, Z16, Z16
	VMOVUPS Z16, (SI)(R8*2)
	VZEROUPPER
	RET

// func kernNT1x16(k8 int, a *float32, bt *float32, c *float32)
// kernNT3x16 for one row (the rows past the last multiple of three).
TEXT ·kernNT1x16(SB), NOSPLIT, $0-32
	MOVQ k8+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ bt+16(FP), DI
	SHRQ $3, CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7

nt1x16loop:
	VMOVUPS 0(DI), Z24
	VFMADD231PS.BCST 0(SI), Z24, Z0
	VMOVUPS 64(DI), Z24
	VFMADD231PS.BCST 4(SI), Z24, Z1
	VMOVUPS 128(DI), Z24
	VFMADD231PS.BCST 8(SI), Z24, Z2
	VMOVUPS 192(DI), Z24
	VFMADD231PS.BCST 12(SI), Z24, Z3
	VMOVUPS 256(DI), Z24
	VFMADD231PS.BCST 16(SI), Z24, Z4
	VMOVUPS 320(DI), Z24
	VFMADD231PS.BCST 20(SI), Z24, Z5
	VMOVUPS 384(DI), Z24
	VFMADD231PS.BCST 24(SI), Z24, Z6
	VMOVUPS 448(DI), Z24
	VFMADD231PS.BCST 28(SI), Z24, Z7
	ADDQ $32, SI
	ADDQ $512, DI
	DECQ CX
	JNZ nt1x16loop

	MOVQ c+24(FP), SI
	VADDPS Z4, Z0, Z0
	VADDPS Z5, Z1, Z1
	VADDPS Z6, Z2, Z2
	VADDPS Z7, Z3, Z3
	VADDPS Z1, Z0, Z0
	VADDPS Z3, Z2, Z2
	VADDPS Z2, Z0, Z0
	VMOVUPS Z0, (SI)
	VZEROUPPER
	RET

// func kern6x8P512(k8 int, ap *float32, b *float32, ldb int, c *float32, ldc int)
// kern4x8P512 for six rows of A (packA6: for each 8-element chunk of k,
// rows 0 and 1's chunks side by side, then rows 2 and 3's, then 4 and 5's):
// kern4x3C's sums, bitwise. Each broadcast row of B feeds three FMAs where
// kern4x8P512's fed two (24 accumulators, Z(3q+p) holding rows 2p and 2p+1
// of column q).
TEXT ·kern6x8P512(SB), NOSPLIT, $0-48
	MOVQ k8+0(FP), CX
	MOVQ ap+8(FP), SI
	MOVQ b+16(FP), DI
	MOVQ ldb+24(FP), R8
	SHLQ $2, R8
	LEAQ (DI)(R8*1), R9
	LEAQ (R9)(R8*1), R10
	LEAQ (R10)(R8*1), R11
	LEAQ (R11)(R8*1), R12
	LEAQ (R12)(R8*1), R13
	LEAQ (R13)(R8*1), R14
	LEAQ (R14)(R8*1), R15
	SHRQ $3, CX
	XORQ AX, AX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23

loop6x8p:
	VMOVUPS 0(SI), Z24
	VMOVUPS 64(SI), Z25
	VMOVUPS 128(SI), Z26
	VBROADCASTF32X8 (DI)(AX*1), Z27
	VFMADD231PS Z27, Z24, Z0
	VFMADD231PS Z27, Z25, Z1
	VFMADD231PS Z27, Z26, Z2
	VBROADCASTF32X8 (R9)(AX*1), Z28
	VFMADD231PS Z28, Z24, Z3
	VFMADD231PS Z28, Z25, Z4
	VFMADD231PS Z28, Z26, Z5
	VBROADCASTF32X8 (R10)(AX*1), Z27
	VFMADD231PS Z27, Z24, Z6
	VFMADD231PS Z27, Z25, Z7
	VFMADD231PS Z27, Z26, Z8
	VBROADCASTF32X8 (R11)(AX*1), Z28
	VFMADD231PS Z28, Z24, Z9
	VFMADD231PS Z28, Z25, Z10
	VFMADD231PS Z28, Z26, Z11
	VBROADCASTF32X8 (R12)(AX*1), Z27
	VFMADD231PS Z27, Z24, Z12
	VFMADD231PS Z27, Z25, Z13
	VFMADD231PS Z27, Z26, Z14
	VBROADCASTF32X8 (R13)(AX*1), Z28
	VFMADD231PS Z28, Z24, Z15
	VFMADD231PS Z28, Z25, Z16
	VFMADD231PS Z28, Z26, Z17
	VBROADCASTF32X8 (R14)(AX*1), Z27
	VFMADD231PS Z27, Z24, Z18
	VFMADD231PS Z27, Z25, Z19
	VFMADD231PS Z27, Z26, Z20
	VBROADCASTF32X8 (R15)(AX*1), Z28
	VFMADD231PS Z28, Z24, Z21
	VFMADD231PS Z28, Z25, Z22
	VFMADD231PS Z28, Z26, Z23
	ADDQ $192, SI
	ADDQ $32, AX
	DECQ CX
	JNZ loop6x8p

	MOVQ c+32(FP), SI
	MOVQ ldc+40(FP), R8
	SHLQ $2, R8
	LEAQ (SI)(R8*1), R10
	LEAQ (R10)(R8*1), R11
	LEAQ (R11)(R8*1), R12
	LEAQ (R12)(R8*1), R13
	LEAQ (R13)(R8*1), R14
	PAIRS8(Z0, Z3, Z6, Z9, Z12, Z15, Z18, Z21, Z29, Y0, SI, R10)
	PAIRS8(Z1, Z4, Z7, Z10, Z13, Z16, Z19, Z22, Z29, Y1, R11, R12)
	PAIRS8(Z2, Z5, Z8, Z11, Z14, Z17, Z20, Z23, Z29, Y2, R13, R14)
	VZEROUPPER
	RET

// func packA6Group(chunks int, a *float32, lda int, dst *float32)
// packA6 for one group of six rows of A: for each 8-element chunk of k,
// rows 0..5's chunks in turn (48 floats).
TEXT ·packA6Group(SB), NOSPLIT, $0-32
	MOVQ chunks+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R8
	MOVQ dst+24(FP), DI
	SHLQ $2, R8
	LEAQ (R8)(R8*2), R9
	LEAQ (SI)(R8*4), DX

pa6loop:
	VMOVUPS (SI), Y0
	VMOVUPS (SI)(R8*1), Y1
	VMOVUPS (SI)(R8*2), Y2
	VMOVUPS (SI)(R9*1), Y3
	VMOVUPS (DX), Y4
	VMOVUPS (DX)(R8*1), Y5
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 128(DI)
	VMOVUPS Y5, 160(DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $192, DI
	DECQ CX
	JNZ pa6loop
	VZEROUPPER
	RET

// func kernNTS16(ns int, a *float32, bt *float32, c *float32, alpha float32, beta float32)
// C[q] = alpha·Σ_p a[p]·B[q, p] + beta·C[q] for one row of A, k = 16 and
// the 16·ns columns of C, with B packed as ns strips of 16 × 16 (bt[(s*16+p)
// *16+q] = B[s*16+q, p]): LoRA's out += s·(u·Bᵀ) at rank 16. Each element
// is kern4x8P512S's, bitwise: chain l (FMAs from zero) adds products l and
// 8+l, the chains are reduced as ((l0+l4)+(l1+l5))+((l2+l6)+(l3+l7)), then
// two rounded products and their rounded sum. The row's 16 values are
// broadcast once into Z8–Z23 and every FMA fills a register with useful
// products, where the dot-product kernel spent most of its time at k = 16
// in its reduction's shuffles.
TEXT ·kernNTS16(SB), NOSPLIT, $0-40
	MOVQ ns+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ bt+16(FP), DI
	MOVQ c+24(FP), BX
	VBROADCASTSS alpha+32(FP), Z24
	VBROADCASTSS beta+36(FP), Z25
	VBROADCASTSS 0(SI), Z8
	VBROADCASTSS 4(SI), Z9
	VBROADCASTSS 8(SI), Z10
	VBROADCASTSS 12(SI), Z11
	VBROADCASTSS 16(SI), Z12
	VBROADCASTSS 20(SI), Z13
	VBROADCASTSS 24(SI), Z14
	VBROADCASTSS 28(SI), Z15
	VBROADCASTSS 32(SI), Z16
	VBROADCASTSS 36(SI), Z17
	VBROADCASTSS 40(SI), Z18
	VBROADCASTSS 44(SI), Z19
	VBROADCASTSS 48(SI), Z20
	VBROADCASTSS 52(SI), Z21
	VBROADCASTSS 56(SI), Z22
	VBROADCASTSS 60(SI), Z23

nts16loop:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VFMADD231PS 0(DI), Z8, Z0
	VFMADD231PS 64(DI), Z9, Z1
	VFMADD231PS 128(DI), Z10, Z2
	VFMADD231PS 192(DI), Z11, Z3
	VFMADD231PS 256(DI), Z12, Z4
	VFMADD231PS 320(DI), Z13, Z5
	VFMADD231PS 384(DI), Z14, Z6
	VFMADD231PS 448(DI), Z15, Z7
	VFMADD231PS 512(DI), Z16, Z0
	VFMADD231PS 576(DI), Z17, Z1
	VFMADD231PS 640(DI), Z18, Z2
	VFMADD231PS 704(DI), Z19, Z3
	VFMADD231PS 768(DI), Z20, Z4
	VFMADD231PS 832(DI), Z21, Z5
	VFMADD231PS 896(DI), Z22, Z6
	VFMADD231PS 960(DI), Z23, Z7
	VADDPS Z4, Z0, Z0
	VADDPS Z5, Z1, Z1
	VADDPS Z6, Z2, Z2
	VADDPS Z7, Z3, Z3
	VADDPS Z1, Z0, Z0
	VADDPS Z3, Z2, Z2
	VADDPS Z2, Z0, Z0
	VMULPS Z24, Z0, Z0
	VMULPS (BX), Z25, Z1
	VADDPS Z1, Z0, Z0
	VMOVUPS Z0, (BX)
	ADDQ $1024, DI
	ADDQ $64, BX
	DECQ CX
	JNZ nts16loop
	VZEROUPPER
	RET
