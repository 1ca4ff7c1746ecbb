//go:build ignore

// packedkv_gen.go writes packedkv_amd64.s: the packed eight-row Q4_K and
// Q6_K kernels (packed.go's layouts) on the sixteen YMM registers: for one
// and for two tokens on AVX-VNNI, the VEX form of VPDPBUSD that Intel's
// client CPUs without AVX-512 have (Alder Lake on), and on AVX2 alone (a
// Zen 3, Intel before Ice Lake) Q4_K's for one and two tokens and Q6_K's
// for two: go generate ./quant (or go run packedkv_gen.go in this folder).
//
// The AVX-VNNI ones are packedk_amd64.s's one-token kernels with each
// product step (VPMADDUBSW, VPMADDWD by ones, VPADDD on AVX2) one
// VPDPBUSD, and a two-token form of each, as packedk2_amd64.s's are of the
// AVX-512 ones. The AVX2 ones keep VPMADDUBSW's int16 pair sums over
// several columns before widening them (q4kAVX2, q6kAVX2): fewer steps per
// product, and a column's unpacked bytes serve both tokens. The integer
// sums are exact either way (a pair of products is at most 2·63·127, no
// saturation; the int16 sums' bounds are at each generator), and every
// float step is the one-token kernel's in its order, so every output is
// bitwise theirs. Sixteen registers hold two tokens' Q4_K sums as the
// AVX-512 form does; Q6_K's two tokens take a value group at a time over a
// column run (the AVX-512 form keeps all four groups' sums), reloading the
// run's bytes from L1 for each group.
//
// The Go assembler writes VPDPBUSD only in its EVEX form (AVX-512 VL), so
// it is encoded here and written as bytes, named beside them.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"log"
	"os"
)

type gen struct{ b bytes.Buffer }

func (g *gen) f(format string, args ...any) { fmt.Fprintf(&g.b, "\t"+format+"\n", args...) }

// dpbusd writes VPDPBUSD Ys, Yu, Yacc (Go's operand order: acc += the
// four-byte products of unsigned u and signed s) in its VEX.256 form:
// C4, RXB.00010 (map 0F38), W0.vvvv.L1.01 (66), 50, ModRM 11.acc.s.
func (g *gen) dpbusd(s, u, acc int) {
	inv := func(v int) int { return ^v & 1 }
	code := []byte{0xc4, byte(inv(acc>>3)<<7 | 1<<6 | inv(s>>3)<<5 | 0x02), byte((^u&15)<<3 | 1<<2 | 1), 0x50, byte(0xc0 | (acc&7)<<3 | s&7)}
	var b bytes.Buffer
	for i, c := range code {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "BYTE $0x%02x", c)
	}
	g.f("%s // VPDPBUSD Y%d, Y%d, Y%d", b.String(), s, u, acc)
}

// tok is token t's operand at offset off of the row in base, whose tokens
// are stride apart (Go's addressing).
func tok(off int, base, stride string, t int) string {
	if t == 0 {
		return fmt.Sprintf("%d(%s)", off, base)
	}
	return fmt.Sprintf("%d(%s)(%s*1)", off, base, stride)
}

func (g *gen) prefetch(bytes int) {
	for off := 0; off < bytes; off += 64 {
		g.f("PREFETCHT0 (PFDIST+%d)(SI)", off)
	}
}

// header loads the arguments: one token's (gemv8Func) or two tokens'
// (gemv8x4Func, R9, R10 and R11 the second token's strides).
func (g *gen) header(name string, tokens int) {
	if tokens == 1 {
		g.b.WriteString(fmt.Sprintf("// func %s(nb int, w *byte, qs *int8, ds *float32, sums *int32, out *float32)\nTEXT ·%s(SB), NOSPLIT, $0-48\n", name, name))
		g.f("MOVQ nb+0(FP), CX")
		g.f("MOVQ w+8(FP), SI")
		g.f("MOVQ qs+16(FP), DI")
		g.f("MOVQ ds+24(FP), DX")
		g.f("MOVQ sums+32(FP), R8")
		return
	}
	g.b.WriteString(fmt.Sprintf("// func %s(nb int, w *byte, qs *int8, ldq int, ds *float32, ldd int, sums *int32, lds int, out *float32, ldo int)\nTEXT ·%s(SB), NOSPLIT, $0-80\n", name, name))
	g.f("MOVQ nb+0(FP), CX")
	g.f("MOVQ w+8(FP), SI")
	g.f("MOVQ qs+16(FP), DI")
	g.f("MOVQ ldq+24(FP), R9")
	g.f("MOVQ ds+32(FP), DX")
	g.f("MOVQ ldd+40(FP), R10")
	g.f("MOVQ sums+48(FP), R8")
	g.f("MOVQ lds+56(FP), R11")
}

// start writes the arguments' loads, the masks (Y15 0x0F, and with q6 Y14
// 0x30), the outputs Y12+t zeroed, and the loop's head: a super-block of
// wbytes prefetched, its sums Y10+t zeroed.
func (g *gen) start(name string, tokens, wbytes int, q6 bool) {
	g.header(name, tokens)
	g.f("MOVL $0x0F0F0F0F, AX")
	g.f("VMOVD AX, X15")
	g.f("VPBROADCASTD X15, Y15")
	if q6 {
		g.f("MOVL $0x30303030, AX")
		g.f("VMOVD AX, X14")
		g.f("VPBROADCASTD X14, Y14")
	}
	for t := 0; t < tokens; t++ {
		g.f("VXORPS Y%d, Y%d, Y%d", 12+t, 12+t, 12+t)
	}
	g.b.WriteString(name + "loop:\n")
	g.prefetch(wbytes)
	for t := 0; t < tokens; t++ {
		g.f("VPXOR Y%d, Y%d, Y%d", 10+t, 10+t, 10+t)
	}
}

// next moves to the next super-block (wbytes of packed weights, sbytes of
// activation sums; 256 activation bytes and one d per token), loops, and
// stores the outputs Y12 (and Y13).
func (g *gen) next(name string, tokens, wbytes, sbytes int) {
	g.f("ADDQ $%d, SI", wbytes)
	g.f("ADDQ $256, DI")
	g.f("ADDQ $4, DX")
	g.f("ADDQ $%d, R8", sbytes)
	g.f("DECQ CX")
	g.f("JNZ %sloop", name)
	if tokens == 1 {
		g.f("MOVQ out+40(FP), BX")
		g.f("VMOVUPS Y12, (BX)")
	} else {
		g.f("MOVQ out+64(FP), BX")
		g.f("MOVQ ldo+72(FP), AX")
		g.f("VMOVUPS Y12, (BX)")
		g.f("VMOVUPS Y13, (BX)(AX*1)")
	}
	g.f("VZEROUPPER")
	g.f("RET")
	g.b.WriteString("\n")
}

// q4k writes the Q4_K kernel for tokens (1 or 2). Per super-block of
// 1184 bytes: eight 32-byte columns per sub-block pair j (the low
// nibbles sub-block 2j, the high 2j+1; activation bytes 64j+4k and
// 64j+32+4k), the pair's 16 six-bit scales at 1024+16j, the 8 minimums at
// 1088, d and dmin as float16 at 1152 and 1168. Per token t: Y4+2t and
// Y5+2t the pair's sums, Y10+t the super-block's scaled sums, Y8+t its
// minimum sums, Y12+t the float outputs; Y15 the 0x0F mask.
func (g *gen) q4k(name string, tokens int) {
	g.start(name, tokens, 1184, false)
	for t := 0; t < tokens; t++ {
		g.f("VPXOR Y%d, Y%d, Y%d", 8+t, 8+t, 8+t)
	}
	for j := 0; j < 4; j++ {
		for t := 0; t < tokens; t++ {
			g.f("VPXOR Y%d, Y%d, Y%d", 4+2*t, 4+2*t, 4+2*t)
			g.f("VPXOR Y%d, Y%d, Y%d", 5+2*t, 5+2*t, 5+2*t)
		}
		for k := 0; k < 8; k++ {
			g.f("VMOVDQU %d(SI), Y0", 256*j+32*k)
			g.f("VPSRLW $4, Y0, Y1")
			g.f("VPAND Y15, Y0, Y0")
			g.f("VPAND Y15, Y1, Y1")
			for t := 0; t < tokens; t++ {
				g.f("VPBROADCASTD %s, Y2", tok(64*j+4*k, "DI", "R9", t))
				g.dpbusd(2, 0, 4+2*t)
				g.f("VPBROADCASTD %s, Y3", tok(64*j+32+4*k, "DI", "R9", t))
				g.dpbusd(3, 1, 5+2*t)
			}
		}
		g.f("VPMOVZXBD %d(SI), Y14", 1024+16*j)
		for t := 0; t < tokens; t++ {
			g.f("VPMULLD Y14, Y%d, Y%d", 4+2*t, 4+2*t)
			g.f("VPADDD Y%d, Y%d, Y%d", 4+2*t, 10+t, 10+t)
		}
		g.f("VPMOVZXBD %d(SI), Y14", 1032+16*j)
		for t := 0; t < tokens; t++ {
			g.f("VPMULLD Y14, Y%d, Y%d", 5+2*t, 5+2*t)
			g.f("VPADDD Y%d, Y%d, Y%d", 5+2*t, 10+t, 10+t)
		}
	}
	g.q4kTail(name, tokens)
}

// q4kTail writes the minimums' sums (Y8+t) of a Q4_K super-block, the
// one-token kernel's float steps per token in its order, and the loop's
// end.
func (g *gen) q4kTail(name string, tokens int) {
	for s := 0; s < 8; s++ {
		g.f("VPMOVZXBD %d(SI), Y14", 1088+8*s)
		for t := 0; t < tokens; t++ {
			g.f("VPBROADCASTD %s, Y2", tok(4*s, "R8", "R11", t))
			g.f("VPMULLD Y2, Y14, Y2")
			g.f("VPADDD Y2, Y%d, Y%d", 8+t, 8+t)
		}
	}
	for t := 0; t < tokens; t++ {
		g.f("VBROADCASTSS %s, Y2", tok(0, "DX", "R10", t))
		g.f("VCVTDQ2PS Y%d, Y%d", 10+t, 10+t)
		g.f("VCVTPH2PS 1152(SI), Y0")
		g.f("VMULPS Y2, Y0, Y0")
		g.f("VFMADD231PS Y0, Y%d, Y%d", 10+t, 12+t)
		g.f("VCVTDQ2PS Y%d, Y%d", 8+t, 8+t)
		g.f("VCVTPH2PS 1168(SI), Y1")
		g.f("VMULPS Y2, Y1, Y1")
		g.f("VFNMADD231PS Y1, Y%d, Y%d", 8+t, 12+t)
	}
	g.next(name, tokens, 1184, 32)
}

// q6k writes the Q6_K kernel for tokens (1 or 2). Per super-block of
// 1680 bytes: for half n and column k the low bits ql at 512n+32k and
// 512n+256+32k, the high bits qh at 1024+256n+32k, rebuilt into four value
// vectors (values 128n+4k.., +32, +64, +96) as the reference does; the 16
// int8 scales at 1536 (scale s for values 16s..), d at 1664; the
// activation sums R8 holds are 32·Σa per 16 values (the values are stored
// +32). A column run is columns 4h..4h+3 of a half, 16 values of each
// group. Per token t: Y10+t the super-block's scaled sums, Y12+t the
// float outputs; the group sums Y6..Y9 (one token) or Y7+t (two); Y15
// the 0x0F mask, Y14 the 0x30 mask.
func (g *gen) q6k(name string, tokens int) {
	g.start(name, tokens, 1680, true)
	for n := 0; n < 2; n++ {
		for h := 0; h < 2; h++ {
			if tokens == 1 {
				// The one-token kernel's order: each column's four
				// groups (Y6..Y9), then the four groups' scales.
				for grp := 0; grp < 4; grp++ {
					g.f("VPXOR Y%d, Y%d, Y%d", 6+grp, 6+grp, 6+grp)
				}
				for k := 4 * h; k < 4*h+4; k++ {
					g.f("VMOVDQU %d(SI), Y0", 512*n+32*k)
					g.f("VMOVDQU %d(SI), Y1", 512*n+256+32*k)
					g.f("VMOVDQU %d(SI), Y2", 1024+256*n+32*k)
					for grp := 0; grp < 4; grp++ {
						g.q6value(grp)
						g.f("VPBROADCASTD %d(DI), Y5", 128*n+32*grp+4*k)
						g.dpbusd(5, 3, 6+grp)
					}
				}
				for grp := 0; grp < 4; grp++ {
					g.q6kScale(8*n+2*grp+h, 6+grp, 0, 10, 11)
				}
				continue
			}
			// Two tokens: a group at a time over the run (Y7+t), its
			// column's low and high bits loaded again for each group.
			for grp := 0; grp < 4; grp++ {
				for t := 0; t < tokens; t++ {
					g.f("VPXOR Y%d, Y%d, Y%d", 7+t, 7+t, 7+t)
				}
				for k := 4 * h; k < 4*h+4; k++ {
					ql := grp & 1
					g.f("VMOVDQU %d(SI), Y%d", 512*n+256*ql+32*k, ql)
					g.f("VMOVDQU %d(SI), Y2", 1024+256*n+32*k)
					g.q6value(grp)
					for t := 0; t < tokens; t++ {
						g.f("VPBROADCASTD %s, Y5", tok(128*n+32*grp+4*k, "DI", "R9", t))
						g.dpbusd(5, 3, 7+t)
					}
				}
				for t := 0; t < tokens; t++ {
					g.q6kScale(8*n+2*grp+h, 7+t, t, 10+t, 6)
				}
			}
		}
	}
	g.q6kTail(name, tokens)
}

// q6kTail writes the one-token kernel's float steps of a Q6_K super-block
// per token in its order, and the loop's end.
func (g *gen) q6kTail(name string, tokens int) {
	for t := 0; t < tokens; t++ {
		g.f("VBROADCASTSS %s, Y2", tok(0, "DX", "R10", t))
		g.f("VCVTDQ2PS Y%d, Y%d", 10+t, 10+t)
		g.f("VCVTPH2PS 1664(SI), Y0")
		g.f("VMULPS Y2, Y0, Y0")
		g.f("VFMADD231PS Y0, Y%d, Y%d", 10+t, 12+t)
	}
	g.next(name, tokens, 1680, 64)
}

// q4kAVX2 writes the Q4_K kernel for tokens (1 or 2) on AVX2, which has
// no VPDPBUSD: a column's products are VPMADDUBSW's pairs, int16 lanes
// summed over the sub-block pair's eight columns (|Σ| ≤ 8·2·15·127 =
// 30480, exact in int16), and each row's two lanes are multiplied by its
// six-bit scale and summed into int32 in one VPMADDWD (the scale bytes
// widened to a word pair per row), in place of packedk_amd64.s's
// VPMADDWD by ones, VPADDD per column and VPMULLD per sub-block: the same
// exact integers, so the float steps (the one-token kernel's) give its
// bits. Registers as q4k's, Y4+2t and Y5+2t the int16 sums; the first
// column's products go straight into them.
func (g *gen) q4kAVX2(name string, tokens int) {
	g.start(name, tokens, 1184, false)
	for t := 0; t < tokens; t++ {
		g.f("VPXOR Y%d, Y%d, Y%d", 8+t, 8+t, 8+t)
	}
	for j := 0; j < 4; j++ {
		for k := 0; k < 8; k++ {
			g.f("VMOVDQU %d(SI), Y0", 256*j+32*k)
			g.f("VPSRLW $4, Y0, Y1")
			g.f("VPAND Y15, Y0, Y0")
			g.f("VPAND Y15, Y1, Y1")
			for t := 0; t < tokens; t++ {
				for half, tmp := range []int{2, 3} {
					acc := 4 + 2*t + half
					g.f("VPBROADCASTD %s, Y%d", tok(64*j+32*half+4*k, "DI", "R9", t), tmp)
					if k == 0 {
						g.f("VPMADDUBSW Y%d, Y%d, Y%d", tmp, half, acc)
						continue
					}
					g.f("VPMADDUBSW Y%d, Y%d, Y%d", tmp, half, tmp)
					g.f("VPADDW Y%d, Y%d, Y%d", tmp, acc, acc)
				}
			}
		}
		for half := 0; half < 2; half++ {
			g.f("VPMOVZXBD %d(SI), Y14", 1024+16*j+8*half)
			g.f("VPSLLD $16, Y14, Y2")
			g.f("VPOR Y2, Y14, Y14")
			for t := 0; t < tokens; t++ {
				acc := 4 + 2*t + half
				g.f("VPMADDWD Y14, Y%d, Y%d", acc, acc)
				g.f("VPADDD Y%d, Y%d, Y%d", acc, 10+t, 10+t)
			}
		}
	}
	g.q4kTail(name, tokens)
}

// q6kAVX2 writes the two-token Q6_K kernel on AVX2 in q6k's order (a
// value group at a time over a column run), each column's products
// VPMADDUBSW's int16 pairs summed over two columns (|Σ| ≤ 2·2·63·127 =
// 32004, exact in int16), then widened by VPMADDWD by ones into the
// group's int32 sums Y7+t: the same exact integers as packedk_amd64.s's
// AVX2 kernel, whose float steps it takes. Y9 and Y6 hold the tokens'
// int16 sums, and the ql register the group does not read (Y0 or Y1) the
// ones.
func (g *gen) q6kAVX2(name string) {
	const tokens = 2
	g.start(name, tokens, 1680, true)
	acc16 := [tokens]int{9, 6}
	for n := 0; n < 2; n++ {
		for h := 0; h < 2; h++ {
			for grp := 0; grp < 4; grp++ {
				ql := grp & 1
				ones := 1 - ql
				g.f("VPCMPEQW Y%d, Y%d, Y%d", ones, ones, ones)
				g.f("VPSRLW $15, Y%d, Y%d", ones, ones)
				for t := 0; t < tokens; t++ {
					g.f("VPXOR Y%d, Y%d, Y%d", 7+t, 7+t, 7+t)
				}
				for k := 4 * h; k < 4*h+4; k++ {
					g.f("VMOVDQU %d(SI), Y%d", 512*n+256*ql+32*k, ql)
					g.f("VMOVDQU %d(SI), Y2", 1024+256*n+32*k)
					g.q6value(grp)
					for t := 0; t < tokens; t++ {
						g.f("VPBROADCASTD %s, Y5", tok(128*n+32*grp+4*k, "DI", "R9", t))
						if k%2 == 0 {
							g.f("VPMADDUBSW Y5, Y3, Y%d", acc16[t])
							continue
						}
						g.f("VPMADDUBSW Y5, Y3, Y5")
						g.f("VPADDW Y5, Y%d, Y%d", acc16[t], acc16[t])
						g.f("VPMADDWD Y%d, Y%d, Y%d", ones, acc16[t], acc16[t])
						g.f("VPADDD Y%d, Y%d, Y%d", acc16[t], 7+t, 7+t)
					}
				}
				for t := 0; t < tokens; t++ {
					g.q6kScale(8*n+2*grp+h, 7+t, t, 10+t, 4)
				}
			}
		}
	}
	g.q6kTail(name, tokens)
}

// q6value writes group grp's value vector of a Q6_K column into Y3 from
// its low bits (Y0: ql0, Y1: ql1) and high bits (Y2: qh), Y4 its
// temporary: group 0 the low nibbles of ql0 | (qh<<4)&0x30, 1 those of
// ql1 | (qh<<2)&0x30, 2 the high nibbles of ql0 | qh&0x30, 3 those of
// ql1 | (qh>>2)&0x30. Groups 1 and 3 take their low bits from ql1 (Y1), 0
// and 2 from ql0.
func (g *gen) q6value(grp int) {
	ql := grp & 1
	if grp < 2 {
		g.f("VPAND Y15, Y%d, Y3", ql)
	} else {
		g.f("VPSRLW $4, Y%d, Y3", ql)
		g.f("VPAND Y15, Y3, Y3")
	}
	switch grp {
	case 0:
		g.f("VPSLLW $4, Y2, Y4")
		g.f("VPAND Y14, Y4, Y4")
	case 1:
		g.f("VPSLLW $2, Y2, Y4")
		g.f("VPAND Y14, Y4, Y4")
	case 2:
		g.f("VPAND Y14, Y2, Y4")
	case 3:
		g.f("VPSRLW $2, Y2, Y4")
		g.f("VPAND Y14, Y4, Y4")
	}
	g.f("VPOR Y4, Y3, Y3")
}

// q6kScale adds scale s times (acc − 32·Σa of its 16 values) into sum
// for token t, the scale widened into tmp.
func (g *gen) q6kScale(s, acc, t, sum, tmp int) {
	g.f("VPBROADCASTD %s, Y5", tok(4*s, "R8", "R11", t))
	g.f("VPSUBD Y5, Y%d, Y%d", acc, acc)
	g.f("VPMOVSXBD %d(SI), Y%d", 1536+8*s, tmp)
	g.f("VPMULLD Y%d, Y%d, Y%d", tmp, acc, acc)
	g.f("VPADDD Y%d, Y%d, Y%d", acc, sum, sum)
}

func main() {
	out := flag.String("o", "packedkv_amd64.s", "output file")
	flag.Parse()
	var g gen
	g.b.WriteString(`// Code generated by packedkv_gen.go; DO NOT EDIT.

//go:build !purego

#include "textflag.h"

// Packed Q4_K and Q6_K kernels on the sixteen YMM registers: for one and
// two tokens on AVX-VNNI (VEX VPDPBUSD), and for two tokens on AVX2 (and
// Q4_K's for one, int16 sums): see packedkv_gen.go. Every output is bitwise
// packedk_amd64.s's one-token kernels'.

#define PFDIST 4096

`)
	g.q4k("gemvQ4Kx8AVXVNNI", 1)
	g.q4k("gemvQ4Kx8x2AVXVNNI", 2)
	g.q6k("gemvQ6Kx8AVXVNNI", 1)
	g.q6k("gemvQ6Kx8x2AVXVNNI", 2)
	g.q4kAVX2("gemvQ4Kx8AVX2W", 1)
	g.q4kAVX2("gemvQ4Kx8x2AVX2", 2)
	g.q6kAVX2("gemvQ6Kx8x2AVX2")
	b := bytes.TrimRight(g.b.Bytes(), "\n")
	if err := os.WriteFile(*out, append(b, '\n'), 0o644); err != nil {
		log.Fatal(err)
	}
}
