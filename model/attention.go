package model

import (
	"math"

	"github.com/clawrl/clawrl/blas"
	"runtime"
	"sync"
)

// attendOne computes causal grouped-query attention for one query row:
// q is [nHeads, headDim]; keys and values are the sequence's cache for this
// layer, [nPos, nKV·headDim], holding every position the row may see
// (itself and those before it). out is [nHeads, headDim]; att is scratch of
// at least nPos. Query head h reads key/value head h / (nHeads/nKV).
//
// The dot products and the weighted sum run on blas's vector kernels in a
// fixed order, so a row's output does not depend on the rows computed with
// it (prefill and decode agree bitwise).
func attendOne(out, q, keys, values, att []float32, nPos, nHeads, nKV, headDim int) {
	group := nHeads / nKV
	kvDim := nKV * headDim
	scale := float32(1 / math.Sqrt(float64(headDim)))
	att = att[:nPos]
	for h := 0; h < nHeads; h++ {
		qh := q[h*headDim : (h+1)*headDim]
		kvOff := (h / group) * headDim
		blas.DotRows(att, qh, keys[kvOff:], kvDim)
		maxv := float32(math.Inf(-1))
		for p := range att {
			att[p] *= scale
			maxv = max(maxv, att[p])
		}
		done, sum := blas.ExpShift(att, maxv)
		for p := done; p < len(att); p++ {
			e := expf(att[p] - maxv)
			att[p] = e
			sum += e
		}
		inv := 1 / sum
		for p := range att {
			att[p] *= inv
		}
		blas.WeightedRows(out[h*headDim:(h+1)*headDim], att, values[kvOff:], kvDim)
	}
}

// attentionForward runs attendOne for every row of a batch, each against
// its own sequence's cache up to its own position, spread across cores.
// q and out are [rows, nHeads·headDim].
func attentionForward(out, q []float32, rows []batchRow, layer, nHeads, nKV, headDim int) {
	qDim := nHeads * headDim
	work := func(lo, hi int) {
		var att []float32
		for r := lo; r < hi; r++ {
			row := rows[r]
			nPos := row.pos + 1
			if cap(att) < nPos {
				att = make([]float32, nPos)
			}
			kv := &row.seq.layers[layer]
			attendOne(out[r*qDim:(r+1)*qDim], q[r*qDim:(r+1)*qDim], kv.k, kv.v, att, nPos, nHeads, nKV, headDim)
		}
	}
	// Work grows with the positions attended; split rows into chunks of
	// roughly equal cost so a prefill's late rows do not all land on one core.
	workers := runtime.GOMAXPROCS(0)
	var total int64
	for _, r := range rows {
		total += int64(r.pos + 1)
	}
	if workers <= 1 || len(rows) < 2 || total*int64(qDim) < 1<<15 {
		work(0, len(rows))
		return
	}
	per := total/int64(workers) + 1
	var wg sync.WaitGroup
	lo := 0
	var acc int64
	for r := range rows {
		acc += int64(rows[r].pos + 1)
		if acc >= per || r == len(rows)-1 {
			wg.Add(1)
			go func(lo, hi int) {
				defer wg.Done()
				work(lo, hi)
			}(lo, r+1)
			lo, acc = r+1, 0
		}
	}
	wg.Wait()
}
