package train

import "math"

// The LM head, only on the rows that predict a response token: logits =
// h·Wᵀ, then the log-probability of each row's target and the entropy of its
// distribution. The logits buffer is overwritten with the probabilities,
// which is all the backward needs.

// lmheadForward fills logp[r] = log softmax(z_r)[target[r]] and
// entropy[r] = −Σ p log p, leaving softmax(z_r) in probs.
func lmheadForward(probs, logp, entropy, h, w []float32, target []int32, rows, c, vocab int) {
	matmulNT(probs, h, w, rows, vocab, c, false)
	parallelRows(rows, rows*vocab*8, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			z := probs[r*vocab : r*vocab+vocab]
			maxv := float32(math.Inf(-1))
			for _, v := range z {
				maxv = max(maxv, v)
			}
			var sum float64
			for _, v := range z {
				sum += math.Exp(float64(v - maxv))
			}
			lse := float64(maxv) + math.Log(sum)
			logp[r] = float32(float64(z[target[r]]) - lse)
			var ez float64 // E_p[z]
			for i, v := range z {
				p := math.Exp(float64(v) - lse)
				ez += p * float64(v)
				z[i] = float32(p)
			}
			entropy[r] = float32(lse - ez)
		}
	})
}

// lmheadBackward turns per-row d(loss)/d(logp) and d(loss)/d(entropy) into
// d(loss)/d(logits) in place of probs, then adds dh (overwritten) and, when
// dw is not nil, dW.
//
//	d logp/d z_j    = δ(j, target) − p_j
//	d entropy/d z_j = −p_j (log p_j + H)
func lmheadBackward(dh, dw, probs, dlogp, dentropy, entropy, h, w []float32, target []int32, rows, c, vocab int) {
	parallelRows(rows, rows*vocab*4, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			p := probs[r*vocab : r*vocab+vocab]
			gl, ge, H := dlogp[r], dentropy[r], entropy[r]
			for j, pj := range p {
				d := -gl * pj
				if ge != 0 && pj > 0 {
					d -= ge * pj * (float32(math.Log(float64(pj))) + H)
				}
				p[j] = d
			}
			p[target[r]] += gl
		}
	})
	matmulNN(dh, probs, w, rows, c, vocab, false)
	if dw != nil {
		matmulTN(dw, probs, h, vocab, c, rows, true)
	}
}
