package train

import (
	"context"
	"math"
	"testing"
)

// TestLeanActivationsSameBits runs the same step with every activation
// kept (no budget) and with blocks that keep only what the backward cannot
// remake elementwise (a budget of one byte): every gradient and every
// log-probability must be the same bits, in both modes, with q/k norms,
// biases, dropout (its adapters read the dropped copy the forward keeps),
// recomputation and micro-batches.
func TestLeanActivationsSameBits(t *testing.T) {
	cases := []struct {
		name          string
		qk, bias, tie bool
		mode          Mode
		recompute     bool
		micro         int
		dropout       float64
	}{
		{"qwen3-full", true, false, true, ModeFull, false, 0, 0},
		{"qwen2-full-recompute", false, true, false, ModeFull, true, 0, 0},
		{"llama-lora", false, false, false, ModeLoRA, false, 0, 0},
		{"qwen3-lora-micro", true, false, true, ModeLoRA, false, 12, 0},
		{"qwen2-lora-dropout", false, true, false, ModeLoRA, false, 0, 0.1},
		{"qwen3-lora-qv", true, false, false, ModeLoRA, false, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run := func(budget int64) (grads [][]float32, logp [][]float32, lean bool) {
				lc := LoRAConfig{Rank: 4, Alpha: 8, Dropout: c.dropout}
				if c.name == "qwen3-lora-qv" {
					lc.TargetModules = []string{"q_proj", "v_proj"}
				}
				tr, seqs, _ := tinyAccumulated(t, tinyArch(c.qk, c.bias, c.tie), Config{Mode: c.mode, Recompute: c.recompute,
					MicroBatchTokens: c.micro, LoRA: lc, Seed: 3, ActivationBudget: budget})
				for _, p := range tr.Params() {
					grads = append(grads, append([]float32(nil), p.Grad...))
				}
				sc, err := tr.Score(context.Background(), seqs)
				if err != nil {
					t.Fatal(err)
				}
				for _, x := range sc {
					logp = append(logp, x.Logprobs)
				}
				return grads, logp, tr.ws.lean()
			}
			g0, l0, lean0 := run(-1)
			g1, l1, lean1 := run(1)
			if lean0 || lean1 == c.recompute {
				t.Fatalf("lean: %v without a budget, %v with one byte (recompute %v)", lean0, lean1, c.recompute)
			}
			same := func(a, b [][]float32) bool {
				if len(a) != len(b) {
					return false
				}
				for i := range a {
					if len(a[i]) != len(b[i]) {
						return false
					}
					for j := range a[i] {
						if math.Float32bits(a[i][j]) != math.Float32bits(b[i][j]) {
							return false
						}
					}
				}
				return true
			}
			if !same(g0, g1) {
				t.Error("gradients differ between kept and recomputed activations")
			}
			if !same(l0, l1) {
				t.Error("log-probabilities differ between kept and recomputed activations")
			}
			nz := 0
			for _, g := range g1 {
				for _, v := range g {
					if v != 0 {
						nz++
					}
				}
			}
			if nz == 0 {
				t.Error("no gradient at all")
			}
		})
	}
}
