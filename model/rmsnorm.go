package model

import "math"

// rmsnormForward normalises each of the N rows of C values in inp by its
// root mean square and scales by weight: out = w · x / sqrt(mean(x²) + eps).
// It also serves Qwen3's per-head q/k norms (rows = tokens × heads,
// C = head_dim). out may alias inp. rstd, when not nil, receives each row's
// 1/sqrt(mean(x²) + eps) (the trainer's backward reads it).
func rmsnormForward(out, rstd, inp, weight []float32, N, C int, eps float32) {
	weight = weight[:C]
	for r := 0; r < N; r++ {
		x := inp[r*C : (r+1)*C]
		o := out[r*C : (r+1)*C]
		var ss float64
		for _, v := range x {
			ss += float64(float64(v) * float64(v))
		}
		s := float32(1 / math.Sqrt(float64(float32(ss/float64(C))+eps)))
		if rstd != nil {
			rstd[r] = s
		}
		for i, v := range x {
			o[i] = weight[i] * (v * s)
		}
	}
}
