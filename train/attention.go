package train

import (
	"math"
	"sync"
)

// Causal grouped-query attention over packed sequences. q is
// [T, heads·headDim], k and v are [T, kvHeads·headDim]; query head h reads
// kv head h/(heads/kvHeads), as transformers' repeat_kv does. Tokens attend
// only within their own segment (sequence), so several sequences share one
// micro-batch without padding. The softmax probabilities are kept for the
// backward: per segment of length L, heads × L × L floats.

type segment struct{ start, len int }

// probsSize is how many floats the attention probabilities of segs take.
func probsSize(segs []segment, heads int) int {
	n := 0
	for _, s := range segs {
		n += heads * s.len * s.len
	}
	return n
}

type attnShape struct {
	heads, kvHeads, headDim int
}

// forEachGroup runs fn for every (segment, kv head) pair, kv heads in
// parallel: each kv head's gradients are written by one goroutine only.
func forEachGroup(segs []segment, sh attnShape, fn func(segIdx, probOff, g int)) {
	var wg sync.WaitGroup
	off := 0
	for si, s := range segs {
		for g := range sh.kvHeads {
			wg.Add(1)
			go func(si, off, g int) {
				defer wg.Done()
				fn(si, off, g)
			}(si, off, g)
		}
		off += sh.heads * s.len * s.len
		// One segment at a time keeps the goroutine count bounded by kvHeads.
		wg.Wait()
	}
}

func attentionForward(out, probs, q, k, v []float32, segs []segment, sh attnShape) {
	hd := sh.headDim
	qs, ks := sh.heads*hd, sh.kvHeads*hd
	rep := sh.heads / sh.kvHeads
	scale := float32(1 / math.Sqrt(float64(hd)))
	forEachGroup(segs, sh, func(si, probOff, g int) {
		s := segs[si]
		L := s.len
		for h := g * rep; h < (g+1)*rep; h++ {
			P := probs[probOff+h*L*L : probOff+(h+1)*L*L]
			for i := range L {
				qi := q[(s.start+i)*qs+h*hd : (s.start+i)*qs+h*hd+hd]
				row := P[i*L : i*L+L]
				maxv := float32(math.Inf(-1))
				for j := 0; j <= i; j++ {
					kj := k[(s.start+j)*ks+g*hd : (s.start+j)*ks+g*hd+hd]
					row[j] = dot(qi, kj) * scale
					maxv = max(maxv, row[j])
				}
				var sum float32
				for j := 0; j <= i; j++ {
					row[j] = float32(math.Exp(float64(row[j] - maxv)))
					sum += row[j]
				}
				inv := 1 / sum
				for j := 0; j <= i; j++ {
					row[j] *= inv
				}
				clear(row[i+1:])
				o := out[(s.start+i)*qs+h*hd : (s.start+i)*qs+h*hd+hd]
				clear(o)
				for j := 0; j <= i; j++ {
					axpy(row[j], v[(s.start+j)*ks+g*hd:(s.start+j)*ks+g*hd+hd], o)
				}
			}
		}
	})
}

// attentionBackward overwrites dq, dk and dv.
func attentionBackward(dq, dk, dv, dout, probs, q, k, v []float32, segs []segment, sh attnShape) {
	hd := sh.headDim
	qs, ks := sh.heads*hd, sh.kvHeads*hd
	rep := sh.heads / sh.kvHeads
	scale := float32(1 / math.Sqrt(float64(hd)))
	for _, s := range segs {
		clear(dq[s.start*qs : (s.start+s.len)*qs])
		clear(dk[s.start*ks : (s.start+s.len)*ks])
		clear(dv[s.start*ks : (s.start+s.len)*ks])
	}
	forEachGroup(segs, sh, func(si, probOff, g int) {
		s := segs[si]
		L := s.len
		dP := make([]float32, L)
		for h := g * rep; h < (g+1)*rep; h++ {
			P := probs[probOff+h*L*L : probOff+(h+1)*L*L]
			for i := range L {
				row := P[i*L : i*L+L]
				doi := dout[(s.start+i)*qs+h*hd : (s.start+i)*qs+h*hd+hd]
				var sum float32
				for j := 0; j <= i; j++ {
					vj := v[(s.start+j)*ks+g*hd : (s.start+j)*ks+g*hd+hd]
					dP[j] = dot(doi, vj)
					sum += row[j] * dP[j]
					// dV_j += P_ij · dO_i
					axpy(row[j], doi, dv[(s.start+j)*ks+g*hd:(s.start+j)*ks+g*hd+hd])
				}
				qi := q[(s.start+i)*qs+h*hd : (s.start+i)*qs+h*hd+hd]
				dqi := dq[(s.start+i)*qs+h*hd : (s.start+i)*qs+h*hd+hd]
				for j := 0; j <= i; j++ {
					ds := row[j] * (dP[j] - sum) * scale
					if ds == 0 {
						continue
					}
					axpy(ds, k[(s.start+j)*ks+g*hd:(s.start+j)*ks+g*hd+hd], dqi)
					axpy(ds, qi, dk[(s.start+j)*ks+g*hd:(s.start+j)*ks+g*hd+hd])
				}
			}
		}
	})
}
