package train

// RMSNorm's backward. The forward is model.RMSNorm (the serving forward,
// which sums squares in float64); it hands back each row's rstd =
// 1/sqrt(mean(x²) + eps), which the backward reads. The same backward serves
// the block norms (C = hidden, one row per token) and Qwen3's q/k norms
// (C = head_dim, one row per head).

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
