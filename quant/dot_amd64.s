//go:build !purego

#include "textflag.h"

// Dot products of one weight row (nb blocks) with one Q8 activation row:
// qs are the activation's int8 values, ds its (d, d·Σq) float32 pairs per
// block of 32. Per block the int8 products are summed in 8 int32 lanes
// (VPDPBUSD with AVX-512 VNNI, else VPMADDUBSW + VPMADDWD), converted to
// float32 and accumulated with the block's scale, as llama.cpp's AVX2
// ggml_vec_dot_q4_1_q8_1 / q8_0_q8_0 do.

// Per-block int32 dot of unsigned bytes u with signed bytes s (memory or
// register) into dst. VNNI: one instruction. AVX2: pairs to int16 (no
// saturation: |u| ≤ 127 and |s| ≤ 127 give pair sums ≤ 32258), then to
// int32 against Y12 = sixteen int16 ones.
#define IDOT_VNNI(s, u, dst) \
	VPXOR dst, dst, dst; \
	VPDPBUSD s, u, dst

#define IDOT_AVX2(s, u, dst) \
	VPMADDUBSW s, u, dst; \
	VPMADDWD Y12, dst, dst

// HSUM8 sums the 8 float32 lanes of acc (X alias xacc) into X0's low lane.
#define HSUM8(acc, xacc) \
	VEXTRACTF128 $1, acc, X0; \
	VADDPS X0, xacc, X0; \
	VMOVHLPS X0, X1, X1; \
	VADDPS X1, X0, X0; \
	VMOVSHDUP X0, X1; \
	VADDSS X1, X0, X0

#define CONSTS \
	MOVL $0x0F0F0F0F, AX; \
	VMOVQ AX, X15; \
	VPBROADCASTD X15, Y15; \
	MOVL $0x00010001, AX; \
	VMOVQ AX, X12; \
	VPBROADCASTD X12, Y12; \
	VXORPS Y14, Y14, Y14; \
	VXORPS Y13, Y13, Y13

// Q4_1 block: d, m (f16), 16 bytes of nibbles. Y13 collects (d·d8, m·s)
// pairs: its odd lanes sum m·s, the minimum's term.
#define Q4_1_BLOCK(IDOT) \
	VMOVDQU 4(SI), X2; \
	VPSRLW $4, X2, X3; \
	VINSERTI128 $1, X3, Y2, Y2; \
	VPAND Y15, Y2, Y2; \
	IDOT((DI), Y2, Y4); \
	VCVTDQ2PS Y4, Y4; \
	VPBROADCASTD (SI), X5; \
	VCVTPH2PS X5, Y5; \
	VBROADCASTSD (DX), Y6; \
	VMULPS Y6, Y5, Y5; \
	VADDPS Y5, Y13, Y13; \
	VPERMILPS $0, Y5, Y5; \
	VFMADD231PS Y5, Y4, Y14

#define Q4_1_FUNC(name, IDOT) \
TEXT name(SB), NOSPLIT, $0-36; \
	MOVQ nb+0(FP), CX; \
	MOVQ w+8(FP), SI; \
	MOVQ qs+16(FP), DI; \
	MOVQ ds+24(FP), DX; \
	CONSTS; \
loop: \
	Q4_1_BLOCK(IDOT); \
	ADDQ $20, SI; \
	ADDQ $32, DI; \
	ADDQ $8, DX; \
	DECQ CX; \
	JNZ loop; \
	HSUM8(Y14, X14); \
	VMOVSHDUP X13, X1; \
	VADDSS X1, X0, X0; \
	VZEROUPPER; \
	MOVSS X0, ret+32(FP); \
	RET

// func dotQ4_1VNNI(nb int, w *byte, qs *int8, ds *float32) float32
Q4_1_FUNC(·dotQ4_1VNNI, IDOT_VNNI)

// func dotQ4_1AVX2(nb int, w *byte, qs *int8, ds *float32) float32
Q4_1_FUNC(·dotQ4_1AVX2, IDOT_AVX2)

// Q8_0 block: d (f16), 32 int8. Signed × signed through |w| and
// sign(w)·a, as VPDPBUSD and VPMADDUBSW take one unsigned operand.
#define Q8_0_BLOCK(IDOT) \
	VMOVDQU 2(SI), Y2; \
	VMOVDQU (DI), Y3; \
	VPSIGNB Y2, Y2, Y7; \
	VPSIGNB Y2, Y3, Y3; \
	IDOT(Y3, Y7, Y4); \
	VCVTDQ2PS Y4, Y4; \
	VPBROADCASTW (SI), X5; \
	VCVTPH2PS X5, Y5; \
	VBROADCASTSS (DX), Y6; \
	VMULPS Y6, Y5, Y5; \
	VFMADD231PS Y5, Y4, Y14

#define Q8_0_FUNC(name, IDOT) \
TEXT name(SB), NOSPLIT, $0-36; \
	MOVQ nb+0(FP), CX; \
	MOVQ w+8(FP), SI; \
	MOVQ qs+16(FP), DI; \
	MOVQ ds+24(FP), DX; \
	CONSTS; \
loop: \
	Q8_0_BLOCK(IDOT); \
	ADDQ $34, SI; \
	ADDQ $32, DI; \
	ADDQ $8, DX; \
	DECQ CX; \
	JNZ loop; \
	HSUM8(Y14, X14); \
	VZEROUPPER; \
	MOVSS X0, ret+32(FP); \
	RET

// func dotQ8_0VNNI(nb int, w *byte, qs *int8, ds *float32) float32
Q8_0_FUNC(·dotQ8_0VNNI, IDOT_VNNI)

// func dotQ8_0AVX2(nb int, w *byte, qs *int8, ds *float32) float32
Q8_0_FUNC(·dotQ8_0AVX2, IDOT_AVX2)

// Four activation rows against one weight row: the weight block is
// unpacked (and its scales widened) once for the four. Activation row t's
// qs are at DI + t·ldq, its (d, s) pairs at DX + t·ldd; R10 = 3·ldq,
// R11 = 3·ldd.
#define X4_ARGS \
	MOVQ nb+0(FP), CX; \
	MOVQ w+8(FP), SI; \
	MOVQ qs+16(FP), DI; \
	MOVQ ds+24(FP), DX; \
	MOVQ ldq+32(FP), R8; \
	MOVQ ldd+40(FP), R9; \
	LEAQ (R8)(R8*2), R10; \
	LEAQ (R9)(R9*2), R11; \
	CONSTS; \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7; \
	VXORPS Y8, Y8, Y8; \
	VXORPS Y9, Y9, Y9; \
	VXORPS Y10, Y10, Y10; \
	VXORPS Y11, Y11, Y11

// One token of a Q4_1 block: Y0 the unsigned nibbles, Y1 (d, m) widened.
#define Q4_1_TOKEN(IDOT, qsrc, dsrc, acc2, acc) \
	VBROADCASTSD dsrc, Y2; \
	VMULPS Y1, Y2, Y2; \
	VADDPS Y2, acc2, acc2; \
	VPERMILPS $0, Y2, Y2; \
	IDOT(qsrc, Y0, Y3); \
	VCVTDQ2PS Y3, Y3; \
	VFMADD231PS Y2, Y3, acc

#define STORE_X4(acc, xacc, acc2, xacc2, off) \
	HSUM8(acc, xacc); \
	VMOVSHDUP xacc2, X1; \
	VADDSS X1, X0, X0; \
	MOVSS X0, off(BX)

#define Q4_1X4_FUNC(name, IDOT) \
TEXT name(SB), NOSPLIT, $0-56; \
	X4_ARGS; \
loop: \
	VMOVDQU 4(SI), X0; \
	VPSRLW $4, X0, X1; \
	VINSERTI128 $1, X1, Y0, Y0; \
	VPAND Y15, Y0, Y0; \
	VPBROADCASTD (SI), X1; \
	VCVTPH2PS X1, Y1; \
	Q4_1_TOKEN(IDOT, (DI), (DX), Y4, Y8); \
	Q4_1_TOKEN(IDOT, (DI)(R8*1), (DX)(R9*1), Y5, Y9); \
	Q4_1_TOKEN(IDOT, (DI)(R8*2), (DX)(R9*2), Y6, Y10); \
	Q4_1_TOKEN(IDOT, (DI)(R10*1), (DX)(R11*1), Y7, Y11); \
	ADDQ $20, SI; \
	ADDQ $32, DI; \
	ADDQ $8, DX; \
	DECQ CX; \
	JNZ loop; \
	MOVQ out+48(FP), BX; \
	STORE_X4(Y8, X8, Y4, X4, 0); \
	STORE_X4(Y9, X9, Y5, X5, 4); \
	STORE_X4(Y10, X10, Y6, X6, 8); \
	STORE_X4(Y11, X11, Y7, X7, 12); \
	VZEROUPPER; \
	RET

// func dotQ4_1x4VNNI(nb int, w *byte, qs *int8, ds *float32, ldq, ldd int, out *[4]float32)
Q4_1X4_FUNC(·dotQ4_1x4VNNI, IDOT_VNNI)

// func dotQ4_1x4AVX2(nb int, w *byte, qs *int8, ds *float32, ldq, ldd int, out *[4]float32)
Q4_1X4_FUNC(·dotQ4_1x4AVX2, IDOT_AVX2)

// One token of a Q8_0 block: Y0 = |w|, Y1 = w (signs), Y13 = d_w.
#define Q8_0_TOKEN(IDOT, qsrc, dsrc, acc) \
	VMOVDQU qsrc, Y3; \
	VPSIGNB Y1, Y3, Y3; \
	IDOT(Y3, Y0, Y2); \
	VCVTDQ2PS Y2, Y2; \
	VBROADCASTSS dsrc, Y3; \
	VMULPS Y13, Y3, Y3; \
	VFMADD231PS Y3, Y2, acc

#define STORE_X4_0(acc, xacc, off) \
	HSUM8(acc, xacc); \
	MOVSS X0, off(BX)

#define Q8_0X4_FUNC(name, IDOT) \
TEXT name(SB), NOSPLIT, $0-56; \
	X4_ARGS; \
loop: \
	VMOVDQU 2(SI), Y1; \
	VPSIGNB Y1, Y1, Y0; \
	VPBROADCASTW (SI), X13; \
	VCVTPH2PS X13, Y13; \
	Q8_0_TOKEN(IDOT, (DI), (DX), Y8); \
	Q8_0_TOKEN(IDOT, (DI)(R8*1), (DX)(R9*1), Y9); \
	Q8_0_TOKEN(IDOT, (DI)(R8*2), (DX)(R9*2), Y10); \
	Q8_0_TOKEN(IDOT, (DI)(R10*1), (DX)(R11*1), Y11); \
	ADDQ $34, SI; \
	ADDQ $32, DI; \
	ADDQ $8, DX; \
	DECQ CX; \
	JNZ loop; \
	MOVQ out+48(FP), BX; \
	STORE_X4_0(Y8, X8, 0); \
	STORE_X4_0(Y9, X9, 4); \
	STORE_X4_0(Y10, X10, 8); \
	STORE_X4_0(Y11, X11, 12); \
	VZEROUPPER; \
	RET

// func dotQ8_0x4VNNI(nb int, w *byte, qs *int8, ds *float32, ldq, ldd int, out *[4]float32)
Q8_0X4_FUNC(·dotQ8_0x4VNNI, IDOT_VNNI)

// func dotQ8_0x4AVX2(nb int, w *byte, qs *int8, ds *float32, ldq, ldd int, out *[4]float32)
Q8_0X4_FUNC(·dotQ8_0x4AVX2, IDOT_AVX2)
