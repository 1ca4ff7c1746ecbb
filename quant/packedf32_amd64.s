//go:build !purego

#include "textflag.h"

// Packed eight-row kernels with float32 activations (f32act.go): the
// weights' integer values are widened to float32 in registers (VPSHUFB
// moves byte i of each row's dword to a lane of its own, VCVTDQ2PS makes
// it a float) and multiplied by the broadcast activation with FMAs, so
// nothing but the weights is rounded. Each int32/float lane is one row of
// the packed group (packed.go's Q4_1 and Q8_0 layouts). Per block the four
// partial sums (one per byte position, to keep four FMA chains going) are
// added, scaled by the rows' d and, for Q4_1, the rows' m times Σx of the
// block is added: Σ(d·q + m)·x = d·Σq·x + m·Σx.
//
// Registers: SI packed weights, DI activations (float32), DX Σx per block
// (Q4_1), CX blocks left; Y8–Y11 the byte-position shuffles, Y12 the eight
// rows' sums, Y4–Y7 a block's partial sums, Y15/Y14 masks.

// shufLow<i>: byte i of each dword to its low byte, zeros above (unsigned
// values). shufTop<i>: byte i to its top byte, zeros below (VPSRAD $24
// then sign-extends it).

DATA shufLow0<>+0(SB)/4, $0x80808000
DATA shufLow0<>+4(SB)/4, $0x80808004
DATA shufLow0<>+8(SB)/4, $0x80808008
DATA shufLow0<>+12(SB)/4, $0x8080800c
DATA shufLow0<>+16(SB)/4, $0x80808000
DATA shufLow0<>+20(SB)/4, $0x80808004
DATA shufLow0<>+24(SB)/4, $0x80808008
DATA shufLow0<>+28(SB)/4, $0x8080800c
GLOBL shufLow0<>(SB), RODATA|NOPTR, $32
DATA shufLow1<>+0(SB)/4, $0x80808001
DATA shufLow1<>+4(SB)/4, $0x80808005
DATA shufLow1<>+8(SB)/4, $0x80808009
DATA shufLow1<>+12(SB)/4, $0x8080800d
DATA shufLow1<>+16(SB)/4, $0x80808001
DATA shufLow1<>+20(SB)/4, $0x80808005
DATA shufLow1<>+24(SB)/4, $0x80808009
DATA shufLow1<>+28(SB)/4, $0x8080800d
GLOBL shufLow1<>(SB), RODATA|NOPTR, $32
DATA shufLow2<>+0(SB)/4, $0x80808002
DATA shufLow2<>+4(SB)/4, $0x80808006
DATA shufLow2<>+8(SB)/4, $0x8080800a
DATA shufLow2<>+12(SB)/4, $0x8080800e
DATA shufLow2<>+16(SB)/4, $0x80808002
DATA shufLow2<>+20(SB)/4, $0x80808006
DATA shufLow2<>+24(SB)/4, $0x8080800a
DATA shufLow2<>+28(SB)/4, $0x8080800e
GLOBL shufLow2<>(SB), RODATA|NOPTR, $32
DATA shufLow3<>+0(SB)/4, $0x80808003
DATA shufLow3<>+4(SB)/4, $0x80808007
DATA shufLow3<>+8(SB)/4, $0x8080800b
DATA shufLow3<>+12(SB)/4, $0x8080800f
DATA shufLow3<>+16(SB)/4, $0x80808003
DATA shufLow3<>+20(SB)/4, $0x80808007
DATA shufLow3<>+24(SB)/4, $0x8080800b
DATA shufLow3<>+28(SB)/4, $0x8080800f
GLOBL shufLow3<>(SB), RODATA|NOPTR, $32
DATA shufTop0<>+0(SB)/4, $0x00808080
DATA shufTop0<>+4(SB)/4, $0x04808080
DATA shufTop0<>+8(SB)/4, $0x08808080
DATA shufTop0<>+12(SB)/4, $0x0c808080
DATA shufTop0<>+16(SB)/4, $0x00808080
DATA shufTop0<>+20(SB)/4, $0x04808080
DATA shufTop0<>+24(SB)/4, $0x08808080
DATA shufTop0<>+28(SB)/4, $0x0c808080
GLOBL shufTop0<>(SB), RODATA|NOPTR, $32
DATA shufTop1<>+0(SB)/4, $0x01808080
DATA shufTop1<>+4(SB)/4, $0x05808080
DATA shufTop1<>+8(SB)/4, $0x09808080
DATA shufTop1<>+12(SB)/4, $0x0d808080
DATA shufTop1<>+16(SB)/4, $0x01808080
DATA shufTop1<>+20(SB)/4, $0x05808080
DATA shufTop1<>+24(SB)/4, $0x09808080
DATA shufTop1<>+28(SB)/4, $0x0d808080
GLOBL shufTop1<>(SB), RODATA|NOPTR, $32
DATA shufTop2<>+0(SB)/4, $0x02808080
DATA shufTop2<>+4(SB)/4, $0x06808080
DATA shufTop2<>+8(SB)/4, $0x0a808080
DATA shufTop2<>+12(SB)/4, $0x0e808080
DATA shufTop2<>+16(SB)/4, $0x02808080
DATA shufTop2<>+20(SB)/4, $0x06808080
DATA shufTop2<>+24(SB)/4, $0x0a808080
DATA shufTop2<>+28(SB)/4, $0x0e808080
GLOBL shufTop2<>(SB), RODATA|NOPTR, $32

// PFDIST: see packed_amd64.s.
#define PFDIST 4096

// F32B(v, off, acc): acc += float(v) · x[off/4], v holding one int32 per
// row.
#define F32B(v, off, acc) \
	VCVTDQ2PS v, v; \
	VBROADCASTSS off(DI), Y13; \
	VFMADD231PS Y13, v, acc

// Q4_1 vector k: bytes 4k..4k+3 of each row's nibbles; low nibbles are
// values 4k+i, high ones 16+4k+i.
#define Q41F_VEC(k) \
	VMOVDQU (32*k)(SI), Y0; \
	VPAND Y15, Y0, Y1; \
	VPSRLW $4, Y0, Y2; \
	VPAND Y15, Y2, Y2; \
	VPSHUFB Y8, Y1, Y3; \
	F32B(Y3, (16*k), Y4); \
	VPSHUFB Y9, Y1, Y3; \
	F32B(Y3, (16*k+4), Y5); \
	VPSHUFB Y10, Y1, Y3; \
	F32B(Y3, (16*k+8), Y6); \
	VPSHUFB Y11, Y1, Y3; \
	F32B(Y3, (16*k+12), Y7); \
	VPSHUFB Y8, Y2, Y3; \
	F32B(Y3, (64+16*k), Y4); \
	VPSHUFB Y9, Y2, Y3; \
	F32B(Y3, (64+16*k+4), Y5); \
	VPSHUFB Y10, Y2, Y3; \
	F32B(Y3, (64+16*k+8), Y6); \
	VPSRLD $24, Y2, Y3; \
	F32B(Y3, (64+16*k+12), Y7)

#define BLOCK_START \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7

#define BLOCK_SUM \
	VADDPS Y5, Y4, Y4; \
	VADDPS Y7, Y6, Y6; \
	VADDPS Y6, Y4, Y4

// func gemvQ4_1x8F32(nb int, w *byte, x *float32, sx *float32, out *float32)
TEXT ·gemvQ4_1x8F32(SB), NOSPLIT, $0-40
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ x+16(FP), DI
	MOVQ sx+24(FP), DX
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	VMOVDQU shufLow0<>(SB), Y8
	VMOVDQU shufLow1<>(SB), Y9
	VMOVDQU shufLow2<>(SB), Y10
	VMOVDQU shufLow3<>(SB), Y11
	VXORPS Y12, Y12, Y12
q41loop:
	PREFETCHT0 (PFDIST+0)(SI)
	PREFETCHT0 (PFDIST+64)(SI)
	PREFETCHT0 (PFDIST+128)(SI)
	BLOCK_START
	Q41F_VEC(0)
	Q41F_VEC(1)
	Q41F_VEC(2)
	Q41F_VEC(3)
	BLOCK_SUM
	VCVTPH2PS 128(SI), Y0
	VFMADD231PS Y0, Y4, Y12
	VCVTPH2PS 144(SI), Y1
	VBROADCASTSS (DX), Y2
	VFMADD231PS Y2, Y1, Y12
	ADDQ $160, SI
	ADDQ $128, DI
	ADDQ $4, DX
	DECQ CX
	JNZ q41loop
	MOVQ out+32(FP), BX
	VMOVUPS Y12, (BX)
	VZEROUPPER
	RET

// Q8_0 vector k: values 4k..4k+3 of each row, stored w XOR 0x80 (Y14
// undoes that, giving the signed bytes).
#define Q80F_VEC(k) \
	VPXOR (32*k)(SI), Y14, Y0; \
	VPSHUFB Y8, Y0, Y3; \
	VPSRAD $24, Y3, Y3; \
	F32B(Y3, (16*k), Y4); \
	VPSHUFB Y9, Y0, Y3; \
	VPSRAD $24, Y3, Y3; \
	F32B(Y3, (16*k+4), Y5); \
	VPSHUFB Y10, Y0, Y3; \
	VPSRAD $24, Y3, Y3; \
	F32B(Y3, (16*k+8), Y6); \
	VPSRAD $24, Y0, Y3; \
	F32B(Y3, (16*k+12), Y7)

// func gemvQ8_0x8F32(nb int, w *byte, x *float32, sx *float32, out *float32)
TEXT ·gemvQ8_0x8F32(SB), NOSPLIT, $0-40
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ x+16(FP), DI
	MOVL $0x80808080, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
	VMOVDQU shufTop0<>(SB), Y8
	VMOVDQU shufTop1<>(SB), Y9
	VMOVDQU shufTop2<>(SB), Y10
	VXORPS Y12, Y12, Y12
q80loop:
	PREFETCHT0 (PFDIST+0)(SI)
	PREFETCHT0 (PFDIST+64)(SI)
	PREFETCHT0 (PFDIST+128)(SI)
	PREFETCHT0 (PFDIST+192)(SI)
	PREFETCHT0 (PFDIST+256)(SI)
	BLOCK_START
	Q80F_VEC(0)
	Q80F_VEC(1)
	Q80F_VEC(2)
	Q80F_VEC(3)
	Q80F_VEC(4)
	Q80F_VEC(5)
	Q80F_VEC(6)
	Q80F_VEC(7)
	BLOCK_SUM
	VCVTPH2PS 256(SI), Y0
	VFMADD231PS Y0, Y4, Y12
	ADDQ $272, SI
	ADDQ $128, DI
	DECQ CX
	JNZ q80loop
	MOVQ out+32(FP), BX
	VMOVUPS Y12, (BX)
	VZEROUPPER
	RET
