package train

import (
	"fmt"
	"math"

	"github.com/clawrl/clawrl/blas"
)

// AdamW with decoupled weight decay, step for step what torch.optim.AdamW
// (single-tensor path, amsgrad off) does:
//
//	θ ← θ·(1 − lr·λ)
//	m ← β1·m + (1−β1)·g        v ← β2·v + (1−β2)·g²
//	θ ← θ − lr/(1−β1ᵏ) · m / (√v/√(1−β2ᵗ) + ε)
//
// t counts every step, k the steps since the first moment was last reset
// (ResetMomentum); without a reset k = t, torch's update exactly.

// AdamWConfig are the optimizer's hyper-parameters.
type AdamWConfig struct {
	LR          float64
	Beta1       float64
	Beta2       float64
	Eps         float64
	WeightDecay float64
	// Warmup raises the learning rate linearly over the first Warmup
	// optimizer steps: step t of them takes LR·t/Warmup (0 or 1: LR from
	// the first). AdamW's first steps move every element with a gradient
	// by about the step's rate, whatever the gradient's size (m̂/√v̂ ≈ ±1
	// while both moments hold one or two gradients).
	Warmup int
	// FirstLR, when > 0, is the learning rate of the first FirstSteps
	// optimizer steps in place of LR (the first batch's steps: a rate
	// that falls after it). The warmup scales it as it scales LR.
	FirstLR    float64
	FirstSteps int
}

// Rate is the learning rate of optimizer step t (counted from 1).
func (c AdamWConfig) Rate(t int64) float64 {
	lr := c.LR
	if c.FirstLR > 0 && t <= int64(c.FirstSteps) {
		lr = c.FirstLR
	}
	if c.Warmup > 1 && t < int64(c.Warmup) {
		return lr * float64(t) / float64(c.Warmup)
	}
	return lr
}

// DefaultAdamW is the seed system's setting with the given learning rate.
func DefaultAdamW(lr float64) AdamWConfig {
	return AdamWConfig{LR: lr, Beta1: 0.9, Beta2: 0.98, Eps: 1e-8, WeightDecay: 0.1}
}

// adamW holds the moments of every trainable tensor, in the trainer's
// parameter order.
type adamW struct {
	cfg  AdamWConfig
	step int64
	// mStep counts the steps since m was last reset (resetMomentum): m's
	// bias correction is 1 − β1^mStep, so the first step after a reset
	// moves by m̂ = g, as a fresh optimizer's would, while v (and its
	// correction) goes on from all the steps before.
	mStep int64
	m, v  [][]float32
}

func newAdamW(cfg AdamWConfig, params []*Tensor) *adamW {
	o := &adamW{cfg: cfg}
	for _, p := range params {
		o.m = append(o.m, make([]float32, p.Size()))
		o.v = append(o.v, make([]float32, p.Size()))
	}
	return o
}

// update takes one step at the configured rate of its step count
// (AdamWConfig.Rate).
func (o *adamW) update(params []*Tensor) {
	o.step++
	o.mStep++
	c := o.cfg
	lr := c.Rate(o.step)
	bc1 := 1 - math.Pow(c.Beta1, float64(o.mStep))
	bc2 := 1 - math.Pow(c.Beta2, float64(o.step))
	k := blas.AdamWParams{
		Decay:   float32(1 - lr*c.WeightDecay),
		Beta1:   float32(c.Beta1),
		Beta2:   float32(c.Beta2),
		BC2Sqrt: float32(math.Sqrt(bc2)),
		Eps:     float32(c.Eps),
		Step:    float32(lr / bc1),
	}
	for i, p := range params {
		m, v := o.m[i], o.v[i]
		// Every element's update is independent: row ranges split freely.
		parallelRows(len(p.Data), len(p.Data)*4, func(lo, hi int) {
			blas.AdamW(p.Data[lo:hi], p.Grad[lo:hi], m[lo:hi], v[lo:hi], k)
		})
	}
}

// resetMomentum zeroes the first moment and restarts its bias correction;
// the second moment and the step count stay.
func (o *adamW) resetMomentum() {
	for _, m := range o.m {
		clear(m)
	}
	o.mStep = 0
}

// clipGradNorm scales all gradients so their global L2 norm is at most
// maxNorm, as torch.nn.utils.clip_grad_norm_ does, and returns the norm
// before clipping. maxNorm ≤ 0 only measures.
func clipGradNorm(params []*Tensor, maxNorm float64) float64 {
	var ss float64
	for _, p := range params {
		for _, g := range p.Grad {
			ss += float64(g) * float64(g)
		}
	}
	norm := math.Sqrt(ss)
	if maxNorm > 0 {
		coef := maxNorm / (norm + 1e-6)
		if coef < 1 {
			c := float32(coef)
			for _, p := range params {
				for j := range p.Grad {
					p.Grad[j] *= c
				}
			}
		}
	}
	return norm
}

// OptimizerState is a copy of AdamW's moments and step counts
// (Trainer.OptimizerState): what a side update — the gate's repair step on
// the rehearsal anchors — puts back once it is taken, so the optimizer goes
// on as the version's own step left it.
type OptimizerState struct {
	step, mStep int64
	m, v        [][]float32
}

func (o *adamW) state() OptimizerState {
	s := OptimizerState{step: o.step, mStep: o.mStep}
	for i := range o.m {
		s.m = append(s.m, append([]float32(nil), o.m[i]...))
		s.v = append(s.v, append([]float32(nil), o.v[i]...))
	}
	return s
}

func (o *adamW) setState(s OptimizerState) error {
	if len(s.m) != len(o.m) || len(s.v) != len(o.v) {
		return fmt.Errorf("optimizer state: %d moments, want %d", len(s.m), len(o.m))
	}
	for i := range o.m {
		if len(s.m[i]) != len(o.m[i]) || len(s.v[i]) != len(o.v[i]) {
			return fmt.Errorf("optimizer state: tensor %d has %d values, want %d", i, len(s.m[i]), len(o.m[i]))
		}
	}
	for i := range o.m {
		copy(o.m[i], s.m[i])
		copy(o.v[i], s.v[i])
	}
	o.step, o.mStep = s.step, s.mStep
	return nil
}
