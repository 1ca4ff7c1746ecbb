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
	MOVQ AX, X15; \
	VPBROADCASTD X15, Y15; \
	MOVL $0x00010001, AX; \
	MOVQ AX, X12; \
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
