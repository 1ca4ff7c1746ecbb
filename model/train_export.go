package model

import "github.com/clawrl/clawrl/blas"

// The forward pieces the trainer (package train) runs. Training recomputes
// π_old with exactly the arithmetic that served the tokens, so its forward
// is this package's forward, layer by layer, and these wrappers only name
// it; train keeps the backward passes. Owned by the trainer engineer; kept
// in its own file so the inference files stay untouched.

// RopeInvFreq returns the rotary inverse frequencies with the configured
// scaling applied, exactly as the forward pass uses them.
func (c *Config) RopeInvFreq() []float64 { return c.invFreq() }

// RopeInvFreq32 is RopeInvFreq rounded to float32, the values the forward
// computes angles with.
func (c *Config) RopeInvFreq32() []float32 {
	inv := c.invFreq()
	out := make([]float32, len(inv))
	for i, f := range inv {
		out[i] = float32(f)
	}
	return out
}

// RMSNorm is the forward's RMSNorm over N rows of C values; rstd (N values,
// or nil) receives each row's 1/sqrt(mean(x²) + eps).
func RMSNorm(out, rstd, inp, weight []float32, N, C int, eps float32) {
	rmsnormForward(out, rstd, inp, weight, N, C, eps)
}

// Forward computes out[T, Out] = inp[T, In]·Wᵀ + bias.
func (l *Linear) Forward(out, inp []float32, T int) { matmulForward(out, inp, l, T) }

// Embed copies the rows of ids into out[len(ids), In] (the embedding
// lookup); an id outside the table is an error.
func (l *Linear) Embed(out []float32, ids []int32) error { return embeddingForward(out, ids, l) }

// Forward adds scale·(inp·Aᵀ)·Bᵀ to out[T, outDim] and leaves inp·Aᵀ in u
// [T, R], which the trainer's backward reuses.
func (lo *LoRA) Forward(out, inp, u []float32, T, in, outDim int) {
	lo.apply(out, inp, u, T, in, outDim)
}

// SwiGLU computes out = silu(gate)·up elementwise, the forward's own
// (blas.SwiGLU, bitwise g / (1 + float32(math.Exp(float64(−g)))) · up).
func SwiGLU(out, gate, up []float32) { blas.SwiGLU(out, gate, up) }

// Residual adds inp to out elementwise.
func Residual(out, inp []float32) { residualForward(out, inp) }

// AttendRows4 is AttendOne for four consecutive query rows of one
// sequence, all heads, the first at position pos (seeing pos+1 positions):
// q and out [4, qDim], lse (or nil) [4, nHeads], att scratch of at least
// 4·(pos+4). Each row gets AttendOne's bits (see attendRows4); the four
// share their key loads.
func AttendRows4(out, lse, q, keys, values, att []float32, pos, qDim, nHeads, nKV, headDim int) {
	attendRows4(out, lse, q, keys, values, att, pos, qDim, nHeads, nKV, headDim)
}

// AttendOne is causal grouped-query attention for one query row against the
// nPos keys and values it may see ([nPos, nKV·headDim] rows, row stride
// nKV·headDim), heads [h0, h1); see attendOne. lse ([nHeads], or nil)
// receives each head's log-sum-exp of its scaled scores; att is scratch of
// at least nPos.
func AttendOne(out, lse, q, keys, values, att []float32, nPos, h0, h1, nHeads, nKV, headDim int) {
	attendOne(out, lse, q, keys, values, att, nPos, h0, h1, nHeads, nKV, headDim)
}
