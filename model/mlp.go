package model

import "github.com/clawrl/clawrl/blas"

// swigluForward computes out = silu(gate) · up elementwise (SwiGLU's gating;
// gate_proj and up_proj are plain Linears before it, down_proj after):
// out[i] = g / (1 + float32(math.Exp(float64(−g)))) · up[i], bitwise
// (blas.SwiGLU).
func swigluForward(out, gate, up []float32) { blas.SwiGLU(out, gate, up) }
