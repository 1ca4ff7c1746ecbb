package train

import "math"

// RMSNorm as in transformers' Qwen/Llama: y = w ∘ x / sqrt(mean(x²) + eps),
// computed in float32. The same pair serves the block norms (C = hidden, one
// row per token) and Qwen3's q/k norms (C = head_dim, one row per head).

// rmsnormForward normalises rows rows of width c. rstd keeps 1/sqrt(mean+eps)
// per row for the backward.
func rmsnormForward(out, rstd, inp, weight []float32, rows, c int, eps float32) {
	for r := range rows {
		x := inp[r*c : r*c+c]
		var ss float32
		for _, v := range x {
			ss += v * v
		}
		s := float32(1 / math.Sqrt(float64(ss/float32(c)+eps)))
		rstd[r] = s
		o := out[r*c : r*c+c]
		for i, v := range x {
			o[i] = weight[i] * (v * s)
		}
	}
}

// rmsnormBackward adds the input gradient to dinp and, when dweight is not
// nil, the weight gradient to dweight.
//
//	dx = s·(w∘dy) − s³/C · x · Σ(w∘dy∘x)
func rmsnormBackward(dinp, dweight, dout, inp, weight, rstd []float32, rows, c int) {
	for r := range rows {
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
