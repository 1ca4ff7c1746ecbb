//go:build !purego

#include "textflag.h"

// func kernAMX16x48(ks int, a *uint16, lda int, bp *uint32, c *float32, ldc int, acc int, cfg *byte)
// C[r, q] (+)= Σ_p a[r·lda+2p]·B[2p, q] + a[r·lda+2p+1]·B[2p+1, q] for r < 16,
// q < 48, p < 16·ks, ks > 0: sixteen rows of bf16 A by a packed 48-column
// panel of bf16 B pairs (bp[p·48+q] holds B[2p, q] low and B[2p+1, q]
// high), on AMX tiles: C in tmm0–2 (16 × 16 float32 each), A in tmm3
// (16 rows × 16 pairs), B in tmm4–6 (16 pairs × 16 columns, rows 192
// bytes apart in the panel). cfg is the 64-byte tile configuration
// (amxConfig); the tiles are configured on entry and released on return,
// so no tile state outlives the call. The instructions are written as
// bytes (the Go assembler has no AMX mnemonics); each is named beside it.
TEXT ·kernAMX16x48(SB), NOSPLIT, $0-64
	MOVQ ks+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R8
	MOVQ bp+24(FP), DI
	MOVQ c+32(FP), BX
	MOVQ ldc+40(FP), R12
	MOVQ acc+48(FP), R10
	MOVQ cfg+56(FP), DX
	SHLQ $1, R8      // A's row stride in bytes
	SHLQ $2, R12     // C's row stride in bytes
	MOVQ $192, R9    // a panel's row of pairs: 48 words
	BYTE $0xc4; BYTE $0xe2; BYTE $0x78; BYTE $0x49; BYTE $0x02 // LDTILECFG (DX)
	TESTQ R10, R10
	JZ amxzero
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x04; BYTE $0x23 // TILELOADD tmm0, (BX)(R12*1)
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x4c; BYTE $0x23; BYTE $0x40 // TILELOADD tmm1, 64(BX)(R12*1)
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x94; BYTE $0x23; BYTE $0x80; BYTE $0x00; BYTE $0x00; BYTE $0x00 // TILELOADD tmm2, 128(BX)(R12*1)
	JMP amxloop

amxzero:
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xc0 // TILEZERO tmm0
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xc8 // TILEZERO tmm1
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xd0 // TILEZERO tmm2

amxloop:
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x1c; BYTE $0x06 // TILELOADD tmm3, (SI)(R8*1)
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x24; BYTE $0x0f // TILELOADD tmm4, (DI)(R9*1)
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x6c; BYTE $0x0f; BYTE $0x40 // TILELOADD tmm5, 64(DI)(R9*1)
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0xb4; BYTE $0x0f; BYTE $0x80; BYTE $0x00; BYTE $0x00; BYTE $0x00 // TILELOADD tmm6, 128(DI)(R9*1)
	BYTE $0xc4; BYTE $0xe2; BYTE $0x5a; BYTE $0x5c; BYTE $0xc3 // TDPBF16PS tmm0, tmm3, tmm4
	BYTE $0xc4; BYTE $0xe2; BYTE $0x52; BYTE $0x5c; BYTE $0xcb // TDPBF16PS tmm1, tmm3, tmm5
	BYTE $0xc4; BYTE $0xe2; BYTE $0x4a; BYTE $0x5c; BYTE $0xd3 // TDPBF16PS tmm2, tmm3, tmm6
	ADDQ $64, SI     // 16 pairs of A
	ADDQ $3072, DI   // 16 rows of pairs of the panel
	DECQ CX
	JNZ amxloop

	BYTE $0xc4; BYTE $0xa2; BYTE $0x7a; BYTE $0x4b; BYTE $0x04; BYTE $0x23 // TILESTORED (BX)(R12*1), tmm0
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7a; BYTE $0x4b; BYTE $0x4c; BYTE $0x23; BYTE $0x40 // TILESTORED 64(BX)(R12*1), tmm1
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7a; BYTE $0x4b; BYTE $0x94; BYTE $0x23; BYTE $0x80; BYTE $0x00; BYTE $0x00; BYTE $0x00 // TILESTORED 128(BX)(R12*1), tmm2
	BYTE $0xc4; BYTE $0xe2; BYTE $0x78; BYTE $0x49; BYTE $0xc0 // TILERELEASE
	RET
