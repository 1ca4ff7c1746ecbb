package blas

import "sync"

// avx2BlockBytes is the size of the block of A and of the block of B that
// stay hot in L2 (1 MiB or more on current x86 cores) while tiles are
// computed from them.
const avx2BlockBytes = 256 << 10

// gemmNTRangeAVX2 is gemmNTRange on the assembly kernels: 4×3 tiles of C for
// groups of four rows of A, walked block by block so both operands come from
// L2, and 1×4 strips for the rows left over (all of them when decoding one
// sequence). The kernels cover k rounded down to a multiple of 8; the last
// few products are added here.
//
// Every element of C is summed in one order whichever kernel computes it
// (8 FMA lanes over k8, the same lane reduction, then the tail in order), so
// a row's result is bitwise independent of the other rows in the call and of
// how columns are split across goroutines: decoding a sequence alone or in a
// batch, or prefilling it, gives the same numbers.
func gemmNTRangeAVX2(m, j0, j1, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	k8 := k &^ 7
	if k8 == 0 {
		gemmNTRange(m, j0, j1, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	g := avx2Gemm{k: k, k8: k8, alpha: alpha, a: a, lda: lda, b: b, ldb: ldb, beta: beta, c: c, ldc: ldc}
	m4 := m &^ 3
	blockRows := max(4, avx2BlockBytes/(4*k)&^3)
	blockCols := max(3, avx2BlockBytes/(4*k)/3*3)
	for jb := j0; jb < j1 && m4 > 0; jb += blockCols {
		jb1 := min(jb+blockCols, j1)
		for ib := 0; ib < m4; ib += blockRows {
			g.block(ib, min(ib+blockRows, m4), jb, jb1)
		}
	}
	for i := m4; i < m; i++ {
		g.row(i, j0, j1)
	}
}

type avx2Gemm struct {
	k, k8         int
	alpha, beta   float32
	a, b, c       []float32
	lda, ldb, ldc int
}

// store writes alpha·s + beta·C[i,j] after adding the products past k8.
func (g *avx2Gemm) store(i, j int, s float32) {
	if g.k8 != g.k {
		ar, br := g.a[i*g.lda:i*g.lda+g.k], g.b[j*g.ldb:j*g.ldb+g.k]
		for p := g.k8; p < g.k; p++ {
			s += float32(ar[p] * br[p])
		}
	}
	p := &g.c[i*g.ldc+j]
	if g.beta == 0 {
		*p = g.alpha * s
	} else {
		*p = float32(g.alpha*s) + float32(g.beta**p)
	}
}

// block computes C[i0:i1, j0:j1] (i1-i0 a multiple of 4).
func (g *avx2Gemm) block(i0, i1, j0, j1 int) {
	var t [12]float32
	// No tail, alpha 1, beta 0 (the forward's x·Wᵀ, the LM head's logits):
	// the kernel stores its sums into C itself.
	direct := g.k8 == g.k && g.alpha == 1 && g.beta == 0
	j := j0
	if !direct && g.k8 == g.k && use512 {
		// alpha ≠ 1 or beta ≠ 0 with no tail (LoRA's out += scale·(u·Bᵀ),
		// k = r): the same 4×6 sums into a tile, then alpha·s + beta·C.
		// Row by row, so C (wide, k small) is written in order; every
		// element's arithmetic is store's, so this changes no bits.
		j = g.block512Scaled(i0, i1, j0, j1)
	}
	if direct && use512 {
		// Two 4×3 tiles at once in ZMM registers, bitwise the same sums.
		for ; j+6 <= j1; j += 6 {
			_ = g.b[(j+5)*g.ldb+g.k-1]
			for i := i0; i < i1; i += 4 {
				_ = g.a[(i+3)*g.lda+g.k-1]
				_ = g.c[(i+3)*g.ldc+j+5]
				kern4x6C512(g.k8, &g.a[i*g.lda], g.lda, &g.b[j*g.ldb], g.ldb, &g.c[i*g.ldc+j], g.ldc)
			}
		}
	}
	for ; j+3 <= j1; j += 3 {
		// The kernel reads rows j..j+2 of B and i..i+3 of A: check once.
		_ = g.b[(j+2)*g.ldb+g.k-1]
		for i := i0; i < i1; i += 4 {
			_ = g.a[(i+3)*g.lda+g.k-1]
			if direct {
				_ = g.c[(i+3)*g.ldc+j+2]
				kern4x3C(g.k8, &g.a[i*g.lda], g.lda, &g.b[j*g.ldb], g.ldb, &g.c[i*g.ldc+j], g.ldc)
				continue
			}
			kern4x3(g.k8, &g.a[i*g.lda], g.lda, &g.b[j*g.ldb], g.ldb, &t)
			if g.k8 != g.k {
				for r := 0; r < 4; r++ {
					for q := 0; q < 3; q++ {
						g.store(i+r, j+q, t[3*r+q])
					}
				}
				continue
			}
			// No tail to add: the same arithmetic as store, without a
			// call per element (it cost as much as the kernel when k is
			// small, as in the LM head's k = hidden size).
			for r := 0; r < 4; r++ {
				off := (i+r)*g.ldc + j
				ci, tr := g.c[off:off+3:off+3], t[3*r:3*r+3:3*r+3]
				switch {
				case g.beta == 0 && g.alpha == 1:
					ci[0], ci[1], ci[2] = tr[0], tr[1], tr[2]
				case g.beta == 0:
					ci[0], ci[1], ci[2] = g.alpha*tr[0], g.alpha*tr[1], g.alpha*tr[2]
				default:
					for q := range 3 {
						ci[q] = float32(g.alpha*tr[q]) + float32(g.beta*ci[q])
					}
				}
			}
		}
	}
	for ; j < j1; j++ {
		for i := i0; i < i1; i++ {
			g.store(i, j, kern1x1(g.k8, &g.a[i*g.lda], &g.b[j*g.ldb]))
		}
	}
}

// block512Scaled computes C[i0:i1, j0:j6] = alpha·(A·Bᵀ) + beta·C on the
// 4×6 AVX-512 kernel, j6 the last multiple of 6 columns from j0, which it
// returns. Rows outer: each group of four rows of C is finished left to
// right, so C streams through once instead of once per column strip (when
// k is small the stores were most of the work). No tail (k8 == k).
func (g *avx2Gemm) block512Scaled(i0, i1, j0, j1 int) int {
	if usePack512 {
		return g.block512ScaledPacked(i0, i1, j0, j1)
	}
	var t [24]float32
	j6 := j0 + (j1-j0)/6*6
	if j6 == j0 {
		return j0
	}
	_ = g.b[(j6-1)*g.ldb+g.k-1]
	alpha, beta := g.alpha, g.beta
	for i := i0; i < i1; i += 4 {
		_ = g.a[(i+3)*g.lda+g.k-1]
		_ = g.c[(i+3)*g.ldc+j6-1]
		for j := j0; j < j6; j += 6 {
			kern4x6C512(g.k8, &g.a[i*g.lda], g.lda, &g.b[j*g.ldb], g.ldb, &t[0], 6)
			for r := range 4 {
				off := (i+r)*g.ldc + j
				ci, tr := g.c[off:off+6:off+6], t[6*r:6*r+6:6*r+6]
				if beta == 0 {
					for q := range 6 {
						ci[q] = alpha * tr[q]
					}
					continue
				}
				for q := range 6 {
					ci[q] = float32(alpha*tr[q]) + float32(beta*ci[q])
				}
			}
		}
	}
	return j6
}

// block512ScaledPacked is block512Scaled on kern4x8P512 (8 columns at a
// time, each group of four rows of A packed as it is reached), for columns
// j0 up to the last multiple of 8, which it returns. With k small (LoRA's
// rank) the kernel's cost is mostly its reduction, which this one does a
// whole register at a time.
func (g *avx2Gemm) block512ScaledPacked(i0, i1, j0, j1 int) int {
	var t [32]float32
	j8 := j0 + (j1-j0)/8*8
	if j8 == j0 {
		return j0
	}
	_ = g.b[(j8-1)*g.ldb+g.k-1]
	ap := make([]float32, 4*g.k)
	alpha, beta := g.alpha, g.beta
	for i := i0; i < i1; i += 4 {
		packA4(ap, g.a[i*g.lda:], g.lda, 4, g.k)
		_ = g.c[(i+3)*g.ldc+j8-1]
		for j := j0; j < j8; j += 8 {
			if beta != 0 {
				// The scaled store in the kernel: the same roundings as
				// the loop below, without the tile's trip through t.
				kern4x8P512S(g.k8, &ap[0], &g.b[j*g.ldb], g.ldb, &g.c[i*g.ldc+j], g.ldc, alpha, beta)
				continue
			}
			kern4x8P512(g.k8, &ap[0], &g.b[j*g.ldb], g.ldb, &t[0], 8)
			for r := range 4 {
				off := (i+r)*g.ldc + j
				ci, tr := g.c[off:off+8:off+8], t[8*r:8*r+8:8*r+8]
				if beta == 0 {
					for q := range 8 {
						ci[q] = alpha * tr[q]
					}
					continue
				}
				for q := range 8 {
					ci[q] = float32(alpha*tr[q]) + float32(beta*ci[q])
				}
			}
		}
	}
	return j8
}

// row computes C[i, j0:j1] for one row of A, four columns at a time.
func (g *avx2Gemm) row(i, j0, j1 int) {
	var t [4]float32
	ai := g.a[i*g.lda : i*g.lda+g.k]
	j := j0
	plain := g.k8 == g.k && g.beta == 0 && g.alpha == 1
	ci := g.c[i*g.ldc : i*g.ldc+j1]
	for ; j+4 <= j1; j += 4 {
		_ = g.b[(j+3)*g.ldb+g.k-1]
		kern1x4(g.k8, &ai[0], &g.b[j*g.ldb], g.ldb, &t)
		if plain { // the common case, written directly
			copy(ci[j:j+4], t[:])
			continue
		}
		for q := 0; q < 4; q++ {
			g.store(i, j+q, t[q])
		}
	}
	for ; j < j1; j++ {
		g.store(i, j, kern1x1(g.k8, &ai[0], &g.b[j*g.ldb]))
	}
}

// packPool holds packA4's buffers between calls.
var packPool sync.Pool

// packA4 copies the first m4 rows (a multiple of 4) of A, k8 columns, into
// kern4x8P512's layout: for each group of four rows and each 8-element
// chunk of k, the chunk of rows 0, 1, 2, 3 in turn (32 floats).
func packA4(dst, a []float32, lda, m4, k8 int) {
	chunks := k8 / 8
	for g := 0; g < m4; g += 4 {
		d := dst[g*k8 : (g+4)*k8]
		if use512 && chunks > 0 {
			// One assembly call per group: a Go copy of 8 floats is a
			// runtime.memmove call each, which cost more than the move.
			_ = a[(g+3)*lda+k8-1]
			packA4Group(chunks, &a[g*lda], lda, &d[0])
			continue
		}
		for r := range 4 {
			row := a[(g+r)*lda : (g+r)*lda+k8]
			for ch := range chunks {
				copy(d[ch*32+r*8:ch*32+r*8+8], row[ch*8:ch*8+8])
			}
		}
	}
}

// packA6 copies the first m6 rows (a multiple of 6) of A, k8 columns, into
// kern6x8P512's layout: for each group of six rows and each 8-element
// chunk of k, the chunk of rows 0 to 5 in turn (48 floats).
func packA6(dst, a []float32, lda, m6, k8 int) {
	for g := 0; g < m6; g += 6 {
		_ = a[(g+5)*lda+k8-1]
		_ = dst[(g+6)*k8-1]
		packA6Group(k8/8, &a[g*lda], lda, &dst[g*k8])
	}
}

// use6x8 turns kern6x8P512 on in gemmNTPacked (a variable so tests and
// benchmarks can compare it with kern4x8P512, whose bits it computes).
var use6x8 = true

// gemmNTPacked is gemmNT for C = A·Bᵀ (alpha 1, beta 0, k a multiple of 8:
// the forward's x·Wᵀ and the LM head's logits, many rows) on the AVX-512
// kernels kern6x8P512 and kern4x8P512. Goroutines split the rows; each
// packs a block of its rows (packA6, packA4) right before computing it, so
// the copy is read back from L2, and walks that block against B's columns
// in blocks that stay in L2, 8 columns (an L1-resident strip of B) at a
// time, six rows a call (a block's last 4 or 8 rows four). Columns past
// the last multiple of 8 and rows past the last multiple of 4 take the
// other kernels. Every element is kern4x3C's sum, so the results are
// gemmNTRangeAVX2's bit for bit, whatever the split.
func gemmNTPacked(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	m4, n8 := m&^3, n&^7
	g := avx2Gemm{k: k, k8: k, alpha: 1, a: a, lda: lda, b: b, ldb: ldb, c: c, ldc: ldc}
	blockRows := max(12, avx2BlockBytes/(4*k)/12*12)
	blockCols := max(8, avx2BlockBytes/(4*k)&^7)
	_ = a[(m4-1)*lda+k-1]
	_ = b[(n8-1)*ldb+k-1]
	_ = c[(m4-1)*ldc+n-1]
	parallelFor(m4, 12, 2*int64(m4)*int64(n)*int64(k), func(i0, i1 int) {
		var buf *[]float32
		if v := packPool.Get(); v != nil {
			buf = v.(*[]float32)
		} else {
			buf = new([]float32)
		}
		if cap(*buf) < blockRows*k {
			*buf = make([]float32, blockRows*k)
		}
		ap := (*buf)[:blockRows*k]
		for ib := i0; ib < i1; ib += blockRows {
			ib1 := min(ib+blockRows, i1)
			// Six-row groups, then the one or two four-row groups that
			// leave (a block's rows are a multiple of 4).
			e6 := ib
			if use6x8 {
				e6 = ib1 - (ib1-ib)%12
			}
			packA6(ap, a[ib*lda:], lda, e6-ib, k)
			packA4(ap[(e6-ib)*k:], a[e6*lda:], lda, ib1-e6, k)
			for jb := 0; jb < n8; jb += blockCols {
				jb1 := min(jb+blockCols, n8)
				for j := jb; j < jb1; j += 8 {
					i := ib
					for ; i < e6; i += 6 {
						kern6x8P512(k, &ap[(i-ib)*k], &b[j*ldb], ldb, &c[i*ldc+j], ldc)
					}
					for ; i < ib1; i += 4 {
						kern4x8P512(k, &ap[(i-ib)*k], &b[j*ldb], ldb, &c[i*ldc+j], ldc)
					}
				}
			}
			if n8 < n {
				g.block(ib, ib1, n8, n)
			}
		}
		packPool.Put(buf)
	})
	for i := m4; i < m; i++ {
		g.row(i, 0, n)
	}
}

// useNT16 turns gemmNT16 on (a variable so tests and benchmarks can compare
// it with the kernels whose bits it computes).
var useNT16 = true

// gemmNT16 is gemmNT for C = A·Bᵀ with exactly 16 columns (alpha 1, beta 0,
// k a multiple of 8): LoRA's u = x·Aᵀ in the forward and g = dy·(s·B) in
// the backward at rank 16. B (16 × k) is copied once transposed, then
// goroutines split the rows, three at a time on kernNT3x16. Every element
// is kern4x3C's sum, so C is gemmNTRangeAVX2's bit for bit.
func gemmNT16(m, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	_ = a[(m-1)*lda+k-1]
	_ = b[15*ldb+k-1]
	_ = c[(m-1)*ldc+15]
	buf, bt := pooledBuf(16 * k)
	defer opPackPool.Put(buf)
	for j := range 16 {
		for p, v := range b[j*ldb : j*ldb+k] {
			bt[p*16+j] = v
		}
	}
	parallelFor(m, 3, 2*int64(m)*16*int64(k), func(i0, i1 int) {
		i := i0
		for ; i+3 <= i1; i += 3 {
			kernNT3x16(k, &a[i*lda], lda, &bt[0], &c[i*ldc], ldc)
		}
		for ; i < i1; i++ {
			kernNT1x16(k, &a[i*lda], &bt[0], &c[i*ldc])
		}
	})
}

// gemmNTS16 is gemmNT for C = alpha·A·Bᵀ + beta·C with k = 16, beta ≠ 0
// and a multiple of 16 columns: LoRA's out += s·(u·Bᵀ) at rank 16, in the
// forward and in serving. B is packed once as 16 × 16 strips; goroutines
// split the rows, and kernNTS16 finishes each row of C left to right. Every
// element is block512ScaledPacked's, bit for bit.
func gemmNTS16(m, n int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	_ = a[(m-1)*lda+15]
	_ = b[(n-1)*ldb+15]
	_ = c[(m-1)*ldc+n-1]
	buf, bt := pooledBuf(16 * n)
	defer opPackPool.Put(buf)
	for j := range n {
		s, q := j/16, j%16
		for p, v := range b[j*ldb : j*ldb+16] {
			bt[(s*16+p)*16+q] = v
		}
	}
	parallelFor(m, 1, 2*int64(m)*int64(n)*16, func(i0, i1 int) {
		for i := i0; i < i1; i++ {
			kernNTS16(n/16, &a[i*lda], &bt[0], &c[i*ldc], alpha, beta)
		}
	})
}
