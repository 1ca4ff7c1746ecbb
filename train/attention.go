package train

import (
	"cmp"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/clawrl/clawrl/blas"
)

// Causal grouped-query attention over packed sequences. q is
// [T, heads·headDim], k and v are [T, kvHeads·headDim]; query head h reads
// kv head h/(heads/kvHeads), as transformers' repeat_kv does. Tokens attend
// only within their own segment (sequence), so several sequences share one
// micro-batch without padding.
//
// Like FlashAttention, the forward keeps only each row's log-sum-exp (T ×
// heads floats), not the L×L probabilities: an 8k-token OpenClaw prompt
// would need gigabytes per layer for those. The backward recomputes the
// probabilities from q, k and the saved log-sum-exp.
//
// Both passes walk a segment in tiles of attnBlock queries × attnBlock keys,
// skipping tiles wholly above the diagonal and masking inside the diagonal
// one. While a tile's queries run, its keys and values (attnBlock × headDim
// each) stay in L1/L2 instead of being streamed from memory once per query:
// for Qwen3-0.6B at 8k tokens a head's keys and values are 8 MiB, strided
// across the 4 KiB rows of k and v. Inside a tile the work is done row by
// row on blas's vector kernels, the ones inference uses (model/attention.go):
// DotRows for scores (q_i·k_j for a row of keys), ExpShift for the
// exponentials (AVX2, float32, about one ulp), WeightedRows for the
// probability-weighted sums of value, key, query or output-gradient rows, and
// Axpy to add those into their accumulators. Sgemm would be the textbook
// choice for the tile products, but with head_dim 16–128 its 4×3 kernel
// spends as much per element on horizontal sums as DotRows does, it
// parallelises products this size itself (goroutines inside our
// goroutines), and its pure-Go path packs (allocates) every operand that is
// not already "rows along k".
//
// Scratch is tile-sized (a few attnBlock×attnBlock tiles per worker); no
// buffer grows with the square of the sequence length.

type segment struct{ start, len int }

type attnShape struct {
	heads, kvHeads, headDim int
}

// attnBlock is the tile edge: queries per block and keys per block. 64 keys
// × 128 dims is 32 KiB of keys and as much of values for Qwen3-0.6B, which
// L2 holds easily next to the block's queries.
const attnBlock = 64

// attnMinParallel is the work (query-key pairs × head_dim) below which
// spreading over goroutines costs more than it saves.
const attnMinParallel = 1 << 16

// runItems calls fn(i, w) for every i < n, spread over up to GOMAXPROCS
// workers that take items in order of decreasing cost; w is the worker's
// index, for per-worker scratch. Every item must write outputs no other item
// touches, so results do not depend on which worker runs what, or when.
func runItems(n int, cost func(i int) int64, fn func(i, w int)) {
	var total int64
	order := make([]int, n)
	for i := range order {
		order[i] = i
		total += cost(i)
	}
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 || total < attnMinParallel {
		for i := range n {
			fn(i, 0)
		}
		return
	}
	// Longest first: the big segment's items start at once and the short
	// ones fill in around them.
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(cost(b), cost(a)) })
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				fn(order[i], w)
			}
		}()
	}
	wg.Wait()
}

// attnBlocks is the number of attnBlock-sized blocks covering n positions.
func attnBlocks(n int) int { return (n + attnBlock - 1) / attnBlock }

// expShiftRow replaces x[j] by exp(x[j] − shift) and returns their sum:
// blas's vector exponential for the bulk, math.Exp for the last few (and
// everything on CPUs without AVX2). Every x[j] − shift should be ≤ 0 (up to
// rounding), as in a softmax.
func expShiftRow(x []float32, shift float32) float32 {
	done, sum := blas.ExpShift(x, shift)
	for j := done; j < len(x); j++ {
		e := float32(math.Exp(float64(x[j] - shift)))
		x[j] = e
		sum += e
	}
	return sum
}

// scaleRow multiplies x by s in place.
func scaleRow(x []float32, s float32) {
	for j := range x {
		x[j] *= s
	}
}

// validKeys is how many keys of the block starting at key j0 (n keys in
// all) query i may see: all of them below the diagonal, a prefix on it.
func validKeys(i, j0, n int) int { return max(0, min(n, i-j0+1)) }

// attentionForward writes out and lse ([T, heads]: log Σ_j exp(s_ij) of each
// query row), where s_ij = q_i·k_j/√headDim.
//
// It is FlashAttention's online softmax: a query block walks its key blocks
// left to right keeping, per row, the running maximum m, the running sum
// l = Σ_j exp(s_ij − m) and the unnormalised output o = Σ_j exp(s_ij − m) v_j.
// When a key block raises the maximum to m', the old l and o are rescaled by
// α = exp(m − m') before the block's terms are added. At the end
// out_i = o/l and lse_i = m + log l.
//
// Work items are (segment, query head, query block): each writes its own
// rows of out and lse only.
func attentionForward(out, lse, q, k, v []float32, segs []segment, sh attnShape) {
	hd := sh.headDim
	qs, ks := sh.heads*hd, sh.kvHeads*hd
	rep := sh.heads / sh.kvHeads
	scale := float32(1 / math.Sqrt(float64(hd)))

	type item struct{ seg, h, ib int }
	var items []item
	for si, s := range segs {
		for h := range sh.heads {
			for ib := range attnBlocks(s.len) {
				items = append(items, item{si, h, ib})
			}
		}
	}
	type scratch struct{ row, tmp, m, l []float32 }
	scr := make([]*scratch, runtime.GOMAXPROCS(0))
	cost := func(i int) int64 { return int64(items[i].ib+1) * attnBlock * attnBlock * int64(hd) }
	runItems(len(items), cost, func(it, w int) {
		if scr[w] == nil {
			scr[w] = &scratch{make([]float32, attnBlock), make([]float32, hd), make([]float32, attnBlock), make([]float32, attnBlock)}
		}
		sc := scr[w]
		s, h, ib := segs[items[it].seg], items[it].h, items[it].ib
		g := h / rep
		i0 := ib * attnBlock
		i1 := min(i0+attnBlock, s.len)
		qoff := func(i int) int { return (s.start+i)*qs + h*hd }
		for i := i0; i < i1; i++ {
			sc.m[i-i0] = float32(math.Inf(-1))
			sc.l[i-i0] = 0
			clear(out[qoff(i) : qoff(i)+hd])
		}
		for j0 := 0; j0 < i1; j0 += attnBlock {
			nk := min(attnBlock, s.len-j0)
			kb := k[(s.start+j0)*ks+g*hd:] // key j0+j is row j of kb, stride ks
			vb := v[(s.start+j0)*ks+g*hd:]
			for i := i0; i < i1; i++ {
				nv := validKeys(i, j0, nk)
				if nv == 0 {
					continue
				}
				row := sc.row[:nv]
				blas.DotRows(row, q[qoff(i):qoff(i)+hd], kb, ks)
				scaleRow(row, scale)
				m := sc.m[i-i0]
				mNew := m
				for _, x := range row {
					mNew = max(mNew, x)
				}
				sum := expShiftRow(row, mNew)
				// α = exp(m − m'): 0 on the first block (m = −∞), 1 when
				// the maximum did not move.
				alpha := float32(math.Exp(float64(m - mNew)))
				sc.l[i-i0] = sc.l[i-i0]*alpha + sum
				sc.m[i-i0] = mNew
				o := out[qoff(i) : qoff(i)+hd]
				if alpha != 1 {
					scaleRow(o, alpha)
				}
				blas.WeightedRows(sc.tmp, row, vb, ks)
				blas.Axpy(1, sc.tmp, o)
			}
		}
		for i := i0; i < i1; i++ {
			l := sc.l[i-i0]
			scaleRow(out[qoff(i):qoff(i)+hd], 1/l)
			lse[(s.start+i)*sh.heads+h] = sc.m[i-i0] + float32(math.Log(float64(l)))
		}
	})
}

// attentionBackward overwrites dq, dk and dv.
//
//	p_ij = exp(s_ij − lse_i)      D_i = dO_i·O_i  (= Σ_j p_ij dP_ij)
//	dP_ij = dO_i·v_j              dS_ij = p_ij (dP_ij − D_i)
//	dq_i += scale Σ_j dS_ij k_j   dk_j += scale Σ_i dS_ij q_i   dv_j += Σ_i p_ij dO_i
//
// For a (query block, key block) tile the P and dS tiles are built row by row
// (query rows: a query's scores against the block's keys); dq is summed
// along those rows. dk and dv need the sums down the columns, so the two
// tiles are transposed and summed along their rows as well.
//
// Work items are (segment, kv head): every query head of the group adds into
// the same dk and dv rows, so one goroutine owns them, and it walks query
// heads, query blocks and key blocks in a fixed order, so the sums' order
// does not depend on scheduling.
func attentionBackward(dq, dk, dv, dout, lse, q, k, v, out []float32, segs []segment, sh attnShape) {
	hd := sh.headDim
	qs, ks := sh.heads*hd, sh.kvHeads*hd
	rep := sh.heads / sh.kvHeads
	scale := float32(1 / math.Sqrt(float64(hd)))
	for _, s := range segs {
		clear(dq[s.start*qs : (s.start+s.len)*qs])
		clear(dk[s.start*ks : (s.start+s.len)*ks])
		clear(dv[s.start*ks : (s.start+s.len)*ks])
	}

	type scratch struct{ p, ds, pt, dst, tmp, d []float32 }
	const tile = attnBlock * attnBlock
	scr := make([]*scratch, runtime.GOMAXPROCS(0))
	n := len(segs) * sh.kvHeads
	cost := func(i int) int64 {
		l := int64(segs[i/sh.kvHeads].len)
		return l * l * int64(rep*hd)
	}
	runItems(n, cost, func(it, w int) {
		if scr[w] == nil {
			scr[w] = &scratch{make([]float32, tile), make([]float32, tile), make([]float32, tile), make([]float32, tile),
				make([]float32, hd), make([]float32, attnBlock)}
		}
		sc := scr[w]
		s, g := segs[it/sh.kvHeads], it%sh.kvHeads
		for h := g * rep; h < (g+1)*rep; h++ {
			qoff := func(i int) int { return (s.start+i)*qs + h*hd }
			for i0 := 0; i0 < s.len; i0 += attnBlock {
				nq := min(attnBlock, s.len-i0)
				for i := range nq {
					o := qoff(i0 + i)
					sc.d[i] = blas.Dot(dout[o:o+hd], out[o:o+hd])
				}
				qb := q[qoff(i0):] // query i0+i is row i of qb, stride qs
				dob := dout[qoff(i0):]
				for j0 := 0; j0 < i0+nq; j0 += attnBlock {
					nk := min(attnBlock, s.len-j0)
					koff := (s.start+j0)*ks + g*hd
					kb, vb := k[koff:], v[koff:]
					// Query rows: P, dP → dS, and dq.
					for i := range nq {
						p := sc.p[i*attnBlock : (i+1)*attnBlock]
						ds := sc.ds[i*attnBlock : (i+1)*attnBlock]
						nv := validKeys(i0+i, j0, nk)
						clear(p[nv:])
						clear(ds[nv:])
						if nv == 0 {
							continue
						}
						p, ds = p[:nv], ds[:nv]
						blas.DotRows(p, qb[i*qs:i*qs+hd], kb, ks)
						scaleRow(p, scale)
						expShiftRow(p, lse[(s.start+i0+i)*sh.heads+h])
						blas.DotRows(ds, dob[i*qs:i*qs+hd], vb, ks)
						di := sc.d[i]
						for j, pj := range p {
							ds[j] = pj * (ds[j] - di)
						}
						blas.WeightedRows(sc.tmp, ds, kb, ks)
						o := qoff(i0 + i)
						blas.Axpy(scale, sc.tmp, dq[o:o+hd])
					}
					// Key rows: transpose the tiles, then dv and dk.
					transposeTile(sc.pt, sc.p, nq, nk)
					transposeTile(sc.dst, sc.ds, nq, nk)
					for j := range nk {
						// Queries before key j0+j do not see it.
						lo := max(0, j0+j-i0)
						if lo >= nq {
							continue
						}
						o := (s.start+j0+j)*ks + g*hd
						blas.WeightedRows(sc.tmp, sc.pt[j*attnBlock+lo:j*attnBlock+nq], dob[lo*qs:], qs)
						blas.Axpy(1, sc.tmp, dv[o:o+hd])
						blas.WeightedRows(sc.tmp, sc.dst[j*attnBlock+lo:j*attnBlock+nq], qb[lo*qs:], qs)
						blas.Axpy(scale, sc.tmp, dk[o:o+hd])
					}
				}
			}
		}
	})
}

// transposeTile writes the nq×nk top-left corner of src (row stride
// attnBlock) transposed into dst (row stride attnBlock).
func transposeTile(dst, src []float32, nq, nk int) {
	for i := range nq {
		row := src[i*attnBlock : i*attnBlock+nk]
		for j, x := range row {
			dst[j*attnBlock+i] = x
		}
	}
}
