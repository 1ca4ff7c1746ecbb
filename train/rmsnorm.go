package train

import "github.com/clawrl/clawrl/model"

// RMSNorm's backward. The forward is model.RMSNorm (the serving forward,
// which sums squares in float64); it hands back each row's rstd =
// 1/sqrt(mean(x²) + eps), which the backward reads. The same backward serves
// the block norms (C = hidden, one row per token) and Qwen3's q/k norms
// (C = head_dim, one row per head).

// rmsnormForward is model.RMSNorm over row ranges on every core: rows are
// independent, so the same bits as one call.
func rmsnormForward(out, rstd, inp, weight []float32, rows, c int, eps float32) {
	parallelRows(rows, 4*rows*c, func(lo, hi int) {
		model.RMSNorm(out[lo*c:hi*c], rstd[lo:hi], inp[lo*c:hi*c], weight, hi-lo, c, eps)
	})
}

// rmsnormBackward adds the input gradient to dinp and, when dweight is not
// nil, the weight gradient to dweight. Rows run on every core when the
// weight is frozen (a trained weight's gradient sums over rows in order).
//
//	dx = s·(w∘dy) − s³/C · x · Σ(w∘dy∘x)
func rmsnormBackward(dinp, dweight, dout, inp, weight, rstd []float32, rows, c int) {
	if dweight == nil {
		parallelRows(rows, 6*rows*c, func(lo, hi int) {
			rmsnormBackwardRows(dinp, nil, dout, inp, weight, rstd, lo, hi, c)
		})
		return
	}
	rmsnormBackwardRows(dinp, dweight, dout, inp, weight, rstd, 0, rows, c)
}

func rmsnormBackwardRows(dinp, dweight, dout, inp, weight, rstd []float32, lo, hi, c int) {
	for r := lo; r < hi; r++ {
		x := inp[r*c : r*c+c]
		dy := dout[r*c : r*c+c]
		dx := dinp[r*c : r*c+c]
		s := rstd[r]
		var sum float32
		for i, v := range x {
			sum += weight[i] * dy[i] * v
		}
		k := s * s * s * sum / float32(c)
		for i, v := range x {
			dx[i] += s*weight[i]*dy[i] - k*v
		}
		if dweight != nil {
			for i, v := range x {
				dweight[i] += dy[i] * v * s
			}
		}
	}
}
