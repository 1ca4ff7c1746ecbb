package model

import "github.com/clawrl/clawrl/blas"

// Linear is a dense layer y = x·Wᵀ + b with W stored [Out, In] as in the
// checkpoint. Exactly one of W (float32) and WBF16 (bfloat16 bits) is set.
type Linear struct {
	Out, In int
	W       []float32
	WBF16   []uint16
	Bias    []float32 // nil when the layer has none
}

// matmulForward computes out[T,Out] = inp[T,In]·Wᵀ + bias.
func matmulForward(out, inp []float32, l *Linear, T int) {
	if l.WBF16 != nil {
		blas.SgemmBF16(T, l.Out, l.In, 1, inp, l.In, l.WBF16, l.In, 0, out, l.Out)
	} else {
		blas.Sgemm(false, true, T, l.Out, l.In, 1, inp, l.In, l.W, l.In, 0, out, l.Out)
	}
	if l.Bias != nil {
		for t := 0; t < T; t++ {
			row := out[t*l.Out : (t+1)*l.Out]
			for i, b := range l.Bias {
				row[i] += b
			}
		}
	}
}

// residualForward adds inp to out elementwise (the residual stream).
func residualForward(out, inp []float32) {
	inp = inp[:len(out)]
	for i := range out {
		out[i] += inp[i]
	}
}
