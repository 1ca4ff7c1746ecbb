//go:build !purego

#include "textflag.h"

// Widening Q8_0 and Q5_0 blocks to float32 for the trainer's backward
// (w = d·q), eight weights per instruction: the scale by VCVTPH2PS (exact,
// as gguf.HalfToFloat), the integers by sign extension and VCVTDQ2PS
// (exact), and one float32 product each, as gguf's scalar loops, so the
// same bits (a NaN scale's payload aside).

DATA dqconst<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA dqconst<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
// VPSHUFB: byte b of each 128-bit lane takes byte b/8 of qh (lane 0) or
// 2 + b/8 (lane 1), the bytes holding its fifth bit.
DATA dqconst<>+16(SB)/8, $0x0000000000000000
DATA dqconst<>+24(SB)/8, $0x0101010101010101
DATA dqconst<>+32(SB)/8, $0x0202020202020202
DATA dqconst<>+40(SB)/8, $0x0303030303030303
DATA dqconst<>+48(SB)/8, $0x8040201008040201
DATA dqconst<>+56(SB)/8, $0x8040201008040201
DATA dqconst<>+64(SB)/8, $0x1010101010101010
DATA dqconst<>+72(SB)/8, $0x1010101010101010
GLOBL dqconst<>(SB), RODATA|NOPTR, $80

// func dequantQ8_0AVX2(nb int, src *byte, dst *float32)
TEXT ·dequantQ8_0AVX2(SB), NOSPLIT, $0-24
	MOVQ nb+0(FP), CX
	MOVQ src+8(FP), SI
	MOVQ dst+16(FP), DI
	TESTQ CX, CX
	JZ q8done

q8loop:
	VPBROADCASTW (SI), X0
	VCVTPH2PS X0, Y0
	VPMOVSXBD 2(SI), Y1
	VPMOVSXBD 10(SI), Y2
	VPMOVSXBD 18(SI), Y3
	VPMOVSXBD 26(SI), Y4
	VCVTDQ2PS Y1, Y1
	VCVTDQ2PS Y2, Y2
	VCVTDQ2PS Y3, Y3
	VCVTDQ2PS Y4, Y4
	VMULPS Y0, Y1, Y1
	VMULPS Y0, Y2, Y2
	VMULPS Y0, Y3, Y3
	VMULPS Y0, Y4, Y4
	VMOVUPS Y1, 0(DI)
	VMOVUPS Y2, 32(DI)
	VMOVUPS Y3, 64(DI)
	VMOVUPS Y4, 96(DI)
	ADDQ $34, SI
	ADDQ $128, DI
	DECQ CX
	JNZ q8loop

q8done:
	VZEROUPPER
	RET

// func dequantQ5_0AVX2(nb int, src *byte, dst *float32)
// Block: d (f16), qh (32 fifth bits), 16 bytes of nibbles; weight j < 16 is
// the low nibble of byte j with bit j of qh, weight 16 + j the high nibble
// with bit 16 + j; w = d·(q − 16).
TEXT ·dequantQ5_0AVX2(SB), NOSPLIT, $0-24
	MOVQ nb+0(FP), CX
	MOVQ src+8(FP), SI
	MOVQ dst+16(FP), DI
	VBROADCASTI128 dqconst<>+0(SB), Y8
	VMOVDQU dqconst<>+16(SB), Y9
	VBROADCASTI128 dqconst<>+48(SB), Y10
	VBROADCASTI128 dqconst<>+64(SB), Y11
	TESTQ CX, CX
	JZ q5done

q5loop:
	VMOVDQU 6(SI), X1
	VPSRLW $4, X1, X2
	VINSERTI128 $1, X2, Y1, Y1
	VPAND Y8, Y1, Y1
	VPBROADCASTD 2(SI), Y3
	VPSHUFB Y9, Y3, Y3
	VPAND Y10, Y3, Y3
	VPCMPEQB Y10, Y3, Y3
	VPAND Y11, Y3, Y3
	VPOR Y3, Y1, Y1
	VPSUBB Y11, Y1, Y1
	VPBROADCASTW (SI), X0
	VCVTPH2PS X0, Y0
	VPMOVSXBD X1, Y4
	VPSHUFD $0x4e, X1, X5
	VPMOVSXBD X5, Y5
	VEXTRACTI128 $1, Y1, X2
	VPMOVSXBD X2, Y6
	VPSHUFD $0x4e, X2, X7
	VPMOVSXBD X7, Y7
	VCVTDQ2PS Y4, Y4
	VCVTDQ2PS Y5, Y5
	VCVTDQ2PS Y6, Y6
	VCVTDQ2PS Y7, Y7
	VMULPS Y0, Y4, Y4
	VMULPS Y0, Y5, Y5
	VMULPS Y0, Y6, Y6
	VMULPS Y0, Y7, Y7
	VMOVUPS Y4, 0(DI)
	VMOVUPS Y5, 32(DI)
	VMOVUPS Y6, 64(DI)
	VMOVUPS Y7, 96(DI)
	ADDQ $22, SI
	ADDQ $128, DI
	DECQ CX
	JNZ q5loop

q5done:
	VZEROUPPER
	RET
