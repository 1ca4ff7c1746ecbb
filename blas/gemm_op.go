package blas

import "sync"

// The outer-product path for C = alpha·op(A)·B + beta·C with B not
// transposed (the backward's dx = dy·W and dW = dyᵀ·x): B is read row-major
// as it is stored, A through a pair of strides, so neither operand is
// transposed into a fresh copy per call (that copy, and the per-element
// store of the dot-product kernels when k is small, ran a quarter of a
// training step before).
//
// Every element of C is one fused multiply-add chain over p in order,
// whichever tile, block or goroutine computes it; rows and columns at the
// edges go through zero-padded copies so they run the same kernel. A row's
// result therefore does not depend on the other rows in the call. With
// alpha = 1 and beta = 1 (gradient accumulation) the chains start from C
// rather than adding C at the end, everywhere alike.

const (
	opTileRows = 4
	opTileCols = 24
	// opBlockRows rows of A share each k block of a B panel (opBlockK×24
	// floats, 24 KiB: it stays in L1 while they use it).
	opBlockRows = 64
	opBlockK    = 256

	// The packed path (AVX-512): eight rows of A by a 48-column panel of B
	// copied into opPackK contiguous rows (24 KiB, which stays in L1 beside
	// the rows of A), reused by opPackBlock rows of A at a time. In place,
	// the rows of a 4,864-wide B sit 19 KB apart: a panel's 256 rows fell
	// on a few L1 sets and a new page each, and streamed from L2 for every
	// four rows of A.
	opPackRows  = 8
	opPackCols  = 48
	opPackK     = 128
	opPackBlock = 1024
	// opPackMinRows: with fewer rows of A (LoRA's dA = gᵀ·x, 16 rows) the
	// copy, a strided gather of B, costs more than it saves.
	opPackMinRows = 64
)

// usePackOP turns the packed path on (a variable so tests and benchmarks can
// compare it with the in-place kernels, whose bits it computes).
var usePackOP = true

// gemmOP computes C = alpha·op(A)·B + beta·C, op(A) m×k with element (i,p)
// at a[i*ars+p*acs], B k×n with row stride ldb. Needs the AVX2 kernels.
func gemmOP(m, n, k int, alpha float32, a []float32, ars, acs int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	work := 2 * int64(m) * int64(n) * int64(k)
	g := opGemm{k: k, alpha: alpha, a: a, ars: ars, acs: acs, b: b, ldb: ldb, beta: beta, c: c, ldc: ldc}
	if use512 && useOP16 && m == op16Rows && ars == 1 && n >= op16Rows && k > 0 && alpha == 1 && (beta == 0 || beta == 1) {
		parallelFor(n, op16Rows, work, func(j0, j1 int) { g.run16(j0, j1) })
		return
	}
	if m >= n {
		parallelFor(m, opTileRows, work, func(i0, i1 int) { g.run(i0, i1, 0, n) })
	} else {
		// Whole 48-column panels per goroutine where the packed path runs
		// (896 columns as 448 + 448 left a 16-column panel padded to 48 on
		// each side); the bits do not depend on the split.
		align := opTileCols
		if use512 && usePackOP {
			align = opPackCols
		}
		parallelFor(n, align, work, func(j0, j1 int) { g.run(0, m, j0, j1) })
	}
}

type opGemm struct {
	k           int
	alpha, beta float32
	a, b, c     []float32
	ars, acs    int
	ldb, ldc    int
}

// run computes C[i0:i1, j0:j1]: the full 8-row tiles on the packed path
// (at least 48 columns; a last partial panel zero-padded), the rest on the
// in-place kernels. Both compute each element as the same FMA chain over p
// in order, so a row's result does not depend on which path ran it.
func (g *opGemm) run(i0, i1, j0, j1 int) {
	direct := g.alpha == 1 && (g.beta == 0 || g.beta == 1)
	iw := i0 + (i1-i0)/opPackRows*opPackRows
	if !use512 || !usePackOP || !direct || g.k == 0 || iw-i0 < opPackMinRows || j1-j0 < opPackCols {
		g.runInPlace(i0, i1, j0, j1)
		return
	}
	g.runPacked(i0, iw, j0, j1)
	if iw < i1 {
		g.runInPlace(iw, i1, j0, j1)
	}
}

// runPacked computes C[i0:i1, j0:j1] for alpha = 1, beta 0 or 1, with
// i1−i0 a multiple of 8: each k block of a 48-column panel is copied once
// per opPackBlock rows and runs kernOP8x48P512 over them. The chains start
// from C when beta is 1, from zero at the first k block otherwise, and
// continue from C after it, as on the in-place path. A last panel of fewer
// columns is padded with zeros and its rows of C go through a buffer.
func (g *opGemm) runPacked(i0, i1, j0, j1 int) {
	k := g.k
	cacc := 0
	if g.beta == 1 {
		cacc = 1
	}
	// The panel and the partial panel's rows of C in one pooled buffer: a
	// training step makes thousands of these calls, and fresh buffers each
	// time grew the heap by ~0.7 GB.
	nb := min(opPackK, k) * opPackCols
	nc := 0
	if (j1-j0)%opPackCols != 0 {
		nc = min(opPackBlock, i1-i0) * opPackCols
	}
	buf, all := pooledBuf(nb + nc)
	defer opPackPool.Put(buf)
	bp, cp := all[:nb], all[nb:]
	for ib := i0; ib < i1; ib += opPackBlock {
		ie := min(ib+opPackBlock, i1)
		for j := j0; j < j1; j += opPackCols {
			w := min(opPackCols, j1-j)
			c, cb, ldc := g.c, ib*g.ldc+j, g.ldc
			if w < opPackCols {
				c, cb, ldc = cp, 0, opPackCols
				clear(cp)
				if cacc == 1 {
					for i := ib; i < ie; i++ {
						copy(cp[(i-ib)*opPackCols:(i-ib)*opPackCols+w], g.c[i*g.ldc+j:i*g.ldc+j+w])
					}
				}
			}
			for kb := 0; kb < k; kb += opPackK {
				kc := min(opPackK, k-kb)
				if w == opPackCols {
					// One call for the block's rows (a runtime.memmove
					// call per 192-byte row cost more than the move).
					_ = g.b[(kb+kc-1)*g.ldb+j+opPackCols-1]
					_ = bp[kc*opPackCols-1]
					copyRows48(kc, &g.b[kb*g.ldb+j], g.ldb, &bp[0])
				} else {
					for p := range kc {
						row := (kb + p) * g.ldb
						dst := bp[p*opPackCols : (p+1)*opPackCols]
						copy(dst, g.b[row+j:row+j+w])
						clear(dst[w:])
					}
				}
				acc := max(min(kb, 1), cacc)
				for i := ib; i < ie; i += opPackRows {
					// The kernel reads A[i:i+8, kb:kb+kc] and touches
					// 8 rows × 48 columns of C (or of the buffer): check
					// the last elements once.
					ci := cb + (i-ib)*ldc
					_ = g.a[(i+opPackRows-1)*g.ars+(kb+kc-1)*g.acs]
					_ = c[ci+(opPackRows-1)*ldc+opPackCols-1]
					kernOP8x48P512(kc, &g.a[i*g.ars+kb*g.acs], g.ars, g.acs, &bp[0], &c[ci], ldc, acc)
				}
			}
			if w < opPackCols {
				for i := ib; i < ie; i++ {
					copy(g.c[i*g.ldc+j:i*g.ldc+j+w], cp[(i-ib)*opPackCols:])
				}
			}
		}
	}
}

// The 16-row path (AVX-512): op(A) of exactly 16 rows stored as its
// transpose (ars 1), LoRA's dA = gᵀ·x and dBᵀ = (s·u)ᵀ·dy at r = 16, k the
// token count. kernOP16x16T512 reads each row of B once for all 16 rows of
// A, where the 4×48 tiles read it four times; op16K rows of B at a time
// (a block of the goroutine's columns stays in L2 while its strips run).
const (
	op16Rows = 16
	op16K    = 256
)

// useOP16 turns the 16-row path on (a variable so tests and benchmarks can
// compare it with the kernels whose bits it computes).
var useOP16 = true

// run16 computes C[0:16, j0:j1] (alpha 1, beta 0 or 1, ars 1) in strips of
// 16 columns on kernOP16x16T512, the last partial strip in place. The
// chains start from C when beta is 1, from zero at the first k block
// otherwise, and continue from C after it: each element is the FMA chain
// over p in order that the other paths compute.
func (g *opGemm) run16(j0, j1 int) {
	k := g.k
	j16 := j0 + (j1-j0)/op16Rows*op16Rows
	cacc := 0
	if g.beta == 1 {
		cacc = 1
	}
	if j16 > j0 {
		_ = g.c[(op16Rows-1)*g.ldc+j16-1]
		_ = g.b[(k-1)*g.ldb+j16-1]
		_ = g.a[op16Rows-1+(k-1)*g.acs]
	}
	for kb := 0; kb < k; kb += op16K {
		kc := min(op16K, k-kb)
		acc := max(min(kb, 1), cacc)
		for j := j0; j < j16; j += op16Rows {
			kernOP16x16T512(kc, &g.a[kb*g.acs], g.acs, &g.b[kb*g.ldb+j], g.ldb, &g.c[j], g.ldc, acc)
		}
	}
	if j16 < j1 {
		g.runInPlace(0, op16Rows, j16, j1)
	}
}

var opPackPool = sync.Pool{New: func() any { return new([]float32) }}

// pooledBuf takes a buffer from opPackPool, grown to at least n floats, and
// returns it with its first n; the caller puts the buffer back.
func pooledBuf(n int) (*[]float32, []float32) {
	buf := opPackPool.Get().(*[]float32)
	if cap(*buf) < n {
		*buf = make([]float32, n)
	}
	return buf, (*buf)[:n]
}

// runInPlace computes C[i0:i1, j0:j1] with B read where it is.
func (g *opGemm) runInPlace(i0, i1, j0, j1 int) {
	k := g.k
	if k == 0 {
		g.scaleOnly(i0, i1, j0, j1)
		return
	}
	// The last row tile, when partial, reads a zero-padded copy of A (4×k,
	// row stride k); the last column panel, when partial, B in place or a
	// padded k×24 copy (below).
	var ap, bp []float32
	iPart := i1 - (i1-i0)%opTileRows
	if iPart < i1 {
		ap = make([]float32, opTileRows*k)
		for r := 0; r < i1-iPart; r++ {
			for p := range k {
				ap[r*k+p] = g.a[(iPart+r)*g.ars+p*g.acs]
			}
		}
	}
	jPart := j1 - (j1-j0)%opTileCols
	// The partial panel reads B in place when its 24-column rows stay
	// inside b (the columns past j1 are then the next row's, or columns
	// another goroutine owns, read only and their products dropped); only
	// at the very end of b does it need the padded copy.
	if jPart < j1 && (k-1)*g.ldb+jPart+opTileCols > len(g.b) {
		w := j1 - jPart
		bp = make([]float32, k*opTileCols)
		for p := range k {
			copy(bp[p*opTileCols:p*opTileCols+w], g.b[p*g.ldb+jPart:p*g.ldb+j1])
		}
	}
	// With alpha = 1 and beta 0 or 1 (all of training), full tiles go
	// straight into C, their chains starting from C when beta is 1.
	direct := g.alpha == 1 && (g.beta == 0 || g.beta == 1)
	cacc := 0
	if g.beta == 1 {
		cacc = 1
	}
	var tiles [opBlockRows / opTileRows][opTileRows * opTileCols]float32
	for ib := i0; ib < i1; ib += opBlockRows {
		ie := min(ib+opBlockRows, i1)
		for j := j0; j < j1; j += opTileCols {
			// With AVX-512 the full row tiles of a pair of full panels run
			// as one 4×48 tile (the first panel's turn; the second's skips
			// them): the same chains, bitwise.
			panel := (j - j0) / opTileCols
			wide := use512 && direct && j+opTileCols <= jPart &&
				(panel%2 == 0 && j+2*opTileCols <= jPart || panel%2 == 1)
			bsrc, bld, boff := g.b, g.ldb, j
			if j >= jPart && bp != nil {
				bsrc, bld, boff = bp, opTileCols, 0
			}
			je := min(j+opTileCols, j1)
			if direct && cacc == 1 {
				// Tiles through the buffer start their chains from C too,
				// so every element is rounded the same way.
				for t, i := 0, ib; i < ie; t, i = t+1, i+opTileRows {
					if i >= iPart || j >= jPart {
						g.load(&tiles[t], i, min(i+opTileRows, ie), j, je)
					}
				}
			}
			for kb := 0; kb < k; kb += opBlockK {
				kc := min(opBlockK, k-kb)
				acc := min(kb, 1)
				if direct {
					acc = max(acc, cacc)
				}
				bptr := &bsrc[kb*bld+boff]
				for t, i := 0, ib; i < ie; t, i = t+1, i+opTileRows {
					switch {
					case i >= iPart:
						kernOP4x24(kc, &ap[kb], k, 1, bptr, bld, &tiles[t], acc)
					case wide && panel%2 == 1:
						// Done with the previous panel.
					case wide:
						_ = g.c[(i+3)*g.ldc+j+2*opTileCols-1]
						_ = bsrc[(kb+kc-1)*bld+boff+2*opTileCols-1]
						kernOP4x48C512(kc, &g.a[i*g.ars+kb*g.acs], g.ars, g.acs, bptr, bld, &g.c[i*g.ldc+j], g.ldc, max(acc, cacc))
					case direct && j < jPart:
						// The kernel touches C[i:i+4, j:j+24]: check the
						// last row's end once.
						_ = g.c[(i+3)*g.ldc+j+opTileCols-1]
						kernOP4x24C(kc, &g.a[i*g.ars+kb*g.acs], g.ars, g.acs, bptr, bld, &g.c[i*g.ldc+j], g.ldc, max(acc, cacc))
					default:
						kernOP4x24(kc, &g.a[i*g.ars+kb*g.acs], g.ars, g.acs, bptr, bld, &tiles[t], acc)
					}
				}
			}
			sb := ib
			if direct && j < jPart {
				sb = max(ib, iPart) // only the padded tile is left to store
			}
			g.store(&tiles, ib, sb, ie, j, je, direct)
		}
	}
}

// load fills a tile with C[i:ie, j:je], zeros around it.
func (g *opGemm) load(tile *[opTileRows * opTileCols]float32, i, ie, j, je int) {
	clear(tile[:])
	for r := range ie - i {
		copy(tile[r*opTileCols:], g.c[(i+r)*g.ldc+j:(i+r)*g.ldc+je])
	}
}

// store writes alpha·tile + beta·C for rows [sb, ie) and columns [j, je),
// the tiles of the row block starting at ib; raw copies the tiles as they
// are (direct mode: C is already in them, or beta is 0).
func (g *opGemm) store(tiles *[opBlockRows / opTileRows][opTileRows * opTileCols]float32, ib, sb, ie, j, je int, raw bool) {
	w := je - j
	alpha, beta := g.alpha, g.beta
	for i := sb; i < ie; i++ {
		t, r := (i-ib)/opTileRows, (i-ib)%opTileRows
		src := tiles[t][r*opTileCols : r*opTileCols+w]
		dst := g.c[i*g.ldc+j : i*g.ldc+je]
		switch {
		case raw || beta == 0 && alpha == 1:
			copy(dst, src)
		case beta == 0:
			for q, v := range src {
				dst[q] = alpha * v
			}
		default:
			for q, v := range src {
				dst[q] = float32(alpha*v) + float32(beta*dst[q])
			}
		}
	}
}

// scaleOnly is the k = 0 case, C = alpha·0 + beta·C as the dot-product
// kernels compute it (beta = 0 overwrites, NaNs included).
func (g *opGemm) scaleOnly(i0, i1, j0, j1 int) {
	var zero float32
	for i := i0; i < i1; i++ {
		dst := g.c[i*g.ldc+j0 : i*g.ldc+j1]
		for q := range dst {
			if g.beta == 0 {
				dst[q] = g.alpha * zero
			} else {
				dst[q] = float32(g.alpha*zero) + float32(g.beta*dst[q])
			}
		}
	}
}
