package model

import "math"

// swigluForward computes out = silu(gate) · up elementwise (SwiGLU's gating;
// gate_proj and up_proj are plain Linears before it, down_proj after).
func swigluForward(out, gate, up []float32) {
	up = up[:len(gate)]
	out = out[:len(gate)]
	for i, g := range gate {
		out[i] = g / (1 + float32(math.Exp(float64(-g)))) * up[i]
	}
}
