package train

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

// lossOf runs a forward pass and the objective, without gradients.
func lossOf(t *testing.T, tr *Trainer, seqs []Sequence, obj Objective) float64 {
	t.Helper()
	sc, err := tr.Score(context.Background(), seqs)
	if err != nil {
		t.Fatal(err)
	}
	var s float64
	for i, x := range sc {
		n := len(x.Logprobs)
		s += obj.TokenLoss(i, x.Logprobs, x.Entropy, make([]float32, n), make([]float32, n))
	}
	return s
}

// TestGradientsFiniteDifference checks every trainable tensor's analytic
// gradient against central differences on a few random elements, in both
// modes, with and without recomputation, for every architecture variant. It
// is a self-check; parity with torch autograd is TestParity.
func TestGradientsFiniteDifference(t *testing.T) {
	cases := []struct {
		name          string
		qk, bias, tie bool
		mode          Mode
		recompute     bool
		micro         int
	}{
		{"qwen3-full", true, false, true, ModeFull, false, 0},
		{"qwen2-full-recompute", false, true, false, ModeFull, true, 0},
		{"llama-lora", false, false, false, ModeLoRA, false, 0},
		{"qwen3-lora-recompute-micro", true, false, true, ModeLoRA, true, 12},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr, seqs, obj := tinyAccumulated(t, tinyArch(c.qk, c.bias, c.tie), Config{Mode: c.mode, Recompute: c.recompute,
				MicroBatchTokens: c.micro, LoRA: LoRAConfig{Rank: 4, Alpha: 8}, Seed: 3})
			rng := rand.New(rand.NewPCG(9, 9))
			for _, p := range tr.Params() {
				var gmax float64
				for _, g := range p.Grad {
					gmax = math.Max(gmax, math.Abs(float64(g)))
				}
				for k := 0; k < 3; k++ {
					i := rng.IntN(p.Size())
					orig := p.Data[i]
					const h = 1e-2
					p.Data[i] = orig + h
					up := lossOf(t, tr, seqs, obj)
					p.Data[i] = orig - h
					down := lossOf(t, tr, seqs, obj)
					p.Data[i] = orig
					num := (up - down) / (2 * h)
					got := float64(p.Grad[i])
					if math.Abs(num-got) > 2e-2*math.Max(gmax, 1e-2) {
						t.Errorf("%s[%d]: analytic %.6g, numeric %.6g (max |g| %.3g)", p.Name, i, got, num, gmax)
					}
				}
			}
		})
	}
}

// TestDropoutGradients checks LoRA gradients with dropout on (with and
// without recomputation) against central differences of the training loss
// under the same dropout masks (same micro-batch counter, same seed).
func TestDropoutGradients(t *testing.T) {
	for _, recompute := range []bool{false, true} {
		w := randomWeights(t, tinyArch(false, true, false), 4)
		tr, err := New(w, Config{LoRA: LoRAConfig{Rank: 4, Alpha: 8, Dropout: 0.3}, Recompute: recompute, Seed: 9})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 1))
		for _, p := range w.LoRATensors() {
			for i := range p.Data {
				p.Data[i] = float32(0.1 * rng.NormFloat64())
			}
		}
		seqs := randomSeqs(w.Arch.Vocab, 6, [2]int{4, 4}, [2]int{2, 3})
		obj := newWeightedObjective(seqs, 8)
		trainLoss := func() float64 {
			tr.micro = 0
			tr.ZeroGrad()
			l, _, err := tr.Accumulate(context.Background(), seqs, obj, 1)
			if err != nil {
				t.Fatal(err)
			}
			return l
		}
		trainLoss()
		grads := map[*Tensor][]float32{}
		for _, p := range tr.Params() {
			grads[p] = append([]float32(nil), p.Grad...)
		}
		for _, p := range tr.Params()[:6] {
			g := grads[p]
			var gmax float64
			for _, v := range g {
				gmax = math.Max(gmax, math.Abs(float64(v)))
			}
			for k := 0; k < 3; k++ {
				i := rng.IntN(p.Size())
				orig := p.Data[i]
				const h = 1e-2
				p.Data[i] = orig + h
				up := trainLoss()
				p.Data[i] = orig - h
				down := trainLoss()
				p.Data[i] = orig
				num := (up - down) / (2 * h)
				if math.Abs(num-float64(g[i])) > 2e-2*math.Max(gmax, 1e-2) {
					t.Errorf("recompute %v: %s[%d]: analytic %.6g, numeric %.6g", recompute, p.Name, i, g[i], num)
				}
			}
		}
	}
}
