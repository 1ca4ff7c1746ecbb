package rl

import (
	"context"
	"fmt"

	"github.com/clawrl/clawrl/train"
)

// NativeTrainer is the Trainer of `clawrl serve` on the native Go trainer:
// each step is one PolicyStep (π_old recomputed under the current weights,
// truncated importance weight behaviour → old, PPO clip), and each version
// folder is a train checkpoint — the PEFT adapter (or full weights) with the
// optimizer state beside it.
type NativeTrainer struct {
	trainer *train.Trainer
	cfg     train.Config
	step    StepConfig
}

var _ Trainer = (*NativeTrainer)(nil)

// NewNativeTrainer trains w with cfg; step sets the loss and the advantage
// weights (w_rl, w_opd). The advantage method is always combined: a sample
// carries its own terms (UseRL, TeacherLogprobs), so one batch may mix RL
// samples, OPD samples and both, whatever --method made them.
func NewNativeTrainer(w *train.Weights, cfg train.Config, step StepConfig) (*NativeTrainer, error) {
	tr, err := train.New(w, cfg)
	if err != nil {
		return nil, err
	}
	step.Advantage.Method = MethodCombine
	if step.Advantage.WRL == 0 {
		step.Advantage.WRL = 1
	}
	if step.Advantage.WOPD == 0 {
		step.Advantage.WOPD = 1
	}
	return &NativeTrainer{trainer: tr, cfg: tr.Config(), step: step}, nil
}

// Trainer is the underlying native trainer.
func (n *NativeTrainer) Trainer() *train.Trainer { return n.trainer }

// Step implements Trainer.
func (n *NativeTrainer) Step(ctx context.Context, batch []Sample) (StepMetrics, error) {
	samples := make([]TrainSample, len(batch))
	for i, s := range batch {
		ts := TrainSample{PromptIDs: s.PromptIDs, ResponseIDs: s.ResponseIDs,
			BehaviourLogprobs: s.BehaviourLogprobs, TeacherLogprobs: s.TeacherLogprobs}
		if s.UseRL {
			ts.Reward = s.Reward
		}
		samples[i] = ts
	}
	m, err := PolicyStep(ctx, n.trainer, n.step, samples)
	if err != nil {
		return StepMetrics{}, err
	}
	return StepMetrics{Loss: m.Loss, ClipFraction: m.ClipFraction, KL: m.KL, Entropy: m.Entropy, Tokens: m.Tokens,
		ImportanceWeightMean: m.ISWeight, ImportanceTruncated: m.ISTruncated}, nil
}

// Save implements Trainer.
func (n *NativeTrainer) Save(dir string) error { return n.trainer.SaveCheckpoint(dir) }

// Load implements Trainer: the weights of the checkpoint, then a trainer on
// them resumed with its optimizer state.
func (n *NativeTrainer) Load(dir string) error {
	w := n.trainer.Weights()
	if n.cfg.Mode == train.ModeFull {
		var err error
		if w, err = train.LoadWeights(dir); err != nil {
			return fmt.Errorf("load trained weights: %w", err)
		}
	} else if _, err := train.LoadAdapter(w, dir); err != nil {
		return fmt.Errorf("load trained adapter: %w", err)
	}
	tr, err := train.New(w, n.cfg)
	if err != nil {
		return fmt.Errorf("load trainer from %s: %w", dir, err)
	}
	if err := tr.Resume(dir); err != nil {
		return err
	}
	n.trainer = tr
	return nil
}
