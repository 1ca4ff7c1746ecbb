//go:build !purego

#include "textflag.h"

// Eight interleaved weight rows (packed.go's layout) against one Q8
// activation row. Each int32 lane is one row, so a block's scales are
// applied to eight rows by one vector multiply, and the result is stored
// without horizontal sums across lanes.
//
// The float arithmetic is llama.cpp's, row by row: its AVX2 dot products
// keep eight float lanes per row, lane j summing (over blocks) the int
// products of values 4j..4j+3 times d_w·d_a by FMA, and end with
// ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)), plus Σ m·s for Q4_1. Here
// Y4..Y11 are those eight lanes for eight rows, so every row's result is
// bitwise the one-row kernel's (dot_amd64.s), and greedy ids follow
// llama.cpp's as closely as before.
//
// Registers: SI packed weights, DI activation qs, DX its (d, d·Σq) pairs,
// R8 (Q8_0) 128·Σ of each four activation values, CX blocks left; Y14 the
// block's scales d_w·d_a; Y13 Σ m·s (Q4_1); Y15 the 0x0F mask (Q4_1) or
// 0x80 (Q8_0, AVX2); Y12 int16 ones (AVX2).

// IDOT(s, u, dst): int32 lanes of four-byte products of unsigned u and
// signed s.
#define PIDOT_VNNI(s, u, dst) \
	VPXOR dst, dst, dst; \
	VPDPBUSD s, u, dst

#define PIDOT_AVX2(s, u, dst) \
	VPMADDUBSW s, u, dst; \
	VPMADDWD Y12, dst, dst

// PFDIST is how far ahead of the block being read the kernels prefetch
// (every line of the block that far ahead): a decode step streams each
// matrix once from memory, and the hardware prefetchers stop at 4 KiB
// page boundaries. It gained ~20 % of bytes per CPU-second on matrices
// too large for the caches (BENCHMARKS.md, "Profile of Qwen3-0.6B-shaped Q4_K_M decode").
#define PFDIST 4096

#define PACKED_CONSTS \
	MOVL $0x00010001, AX; \
	VMOVD AX, X12; \
	VPBROADCASTD X12, Y12; \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7; \
	VXORPS Y8, Y8, Y8; \
	VXORPS Y9, Y9, Y9; \
	VXORPS Y10, Y10, Y10; \
	VXORPS Y11, Y11, Y11; \
	VXORPS Y13, Y13, Y13

// The lanes' sum in hsum_float_8's order, plus Y13, stored at out.
#define PACKED_STORE \
	VADDPS Y8, Y4, Y4; \
	VADDPS Y9, Y5, Y5; \
	VADDPS Y10, Y6, Y6; \
	VADDPS Y11, Y7, Y7; \
	VADDPS Y6, Y4, Y4; \
	VADDPS Y7, Y5, Y5; \
	VADDPS Y5, Y4, Y4; \
	VADDPS Y13, Y4, Y4; \
	MOVQ out+40(FP), BX; \
	VMOVUPS Y4, (BX); \
	VZEROUPPER; \
	RET

// Vector k of a Q4_1 block: lane k (low nibbles, values 4k..4k+3) and
// lane 4+k (high nibbles, values 16+4k..16+4k+3).
#define Q4_1_PK(IDOT, k, lo, hi) \
	VMOVDQU (32*k)(SI), Y0; \
	VPSRLW $4, Y0, Y1; \
	VPAND Y15, Y0, Y0; \
	VPAND Y15, Y1, Y1; \
	VPBROADCASTD (4*k)(DI), Y2; \
	IDOT(Y2, Y0, Y3); \
	VCVTDQ2PS Y3, Y3; \
	VFMADD231PS Y14, Y3, lo; \
	VPBROADCASTD (16+4*k)(DI), Y2; \
	IDOT(Y2, Y1, Y3); \
	VCVTDQ2PS Y3, Y3; \
	VFMADD231PS Y14, Y3, hi

#define GEMV_Q4_1(name, IDOT) \
TEXT name(SB), NOSPLIT, $0-48; \
	MOVQ nb+0(FP), CX; \
	MOVQ w+8(FP), SI; \
	MOVQ qs+16(FP), DI; \
	MOVQ ds+24(FP), DX; \
	PACKED_CONSTS; \
	MOVL $0x0F0F0F0F, AX; \
	VMOVD AX, X15; \
	VPBROADCASTD X15, Y15; \
loop: \
	PREFETCHT0 (PFDIST+0)(SI); \
	PREFETCHT0 (PFDIST+64)(SI); \
	PREFETCHT0 (PFDIST+128)(SI); \
	VCVTPH2PS 128(SI), Y14; \
	VBROADCASTSS (DX), Y2; \
	VMULPS Y2, Y14, Y14; \
	VCVTPH2PS 144(SI), Y0; \
	VBROADCASTSS 4(DX), Y2; \
	VMULPS Y2, Y0, Y0; \
	VADDPS Y0, Y13, Y13; \
	Q4_1_PK(IDOT, 0, Y4, Y8); \
	Q4_1_PK(IDOT, 1, Y5, Y9); \
	Q4_1_PK(IDOT, 2, Y6, Y10); \
	Q4_1_PK(IDOT, 3, Y7, Y11); \
	ADDQ $160, SI; \
	ADDQ $32, DI; \
	ADDQ $8, DX; \
	DECQ CX; \
	JNZ loop; \
	PACKED_STORE

// func gemvQ4_1x8VNNI(nb int, w *byte, qs *int8, ds *float32, sums *int32, out *float32)
GEMV_Q4_1(·gemvQ4_1x8VNNI, PIDOT_VNNI)

// func gemvQ4_1x8AVX2(nb int, w *byte, qs *int8, ds *float32, sums *int32, out *float32)
GEMV_Q4_1(·gemvQ4_1x8AVX2, PIDOT_AVX2)

// Q8_0 with VNNI: the weights are stored as w+128 (unsigned), so lane k's
// int sum is Σ(w+128)·a − 128·Σa over values 4k..4k+3.
#define Q8_0_PK_VNNI(k, acc) \
	VMOVDQU (32*k)(SI), Y0; \
	VPBROADCASTD (4*k)(DI), Y2; \
	PIDOT_VNNI(Y2, Y0, Y3); \
	VPBROADCASTD (4*k)(R8), Y1; \
	VPSUBD Y1, Y3, Y3; \
	VCVTDQ2PS Y3, Y3; \
	VFMADD231PS Y14, Y3, acc

// Q8_0 with AVX2: back to signed w, then |w| times a·sign(w) (VPMADDUBSW
// takes one unsigned operand; pairs at most 2·128·127, no saturation), as
// llama.cpp's mul_sum_i8_pairs_float does.
#define Q8_0_PK_AVX2(k, acc) \
	VMOVDQU (32*k)(SI), Y0; \
	VPXOR Y15, Y0, Y0; \
	VPABSB Y0, Y1; \
	VPBROADCASTD (4*k)(DI), Y2; \
	VPSIGNB Y0, Y2, Y2; \
	PIDOT_AVX2(Y2, Y1, Y3); \
	VCVTDQ2PS Y3, Y3; \
	VFMADD231PS Y14, Y3, acc

#define GEMV_Q8_0(name, K) \
TEXT name(SB), NOSPLIT, $0-48; \
	MOVQ nb+0(FP), CX; \
	MOVQ w+8(FP), SI; \
	MOVQ qs+16(FP), DI; \
	MOVQ ds+24(FP), DX; \
	MOVQ sums+32(FP), R8; \
	PACKED_CONSTS; \
	MOVL $0x80808080, AX; \
	VMOVD AX, X15; \
	VPBROADCASTD X15, Y15; \
loop: \
	PREFETCHT0 (PFDIST+0)(SI); \
	PREFETCHT0 (PFDIST+64)(SI); \
	PREFETCHT0 (PFDIST+128)(SI); \
	PREFETCHT0 (PFDIST+192)(SI); \
	PREFETCHT0 (PFDIST+256)(SI); \
	VCVTPH2PS 256(SI), Y14; \
	VBROADCASTSS (DX), Y2; \
	VMULPS Y2, Y14, Y14; \
	K(0, Y4); \
	K(1, Y5); \
	K(2, Y6); \
	K(3, Y7); \
	K(4, Y8); \
	K(5, Y9); \
	K(6, Y10); \
	K(7, Y11); \
	ADDQ $272, SI; \
	ADDQ $32, DI; \
	ADDQ $8, DX; \
	ADDQ $32, R8; \
	DECQ CX; \
	JNZ loop; \
	PACKED_STORE

// func gemvQ8_0x8VNNI(nb int, w *byte, qs *int8, ds *float32, sums *int32, out *float32)
GEMV_Q8_0(·gemvQ8_0x8VNNI, Q8_0_PK_VNNI)

// func gemvQ8_0x8AVX2(nb int, w *byte, qs *int8, ds *float32, sums *int32, out *float32)
GEMV_Q8_0(·gemvQ8_0x8AVX2, Q8_0_PK_AVX2)

// Q4_0 (no one-row assembly kernel to match bitwise): each row's whole
// block sums exactly in its int32 lane, Σ q·a over the nibbles (0..15)
// minus 8·Σa (R8: the activation's exact Σq per block, Act.isums), then
// one FMA with d_w·d_a, as the reference (dot_ref.go) computes it.
#define Q4_0_PK(IDOT, k) \
	VMOVDQU (32*k)(SI), Y0; \
	VPSRLW $4, Y0, Y1; \
	VPAND Y15, Y0, Y0; \
	VPAND Y15, Y1, Y1; \
	VPBROADCASTD (4*k)(DI), Y2; \
	IDOT(Y2, Y0, Y3); \
	VPADDD Y3, Y4, Y4; \
	VPBROADCASTD (16+4*k)(DI), Y2; \
	IDOT(Y2, Y1, Y3); \
	VPADDD Y3, Y5, Y5

#define GEMV_Q4_0(name, IDOT) \
TEXT name(SB), NOSPLIT, $0-48; \
	MOVQ nb+0(FP), CX; \
	MOVQ w+8(FP), SI; \
	MOVQ qs+16(FP), DI; \
	MOVQ ds+24(FP), DX; \
	MOVQ sums+32(FP), R8; \
	PACKED_CONSTS; \
	MOVL $0x0F0F0F0F, AX; \
	VMOVD AX, X15; \
	VPBROADCASTD X15, Y15; \
loop: \
	PREFETCHT0 (PFDIST+0)(SI); \
	PREFETCHT0 (PFDIST+64)(SI); \
	PREFETCHT0 (PFDIST+128)(SI); \
	VPXOR Y4, Y4, Y4; \
	VPXOR Y5, Y5, Y5; \
	Q4_0_PK(IDOT, 0); \
	Q4_0_PK(IDOT, 1); \
	Q4_0_PK(IDOT, 2); \
	Q4_0_PK(IDOT, 3); \
	VPADDD Y5, Y4, Y4; \
	VPBROADCASTD (R8), Y6; \
	VPSLLD $3, Y6, Y6; \
	VPSUBD Y6, Y4, Y4; \
	VCVTDQ2PS Y4, Y4; \
	VCVTPH2PS 128(SI), Y14; \
	VBROADCASTSS (DX), Y2; \
	VMULPS Y2, Y14, Y14; \
	VFMADD231PS Y14, Y4, Y13; \
	ADDQ $144, SI; \
	ADDQ $32, DI; \
	ADDQ $8, DX; \
	ADDQ $4, R8; \
	DECQ CX; \
	JNZ loop; \
	MOVQ out+40(FP), BX; \
	VMOVUPS Y13, (BX); \
	VZEROUPPER; \
	RET

// func gemvQ4_0x8VNNI(nb int, w *byte, qs *int8, ds *float32, sums *int32, out *float32)
GEMV_Q4_0(·gemvQ4_0x8VNNI, PIDOT_VNNI)

// func gemvQ4_0x8AVX2(nb int, w *byte, qs *int8, ds *float32, sums *int32, out *float32)
GEMV_Q4_0(·gemvQ4_0x8AVX2, PIDOT_AVX2)

// Q5_0 / Q5_1: Q4_0's nibble vectors plus one vector of the rows' fifth
// bits, rearranged at packing so that bit 8i+g of a row's dword is the
// fifth bit of element i of value group g (groups 0..3: values 4g..4g+3,
// the low nibbles of vector g; 4..7: values 16+4(g-4).., the high ones).
// A dword shift moves group g's bits to bit 4 of each byte (Y9 holds the
// 0x10 mask). R8: the activation's exact Σq per block.
#define Q5_PK(IDOT, k, HSHL, HSHR) \
	VMOVDQU (32*k)(SI), Y0; \
	VPSRLW $4, Y0, Y1; \
	VPAND Y15, Y0, Y0; \
	VPAND Y15, Y1, Y1; \
	HSHL; \
	VPAND Y9, Y7, Y7; \
	VPOR Y7, Y0, Y0; \
	HSHR; \
	VPAND Y9, Y8, Y8; \
	VPOR Y8, Y1, Y1; \
	VPBROADCASTD (4*k)(DI), Y2; \
	IDOT(Y2, Y0, Y3); \
	VPADDD Y3, Y4, Y4; \
	VPBROADCASTD (16+4*k)(DI), Y2; \
	IDOT(Y2, Y1, Y3); \
	VPADDD Y3, Y5, Y5

// Group k's bits (low nibbles) into Y7, group 4+k's (high) into Y8, from
// the fifth-bit vector Y10.
#define H0L VPSLLD $4, Y10, Y7
#define H1L VPSLLD $3, Y10, Y7
#define H2L VPSLLD $2, Y10, Y7
#define H3L VPSLLD $1, Y10, Y7
#define H0R VMOVDQA Y10, Y8
#define H1R VPSRLD $1, Y10, Y8
#define H2R VPSRLD $2, Y10, Y8
#define H3R VPSRLD $3, Y10, Y8

// Q5_0 (16·Σa subtracted; d at 160) and Q5_1 (values unsigned; d at 160,
// and m at 176 times the activation's d·Σq, as Q4_1 does).
#define GEMV_Q5(name, IDOT, size, ONEBLOCK) \
TEXT name(SB), NOSPLIT, $0-48; \
	MOVQ nb+0(FP), CX; \
	MOVQ w+8(FP), SI; \
	MOVQ qs+16(FP), DI; \
	MOVQ ds+24(FP), DX; \
	MOVQ sums+32(FP), R8; \
	PACKED_CONSTS; \
	MOVL $0x0F0F0F0F, AX; \
	VMOVD AX, X15; \
	VPBROADCASTD X15, Y15; \
	MOVL $0x10101010, AX; \
	VMOVD AX, X9; \
	VPBROADCASTD X9, Y9; \
loop: \
	PREFETCHT0 (PFDIST+0)(SI); \
	PREFETCHT0 (PFDIST+64)(SI); \
	PREFETCHT0 (PFDIST+128)(SI); \
	VPXOR Y4, Y4, Y4; \
	VPXOR Y5, Y5, Y5; \
	VMOVDQU 128(SI), Y10; \
	Q5_PK(IDOT, 0, H0L, H0R); \
	Q5_PK(IDOT, 1, H1L, H1R); \
	Q5_PK(IDOT, 2, H2L, H2R); \
	Q5_PK(IDOT, 3, H3L, H3R); \
	VPADDD Y5, Y4, Y4; \
	ONEBLOCK; \
	ADDQ $size, SI; \
	ADDQ $32, DI; \
	ADDQ $8, DX; \
	ADDQ $4, R8; \
	DECQ CX; \
	JNZ loop; \
	MOVQ out+40(FP), BX; \
	VMOVUPS Y13, (BX); \
	VZEROUPPER; \
	RET

#define Q5_0_BLOCK \
	VPBROADCASTD (R8), Y6; \
	VPSLLD $4, Y6, Y6; \
	VPSUBD Y6, Y4, Y4; \
	VCVTDQ2PS Y4, Y4; \
	VCVTPH2PS 160(SI), Y14; \
	VBROADCASTSS (DX), Y2; \
	VMULPS Y2, Y14, Y14; \
	VFMADD231PS Y14, Y4, Y13

#define Q5_1_BLOCK \
	VCVTDQ2PS Y4, Y4; \
	VCVTPH2PS 160(SI), Y14; \
	VBROADCASTSS (DX), Y2; \
	VMULPS Y2, Y14, Y14; \
	VFMADD231PS Y14, Y4, Y13; \
	VCVTPH2PS 176(SI), Y0; \
	VBROADCASTSS 4(DX), Y2; \
	VFMADD231PS Y2, Y0, Y13

// func gemvQ5_0x8VNNI(nb int, w *byte, qs *int8, ds *float32, sums *int32, out *float32)
GEMV_Q5(·gemvQ5_0x8VNNI, PIDOT_VNNI, 176, Q5_0_BLOCK)

// func gemvQ5_0x8AVX2(nb int, w *byte, qs *int8, ds *float32, sums *int32, out *float32)
GEMV_Q5(·gemvQ5_0x8AVX2, PIDOT_AVX2, 176, Q5_0_BLOCK)

// func gemvQ5_1x8VNNI(nb int, w *byte, qs *int8, ds *float32, sums *int32, out *float32)
GEMV_Q5(·gemvQ5_1x8VNNI, PIDOT_VNNI, 192, Q5_1_BLOCK)

// func gemvQ5_1x8AVX2(nb int, w *byte, qs *int8, ds *float32, sums *int32, out *float32)
GEMV_Q5(·gemvQ5_1x8AVX2, PIDOT_AVX2, 192, Q5_1_BLOCK)
