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

// Two-token forms (gemvQ4_1x8F32x2, gemvQ8_0x8F32x2): each block is widened
// once for both tokens, and each token's sums are the one-token kernel's,
// operation for operation (four partial sums per block, (p0+p1)+(p2+p3),
// then d·sum and m·Σx fused into the row's sum), so a token's outputs do
// not depend on the batch it runs in. The shuffles are read from memory to
// free their registers for the second token's partial sums.
// Registers: DI token 0's activations, R9 the stride to token 1's, DX and
// R10 the same for Σx; Y4–Y7 token 0's partial sums and Y12 its rows'
// sums, Y8–Y11 and Y14 token 1's; Y13 the broadcast activation, Y15 the
// mask.

// F32B2(v, off, a, b): a += float(v)·x0[off/4], b += float(v)·x1[off/4].
#define F32B2(v, off, a, b) \
	VCVTDQ2PS v, v; \
	VBROADCASTSS off(DI), Y13; \
	VFMADD231PS Y13, v, a; \
	VBROADCASTSS off(DI)(R9*1), Y13; \
	VFMADD231PS Y13, v, b

#define Q41F2_VEC(k) \
	VMOVDQU (32*k)(SI), Y0; \
	VPAND Y15, Y0, Y1; \
	VPSRLW $4, Y0, Y2; \
	VPAND Y15, Y2, Y2; \
	VPSHUFB shufLow0<>(SB), Y1, Y3; \
	F32B2(Y3, (16*k), Y4, Y8); \
	VPSHUFB shufLow1<>(SB), Y1, Y3; \
	F32B2(Y3, (16*k+4), Y5, Y9); \
	VPSHUFB shufLow2<>(SB), Y1, Y3; \
	F32B2(Y3, (16*k+8), Y6, Y10); \
	VPSHUFB shufLow3<>(SB), Y1, Y3; \
	F32B2(Y3, (16*k+12), Y7, Y11); \
	VPSHUFB shufLow0<>(SB), Y2, Y3; \
	F32B2(Y3, (64+16*k), Y4, Y8); \
	VPSHUFB shufLow1<>(SB), Y2, Y3; \
	F32B2(Y3, (64+16*k+4), Y5, Y9); \
	VPSHUFB shufLow2<>(SB), Y2, Y3; \
	F32B2(Y3, (64+16*k+8), Y6, Y10); \
	VPSRLD $24, Y2, Y3; \
	F32B2(Y3, (64+16*k+12), Y7, Y11)

#define BLOCK_START2 \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7; \
	VXORPS Y8, Y8, Y8; \
	VXORPS Y9, Y9, Y9; \
	VXORPS Y10, Y10, Y10; \
	VXORPS Y11, Y11, Y11

#define BLOCK_SUM2 \
	VADDPS Y5, Y4, Y4; \
	VADDPS Y7, Y6, Y6; \
	VADDPS Y6, Y4, Y4; \
	VADDPS Y9, Y8, Y8; \
	VADDPS Y11, Y10, Y10; \
	VADDPS Y10, Y8, Y8

// func gemvQ4_1x8F32x2(nb int, w *byte, x *float32, ldx int, sx *float32, ldsx int, out *float32, ldo int)
TEXT ·gemvQ4_1x8F32x2(SB), NOSPLIT, $0-64
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ x+16(FP), DI
	MOVQ ldx+24(FP), R9
	MOVQ sx+32(FP), DX
	MOVQ ldsx+40(FP), R10
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	VXORPS Y12, Y12, Y12
	VXORPS Y14, Y14, Y14
q41x2loop:
	PREFETCHT0 (PFDIST+0)(SI)
	PREFETCHT0 (PFDIST+64)(SI)
	PREFETCHT0 (PFDIST+128)(SI)
	BLOCK_START2
	Q41F2_VEC(0)
	Q41F2_VEC(1)
	Q41F2_VEC(2)
	Q41F2_VEC(3)
	BLOCK_SUM2
	VCVTPH2PS 128(SI), Y0
	VFMADD231PS Y0, Y4, Y12
	VFMADD231PS Y0, Y8, Y14
	VCVTPH2PS 144(SI), Y1
	VBROADCASTSS (DX), Y2
	VFMADD231PS Y2, Y1, Y12
	VBROADCASTSS (DX)(R10*1), Y2
	VFMADD231PS Y2, Y1, Y14
	ADDQ $160, SI
	ADDQ $128, DI
	ADDQ $4, DX
	DECQ CX
	JNZ q41x2loop
	MOVQ out+48(FP), BX
	MOVQ ldo+56(FP), AX
	VMOVUPS Y12, (BX)
	VMOVUPS Y14, (BX)(AX*1)
	VZEROUPPER
	RET

#define Q80F2_VEC(k) \
	VPXOR (32*k)(SI), Y15, Y0; \
	VPSHUFB shufTop0<>(SB), Y0, Y3; \
	VPSRAD $24, Y3, Y3; \
	F32B2(Y3, (16*k), Y4, Y8); \
	VPSHUFB shufTop1<>(SB), Y0, Y3; \
	VPSRAD $24, Y3, Y3; \
	F32B2(Y3, (16*k+4), Y5, Y9); \
	VPSHUFB shufTop2<>(SB), Y0, Y3; \
	VPSRAD $24, Y3, Y3; \
	F32B2(Y3, (16*k+8), Y6, Y10); \
	VPSRAD $24, Y0, Y3; \
	F32B2(Y3, (16*k+12), Y7, Y11)

// func gemvQ8_0x8F32x2(nb int, w *byte, x *float32, ldx int, sx *float32, ldsx int, out *float32, ldo int)
TEXT ·gemvQ8_0x8F32x2(SB), NOSPLIT, $0-64
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ x+16(FP), DI
	MOVQ ldx+24(FP), R9
	MOVL $0x80808080, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	VXORPS Y12, Y12, Y12
	VXORPS Y14, Y14, Y14
q80x2loop:
	PREFETCHT0 (PFDIST+0)(SI)
	PREFETCHT0 (PFDIST+64)(SI)
	PREFETCHT0 (PFDIST+128)(SI)
	PREFETCHT0 (PFDIST+192)(SI)
	PREFETCHT0 (PFDIST+256)(SI)
	BLOCK_START2
	Q80F2_VEC(0)
	Q80F2_VEC(1)
	Q80F2_VEC(2)
	Q80F2_VEC(3)
	Q80F2_VEC(4)
	Q80F2_VEC(5)
	Q80F2_VEC(6)
	Q80F2_VEC(7)
	BLOCK_SUM2
	VCVTPH2PS 256(SI), Y0
	VFMADD231PS Y0, Y4, Y12
	VFMADD231PS Y0, Y8, Y14
	ADDQ $272, SI
	ADDQ $128, DI
	DECQ CX
	JNZ q80x2loop
	MOVQ out+48(FP), BX
	MOVQ ldo+56(FP), AX
	VMOVUPS Y12, (BX)
	VMOVUPS Y14, (BX)(AX*1)
	VZEROUPPER
	RET

// AVX-512 forms of packedf32_amd64.s's one-token kernels: two packed groups
// (16 rows) at once, group g in the low 256 bits of each Z register and
// group g+1 (gstride bytes further) in the high 256. Every lane does the
// eight-row kernel's arithmetic in the same order (four partial sums per
// block, added as (p0+p1)+(p2+p3), then d·sum and, for Q4_1, m·Σx fused
// into the row's sum), so the results are bitwise those of the AVX2
// kernels on each group; the activation is broadcast from memory inside the
// FMA (one instruction for sixteen rows instead of a broadcast and an FMA
// for eight), which halves the instructions per weight.
//
// Registers: SI group g's blocks, R8 group g+1's, DI activations, DX Σx per
// block (Q4_1), CX blocks left; Z8–Z10 (and Z11) the byte-position
// shuffles, Z12 the sixteen rows' sums, Z4–Z7 a block's partial sums,
// Z15/Z14 masks.


// F32Z(v, off, acc): acc += float(v) · x[off/4].
#define F32Z(v, off, acc) \
	VCVTDQ2PS v, v; \
	VFMADD231PS.BCST off(DI), v, acc

// LOADZ(off, z, y): bytes [off, off+32) of both groups' blocks into z.
#define LOADZ(off, z, y) \
	VMOVDQU off(SI), y; \
	VINSERTI64X4 $1, off(R8), z, z

// HALVES(off, z, y, x): the 8+8 float16s at off of both groups as floats.
#define HALVES(off, z, y, x) \
	VMOVDQU off(SI), x; \
	VINSERTI128 $1, off(R8), y, y; \
	VCVTPH2PS y, z

#define Q41Z_VEC(k) \
	LOADZ((32*k), Z0, Y0); \
	VPANDD Z15, Z0, Z1; \
	VPSRLW $4, Z0, Z2; \
	VPANDD Z15, Z2, Z2; \
	VPSHUFB Z8, Z1, Z3; \
	F32Z(Z3, (16*k), Z4); \
	VPSHUFB Z9, Z1, Z3; \
	F32Z(Z3, (16*k+4), Z5); \
	VPSHUFB Z10, Z1, Z3; \
	F32Z(Z3, (16*k+8), Z6); \
	VPSHUFB Z11, Z1, Z3; \
	F32Z(Z3, (16*k+12), Z7); \
	VPSHUFB Z8, Z2, Z3; \
	F32Z(Z3, (64+16*k), Z4); \
	VPSHUFB Z9, Z2, Z3; \
	F32Z(Z3, (64+16*k+4), Z5); \
	VPSHUFB Z10, Z2, Z3; \
	F32Z(Z3, (64+16*k+8), Z6); \
	VPSRLD $24, Z2, Z3; \
	F32Z(Z3, (64+16*k+12), Z7)

#define BLOCK_STARTZ \
	VPXORD Z4, Z4, Z4; \
	VPXORD Z5, Z5, Z5; \
	VPXORD Z6, Z6, Z6; \
	VPXORD Z7, Z7, Z7

#define BLOCK_SUMZ \
	VADDPS Z5, Z4, Z4; \
	VADDPS Z7, Z6, Z6; \
	VADDPS Z6, Z4, Z4

// func gemvQ4_1x16F32(nb int, w *byte, gstride int, x *float32, sx *float32, out *float32)
TEXT ·gemvQ4_1x16F32(SB), NOSPLIT, $0-48
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ gstride+16(FP), R8
	ADDQ SI, R8
	MOVQ x+24(FP), DI
	MOVQ sx+32(FP), DX
	MOVL $0x0F0F0F0F, AX
	VPBROADCASTD AX, Z15
	VBROADCASTI32X4 shufLow0<>(SB), Z8
	VBROADCASTI32X4 shufLow1<>(SB), Z9
	VBROADCASTI32X4 shufLow2<>(SB), Z10
	VBROADCASTI32X4 shufLow3<>(SB), Z11
	VPXORD Z12, Z12, Z12
q41zloop:
	PREFETCHT0 (PFDIST+0)(SI)
	PREFETCHT0 (PFDIST+64)(SI)
	PREFETCHT0 (PFDIST+128)(SI)
	PREFETCHT0 (PFDIST+0)(R8)
	PREFETCHT0 (PFDIST+64)(R8)
	PREFETCHT0 (PFDIST+128)(R8)
	BLOCK_STARTZ
	Q41Z_VEC(0)
	Q41Z_VEC(1)
	Q41Z_VEC(2)
	Q41Z_VEC(3)
	BLOCK_SUMZ
	HALVES(128, Z0, Y0, X0)
	VFMADD231PS Z0, Z4, Z12
	HALVES(144, Z1, Y1, X1)
	VFMADD231PS.BCST (DX), Z1, Z12
	ADDQ $160, SI
	ADDQ $160, R8
	ADDQ $128, DI
	ADDQ $4, DX
	DECQ CX
	JNZ q41zloop
	MOVQ out+40(FP), BX
	VMOVUPS Z12, (BX)
	VZEROUPPER
	RET

// Q8_0 vector k: values 4k..4k+3 of each row, stored w XOR 0x80 (Z14
// undoes that).
#define Q80Z_VEC(k) \
	LOADZ((32*k), Z0, Y0); \
	VPXORD Z14, Z0, Z0; \
	VPSHUFB Z8, Z0, Z3; \
	VPSRAD $24, Z3, Z3; \
	F32Z(Z3, (16*k), Z4); \
	VPSHUFB Z9, Z0, Z3; \
	VPSRAD $24, Z3, Z3; \
	F32Z(Z3, (16*k+4), Z5); \
	VPSHUFB Z10, Z0, Z3; \
	VPSRAD $24, Z3, Z3; \
	F32Z(Z3, (16*k+8), Z6); \
	VPSRAD $24, Z0, Z3; \
	F32Z(Z3, (16*k+12), Z7)

// func gemvQ8_0x16F32(nb int, w *byte, gstride int, x *float32, sx *float32, out *float32)
TEXT ·gemvQ8_0x16F32(SB), NOSPLIT, $0-48
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ gstride+16(FP), R8
	ADDQ SI, R8
	MOVQ x+24(FP), DI
	MOVL $0x80808080, AX
	VPBROADCASTD AX, Z14
	VBROADCASTI32X4 shufTop0<>(SB), Z8
	VBROADCASTI32X4 shufTop1<>(SB), Z9
	VBROADCASTI32X4 shufTop2<>(SB), Z10
	VPXORD Z12, Z12, Z12
q80zloop:
	PREFETCHT0 (PFDIST+0)(SI)
	PREFETCHT0 (PFDIST+64)(SI)
	PREFETCHT0 (PFDIST+128)(SI)
	PREFETCHT0 (PFDIST+192)(SI)
	PREFETCHT0 (PFDIST+256)(SI)
	PREFETCHT0 (PFDIST+0)(R8)
	PREFETCHT0 (PFDIST+64)(R8)
	PREFETCHT0 (PFDIST+128)(R8)
	PREFETCHT0 (PFDIST+192)(R8)
	PREFETCHT0 (PFDIST+256)(R8)
	BLOCK_STARTZ
	Q80Z_VEC(0)
	Q80Z_VEC(1)
	Q80Z_VEC(2)
	Q80Z_VEC(3)
	Q80Z_VEC(4)
	Q80Z_VEC(5)
	Q80Z_VEC(6)
	Q80Z_VEC(7)
	BLOCK_SUMZ
	HALVES(256, Z0, Y0, X0)
	VFMADD231PS Z0, Z4, Z12
	ADDQ $272, SI
	ADDQ $272, R8
	ADDQ $128, DI
	DECQ CX
	JNZ q80zloop
	MOVQ out+40(FP), BX
	VMOVUPS Z12, (BX)
	VZEROUPPER
	RET

// Four-token AVX-512 forms (two packed groups, as above): each block is
// widened once for four tokens, and each token's sums are the one-token
// kernel's, operation for operation, so a token's outputs do not depend
// on the batch it runs in.
// Registers: DI token 0's activations, R9 the stride between tokens (R9*2
// and R12 = 3·R9 reach tokens 2 and 3), DX, R10, R13 the same for Σx;
// partial sum i of token t in Z(4+i), Z(16+i), Z(20+i), Z(24+i), the rows'
// sums in Z12, Z13, Z28, Z29.

// F32Z4(v, off, a, b, c, d): token t's partial += float(v)·x_t[off/4].
#define F32Z4(v, off, a, b, c, d) \
	VCVTDQ2PS v, v; \
	VFMADD231PS.BCST off(DI), v, a; \
	VFMADD231PS.BCST off(DI)(R9*1), v, b; \
	VFMADD231PS.BCST off(DI)(R9*2), v, c; \
	VFMADD231PS.BCST off(DI)(R12*1), v, d

#define Q41Z4_VEC(k) \
	LOADZ((32*k), Z0, Y0); \
	VPANDD Z15, Z0, Z1; \
	VPSRLW $4, Z0, Z2; \
	VPANDD Z15, Z2, Z2; \
	VPSHUFB Z8, Z1, Z3; \
	F32Z4(Z3, (16*k), Z4, Z16, Z20, Z24); \
	VPSHUFB Z9, Z1, Z3; \
	F32Z4(Z3, (16*k+4), Z5, Z17, Z21, Z25); \
	VPSHUFB Z10, Z1, Z3; \
	F32Z4(Z3, (16*k+8), Z6, Z18, Z22, Z26); \
	VPSHUFB Z11, Z1, Z3; \
	F32Z4(Z3, (16*k+12), Z7, Z19, Z23, Z27); \
	VPSHUFB Z8, Z2, Z3; \
	F32Z4(Z3, (64+16*k), Z4, Z16, Z20, Z24); \
	VPSHUFB Z9, Z2, Z3; \
	F32Z4(Z3, (64+16*k+4), Z5, Z17, Z21, Z25); \
	VPSHUFB Z10, Z2, Z3; \
	F32Z4(Z3, (64+16*k+8), Z6, Z18, Z22, Z26); \
	VPSRLD $24, Z2, Z3; \
	F32Z4(Z3, (64+16*k+12), Z7, Z19, Z23, Z27)

#define BLOCK_START4Z \
	VPXORD Z4, Z4, Z4; \
	VPXORD Z5, Z5, Z5; \
	VPXORD Z6, Z6, Z6; \
	VPXORD Z7, Z7, Z7; \
	VPXORD Z16, Z16, Z16; \
	VPXORD Z17, Z17, Z17; \
	VPXORD Z18, Z18, Z18; \
	VPXORD Z19, Z19, Z19; \
	VPXORD Z20, Z20, Z20; \
	VPXORD Z21, Z21, Z21; \
	VPXORD Z22, Z22, Z22; \
	VPXORD Z23, Z23, Z23; \
	VPXORD Z24, Z24, Z24; \
	VPXORD Z25, Z25, Z25; \
	VPXORD Z26, Z26, Z26; \
	VPXORD Z27, Z27, Z27

#define BLOCK_SUM4Z \
	VADDPS Z5, Z4, Z4; \
	VADDPS Z7, Z6, Z6; \
	VADDPS Z6, Z4, Z4; \
	VADDPS Z17, Z16, Z16; \
	VADDPS Z19, Z18, Z18; \
	VADDPS Z18, Z16, Z16; \
	VADDPS Z21, Z20, Z20; \
	VADDPS Z23, Z22, Z22; \
	VADDPS Z22, Z20, Z20; \
	VADDPS Z25, Z24, Z24; \
	VADDPS Z27, Z26, Z26; \
	VADDPS Z26, Z24, Z24

// SCALE4Z(z): the rows' sums += z·(each token's block sum).
#define SCALE4Z(z) \
	VFMADD231PS z, Z4, Z12; \
	VFMADD231PS z, Z16, Z13; \
	VFMADD231PS z, Z20, Z28; \
	VFMADD231PS z, Z24, Z29

// func gemvQ4_1x16F32x4(nb int, w *byte, gstride int, x *float32, ldx int, sx *float32, ldsx int, out *float32, ldo int)
TEXT ·gemvQ4_1x16F32x4(SB), NOSPLIT, $0-72
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ gstride+16(FP), R8
	ADDQ SI, R8
	MOVQ x+24(FP), DI
	MOVQ ldx+32(FP), R9
	MOVQ sx+40(FP), DX
	MOVQ ldsx+48(FP), R10
	LEAQ (R9)(R9*2), R12
	LEAQ (R10)(R10*2), R13
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z28, Z28, Z28
	VPXORD Z29, Z29, Z29
	MOVL $0x0F0F0F0F, AX
	VPBROADCASTD AX, Z15
	VBROADCASTI32X4 shufLow0<>(SB), Z8
	VBROADCASTI32X4 shufLow1<>(SB), Z9
	VBROADCASTI32X4 shufLow2<>(SB), Z10
	VBROADCASTI32X4 shufLow3<>(SB), Z11
q41z4loop:
	PREFETCHT0 (PFDIST+0)(SI)
	PREFETCHT0 (PFDIST+64)(SI)
	PREFETCHT0 (PFDIST+128)(SI)
	PREFETCHT0 (PFDIST+0)(R8)
	PREFETCHT0 (PFDIST+64)(R8)
	PREFETCHT0 (PFDIST+128)(R8)
	BLOCK_START4Z
	Q41Z4_VEC(0)
	Q41Z4_VEC(1)
	Q41Z4_VEC(2)
	Q41Z4_VEC(3)
	BLOCK_SUM4Z
	HALVES(128, Z0, Y0, X0)
	SCALE4Z(Z0)
	HALVES(144, Z1, Y1, X1)
	VFMADD231PS.BCST (DX), Z1, Z12
	VFMADD231PS.BCST (DX)(R10*1), Z1, Z13
	VFMADD231PS.BCST (DX)(R10*2), Z1, Z28
	VFMADD231PS.BCST (DX)(R13*1), Z1, Z29
	ADDQ $160, SI
	ADDQ $160, R8
	ADDQ $128, DI
	ADDQ $4, DX
	DECQ CX
	JNZ q41z4loop
	MOVQ out+56(FP), BX
	MOVQ ldo+64(FP), AX
	LEAQ (AX)(AX*2), R11
	VMOVUPS Z12, (BX)
	VMOVUPS Z13, (BX)(AX*1)
	VMOVUPS Z28, (BX)(AX*2)
	VMOVUPS Z29, (BX)(R11*1)
	VZEROUPPER
	RET

#define Q80Z4_VEC(k) \
	LOADZ((32*k), Z0, Y0); \
	VPXORD Z14, Z0, Z0; \
	VPSHUFB Z8, Z0, Z3; \
	VPSRAD $24, Z3, Z3; \
	F32Z4(Z3, (16*k), Z4, Z16, Z20, Z24); \
	VPSHUFB Z9, Z0, Z3; \
	VPSRAD $24, Z3, Z3; \
	F32Z4(Z3, (16*k+4), Z5, Z17, Z21, Z25); \
	VPSHUFB Z10, Z0, Z3; \
	VPSRAD $24, Z3, Z3; \
	F32Z4(Z3, (16*k+8), Z6, Z18, Z22, Z26); \
	VPSRAD $24, Z0, Z3; \
	F32Z4(Z3, (16*k+12), Z7, Z19, Z23, Z27)

// func gemvQ8_0x16F32x4(nb int, w *byte, gstride int, x *float32, ldx int, sx *float32, ldsx int, out *float32, ldo int)
TEXT ·gemvQ8_0x16F32x4(SB), NOSPLIT, $0-72
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ gstride+16(FP), R8
	ADDQ SI, R8
	MOVQ x+24(FP), DI
	MOVQ ldx+32(FP), R9
	MOVQ sx+40(FP), DX
	MOVQ ldsx+48(FP), R10
	LEAQ (R9)(R9*2), R12
	LEAQ (R10)(R10*2), R13
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z28, Z28, Z28
	VPXORD Z29, Z29, Z29
	MOVL $0x80808080, AX
	VPBROADCASTD AX, Z14
	VBROADCASTI32X4 shufTop0<>(SB), Z8
	VBROADCASTI32X4 shufTop1<>(SB), Z9
	VBROADCASTI32X4 shufTop2<>(SB), Z10
q80z4loop:
	PREFETCHT0 (PFDIST+0)(SI)
	PREFETCHT0 (PFDIST+64)(SI)
	PREFETCHT0 (PFDIST+128)(SI)
	PREFETCHT0 (PFDIST+192)(SI)
	PREFETCHT0 (PFDIST+256)(SI)
	PREFETCHT0 (PFDIST+0)(R8)
	PREFETCHT0 (PFDIST+64)(R8)
	PREFETCHT0 (PFDIST+128)(R8)
	PREFETCHT0 (PFDIST+192)(R8)
	PREFETCHT0 (PFDIST+256)(R8)
	BLOCK_START4Z
	Q80Z4_VEC(0)
	Q80Z4_VEC(1)
	Q80Z4_VEC(2)
	Q80Z4_VEC(3)
	Q80Z4_VEC(4)
	Q80Z4_VEC(5)
	Q80Z4_VEC(6)
	Q80Z4_VEC(7)
	BLOCK_SUM4Z
	HALVES(256, Z0, Y0, X0)
	SCALE4Z(Z0)
	ADDQ $272, SI
	ADDQ $272, R8
	ADDQ $128, DI
	DECQ CX
	JNZ q80z4loop
	MOVQ out+56(FP), BX
	MOVQ ldo+64(FP), AX
	LEAQ (AX)(AX*2), R11
	VMOVUPS Z12, (BX)
	VMOVUPS Z13, (BX)(AX*1)
	VMOVUPS Z28, (BX)(AX*2)
	VMOVUPS Z29, (BX)(R11*1)
	VZEROUPPER
	RET

// Two-token AVX-512 forms (two packed groups), for the tokens a batch has
// past its fours: as the four-token kernels, with tokens 0 and 1 (partial
// sums Z4–Z7 and Z16–Z19, the rows' sums Z12 and Z13).

// F32Z2(v, off, a, b): token t's partial += float(v)·x_t[off/4].
#define F32Z2(v, off, a, b) \
	VCVTDQ2PS v, v; \
	VFMADD231PS.BCST off(DI), v, a; \
	VFMADD231PS.BCST off(DI)(R9*1), v, b

#define Q41Z2_VEC(k) \
	LOADZ((32*k), Z0, Y0); \
	VPANDD Z15, Z0, Z1; \
	VPSRLW $4, Z0, Z2; \
	VPANDD Z15, Z2, Z2; \
	VPSHUFB Z8, Z1, Z3; \
	F32Z2(Z3, (16*k), Z4, Z16); \
	VPSHUFB Z9, Z1, Z3; \
	F32Z2(Z3, (16*k+4), Z5, Z17); \
	VPSHUFB Z10, Z1, Z3; \
	F32Z2(Z3, (16*k+8), Z6, Z18); \
	VPSHUFB Z11, Z1, Z3; \
	F32Z2(Z3, (16*k+12), Z7, Z19); \
	VPSHUFB Z8, Z2, Z3; \
	F32Z2(Z3, (64+16*k), Z4, Z16); \
	VPSHUFB Z9, Z2, Z3; \
	F32Z2(Z3, (64+16*k+4), Z5, Z17); \
	VPSHUFB Z10, Z2, Z3; \
	F32Z2(Z3, (64+16*k+8), Z6, Z18); \
	VPSRLD $24, Z2, Z3; \
	F32Z2(Z3, (64+16*k+12), Z7, Z19)

#define BLOCK_START2Z \
	VPXORD Z4, Z4, Z4; \
	VPXORD Z5, Z5, Z5; \
	VPXORD Z6, Z6, Z6; \
	VPXORD Z7, Z7, Z7; \
	VPXORD Z16, Z16, Z16; \
	VPXORD Z17, Z17, Z17; \
	VPXORD Z18, Z18, Z18; \
	VPXORD Z19, Z19, Z19

#define BLOCK_SUM2Z \
	VADDPS Z5, Z4, Z4; \
	VADDPS Z7, Z6, Z6; \
	VADDPS Z6, Z4, Z4; \
	VADDPS Z17, Z16, Z16; \
	VADDPS Z19, Z18, Z18; \
	VADDPS Z18, Z16, Z16

// func gemvQ4_1x16F32x2(nb int, w *byte, gstride int, x *float32, ldx int, sx *float32, ldsx int, out *float32, ldo int)
TEXT ·gemvQ4_1x16F32x2(SB), NOSPLIT, $0-72
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ gstride+16(FP), R8
	ADDQ SI, R8
	MOVQ x+24(FP), DI
	MOVQ ldx+32(FP), R9
	MOVQ sx+40(FP), DX
	MOVQ ldsx+48(FP), R10
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	MOVL $0x0F0F0F0F, AX
	VPBROADCASTD AX, Z15
	VBROADCASTI32X4 shufLow0<>(SB), Z8
	VBROADCASTI32X4 shufLow1<>(SB), Z9
	VBROADCASTI32X4 shufLow2<>(SB), Z10
	VBROADCASTI32X4 shufLow3<>(SB), Z11
q41z2loop:
	PREFETCHT0 (PFDIST+0)(SI)
	PREFETCHT0 (PFDIST+64)(SI)
	PREFETCHT0 (PFDIST+128)(SI)
	PREFETCHT0 (PFDIST+0)(R8)
	PREFETCHT0 (PFDIST+64)(R8)
	PREFETCHT0 (PFDIST+128)(R8)
	BLOCK_START2Z
	Q41Z2_VEC(0)
	Q41Z2_VEC(1)
	Q41Z2_VEC(2)
	Q41Z2_VEC(3)
	BLOCK_SUM2Z
	HALVES(128, Z0, Y0, X0)
	VFMADD231PS Z0, Z4, Z12
	VFMADD231PS Z0, Z16, Z13
	HALVES(144, Z1, Y1, X1)
	VFMADD231PS.BCST (DX), Z1, Z12
	VFMADD231PS.BCST (DX)(R10*1), Z1, Z13
	ADDQ $160, SI
	ADDQ $160, R8
	ADDQ $128, DI
	ADDQ $4, DX
	DECQ CX
	JNZ q41z2loop
	MOVQ out+56(FP), BX
	MOVQ ldo+64(FP), AX
	VMOVUPS Z12, (BX)
	VMOVUPS Z13, (BX)(AX*1)
	VZEROUPPER
	RET

#define Q80Z2_VEC(k) \
	LOADZ((32*k), Z0, Y0); \
	VPXORD Z14, Z0, Z0; \
	VPSHUFB Z8, Z0, Z3; \
	VPSRAD $24, Z3, Z3; \
	F32Z2(Z3, (16*k), Z4, Z16); \
	VPSHUFB Z9, Z0, Z3; \
	VPSRAD $24, Z3, Z3; \
	F32Z2(Z3, (16*k+4), Z5, Z17); \
	VPSHUFB Z10, Z0, Z3; \
	VPSRAD $24, Z3, Z3; \
	F32Z2(Z3, (16*k+8), Z6, Z18); \
	VPSRAD $24, Z0, Z3; \
	F32Z2(Z3, (16*k+12), Z7, Z19)

// func gemvQ8_0x16F32x2(nb int, w *byte, gstride int, x *float32, ldx int, sx *float32, ldsx int, out *float32, ldo int)
TEXT ·gemvQ8_0x16F32x2(SB), NOSPLIT, $0-72
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ gstride+16(FP), R8
	ADDQ SI, R8
	MOVQ x+24(FP), DI
	MOVQ ldx+32(FP), R9
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	MOVL $0x80808080, AX
	VPBROADCASTD AX, Z14
	VBROADCASTI32X4 shufTop0<>(SB), Z8
	VBROADCASTI32X4 shufTop1<>(SB), Z9
	VBROADCASTI32X4 shufTop2<>(SB), Z10
q80z2loop:
	PREFETCHT0 (PFDIST+0)(SI)
	PREFETCHT0 (PFDIST+64)(SI)
	PREFETCHT0 (PFDIST+128)(SI)
	PREFETCHT0 (PFDIST+192)(SI)
	PREFETCHT0 (PFDIST+256)(SI)
	PREFETCHT0 (PFDIST+0)(R8)
	PREFETCHT0 (PFDIST+64)(R8)
	PREFETCHT0 (PFDIST+128)(R8)
	PREFETCHT0 (PFDIST+192)(R8)
	PREFETCHT0 (PFDIST+256)(R8)
	BLOCK_START2Z
	Q80Z2_VEC(0)
	Q80Z2_VEC(1)
	Q80Z2_VEC(2)
	Q80Z2_VEC(3)
	Q80Z2_VEC(4)
	Q80Z2_VEC(5)
	Q80Z2_VEC(6)
	Q80Z2_VEC(7)
	BLOCK_SUM2Z
	HALVES(256, Z0, Y0, X0)
	VFMADD231PS Z0, Z4, Z12
	VFMADD231PS Z0, Z16, Z13
	ADDQ $272, SI
	ADDQ $272, R8
	ADDQ $128, DI
	DECQ CX
	JNZ q80z2loop
	MOVQ out+56(FP), BX
	MOVQ ldo+64(FP), AX
	VMOVUPS Z12, (BX)
	VMOVUPS Z13, (BX)(AX*1)
	VZEROUPPER
	RET
