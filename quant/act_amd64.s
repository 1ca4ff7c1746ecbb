//go:build !purego

#include "textflag.h"

// The order VPACKSSDW + VPACKSSWB leave four groups of eight values in,
// undone by one VPERMD (as in llama.cpp's AVX2 quantize_row_q8_1).
DATA packPerm<>+0(SB)/4, $0
DATA packPerm<>+4(SB)/4, $4
DATA packPerm<>+8(SB)/4, $1
DATA packPerm<>+12(SB)/4, $5
DATA packPerm<>+16(SB)/4, $2
DATA packPerm<>+20(SB)/4, $6
DATA packPerm<>+24(SB)/4, $3
DATA packPerm<>+28(SB)/4, $7
GLOBL packPerm<>(SB), RODATA|NOPTR, $32

// func quantizeQ8AVX2(nb int, x *float32, qs *int8, ds *float32, isums *int32)
//
// Per block of 32: amax, d = amax/127, q = round-half-even(x·(127/amax)),
// Σq exact into isums, (d, d·Σq) rounded through float16 into ds: the
// operations of quantizeQ8Ref in the same float32 arithmetic.
TEXT ·quantizeQ8AVX2(SB), NOSPLIT, $0-40
	MOVQ nb+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ qs+16(FP), DI
	MOVQ ds+24(FP), DX
	MOVQ isums+32(FP), R8
	MOVL $0x7FFFFFFF, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	MOVL $0x42FE0000, AX // 127.0
	VMOVD AX, X14
	VMOVDQU packPerm<>(SB), Y13
	VXORPS X12, X12, X12
loop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VANDPS Y15, Y0, Y4
	VANDPS Y15, Y1, Y5
	VMAXPS Y5, Y4, Y4
	VANDPS Y15, Y2, Y5
	VMAXPS Y5, Y4, Y4
	VANDPS Y15, Y3, Y5
	VMAXPS Y5, Y4, Y4
	VEXTRACTF128 $1, Y4, X5
	VMAXPS X5, X4, X4
	VMOVHLPS X4, X5, X5
	VMAXPS X5, X4, X4
	VMOVSHDUP X4, X5
	VMAXSS X5, X4, X4
	VDIVSS X14, X4, X6 // d = amax/127
	VDIVSS X4, X14, X7 // 127/amax
	VCMPSS $4, X12, X4, X9 // amax != 0
	VANDPS X9, X7, X7
	VBROADCASTSS X7, Y7
	VMULPS Y7, Y0, Y0
	VMULPS Y7, Y1, Y1
	VMULPS Y7, Y2, Y2
	VMULPS Y7, Y3, Y3
	VROUNDPS $0, Y0, Y0
	VROUNDPS $0, Y1, Y1
	VROUNDPS $0, Y2, Y2
	VROUNDPS $0, Y3, Y3
	VCVTPS2DQ Y0, Y0
	VCVTPS2DQ Y1, Y1
	VCVTPS2DQ Y2, Y2
	VCVTPS2DQ Y3, Y3
	VPADDD Y1, Y0, Y8
	VPADDD Y3, Y2, Y9
	VPADDD Y9, Y8, Y8
	VEXTRACTI128 $1, Y8, X9
	VPADDD X9, X8, X8
	VPSHUFD $0x4E, X8, X9
	VPADDD X9, X8, X8
	VPSHUFD $0xB1, X8, X9
	VPADDD X9, X8, X8
	VMOVD X8, AX
	MOVL AX, (R8)
	VPACKSSDW Y1, Y0, Y0
	VPACKSSDW Y3, Y2, Y2
	VPACKSSWB Y2, Y0, Y0
	VPERMD Y0, Y13, Y0
	VMOVDQU Y0, (DI)
	VCVTPS2PH $0, X6, X9
	VCVTPH2PS X9, X9
	VMOVSS X9, (DX)
	VCVTSI2SSL AX, X10, X10
	VMULSS X6, X10, X10
	VCVTPS2PH $0, X10, X10
	VCVTPH2PS X10, X10
	VMOVSS X10, 4(DX)
	ADDQ $128, SI
	ADDQ $32, DI
	ADDQ $8, DX
	ADDQ $4, R8
	DECQ CX
	JNZ loop
	VZEROUPPER
	RET

// func quantizeQ8KAVX512(nb int, x *float32, qs *int8, d *float32, bsums *int16)
//
// quantizeQ8KRef per super-block of 256 in the same float32 operations:
// mx the first value of largest magnitude (NaNs skipped: VMAXPS keeps its
// second source, the running maximum, when either is NaN), iscale =
// −127/mx, q = min(127, round-half-even(iscale·x)) stored as its low byte
// (as Go's int8 conversion), the sums of 16 of those bytes, d = 1/iscale;
// a block with no nonzero magnitude gives zeros and d = 0.
TEXT ·quantizeQ8KAVX512(SB), NOSPLIT, $0-40
	MOVQ nb+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ qs+16(FP), DI
	MOVQ d+24(FP), DX
	MOVQ bsums+32(FP), R8
	MOVL $0x7FFFFFFF, AX
	VPBROADCASTD AX, Z31
	MOVL $0xC2FE0000, AX // -127.0
	VMOVD AX, X30
	MOVL $0x3F800000, AX // 1.0
	VMOVD AX, X29
	MOVL $127, AX
	VPBROADCASTD AX, Z28
	VXORPS X27, X27, X27
q8kloop:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	XORQ BX, BX
q8kmax:
	VPANDD (SI)(BX*1), Z31, Z4
	VMAXPS Z0, Z4, Z0
	VPANDD 64(SI)(BX*1), Z31, Z5
	VMAXPS Z1, Z5, Z1
	VPANDD 128(SI)(BX*1), Z31, Z6
	VMAXPS Z2, Z6, Z2
	VPANDD 192(SI)(BX*1), Z31, Z7
	VMAXPS Z3, Z7, Z3
	ADDQ $256, BX
	CMPQ BX, $1024
	JNE q8kmax
	VMAXPS Z1, Z0, Z0
	VMAXPS Z3, Z2, Z2
	VMAXPS Z2, Z0, Z0
	VEXTRACTF32X8 $1, Z0, Y1
	VMAXPS Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS X1, X0, X0
	VMOVHLPS X0, X1, X1
	VMAXPS X1, X0, X0
	VMOVSHDUP X0, X1
	VMAXSS X1, X0, X0
	VUCOMISS X27, X0
	JEQ q8kzero
	// mx: the first value whose magnitude is amax.
	VBROADCASTSS X0, Z1
	XORQ BX, BX
q8kfind:
	VPANDD (SI)(BX*1), Z31, Z2
	VCMPPS $0, Z1, Z2, K1
	KMOVW K1, AX
	TESTL AX, AX
	JNZ q8kfound
	ADDQ $64, BX
	JMP q8kfind
q8kfound:
	TZCNTL AX, AX
	LEAQ (BX)(AX*4), BX
	VMOVSS (SI)(BX*1), X3
	VDIVSS X3, X30, X4 // iscale = -127/mx
	VDIVSS X4, X29, X5 // d = 1/iscale
	VMOVSS X5, (DX)
	VBROADCASTSS X4, Z4
	XORQ BX, BX
	XORQ R9, R9
q8kquant:
	VMULPS (SI)(BX*4), Z4, Z6
	VCVTPS2DQ Z6, Z6
	VPMINSD Z28, Z6, Z6
	VPMOVDB Z6, X7
	VMOVDQU X7, (DI)(BX*1)
	VPMOVSXBD X7, Z7
	VEXTRACTI64X4 $1, Z7, Y8
	VPADDD Y8, Y7, Y7
	VEXTRACTI128 $1, Y7, X8
	VPADDD X8, X7, X7
	VPSHUFD $0x4E, X7, X8
	VPADDD X8, X7, X7
	VPSHUFD $0xB1, X7, X8
	VPADDD X8, X7, X7
	VMOVD X7, AX
	MOVW AX, (R8)(R9*2)
	ADDQ $16, BX
	INCQ R9
	CMPQ R9, $16
	JNE q8kquant
	JMP q8knext
q8kzero:
	VPXORD Z0, Z0, Z0
	VMOVDQU64 Z0, (DI)
	VMOVDQU64 Z0, 64(DI)
	VMOVDQU64 Z0, 128(DI)
	VMOVDQU64 Z0, 192(DI)
	VMOVDQU Y0, (R8)
	MOVL $0, (DX)
q8knext:
	ADDQ $1024, SI
	ADDQ $256, DI
	ADDQ $4, DX
	ADDQ $32, R8
	DECQ CX
	JNZ q8kloop
	VZEROUPPER
	RET
