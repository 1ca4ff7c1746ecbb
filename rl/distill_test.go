package rl

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/clawrl/clawrl/safetensors"
	"github.com/clawrl/clawrl/train"
)

// gradStepper is a Stepper whose Step accumulates the step's gradients (the
// loss averaged over the step's tokens, as train.Trainer.Step does) and
// keeps them, without the optimizer update, so they can be compared.
type gradStepper struct {
	*train.Trainer
	loss float64
}

func (g *gradStepper) Step(ctx context.Context, seqs []train.Sequence, obj train.Objective) (train.Stats, error) {
	n := 0
	for _, s := range seqs {
		n += len(s.ResponseIDs)
	}
	g.ZeroGrad()
	sum, _, err := g.Accumulate(ctx, seqs, obj, 1/float64(n))
	g.loss = sum / float64(n)
	return train.Stats{Tokens: n}, err
}

// TestDistillGradientsTorch checks one policy step on a mixed batch — a
// rated student response with a teacher term, a teacher-written response, a
// rehearsal anchor — against torch autograd through PEFT on the tiny llama
// checkpoint of train/testdata (rl/testdata/gen_distill.py wrote the
// reference): with DistillCoef the teacher-written response is trained by
// coef × cross-entropy, unclipped; without it, by the PPO objective with the
// clipped teacher − old advantage, and a teacher-written response with no
// teacher log-probabilities falls back to cross-entropy of weight 1. Under
// LossMean "sample" each response weighs the same whatever its length.
// Under DistillFocus each teacher-written token's cross-entropy weighs
// 1 + focus × the hint's gain on it, clamped to [0, FocusCap] nats.
func TestDistillGradientsTorch(t *testing.T) {
	dir := filepath.Join("..", "train", "testdata", "llama")
	raw, err := os.ReadFile(filepath.Join(dir, "inputs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var in struct {
		Seqs []struct {
			PromptIDs   []int32 `json:"prompt_ids"`
			ResponseIDs []int32 `json:"response_ids"`
		} `json:"seqs"`
		Teacher [][]float32
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		t.Fatal(err)
	}
	raw, err = os.ReadFile(filepath.Join("testdata", "distill_loss.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Coef   float64            `json:"coef"`
		Focus  float64            `json:"focus"`
		Losses map[string]float64 `json:"losses"`
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	grads, err := safetensors.Open(filepath.Join("testdata", "distill_grads.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer grads.Close()
	w, err := train.LoadWeights(dir)
	if err != nil {
		t.Fatal(err)
	}
	lc, err := train.LoadAdapter(w, filepath.Join(dir, "adapter_peft"))
	if err != nil {
		t.Fatal(err)
	}
	seq := func(i int) TrainSample {
		return TrainSample{PromptIDs: in.Seqs[i].PromptIDs, ResponseIDs: in.Seqs[i].ResponseIDs}
	}
	rated := seq(0)
	rated.Reward, rated.RewardTerm, rated.TeacherLogprobs = 1, true, in.Teacher[0]
	written := seq(1)
	written.TeacherWrote, written.TeacherLogprobs = true, in.Teacher[1]
	anchor := seq(2)
	anchor.Anchor = 1
	bare := seq(2)
	bare.TeacherWrote = true
	cases := []struct {
		name  string
		coef  float64
		focus float64
		mean  LossMean
		batch []TrainSample
	}{
		{"distill", ref.Coef, 0, MeanToken, []TrainSample{rated, written, anchor}},
		{"ppo", 0, 0, "", []TrainSample{rated, written, bare}},
		{"sample_mean", ref.Coef, 0, MeanSample, []TrainSample{rated, written, anchor}},
		{"focus", ref.Coef, ref.Focus, MeanToken, []TrainSample{rated, written, anchor}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := train.New(w, train.Config{Mode: train.ModeLoRA, LoRA: lc})
			if err != nil {
				t.Fatal(err)
			}
			g := &gradStepper{Trainer: tr}
			cfg := DefaultStepConfig()
			cfg.Advantage.OPDClip, cfg.Advantage.Baseline, cfg.DistillCoef, cfg.LossMean = 1, BaselineNone, tc.coef, tc.mean
			cfg.DistillFocus = tc.focus
			if _, err := PolicyStep(context.Background(), g, cfg, tc.batch); err != nil {
				t.Fatal(err)
			}
			if want := ref.Losses[tc.name]; math.Abs(g.loss-want) > 1e-4*math.Abs(want) {
				t.Errorf("loss %.7g, torch %.7g", g.loss, want)
			}
			for _, p := range tr.Params() {
				st, err := grads.Tensor(tc.name + "/" + p.Name)
				if err != nil {
					t.Fatal(err)
				}
				want, err := st.Float32()
				if err != nil {
					t.Fatal(err)
				}
				if err := closeTo(p.Grad, want, 1e-4); err != nil {
					t.Errorf("%s: %v", p.Name, err)
				}
			}
		})
	}
}

// closeTo checks max|got − want| ≤ tol·max|want|: elementwise relative error
// means nothing for elements near zero.
func closeTo(got, want []float32, tol float64) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d values, want %d", len(got), len(want))
	}
	var maxRef, maxErr float64
	at := 0
	for i := range want {
		maxRef = math.Max(maxRef, math.Abs(float64(want[i])))
		if e := math.Abs(float64(got[i] - want[i])); e > maxErr {
			maxErr, at = e, i
		}
	}
	if maxErr > tol*maxRef+1e-9 {
		return fmt.Errorf("max error %.3g at [%d] (got %.6g, want %.6g), max |ref| %.3g", maxErr, at, got[at], want[at], maxRef)
	}
	return nil
}

// TestDistillIsUnclipped: from the second PPO epoch on, the clip stops a
// teacher-written token once its ratio passes 1 + ε_high; the cross-entropy
// keeps pulling it. With a step large enough to cross the clip in one epoch,
// four epochs raise the teacher's tokens further by cross-entropy than by
// the clipped advantage (which here is +1 per token, as large as it gets).
func TestDistillIsUnclipped(t *testing.T) {
	ctx := context.Background()
	s := TrainSample{PromptIDs: []int32{1, 2, 3}, ResponseIDs: []int32{40, 41, 42, 43}, TeacherWrote: true,
		TeacherLogprobs: []float32{-0.1, -0.1, -0.1, -0.1}}
	seqs := []train.Sequence{{PromptIDs: s.PromptIDs, ResponseIDs: s.ResponseIDs}}
	gain := func(coef float64) (first, last float64) {
		arch := train.Arch{Vocab: 64, Hidden: 32, Intermediate: 64, Layers: 2, Heads: 4, KVHeads: 2,
			HeadDim: 8, RMSNormEps: 1e-6, RopeTheta: 10000, TieEmbeddings: true, QKNorm: true}
		w, err := train.NewWeights(arch)
		if err != nil {
			t.Fatal(err)
		}
		train.InitRandom(w, 1, 0.1)
		score := func(tr *train.Trainer) float64 {
			sc, err := tr.Score(ctx, seqs)
			if err != nil {
				t.Fatal(err)
			}
			return sum(sc[0].Logprobs)
		}
		for _, epochs := range []int{1, 4} {
			tr, err := train.New(w, train.Config{LoRA: train.LoRAConfig{Rank: 4, Alpha: 8}, AdamW: train.DefaultAdamW(3e-2), Seed: 3})
			if err != nil {
				t.Fatal(err)
			}
			before := score(tr)
			cfg := DefaultStepConfig()
			cfg.Epochs, cfg.DistillCoef, cfg.Advantage.OPDClip = epochs, coef, 1
			if _, err := PolicyStep(ctx, tr, cfg, []TrainSample{s}); err != nil {
				t.Fatal(err)
			}
			if epochs == 1 {
				first = score(tr) - before
			} else {
				last = score(tr) - before
			}
		}
		return first, last
	}
	ppo1, ppo4 := gain(0)
	ce1, ce4 := gain(1)
	// One epoch: ratio 1, advantage +1 — the same step either way.
	if math.Abs(ppo1-ce1) > 1e-4*math.Abs(ce1) {
		t.Errorf("one epoch: log-prob gain %g through PPO, %g by cross-entropy; want equal (ratio 1, A = +1)", ppo1, ce1)
	}
	if !(ce4 > ppo4+0.1) {
		t.Errorf("four epochs: log-prob gain %g by cross-entropy, %g through the clipped PPO (one epoch %g); want the clip to hold PPO back", ce4, ppo4, ppo1)
	}
}

// TestFocusWeight: 1 where the hint does not make the token likelier, 1 +
// focus × the gap in between, 1 + focus × FocusCap past the cap.
func TestFocusWeight(t *testing.T) {
	for _, c := range []struct {
		teacher, logp float32
		want          float64
	}{
		{-3, -1, 1},                    // the hint makes it less likely
		{-2, -2, 1},                    // no gain
		{-1, -3, 1 + 0.5*2},            // 2 nats
		{-0.5, -9.5, 1 + 0.5*FocusCap}, // 9 nats, capped
	} {
		if got := focusWeight(0.5, c.teacher, c.logp); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("focusWeight(0.5, %g, %g) = %g, want %g", c.teacher, c.logp, got, c.want)
		}
	}
}
