package train

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

// adamWFixture is one tensor of n random weights under AdamW with the
// loop's β1 0.9, β2 0.98 and weight decay lr·λ.
func adamWFixture(n int, decay float64) (*adamW, []*Tensor) {
	cfg := DefaultAdamW(1e-3)
	cfg.WeightDecay = decay
	p := newTensor("w", n)
	p.trainable()
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range p.Data {
		p.Data[i] = float32(rng.NormFloat64())
	}
	params := []*Tensor{p}
	return newAdamW(cfg, params), params
}

// stepWith sets the gradient to g (nil: zero) and updates, returning the
// change of the weights.
func stepWith(o *adamW, params []*Tensor, g []float32) []float64 {
	p := params[0]
	before := append([]float32(nil), p.Data...)
	clear(p.Grad)
	copy(p.Grad, g)
	o.update(params)
	d := make([]float64, len(before))
	for i := range d {
		d[i] = float64(p.Data[i]) - float64(before[i])
	}
	return d
}

func randomGrad(rng *rand.Rand, n int) []float32 {
	g := make([]float32, n)
	for i := range g {
		g[i] = float32(rng.NormFloat64() * 0.01)
	}
	return g
}

func norm(d []float64) float64 {
	var s float64
	for _, x := range d {
		s += x * x
	}
	return math.Sqrt(s)
}

func cosine(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s / (norm(a) * norm(b))
}

// TestAdamWZeroGradientRepeatsTheLastUpdate measures what the loop's
// optimizer does on a step whose batch has nothing to learn (every answer
// liked: advantage 0): with the moments carried from the step before, the
// weights move anyway, along the previous update. After one step the second
// moves every weight by exactly β1(1−β1)/(1−β1²) · √(1−β2²)/√(β2(1−β2)) ≈
// 0.673 of the first; after five steps on unrelated gradients (five
// versions) the sixth, gradient-free, is the fifth again (cosine 1: m and v
// only decay) at (β1/√β2)·((1−β1⁵)/(1−β1⁶))·√((1−β2⁶)/(1−β2⁵)) ≈ 0.866 of its
// length, and → β1/√β2 ≈ 0.909 as the steps add up. With the first moment reset (ResetMomentum) the
// same step moves nothing (no weight decay) or only by the decay.
func TestAdamWZeroGradientRepeatsTheLastUpdate(t *testing.T) {
	const n = 4096
	b1, b2 := 0.9, 0.98

	o, params := adamWFixture(n, 0)
	rng := rand.New(rand.NewPCG(3, 4))
	d1 := stepWith(o, params, randomGrad(rng, n))
	d2 := stepWith(o, params, nil)
	want := b1 * (1 - b1) / (1 - b1*b1) * math.Sqrt(1-b2*b2) / math.Sqrt(b2*(1-b2))
	for i := range d1 {
		if r := d2[i] / d1[i]; math.Abs(r-want) > 1e-3 {
			t.Fatalf("weight %d: zero-gradient step moved it %.4g of the first step, want %.4f", i, r, want)
		}
	}
	t.Logf("after one step, a zero-gradient step repeats it at %.4f of its size", want)

	o, params = adamWFixture(n, 0)
	var last []float64
	for range 5 {
		last = stepWith(o, params, randomGrad(rng, n))
	}
	carried := stepWith(o, params, nil)
	ratio, cos := norm(carried)/norm(last), cosine(carried, last)
	t.Logf("after five steps on unrelated gradients, a zero-gradient step moves %.3f× the fifth's length, cosine %.3f with it", ratio, cos)
	wantRatio := b1 / math.Sqrt(b2) * (1 - math.Pow(b1, 5)) / (1 - math.Pow(b1, 6)) * math.Sqrt((1-math.Pow(b2, 6))/(1-math.Pow(b2, 5)))
	if math.Abs(ratio-wantRatio) > 1e-3 || cos < 0.9999 {
		t.Fatalf("zero-gradient step after five: %.3f× the last update, cosine %.3f; want the last update repeated", ratio, cos)
	}

	// Reset: no weight decay, no move at all; with decay, the decay alone.
	for _, decay := range []float64{0, 0.1} {
		o, params = adamWFixture(n, decay)
		for range 5 {
			stepWith(o, params, randomGrad(rng, n))
		}
		before := append([]float32(nil), params[0].Data...)
		o.resetMomentum()
		d := stepWith(o, params, nil)
		for i, x := range d {
			if want := -float64(before[i]) * o.cfg.LR * decay; math.Abs(x-want) > 1e-6 {
				t.Fatalf("decay %g: weight %d moved %.3g after a reset and a zero gradient, want %.3g (the decay)", decay, i, x, want)
			}
		}
	}
}

// TestAdamWResetMomentum: after a reset the next step follows that step's
// gradient alone, m̂ = g, scaled by the second moment of every step so far:
// Δθ = −lr·g/(√(v/(1−β2ᵗ)) + ε) (weight decay off). The step count goes on;
// the step after it averages from there as a fresh first moment would.
func TestAdamWResetMomentum(t *testing.T) {
	const n = 1024
	o, params := adamWFixture(n, 0)
	rng := rand.New(rand.NewPCG(5, 6))
	for range 4 {
		stepWith(o, params, randomGrad(rng, n))
	}
	o.resetMomentum()
	for i, m := range o.m[0] {
		if m != 0 {
			t.Fatalf("m[%d] = %g after reset", i, m)
		}
	}
	v := append([]float32(nil), o.v[0]...)
	g := randomGrad(rng, n)
	d := stepWith(o, params, g)
	if o.step != 5 || o.mStep != 1 {
		t.Fatalf("step %d, first-moment step %d; want 5 and 1", o.step, o.mStep)
	}
	c := o.cfg
	bc2 := 1 - math.Pow(c.Beta2, 5)
	for i := range d {
		gi := float64(g[i])
		vi := c.Beta2*float64(v[i]) + (1-c.Beta2)*gi*gi
		want := -c.LR * gi / (math.Sqrt(vi)/math.Sqrt(bc2) + c.Eps)
		if math.Abs(d[i]-want) > 1e-4*math.Abs(want)+5e-7 { // float32 weights of order 1: Δθ carries θ's rounding
			t.Fatalf("weight %d: moved %.6g after a reset, want −lr·g/√v̂ = %.6g", i, d[i], want)
		}
	}
}

// TestResumeKeepsMomentumStep: a checkpoint taken after a reset and a step
// resumes with the first moment's own step count, so the next step is the
// one the trainer that went on takes (without it, the resumed trainer would
// correct m by 1 − β1ᵗ instead of 1 − β1ᵏ and step shorter).
func TestResumeKeepsMomentumStep(t *testing.T) {
	a := tinyArch(true, false, true)
	cfg := Config{LoRA: LoRAConfig{Rank: 4, Alpha: 8}, Seed: 5, AdamW: DefaultAdamW(1e-3)}
	tr, err := New(randomWeights(t, a, 1), cfg)
	if err != nil {
		t.Fatal(err)
	}
	seqs := randomSeqs(a.Vocab, 2, [2]int{3, 4}, [2]int{2, 5})
	obj := newWeightedObjective(seqs, 3)
	ctx := context.Background()
	for range 3 {
		if _, err := tr.Step(ctx, seqs, obj); err != nil {
			t.Fatal(err)
		}
	}
	if err := tr.ResetMomentum(); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Step(ctx, seqs, obj); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := tr.SaveCheckpoint(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Step(ctx, seqs, obj); err != nil {
		t.Fatal(err)
	}
	w2 := randomWeights(t, a, 1)
	if _, err := LoadAdapter(w2, dir); err != nil {
		t.Fatal(err)
	}
	tr2, err := New(w2, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr2.Resume(dir); err != nil {
		t.Fatal(err)
	}
	if tr2.opt.step != 4 || tr2.opt.mStep != 1 {
		t.Fatalf("resumed at step %d, first-moment step %d; want 4 and 1", tr2.opt.step, tr2.opt.mStep)
	}
	if _, err := tr2.Step(ctx, seqs, obj); err != nil {
		t.Fatal(err)
	}
	p1, p2 := tr.Params(), tr2.Params()
	for i := range p1 {
		for j := range p1[i].Data {
			if p1[i].Data[j] != p2[i].Data[j] {
				t.Fatalf("%s[%d]: went on %g, resumed %g", p1[i].Name, j, p1[i].Data[j], p2[i].Data[j])
			}
		}
	}
}

// TestAdamWWarmup: with Warmup W, step t < W takes lr·t/W and every step
// from W on takes lr. The first step of a fresh optimizer is the sign step
// Δθ = −rate·g/(|g| + ε·…) on every weight (weight decay off), so each
// weight moves by the step's rate whatever its gradient's size, and the
// rate is what a warmup bounds.
func TestAdamWWarmup(t *testing.T) {
	c := DefaultAdamW(1e-3)
	c.Warmup = 4
	for tt, want := range map[int64]float64{1: 2.5e-4, 2: 5e-4, 3: 7.5e-4, 4: 1e-3, 9: 1e-3} {
		if got := c.Rate(tt); math.Abs(got-want) > 1e-12 {
			t.Errorf("Rate(%d) = %g with warmup 4, want %g", tt, got, want)
		}
	}
	for _, w := range []int{0, 1} {
		c.Warmup = w
		if got := c.Rate(1); got != c.LR {
			t.Errorf("Rate(1) = %g with warmup %d, want lr %g", got, w, c.LR)
		}
	}

	const n = 512
	o, params := adamWFixture(n, 0)
	o.cfg.Warmup = 4
	rng := rand.New(rand.NewPCG(7, 8))
	for step := 1; step <= 5; step++ {
		g := randomGrad(rng, n)
		d := stepWith(o, params, g)
		if step > 1 {
			continue
		}
		for i, x := range d {
			if want := -2.5e-4 * math.Copysign(1, float64(g[i])); math.Abs(x-want) > 1e-6 {
				t.Fatalf("weight %d: first warmup step moved %.4g, want %.4g (lr/4, the gradient's sign)", i, x, want)
			}
		}
	}
	if o.step != 5 {
		t.Fatalf("step %d after five updates", o.step)
	}
}

// TestAdamWFirstRate: FirstLR replaces LR on the first FirstSteps steps
// (the first batch's), the warmup scaling either, and a first step taken
// at FirstLR moves every weight by FirstLR with its gradient's sign.
func TestAdamWFirstRate(t *testing.T) {
	c := DefaultAdamW(5e-4)
	c.FirstLR, c.FirstSteps = 1e-3, 2
	for tt, want := range map[int64]float64{1: 1e-3, 2: 1e-3, 3: 5e-4, 9: 5e-4} {
		if got := c.Rate(tt); got != want {
			t.Errorf("Rate(%d) = %g with first rate 1e-3 over 2 steps, lr 5e-4; want %g", tt, got, want)
		}
	}
	c.Warmup = 4
	for tt, want := range map[int64]float64{1: 2.5e-4, 2: 5e-4, 3: 3.75e-4, 4: 5e-4} {
		if got := c.Rate(tt); math.Abs(got-want) > 1e-12 {
			t.Errorf("Rate(%d) = %g with warmup 4 as well, want %g", tt, got, want)
		}
	}
	c.Warmup, c.FirstSteps = 0, 0
	if got := c.Rate(1); got != c.LR {
		t.Errorf("Rate(1) = %g with no first steps, want lr %g", got, c.LR)
	}

	const n = 256
	o, params := adamWFixture(n, 0)
	o.cfg.LR, o.cfg.FirstLR, o.cfg.FirstSteps = 5e-4, 2e-3, 1
	rng := rand.New(rand.NewPCG(9, 10))
	g := randomGrad(rng, n)
	for i, x := range stepWith(o, params, g) {
		if want := -2e-3 * math.Copysign(1, float64(g[i])); math.Abs(x-want) > 1e-6 {
			t.Fatalf("weight %d: first step moved %.4g, want %.4g (the first rate, the gradient's sign)", i, x, want)
		}
	}
}
