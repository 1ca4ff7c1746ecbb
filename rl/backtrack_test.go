package rl

import (
	"context"
	"math"
	"testing"

	"github.com/clawrl/clawrl/model"
)

// mergedWeights is every adapted projection's merged weight W + s·B·A,
// computed in float64 from the base model's weights and ad (the adapter the
// engine would serve).
func mergedWeights(t *testing.T, n *NativeTrainer, ad *model.Adapter) [][]float64 {
	t.Helper()
	m, err := n.tr.Weights().Model()
	if err != nil {
		t.Fatal(err)
	}
	var out [][]float64
	for i := range ad.Layers {
		b := &m.Weights.Blocks[i]
		lins := []*model.Linear{&b.Q, &b.K, &b.V, &b.O, &b.Gate, &b.Up, &b.Down}
		for mod, lo := range ad.Layers[i] {
			if lo == nil {
				continue
			}
			l := lins[mod]
			if len(l.W) != l.Out*l.In {
				t.Fatalf("layer %d module %d: base weight not f32", i, mod)
			}
			w := make([]float64, l.Out*l.In)
			for o := 0; o < l.Out; o++ {
				for k := 0; k < l.In; k++ {
					var d float64
					for r := 0; r < lo.R; r++ {
						d += float64(lo.B[o*lo.R+r]) * float64(lo.A[r*l.In+k])
					}
					w[o*l.In+k] = float64(l.W[o*l.In+k]) + float64(lo.Scale)*d
				}
			}
			out = append(out, w)
		}
	}
	return out
}

func adapterNow(t *testing.T, n *NativeTrainer) *model.Adapter {
	t.Helper()
	ad, err := n.tr.Adapter()
	if err != nil {
		t.Fatal(err)
	}
	return ad
}

// maxDiff is the largest |got − (w0 + α·(w1 − w0))| over all projections.
func maxDiff(got, w0, w1 [][]float64, alpha float64) float64 {
	var worst float64
	for i := range got {
		for j := range got[i] {
			worst = max(worst, math.Abs(got[i][j]-(w0[i][j]+alpha*(w1[i][j]-w0[i][j]))))
		}
	}
	return worst
}

// TestBacktrackInterpolation: the gate's shrunk step, served as the
// trainer's own rank-r adapter, has merged weights W + α·ΔW exactly (within
// float32 rounding, 1e-5) when the step starts from the base weights (the
// served adapter's B is zero), for α = 1/2 and 1/4. From a served adapter
// with B ≠ 0 no rank-r adapter is exact in general; there the shrink misses
// the interpolation by the documented −α(1−α)·s·dB·dA, and nothing else.
func TestBacktrackInterpolation(t *testing.T) {
	ctx := context.Background()
	n := newTinyNative(t)
	batch := []Sample{
		{TurnID: "a", PromptIDs: []int32{1, 2, 3}, ResponseIDs: []int32{4, 5}, BehaviourLogprobs: []float32{-4, -4}, UseRL: true, Reward: 1},
		{TurnID: "b", PromptIDs: []int32{7}, ResponseIDs: []int32{8, 9, 10}, BehaviourLogprobs: []float32{-5, -4, -9},
			TeacherLogprobs: []float32{-1, -2, -3}},
	}
	served := mergedWeights(t, n, adapterNow(t, n)) // the base: B = 0
	if _, err := n.Step(ctx, batch); err != nil {
		t.Fatal(err)
	}
	full := mergedWeights(t, n, adapterNow(t, n))
	if d := maxDiff(full, served, full, 0); d < 1e-4 {
		t.Fatalf("the step moved the merged weights by only %g", d)
	}
	for _, alpha := range []float64{0.5, 0.25} {
		if err := n.ShrinkStep(0.5); err != nil {
			t.Fatal(err)
		}
		if n.StepScale() != alpha {
			t.Fatalf("step scale %g, want %g", n.StepScale(), alpha)
		}
		got := mergedWeights(t, n, adapterNow(t, n))
		if d := maxDiff(got, served, full, alpha); d > 1e-5 {
			t.Fatalf("α=%g: merged weights off W + α·ΔW by %g", alpha, d)
		}
		if m := n.ShrinkMiss(); m != 0 {
			t.Fatalf("α=%g from the base: ShrinkMiss %g, want 0", alpha, m)
		}
	}

	// The next step starts from what is served (the quarter step).
	params := n.tr.Params()
	pairs := n.loraPairs()
	if len(pairs) == 0 || 2*len(pairs) != len(params) {
		t.Fatalf("%d LoRA pairs of %d tensors", len(pairs), len(params))
	}
	served = mergedWeights(t, n, adapterNow(t, n))
	before := make([][]float32, len(params))
	for i, p := range params {
		before[i] = append([]float32(nil), p.Data...)
	}
	if _, err := n.Step(ctx, batch); err != nil {
		t.Fatal(err)
	}
	full = mergedWeights(t, n, adapterNow(t, n))
	after := make([][]float32, len(params))
	for i, p := range params {
		after[i] = append([]float32(nil), p.Data...)
	}
	const alpha = 0.5
	if err := n.ShrinkStep(alpha); err != nil {
		t.Fatal(err)
	}
	got := mergedWeights(t, n, adapterNow(t, n))
	// The predicted miss, layer by layer (PEFT scale s = alpha/r = 2).
	var worst, missMax float64
	k := 0
	for _, pr := range pairs {
		a0, a1, b0, b1 := before[pr.a], after[pr.a], before[pr.b], after[pr.b]
		in := len(a0) / 4
		out := len(b0) / 4
		for o := 0; o < out; o++ {
			for c := 0; c < in; c++ {
				var dd float64
				for r := 0; r < 4; r++ {
					dd += float64(b1[o*4+r]-b0[o*4+r]) * float64(a1[r*in+c]-a0[r*in+c])
				}
				miss := -alpha * (1 - alpha) * 2 * dd
				want := served[k][o*in+c] + alpha*(full[k][o*in+c]-served[k][o*in+c]) + miss
				worst = max(worst, math.Abs(got[k][o*in+c]-want))
				missMax = max(missMax, math.Abs(miss))
			}
		}
		k++
	}
	var miss2, step2 float64
	for i := range got {
		for j := range got[i] {
			exact := served[i][j] + alpha*(full[i][j]-served[i][j])
			miss2 += (got[i][j] - exact) * (got[i][j] - exact)
			step2 += (exact - served[i][j]) * (exact - served[i][j])
		}
	}
	rel := math.Sqrt(miss2 / step2)
	if m := n.ShrinkMiss(); math.Abs(m-rel) > 0.02*rel+1e-9 || rel == 0 {
		t.Errorf("ShrinkMiss %g, the merged weights miss by %g (relative)", m, rel)
	}
	if worst > 1e-5 {
		t.Fatalf("from a served adapter with B ≠ 0: off the predicted weights by %g", worst)
	}
	t.Logf("from a served adapter with B ≠ 0 the shrunk step misses W + α·ΔW by at most %.3g (second order), %.3g relative", missMax, rel)
}
