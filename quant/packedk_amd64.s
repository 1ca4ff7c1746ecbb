//go:build !purego

#include "textflag.h"

// Packed eight-row K-quant kernels (packed.go's Q4_K, Q5_K and Q6_K layouts)
// against one Q8_K activation row: each int32 lane is one weight row.
// Per sub-block the unsigned weight values are multiplied with broadcast
// activation dwords four at a time (VPDPBUSD, or VPMADDUBSW + VPMADDWD
// on AVX2: pairs of at most 2·63·127, no saturation), summed exactly in
// int32 per row, then multiplied by the rows' sub-block scales (VPMULLD);
// once per super-block the integer sum becomes float and is folded in
// with d_w·d_a, as the reference does (dot_ref.go), fused.
//
// Integer ranges (any bytes a file may hold): Q4_K |Σ sc·q·a| over a
// super-block ≤ 8·63·32·15·127, Q5_K ≤ 8·63·32·31·127, Q6_K ≤
// 16·128·16·(63+32)·127: all below 2^31.
//
// Registers: SI packed weights, DI activation qs, DX its d per
// super-block, R8 its sums (Act.sums), CX super-blocks left; Y15 the 0x0F
// mask, Y13 int16 ones (AVX2), Y12 the eight rows' float sums, Y11 the
// super-block's integer sums.

// KACC(s, u, acc, tmp): acc += the int32 lanes of four-byte products of
// unsigned u and signed s.
#define KACC_VNNI(s, u, acc, tmp) \
	VPDPBUSD s, u, acc

#define KACC_AVX2(s, u, acc, tmp) \
	VPMADDUBSW s, u, tmp; \
	VPMADDWD Y13, tmp, tmp; \
	VPADDD tmp, acc, acc

// PFDIST: see packed_amd64.s (each super-block's lines are prefetched
// that far ahead).
#define PFDIST 4096

#define KCONSTS \
	MOVL $0x00010001, AX; \
	VMOVD AX, X13; \
	VPBROADCASTD X13, Y13; \
	MOVL $0x0F0F0F0F, AX; \
	VMOVD AX, X15; \
	VPBROADCASTD X15, Y15; \
	VXORPS Y12, Y12, Y12

#define KSTORE \
	MOVQ out+40(FP), BX; \
	VMOVUPS Y12, (BX); \
	VZEROUPPER; \
	RET

// Q4_K column k of sub-block pair j: low nibbles (sub-block 2j) into Y6,
// high ones (2j+1) into Y7.
#define Q4K_COL(KACC, j, k) \
	VMOVDQU (256*j+32*k)(SI), Y0; \
	VPSRLW $4, Y0, Y1; \
	VPAND Y15, Y0, Y0; \
	VPAND Y15, Y1, Y1; \
	VPBROADCASTD (64*j+4*k)(DI), Y2; \
	KACC(Y2, Y0, Y6, Y4); \
	VPBROADCASTD (64*j+32+4*k)(DI), Y3; \
	KACC(Y3, Y1, Y7, Y5)

// Sub-block pair j: Y11 += sc(2j)·Σ(2j) + sc(2j+1)·Σ(2j+1).
#define Q4K_PAIR(KACC, j) \
	VPXOR Y6, Y6, Y6; \
	VPXOR Y7, Y7, Y7; \
	Q4K_COL(KACC, j, 0); \
	Q4K_COL(KACC, j, 1); \
	Q4K_COL(KACC, j, 2); \
	Q4K_COL(KACC, j, 3); \
	Q4K_COL(KACC, j, 4); \
	Q4K_COL(KACC, j, 5); \
	Q4K_COL(KACC, j, 6); \
	Q4K_COL(KACC, j, 7); \
	VPMOVZXBD (1024+16*j)(SI), Y0; \
	VPMULLD Y0, Y6, Y6; \
	VPADDD Y6, Y11, Y11; \
	VPMOVZXBD (1032+16*j)(SI), Y1; \
	VPMULLD Y1, Y7, Y7; \
	VPADDD Y7, Y11, Y11

// Minimum of sub-block s: Y10 += m(s)·Σa over its 32 values.
#define Q4K_MIN(s) \
	VPMOVZXBD (1088+8*s)(SI), Y0; \
	VPBROADCASTD (4*s)(R8), Y1; \
	VPMULLD Y1, Y0, Y0; \
	VPADDD Y0, Y10, Y10

#define GEMV_Q4K(name, KACC) \
TEXT name(SB), NOSPLIT, $0-48; \
	MOVQ nb+0(FP), CX; \
	MOVQ w+8(FP), SI; \
	MOVQ qs+16(FP), DI; \
	MOVQ ds+24(FP), DX; \
	MOVQ sums+32(FP), R8; \
	KCONSTS; \
loop: \
	PREFETCHT0 (PFDIST+0)(SI); \
	PREFETCHT0 (PFDIST+64)(SI); \
	PREFETCHT0 (PFDIST+128)(SI); \
	PREFETCHT0 (PFDIST+192)(SI); \
	PREFETCHT0 (PFDIST+256)(SI); \
	PREFETCHT0 (PFDIST+320)(SI); \
	PREFETCHT0 (PFDIST+384)(SI); \
	PREFETCHT0 (PFDIST+448)(SI); \
	PREFETCHT0 (PFDIST+512)(SI); \
	PREFETCHT0 (PFDIST+576)(SI); \
	PREFETCHT0 (PFDIST+640)(SI); \
	PREFETCHT0 (PFDIST+704)(SI); \
	PREFETCHT0 (PFDIST+768)(SI); \
	PREFETCHT0 (PFDIST+832)(SI); \
	PREFETCHT0 (PFDIST+896)(SI); \
	PREFETCHT0 (PFDIST+960)(SI); \
	PREFETCHT0 (PFDIST+1024)(SI); \
	PREFETCHT0 (PFDIST+1088)(SI); \
	PREFETCHT0 (PFDIST+1152)(SI); \
	VPXOR Y11, Y11, Y11; \
	VPXOR Y10, Y10, Y10; \
	Q4K_PAIR(KACC, 0); \
	Q4K_PAIR(KACC, 1); \
	Q4K_PAIR(KACC, 2); \
	Q4K_PAIR(KACC, 3); \
	Q4K_MIN(0); \
	Q4K_MIN(1); \
	Q4K_MIN(2); \
	Q4K_MIN(3); \
	Q4K_MIN(4); \
	Q4K_MIN(5); \
	Q4K_MIN(6); \
	Q4K_MIN(7); \
	VBROADCASTSS (DX), Y2; \
	VCVTDQ2PS Y11, Y11; \
	VCVTPH2PS 1152(SI), Y0; \
	VMULPS Y2, Y0, Y0; \
	VFMADD231PS Y0, Y11, Y12; \
	VCVTDQ2PS Y10, Y10; \
	VCVTPH2PS 1168(SI), Y1; \
	VMULPS Y2, Y1, Y1; \
	VFNMADD231PS Y1, Y10, Y12; \
	ADDQ $1184, SI; \
	ADDQ $256, DI; \
	ADDQ $4, DX; \
	ADDQ $32, R8; \
	DECQ CX; \
	JNZ loop; \
	KSTORE

// func gemvQ4Kx8VNNI(nb int, w *byte, qs *int8, ds *float32, sums *int32, out *float32)
GEMV_Q4K(·gemvQ4Kx8VNNI, KACC_VNNI)

// func gemvQ4Kx8AVX2(nb int, w *byte, qs *int8, ds *float32, sums *int32, out *float32)
GEMV_Q4K(·gemvQ4Kx8AVX2, KACC_AVX2)

// Q6_K column k of half n: the four value vectors rebuilt from ql (Y0:
// bytes 64n+4k.., Y1: 64n+32+4k..) and qh (Y2: 32n+4k..) as the
// reference does (low 4 bits | 2 high bits << 4, unsigned 0..63), into
// A0..A3 (values 128n+4k.., +32, +64, +96). Y14 is the 0x30 mask.
#define Q6K_COL(KACC, n, k, A0, A1, A2, A3) \
	VMOVDQU (512*n+32*k)(SI), Y0; \
	VMOVDQU (512*n+256+32*k)(SI), Y1; \
	VMOVDQU (1024+256*n+32*k)(SI), Y2; \
	VPAND Y15, Y0, Y3; \
	VPSLLW $4, Y2, Y4; \
	VPAND Y14, Y4, Y4; \
	VPOR Y4, Y3, Y3; \
	VPBROADCASTD (128*n+4*k)(DI), Y5; \
	KACC(Y5, Y3, A0, Y6); \
	VPAND Y15, Y1, Y3; \
	VPSLLW $2, Y2, Y4; \
	VPAND Y14, Y4, Y4; \
	VPOR Y4, Y3, Y3; \
	VPBROADCASTD (128*n+32+4*k)(DI), Y5; \
	KACC(Y5, Y3, A1, Y6); \
	VPSRLW $4, Y0, Y3; \
	VPAND Y15, Y3, Y3; \
	VPAND Y14, Y2, Y4; \
	VPOR Y4, Y3, Y3; \
	VPBROADCASTD (128*n+64+4*k)(DI), Y5; \
	KACC(Y5, Y3, A2, Y6); \
	VPSRLW $4, Y1, Y3; \
	VPAND Y15, Y3, Y3; \
	VPSRLW $2, Y2, Y4; \
	VPAND Y14, Y4, Y4; \
	VPOR Y4, Y3, Y3; \
	VPBROADCASTD (128*n+96+4*k)(DI), Y5; \
	KACC(Y5, Y3, A3, Y6)

// The 16 values s in acc: Y11 += sc(s)·(Σq·a − 32·Σa) (the values are
// stored +32; R8 holds 32·Σa per 16).
#define Q6K_SCALE(s, acc) \
	VPBROADCASTD (4*s)(R8), Y5; \
	VPSUBD Y5, acc, acc; \
	VPMOVSXBD (1536+8*s)(SI), Y6; \
	VPMULLD Y6, acc, acc; \
	VPADDD acc, Y11, Y11

#define GEMV_Q6K(name, KACC) \
TEXT name(SB), NOSPLIT, $0-48; \
	MOVQ nb+0(FP), CX; \
	MOVQ w+8(FP), SI; \
	MOVQ qs+16(FP), DI; \
	MOVQ ds+24(FP), DX; \
	MOVQ sums+32(FP), R8; \
	KCONSTS; \
	MOVL $0x30303030, AX; \
	VMOVD AX, X14; \
	VPBROADCASTD X14, Y14; \
loop: \
	PREFETCHT0 (PFDIST+0)(SI); \
	PREFETCHT0 (PFDIST+64)(SI); \
	PREFETCHT0 (PFDIST+128)(SI); \
	PREFETCHT0 (PFDIST+192)(SI); \
	PREFETCHT0 (PFDIST+256)(SI); \
	PREFETCHT0 (PFDIST+320)(SI); \
	PREFETCHT0 (PFDIST+384)(SI); \
	PREFETCHT0 (PFDIST+448)(SI); \
	PREFETCHT0 (PFDIST+512)(SI); \
	PREFETCHT0 (PFDIST+576)(SI); \
	PREFETCHT0 (PFDIST+640)(SI); \
	PREFETCHT0 (PFDIST+704)(SI); \
	PREFETCHT0 (PFDIST+768)(SI); \
	PREFETCHT0 (PFDIST+832)(SI); \
	PREFETCHT0 (PFDIST+896)(SI); \
	PREFETCHT0 (PFDIST+960)(SI); \
	PREFETCHT0 (PFDIST+1024)(SI); \
	PREFETCHT0 (PFDIST+1088)(SI); \
	PREFETCHT0 (PFDIST+1152)(SI); \
	PREFETCHT0 (PFDIST+1216)(SI); \
	PREFETCHT0 (PFDIST+1280)(SI); \
	PREFETCHT0 (PFDIST+1344)(SI); \
	PREFETCHT0 (PFDIST+1408)(SI); \
	PREFETCHT0 (PFDIST+1472)(SI); \
	PREFETCHT0 (PFDIST+1536)(SI); \
	PREFETCHT0 (PFDIST+1600)(SI); \
	PREFETCHT0 (PFDIST+1664)(SI); \
	VPXOR Y11, Y11, Y11; \
	VPXOR Y7, Y7, Y7; \
	VPXOR Y8, Y8, Y8; \
	VPXOR Y9, Y9, Y9; \
	VPXOR Y10, Y10, Y10; \
	Q6K_COL(KACC, 0, 0, Y7, Y8, Y9, Y10); \
	Q6K_COL(KACC, 0, 1, Y7, Y8, Y9, Y10); \
	Q6K_COL(KACC, 0, 2, Y7, Y8, Y9, Y10); \
	Q6K_COL(KACC, 0, 3, Y7, Y8, Y9, Y10); \
	Q6K_SCALE(0, Y7); \
	Q6K_SCALE(2, Y8); \
	Q6K_SCALE(4, Y9); \
	Q6K_SCALE(6, Y10); \
	VPXOR Y7, Y7, Y7; \
	VPXOR Y8, Y8, Y8; \
	VPXOR Y9, Y9, Y9; \
	VPXOR Y10, Y10, Y10; \
	Q6K_COL(KACC, 0, 4, Y7, Y8, Y9, Y10); \
	Q6K_COL(KACC, 0, 5, Y7, Y8, Y9, Y10); \
	Q6K_COL(KACC, 0, 6, Y7, Y8, Y9, Y10); \
	Q6K_COL(KACC, 0, 7, Y7, Y8, Y9, Y10); \
	Q6K_SCALE(1, Y7); \
	Q6K_SCALE(3, Y8); \
	Q6K_SCALE(5, Y9); \
	Q6K_SCALE(7, Y10); \
	VPXOR Y7, Y7, Y7; \
	VPXOR Y8, Y8, Y8; \
	VPXOR Y9, Y9, Y9; \
	VPXOR Y10, Y10, Y10; \
	Q6K_COL(KACC, 1, 0, Y7, Y8, Y9, Y10); \
	Q6K_COL(KACC, 1, 1, Y7, Y8, Y9, Y10); \
	Q6K_COL(KACC, 1, 2, Y7, Y8, Y9, Y10); \
	Q6K_COL(KACC, 1, 3, Y7, Y8, Y9, Y10); \
	Q6K_SCALE(8, Y7); \
	Q6K_SCALE(10, Y8); \
	Q6K_SCALE(12, Y9); \
	Q6K_SCALE(14, Y10); \
	VPXOR Y7, Y7, Y7; \
	VPXOR Y8, Y8, Y8; \
	VPXOR Y9, Y9, Y9; \
	VPXOR Y10, Y10, Y10; \
	Q6K_COL(KACC, 1, 4, Y7, Y8, Y9, Y10); \
	Q6K_COL(KACC, 1, 5, Y7, Y8, Y9, Y10); \
	Q6K_COL(KACC, 1, 6, Y7, Y8, Y9, Y10); \
	Q6K_COL(KACC, 1, 7, Y7, Y8, Y9, Y10); \
	Q6K_SCALE(9, Y7); \
	Q6K_SCALE(11, Y8); \
	Q6K_SCALE(13, Y9); \
	Q6K_SCALE(15, Y10); \
	VBROADCASTSS (DX), Y2; \
	VCVTDQ2PS Y11, Y11; \
	VCVTPH2PS 1664(SI), Y0; \
	VMULPS Y2, Y0, Y0; \
	VFMADD231PS Y0, Y11, Y12; \
	ADDQ $1680, SI; \
	ADDQ $256, DI; \
	ADDQ $4, DX; \
	ADDQ $64, R8; \
	DECQ CX; \
	JNZ loop; \
	KSTORE

// func gemvQ6Kx8VNNI(nb int, w *byte, qs *int8, ds *float32, sums *int32, out *float32)
GEMV_Q6K(·gemvQ6Kx8VNNI, KACC_VNNI)

// func gemvQ6Kx8AVX2(nb int, w *byte, qs *int8, ds *float32, sums *int32, out *float32)
GEMV_Q6K(·gemvQ6Kx8AVX2, KACC_AVX2)

// Q5_K (packed.go): Q4_K's layout with the eight rows' qh columns (vector
// k: bytes 4k..4k+3 of each row's 32 qh bytes) at 1024, so scales, minimums,
// d and dmin move by 256. Bit 2j (low nibbles of pair j) and 2j+1 (high)
// of a qh byte are the fifth bits of the two values its column holds:
// a word shift moves them to bit 4 of the same byte (Y14, the 0x10 mask).
#define Q5K_COL(KACC, j, k, LSH, HSH) \
	VMOVDQU (1024+32*k)(SI), Y8; \
	VMOVDQU (256*j+32*k)(SI), Y0; \
	VPSRLW $4, Y0, Y1; \
	VPAND Y15, Y0, Y0; \
	VPAND Y15, Y1, Y1; \
	LSH; \
	VPAND Y14, Y9, Y9; \
	VPOR Y9, Y0, Y0; \
	HSH; \
	VPAND Y14, Y9, Y9; \
	VPOR Y9, Y1, Y1; \
	VPBROADCASTD (64*j+4*k)(DI), Y2; \
	KACC(Y2, Y0, Y6, Y4); \
	VPBROADCASTD (64*j+32+4*k)(DI), Y3; \
	KACC(Y3, Y1, Y7, Y5)

#define Q5KL0 VPSLLW $4, Y8, Y9
#define Q5KH0 VPSLLW $3, Y8, Y9
#define Q5KL1 VPSLLW $2, Y8, Y9
#define Q5KH1 VPSLLW $1, Y8, Y9
#define Q5KL2 VMOVDQA Y8, Y9
#define Q5KH2 VPSRLW $1, Y8, Y9
#define Q5KL3 VPSRLW $2, Y8, Y9
#define Q5KH3 VPSRLW $3, Y8, Y9

#define Q5K_PAIR0(KACC) \
	VPXOR Y6, Y6, Y6; \
	VPXOR Y7, Y7, Y7; \
	Q5K_COL(KACC, 0, 0, Q5KL0, Q5KH0); \
	Q5K_COL(KACC, 0, 1, Q5KL0, Q5KH0); \
	Q5K_COL(KACC, 0, 2, Q5KL0, Q5KH0); \
	Q5K_COL(KACC, 0, 3, Q5KL0, Q5KH0); \
	Q5K_COL(KACC, 0, 4, Q5KL0, Q5KH0); \
	Q5K_COL(KACC, 0, 5, Q5KL0, Q5KH0); \
	Q5K_COL(KACC, 0, 6, Q5KL0, Q5KH0); \
	Q5K_COL(KACC, 0, 7, Q5KL0, Q5KH0); \
	VPMOVZXBD (1280)(SI), Y0; \
	VPMULLD Y0, Y6, Y6; \
	VPADDD Y6, Y11, Y11; \
	VPMOVZXBD (1288)(SI), Y1; \
	VPMULLD Y1, Y7, Y7; \
	VPADDD Y7, Y11, Y11

#define Q5K_PAIR1(KACC) \
	VPXOR Y6, Y6, Y6; \
	VPXOR Y7, Y7, Y7; \
	Q5K_COL(KACC, 1, 0, Q5KL1, Q5KH1); \
	Q5K_COL(KACC, 1, 1, Q5KL1, Q5KH1); \
	Q5K_COL(KACC, 1, 2, Q5KL1, Q5KH1); \
	Q5K_COL(KACC, 1, 3, Q5KL1, Q5KH1); \
	Q5K_COL(KACC, 1, 4, Q5KL1, Q5KH1); \
	Q5K_COL(KACC, 1, 5, Q5KL1, Q5KH1); \
	Q5K_COL(KACC, 1, 6, Q5KL1, Q5KH1); \
	Q5K_COL(KACC, 1, 7, Q5KL1, Q5KH1); \
	VPMOVZXBD (1296)(SI), Y0; \
	VPMULLD Y0, Y6, Y6; \
	VPADDD Y6, Y11, Y11; \
	VPMOVZXBD (1304)(SI), Y1; \
	VPMULLD Y1, Y7, Y7; \
	VPADDD Y7, Y11, Y11

#define Q5K_PAIR2(KACC) \
	VPXOR Y6, Y6, Y6; \
	VPXOR Y7, Y7, Y7; \
	Q5K_COL(KACC, 2, 0, Q5KL2, Q5KH2); \
	Q5K_COL(KACC, 2, 1, Q5KL2, Q5KH2); \
	Q5K_COL(KACC, 2, 2, Q5KL2, Q5KH2); \
	Q5K_COL(KACC, 2, 3, Q5KL2, Q5KH2); \
	Q5K_COL(KACC, 2, 4, Q5KL2, Q5KH2); \
	Q5K_COL(KACC, 2, 5, Q5KL2, Q5KH2); \
	Q5K_COL(KACC, 2, 6, Q5KL2, Q5KH2); \
	Q5K_COL(KACC, 2, 7, Q5KL2, Q5KH2); \
	VPMOVZXBD (1312)(SI), Y0; \
	VPMULLD Y0, Y6, Y6; \
	VPADDD Y6, Y11, Y11; \
	VPMOVZXBD (1320)(SI), Y1; \
	VPMULLD Y1, Y7, Y7; \
	VPADDD Y7, Y11, Y11

#define Q5K_PAIR3(KACC) \
	VPXOR Y6, Y6, Y6; \
	VPXOR Y7, Y7, Y7; \
	Q5K_COL(KACC, 3, 0, Q5KL3, Q5KH3); \
	Q5K_COL(KACC, 3, 1, Q5KL3, Q5KH3); \
	Q5K_COL(KACC, 3, 2, Q5KL3, Q5KH3); \
	Q5K_COL(KACC, 3, 3, Q5KL3, Q5KH3); \
	Q5K_COL(KACC, 3, 4, Q5KL3, Q5KH3); \
	Q5K_COL(KACC, 3, 5, Q5KL3, Q5KH3); \
	Q5K_COL(KACC, 3, 6, Q5KL3, Q5KH3); \
	Q5K_COL(KACC, 3, 7, Q5KL3, Q5KH3); \
	VPMOVZXBD (1328)(SI), Y0; \
	VPMULLD Y0, Y6, Y6; \
	VPADDD Y6, Y11, Y11; \
	VPMOVZXBD (1336)(SI), Y1; \
	VPMULLD Y1, Y7, Y7; \
	VPADDD Y7, Y11, Y11

#define Q5K_MIN(s) \
	VPMOVZXBD (1344+8*s)(SI), Y0; \
	VPBROADCASTD (4*s)(R8), Y1; \
	VPMULLD Y1, Y0, Y0; \
	VPADDD Y0, Y10, Y10

#define GEMV_Q5K(name, KACC) \
TEXT name(SB), NOSPLIT, $0-48; \
	MOVQ nb+0(FP), CX; \
	MOVQ w+8(FP), SI; \
	MOVQ qs+16(FP), DI; \
	MOVQ ds+24(FP), DX; \
	MOVQ sums+32(FP), R8; \
	KCONSTS; \
	MOVL $0x10101010, AX; \
	VMOVD AX, X14; \
	VPBROADCASTD X14, Y14; \
loop: \
	VPXOR Y11, Y11, Y11; \
	VPXOR Y10, Y10, Y10; \
	Q5K_PAIR0(KACC); \
	Q5K_PAIR1(KACC); \
	Q5K_PAIR2(KACC); \
	Q5K_PAIR3(KACC); \
	Q5K_MIN(0); \
	Q5K_MIN(1); \
	Q5K_MIN(2); \
	Q5K_MIN(3); \
	Q5K_MIN(4); \
	Q5K_MIN(5); \
	Q5K_MIN(6); \
	Q5K_MIN(7); \
	VBROADCASTSS (DX), Y2; \
	VCVTDQ2PS Y11, Y11; \
	VCVTPH2PS 1408(SI), Y0; \
	VMULPS Y2, Y0, Y0; \
	VFMADD231PS Y0, Y11, Y12; \
	VCVTDQ2PS Y10, Y10; \
	VCVTPH2PS 1424(SI), Y1; \
	VMULPS Y2, Y1, Y1; \
	VFNMADD231PS Y1, Y10, Y12; \
	ADDQ $1440, SI; \
	ADDQ $256, DI; \
	ADDQ $4, DX; \
	ADDQ $32, R8; \
	DECQ CX; \
	JNZ loop; \
	KSTORE

// func gemvQ5Kx8VNNI(nb int, w *byte, qs *int8, ds *float32, sums *int32, out *float32)
GEMV_Q5K(·gemvQ5Kx8VNNI, KACC_VNNI)

// func gemvQ5Kx8AVX2(nb int, w *byte, qs *int8, ds *float32, sums *int32, out *float32)
GEMV_Q5K(·gemvQ5Kx8AVX2, KACC_AVX2)
