package rl

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/clawrl/clawrl/train"
)

// The policy update: turn ready samples into one optimizer step of the
// native trainer. π_old is recomputed under the trainer's current weights;
// the behaviour logprobs recorded at generation time only enter through the
// truncated importance weight.

// TrainSample is one sample as the trainer needs it. Logprob slices have one
// entry per response token.
type TrainSample struct {
	PromptIDs   []int32
	ResponseIDs []int32
	// BehaviourLogprobs are what the engine reported when it sampled the
	// response (policy version at generation time); nil = on-policy.
	BehaviourLogprobs []float32
	// OldLogprobs are π_old; nil = the current weights' (taken from the
	// step's own forward pass, or recomputed first when LoRA dropout is on).
	OldLogprobs []float32
	// TeacherLogprobs are the OPD teacher's (hint-conditioned) logprobs of
	// the same response tokens; nil = no accepted hint.
	TeacherLogprobs []float32
	// RefLogprobs are the reference policy's for the KL term; nil with
	// LossConfig.KLCoef ≠ 0 = the base model (adapters off, LoRA mode).
	RefLogprobs []float32
	// Reward is the judge's score (−1, 0, +1) or any scalar outcome.
	Reward float64
	// RewardTerm says the sample carries the reward term, so it takes part
	// in the batch's reward baseline (AdvantageConfig.Baseline); samples
	// with only the OPD term do not.
	RewardTerm bool
	// Group ties the n samples of one prompt together for group-normalised
	// rewards; 0 = not grouped.
	Group int
	// Anchor, when not 0, makes the sample a rehearsal anchor (Rehearsal):
	// every token's advantage is Anchor, with no reward or teacher term.
	Anchor float64
	// Bound, with Anchor < 0 (an answer pushed down, Rehearsal.Avoid), is
	// how many nats below the base model's (adapters off) the answer's
	// summed log-probability is pushed: a step whose π_old already has it
	// Bound or more below the base's leaves the sample out. 0: no bound.
	Bound float64
	// BoundStart, with Bound, reads the bound against where the pushes
	// began as well: it is given the answer's shift from the base model
	// under π_old, Σ(π_old − base), and returns the shift the answer's
	// first push found (taking this one when there is none yet), and the
	// sample sits out once its shift is Bound or more below that too
	// (RehearsalConfig.AvoidRelative). nil: the base model's bound alone.
	BoundStart func(shift float64) (start float64)
	// TeacherWrote: ResponseIDs were written by the teacher with the hint
	// in context (Sample.TeacherWrote, Sample.WrittenIDs). With
	// StepConfig.DistillCoef set, or with no TeacherLogprobs, the sample is
	// trained by cross-entropy (distill.go) instead of the PPO objective.
	TeacherWrote bool
}

// StepConfig is the loss and advantage configuration of policy steps.
type StepConfig struct {
	Loss      LossConfig
	Advantage AdvantageConfig
	// Epochs is how many optimizer steps a batch gets (PPO epochs); 0 or 1
	// is one. π_old and the advantages are fixed by the first pass, so from
	// the second on the ratio leaves 1 and the PPO clip bounds how far each
	// token moves: one batch of a few rated turns teaches more per version
	// without letting any token run away.
	Epochs int
	// FirstEpochs, when > 0, is how many optimizer steps the batch gets
	// instead of Epochs when the optimizer has taken none yet (a
	// StepCounter at 0). AdamW's first update is m̂/√v̂ = g/|g|: it moves
	// every parameter with a gradient by about the learning rate whatever
	// the gradient's size, and a first batch of teacher answers whose
	// opening the student finds unlikely then breaks the old opening before
	// it teaches the new one (BENCHMARKS.md, "The first version refuses").
	// A second step on the same batch follows the gradient at the moved
	// weights. Steppers that do not count their steps take Epochs.
	FirstEpochs int
	// DistillCoef, when > 0, trains teacher-written samples by
	// DistillCoef × their tokens' cross-entropy (distill.go) instead of the
	// clipped teacher − old advantage under the PPO objective.
	DistillCoef float64
	// DistillFocus, when > 0, weighs each token of a teacher-written
	// sample trained by cross-entropy by 1 + DistillFocus × how many nats
	// (at most FocusCap) the hint makes it likelier to the policy
	// (TeacherLogprobs − the current log-probability; focusWeight), so the
	// tokens that carry what the feedback asked for weigh more than the
	// rest of the teacher's text. 0: every token weighs the same.
	DistillFocus float64
	// MomentumReset says when the step zeroes the optimizer's first
	// moment (Stepper.ResetMomentum) before it updates: MomentumNoSignal,
	// MomentumEveryStep, or never ("" or MomentumKeep, the default).
	MomentumReset MomentumReset
	// LossMean is how a step averages its samples' token losses:
	// MeanToken ("" or "token", the default) over all of the step's response
	// tokens, so a long answer weighs in proportion to its length;
	// MeanSample over each sample's tokens first and then over the samples,
	// so every answer weighs the same whatever its length.
	LossMean LossMean
	// AnchorScale is how the step's rehearsal anchors weigh against its
	// rated samples: AnchorFixed ("" or "fixed", the default) at their
	// Anchor advantage whatever the step; AnchorSignal at that times the
	// step's signal (stepSignalShare).
	AnchorScale AnchorScale
}

// AnchorScale is how a step's rehearsal anchors are weighed.
type AnchorScale string

const (
	// AnchorFixed: every anchor token at TrainSample.Anchor, so an anchor
	// weighs about as much as a rated turn at ±1.
	AnchorFixed AnchorScale = "fixed"
	// AnchorSignal: every anchor token at TrainSample.Anchor times the
	// step's signal share (stepSignalShare): the mean over its rated
	// samples of what each has to teach, 1 for one with a teacher term or
	// teacher-written tokens, else its reward term's advantage, |w_rl·A|
	// capped at 1. A user who likes every answer gives liked answers about
	// 1 − m under the running baseline (0.2 once m is 0.8), and the anchors'
	// fixed pull towards the base model's answers would then be most of
	// the step: under AnchorFixed the concise persona's liked-only steps
	// led its answers back to the base model's length and lists
	// (BENCHMARKS.md, "Anchors that weigh as much as the step").
	AnchorSignal AnchorScale = "signal"
)

// ParseAnchorScale reads a --rehearsal-scale value.
func ParseAnchorScale(s string) (AnchorScale, error) {
	switch a := AnchorScale(s); a {
	case AnchorFixed, AnchorSignal:
		return a, nil
	}
	return "", fmt.Errorf("anchor scale %q: want %s or %s", s, AnchorFixed, AnchorSignal)
}

// stepSignalShare is AnchorSignal's factor: the mean over the step's
// samples that are not anchors of min(1, what each has to teach), 1 for a
// sample with a teacher term (under a method that reads it) or
// teacher-written tokens, else |w_rl·reward| after the baselines (0 under
// MethodOPD). A step of anchors alone (a repair step) is 1.
func stepSignalShare(adv AdvantageConfig, samples []TrainSample, rewards []float64) float64 {
	var n int
	var sum float64
	for i, s := range samples {
		if s.Anchor != 0 {
			continue
		}
		n++
		switch {
		case s.TeacherWrote || s.TeacherLogprobs != nil && (adv.Method == MethodOPD || adv.Method == MethodCombine && adv.WOPD != 0):
			sum++
		case adv.Method == MethodRL:
			sum += min(1, math.Abs(rewards[i]))
		case adv.Method == MethodCombine:
			sum += min(1, math.Abs(adv.WRL*rewards[i]))
		}
	}
	if n == 0 {
		return 1
	}
	return sum / float64(n)
}

// LossMean is how a policy step averages its token losses.
type LossMean string

const (
	// MeanToken: one mean over every response token of the step (the seed
	// system's and DAPO's token-level mean).
	MeanToken LossMean = "token"
	// MeanSample: each sample's mean token loss, averaged over the step's
	// samples (GRPO's sequence mean). A batch of liked answers then no
	// longer teaches its longest ones most.
	MeanSample LossMean = "sample"
)

// ParseLossMean reads a --loss-mean value.
func ParseLossMean(s string) (LossMean, error) {
	switch m := LossMean(s); m {
	case MeanToken, MeanSample:
		return m, nil
	}
	return "", fmt.Errorf("loss mean %q: want %s or %s", s, MeanToken, MeanSample)
}

// sampleWeights is, under MeanSample, each sample's weight T/(N·Tᵢ): the
// trainer divides the step's summed loss by its T response tokens, so
// weighted it is the mean over the N samples of each one's mean over its
// Tᵢ tokens. nil under MeanToken.
func sampleWeights(m LossMean, seqs []train.Sequence) []float64 {
	if m != MeanSample {
		return nil
	}
	total := 0
	for _, s := range seqs {
		total += len(s.ResponseIDs)
	}
	w := make([]float64, len(seqs))
	for i, s := range seqs {
		if n := len(s.ResponseIDs); n > 0 {
			w[i] = float64(total) / float64(len(seqs)*n)
		}
	}
	return w
}

// MomentumReset is when a policy step resets AdamW's first moment.
type MomentumReset string

const (
	// MomentumKeep never resets: the first moment averages every step's
	// gradient (β1 0.9), across versions.
	MomentumKeep MomentumReset = "keep"
	// MomentumNoSignal resets it before a step whose batch has nothing to
	// learn (stepSignal: every rated answer's advantage is 0 after the
	// baseline — all liked, under the batch baseline — and no sample has a
	// teacher term or teacher-written tokens). Such a batch says the policy
	// now satisfies what it was asked; the average of the gradients before
	// it says where the policy had to go, which it has reached. Kept, the
	// step would repeat the last update at about β1/√β2 ≈ 0.91 of its size
	// (0.67 on a second step) whatever the batch says, and carry the policy
	// past the behaviour it was taught (BENCHMARKS.md, "AdamW's first
	// moment across versions"). The step is still taken, on the rehearsal
	// anchors' gradient alone (none: the weights move only by the weight
	// decay), and the version is published as any other.
	MomentumNoSignal MomentumReset = "no-signal"
	// MomentumEveryStep resets it before every step (each version's
	// update follows its own batch only; the PPO epochs of one batch share
	// it).
	MomentumEveryStep MomentumReset = "every-step"
)

// ParseMomentumReset reads a --momentum-reset value.
func ParseMomentumReset(s string) (MomentumReset, error) {
	switch m := MomentumReset(s); m {
	case MomentumKeep, MomentumNoSignal, MomentumEveryStep:
		return m, nil
	}
	return "", fmt.Errorf("momentum reset %q: want %s, %s or %s", s, MomentumKeep, MomentumNoSignal, MomentumEveryStep)
}

// DefaultStepConfig is Combined advantages with the default PPO loss; the
// first moment is kept across steps (MomentumKeep: MomentumNoSignal did
// not hold the signoff gain it was measured on, whose collapse came from
// steps with a signal; BENCHMARKS.md, "AdamW's first moment across
// versions").
func DefaultStepConfig() StepConfig {
	return StepConfig{Loss: DefaultLoss(), Advantage: DefaultAdvantage(), MomentumReset: MomentumKeep}
}

// stepSignal reports whether any of a step's samples (rehearsal anchors
// aside) gives the policy something to learn: a nonzero reward after the
// baseline, a teacher term, or teacher-written tokens. A step of anchors
// alone is a rehearsal step asked for as such, and counts as a signal.
func stepSignal(samples []TrainSample, rewards []float64) bool {
	rated := false
	for i, s := range samples {
		switch {
		case s.Anchor != 0:
		case rewards[i] != 0 || s.TeacherLogprobs != nil || s.TeacherWrote:
			return true
		default:
			rated = true
		}
	}
	return !rated
}

// Metrics describe one policy step (per-token means over the step).
type Metrics struct {
	Step          int64
	Loss          float64
	PolicyLoss    float64
	KL            float64
	Entropy       float64
	ClipFraction  float64
	Ratio         float64
	ISWeight      float64
	ISWeightMax   float64
	ISTruncated   float64 // fraction of tokens whose importance weight hit the cap
	Advantage     float64
	GradNorm      float64
	Samples       int
	Tokens        int
	Elapsed       time.Duration
	TokensPerSec  float64
	LearningRate  float64
	OldLogprobGap float64 // mean |old − behaviour|: how off-policy the batch was
	// BoundSatOut counts the pushed-down answers left out of the step for
	// being Bound nats below the base model already (TrainSample.Bound).
	BoundSatOut int
	// AvoidShift is the pushed-down answers' mean Σ(π_old − base): how far
	// the steps so far have moved them from the base model (0: none with a
	// bound in the step).
	AvoidShift float64
	// MomentumReset: the step zeroed AdamW's first moment first
	// (StepConfig.MomentumReset).
	MomentumReset bool
	// AnchorScale is what the step's anchors' advantages were multiplied
	// by (StepConfig.AnchorScale; 1 under AnchorFixed).
	AnchorScale float64
	// Lean: the trainer remade its blocks' norm outputs and SwiGLU
	// product in the backward instead of keeping them
	// (train.Config.ActivationBudget; the same numbers).
	Lean bool
}

// batchObjective adapts per-sample TokenInputs to train.Objective.
type batchObjective struct {
	cfg    LossConfig
	inputs []TokenInputs
	stats  TokenStats
	// lazy[i] marks samples whose π_old is taken from the step's own
	// forward pass (see PolicyStep); their advantages are computed then.
	lazy     []bool
	adv      AdvantageConfig
	rewards  []float64
	teachers [][]float32
	anchors  []float64
	// anchorScale multiplies every anchor's advantage (AnchorScale).
	anchorScale float64
	distill     []float64               // per sample: cross-entropy weight, 0 = PPO
	focus       float64                 // StepConfig.DistillFocus
	bounds      []float64               // per sample: TrainSample.Bound
	bases       [][]float32             // per sample with a bound: the base model's logprobs
	starts      []func(float64) float64 // per sample: TrainSample.BoundStart
	// weights[i] scales sample i's loss and gradients (sampleWeights);
	// nil: every token weighs the same.
	weights []float64
	satOut  int
	// shift sums the pushed-down answers' Σ(π_old − base), over shiftN.
	shift  float64
	shiftN int
	err    error
	gap    float64
	gapN   int
}

func (o *batchObjective) TokenLoss(i int, logp, entropy, dlogp, dentropy []float32) float64 {
	l := o.tokenLoss(i, logp, entropy, dlogp, dentropy)
	if o.weights == nil || o.weights[i] == 1 {
		return l
	}
	w := o.weights[i]
	for t := range dlogp {
		dlogp[t] *= float32(w)
		dentropy[t] *= float32(w)
	}
	return l * w
}

func (o *batchObjective) tokenLoss(i int, logp, entropy, dlogp, dentropy []float32) float64 {
	if o.distill != nil && o.distill[i] != 0 {
		l, st := distillLoss(o.distill[i], o.focus, o.teachers[i], logp, dlogp, dentropy)
		o.stats.Add(st)
		return l
	}
	if o.lazy != nil && o.lazy[i] {
		in := &o.inputs[i]
		in.OldLogprobs = append([]float32(nil), logp...)
		a, err := tokenAdvantages(o.adv, o.anchors[i]*o.anchorScale, o.anchors[i] != 0, o.rewards[i], o.teachers[i], in.OldLogprobs)
		if err != nil {
			// Checked before the step; kept for the caller all the same.
			o.err = err
			return 0
		}
		in.Advantages = o.bounded(i, in.OldLogprobs, a)
		o.addGap(in.OldLogprobs, in.BehaviourLogprobs)
	}
	l, st := o.cfg.TokenLoss(o.inputsFor(i), logp, entropy, dlogp, dentropy)
	o.stats.Add(st)
	return l
}

func (o *batchObjective) addGap(old, behaviour []float32) {
	for t, b := range behaviour {
		d := float64(old[t] - b)
		o.gap += max(d, -d)
		o.gapN++
	}
}

// bounded is sample i's advantages adv, zeroed when it is a pushed-down
// answer whose summed log-probability under π_old (old) is already its
// bound or more below the base model's, or below where its pushes began
// (TrainSample.BoundStart).
func (o *batchObjective) bounded(i int, old, adv []float32) []float32 {
	if o.bounds == nil || o.bounds[i] <= 0 || o.bases[i] == nil {
		return adv
	}
	var d float64
	for t, b := range o.bases[i] {
		d += float64(old[t] - b)
	}
	o.shift += d
	o.shiftN++
	floor := -o.bounds[i]
	if o.starts != nil && o.starts[i] != nil {
		floor = max(floor, o.starts[i](d)-o.bounds[i])
	}
	if d > floor {
		return adv
	}
	o.satOut++
	clear(adv)
	return adv
}

// tokenAdvantages is a sample's per-token advantages: a rehearsal anchor's
// weight (the sample is one when isAnchor is set; the weight may be 0 under
// AnchorSignal), or adv's terms.
func tokenAdvantages(adv AdvantageConfig, anchor float64, isAnchor bool, reward float64, teacher, old []float32) ([]float32, error) {
	if !isAnchor {
		return adv.TokenAdvantages(reward, teacher, old)
	}
	out := make([]float32, len(old))
	for i := range out {
		out[i] = float32(anchor)
	}
	return out, nil
}

// SFTObjective is the negative log-likelihood of every response token.
func SFTObjective() train.Objective {
	return &batchObjective{cfg: LossConfig{Kind: LossSFT}}
}

func (o *batchObjective) inputsFor(i int) TokenInputs {
	if o.inputs == nil {
		return TokenInputs{}
	}
	return o.inputs[i]
}

// scoreInto scores the sequences seqs[i], i in idx, in one call and puts
// each one's logprobs in dst[i].
func scoreInto(ctx context.Context, score func(context.Context, []train.Sequence) ([]train.TokenScores, error), seqs []train.Sequence, idx []int, dst [][]float32) error {
	if len(idx) == 0 {
		return nil
	}
	sub := make([]train.Sequence, len(idx))
	for j, i := range idx {
		sub[j] = seqs[i]
	}
	scores, err := score(ctx, sub)
	if err != nil {
		return err
	}
	for j, i := range idx {
		dst[i] = scores[j].Logprobs
	}
	return nil
}

// StepCounter is a Stepper that says how many optimizer steps it has
// taken (train.Trainer.StepCount, restored with its checkpoint);
// StepConfig.FirstEpochs reads it.
type StepCounter interface {
	StepCount() int64
}

// epochs is how many optimizer steps a batch on tr gets under cfg.
func (cfg StepConfig) epochs(tr Stepper) int {
	if c, ok := tr.(StepCounter); ok && cfg.FirstEpochs > 0 && c.StepCount() == 0 {
		return cfg.FirstEpochs
	}
	return cfg.Epochs
}

// PolicyStep takes one optimizer step of tr on samples (cfg.Epochs, or
// cfg.FirstEpochs on a fresh optimizer).
func PolicyStep(ctx context.Context, tr Stepper, cfg StepConfig, samples []TrainSample) (Metrics, error) {
	if len(samples) == 0 {
		return Metrics{}, errors.New("policy step: no samples")
	}
	seqs := make([]train.Sequence, len(samples))
	var need []int
	// One optimizer step per batch means π_old is exactly the policy of the
	// step's own forward pass (all micro-batches run before the update), so
	// that pass supplies it and no separate scoring pass is needed — unless
	// LoRA dropout makes the training forward differ from the eval one.
	tc := tr.Config()
	lazy := tc.Mode == train.ModeFull || tc.LoRA.Dropout == 0
	for i, s := range samples {
		seqs[i] = train.Sequence{PromptIDs: s.PromptIDs, ResponseIDs: s.ResponseIDs}
		if s.OldLogprobs == nil && cfg.Loss.Kind != LossSFT && !lazy && distillCoef(cfg, s) == 0 {
			need = append(need, i)
		}
	}
	old := make([][]float32, len(samples))
	for i, s := range samples {
		old[i] = s.OldLogprobs
	}
	if err := scoreInto(ctx, tr.Score, seqs, need, old); err != nil {
		return Metrics{}, fmt.Errorf("policy step: recompute old logprobs: %w", err)
	}
	ref := make([][]float32, len(samples))
	var needRef []int
	for i, s := range samples {
		ref[i] = s.RefLogprobs
		if s.RefLogprobs == nil && cfg.Loss.KLCoef != 0 && cfg.Loss.Kind == LossPPO && distillCoef(cfg, s) == 0 {
			needRef = append(needRef, i)
		}
	}
	if err := scoreInto(ctx, tr.ScoreReference, seqs, needRef, ref); err != nil {
		return Metrics{}, fmt.Errorf("policy step: reference logprobs for the KL term: %w", err)
	}
	// The base logprobs a bound is read against are what the KL term scored
	// above (the weights with the adapters off) where it scored the sample:
	// not scored twice. A reference the caller supplied may be another policy.
	bases := make([][]float32, len(samples))
	var needBase []int
	for i, s := range samples {
		if s.Anchor < 0 && s.Bound > 0 && cfg.Loss.Kind != LossSFT {
			if s.RefLogprobs == nil && ref[i] != nil {
				bases[i] = ref[i]
			} else {
				needBase = append(needBase, i)
			}
		}
	}
	if err := scoreInto(ctx, tr.ScoreReference, seqs, needBase, bases); err != nil {
		return Metrics{}, fmt.Errorf("policy step: base logprobs of the pushed-down answers: %w", err)
	}
	rewards := make([]float64, len(samples))
	groups := make([]int, len(samples))
	for i, s := range samples {
		rewards[i], groups[i] = s.Reward, s.Group
	}
	rewards, err := GroupNormalize(rewards, groups)
	if err != nil {
		return Metrics{}, fmt.Errorf("policy step: %w", err)
	}
	single := make([]bool, len(samples))
	for i, s := range samples {
		single[i] = s.Group == 0 && s.RewardTerm
	}
	rewards = BatchBaseline(cfg.Advantage.Baseline, rewards, single)
	obj := &batchObjective{cfg: cfg.Loss, inputs: make([]TokenInputs, len(samples)), adv: cfg.Advantage,
		rewards: rewards, lazy: make([]bool, len(samples)), teachers: make([][]float32, len(samples)),
		anchors: make([]float64, len(samples)), distill: make([]float64, len(samples)),
		bounds: make([]float64, len(samples)), bases: bases, starts: make([]func(float64) float64, len(samples)), weights: sampleWeights(cfg.LossMean, seqs), anchorScale: 1,
		focus: cfg.DistillFocus}
	if cfg.AnchorScale == AnchorSignal {
		obj.anchorScale = stepSignalShare(cfg.Advantage, samples, rewards)
	}
	for i, s := range samples {
		if cfg.Loss.Kind == LossSFT {
			continue
		}
		if obj.distill[i] = distillCoef(cfg, s); obj.distill[i] != 0 {
			if cfg.DistillFocus != 0 && s.TeacherLogprobs != nil && len(s.TeacherLogprobs) != len(s.ResponseIDs) {
				return Metrics{}, fmt.Errorf("policy step: sample %d: %d teacher logprobs for %d response tokens", i, len(s.TeacherLogprobs), len(s.ResponseIDs))
			}
			obj.teachers[i] = s.TeacherLogprobs // read by DistillFocus
			continue
		}
		o := old[i]
		if o == nil {
			// Filled in by the step's forward pass; a placeholder of the
			// right length lets everything be checked now.
			o = make([]float32, len(s.ResponseIDs))
			obj.lazy[i] = true
			obj.teachers[i] = s.TeacherLogprobs
		}
		obj.anchors[i] = s.Anchor
		if s.Anchor < 0 {
			obj.bounds[i], obj.starts[i] = s.Bound, s.BoundStart
		}
		adv, err := tokenAdvantages(cfg.Advantage, s.Anchor*obj.anchorScale, s.Anchor != 0, rewards[i], s.TeacherLogprobs, o)
		if err != nil {
			return Metrics{}, fmt.Errorf("policy step: sample %d: %w", i, err)
		}
		if !obj.lazy[i] {
			adv = obj.bounded(i, o, adv)
		}
		in := TokenInputs{Advantages: adv, OldLogprobs: o, BehaviourLogprobs: s.BehaviourLogprobs, RefLogprobs: ref[i]}
		if err := cfg.Loss.Validate(in, len(s.ResponseIDs)); err != nil {
			return Metrics{}, fmt.Errorf("policy step: sample %d: %w", i, err)
		}
		if !obj.lazy[i] {
			obj.addGap(o, s.BehaviourLogprobs)
		}
		obj.inputs[i] = in
	}
	reset := cfg.Loss.Kind != LossSFT &&
		(cfg.MomentumReset == MomentumEveryStep || cfg.MomentumReset == MomentumNoSignal && !stepSignal(samples, rewards))
	if reset {
		if err := tr.ResetMomentum(); err != nil {
			return Metrics{}, fmt.Errorf("policy step: %w", err)
		}
	}
	epochs := cfg.epochs(tr) // before the step counts
	st, err := tr.Step(ctx, seqs, obj)
	if err == nil {
		err = obj.err
	}
	if err != nil {
		return Metrics{}, fmt.Errorf("policy step: %w", err)
	}
	tokens, elapsed := st.Tokens, st.Elapsed // the batch's tokens; all epochs' time
	for e := 1; e < epochs && cfg.Loss.Kind != LossSFT; e++ {
		// The first pass filled π_old and the advantages in; keep them.
		clear(obj.lazy)
		if st, err = tr.Step(ctx, seqs, obj); err == nil {
			err = obj.err
		}
		if err != nil {
			return Metrics{}, fmt.Errorf("policy step: epoch %d: %w", e+1, err)
		}
		elapsed += st.Elapsed
	}
	n := float64(max(obj.stats.Tokens, 1))
	m := Metrics{
		Step: st.Step, Loss: st.Loss, PolicyLoss: obj.stats.PolicyLoss / n, KL: obj.stats.KL / n,
		Entropy: obj.stats.Entropy / n, ClipFraction: float64(obj.stats.Clipped) / n,
		Ratio: obj.stats.Ratio / n, ISWeight: obj.stats.ISWeight / n, ISWeightMax: obj.stats.ISWeightMax,
		ISTruncated: float64(obj.stats.ISTruncated) / n, Advantage: obj.stats.Advantage / n,
		GradNorm: st.GradNorm, Samples: len(samples), Tokens: tokens, Elapsed: elapsed,
		TokensPerSec: st.TokensPerSec, LearningRate: st.LearningRate, MomentumReset: reset,
		BoundSatOut: obj.satOut, AnchorScale: obj.anchorScale, Lean: st.Lean,
	}
	if obj.gapN > 0 {
		m.OldLogprobGap = obj.gap / float64(obj.gapN)
	}
	if obj.shiftN > 0 {
		m.AvoidShift = obj.shift / float64(obj.shiftN)
	}
	return m, nil
}
