//go:build ignore

// amxk_gen.go writes amxk_amd64.s, the Q4_K and Q6_K products on AMX-INT8
// tiles (amxk.go): go generate ./quant (or go run amxk_gen.go in this
// folder).
//
// Sixteen weight rows (two packed groups, packed.go) by sixteen tokens:
// TDPBSUD sums the int8 activations (A: 16 tokens × 64 values) times
// unsigned weight bytes (B: 16 rows of 4 values × 16 weight rows). The
// scales go into B: a prep kernel writes, per super-block, each value
// times its scale, split into its low byte and its high byte, so
// C_lo + 256·C_hi is the super-block's integer sum exactly, the one the
// VNNI kernels form sub-block by sub-block:
//
//   - Q4_K (prepQ4KAMX): each nibble times its sub-block's 6-bit scale (at
//     most 15·63 = 945); the minimums' Σ_s min_s·Σa_s is formed with
//     VPDPWSSD on (min_2p, min_2p+1) word pairs against the activations'
//     sums of 32 as int16 pairs;
//   - Q6_K (prepQ6KAMX): each value q − 32 times its group of 16's int8
//     scale (at most 4,096 in magnitude), the high byte signed (TDPBSSD).
//
// The float steps are then the VNNI kernels' in their order (out +=
// (d·dt)·sum fused, then for Q4_K out −= (dmin·dt)·minsum fused,
// super-blocks in order, from +0), so every output is bitwise theirs.
//
// The Go assembler has no AMX mnemonics: the tile instructions are
// encoded here (VEX, as the Intel SDM gives them) and written as bytes,
// each named beside it.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"log"
	"os"
	"strings"
)

// Layout of one prepared super-block (amxQ4KPrep bytes, amxk.go).
const (
	prepBytes = 8576
	minOff    = 8192 // four minimum pairs, 64 bytes each
	dOff      = 8448 // the 16 rows' d, float32
	dminOff   = 8512 // their dmin

	// Q6_K: the four chunks' B tiles (as Q4_K's), then the rows' d.
	q6dOff      = 8192
	q6PrepBytes = 8256
)

type gen struct{ b bytes.Buffer }

func (g *gen) f(format string, args ...any) { fmt.Fprintf(&g.b, format+"\n", args...) }

// Go's names of the general registers, by number.
var gpr = []string{"AX", "CX", "DX", "BX", "SP", "BP", "SI", "DI", "R8", "R9", "R10", "R11", "R12", "R13", "R14", "R15"}

const (
	rAX, rCX, rDX, rBX, rSI, rDI = 0, 1, 2, 3, 6, 7
	r8, r9, r10, r11, r12, r14   = 8, 9, 10, 11, 12, 14
)

// vex3 is the three-byte VEX prefix for map 0F38, W0, L0: r, x, b are the
// high bits of ModRM.reg, SIB.index and the base; vvvv the extra operand
// (0 where none: the field holds it inverted); pp 0 none, 1 66, 2 F3, 3 F2.
func vex3(r, x, b, vvvv, pp int) []byte {
	inv := func(v int) int { return ^v & 1 }
	return []byte{0xc4, byte(inv(r)<<7 | inv(x)<<6 | inv(b)<<5 | 0x02), byte((^vvvv&15)<<3 | pp)}
}

// mem encodes ModRM (with reg) and SIB for (base)(index*1)+disp.
func mem(reg, base, index, disp int) []byte {
	mod := 2
	switch {
	case disp == 0 && base&7 != 5:
		mod = 0
	case disp >= -128 && disp < 128:
		mod = 1
	}
	out := []byte{byte(mod<<6 | (reg&7)<<3 | 4), byte((index&7)<<3 | base&7)}
	switch mod {
	case 1:
		out = append(out, byte(disp))
	case 2:
		out = append(out, byte(disp), byte(disp>>8), byte(disp>>16), byte(disp>>24))
	}
	return out
}

// raw writes one encoded instruction.
func (g *gen) raw(code []byte, name string) {
	var b bytes.Buffer
	b.WriteString("\t")
	for i, c := range code {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "BYTE $0x%02x", c)
	}
	g.f("%s // %s", b.String(), name)
}

func memName(base, index, disp int) string {
	if disp == 0 {
		return fmt.Sprintf("(%s)(%s*1)", gpr[base], gpr[index])
	}
	return fmt.Sprintf("%d(%s)(%s*1)", disp, gpr[base], gpr[index])
}

func (g *gen) tileload(tmm, base, index, disp int) {
	code := append(vex3(0, index>>3, base>>3, 0, 3), 0x4b)
	g.raw(append(code, mem(tmm, base, index, disp)...), fmt.Sprintf("TILELOADD tmm%d, %s", tmm, memName(base, index, disp)))
}

func (g *gen) tilestore(tmm, base, index, disp int) {
	code := append(vex3(0, index>>3, base>>3, 0, 2), 0x4b)
	g.raw(append(code, mem(tmm, base, index, disp)...), fmt.Sprintf("TILESTORED %s, tmm%d", memName(base, index, disp), tmm))
}

func (g *gen) tilezero(tmm int) {
	g.raw(append(vex3(0, 0, 0, 0, 3), 0x49, byte(0xc0|tmm<<3)), fmt.Sprintf("TILEZERO tmm%d", tmm))
}

// tdpbsud: dst += a (signed bytes) · b (unsigned bytes).
func (g *gen) tdpbsud(dst, a, b int) {
	g.raw(append(vex3(0, 0, 0, b, 2), 0x5e, byte(0xc0|dst<<3|a)), fmt.Sprintf("TDPBSUD tmm%d, tmm%d, tmm%d", dst, a, b))
}

// tdpbssd: dst += a (signed bytes) · b (signed bytes).
func (g *gen) tdpbssd(dst, a, b int) {
	g.raw(append(vex3(0, 0, 0, b, 3), 0x5e, byte(0xc0|dst<<3|a)), fmt.Sprintf("TDPBSSD tmm%d, tmm%d, tmm%d", dst, a, b))
}

func (g *gen) ldtilecfg(base int) {
	g.raw(append(vex3(0, 0, base>>3, 0, 0), 0x49, byte(base&7)), fmt.Sprintf("LDTILECFG (%s)", gpr[base]))
}

func (g *gen) tilerelease() {
	g.raw(append(vex3(0, 0, 0, 0, 0), 0x49, 0xc0), "TILERELEASE")
}

// prep writes prepQ4KAMX: SI group g's super-block, DX group g+1's, DI
// the prepared super-block; Z31 the 0x0F mask, K1 the even bytes.
func (g *gen) prep() {
	g.f("// func prepQ4KAMX(nb int, w *byte, gstride int, dst *byte)")
	g.f("TEXT ·prepQ4KAMX(SB), NOSPLIT, $0-32")
	g.f("\tMOVQ nb+0(FP), CX")
	g.f("\tMOVQ w+8(FP), SI")
	g.f("\tMOVQ gstride+16(FP), DX")
	g.f("\tMOVQ dst+24(FP), DI")
	g.f("\tADDQ SI, DX")
	g.f("\tMOVL $0x0F0F0F0F, AX")
	g.f("\tVPBROADCASTD AX, Z31")
	g.f("\tMOVQ $0x5555555555555555, AX")
	g.f("\tKMOVQ AX, K1")
	g.f("prepq4k:")
	// d and dmin: eight float16 per group, widened.
	for i, off := range []int{1152, 1168} {
		g.f("\tVMOVDQU %d(SI), X0", off)
		g.f("\tVINSERTI128 $1, %d(DX), Y0, Y0", off)
		g.f("\tVCVTPH2PS Y0, Z0")
		g.f("\tVMOVUPS Z0, %d(DI)", []int{dOff, dminOff}[i])
	}
	// bytes loads the 16 rows' bytes at off (8 per group) as dwords in zr.
	bytesAt := func(off int, zr int) {
		g.f("\tVMOVQ %d(SI), X%d", off, zr)
		g.f("\tVPINSRQ $1, %d(DX), X%d, X%d", off, zr, zr)
		g.f("\tVPMOVZXBD X%d, Z%d", zr, zr)
	}
	for p := 0; p < 4; p++ {
		bytesAt(1088+16*p, 1)
		bytesAt(1096+16*p, 2)
		g.f("\tVPSLLD $16, Z2, Z2")
		g.f("\tVPORD Z2, Z1, Z1")
		g.f("\tVMOVDQU32 Z1, %d(DI)", minOff+64*p)
	}
	for c := 0; c < 4; c++ {
		// Scales of sub-blocks 2c (low nibbles) and 2c+1 (high) as byte
		// patterns for VPMADDUBSW: per row (sc, 0, sc, 0) picks the even
		// bytes' products, (0, sc, 0, sc) the odd ones'.
		for h, s := range []int{2 * c, 2*c + 1} {
			e, o := 2+2*h, 3+2*h
			bytesAt(1024+8*s, 1)
			g.f("\tVPSLLD $16, Z1, Z%d", e)
			g.f("\tVPORD Z1, Z%d, Z%d", e, e)
			g.f("\tVPSLLD $8, Z%d, Z%d", e, o)
		}
		for q := 0; q < 8; q++ {
			src := 32 * (8*c + q)
			g.f("\tVMOVDQU %d(SI), Y6", src)
			g.f("\tVINSERTI64X4 $1, %d(DX), Z6, Z6", src)
			g.f("\tVPSRLW $4, Z6, Z7")
			g.f("\tVPANDD Z31, Z6, Z6")
			g.f("\tVPANDD Z31, Z7, Z7")
			for h := 0; h < 2; h++ {
				n, e, o := 6+h, 2+2*h, 3+2*h
				g.products(n, e, o, -1, 2048*c+64*(q+8*h))
			}
		}
	}
	g.next(1184, prepBytes, "prepq4k")
}

// products writes one B row pair: the 64 values in Z<v> (16 weight rows ×
// 4) times the scale patterns Z<e> (sc, 0, sc, 0 per row) and Z<o> (0, sc,
// 0, sc), less Z<sub> (32·sc per word; −1: none), as words, split into
// their low bytes (stored at row of DI) and their high bytes (row+1024):
// the even bytes from the even values' words, the odd from the odd ones'.
func (g *gen) products(v, e, o, sub, row int) {
	g.f("\tVPMADDUBSW Z%d, Z%d, Z8", e, v)
	g.f("\tVPMADDUBSW Z%d, Z%d, Z9", o, v)
	if sub >= 0 {
		g.f("\tVPSUBW Z%d, Z8, Z8", sub)
		g.f("\tVPSUBW Z%d, Z9, Z9", sub)
	}
	g.f("\tVPSLLW $8, Z9, Z10")
	g.f("\tVPSRLW $8, Z8, Z11") // a signed word's high byte all the same
	g.f("\tVMOVDQU8 Z8, K1, Z10")
	g.f("\tVMOVDQU8 Z11, K1, Z9")
	g.f("\tVMOVDQU64 Z10, %d(DI)", row)
	g.f("\tVMOVDQU64 Z9, %d(DI)", row+1024)
}

// next ends a prep kernel's loop: the groups' next super-blocks (bb bytes
// on), the next prepared one (pb bytes on).
func (g *gen) next(bb, pb int, label string) {
	g.f("\tADDQ $%d, SI", bb)
	g.f("\tADDQ $%d, DX", bb)
	g.f("\tADDQ $%d, DI", pb)
	g.f("\tDECQ CX")
	g.f("\tJNZ %s", label)
	g.f("\tVZEROUPPER")
	g.f("\tRET")
}

// prepQ6K writes prepQ6KAMX, Q6_K's preparation: each value q − 32
// (q = four bits of ql and two of qh, as the block keeps them) times its
// group of 16's int8 scale, at most 32·128 = 4096 in magnitude, split into
// its low byte (unsigned) and its high byte (signed: TDPBSSD takes them),
// so C_lo + 256·C_hi is the super-block's Σ_s scale_s·Σ_k (q_k − 32)·a_k,
// the integer the VNNI kernel forms as Σ_s scale_s·(Σ q·a − 32·Σa). Chunk
// c of 64 values is half n = c/2 of the super-block and its parts 2(c%2)
// and 2(c%2)+1 (32 values each): part p of half n takes ql's byte l (p
// even) or l+32 (p odd), its low nibble for p < 2 and high for p ≥ 2, and
// bits 2p, 2p+1 of qh's byte l, scale 8n + 2p + l/16. SI group g's
// super-block, DX group g+1's, DI the prepared one; Z31 the 0x0F mask,
// Z30 0x30, Z29 0xFF per dword, Z28 0xFFFF per dword, K1 the even bytes.
func (g *gen) prepQ6K() {
	g.f("// func prepQ6KAMX(nb int, w *byte, gstride int, dst *byte)")
	g.f("TEXT ·prepQ6KAMX(SB), NOSPLIT, $0-32")
	g.f("\tMOVQ nb+0(FP), CX")
	g.f("\tMOVQ w+8(FP), SI")
	g.f("\tMOVQ gstride+16(FP), DX")
	g.f("\tMOVQ dst+24(FP), DI")
	g.f("\tADDQ SI, DX")
	for _, c := range []struct {
		v   string
		reg int
	}{{"0x0F0F0F0F", 31}, {"0x30303030", 30}, {"0x000000FF", 29}, {"0x0000FFFF", 28}} {
		g.f("\tMOVL $%s, AX", c.v)
		g.f("\tVPBROADCASTD AX, Z%d", c.reg)
	}
	g.f("\tMOVQ $0x5555555555555555, AX")
	g.f("\tKMOVQ AX, K1")
	g.f("prepq6k:")
	g.f("\tVMOVDQU 1664(SI), X0")
	g.f("\tVINSERTI128 $1, 1664(DX), Y0, Y0")
	g.f("\tVCVTPH2PS Y0, Z0")
	g.f("\tVMOVUPS Z0, %d(DI)", q6dOff)
	for c := 0; c < 4; c++ {
		n := c / 2
		for h := 0; h < 2; h++ {
			part := 2*(c%2) + h
			for j := 0; j < 2; j++ {
				// The 16 rows' scale of group 8n + 2·part + j as byte
				// patterns for VPMADDUBSW ((sc, 0, sc, 0) and (0, sc, 0,
				// sc) per row) and 32·sc in both words (Z2, Z3, Z4).
				sc := 1536 + 8*(8*n+2*part+j)
				g.f("\tVMOVQ %d(SI), X1", sc)
				g.f("\tVPINSRQ $1, %d(DX), X1, X1", sc)
				g.f("\tVPMOVSXBD X1, Z1")
				g.f("\tVPANDD Z29, Z1, Z2")
				g.f("\tVPSLLD $16, Z2, Z3")
				g.f("\tVPORD Z3, Z2, Z2")
				g.f("\tVPSLLD $8, Z2, Z3")
				g.f("\tVPSLLD $5, Z1, Z1")
				g.f("\tVPANDD Z28, Z1, Z4")
				g.f("\tVPSLLD $16, Z1, Z1")
				g.f("\tVPORD Z1, Z4, Z4")
				for i := 4 * j; i < 4*j+4; i++ {
					ql := 32 * (16*n + 8*(part%2) + i)
					qh := 1024 + 32*(8*n+i)
					g.f("\tVMOVDQU %d(SI), Y6", ql)
					g.f("\tVINSERTI64X4 $1, %d(DX), Z6, Z6", ql)
					if part >= 2 {
						g.f("\tVPSRLW $4, Z6, Z6")
					}
					g.f("\tVPANDD Z31, Z6, Z6")
					g.f("\tVMOVDQU %d(SI), Y7", qh)
					g.f("\tVINSERTI64X4 $1, %d(DX), Z7, Z7", qh)
					switch part {
					case 0:
						g.f("\tVPSLLW $4, Z7, Z7")
					case 1:
						g.f("\tVPSLLW $2, Z7, Z7")
					case 3:
						g.f("\tVPSRLW $2, Z7, Z7")
					}
					g.f("\tVPTERNLOGD $0xF8, Z30, Z7, Z6") // Z6 |= Z7 & Z30
					g.products(6, 2, 3, 4, 2048*c+64*(i+8*h))
				}
			}
		}
	}
	g.next(1680, q6PrepBytes, "prepq6k")
}

// kind is one block type's tile kernel: its name in the function names,
// its prepared super-block's size and where the rows' d are, and whether
// it has minimums (Q4_K: dmin times Σ min·Σa, from the int16 sums) or a
// signed high byte (Q6_K).
type kind struct {
	name      string
	prepBytes int
	dOff      int
	mins      bool
}

var (
	q4k = kind{"Q4K", prepBytes, dOff, true}
	q6k = kind{"Q6K", q6PrepBytes, q6dOff, false}
)

// gemm writes gemm<kind>AMX, one prepared super-block against tiles of
// sixteen tokens: SI the prepared super-block, R14 the 2 KB of C rows, DI
// the tile's first token's values of the super-block (R9 the stride
// between tokens, AX sixteen strides), DX its d (R10), R8 its int16 sums
// of 32 (R11; Q4_K), R13 its outputs (BX), CX the tiles left, R12 = 64
// (the tiles' row stride), R15 the prefetches' address; tmm0 C of the low
// bytes, tmm1 of the high ones, tmm2–3 A in turn, tmm4–7 B in turn. Each
// token's 16 outputs are read, advanced by the super-block and written
// back (the caller zeroes them before the first).
func (g *gen) gemm(k kind) {
	g.f("// func gemm%sAMX(tiles int, prep *byte, qs *int8, ldq int, ds *float32, ldd int, sums *int16, lds int, out *float32, ldo int, ctmp *byte, cfg *byte)", k.name)
	g.f("TEXT ·gemm%sAMX(SB), NOSPLIT, $0-96", k.name)
	g.f("\tMOVQ cfg+88(FP), AX")
	g.ldtilecfg(rAX)
	g.f("\tMOVQ tiles+0(FP), CX")
	g.f("\tMOVQ prep+8(FP), SI")
	g.f("\tMOVQ qs+16(FP), DI")
	g.f("\tMOVQ ldq+24(FP), R9")
	g.f("\tMOVQ ds+32(FP), DX")
	g.f("\tMOVQ ldd+40(FP), R10")
	if k.mins {
		g.f("\tMOVQ sums+48(FP), R8")
		g.f("\tMOVQ lds+56(FP), R11")
	}
	g.f("\tMOVQ out+64(FP), R13")
	g.f("\tMOVQ ldo+72(FP), BX")
	g.f("\tMOVQ ctmp+80(FP), R14")
	g.f("\tMOVQ R9, AX")
	g.f("\tSHLQ $4, AX")
	g.f("\tMOVQ $64, R12")
	if k.mins {
		for p := 0; p < 4; p++ {
			g.f("\tVMOVDQU32 %d(SI), Z%d", minOff+64*p, 4+p)
		}
		g.f("\tVMOVUPS %d(SI), Z9", dminOff)
	}
	g.f("\tVMOVUPS %d(SI), Z8", k.dOff)
	label := "gemm" + strings.ToLower(k.name)
	g.f("%s:", label)
	// The next tile's values of this super-block, from L2 or L3 (a
	// prefill's activations outgrow L1, and the weights streaming past
	// push them out of L2), one tile ahead.
	g.f("\tLEAQ (DI)(AX*1), R15")
	for t := 0; t < 16; t++ {
		for l := 0; l < 4; l++ {
			g.f("\tPREFETCHT0 %d(R15)", 64*l)
		}
		if t < 15 {
			g.f("\tADDQ R9, R15")
		}
	}
	g.tilezero(0)
	g.tilezero(1)
	for c := 0; c < 4; c++ {
		a, blo, bhi := 2+c%2, 4+2*(c%2), 5+2*(c%2)
		g.tileload(a, rDI, r9, 64*c)
		g.tileload(blo, rSI, r12, 2048*c)
		g.tileload(bhi, rSI, r12, 2048*c+1024)
		g.tdpbsud(0, a, blo)
		if k.mins {
			g.tdpbsud(1, a, bhi)
		} else {
			g.tdpbssd(1, a, bhi)
		}
	}
	g.tilestore(0, r14, r12, 0)
	g.tilestore(1, r14, r12, 1024)
	for t := 0; t < 16; t++ {
		acc := 10 + t%6
		g.f("\tVMOVDQU32 %d(R14), Z0", 64*t)
		g.f("\tVMOVDQU32 %d(R14), Z1", 1024+64*t)
		g.f("\tVPSLLD $8, Z1, Z1")
		g.f("\tVPADDD Z1, Z0, Z0")
		g.f("\tVCVTDQ2PS Z0, Z0")
		if k.mins {
			g.f("\tVPXORD Z2, Z2, Z2")
			for p := 0; p < 4; p++ {
				g.f("\tVPDPWSSD.BCST %d(R8), Z%d, Z2", 4*p, 4+p)
			}
			g.f("\tVCVTDQ2PS Z2, Z2")
		}
		g.f("\tVMOVUPS (R13), Z%d", acc)
		g.f("\tVMULPS.BCST (DX), Z8, Z3")
		g.f("\tVFMADD231PS Z3, Z0, Z%d", acc)
		if k.mins {
			g.f("\tVMULPS.BCST (DX), Z9, Z3")
			g.f("\tVFNMADD231PS Z3, Z2, Z%d", acc)
		}
		g.f("\tVMOVUPS Z%d, (R13)", acc)
		g.f("\tADDQ R10, DX")
		if k.mins {
			g.f("\tADDQ R11, R8")
		}
		g.f("\tADDQ BX, R13")
	}
	g.f("\tADDQ AX, DI")
	g.f("\tDECQ CX")
	g.f("\tJNZ %s", label)
	g.tilerelease()
	g.f("\tVZEROUPPER")
	g.f("\tRET")
}

func main() {
	out := flag.String("o", "amxk_amd64.s", "output file")
	flag.Parse()
	var g gen
	g.f("// Code generated by amxk_gen.go; DO NOT EDIT.")
	g.f("")
	g.f("//go:build !purego")
	g.f("")
	g.f("#include \"textflag.h\"")
	g.f("")
	g.prep()
	g.f("")
	g.gemm(q4k)
	g.f("")
	g.prepQ6K()
	g.f("")
	g.gemm(q6k)
	if err := os.WriteFile(*out, g.b.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
}
