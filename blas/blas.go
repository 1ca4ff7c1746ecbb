// Package blas holds the dense linear algebra the model needs: a row-major
// Sgemm (C = alpha·op(A)·op(B) + beta·C) and a bf16-weight variant for
// half-size weights.
//
// The pure-Go implementation is always built and always correct; building
// with cgo and `-tags openblas` routes the backward's products (op(A)·B) to
// OpenBLAS's cblas_sgemm (pkg-config name openblas) and keeps x·Wᵀ (A·Bᵀ,
// every forward) on the Go kernels, which are faster for decode and give a
// row the same bits whatever batch it is in (sgemm_openblas.go says why).
// SgemmGo stays available either way, for tests and benchmarks that compare
// the two.
//
// The scalar Go loops write products as float32(x*y) before adding them:
// Go may fuse x*y + z into one FMA instruction when it targets GOAMD64=v3,
// and does so in some loops and not others (a product whose operand comes
// straight from memory stays a MULSS), so one element could round
// differently depending on which loop computed it. The explicit conversion
// makes the product round on its own everywhere, which keeps a v3 build's
// results bitwise those of the default (v1) build, and a row's result
// independent of the batch it is in.
package blas

import (
	"fmt"
	"runtime"
	"sync"
)

// Sgemm computes C = alpha·op(A)·op(B) + beta·C with row-major matrices,
// where op(X) is X or Xᵀ. op(A) is m×k, op(B) is k×n, C is m×n; lda, ldb and
// ldc are the row strides of A, B and C as stored. With beta = 0, C is
// overwritten (NaNs in C do not leak through).
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	checkArgs(transA, transB, m, n, k, a, lda, b, ldb, c, ldc)
	if m == 0 || n == 0 {
		return
	}
	sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func checkArgs(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	need := func(name string, buf []float32, rows, cols, ld int) {
		if rows == 0 || cols == 0 {
			return
		}
		if ld < cols {
			panic(fmt.Sprintf("blas: %s stride %d < %d columns", name, ld, cols))
		}
		if len(buf) < (rows-1)*ld+cols {
			panic(fmt.Sprintf("blas: %s has %d elements, %dx%d with stride %d needs %d", name, len(buf), rows, cols, ld, (rows-1)*ld+cols))
		}
	}
	if m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("blas: negative dimension m=%d n=%d k=%d", m, n, k))
	}
	need("A", a, ar, ac, lda)
	need("B", b, br, bc, ldb)
	need("C", c, m, n, ldc)
}

// SgemmGo is the pure-Go Sgemm, whatever the build tags.
func SgemmGo(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	checkArgs(transA, transB, m, n, k, a, lda, b, ldb, c, ldc)
	if m == 0 || n == 0 {
		return
	}
	if useAVX2 && !transB {
		// B as stored; A read in place through strides.
		ars, acs := lda, 1
		if transA {
			ars, acs = 1, lda
		}
		gemmOP(m, n, k, alpha, a, ars, acs, b, ldb, beta, c, ldc)
		return
	}
	// Bring both operands to the "rows along k" layout the kernel wants:
	// A as m×k and B as n×k (that is, Bᵀ), each contiguous along k. The
	// model's hot case, x·Wᵀ with W stored [out,in], needs no packing.
	if transA {
		a, lda = transpose(a, lda, k, m), k
	}
	if !transB {
		b, ldb = transpose(b, ldb, k, n), k
	}
	gemmNT(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// transpose returns the cols×rows transpose of the rows×cols matrix x.
func transpose(x []float32, ld, rows, cols int) []float32 {
	t := make([]float32, rows*cols)
	const blk = 32
	for i0 := 0; i0 < rows; i0 += blk {
		for j0 := 0; j0 < cols; j0 += blk {
			for i := i0; i < min(i0+blk, rows); i++ {
				row := x[i*ld : i*ld+cols]
				for j := j0; j < min(j0+blk, cols); j++ {
					t[j*rows+i] = row[j]
				}
			}
		}
	}
	return t
}

// parallelMinFlops is the work below which splitting across goroutines costs
// more than it saves.
const parallelMinFlops = 1 << 17

// parallelFor splits [0,n) into chunks (multiples of align) across
// GOMAXPROCS goroutines when work (in flops) justifies it.
func parallelFor(n, align int, work int64, fn func(lo, hi int)) {
	workers := runtime.GOMAXPROCS(0)
	if work < parallelMinFlops || workers <= 1 || n <= align {
		fn(0, n)
		return
	}
	chunks := min(workers, (n+align-1)/align)
	per := ((n+chunks-1)/chunks + align - 1) / align * align
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += per {
		hi := min(lo+per, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(lo, hi)
		}()
	}
	wg.Wait()
}

// gemmNT computes C = alpha·A·Bᵀ + beta·C, A m×k, B n×k, both contiguous
// along k. Goroutines split the n (output column) range, so each streams its
// own rows of B — for decode (m small) that is the whole memory traffic.
func gemmNT(m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	// Many rows and enough columns to pay for packing A (at 3,040 rows
	// and k = 576 the packed kernel breaks even near 64–96 columns; LoRA's
	// 16-column x·Aᵀ loses a third with it).
	if usePack512 && use512 && alpha == 1 && beta == 0 && k%8 == 0 && m >= 16 && n >= 96 {
		gemmNTPacked(m, n, k, a, lda, b, ldb, c, ldc)
		return
	}
	if use512 && useNT16 && k == 16 && beta != 0 && n%16 == 0 && n > 0 && m > 0 {
		gemmNTS16(m, n, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	if use512 && useNT16 && n == 16 && alpha == 1 && beta == 0 && k%8 == 0 && k > 0 && m >= 3 {
		gemmNT16(m, k, a, lda, b, ldb, c, ldc)
		return
	}
	if n < 24 && m >= 64 {
		// Too few columns to share (LoRA's 16: 12 and 4 per goroutine):
		// split the rows instead, each row's sums being the same either way.
		parallelFor(m, 4, 2*int64(m)*int64(n)*int64(k), func(i0, i1 int) {
			if useAVX2 {
				gemmNTRangeAVX2(i1-i0, 0, n, k, alpha, a[i0*lda:], lda, b, ldb, beta, c[i0*ldc:], ldc)
			} else {
				gemmNTRange(i1-i0, 0, n, k, alpha, a[i0*lda:], lda, b, ldb, beta, c[i0*ldc:], ldc)
			}
		})
		return
	}
	parallelFor(n, 12, 2*int64(m)*int64(n)*int64(k), func(j0, j1 int) {
		if useAVX2 {
			gemmNTRangeAVX2(m, j0, j1, k, alpha, a, lda, b, ldb, beta, c, ldc)
		} else {
			gemmNTRange(m, j0, j1, k, alpha, a, lda, b, ldb, beta, c, ldc)
		}
	})
}

// gemmNTRange computes columns [j0,j1) of C on the portable kernels (no
// AVX2, or -tags purego). It walks B in panels of 4 rows (which stay in
// L1/L2 while every row of A streams past) and computes 4×4 tiles of C.
//
// Every element is summed in the assembly kernels' order (see
// gemmNTRangeAVX2): eight lanes, lane l adding the products p ≡ l (mod 8)
// of the first k8 = k rounded down to a multiple of 8, reduced as
// ((l0+l4)+(l1+l5))+((l2+l6)+(l3+l7)), then the tail in order. Only the
// fused multiply-add differs (each product is rounded here). Summed in one
// chain instead, the float32 error of a dot product grows about √8 times
// faster with k: on the tiny GGUF fixtures (TestGGUFTinyParity) the
// logits' largest error from the float64 reference was 1.65e-4 (4.6×
// the AVX2 kernels'), 5.5e-5 with the lanes.
func gemmNTRange(m, j0, j1, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	store := func(i, j int, v float32) {
		p := &c[i*ldc+j]
		if beta == 0 {
			*p = alpha * v
		} else {
			*p = float32(alpha*v) + float32(beta**p)
		}
	}
	j := j0
	for ; j+4 <= j1; j += 4 {
		b0 := b[j*ldb : j*ldb+k]
		b1 := b[(j+1)*ldb : (j+1)*ldb+k]
		b2 := b[(j+2)*ldb : (j+2)*ldb+k]
		b3 := b[(j+3)*ldb : (j+3)*ldb+k]
		i := 0
		for ; i+4 <= m; i += 4 {
			var s [16]float32
			dot4x4(&s, a[i*lda:i*lda+k], a[(i+1)*lda:(i+1)*lda+k], a[(i+2)*lda:(i+2)*lda+k], a[(i+3)*lda:(i+3)*lda+k], b0, b1, b2, b3)
			for r := 0; r < 4; r++ {
				for q := 0; q < 4; q++ {
					store(i+r, j+q, s[4*r+q])
				}
			}
		}
		for ; i < m; i++ {
			s0, s1, s2, s3 := dot1x4(a[i*lda:i*lda+k], b0, b1, b2, b3)
			store(i, j, s0)
			store(i, j+1, s1)
			store(i, j+2, s2)
			store(i, j+3, s3)
		}
	}
	for ; j < j1; j++ {
		bj := b[j*ldb : j*ldb+k]
		for i := 0; i < m; i++ {
			store(i, j, dotLanes(a[i*lda:i*lda+k], bj))
		}
	}
}

// lanesChunk is how many elements of k dot4x4 takes per pass of its eight
// lanes: 8 rows × 256 floats (8 KiB) stay in L1 while each lane walks them.
const lanesChunk = 256

// dot4x4 computes the 16 dot products of a0..a3 with b0..b3 (all length
// k), each summed as dotLanes sums it. One lane at a time runs as a 4×4
// tile of 16 accumulators (8 loads per 16 products, as a tile in order
// would), over k in chunks of lanesChunk; the lanes' sums wait in acc.
func dot4x4(s *[16]float32, a0, a1, a2, a3, b0, b1, b2, b3 []float32) {
	k := len(a0)
	k8 := k &^ 7
	a1, a2, a3 = a1[:k], a2[:k], a3[:k]
	b0, b1, b2, b3 = b0[:k], b1[:k], b2[:k], b3[:k]
	var acc [8][16]float32
	for c0 := 0; c0 < k8; c0 += lanesChunk {
		c1 := min(c0+lanesChunk, k8)
		for l := 0; l < 8; l++ {
			t := &acc[l]
			s00, s01, s02, s03 := t[0], t[1], t[2], t[3]
			s10, s11, s12, s13 := t[4], t[5], t[6], t[7]
			s20, s21, s22, s23 := t[8], t[9], t[10], t[11]
			s30, s31, s32, s33 := t[12], t[13], t[14], t[15]
			// Sliced to the chunk so the loop needs no bounds checks.
			a0c := a0[:c1]
			a1c, a2c, a3c := a1[:len(a0c)], a2[:len(a0c)], a3[:len(a0c)]
			b0c, b1c, b2c, b3c := b0[:len(a0c)], b1[:len(a0c)], b2[:len(a0c)], b3[:len(a0c)]
			for p := c0 + l; p < len(a0c); p += 8 {
				x0, x1, x2, x3 := a0c[p], a1c[p], a2c[p], a3c[p]
				y0, y1, y2, y3 := b0c[p], b1c[p], b2c[p], b3c[p]
				s00 += float32(x0 * y0)
				s01 += float32(x0 * y1)
				s02 += float32(x0 * y2)
				s03 += float32(x0 * y3)
				s10 += float32(x1 * y0)
				s11 += float32(x1 * y1)
				s12 += float32(x1 * y2)
				s13 += float32(x1 * y3)
				s20 += float32(x2 * y0)
				s21 += float32(x2 * y1)
				s22 += float32(x2 * y2)
				s23 += float32(x2 * y3)
				s30 += float32(x3 * y0)
				s31 += float32(x3 * y1)
				s32 += float32(x3 * y2)
				s33 += float32(x3 * y3)
			}
			*t = [16]float32{s00, s01, s02, s03, s10, s11, s12, s13, s20, s21, s22, s23, s30, s31, s32, s33}
		}
	}
	as := [4][]float32{a0, a1, a2, a3}
	bs := [4][]float32{b0, b1, b2, b3}
	for e := range 16 {
		v := reduceLanes(acc[0][e], acc[1][e], acc[2][e], acc[3][e], acc[4][e], acc[5][e], acc[6][e], acc[7][e])
		x, y := as[e/4], bs[e%4]
		for p := k8; p < k; p++ {
			v += float32(x[p] * y[p])
		}
		s[e] = v
	}
}

// reduceLanes adds eight lane sums as the assembly kernels do (the upper
// half onto the lower, then two horizontal adds).
func reduceLanes(l0, l1, l2, l3, l4, l5, l6, l7 float32) float32 {
	return ((l0 + l4) + (l1 + l5)) + ((l2 + l6) + (l3 + l7))
}

// dotLanes is x·y in the kernels' order: eight lanes over the first k8
// elements, reduceLanes, then the tail in order (see gemmNTRange).
func dotLanes(x, y []float32) float32 {
	y = y[:len(x)]
	k8 := len(x) &^ 7
	var l0, l1, l2, l3, l4, l5, l6, l7 float32
	for p := 0; p < k8; p += 8 {
		xs, ys := (*[8]float32)(x[p:]), (*[8]float32)(y[p:])
		l0 += float32(xs[0] * ys[0])
		l1 += float32(xs[1] * ys[1])
		l2 += float32(xs[2] * ys[2])
		l3 += float32(xs[3] * ys[3])
		l4 += float32(xs[4] * ys[4])
		l5 += float32(xs[5] * ys[5])
		l6 += float32(xs[6] * ys[6])
		l7 += float32(xs[7] * ys[7])
	}
	s := reduceLanes(l0, l1, l2, l3, l4, l5, l6, l7)
	for p := k8; p < len(x); p++ {
		s += float32(x[p] * y[p])
	}
	return s
}

// dot1x4 computes a·b0 … a·b3 (all length k), each as dotLanes sums it,
// one lane at a time with four accumulators (a's loads shared by the four
// columns), over k in chunks of lanesChunk.
func dot1x4(a, b0, b1, b2, b3 []float32) (float32, float32, float32, float32) {
	k := len(a)
	k8 := k &^ 7
	b0, b1, b2, b3 = b0[:k], b1[:k], b2[:k], b3[:k]
	var acc [8][4]float32
	for c0 := 0; c0 < k8; c0 += lanesChunk {
		c1 := min(c0+lanesChunk, k8)
		for l := 0; l < 8; l++ {
			t := &acc[l]
			s0, s1, s2, s3 := t[0], t[1], t[2], t[3]
			ac := a[:c1]
			b0c, b1c, b2c, b3c := b0[:len(ac)], b1[:len(ac)], b2[:len(ac)], b3[:len(ac)]
			for p := c0 + l; p < len(ac); p += 8 {
				x := ac[p]
				s0 += float32(x * b0c[p])
				s1 += float32(x * b1c[p])
				s2 += float32(x * b2c[p])
				s3 += float32(x * b3c[p])
			}
			*t = [4]float32{s0, s1, s2, s3}
		}
	}
	var out [4]float32
	bs := [4][]float32{b0, b1, b2, b3}
	for q := range 4 {
		v := reduceLanes(acc[0][q], acc[1][q], acc[2][q], acc[3][q], acc[4][q], acc[5][q], acc[6][q], acc[7][q])
		for p := k8; p < k; p++ {
			v += float32(a[p] * bs[q][p])
		}
		out[q] = v
	}
	return out[0], out[1], out[2], out[3]
}

// Dot is the dot product of two equal-length vectors.
func Dot(x, y []float32) float32 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float32
	p := 0
	for ; p+4 <= len(x); p += 4 {
		s0 += float32(x[p] * y[p])
		s1 += float32(x[p+1] * y[p+1])
		s2 += float32(x[p+2] * y[p+2])
		s3 += float32(x[p+3] * y[p+3])
	}
	for ; p < len(x); p++ {
		s0 += float32(x[p] * y[p])
	}
	return (s0 + s1) + (s2 + s3)
}
