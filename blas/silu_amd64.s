//go:build !purego

#include "textflag.h"

// SwiGLU's forward, out = g / (1 + float32(exp(−g))) · up, four float64
// exponentials at a time through exactly the operations of math.Exp's
// amd64 FMA path (math/exp_amd64.s, avxfma): the same argument reduction,
// Taylor polynomial, squarings and scaling, rounded the same way, so every
// element is bitwise the scalar loop's on a CPU with FMA (where math.Exp
// takes that path). Its special cases (overflow, underflow to denormals,
// non-finite) cannot occur for |g| < 700; a group of eight holding a larger
// |g| or a NaN ends the call, for the caller to finish in Go.

DATA siluconst<>+0(SB)/8, $1.4426950408889634073599246810018920   // LOG2E
DATA siluconst<>+8(SB)/8, $0.69314718055966295651160180568695068359375   // LN2U
DATA siluconst<>+16(SB)/8, $0.28235290563031577122588448175013436025525412068e-12   // LN2L
DATA siluconst<>+24(SB)/8, $0.0625
DATA siluconst<>+32(SB)/8, $2.4801587301587301587e-5
DATA siluconst<>+40(SB)/8, $1.9841269841269841270e-4
DATA siluconst<>+48(SB)/8, $1.3888888888888888889e-3
DATA siluconst<>+56(SB)/8, $8.3333333333333333333e-3
DATA siluconst<>+64(SB)/8, $4.1666666666666666667e-2
DATA siluconst<>+72(SB)/8, $1.6666666666666666667e-1
DATA siluconst<>+80(SB)/8, $0.5
DATA siluconst<>+88(SB)/8, $1.0
DATA siluconst<>+96(SB)/8, $2.0
DATA siluconst<>+104(SB)/8, $0x8000000000000000   // float64 sign bit
DATA siluconst<>+112(SB)/4, $0x7fffffff   // float32 magnitude mask
DATA siluconst<>+116(SB)/4, $700.0
DATA siluconst<>+120(SB)/4, $1.0
DATA siluconst<>+124(SB)/4, $0x3ff   // exponent bias
GLOBL siluconst<>(SB), RODATA|NOPTR, $128

// EXPPD: Y(x) = exp(x) as math.Exp computes it, for four float64 in x.
// Clobbers Y10–Y13.
#define EXPPD(x) \
	VBROADCASTSD siluconst<>+0(SB), Y10; \
	VMULPD x, Y10, Y10; \
	VCVTPD2DQY Y10, X11; \
	VCVTDQ2PD X11, Y10; \
	VBROADCASTSD siluconst<>+8(SB), Y12; \
	VFNMADD231PD Y12, Y10, x; \
	VBROADCASTSD siluconst<>+16(SB), Y12; \
	VFNMADD231PD Y12, Y10, x; \
	VBROADCASTSD siluconst<>+24(SB), Y12; \
	VMULPD Y12, x, x; \
	VBROADCASTSD siluconst<>+32(SB), Y10; \
	VBROADCASTSD siluconst<>+40(SB), Y12; \
	VFMADD213PD Y12, x, Y10; \
	VBROADCASTSD siluconst<>+48(SB), Y12; \
	VFMADD213PD Y12, x, Y10; \
	VBROADCASTSD siluconst<>+56(SB), Y12; \
	VFMADD213PD Y12, x, Y10; \
	VBROADCASTSD siluconst<>+64(SB), Y12; \
	VFMADD213PD Y12, x, Y10; \
	VBROADCASTSD siluconst<>+72(SB), Y12; \
	VFMADD213PD Y12, x, Y10; \
	VBROADCASTSD siluconst<>+80(SB), Y12; \
	VFMADD213PD Y12, x, Y10; \
	VBROADCASTSD siluconst<>+88(SB), Y13; \
	VFMADD213PD Y13, x, Y10; \
	VMULPD Y10, x, x; \
	VBROADCASTSD siluconst<>+96(SB), Y12; \
	VADDPD Y12, x, Y10; \
	VMULPD Y10, x, x; \
	VADDPD Y12, x, Y10; \
	VMULPD Y10, x, x; \
	VADDPD Y12, x, Y10; \
	VMULPD Y10, x, x; \
	VADDPD Y12, x, Y10; \
	VFMADD213PD Y13, Y10, x; \
	VPBROADCASTD siluconst<>+124(SB), X12; \
	VPADDD X12, X11, X11; \
	VPMOVZXDQ X11, Y11; \
	VPSLLQ $52, Y11, Y11; \
	VMULPD Y11, x, x

// func siluMul8(n8 int, out *float32, gate *float32, up *float32) int
// Runs groups of eight from the start while every |g| < 700; returns how
// many elements it wrote (a multiple of 8, at most n8).
TEXT ·siluMul8(SB), NOSPLIT, $0-40
	MOVQ n8+0(FP), CX
	MOVQ out+8(FP), DI
	MOVQ gate+16(FP), SI
	MOVQ up+24(FP), DX
	XORQ AX, AX
	VBROADCASTSS siluconst<>+112(SB), Y8
	VBROADCASTSS siluconst<>+116(SB), Y9
	VBROADCASTSD siluconst<>+104(SB), Y7
	VBROADCASTSS siluconst<>+120(SB), Y6

silu8loop:
	CMPQ AX, CX
	JGE silu8done
	VMOVUPS (SI)(AX*4), Y0
	VANDPS Y8, Y0, Y1
	VCMPPS $0x11, Y9, Y1, Y1 // |g| < 700 (ordered, quiet): false for NaN
	VMOVMSKPS Y1, BX
	CMPQ BX, $0xff
	JNE silu8done
	VCVTPS2PD X0, Y2
	VXORPD Y7, Y2, Y2
	EXPPD(Y2)
	VEXTRACTF128 $1, Y0, X3
	VCVTPS2PD X3, Y3
	VXORPD Y7, Y3, Y3
	EXPPD(Y3)
	VCVTPD2PSY Y2, X2
	VCVTPD2PSY Y3, X3
	VINSERTF128 $1, X3, Y2, Y2
	VADDPS Y6, Y2, Y2
	VDIVPS Y2, Y0, Y0
	VMULPS (DX)(AX*4), Y0, Y0
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ $8, AX
	JMP silu8loop

silu8done:
	MOVQ AX, ret+32(FP)
	VZEROUPPER
	RET
