package train

import (
	"cmp"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/clawrl/clawrl/blas"
	"github.com/clawrl/clawrl/model"
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
// The forward is model.AttendOne's arithmetic, four query rows at a time
// (model.AttendRows4; see attentionForward). The
// backward walks a segment in tiles of attnBlock queries × attnBlock keys,
// skipping tiles wholly above the diagonal and masking inside the diagonal
// one. While a tile's queries run, its keys and values (attnBlock × headDim
// each) stay in L1/L2 instead of being streamed from memory once per query:
// for Qwen3-0.6B at 8k tokens a head's keys and values are 8 MiB, strided
// across the 4 KiB rows of k and v.
//
// Every product inside a tile is a blas.WeightedRows, out = Σ_p w[p]·row_p:
// the AVX2 kernel broadcasts w[p] and adds it times a row into 8–32 lanes of
// out, so there is no horizontal sum per element. A dot-product kernel (blas
// DotRows, or Sgemm's 4×3 one) ends every output element with one, which
// at head_dim 16 costs more than the products themselves. To put each
// product in that form the tile's keys, values, queries and output
// gradients are transposed into scratch ([headDim, attnBlock]); the scores
// of query i against the block's keys are then Σ_d q_i[d]·Kᵀ[d, :].
// Exponentials are blas.ExpShift (AVX2, float32, about one ulp).
// (Sgemm itself would also split products this size across goroutines inside
// our goroutines, and its pure-Go path allocates a packed copy of any operand
// not laid out as rows along k.)
//
// Scratch is tile-sized (a few attnBlock × attnBlock and headDim ×
// attnBlock tiles per worker); no buffer grows with the square of the
// sequence length. The backward's scores are q·(k/√headDim) where the
// forward computed (q·k)/√headDim: they differ by rounding only, far below
// what a gradient notices.

type segment struct{ start, len int }

type attnShape struct {
	heads, kvHeads, headDim int
}

// attnBlock is the tile edge: queries per block and keys per block. 64 keys
// × 128 dims is 32 KiB of keys and as much of values for Qwen3-0.6B, which
// L2 holds easily next to the block's queries.
const attnBlock = 64

// attnMinParallel is the work (query-key pairs × query heads × head_dim)
// below which spreading over goroutines costs more than it saves.
const attnMinParallel = 1 << 16

// runItems calls fn(i, w) for every i < n, spread over up to workers
// goroutines that take items in order of decreasing cost; w < workers is the
// goroutine's index, for per-worker scratch. Every item must write outputs
// no other item touches, so results do not depend on which worker runs what,
// or when.
func runItems(workers, n int, cost func(i int) int64, fn func(i, w int)) {
	var total int64
	order := make([]int, n)
	for i := range order {
		order[i] = i
		total += cost(i)
	}
	workers = min(workers, n)
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

// rowMax returns the largest of m and the elements of x: blas.Max, whose
// vector kernel takes 32 at a time (the LM head's max pass walks 152k
// logits per row). Plain comparisons, not the builtin max, whose NaN and
// signed-zero rules cost a few instructions per element.
func rowMax(x []float32, m float32) float32 { return blas.Max(x, m) }

// scaleRow multiplies x by s in place.
func scaleRow(x []float32, s float32) { blas.Scale(x, s) }

// validKeys is how many keys of the block starting at key j0 (n keys in
// all) query i may see: all of them below the diagonal, a prefix on it.
func validKeys(i, j0, n int) int { return max(0, min(n, i-j0+1)) }

// transposeBlock writes the n×cols matrix whose row r starts at src[r*ld]
// transposed and multiplied by s into dst (cols × attnBlock, row stride
// attnBlock): dst[c*attnBlock+r] = s·src[r*ld+c]. Columns n..attnBlock-1 of
// dst are zeroed, so a short last block reads as zero keys rather than stale
// ones.
func transposeBlock(dst, src []float32, n, cols, ld int, s float32) {
	r := 0
	// Eight source rows at a time, so each destination row gets 32
	// contiguous bytes per visit instead of one scattered float.
	for ; r+8 <= n; r += 8 {
		s0, s1, s2, s3 := src[r*ld:r*ld+cols], src[(r+1)*ld:(r+1)*ld+cols], src[(r+2)*ld:(r+2)*ld+cols], src[(r+3)*ld:(r+3)*ld+cols]
		s4, s5, s6, s7 := src[(r+4)*ld:(r+4)*ld+cols], src[(r+5)*ld:(r+5)*ld+cols], src[(r+6)*ld:(r+6)*ld+cols], src[(r+7)*ld:(r+7)*ld+cols]
		for c := range cols {
			d := dst[c*attnBlock+r : c*attnBlock+r+8 : c*attnBlock+r+8]
			d[0], d[1], d[2], d[3] = s*s0[c], s*s1[c], s*s2[c], s*s3[c]
			d[4], d[5], d[6], d[7] = s*s4[c], s*s5[c], s*s6[c], s*s7[c]
		}
	}
	for ; r < n; r++ {
		row := src[r*ld : r*ld+cols]
		for c, x := range row {
			dst[c*attnBlock+r] = s * x
		}
	}
	if n < attnBlock {
		for c := range cols {
			clear(dst[c*attnBlock+n : (c+1)*attnBlock])
		}
	}
}

// packBlock copies n rows of cols elements, row r starting at src[r*ld],
// into dst with row stride cols. The rows of q, k and v are thousands of
// floats apart; a multiple of 4 KiB apart they all fall in the same L1
// sets and evict each other while a kernel sweeps down them, packed they
// do not.
func packBlock(dst, src []float32, n, cols, ld int) {
	for r := range n {
		copy(dst[r*cols:(r+1)*cols], src[r*ld:r*ld+cols])
	}
}

// width8 is n rounded up to a multiple of 8 (the vector width), at most
// attnBlock: how many columns of a score row to compute when n are needed.
func width8(n int) int { return min(attnBlock, (n+7)&^7) }

// attentionForward writes out and lse ([T, heads]: log Σ_j exp(s_ij) of each
// query row), where s_ij = q_i·k_j/√headDim. Each query row is
// model.AttendOne against its own segment's keys and values up to itself:
// the serving forward's attention, so a token's output here equals, bit for
// bit, the one it had when the engine generated it (its keys then sat in a
// KV cache; here they are the segment's rows of k and v, the same values).
// Four consecutive rows go through model.AttendRows4, which gives each of
// them AttendOne's bits while sharing the key loads of their scores. Work
// items (four rows, or one at a segment's end) are spread over cores by
// cost (the positions they attend); each writes its own rows of out and
// lse only.
func attentionForward(out, lse, q, k, v []float32, segs []segment, sh attnShape) {
	hd := sh.headDim
	qs, ks := sh.heads*hd, sh.kvHeads*hd
	// An item is four consecutive query rows of a segment
	// (model.AttendRows4: the four share their key loads, each row gets
	// AttendOne's bits), or one row at a segment's end.
	type item struct{ seg, i, n int }
	var items []item
	maxLen := 0
	for si, s := range segs {
		i := 0
		for ; i+4 <= s.len; i += 4 {
			items = append(items, item{si, i, 4})
		}
		for ; i < s.len; i++ {
			items = append(items, item{si, i, 1})
		}
		maxLen = max(maxLen, s.len)
	}
	workers := runtime.GOMAXPROCS(0)
	scr := make([][]float32, workers)
	cost := func(i int) int64 { return int64(items[i].i+items[i].n) * int64(items[i].n) * int64(qs) }
	runItems(workers, len(items), cost, func(it, w int) {
		if scr[w] == nil {
			scr[w] = make([]float32, 4*(maxLen+4))
		}
		s, i := segs[items[it].seg], items[it].i
		t := s.start + i
		if items[it].n == 4 {
			model.AttendRows4(out[t*qs:(t+4)*qs], lse[t*sh.heads:(t+4)*sh.heads], q[t*qs:(t+4)*qs],
				k[s.start*ks:], v[s.start*ks:], scr[w], i, qs, sh.heads, sh.kvHeads, hd)
			return
		}
		model.AttendOne(out[t*qs:(t+1)*qs], lse[t*sh.heads:(t+1)*sh.heads], q[t*qs:(t+1)*qs],
			k[s.start*ks:], v[s.start*ks:], scr[w], i+1, 0, sh.heads, sh.heads, sh.kvHeads, hd)
	})
}

// attentionBackward overwrites dq, dk and dv.
//
//	p_ij = exp(s_ij − lse_i)      D_i = dO_i·O_i  (= Σ_j p_ij dP_ij)
//	dP_ij = dO_i·v_j              dS_ij = p_ij (dP_ij − D_i)
//	dq_i += scale Σ_j dS_ij k_j   dk_j += scale Σ_i dS_ij q_i   dv_j += Σ_i p_ij dO_i
//
// Work items are (segment, kv head): every query head of the group adds into
// the same dk and dv rows, so one goroutine owns them, and it walks key
// blocks, query heads and query blocks in a fixed order, so the sums' order
// does not depend on scheduling. For a key block J it keeps dKᵀ and dVᵀ
// ([headDim, attnBlock]) while every query head and query block at or below
// the diagonal adds its tile:
//
//	P, dS        row i by row i (a query against the block's keys);
//	dq_i         += scale · Σ_j dS_ij k_j, a weighted sum of key rows;
//	dVᵀ[d, :]    += Σ_i dO_i[d] · P[i, :], a weighted sum of P's rows;
//	dKᵀ[d, :]    += scale · Σ_i q_i[d] · dS[i, :].
//
// and then writes dk and dv for the block's keys, transposed back.
func attentionBackward(dq, dk, dv, dout, lse, q, k, v, out []float32, segs []segment, sh attnShape) {
	hd := sh.headDim
	qs, ks := sh.heads*hd, sh.kvHeads*hd
	rep := sh.heads / sh.kvHeads
	scale := float32(1 / math.Sqrt(float64(hd)))
	for _, s := range segs {
		clear(dq[s.start*qs : (s.start+s.len)*qs])
	}

	// Scratch: kt (scaled), vt, qt, dot, dkt, dvt are transposed blocks,
	// kc a packed one (all headDim × attnBlock); p and ds attnBlock ×
	// attnBlock; tmp holds a row of either (or four of dq), tmp4 four rows
	// of a key block; d is D for the item's rows.
	type scratch struct{ kt, vt, kc, qt, dot, dkt, dvt, p, ds, tmp, tmp4, d []float32 }
	const tile = attnBlock * attnBlock
	workers := runtime.GOMAXPROCS(0)
	scr := make([]*scratch, workers)
	n := len(segs) * sh.kvHeads
	cost := func(i int) int64 {
		l := int64(segs[i/sh.kvHeads].len)
		return l * l * int64(rep*hd)
	}
	runItems(workers, n, cost, func(it, w int) {
		if scr[w] == nil {
			hb := hd * attnBlock
			scr[w] = &scratch{make([]float32, hb), make([]float32, hb), make([]float32, hb), make([]float32, hb),
				make([]float32, hb), make([]float32, hb), make([]float32, hb), make([]float32, tile), make([]float32, tile),
				make([]float32, max(4*hd, attnBlock)), make([]float32, 4*attnBlock), nil}
		}
		sc := scr[w]
		s, g := segs[it/sh.kvHeads], it%sh.kvHeads
		// D_i = dO_i·O_i for the group's heads, [rep, len]: used by every
		// key block, so computed once.
		if cap(sc.d) < rep*s.len {
			sc.d = make([]float32, rep*s.len)
		}
		for r := range rep {
			for i := range s.len {
				o := (s.start+i)*qs + (g*rep+r)*hd
				sc.d[r*s.len+i] = blas.Dot(dout[o:o+hd], out[o:o+hd])
			}
		}
		for j0 := 0; j0 < s.len; j0 += attnBlock {
			nk := min(attnBlock, s.len-j0)
			koff := (s.start+j0)*ks + g*hd
			kb, vb := k[koff:], v[koff:] // key j0+j is row j, stride ks
			transposeBlock(sc.kt, kb, nk, hd, ks, scale)
			transposeBlock(sc.vt, vb, nk, hd, ks, 1)
			packBlock(sc.kc, kb, nk, hd, ks)
			clear(sc.dkt)
			clear(sc.dvt)
			for h := g * rep; h < (g+1)*rep; h++ {
				// Query blocks from the diagonal one down.
				for i0 := j0 / attnBlock * attnBlock; i0 < s.len; i0 += attnBlock {
					nq := min(attnBlock, s.len-i0)
					qoff := (s.start+i0)*qs + h*hd
					qb, dob := q[qoff:], dout[qoff:] // query i0+i is row i, stride qs
					transposeBlock(sc.qt, qb, nq, hd, qs, 1)
					transposeBlock(sc.dot, dob, nq, hd, qs, 1)
					// Query rows: P, dP → dS, and dq.
					for i := range nq {
						p := sc.p[i*attnBlock : (i+1)*attnBlock]
						ds := sc.ds[i*attnBlock : (i+1)*attnBlock]
						nv := validKeys(i0+i, j0, nk)
						if nv == 0 {
							clear(p)
							clear(ds)
							continue
						}
						qi, doi := qb[i*qs:i*qs+hd], dob[i*qs:i*qs+hd]
						wv := width8(nv)
						blas.WeightedRows(p[:wv], qi, sc.kt, attnBlock)
						expShiftRow(p[:nv], lse[(s.start+i0+i)*sh.heads+h])
						clear(p[nv:])
						blas.WeightedRows(ds[:wv], doi, sc.vt, attnBlock)
						di := sc.d[(h-g*rep)*s.len+i0+i]
						for j, pj := range p[:nv] {
							ds[j] = pj * (ds[j] - di)
						}
						clear(ds[nv:])
					}
					// dq_i += scale·Σ_j dS_ij k_j, four query rows at a time
					// sharing the key rows' loads; dS is zero past a row's
					// valid keys, so each row gets the sum it gets alone.
					i := 0
					for ; i+4 <= nq; i += 4 {
						kmax := validKeys(i0+i+3, j0, nk)
						if kmax == 0 {
							continue
						}
						blas.WeightedRows4(sc.tmp, hd, hd, sc.ds[i*attnBlock:], attnBlock, kmax, sc.kc, hd)
						for d := range 4 {
							if validKeys(i0+i+d, j0, nk) == 0 {
								continue
							}
							o := (s.start+i0+i+d)*qs + h*hd
							blas.Axpy(scale, sc.tmp[d*hd:(d+1)*hd], dq[o:o+hd])
						}
					}
					for ; i < nq; i++ {
						nv := validKeys(i0+i, j0, nk)
						if nv == 0 {
							continue
						}
						blas.WeightedRows(sc.tmp[:hd], sc.ds[i*attnBlock:i*attnBlock+nv], sc.kc, hd)
						o := (s.start+i0+i)*qs + h*hd
						blas.Axpy(scale, sc.tmp[:hd], dq[o:o+hd])
					}
					// Key columns: dVᵀ and dKᵀ, one head dimension at a time.
					// Four head dimensions at a time share P's and dS's row
					// loads; each element is the sum WeightedRows gives.
					wk := width8(nk)
					d := 0
					for ; d+4 <= hd; d += 4 {
						blas.WeightedRows4(sc.tmp4, attnBlock, wk, sc.dot[d*attnBlock:], attnBlock, nq, sc.p, attnBlock)
						for e := range 4 {
							blas.Axpy(1, sc.tmp4[e*attnBlock:e*attnBlock+wk], sc.dvt[(d+e)*attnBlock:(d+e)*attnBlock+wk])
						}
						blas.WeightedRows4(sc.tmp4, attnBlock, wk, sc.qt[d*attnBlock:], attnBlock, nq, sc.ds, attnBlock)
						for e := range 4 {
							blas.Axpy(scale, sc.tmp4[e*attnBlock:e*attnBlock+wk], sc.dkt[(d+e)*attnBlock:(d+e)*attnBlock+wk])
						}
					}
					for ; d < hd; d++ {
						blas.WeightedRows(sc.tmp[:wk], sc.dot[d*attnBlock:d*attnBlock+nq], sc.p, attnBlock)
						blas.Axpy(1, sc.tmp[:wk], sc.dvt[d*attnBlock:d*attnBlock+wk])
						blas.WeightedRows(sc.tmp[:wk], sc.qt[d*attnBlock:d*attnBlock+nq], sc.ds, attnBlock)
						blas.Axpy(scale, sc.tmp[:wk], sc.dkt[d*attnBlock:d*attnBlock+wk])
					}
				}
			}
			for j := range nk {
				o := (s.start+j0+j)*ks + g*hd
				dkj, dvj := dk[o:o+hd], dv[o:o+hd]
				for d := range hd {
					dkj[d] = sc.dkt[d*attnBlock+j]
					dvj[d] = sc.dvt[d*attnBlock+j]
				}
			}
		}
	})
}
