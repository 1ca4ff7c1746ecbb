package blas

import (
	"fmt"
	"math"
	"sync"
)

// The bf16 product for the backward's dx = dy·W through frozen weights:
// C = bf16(A)·bf16(B) + beta·C with float32 accumulation, A m×k float32
// rounded to bfloat16 (round to nearest even) as it is read, B k×n packed
// once (PackBF16). On a CPU with AVX512_BF16 each 16 columns of a pair of
// k take one VDPBF16PS, twice the multiply-adds of a float32 FMA per
// instruction; on a CPU with AVX2 and FMA alone one FMA per product gives
// the same sums (kernBF16AVX2, at about the float32 kernels' speed); under
// -tags purego and off x86-64, kernBF16Go computes them in Go (slowly:
// callers choose float32 there, see HasBF16Kernel).
// Where the CPU also has AMX (Intel since Sapphire Rapids) and Linux grants
// the tile data, blocks of 32 rows and 16·j pairs run on the tiles instead
// (kernAMX32x48: on such a CPU about 5× the VDPBF16PS kernel alone and 8×
// in the SmolLM2-shaped training step); their sums are nearer the exact
// product than the chain below and not bitwise the chain's
// (TestGemmBF16AMX).
//
// On the VDPBF16PS kernel each element is one chain over the pairs p of k
// in order, starting from C (beta 1) or zero: s += a[2p+1]·b[2p+1];
// s += a[2p]·b[2p], each product exact (8-bit significands, exponent range
// wider than float32's), each sum rounded to nearest even, denormal inputs
// read as zero and denormal sums flushed to zero: VDPBF16PS as Intel
// documents it and as Zen 4 and an AMX Xeon compute it (FuzzGemmBF16 holds the
// two to the same bits). Against the float32 product the error is bounded
// by the inputs' rounding,
// |Δa| ≤ 2⁻⁸|a| and |Δb| ≤ 2⁻⁸|b| (about 2⁻⁷·Σ|a||b|), plus the float32
// chain's own (k·2⁻²⁴·Σ|a||b|); TestGemmBF16Error checks that bound.

const (
	bf16PackCols  = 48  // columns of a packed panel: the kernel's width
	bf16GroupRows = 8   // rows per kernel call
	bf16RowBlock  = 128 // rows of A rounded at a time and swept over every panel
	// bf16KPairs bounds the pairs of k per kernel call: a block of a panel
	// (512·48 words, 96 KiB) and of 128 rounded rows (256 KiB) stay in L2,
	// and each 8×48 tile of C is loaded and stored once per block. Blocks
	// of 64 pairs (L1-sized) did worse in context (~170 against ~200 GFLOP
	// per CPU-second at SmolLM2's dx shapes): the tile's 24 loads and
	// stores per block, and A re-read from L3 for every panel.
	bf16KPairs = 512
)

// BF16Pack is B (k×n float32) rounded to bf16 and packed in panels of 48
// columns, each panel its pairs of rows in order: word p·48+q of a panel
// holds B[2p, q] in its low half and B[2p+1, q] in its high half. Columns
// past n and the row past an odd k are zero.
type BF16Pack struct {
	K, N int
	kp   int // pairs: ⌈K/2⌉
	data []uint32
}

// PackBF16 rounds B (k×n, row stride ldb) to bf16 and packs it.
func PackBF16(b []float32, ldb, k, n int) *BF16Pack {
	if k <= 0 || n <= 0 || len(b) < (k-1)*ldb+n {
		panic(fmt.Sprintf("blas: PackBF16 k=%d n=%d ldb=%d with len(b)=%d", k, n, ldb, len(b)))
	}
	p := NewBF16Pack(k, n)
	p.PackRows(b, ldb, 0, k)
	return p
}

// NewBF16Pack is the pack of a k×n B of zeros; PackRows fills it.
func NewBF16Pack(k, n int) *BF16Pack {
	if k <= 0 || n <= 0 {
		panic(fmt.Sprintf("blas: NewBF16Pack k=%d n=%d", k, n))
	}
	kp := (k + 1) / 2
	panels := (n + bf16PackCols - 1) / bf16PackCols
	return &BF16Pack{K: k, N: n, kp: kp, data: make([]uint32, panels*kp*bf16PackCols)}
}

// PackRows rounds rows [r0, r1) of B to bf16 into p: b holds them, row r0
// at b[0], row stride ldb. r0 is even and r1 even or K, so a pair of rows
// is packed whole. Packing every row once, at once or in pieces, gives
// PackBF16's pack: a caller that makes B a piece at a time (widening
// quantized weights) needs only a piece of it in float32.
func (p *BF16Pack) PackRows(b []float32, ldb, r0, r1 int) {
	k, n := p.K, p.N
	if r0 < 0 || r0%2 != 0 || r1 <= r0 || r1 > k || (r1%2 != 0 && r1 != k) || len(b) < (r1-r0-1)*ldb+n {
		panic(fmt.Sprintf("blas: PackRows rows [%d, %d) of k=%d n=%d ldb=%d with len(b)=%d", r0, r1, k, n, ldb, len(b)))
	}
	kp := p.kp
	panels := (n + bf16PackCols - 1) / bf16PackCols
	p0, p1 := r0/2, (r1+1)/2
	parallelFor(panels, 1, int64(r1-r0)*int64(n)*64, func(j0, j1 int) {
		for jp := j0; jp < j1; jp++ {
			dst := p.data[jp*kp*bf16PackCols : (jp+1)*kp*bf16PackCols]
			c0 := jp * bf16PackCols
			w := min(bf16PackCols, n-c0)
			for pr := p0; pr < p1; pr++ {
				lo := b[(2*pr-r0)*ldb+c0:]
				var hi []float32
				if 2*pr+1 < r1 {
					hi = b[(2*pr+1-r0)*ldb+c0:]
				}
				row := dst[pr*bf16PackCols : pr*bf16PackCols+w]
				q := 0
				if n16 := w &^ 15; useBF16 && hi != nil && n16 > 0 {
					packBF16x16(n16, &lo[0], &hi[0], &row[0])
					q = n16
				}
				for ; q < w; q++ {
					v := uint32(RoundBF16(lo[q]))
					if hi != nil {
						v |= uint32(RoundBF16(hi[q])) << 16
					}
					row[q] = v
				}
			}
		}
	})
}

// Bytes is the packed size.
func (p *BF16Pack) Bytes() int64 { return int64(len(p.data)) * 4 }

// RoundBF16 rounds x to bfloat16 as VCVTNEPS2BF16 does: to nearest even,
// a denormal to zero of its sign, a NaN to a quiet NaN.
func RoundBF16(x float32) uint16 {
	b := math.Float32bits(x)
	switch {
	case b&0x7f800000 == 0:
		return uint16(b>>16) & 0x8000
	case b&0x7fffffff > 0x7f800000:
		return uint16(b>>16) | 0x40
	}
	return uint16((b + 0x7fff + (b>>16)&1) >> 16)
}

// WidenBF16One is the float32 value of bf16 bits.
func WidenBF16One(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// roundRowBF16 rounds src into dst (len(dst) ≥ len(src)).
func roundRowBF16(dst []uint16, src []float32) {
	i := 0
	if useBF16 && len(src) >= 16 {
		i = len(src) &^ 15
		roundBF16x16(i, &src[0], &dst[0])
	}
	for ; i < len(src); i++ {
		dst[i] = RoundBF16(src[i])
	}
}

var bf16Pool = sync.Pool{New: func() any { return new([]uint16) }}

// bf16Wide holds the AVX2 kernel's operands widened to float32: a block
// of A's rounded rows (a's layout) and a panel's block of pairs (each pair
// two rows of 48, the high halves first).
type bf16Wide struct{ a, b []float32 }

var bf16WidePool = sync.Pool{New: func() any { return new(bf16Wide) }}

// GemmBF16 computes C = bf16(A)·P + beta·C for beta 0 or 1: A m×k float32
// (row stride lda), P a packed k×n, C m×n (row stride ldc).
func GemmBF16(m int, a []float32, lda int, p *BF16Pack, beta float32, c []float32, ldc int) {
	GemmBF16Range(m, a, lda, p, 0, p.K, beta, c, ldc)
}

// GemmBF16Range is GemmBF16 over rows [k0, k1) of P (k0 even, k1 even or
// P's K): C = bf16(A)·P[k0:k1] + beta·C with A m×(k1−k0).
func GemmBF16Range(m int, a []float32, lda int, p *BF16Pack, k0, k1 int, beta float32, c []float32, ldc int) {
	k, n := k1-k0, p.N
	if m < 0 || k0 < 0 || k0%2 != 0 || k1 <= k0 || k1 > p.K || (k1%2 != 0 && k1 != p.K) || (m > 0 && (len(a) < (m-1)*lda+k || len(c) < (m-1)*ldc+n)) || (beta != 0 && beta != 1) {
		panic(fmt.Sprintf("blas: GemmBF16 m=%d n=%d k=[%d,%d) of %d lda=%d ldc=%d beta=%v with len(a)=%d len(c)=%d", m, n, k0, k1, p.K, lda, ldc, beta, len(a), len(c)))
	}
	if m == 0 {
		return
	}
	parallelFor(m, bf16GroupRows, 2*int64(m)*int64(n)*int64(k), func(i0, i1 int) {
		gemmBF16Rows(i0, i1, a, lda, p, k0/2, (k1+1)/2, beta == 1, c, ldc)
	})
}

// gemmBF16Rows computes rows [i0, i1) of C over pairs [p0, p1) of P. Per
// block of 128 rows and of up to 512 pairs (the pairs split evenly), the
// block of A is rounded to bf16 (rows padded to a multiple of the group
// with zeros) and swept over every panel, one kernel call per group of 8
// rows (32 on AMX); a partial group or panel goes through a 32×48 tile.
// Without VDPBF16PS the AVX2 kernel reads the block of A and each panel's
// block widened to float32 (bf16Wide), each once per block of rows. On
// the VDPBF16PS kernel each element's chain runs over the pairs in order
// whatever the blocking: a block continues from the C the one before it
// stored.
func gemmBF16Rows(i0, i1 int, a []float32, lda int, p *BF16Pack, p0, p1 int, cacc bool, c []float32, ldc int) {
	n, kp := p.N, p.kp
	kend := min(2*p1, p.K) // A's columns end at kend − 2·p0
	nb := (p1 - p0 + bf16KPairs - 1) / bf16KPairs
	blk := (p1 - p0 + nb - 1) / nb
	buf := bf16Pool.Get().(*[]uint16)
	defer bf16Pool.Put(buf)
	if sz := bf16RowBlock * 2 * blk; cap(*buf) < sz {
		*buf = make([]uint16, sz)
	}
	// Without VDPBF16PS the AVX2 kernel runs on operands widened to
	// float32: A's block once, each panel's block once per block of rows.
	var wide *bf16Wide
	if !useBF16 && useBF16AVX2 {
		wide = bf16WidePool.Get().(*bf16Wide)
		defer bf16WidePool.Put(wide)
		if sz := bf16RowBlock * 2 * blk; cap(wide.a) < sz {
			wide.a = make([]float32, sz)
		}
		if sz := 2 * blk * bf16PackCols; cap(wide.b) < sz {
			wide.b = make([]float32, sz)
		}
	}
	var tile [amxRows * bf16PackCols]float32
	panels := (n + bf16PackCols - 1) / bf16PackCols
	for ib := i0; ib < i1; ib += bf16RowBlock {
		h := min(bf16RowBlock, i1-ib)
		for pb := p0; pb < p1; pb += blk {
			pc := min(blk, p1-pb)
			ka := 2 * pc
			acc := cacc || pb > p0
			// Groups of 32 rows on the AMX tiles when the block has 16
			// pairs or more, else of 8 on the 8×48 kernel.
			group := bf16GroupRows
			if useAMX && pc >= amxPairs {
				group = amxRows
			}
			rows := (h + group - 1) / group * group
			// A[ib:ib+h, 2pb−2p0 : …+k] rounded, rows ka apart.
			c0, c1 := 2*(pb-p0), min(2*(pb+pc), kend)-2*p0
			ab := (*buf)[:rows*ka]
			for r := range h {
				d := ab[r*ka : (r+1)*ka]
				row := (ib + r) * lda
				roundRowBF16(d, a[row+c0:row+c1])
				clear(d[c1-c0:])
			}
			clear(ab[h*ka:])
			var af, bw []float32
			if wide != nil {
				af, bw = wide.a[:rows*ka], wide.b[:2*pc*bf16PackCols]
				for i, x := range ab {
					af[i] = WidenBF16One(x)
				}
			}
			for jp := range panels {
				j := jp * bf16PackCols
				w := min(bf16PackCols, n-j)
				bp := p.data[(jp*kp+pb)*bf16PackCols : (jp*kp+pb+pc)*bf16PackCols]
				if wide != nil {
					widenPanelBF16AVX2(&bw[0], &bp[0], pc)
				}
				for g := 0; g < rows; g += group {
					gh := min(group, h-g)
					full := gh == group && w == bf16PackCols
					dst, ldd := c[(ib+g)*ldc+j:], ldc
					if !full {
						clear(tile[:])
						if acc {
							for r := range gh {
								copy(tile[r*bf16PackCols:r*bf16PackCols+w], c[(ib+g+r)*ldc+j:])
							}
						}
						dst, ldd = tile[:], bf16PackCols
					}
					if wide != nil {
						kernBF16AVX2(pc, ab[g*ka:], af[g*ka:], ka, bp, bw, dst, ldd, acc)
					} else {
						kernBF16Group(group, pc, ab[g*ka:], ka, bp, dst, ldd, acc)
					}
					if !full {
						for r := range gh {
							copy(c[(ib+g+r)*ldc+j:(ib+g+r)*ldc+j+w], tile[r*bf16PackCols:])
						}
					}
				}
			}
		}
	}
}

// The AMX kernel's rows (two tiles of 16) and pairs of k a step.
const (
	amxRows  = 32
	amxPairs = 16
)

// AMXTileConfig is the tile configuration the AMX kernels load (LDTILECFG):
// palette 1; tmm0–7 16 rows of 64 bytes. kernAMX32x48's C: 16 float32, A:
// 16 pairs of bf16, B: 16 words of a panel's pairs; quant's int8 kernels'
// C: 16 int32, A: 64 int8, B: 16 rows' four bytes. Not to be written.
var AMXTileConfig = func() (c [64]byte) {
	c[0] = 1
	for t := range 8 {
		c[16+2*t] = 64
		c[48+t] = 16
	}
	return c
}()

// kernBF16Group computes a group of 8 rows (the 8×48 kernel) or 32 (AMX:
// the block's pairs in steps of 16, the last pc mod 16 pairs continued on
// the 8×48 kernel) of C over pc pairs of a panel.
func kernBF16Group(group, pc int, a []uint16, lda int, bp []uint32, c []float32, ldc int, acc bool) {
	if group == bf16GroupRows {
		kernBF16(pc, a, lda, bp, c, ldc, acc)
		return
	}
	ks := pc / amxPairs
	_ = a[(amxRows-1)*lda+2*pc-1]
	_ = bp[pc*bf16PackCols-1]
	_ = c[(amxRows-1)*ldc+bf16PackCols-1]
	ac := 0
	if acc {
		ac = 1
	}
	kernAMX32x48(ks, &a[0], lda, &bp[0], &c[0], ldc, ac, &AMXTileConfig[0])
	if t := pc - ks*amxPairs; t > 0 {
		for r := 0; r < amxRows; r += bf16GroupRows {
			kernBF16(t, a[r*lda+2*ks*amxPairs:], lda, bp[ks*amxPairs*bf16PackCols:], c[r*ldc:], ldc, true)
		}
	}
}

// kernBF16 runs the 8×48 kernel: VDPBF16PS where the CPU has
// AVX512_BF16, kernBF16Go elsewhere (the same sums; gemmBF16Rows calls
// kernBF16AVX2 itself).
func kernBF16(kp int, a []uint16, lda int, bp []uint32, c []float32, ldc int, acc bool) {
	_ = a[(bf16GroupRows-1)*lda+2*kp-1]
	_ = bp[kp*bf16PackCols-1]
	_ = c[(bf16GroupRows-1)*ldc+bf16PackCols-1]
	if useBF16 {
		ac := 0
		if acc {
			ac = 1
		}
		kernBF16x8x48(kp, &a[0], lda, &bp[0], &c[0], ldc, ac)
		return
	}
	kernBF16Go(kp, a, lda, bp, c, ldc, acc)
}

// kernBF16AVX2 runs the AVX2 kernel: one FMA per product gives
// VDPBF16PS's sum (the product of two bf16 is exact in float32, the sum
// rounded once) except where an operand or a sum is denormal, which
// VDPBF16PS flushes to zero and the FMA does not. The kernel reports those
// (MXCSR's denormal and underflow flags), and the tile is computed again
// by kernBF16Go from the C it started with, as is one whose result is
// denormal (the last sum raises no flag when it is exact). af is a
// widened to float32, bw the panel bp widened (widenPanelBF16AVX2).
func kernBF16AVX2(kp int, a []uint16, af []float32, lda int, bp []uint32, bw []float32, c []float32, ldc int, acc bool) {
	_ = a[(bf16GroupRows-1)*lda+2*kp-1]
	_ = af[(bf16GroupRows-1)*lda+2*kp-1]
	_ = bp[kp*bf16PackCols-1]
	_ = bw[2*kp*bf16PackCols-1]
	_ = c[(bf16GroupRows-1)*ldc+bf16PackCols-1]
	var c0 [bf16GroupRows * bf16PackCols]float32
	if acc {
		for r := range bf16GroupRows {
			copy(c0[r*bf16PackCols:(r+1)*bf16PackCols], c[r*ldc:])
		}
	}
	ac := 0
	if acc {
		ac = 1
	}
	flags := kernBF16x8x48AVX2(kp, &af[0], lda, &bw[0], &c[0], ldc, ac)
	if flags == 0 && !denormalTile(c, ldc) {
		return
	}
	if acc {
		for r := range bf16GroupRows {
			copy(c[r*ldc:r*ldc+bf16PackCols], c0[r*bf16PackCols:])
		}
	}
	kernBF16Go(kp, a, lda, bp, c, ldc, acc)
}

// denormalTile reports whether the 8×48 tile of c holds a denormal.
func denormalTile(c []float32, ldc int) bool {
	for r := range bf16GroupRows {
		for _, x := range c[r*ldc : r*ldc+bf16PackCols] {
			if b := math.Float32bits(x); b&0x7f800000 == 0 && b&0x7fffff != 0 {
				return true
			}
		}
	}
	return false
}

// kernBF16Go is VDPBF16PS's arithmetic in Go, element by element: the
// fallback and the reference the tests hold the assembly to.
func kernBF16Go(kp int, a []uint16, lda int, bp []uint32, c []float32, ldc int, acc bool) {
	for r := range bf16GroupRows {
		ar := a[r*lda : r*lda+2*kp]
		cr := c[r*ldc : r*ldc+bf16PackCols]
		for q := range cr {
			s := float32(0)
			if acc {
				s = cr[q]
			}
			for pr := range kp {
				bw := bp[pr*bf16PackCols+q]
				s = dpStep(s, ar[2*pr+1], uint16(bw>>16))
				s = dpStep(s, ar[2*pr], uint16(bw))
			}
			cr[q] = s
		}
	}
}

// dpStep is one of VDPBF16PS's two sums: s + a·b rounded once to float32,
// the product exact beyond float32's range (in float64: two 8-bit
// significands, exponents within ±254), a denormal s read as zero and a
// denormal sum flushed to zero.
// Rounding s + a·b to float64 first changes no float32 result: the sum is
// exact there unless a·b is far below half an ulp of s, where both
// roundings give s. (With the product rounded to float32 first, two
// overflowing products of opposite sign gave NaN where the instruction
// gives ±Inf.)
func dpStep(s float32, a, b uint16) float32 {
	return ftz(float32(float64(ftz(s)) + float64(WidenBF16One(a))*float64(WidenBF16One(b))))
}

// ftz flushes a denormal to zero of its sign.
func ftz(x float32) float32 {
	if b := math.Float32bits(x); b&0x7f800000 == 0 {
		return math.Float32frombits(b & 0x80000000)
	}
	return x
}

// SgemmKernel names what Sgemm runs on: Backend ("go" or "openblas") and,
// for "go", the instruction set of its micro-kernels ("avx512", "avx2" or
// none). The AVX-512 kernels give the AVX2 kernels' bits; the pure-Go ones
// and OpenBLAS need not, and BF16Kernel's choice changes them, so a run
// names all of them to say what it ran on.
func SgemmKernel() string {
	switch {
	case Backend != "go":
		return Backend
	case use512:
		return "go/avx512"
	case useAVX2:
		return "go/avx2"
	}
	return "go"
}

// BF16Kernel names what GemmBF16 runs on: "amx" (AMX tiles, with
// VDPBF16PS for short pieces of k), "vdpbf16ps", "avx2" (kernBF16AVX2:
// VDPBF16PS's bits) or "go" (kernBF16Go).
func BF16Kernel() string {
	switch {
	case useBF16 && useAMX:
		return "amx"
	case useBF16:
		return "vdpbf16ps"
	case useBF16AVX2:
		return "avx2"
	}
	return "go"
}

// HasBF16Kernel reports whether GemmBF16 runs on an assembly kernel
// (VDPBF16PS, AMX tiles, or AVX2 + FMA) at about Sgemm's speed; on
// kernBF16Go alone it is far slower than Sgemm.
func HasBF16Kernel() bool { return useBF16 || useBF16AVX2 }
