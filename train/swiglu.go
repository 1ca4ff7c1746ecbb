package train

import "math"

// SwiGLU's backward; the forward, act = silu(gate) ∘ up, is model.SwiGLU.

func sigmoid(x float32) float32 { return float32(1 / (1 + math.Exp(-float64(x)))) }

// swigluBackward overwrites dgate and dup.
func swigluBackward(dgate, dup, dout, gate, up []float32) {
	for i, g := range gate {
		s := sigmoid(g)
		silu := g * s
		dup[i] = dout[i] * silu
		dgate[i] = dout[i] * up[i] * s * (1 + g*(1-s))
	}
}
