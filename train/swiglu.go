package train

import (
	"math"

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

// swigluBackward overwrites dgate and dup, on every core.
//
//	s = sigmoid(g), dup = dy·g·s, dgate = dy·up·s·(1 + g·(1 − s))
//
// The sigmoid takes e = exp(−|g|) from blas's vector exponential (about one
// float32 ulp; its argument is never positive, so it cannot overflow):
// s = 1/(1+e) for g ≥ 0, e/(1+e) below.
func swigluBackward(dgate, dup, dout, gate, up []float32) {
	const piece = 4096
	n := len(gate)
	parallelRows((n+piece-1)/piece, 8*n, func(lo, hi int) {
		for p0 := lo * piece; p0 < min(hi*piece, n); p0 += piece {
			p1 := min(p0+piece, n)
			e := dgate[p0:p1] // scratch until overwritten below
			for i, g := range gate[p0:p1] {
				e[i] = -float32(math.Abs(float64(g)))
			}
			done, _ := blas.ExpShift(e, 0)
			for i := done; i < len(e); i++ {
				e[i] = float32(math.Exp(float64(e[i])))
			}
			for i, g := range gate[p0:p1] {
				s := 1 / (1 + e[i])
				if g < 0 {
					s = e[i] * s
				}
				j := p0 + i
				dup[j] = dout[j] * (g * s)
				dgate[j] = dout[j] * up[j] * s * (1 + g*(1-s))
			}
		}
	})
}
