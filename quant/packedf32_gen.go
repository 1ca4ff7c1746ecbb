//go:build ignore

// packedf32_gen.go writes packedf32_amd64.s, the float32-activation packed
// kernels (f32act.go): go generate ./quant (or go run packedf32_gen.go in
// this folder).
//
// Every kernel sums a row's products in one order, the canonical one, so a
// token's outputs are the same bits at every batch and on every kernel of
// this file (each row of a packed group, per block of 32 weights):
//
//	pA = Σ q·x over the block's byte positions 0 and 2, pB over 1 and 3,
//	     each an FMA chain in the order the kernels widen the values (Q4_1:
//	     for each vector k of four bytes per row, the low nibbles' positions
//	     0…3, then the high nibbles'; Q8_0: for each vector k, positions
//	     0…3), starting from +0;
//	row = fma(d, pA+pB, row), then for Q4_1 row = fma(m, Σx, row);
//
// blocks in order, row starting from +0. quant's f32act_test.go holds the
// same order in Go (f32RefRow). Two partial sums per token leave registers
// for four tokens per widened block with AVX2 and eight with AVX-512,
// which is what makes the batched kernels fast; the one- and two-token
// kernels take blocks in pairs (four or eight independent chains) so the
// FMAs' latency stays hidden.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"log"
	"os"
	"strings"
)

// typ is a block type with float32-activation kernels: its packed block
// bytes, the number of 32-byte vectors of values per packed block, the
// offsets of the rows' float16 d (and m) in it and the 64-byte lines a
// block spans (prefetched PFDIST ahead).
type typ struct {
	name    string
	bytes   int
	vecs    int
	dOff    int
	mOff    int // 0: no minimum
	pfLines int
}

var (
	q41 = typ{name: "Q4_1", bytes: 160, vecs: 4, dOff: 128, mOff: 144, pfLines: 3}
	q80 = typ{name: "Q8_0", bytes: 272, vecs: 8, dOff: 256, pfLines: 5}
)

// isa: AVX2 (Y registers, one packed group of eight rows) or AVX-512 (Z
// registers, two groups: g in the low 256 bits, g+1, gstride bytes on, in
// the high 256).
type isa struct {
	z    bool
	regs int
}

var (
	avx2   = isa{z: false, regs: 16}
	avx512 = isa{z: true, regs: 32}
)

func (a isa) v(n int) string {
	if a.z {
		return fmt.Sprintf("Z%d", n)
	}
	return fmt.Sprintf("Y%d", n)
}

type gen struct {
	b bytes.Buffer
}

func (g *gen) f(format string, args ...any) { fmt.Fprintf(&g.b, format+"\n", args...) }

// kernel writes one kernel: T tokens, B blocks per loop iteration.
type kernel struct {
	a    isa
	t    typ
	T, B int
	name string

	load, low, val, bc int        // work registers (bc: AVX2's broadcast; -1 with AVX-512)
	part               [][][2]int // [block][token] → pA, pB
	row                []int      // [token]
	mask               string     // Q4_1's nibble mask, Q8_0's sign flip: a register or memory
	shuf               [3]string  // byte positions 0–2: a register or memory
	maskTbl, shufTbl   string     // their tables (shufTbl a format of the position)
}

func newKernel(a isa, t typ, T, B int) *kernel {
	k := &kernel{a: a, t: t, T: T, B: B, bc: -1}
	rows := 8
	if a.z {
		rows = 16
	}
	k.name = fmt.Sprintf("gemv%sx%dF32", t.name, rows)
	if T > 1 {
		k.name += fmt.Sprintf("x%d", T)
	}
	n := 0
	next := func() int { n++; return n - 1 }
	k.load, k.low, k.val = next(), next(), next()
	if !a.z {
		k.bc = next()
	}
	k.part = make([][][2]int, B)
	for b := range B {
		k.part[b] = make([][2]int, T)
		for t := range T {
			k.part[b][t] = [2]int{next(), next()}
		}
	}
	k.row = make([]int, T)
	for t := range T {
		k.row[t] = next()
	}
	if n > a.regs {
		log.Fatalf("%s: %d registers", k.name, n)
	}
	k.maskTbl, k.shufTbl = "nibbles<>(SB)", "shufLow%d<>(SB)"
	if t.mOff == 0 {
		k.maskTbl, k.shufTbl = "signs<>(SB)", "shufTop%d<>(SB)"
	}
	k.mask = k.maskTbl
	if n < a.regs {
		k.mask = a.v(next())
	}
	for i := range k.shuf {
		k.shuf[i] = fmt.Sprintf(k.shufTbl, i)
		if n < a.regs {
			k.shuf[i] = a.v(next())
		}
	}
	return k
}

// x is token t's activation at byte offset off of the current block.
func (k *kernel) x(t, off int) string {
	base := "DI"
	if t >= 4 {
		base = "R14"
	}
	return fmt.Sprintf("%d(%s)%s", off, base, []string{"", "(R9*1)", "(R9*2)", "(R12*1)"}[t%4])
}

// sx is token t's Σx at byte offset off.
func (k *kernel) sx(t, off int) string {
	base := "DX"
	if t >= 4 {
		base = "R11"
	}
	return fmt.Sprintf("%d(%s)%s", off, base, []string{"", "(R10*1)", "(R10*2)", "(R13*1)"}[t%4])
}

// fma adds float(val)·x to acc, x a float32 in memory.
func (k *kernel) fma(g *gen, x string, acc int) {
	a := k.a
	if a.z {
		g.f("\tVFMADD231PS.BCST %s, %s, %s", x, a.v(k.val), a.v(acc))
		return
	}
	g.f("\tVBROADCASTSS %s, %s", x, a.v(k.bc))
	g.f("\tVFMADD231PS %s, %s, %s", a.v(k.bc), a.v(k.val), a.v(acc))
}

// loadVec loads the 32 bytes at off of the current block (both groups'
// with AVX-512) into reg.
func (k *kernel) loadVec(g *gen, off, reg int) {
	a := k.a
	if a.z {
		g.f("\tVMOVDQU %d(SI), Y%d", off, reg)
		g.f("\tVINSERTI64X4 $1, %d(R8), Z%d, Z%d", off, reg, reg)
		return
	}
	g.f("\tVMOVDQU %d(SI), Y%d", off, reg)
}

// halves widens the rows' float16s at off of the current block into reg.
func (k *kernel) halves(g *gen, off, reg int) {
	if k.a.z {
		g.f("\tVMOVDQU %d(SI), X%d", off, reg)
		g.f("\tVINSERTI128 $1, %d(R8), Y%d, Y%d", off, reg, reg)
		g.f("\tVCVTPH2PS Y%d, Z%d", reg, reg)
		return
	}
	g.f("\tVCVTPH2PS %d(SI), Y%d", off, reg)
}

func (k *kernel) and() string {
	if k.a.z {
		return "VPANDD"
	}
	return "VPAND"
}

// position widens byte position i of src (one int32 lane per row) into
// val as float32s and adds its products to the tokens' partial sums of
// block b; xoff is the value's byte offset in a token's block.
func (k *kernel) position(g *gen, b, i int, src int, signed bool, xoff int) {
	a := k.a
	switch {
	case i == 3 && signed:
		g.f("\tVPSRAD $24, %s, %s", a.v(src), a.v(k.val))
	case i == 3:
		g.f("\tVPSRLD $24, %s, %s", a.v(src), a.v(k.val))
	default:
		g.f("\tVPSHUFB %s, %s, %s", k.shuf[i], a.v(src), a.v(k.val))
		if signed {
			g.f("\tVPSRAD $24, %s, %s", a.v(k.val), a.v(k.val))
		}
	}
	g.f("\tVCVTDQ2PS %s, %s", a.v(k.val), a.v(k.val))
	for t := range k.T {
		k.fma(g, k.x(t, b*128+xoff), k.part[b][t][i%2])
	}
}

// vector widens vector v of block b and adds its products.
func (k *kernel) vector(g *gen, b, v int) {
	a := k.a
	off := b*k.t.bytes + 32*v
	k.loadVec(g, off, k.load)
	if k.t.mOff == 0 {
		// Q8_0: stored w XOR 0x80.
		if k.a.z {
			g.f("\tVPXORD %s, %s, %s", k.mask, a.v(k.load), a.v(k.load))
		} else {
			g.f("\tVPXOR %s, %s, %s", k.mask, a.v(k.load), a.v(k.load))
		}
		for i := range 4 {
			k.position(g, b, i, k.load, true, 16*v+4*i)
		}
		return
	}
	// Q4_1: low nibbles are values 4v+i, high ones 16+4v+i.
	g.f("\t%s %s, %s, %s", k.and(), k.mask, a.v(k.load), a.v(k.low))
	g.f("\tVPSRLW $4, %s, %s", a.v(k.load), a.v(k.load))
	g.f("\t%s %s, %s, %s", k.and(), k.mask, a.v(k.load), a.v(k.load))
	for i := range 4 {
		k.position(g, b, i, k.low, false, 16*v+4*i)
	}
	for i := range 4 {
		k.position(g, b, i, k.load, false, 64+16*v+4*i)
	}
}

// blocks writes nb blocks' work (nb ≤ k.B) at the current pointers and
// advances them.
func (k *kernel) blocks(g *gen, nb int) {
	a := k.a
	for b := range nb {
		for l := range k.t.pfLines {
			g.f("\tPREFETCHT0 (PFDIST+%d)(SI)", b*k.t.bytes+64*l)
			if a.z {
				g.f("\tPREFETCHT0 (PFDIST+%d)(R8)", b*k.t.bytes+64*l)
			}
		}
	}
	for b := range nb {
		for t := range k.T {
			for _, p := range k.part[b][t] {
				k.zero(g, p)
			}
		}
	}
	for v := range k.t.vecs {
		for b := range nb {
			k.vector(g, b, v)
		}
	}
	for b := range nb {
		for t := range k.T {
			p := k.part[b][t]
			g.f("\tVADDPS %s, %s, %s", a.v(p[1]), a.v(p[0]), a.v(p[0]))
		}
	}
	for b := range nb {
		k.halves(g, b*k.t.bytes+k.t.dOff, k.load)
		for t := range k.T {
			g.f("\tVFMADD231PS %s, %s, %s", a.v(k.load), a.v(k.part[b][t][0]), a.v(k.row[t]))
		}
		if k.t.mOff != 0 {
			k.halves(g, b*k.t.bytes+k.t.mOff, k.low)
			for t := range k.T {
				if a.z {
					g.f("\tVFMADD231PS.BCST %s, %s, %s", k.sx(t, 4*b), a.v(k.low), a.v(k.row[t]))
				} else {
					g.f("\tVBROADCASTSS %s, %s", k.sx(t, 4*b), a.v(k.bc))
					g.f("\tVFMADD231PS %s, %s, %s", a.v(k.bc), a.v(k.low), a.v(k.row[t]))
				}
			}
		}
	}
	g.f("\tADDQ $%d, SI", nb*k.t.bytes)
	if a.z {
		g.f("\tADDQ $%d, R8", nb*k.t.bytes)
	}
	g.f("\tADDQ $%d, DI", nb*128)
	if k.T > 4 {
		g.f("\tADDQ $%d, R14", nb*128)
	}
	if k.t.mOff != 0 {
		g.f("\tADDQ $%d, DX", nb*4)
		if k.T > 4 {
			g.f("\tADDQ $%d, R11", nb*4)
		}
	}
}

func (k *kernel) write(g *gen) {
	a := k.a
	// Arguments.
	var args []string
	args = append(args, "nb int", "w *byte")
	if a.z {
		args = append(args, "gstride int")
	}
	if k.T == 1 {
		args = append(args, "x *float32", "sx *float32", "out *float32")
	} else {
		args = append(args, "x *float32", "ldx int", "sx *float32", "ldsx int", "out *float32", "ldo int")
	}
	off := map[string]int{}
	for i, s := range args {
		off[strings.Fields(s)[0]] = 8 * i
	}
	g.f("// func %s(%s)", k.name, strings.Join(args, ", "))
	g.f("TEXT ·%s(SB), NOSPLIT, $0-%d", k.name, 8*len(args))
	g.f("\tMOVQ nb+%d(FP), CX", off["nb"])
	g.f("\tMOVQ w+%d(FP), SI", off["w"])
	if a.z {
		g.f("\tMOVQ gstride+%d(FP), R8", off["gstride"])
		g.f("\tADDQ SI, R8")
	}
	g.f("\tMOVQ x+%d(FP), DI", off["x"])
	g.f("\tMOVQ sx+%d(FP), DX", off["sx"])
	if k.T > 1 {
		g.f("\tMOVQ ldx+%d(FP), R9", off["ldx"])
		g.f("\tMOVQ ldsx+%d(FP), R10", off["ldsx"])
		g.f("\tLEAQ (R9)(R9*2), R12")
		g.f("\tLEAQ (R10)(R10*2), R13")
	}
	if k.T > 4 {
		g.f("\tLEAQ (DI)(R9*4), R14")
		g.f("\tLEAQ (DX)(R10*4), R11")
	}
	mov := "VMOVDQU"
	if a.z {
		mov = "VMOVDQU64"
	}
	if !strings.HasSuffix(k.mask, "(SB)") {
		g.f("\t%s %s, %s", mov, k.maskTbl, k.mask)
	}
	for i, s := range k.shuf {
		if !strings.HasSuffix(s, "(SB)") {
			g.f("\t%s %s, %s", mov, fmt.Sprintf(k.shufTbl, i), s)
		}
	}
	for _, r := range k.row {
		k.zero(g, r)
	}
	label := strings.ToLower(strings.TrimPrefix(k.name, "gemv"))
	if k.B == 1 {
		g.f("%sloop:", label)
		k.blocks(g, 1)
		g.f("\tDECQ CX")
		g.f("\tJNZ %sloop", label)
	} else {
		g.f("\tCMPQ CX, $%d", k.B)
		g.f("\tJLT %stail", label)
		g.f("%sloop:", label)
		k.blocks(g, k.B)
		g.f("\tSUBQ $%d, CX", k.B)
		g.f("\tCMPQ CX, $%d", k.B)
		g.f("\tJGE %sloop", label)
		g.f("%stail:", label)
		g.f("\tTESTQ CX, CX")
		g.f("\tJZ %sdone", label)
		k.blocks(g, 1)
		g.f("\tDECQ CX")
		g.f("\tJMP %stail", label)
		g.f("%sdone:", label)
	}
	g.f("\tMOVQ out+%d(FP), BX", off["out"])
	if k.T == 1 {
		g.f("\tVMOVUPS %s, (BX)", a.v(k.row[0]))
	} else {
		g.f("\tMOVQ ldo+%d(FP), AX", off["ldo"])
		g.f("\tLEAQ (AX)(AX*2), R11")
		for t, r := range k.row {
			if t == 4 {
				g.f("\tLEAQ (BX)(AX*4), BX")
			}
			g.f("\tVMOVUPS %s, (BX)%s", a.v(r), []string{"", "(AX*1)", "(AX*2)", "(R11*1)"}[t%4])
		}
	}
	g.f("\tVZEROUPPER")
	g.f("\tRET")
	g.f("")
}

// table writes a 64-byte table of the dword pattern p repeated.
func table(g *gen, name string, p uint32) {
	for i := 0; i < 16; i++ {
		g.f("DATA %s<>+%d(SB)/4, $0x%08x", name, 4*i, p)
	}
	g.f("GLOBL %s<>(SB), RODATA|NOPTR, $64", name)
}

// table4 writes a 64-byte table of four dwords repeated.
func table4(g *gen, name string, p [4]uint32) {
	for i := 0; i < 16; i++ {
		g.f("DATA %s<>+%d(SB)/4, $0x%08x", name, 4*i, p[i%4])
	}
	g.f("GLOBL %s<>(SB), RODATA|NOPTR, $64", name)
}

func main() {
	out := flag.String("o", "packedf32_amd64.s", "the file to write")
	flag.Parse()
	g := &gen{}
	g.f("// Code generated by packedf32_gen.go; DO NOT EDIT.")
	g.f("")
	g.f("//go:build !purego")
	g.f("")
	g.f(`#include "textflag.h"`)
	g.f("")
	g.f("// Packed kernels with float32 activations (f32act.go; the order of sums")
	g.f("// they share is in packedf32_gen.go). The weights' integers are widened")
	g.f("// to float32 in registers (VPSHUFB moves byte i of each row's dword to a")
	g.f("// lane of its own, VCVTDQ2PS makes it a float) and multiplied by the")
	g.f("// broadcast activation with FMAs; each int32/float lane is one row of a")
	g.f("// packed group (packed.go's Q4_1 and Q8_0 layouts).")
	g.f("//")
	g.f("// Registers: SI the packed weights (R8 the second group's with AVX-512),")
	g.f("// DI token 0's activations, R9 the stride between tokens (R12 = 3·R9,")
	g.f("// R14 token 4's), DX Σx per block (Q4_1; R10, R13, R11 as R9, R12, R14),")
	g.f("// CX blocks left.")
	g.f("")
	g.f("// PFDIST: see packed_amd64.s.")
	g.f("#define PFDIST 4096")
	g.f("")
	g.f("// shufLow<i>: byte i of each dword to its low byte, zeros above (unsigned")
	g.f("// values). shufTop<i>: byte i to its top byte, zeros below (VPSRAD $24")
	g.f("// then sign-extends it). nibbles: the low nibbles' mask; signs: Q8_0's")
	g.f("// stored bias.")
	for i := range 3 {
		var p [4]uint32
		for j := range 4 {
			p[j] = 0x80808000 | uint32(4*j+i)
		}
		table4(g, fmt.Sprintf("shufLow%d", i), p)
		for j := range 4 {
			p[j] = 0x00808080 | uint32(4*j+i)<<24
		}
		table4(g, fmt.Sprintf("shufTop%d", i), p)
	}
	table(g, "nibbles", 0x0f0f0f0f)
	table(g, "signs", 0x80808080)
	g.f("")
	for _, a := range []isa{avx2, avx512} {
		for _, t := range []typ{q41, q80} {
			tokens := []int{1, 2, 4}
			if a.z {
				tokens = append(tokens, 8)
			}
			for _, T := range tokens {
				B := 1
				if T <= 2 {
					B = 2
				}
				newKernel(a, t, T, B).write(g)
			}
		}
	}
	if err := os.WriteFile(*out, g.b.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
}

// zero sets register r to +0.
func (k *kernel) zero(g *gen, r int) {
	if k.a.z {
		g.f("\tVPXORD Z%d, Z%d, Z%d", r, r, r)
		return
	}
	g.f("\tVXORPS Y%d, Y%d, Y%d", r, r, r)
}
