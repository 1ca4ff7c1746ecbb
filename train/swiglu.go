package train

import "math"

// SwiGLU: act = silu(gate) ∘ up, the Qwen/Llama MLP non-linearity.

func sigmoid(x float32) float32 { return float32(1 / (1 + math.Exp(-float64(x)))) }

func swigluForward(out, gate, up []float32) {
	for i, g := range gate {
		out[i] = g * sigmoid(g) * up[i]
	}
}

// swigluBackward overwrites dgate and dup.
func swigluBackward(dgate, dup, dout, gate, up []float32) {
	for i, g := range gate {
		s := sigmoid(g)
		silu := g * s
		dup[i] = dout[i] * silu
		dgate[i] = dout[i] * up[i] * s * (1 + g*(1-s))
	}
}
