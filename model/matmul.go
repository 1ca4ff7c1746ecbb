package model

import (
	"github.com/clawrl/clawrl/blas"
	"github.com/clawrl/clawrl/quant"
)

// Linear is a dense layer y = x·Wᵀ + b with W stored [Out, In] as in the
// checkpoint. Exactly one of W (float32), WBF16 (bfloat16 bits) and Q
// (GGUF quantized blocks, which stay quantized: quant's kernels compute on
// them) is set.
type Linear struct {
	Out, In int
	W       []float32
	WBF16   []uint16
	Q       *quant.Matrix
	Bias    []float32 // nil when the layer has none
}

// weightBytes is the memory the layer's weight takes.
func (l *Linear) weightBytes() int64 {
	n := int64(4*len(l.W) + 2*len(l.WBF16))
	if l.Q != nil {
		n += l.Q.Bytes()
	}
	return n
}

// Dequantized returns W as float32: W itself, or a widened copy of the
// bf16 or quantized weight (for code that needs a dense matrix).
func (l *Linear) Dequantized() []float32 {
	switch {
	case l.W != nil:
		return l.W
	case l.WBF16 != nil:
		w := make([]float32, len(l.WBF16))
		blas.WidenBF16(w, l.WBF16)
		return w
	case l.Q != nil:
		w := make([]float32, l.Out*l.In)
		l.Q.DequantizeRows(w, 0, l.Out)
		return w
	}
	return nil
}

// matmulForward computes out[T,Out] = inp[T,In]·Wᵀ + bias.
func matmulForward(out, inp []float32, l *Linear, T int) {
	switch {
	case l.Q != nil:
		quant.MatMul(out, inp, T, l.Q)
	case l.WBF16 != nil:
		blas.SgemmBF16(T, l.Out, l.In, 1, inp, l.In, l.WBF16, l.In, 0, out, l.Out)
	default:
		blas.Sgemm(false, true, T, l.Out, l.In, 1, inp, l.In, l.W, l.In, 0, out, l.Out)
	}
	addBias(out, l, T)
}

// addBias adds l's bias (if any) to each of the T rows of out.
func addBias(out []float32, l *Linear, T int) {
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
