package rl

import (
	"context"
	"fmt"

	"github.com/clawrl/clawrl/model"
	"github.com/clawrl/clawrl/train"
)

// Stepper is what a policy step needs of a trainer: per-token scores of
// sequences under the current weights (and under the base weights, for a
// KL term), one optimizer step of a train.Objective, and checkpoints. The
// in-process *train.Trainer is one; a worker process driving torch (package
// train/torchtrain) is another, so both train on the same samples with the
// same losses — the objective is rl's code whichever runs the model.
type Stepper interface {
	Config() train.Config
	Score(ctx context.Context, seqs []train.Sequence) ([]train.TokenScores, error)
	ScoreReference(ctx context.Context, seqs []train.Sequence) ([]train.TokenScores, error)
	Step(ctx context.Context, seqs []train.Sequence, obj train.Objective) (train.Stats, error)
	// SaveCheckpoint writes the PEFT adapter (or full weights) and the
	// optimizer state into dir; LoadCheckpoint restores them.
	SaveCheckpoint(dir string) error
	LoadCheckpoint(dir string) error
}

var _ Stepper = (*train.Trainer)(nil)

// PolicyTrainer implements Trainer on a Stepper. Which advantage terms a
// sample gets is already decided (Sample.UseRL, Sample.TeacherLogprobs; see
// Decide), so every sample goes through the Combined formula
// A = w_opd·(teacher − old) + w_rl·r with the configured weights, each term
// present only when the sample carries it.
type PolicyTrainer struct {
	st  Stepper
	cfg StepConfig
}

var (
	_ Trainer   = (*PolicyTrainer)(nil)
	_ Evaluator = (*PolicyTrainer)(nil)
)

// NewPolicyTrainer wraps st. cfg.Advantage.Method is ignored (see above);
// zero weights take 1.
func NewPolicyTrainer(st Stepper, cfg StepConfig) *PolicyTrainer {
	if cfg.Advantage.WOPD == 0 {
		cfg.Advantage.WOPD = 1
	}
	if cfg.Advantage.WRL == 0 {
		cfg.Advantage.WRL = 1
	}
	cfg.Advantage.Method = MethodCombine
	if cfg.Loss.Kind == "" {
		cfg.Loss = DefaultLoss()
	}
	return &PolicyTrainer{st: st, cfg: cfg}
}

// Stepper is the wrapped trainer.
func (p *PolicyTrainer) Stepper() Stepper { return p.st }

// NativeTrainer is a PolicyTrainer on the in-process Go trainer (package
// train).
type NativeTrainer struct {
	*PolicyTrainer
	tr *train.Trainer
}

var (
	_ Trainer = (*NativeTrainer)(nil)
	_ Yielder = (*NativeTrainer)(nil)
)

// SetYield implements Yielder: yield runs before every micro-batch and at
// yield points a few milliseconds apart inside one (train.Trainer.SetYield).
func (n *NativeTrainer) SetYield(yield func(ctx context.Context) error) { n.tr.SetYield(yield) }

// NewNativeTrainer wraps tr (see NewPolicyTrainer).
func NewNativeTrainer(tr *train.Trainer, cfg StepConfig) *NativeTrainer {
	return &NativeTrainer{PolicyTrainer: NewPolicyTrainer(tr, cfg), tr: tr}
}

// NewNativeTrainerFor builds the trainer over a served model: in LoRA mode
// it shares the model's base weights (read only, so serving goes on), in
// full mode it trains a private copy.
func NewNativeTrainerFor(m *model.Model, tc train.Config, cfg StepConfig) (*NativeTrainer, error) {
	w, err := train.FromModel(m, tc.Mode == train.ModeFull)
	if err != nil {
		return nil, err
	}
	tr, err := train.New(w, tc)
	if err != nil {
		return nil, err
	}
	return NewNativeTrainer(tr, cfg), nil
}

// Trainer is the wrapped trainer.
func (n *NativeTrainer) Trainer() *train.Trainer { return n.tr }

// Step implements Trainer.
func (n *PolicyTrainer) Step(ctx context.Context, batch []Sample) (StepMetrics, error) {
	ts := make([]TrainSample, len(batch))
	for i, s := range batch {
		if err := s.Validate(); err != nil {
			return StepMetrics{}, err
		}
		ts[i] = TrainSample{PromptIDs: s.PromptIDs, ResponseIDs: s.ResponseIDs,
			BehaviourLogprobs: s.BehaviourLogprobs, TeacherLogprobs: s.TeacherLogprobs}
		if s.UseRL {
			ts[i].Reward, ts[i].RewardTerm = s.Reward, true
		}
	}
	for _, s := range batch {
		if s.WrittenIDs != nil {
			ts = append(ts, TrainSample{PromptIDs: s.PromptIDs, ResponseIDs: s.WrittenIDs, TeacherLogprobs: s.WrittenLogprobs})
		}
	}
	m, err := PolicyStep(ctx, n.st, n.cfg, ts)
	if err != nil {
		return StepMetrics{}, fmt.Errorf("trainer: %w", err)
	}
	return StepMetrics{Loss: m.Loss, ClipFraction: m.ClipFraction, KL: m.KL, Entropy: m.Entropy,
		Tokens: m.Tokens, ImportanceWeightMean: m.ISWeight, ImportanceWeightMax: m.ISWeightMax,
		ImportanceTruncated: m.ISTruncated}, nil
}

// Save implements Trainer: the PEFT adapter (or full weights) with the
// optimizer state beside it.
func (n *PolicyTrainer) Save(dir string) error { return n.st.SaveCheckpoint(dir) }

// Load implements Trainer.
func (n *PolicyTrainer) Load(dir string) error { return n.st.LoadCheckpoint(dir) }

// ProbeLogprobs implements Evaluator: one scoring pass of prompt+prefix →
// answer per probe, under the current weights or (base) with the adapters
// off. Full fine-tuning has no base weights left to score with.
func (n *PolicyTrainer) ProbeLogprobs(ctx context.Context, probes []Probe, base bool) ([]float64, error) {
	seqs := make([]train.Sequence, len(probes))
	for i, p := range probes {
		prompt := append(append([]int32(nil), p.PromptIDs...), p.PrefixIDs...)
		seqs[i] = train.Sequence{PromptIDs: prompt, ResponseIDs: p.AnswerIDs}
	}
	score := n.st.Score
	if base {
		score = n.st.ScoreReference
	}
	scores, err := score(ctx, seqs)
	if err != nil {
		return nil, fmt.Errorf("trainer: retention probes: %w", err)
	}
	out := make([]float64, len(probes))
	for i, s := range scores {
		for _, lp := range s.Logprobs {
			out[i] += float64(lp)
		}
	}
	return out, nil
}
