//go:build !purego

#include "textflag.h"

// K-quant dot products (AVX2; every step is also what the VNNI machines
// run): one weight row of nb super-blocks of 256 with one Q8_K activation
// row (qs, one float32 d per super-block in ds, sums of 16 in bsums), as
// llama.cpp's AVX2 ggml_vec_dot_q4_K_q8_K / q6_K_q8_K compute them:
// unsigned weight bytes × signed activation bytes pairwise to int16
// (VPMADDUBSW, which cannot saturate here), times the sub-block's scale to
// int32 (VPMADDWD), one float conversion per super-block.

// BCASTW_SCALE broadcasts byte off(SP) (zero-extended) to 16 int16 lanes.
#define BCASTW_SCALE(off, y, x) \
	MOVBLZX off(SP), AX; \
	VMOVD AX, x; \
	VPBROADCASTW x, y

// Q4_K sub-block pair j (64 values): nibbles at 16+32j, activation at 64j.
#define Q4K_PAIR(j) \
	VMOVDQU (16+32*j)(SI), Y0; \
	VPAND Y15, Y0, Y1; \
	VPSRLW $4, Y0, Y0; \
	VPAND Y15, Y0, Y0; \
	VPMADDUBSW (64*j)(DI), Y1, Y1; \
	VPMADDUBSW (64*j+32)(DI), Y0, Y0; \
	BCASTW_SCALE(2*j, Y2, X2); \
	BCASTW_SCALE(2*j+1, Y3, X3); \
	VPMADDWD Y2, Y1, Y1; \
	VPMADDWD Y3, Y0, Y0; \
	VPADDD Y1, Y8, Y8; \
	VPADDD Y0, Y8, Y8

// func dotQ4KAVX2(nb int, w *byte, qs *int8, ds *float32, bsums *int16) float32
TEXT ·dotQ4KAVX2(SB), NOSPLIT, $16-44
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ qs+16(FP), DI
	MOVQ ds+24(FP), DX
	MOVQ bsums+32(FP), BX
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	VXORPS Y14, Y14, Y14
	VXORPS Y13, Y13, Y13

q4kloop:
	// The 12 scale bytes → 8 six-bit scales (R8, R9) and mins (R10, R11),
	// llama.cpp's utmp shuffle.
	MOVL 4(SI), R8
	MOVL 8(SI), R9
	MOVL 12(SI), R10
	MOVL R10, R11
	SHRL $4, R11
	ANDL $0x0f0f0f0f, R11
	MOVL R9, R12
	SHRL $6, R12
	ANDL $0x03030303, R12
	SHLL $4, R12
	ORL R12, R11
	MOVL R9, R13
	ANDL $0x3f3f3f3f, R13
	MOVL R10, R9
	ANDL $0x0f0f0f0f, R9
	MOVL R8, R12
	SHRL $6, R12
	ANDL $0x03030303, R12
	SHLL $4, R12
	ORL R12, R9
	MOVL R13, R10
	ANDL $0x3f3f3f3f, R8
	MOVL R8, 0(SP)
	MOVL R9, 4(SP)

	// Minimum term: dmin·d8·Σ m_j·(bsums of sub-block j).
	VMOVDQU (BX), Y0
	VEXTRACTI128 $1, Y0, X1
	VPHADDW X1, X0, X0
	SHLQ $32, R11
	ORQ R10, R11
	VMOVQ R11, X2
	VPMOVZXBW X2, X2
	VPMADDWD X0, X2, X2
	VCVTDQ2PS X2, X2
	VPBROADCASTW 2(SI), X3
	VCVTPH2PS X3, X3
	VBROADCASTSS (DX), X4
	VMULPS X4, X3, X3
	VFMADD231PS X3, X2, X13

	VPXOR Y8, Y8, Y8
	Q4K_PAIR(0)
	Q4K_PAIR(1)
	Q4K_PAIR(2)
	Q4K_PAIR(3)
	VCVTDQ2PS Y8, Y8
	VPBROADCASTW (SI), X5
	VCVTPH2PS X5, Y5
	VBROADCASTSS (DX), Y4
	VMULPS Y4, Y5, Y5
	VFMADD231PS Y5, Y8, Y14

	ADDQ $144, SI
	ADDQ $256, DI
	ADDQ $4, DX
	ADDQ $32, BX
	DECQ CX
	JNZ q4kloop

	VEXTRACTF128 $1, Y14, X0
	VADDPS X0, X14, X0
	VSUBPS X13, X0, X0
	VMOVHLPS X0, X1, X1
	VADDPS X1, X0, X0
	VMOVSHDUP X0, X1
	VADDSS X1, X0, X0
	VZEROUPPER
	MOVSS X0, ret+40(FP)
	RET

// Q6K_PART: 32 values whose low nibbles come from lo (masked, after a
// shift by lsh), high 2 bits from Y2 shifted by hsh, activation at off
// (from DI), scales at sc, sc+1 (from SP frame copy).
#define Q6K_PART(lo, lsh, hsh, off, sc) \
	VPSRLW $lsh, lo, Y4; \
	VPAND Y15, Y4, Y4; \
	VPSRLW $hsh, Y2, Y3; \
	VPAND Y12, Y3, Y3; \
	VPSLLW $4, Y3, Y3; \
	VPOR Y3, Y4, Y4; \
	VMOVDQU off(DI), Y6; \
	VPMADDUBSW Y6, Y4, Y4; \
	VPMADDUBSW Y6, Y11, Y6; \
	VPSUBW Y6, Y4, Y4; \
	MOVBQSX (sc)(R8), AX; \
	VMOVD AX, X6; \
	VPBROADCASTW X6, X6; \
	MOVBQSX (sc+1)(R8), AX; \
	VMOVD AX, X7; \
	VPBROADCASTW X7, X7; \
	VINSERTI128 $1, X7, Y6, Y6; \
	VPMADDWD Y6, Y4, Y4; \
	VPADDD Y4, Y8, Y8

// func dotQ6KAVX2(nb int, w *byte, qs *int8, ds *float32) float32
TEXT ·dotQ6KAVX2(SB), NOSPLIT, $0-36
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ qs+16(FP), DI
	MOVQ ds+24(FP), DX
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	MOVL $0x03030303, AX
	VMOVD AX, X12
	VPBROADCASTD X12, Y12
	MOVL $0x20202020, AX
	VMOVD AX, X11
	VPBROADCASTD X11, Y11
	VXORPS Y14, Y14, Y14

q6kloop:
	VPXOR Y8, Y8, Y8
	LEAQ 192(SI), R8
	// values 0..127: ql[0:64], qh[0:32], scales 0..7
	VMOVDQU 0(SI), Y0
	VMOVDQU 32(SI), Y1
	VMOVDQU 128(SI), Y2
	Q6K_PART(Y0, 0, 0, 0, 0)
	Q6K_PART(Y1, 0, 2, 32, 2)
	Q6K_PART(Y0, 4, 4, 64, 4)
	Q6K_PART(Y1, 4, 6, 96, 6)
	// values 128..255: ql[64:128], qh[32:64], scales 8..15
	VMOVDQU 64(SI), Y0
	VMOVDQU 96(SI), Y1
	VMOVDQU 160(SI), Y2
	Q6K_PART(Y0, 0, 0, 128, 8)
	Q6K_PART(Y1, 0, 2, 160, 10)
	Q6K_PART(Y0, 4, 4, 192, 12)
	Q6K_PART(Y1, 4, 6, 224, 14)

	VCVTDQ2PS Y8, Y8
	VPBROADCASTW 208(SI), X5
	VCVTPH2PS X5, Y5
	VBROADCASTSS (DX), Y4
	VMULPS Y4, Y5, Y5
	VFMADD231PS Y5, Y8, Y14

	ADDQ $210, SI
	ADDQ $256, DI
	ADDQ $4, DX
	DECQ CX
	JNZ q6kloop

	VEXTRACTF128 $1, Y14, X0
	VADDPS X0, X14, X0
	VMOVHLPS X0, X1, X1
	VADDPS X1, X0, X0
	VMOVSHDUP X0, X1
	VADDSS X1, X0, X0
	VZEROUPPER
	MOVSS X0, ret+32(FP)
	RET
