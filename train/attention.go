package train

import (
	"math"
	"sync"
)

// Causal grouped-query attention over packed sequences. q is
// [T, heads·headDim], k and v are [T, kvHeads·headDim]; query head h reads
// kv head h/(heads/kvHeads), as transformers' repeat_kv does. Tokens attend
// only within their own segment (sequence), so several sequences share one
// micro-batch without padding.
//
// Like FlashAttention, the forward keeps only each row's log-sum-exp (T ×
// heads floats), not the L×L probabilities: an 8k-token OpenClaw prompt
// would need gigabytes per layer for those. The backward recomputes each
// row's probabilities from q, k and the saved log-sum-exp.

type segment struct{ start, len int }

type attnShape struct {
	heads, kvHeads, headDim int
}

// forEachGroup runs fn for every (segment, kv head) pair, kv heads in
// parallel: each kv head's gradients are written by one goroutine only. fn
// gets a scratch row of the segment's length.
func forEachGroup(segs []segment, sh attnShape, fn func(s segment, g int, row []float32)) {
	var wg sync.WaitGroup
	for _, s := range segs {
		for g := range sh.kvHeads {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				fn(s, g, make([]float32, s.len))
			}(g)
		}
		// One segment at a time keeps the goroutine count bounded by kvHeads.
		wg.Wait()
	}
}

// attentionForward writes out and lse ([T, heads]: log Σ_j exp(s_ij) of each
// query row).
func attentionForward(out, lse, q, k, v []float32, segs []segment, sh attnShape) {
	hd := sh.headDim
	qs, ks := sh.heads*hd, sh.kvHeads*hd
	rep := sh.heads / sh.kvHeads
	scale := float32(1 / math.Sqrt(float64(hd)))
	forEachGroup(segs, sh, func(s segment, g int, row []float32) {
		for h := g * rep; h < (g+1)*rep; h++ {
			for i := range s.len {
				ti := s.start + i
				qi := q[ti*qs+h*hd : ti*qs+h*hd+hd]
				maxv := float32(math.Inf(-1))
				for j := 0; j <= i; j++ {
					tj := s.start + j
					row[j] = dot(qi, k[tj*ks+g*hd:tj*ks+g*hd+hd]) * scale
					maxv = max(maxv, row[j])
				}
				var sum float32
				for j := 0; j <= i; j++ {
					row[j] = float32(math.Exp(float64(row[j] - maxv)))
					sum += row[j]
				}
				lse[ti*sh.heads+h] = maxv + float32(math.Log(float64(sum)))
				inv := 1 / sum
				o := out[ti*qs+h*hd : ti*qs+h*hd+hd]
				clear(o)
				for j := 0; j <= i; j++ {
					tj := s.start + j
					axpy(row[j]*inv, v[tj*ks+g*hd:tj*ks+g*hd+hd], o)
				}
			}
		}
	})
}

// attentionBackward overwrites dq, dk and dv.
//
//	p_ij = exp(s_ij − lse_i)      D_i = dO_i·O_i  (= Σ_j p_ij dP_ij)
//	dP_ij = dO_i·v_j              dS_ij = p_ij (dP_ij − D_i)
//	dq_i += scale Σ_j dS_ij k_j   dk_j += scale dS_ij q_i   dv_j += p_ij dO_i
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
	forEachGroup(segs, sh, func(s segment, g int, _ []float32) {
		for h := g * rep; h < (g+1)*rep; h++ {
			for i := range s.len {
				ti := s.start + i
				qi := q[ti*qs+h*hd : ti*qs+h*hd+hd]
				doi := dout[ti*qs+h*hd : ti*qs+h*hd+hd]
				D := dot(doi, out[ti*qs+h*hd:ti*qs+h*hd+hd])
				l := lse[ti*sh.heads+h]
				dqi := dq[ti*qs+h*hd : ti*qs+h*hd+hd]
				for j := 0; j <= i; j++ {
					tj := s.start + j
					kj := k[tj*ks+g*hd : tj*ks+g*hd+hd]
					vj := v[tj*ks+g*hd : tj*ks+g*hd+hd]
					p := float32(math.Exp(float64(dot(qi, kj)*scale - l)))
					axpy(p, doi, dv[tj*ks+g*hd:tj*ks+g*hd+hd])
					ds := p * (dot(doi, vj) - D) * scale
					if ds == 0 {
						continue
					}
					axpy(ds, kj, dqi)
					axpy(ds, qi, dk[tj*ks+g*hd:tj*ks+g*hd+hd])
				}
			}
		}
	})
}
