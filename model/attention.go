package model

import (
	"math"
	"runtime"

	"github.com/clawrl/clawrl/blas"
	"github.com/clawrl/clawrl/quant"
)

// attendOne computes causal grouped-query attention for one query row:
// q is [nHeads, headDim]; keys and values are the sequence's cache for this
// layer, [nPos, nKV·headDim], holding every position the row may see
// (itself and those before it). out is [nHeads, headDim]; att is scratch of
// at least nPos. Query head h reads key/value head h / (nHeads/nKV). Only
// heads [h0, h1) are computed, so one row's heads can be split across cores.
// lse, when not nil ([nHeads]), receives each computed head's log-sum-exp of
// its scaled scores (the trainer's attention backward recomputes the
// probabilities from it).
//
// The dot products and the weighted sum run on blas's vector kernels in a
// fixed order, so a row's output does not depend on the rows computed with
// it (prefill and decode agree bitwise).
func attendOne(out, lse, q, keys, values, att []float32, nPos, h0, h1, nHeads, nKV, headDim int) {
	group := nHeads / nKV
	kvDim := nKV * headDim
	att = att[:nPos]
	for h := h0; h < h1; h++ {
		qh := q[h*headDim : (h+1)*headDim]
		kvOff := (h / group) * headDim
		blas.DotRows(att, qh, keys[kvOff:], kvDim)
		var l *float32
		if lse != nil {
			l = &lse[h]
		}
		attendScores(out[h*headDim:(h+1)*headDim], l, att, values[kvOff:], kvDim, headDim)
	}
}

// attendScores finishes one head of one query row from its raw scores att
// (q·k for each position it sees, overwritten): the scaled scores'
// softmax, its log-sum-exp into *lse when lse is not nil, and the weighted
// sum of the value rows (row p at values[p*ld], headDim wide) into out.
func attendScores(out []float32, lse *float32, att, values []float32, ld, headDim int) {
	// Vector scaling and max: the same products; the max differs from the
	// builtin's only for NaN scores and ±0 ties, where every later value
	// comes out the same.
	blas.Scale(att, float32(1/math.Sqrt(float64(headDim))))
	maxv := blas.Max(att, float32(math.Inf(-1)))
	done, sum := blas.ExpShift(att, maxv)
	for p := done; p < len(att); p++ {
		e := expf(att[p] - maxv)
		att[p] = e
		sum += e
	}
	if lse != nil {
		*lse = maxv + float32(math.Log(float64(sum)))
	}
	blas.Scale(att, 1/sum)
	blas.WeightedRows(out, att, values, ld)
}

// attendRows4 is attendOne for four consecutive query rows of one sequence,
// every head, the first at position pos (it sees pos+1 positions, the next
// one more, and so on): q and out are [4, nHeads·headDim] with row stride
// qDim, lse (or nil) [4, nHeads]. The four rows' scores against a head's
// keys come from one blas.DotRows4, which shares the key loads and gives
// each score DotRows's bits; a row's scores past its own position are
// computed and dropped. So each row's output and log-sum-exp are the ones
// attendOne gives it, bit for bit. att is scratch of at least 4·(pos+4).
func attendRows4(out, lse, q, keys, values, att []float32, pos, qDim, nHeads, nKV, headDim int) {
	group := nHeads / nKV
	kvDim := nKV * headDim
	n := pos + 4
	att = att[:4*n]
	for h := range nHeads {
		kvOff := (h / group) * headDim
		blas.DotRows4(att, n, q[h*headDim:], qDim, headDim, n, keys[kvOff:], kvDim)
		for r := range 4 {
			var l *float32
			if lse != nil {
				l = &lse[r*nHeads+h]
			}
			o := r*qDim + h*headDim
			attendScores(out[o:o+headDim], l, att[r*n:r*n+pos+1+r], values[kvOff:], kvDim, headDim)
		}
	}
}

// attentionForward runs attendOne for every row of a batch, each against
// its own sequence's cache up to its own position, spread across cores.
// q and out are [rows, nHeads·headDim].
func attentionForward(out, q []float32, rows []batchRow, layer, nHeads, nKV, headDim int) {
	qDim := nHeads * headDim
	workers := runtime.GOMAXPROCS(0)
	// Work items are (row, range of heads). With fewer rows than cores
	// (decoding one or two long sequences) each row's heads are split by
	// key/value group so every core has work; otherwise a row is one item.
	type item struct{ row, h0, h1 int }
	splits := 1
	if len(rows) < workers {
		splits = nKV
	}
	perSplit := nHeads / splits
	items := make([]item, 0, len(rows)*splits)
	var total int64
	for r, row := range rows {
		for s := 0; s < splits; s++ {
			items = append(items, item{r, s * perSplit, (s + 1) * perSplit})
		}
		total += int64(row.pos+1) * int64(splits)
	}
	work := func(lo, hi int) {
		var att []float32
		for _, it := range items[lo:hi] {
			row := rows[it.row]
			nPos := row.pos + 1
			if cap(att) < nPos {
				att = make([]float32, nPos)
			}
			kv := &row.seq.layers[layer]
			attendOne(out[it.row*qDim:(it.row+1)*qDim], nil, q[it.row*qDim:(it.row+1)*qDim], kv.k, kv.v, att, nPos, it.h0, it.h1, nHeads, nKV, headDim)
		}
	}
	if workers <= 1 || len(items) < 2 || total*int64(qDim)/int64(splits) < 1<<15 {
		work(0, len(items))
		return
	}
	// Work grows with the positions attended; split items into chunks of
	// roughly equal cost so a prefill's late rows do not all land on one core.
	// The chunks run on quant's spinning worker pool: a decode step has one
	// such region per layer, too short to pay a thread wake-up each.
	per := total/int64(workers) + 1
	var fns []func()
	lo := 0
	var acc int64
	for i, it := range items {
		acc += int64(rows[it.row].pos + 1)
		if acc >= per || i == len(items)-1 {
			a, b := lo, i+1
			fns = append(fns, func() { work(a, b) })
			lo, acc = b, 0
		}
	}
	quant.Parallel(fns)
}
