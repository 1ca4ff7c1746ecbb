package train

import (
	"github.com/clawrl/clawrl/blas"
	"github.com/clawrl/clawrl/model"
)

// SwiGLU's backward; the forward, act = silu(gate) ∘ up, is model.SwiGLU.

// swigluForward is model.SwiGLU over pieces of the elements on every core:
// elementwise, so the same bits as one call.
func swigluForward(out, gate, up []float32) {
	parallelRows(len(gate), 8*len(gate), func(lo, hi int) {
		model.SwiGLU(out[lo:hi], gate[lo:hi], up[lo:hi])
	})
}

// swigluBackward overwrites dgate and dup, on every core: blas.SwiGLUBackward
// (s = sigmoid(g), dup = dy·g·s, dgate = dy·up·s·(1 + g·(1 − s))) over
// pieces of the elements.
func swigluBackward(dgate, dup, dout, gate, up []float32) {
	const piece = 4096
	n := len(gate)
	parallelRows((n+piece-1)/piece, 8*n, func(lo, hi int) {
		p0, p1 := lo*piece, min(hi*piece, n)
		blas.SwiGLUBackward(dgate[p0:p1], dup[p0:p1], dout[p0:p1], gate[p0:p1], up[p0:p1])
	})
}
