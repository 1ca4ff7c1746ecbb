//go:build !purego

#include "textflag.h"

// func kernAMX32x48(ks int, a *uint16, lda int, bp *uint32, c *float32, ldc int, acc int, cfg *byte)
// C[r, q] (+)= Σ_p a[r·lda+2p]·B[2p, q] + a[r·lda+2p+1]·B[2p+1, q] for r < 32,
// q < 48, p < 16·ks, ks > 0: 32 rows of bf16 A by a packed 48-column panel
// of bf16 B pairs (bp[p·48+q] holds B[2p, q] low and B[2p+1, q] high), on
// AMX tiles: C in tmm0–5 (rows 0–15 in tmm0–2, rows 16–31 in tmm3–5, 16
// float32 columns each), A's two row tiles (16 rows × 16 pairs) in turn in
// tmm6, the panel's three column tiles (16 pairs × 16 columns, rows 192
// bytes apart) in turn in tmm7: six products a step of 16 pairs from three
// loads of A and three of B (a 16-row kernel with A and B in tiles of
// their own ran 15–25 % slower per product on the same Xeon). cfg is the
// 64-byte tile configuration (amxConfig); the tiles are configured on entry
// and released on return, so no tile state outlives the call. The
// instructions are written as bytes (the Go assembler has no AMX
// mnemonics); each is named beside it.
TEXT ·kernAMX32x48(SB), NOSPLIT, $0-64
	MOVQ ks+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R8
	MOVQ bp+24(FP), DI
	MOVQ c+32(FP), BX
	MOVQ ldc+40(FP), R12
	MOVQ acc+48(FP), R10
	MOVQ cfg+56(FP), R11
	SHLQ $1, R8      // A's row stride in bytes
	SHLQ $2, R12     // C's row stride in bytes
	MOVQ $192, R9    // a panel's row of pairs: 48 words
	MOVQ R8, DX
	SHLQ $4, DX
	ADDQ SI, DX      // A's rows 16–31
	MOVQ R12, AX
	SHLQ $4, AX
	ADDQ BX, AX      // C's rows 16–31
	BYTE $0xc4; BYTE $0xc2; BYTE $0x78; BYTE $0x49; BYTE $0x03 // LDTILECFG (R11)
	TESTQ R10, R10
	JZ amx32zero
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x04; BYTE $0x23 // TILELOADD tmm0, (BX)(R12*1)
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x4c; BYTE $0x23; BYTE $0x40 // TILELOADD tmm1, 64(BX)(R12*1)
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x94; BYTE $0x23; BYTE $0x80; BYTE $0x00; BYTE $0x00; BYTE $0x00 // TILELOADD tmm2, 128(BX)(R12*1)
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x1c; BYTE $0x20 // TILELOADD tmm3, (AX)(R12*1)
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x64; BYTE $0x20; BYTE $0x40 // TILELOADD tmm4, 64(AX)(R12*1)
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0xac; BYTE $0x20; BYTE $0x80; BYTE $0x00; BYTE $0x00; BYTE $0x00 // TILELOADD tmm5, 128(AX)(R12*1)
	JMP amx32loop

amx32zero:
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xc0 // TILEZERO tmm0
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xc8 // TILEZERO tmm1
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xd0 // TILEZERO tmm2
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xd8 // TILEZERO tmm3
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xe0 // TILEZERO tmm4
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xe8 // TILEZERO tmm5

amx32loop:
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x3c; BYTE $0x0f // TILELOADD tmm7, (DI)(R9*1)
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x34; BYTE $0x06 // TILELOADD tmm6, (SI)(R8*1)
	BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xc6 // TDPBF16PS tmm0, tmm6, tmm7
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x34; BYTE $0x02 // TILELOADD tmm6, (DX)(R8*1)
	BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xde // TDPBF16PS tmm3, tmm6, tmm7
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x7c; BYTE $0x0f; BYTE $0x40 // TILELOADD tmm7, 64(DI)(R9*1)
	BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xe6 // TDPBF16PS tmm4, tmm6, tmm7
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x34; BYTE $0x06 // TILELOADD tmm6, (SI)(R8*1)
	BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xce // TDPBF16PS tmm1, tmm6, tmm7
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0xbc; BYTE $0x0f; BYTE $0x80; BYTE $0x00; BYTE $0x00; BYTE $0x00 // TILELOADD tmm7, 128(DI)(R9*1)
	BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xd6 // TDPBF16PS tmm2, tmm6, tmm7
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x34; BYTE $0x02 // TILELOADD tmm6, (DX)(R8*1)
	BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xee // TDPBF16PS tmm5, tmm6, tmm7
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $3072, DI
	DECQ CX
	JNZ amx32loop

	BYTE $0xc4; BYTE $0xa2; BYTE $0x7a; BYTE $0x4b; BYTE $0x04; BYTE $0x23 // TILESTORED (BX)(R12*1), tmm0
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7a; BYTE $0x4b; BYTE $0x4c; BYTE $0x23; BYTE $0x40 // TILESTORED 64(BX)(R12*1), tmm1
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7a; BYTE $0x4b; BYTE $0x94; BYTE $0x23; BYTE $0x80; BYTE $0x00; BYTE $0x00; BYTE $0x00 // TILESTORED 128(BX)(R12*1), tmm2
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7a; BYTE $0x4b; BYTE $0x1c; BYTE $0x20 // TILESTORED (AX)(R12*1), tmm3
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7a; BYTE $0x4b; BYTE $0x64; BYTE $0x20; BYTE $0x40 // TILESTORED 64(AX)(R12*1), tmm4
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7a; BYTE $0x4b; BYTE $0xac; BYTE $0x20; BYTE $0x80; BYTE $0x00; BYTE $0x00; BYTE $0x00 // TILESTORED 128(AX)(R12*1), tmm5
	BYTE $0xc4; BYTE $0xe2; BYTE $0x78; BYTE $0x49; BYTE $0xc0 // TILERELEASE
	RET
