//go:build !purego

#include "textflag.h"

// Two-token form of packed_amd64.s's Q8_0 VNNI kernel (the LM head's
// forward over many response rows, and any Q8_0 matrix in a prefill):
// each block's eight weight vectors are loaded once for both tokens. The
// one-token kernel keeps eight float lanes per row (llama.cpp's order), so
// one token takes eight accumulators and two take sixteen; Go's
// gemvQ8_0x8x4VNNI runs it twice for four tokens, the second time on the
// group's blocks already in L1. Per token and vector k the int32 lane is
// −128·Σa + Σ(w+128)·a, the one-token kernel's Σ(w+128)·a − 128·Σa (the
// same integer: VPDPBUSD wraps, it does not saturate), the scale is
// d_w·d_a and the lanes are summed in PACKED_STORE's order (plus +0, as
// that kernel adds its zero Y13), so every output is bitwise that
// kernel's. It uses the EVEX registers Y16–Y23 (AVX-512 VL, which VNNI
// here implies).
//
// Registers: SI packed weights, DI token 0's qs (R9 the stride to token
// 1's), DX token 0's (d, d·Σq) pairs (R10), R8 its 128·Σ of each four
// activation values (R11), CX blocks left; Y15 zero; Y14 the block's d_w,
// Y12 and Y13 its scales for tokens 0 and 1; Y4..Y11 token 0's lanes,
// Y16..Y23 token 1's.

#define PFDIST 4096

#define Q8X2(k, acc0, acc1) \
	VMOVDQU (32*k)(SI), Y0; \
	VPSUBD.BCST (4*k)(R8), Y15, Y1; \
	VPDPBUSD.BCST (4*k)(DI), Y0, Y1; \
	VCVTDQ2PS Y1, Y1; \
	VFMADD231PS Y12, Y1, acc0; \
	VPSUBD.BCST (4*k)(R8)(R11*1), Y15, Y2; \
	VPDPBUSD.BCST (4*k)(DI)(R9*1), Y0, Y2; \
	VCVTDQ2PS Y2, Y2; \
	VFMADD231PS Y13, Y2, acc1

// func gemvQ8_0x8x2VNNI(nb int, w *byte, qs *int8, ldq int, ds *float32, ldd int, sums *int32, lds int, out *float32, ldo int)
TEXT ·gemvQ8_0x8x2VNNI(SB), NOSPLIT, $0-80
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ qs+16(FP), DI
	MOVQ ldq+24(FP), R9
	MOVQ ds+32(FP), DX
	MOVQ ldd+40(FP), R10
	MOVQ sums+48(FP), R8
	MOVQ lds+56(FP), R11
	VPXOR Y15, Y15, Y15
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	VPXORD Y16, Y16, Y16
	VPXORD Y17, Y17, Y17
	VPXORD Y18, Y18, Y18
	VPXORD Y19, Y19, Y19
	VPXORD Y20, Y20, Y20
	VPXORD Y21, Y21, Y21
	VPXORD Y22, Y22, Y22
	VPXORD Y23, Y23, Y23
q8x2loop:
	PREFETCHT0 (PFDIST+0)(SI)
	PREFETCHT0 (PFDIST+64)(SI)
	PREFETCHT0 (PFDIST+128)(SI)
	PREFETCHT0 (PFDIST+192)(SI)
	PREFETCHT0 (PFDIST+256)(SI)
	VCVTPH2PS 256(SI), Y14
	VBROADCASTSS (DX), Y12
	VMULPS Y12, Y14, Y12
	VBROADCASTSS (DX)(R10*1), Y13
	VMULPS Y13, Y14, Y13
	Q8X2(0, Y4, Y16)
	Q8X2(1, Y5, Y17)
	Q8X2(2, Y6, Y18)
	Q8X2(3, Y7, Y19)
	Q8X2(4, Y8, Y20)
	Q8X2(5, Y9, Y21)
	Q8X2(6, Y10, Y22)
	Q8X2(7, Y11, Y23)
	ADDQ $272, SI
	ADDQ $32, DI
	ADDQ $8, DX
	ADDQ $32, R8
	DECQ CX
	JNZ q8x2loop
	VADDPS Y8, Y4, Y4
	VADDPS Y9, Y5, Y5
	VADDPS Y10, Y6, Y6
	VADDPS Y11, Y7, Y7
	VADDPS Y6, Y4, Y4
	VADDPS Y7, Y5, Y5
	VADDPS Y5, Y4, Y4
	VADDPS Y15, Y4, Y4
	VADDPS Y20, Y16, Y16
	VADDPS Y21, Y17, Y17
	VADDPS Y22, Y18, Y18
	VADDPS Y23, Y19, Y19
	VADDPS Y18, Y16, Y16
	VADDPS Y19, Y17, Y17
	VADDPS Y17, Y16, Y16
	VADDPS Y15, Y16, Y16
	MOVQ out+64(FP), AX
	MOVQ ldo+72(FP), CX
	VMOVUPS Y4, (AX)
	VMOVUPS Y16, (AX)(CX*1)
	VZEROUPPER
	RET
