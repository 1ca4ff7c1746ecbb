package train

import (
	"math/rand/v2"

	"github.com/clawrl/clawrl/blas"
	"github.com/clawrl/clawrl/model"
	"github.com/clawrl/clawrl/quant"
)

// A projection with an optional LoRA adapter, PEFT semantics:
//
//	y = x·Wᵀ + b + scale·(dropout(x)·Aᵀ)·Bᵀ,   scale = alpha / r
//
// Its backward adds to dx, to dW and db when the base weights train, and to
// dA and dB when an adapter is attached.

// loraActs are the activations one adapter keeps for its backward, sized for
// a token capacity and reused.
type loraActs struct {
	u    []float32 // [T, r]  dropout(x)·Aᵀ
	g    []float32 // [T, r]  scratch: dy·B
	mask []float32 // [T, In] 0 or 1/(1−p); nil without dropout
	xd   []float32 // [T, In] dropout(x); nil without dropout
	dxd  []float32 // [T, In] scratch for the dropout backward
	bt   []float32 // [r, Out] scratch: scale·Bᵀ
	dbt  []float32 // [r, Out] scratch: dBᵀ
	tile []float32 // dequantized rows of a quantized base weight
}

// dequantTile is how many rows of a quantized weight the backward widens to
// float32 at once (256 rows of 1,536 are 1.5 MiB). Each tile is one pass
// of the product over every token's rows of dinp, so the tile count is the
// number of times dinp is read and written: 64-row tiles made that 24
// passes for a 1,536-row weight at 3,040 tokens.
const dequantTile = 256

// quantMatmulNN adds dy[T, Out]·W to dinp[T, In] for a quantized W
// ([Out, In]), dequantizing dequantTile rows of W at a time: the whole
// float32 W never exists, unless wide holds it already (wideCache), whose
// tiles then enter the same products in the same order.
func quantMatmulNN(dinp, dout []float32, T int, q *quant.Matrix, a *loraActs, wide []float32) {
	if wide != nil {
		for r0 := 0; r0 < q.Rows; r0 += dequantTile {
			r1 := min(r0+dequantTile, q.Rows)
			blas.Sgemm(false, false, T, q.Cols, r1-r0, 1, dout[r0:], q.Rows, wide[r0*q.Cols:r1*q.Cols], q.Cols, 1, dinp, q.Cols)
		}
		return
	}
	var tile []float32
	if a != nil {
		a.tile = grow(a.tile, dequantTile*q.Cols)
		tile = a.tile
	} else {
		tile = make([]float32, dequantTile*q.Cols)
	}
	for r0 := 0; r0 < q.Rows; r0 += dequantTile {
		r1 := min(r0+dequantTile, q.Rows)
		dequantizeRows(tile, q, r0, r1)
		blas.Sgemm(false, false, T, q.Cols, r1-r0, 1, dout[r0:], q.Rows, tile, q.Cols, 1, dinp, q.Cols)
	}
}

// dequantizeRows widens rows [r0, r1) of q into dst on every core: on one
// goroutine the widening left the other core idle between the backward's
// parallel products (rows are independent, so the bits are the same).
func dequantizeRows(dst []float32, q *quant.Matrix, r0, r1 int) {
	parallelRows(r1-r0, (r1-r0)*q.Cols, func(lo, hi int) {
		q.DequantizeRows(dst[lo*q.Cols:], r0+lo, r0+hi)
	})
}

func newLoRAActs(rank, in int, dropout bool, tokens int) *loraActs {
	if rank == 0 {
		return nil
	}
	a := &loraActs{u: make([]float32, tokens*rank), g: make([]float32, tokens*rank)}
	if dropout {
		a.mask = make([]float32, tokens*in)
		a.xd = make([]float32, tokens*in)
		a.dxd = make([]float32, tokens*in)
	}
	return a
}

// linearForward overwrites out[:T·Out]: model.Linear.Forward for the base
// projection and model.LoRA.Forward for the adapter, the serving forward's
// own arithmetic. rng draws the dropout mask; the same seed reproduces it,
// which activation recomputation relies on. A nil rng is eval mode: no
// dropout (and no backward may follow).
func linearForward(out, inp []float32, T int, l *Linear, a *loraActs, rng *rand.Rand) {
	base := l.modelLinear()
	base.Forward(out, inp, T)
	if l.LoRA == nil {
		return
	}
	lo := l.LoRA
	r := lo.Rank
	xd := inp
	if lo.Dropout > 0 && rng != nil {
		keep := 1 / (1 - lo.Dropout)
		xd = a.xd[:T*l.In]
		for i, v := range inp[:T*l.In] {
			m := float32(0)
			if rng.Float32() >= lo.Dropout {
				m = keep
			}
			a.mask[i] = m
			xd[i] = v * m
		}
	}
	ml := model.LoRA{R: r, A: lo.A.Data, B: lo.B.Data, Scale: lo.Scale}
	ml.Forward(out, xd, a.u[:T*r], T, l.In, l.Out)
}

// modelLinear is a model.Linear over l's base weights (no copy).
func (l *Linear) modelLinear() model.Linear {
	ml := model.Linear{Out: l.Out, In: l.In, W: l.W.Data, Q: l.Q}
	if l.B != nil {
		ml.Bias = l.B.Data
	}
	return ml
}

// readsInput reports whether linearBackward reads l's input: for a trained
// weight's gradient, or an adapter's A gradient taken from the input itself
// (with dropout it reads the dropped copy the forward kept).
func (l *Linear) readsInput() bool {
	if l.W != nil && l.W.Grad != nil {
		return true
	}
	lo := l.LoRA
	return lo != nil && lo.A.Grad != nil && lo.Dropout == 0
}

// linearBackward adds dx to dinp[:T·In] and accumulates parameter gradients.
// A nil dinp skips dx (the first block's input when the embeddings are
// frozen: nothing reads it). With pack (the frozen W in bf16, see
// Precision) the base's dx = dy·W is the bf16 product.
func linearBackward(dinp, dout, inp []float32, T int, l *Linear, a *loraActs, wide []float32, pack *blas.BF16Pack) {
	switch {
	case dinp == nil:
	case pack != nil:
		blas.GemmBF16(T, dout, l.Out, pack, 1, dinp, l.In)
	case l.Q != nil:
		quantMatmulNN(dinp, dout, T, l.Q, a, wide)
	default:
		matmulNN(dinp, dout, l.W.Data, T, l.In, l.Out, true)
	}
	if l.W.Grad != nil {
		matmulTN(l.W.Grad, dout, inp, l.Out, l.In, T, true)
	}
	if l.B != nil && l.B.Grad != nil {
		for t := range T {
			axpy(1, dout[t*l.Out:t*l.Out+l.Out], l.B.Grad)
		}
	}
	if l.LoRA == nil {
		return
	}
	lo := l.LoRA
	r := lo.Rank
	u := a.u[:T*r]
	g := a.g[:T*r]
	// dB += dyᵀ·(scale·u), computed as its transpose dBᵀ += (scale·u)ᵀ·dy
	// ([r, Out]): blas's 16-row kernel then reads each row of dy once, in
	// whole cache lines, where dyᵀ·(s·u) ran r = 16 columns through padded
	// 4×24 tiles, each walking four columns of dy down every token. On
	// blas's Go kernels each element is the same FMA chain over tokens in
	// order, started from dB, so dB gets the same bits either way.
	us := g
	for i, v := range u {
		us[i] = lo.Scale * v
	}
	if lo.B.Grad != nil {
		a.dbt = grow(a.dbt, r*l.Out)
		dB := lo.B.Grad
		for o := range l.Out {
			for j, v := range dB[o*r : o*r+r] {
				a.dbt[j*l.Out+o] = v
			}
		}
		matmulTN(a.dbt, us, dout, r, l.Out, T, true)
		for o := range l.Out {
			for j := range dB[o*r : o*r+r] {
				dB[o*r+j] = a.dbt[j*l.Out+o]
			}
		}
	}
	// g = dy·(scale·B); dA += gᵀ·dropout(x); dx += (g·A) ∘ mask. g takes
	// the dot-product kernels over k = Out with scale·Bᵀ ([r, Out], a small
	// copy): as dy·B it would be an outer product only r = 16 columns wide,
	// which runs through padded tiles at a fraction of the speed.
	a.bt = grow(a.bt, r*l.Out)
	for o := range l.Out {
		for j, v := range lo.B.Data[o*r : o*r+r] {
			a.bt[j*l.Out+o] = lo.Scale * v
		}
	}
	blas.Sgemm(false, true, T, r, l.Out, 1, dout, l.Out, a.bt, l.Out, 0, g, r)
	xd := inp
	if lo.Dropout > 0 {
		xd = a.xd[:T*l.In]
	}
	if lo.A.Grad != nil {
		matmulTN(lo.A.Grad, g, xd, r, l.In, T, true)
	}
	if dinp == nil {
		return
	}
	if lo.Dropout > 0 {
		dxd := a.dxd[:T*l.In]
		matmulNN(dxd, g, lo.A.Data, T, l.In, r, false)
		for i, m := range a.mask[:T*l.In] {
			dinp[i] += dxd[i] * m
		}
		return
	}
	matmulNN(dinp, g, lo.A.Data, T, l.In, r, true)
}
