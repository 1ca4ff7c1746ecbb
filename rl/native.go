package rl

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

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
	// ResetMomentum zeroes the optimizer's first moment and restarts its
	// bias correction (train.Trainer.ResetMomentum); PolicyStep calls it
	// as StepConfig.MomentumReset says.
	ResetMomentum() error
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
	// rehearsal, when set, adds its anchors to every step.
	rehearsal *Rehearsal
}

// SetRehearsal makes every step also train on r's anchors (nil: none).
func (p *PolicyTrainer) SetRehearsal(r *Rehearsal) { p.rehearsal = r }

// Rehearsal is the anchors every step trains on beside its batch (nil:
// none).
func (p *PolicyTrainer) Rehearsal() *Rehearsal { return p.rehearsal }

// Rehearser is a trainer that trains rehearsal anchors beside its steps
// (PolicyTrainer): the scheduler builds them before the first batch, the
// loop tells them the hints it trained on.
type Rehearser interface {
	Rehearsal() *Rehearsal
}

var (
	_ Rehearser = (*PolicyTrainer)(nil)
	_ Focuser   = (*PolicyTrainer)(nil)
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

// DistillFocus implements Focuser.
func (p *PolicyTrainer) DistillFocus() float64 { return p.cfg.DistillFocus }

// SetDistillFocus implements Focuser: the steps after it weigh
// teacher-written tokens by focus (0: alike).
func (p *PolicyTrainer) SetDistillFocus(focus float64) { p.cfg.DistillFocus = focus }

// Stepper is the wrapped trainer.
func (p *PolicyTrainer) Stepper() Stepper { return p.st }

// NativeTrainer is a PolicyTrainer on the in-process Go trainer (package
// train).
type NativeTrainer struct {
	*PolicyTrainer
	tr    *train.Trainer
	yield func(ctx context.Context) error
	// before holds the LoRA parameters as they were before the last Step,
	// for ShrinkStep.
	before [][]float32
	// stepScale is the fraction of the last step held (StepScale).
	stepScale float64
}

var (
	_ Trainer  = (*NativeTrainer)(nil)
	_ Yielder  = (*NativeTrainer)(nil)
	_ Answerer = (*NativeTrainer)(nil)
	_ Shrinker = (*NativeTrainer)(nil)
	_ Repairer = (*NativeTrainer)(nil)
)

// Step implements Trainer; in LoRA mode it keeps the adapters as they were
// before the step (a few megabytes), so ShrinkStep can shorten it.
func (n *NativeTrainer) Step(ctx context.Context, batch []Sample) (StepMetrics, error) {
	n.before, n.stepScale = nil, 1
	if n.tr.Config().Mode == train.ModeLoRA {
		for _, p := range n.tr.Params() {
			n.before = append(n.before, append([]float32(nil), p.Data...))
		}
	}
	return n.PolicyTrainer.Step(ctx, batch)
}

// Repair implements Repairer: one step on every rehearsal anchor alone,
// with AdamW's first moment reset for it and the optimizer's state put back
// after it, so the repair moves the weights only. The weights before the
// version's step are kept: ShrinkStep after a repair shrinks the step and
// the repair together.
func (n *NativeTrainer) Repair(ctx context.Context) (StepMetrics, error) {
	anchors, err := n.rehearsal.All(ctx)
	if err != nil {
		return StepMetrics{}, fmt.Errorf("trainer: repair: %w", err)
	}
	if len(anchors) == 0 {
		return StepMetrics{}, ErrNoAnchors
	}
	saved := n.tr.OptimizerState()
	cfg := n.cfg
	cfg.MomentumReset = MomentumEveryStep
	m, err := PolicyStep(ctx, n.st, cfg, anchors)
	if serr := n.tr.SetOptimizerState(saved); serr != nil && err == nil {
		err = serr
	}
	if err != nil {
		return StepMetrics{}, fmt.Errorf("trainer: repair: %w", err)
	}
	return StepMetrics{Loss: m.Loss, KL: m.KL, Entropy: m.Entropy, Tokens: m.Tokens, MomentumReset: true}, nil
}

// Load implements Trainer; loaded weights have no step to shrink.
func (n *NativeTrainer) Load(dir string) error {
	n.before = nil
	return n.PolicyTrainer.Load(dir)
}

// ShrinkStep implements Shrinker: the step is shortened to frac of what it
// was, in the product ΔW = s·B·A that the served model adds, not only in the
// factors. Moving both factors back linearly, (B0+f·dB)(A0+f·dA), misses
// B0A0 + f·(B1A1 − B0A0) by f(1−f)·dB·dA; for an adapter layer whose B was
// zero before the step (every layer until a version is served, and after
// a rollback to the base) that error is the whole second-order term. There
// the exact choice costs nothing: B = f·B1 with A = A1 gives exactly
// f·ΔW1, and it stays rank r, so the trainer goes on from precisely the
// weights it serves. A layer whose B was not zero has no rank-r factors of
// B0A0 + f·(B1A1 − B0A0) in general (the sum has rank up to 2r); it keeps
// the linear move, off the exact interpolation by f(1−f)·s·dB·dA
// (second order in the step). Called again, it shrinks the shrunk step (frac
// multiplies).
func (n *NativeTrainer) ShrinkStep(frac float64) error {
	params := n.tr.Params()
	if n.before == nil || len(n.before) != len(params) {
		return fmt.Errorf("trainer: no step to shrink (LoRA mode only)")
	}
	f := float32(frac)
	for _, pr := range n.loraPairs() {
		a, b := params[pr.a], params[pr.b]
		b0, a0 := n.before[pr.b], n.before[pr.a]
		exact := allZero(b0)
		for j, v := range b0 {
			b.Data[j] = v + f*(b.Data[j]-v)
		}
		if exact {
			continue // A stays A1: B·A = f·B1·A1
		}
		for j, v := range a0 {
			a.Data[j] = v + f*(a.Data[j]-v)
		}
	}
	n.stepScale *= frac
	return nil
}

// StepScale is the fraction of the last step the weights now hold (1 after
// Step, halved by each ShrinkStep(0.5)).
func (n *NativeTrainer) StepScale() float64 { return n.stepScale }

// ShrinkMiss is how far the weights a shrunk step left are from the exact
// interpolation W + ΔW0 + α·(ΔW1 − ΔW0), relative to the step they hold:
// ‖miss‖_F / ‖α·(ΔW1 − ΔW0)‖_F over all adapted projections (0 after a
// full step, and for layers that started from B = 0). It is computed from
// r×r Gram matrices, never forming an out×in product.
func (n *NativeTrainer) ShrinkMiss() float64 {
	params := n.tr.Params()
	alpha := n.stepScale
	if n.before == nil || len(n.before) != len(params) || alpha >= 1 || alpha <= 0 {
		return 0
	}
	r := n.tr.Config().LoRA.Rank
	var miss2, step2 float64
	for _, pr := range n.loraPairs() {
		a, b := params[pr.a].Data, params[pr.b].Data
		a0, b0 := n.before[pr.a], n.before[pr.b]
		if allZero(b0) { // exact: B = α·B1, A = A1
			step2 += frobProd(b, b, a, a, r)
			continue
		}
		// Both factors moved to before + α·d: the full step's factors.
		da, db := make([]float32, len(a)), make([]float32, len(b))
		a1, b1 := make([]float32, len(a)), make([]float32, len(b))
		for j := range a {
			da[j] = (a[j] - a0[j]) / float32(alpha)
			a1[j] = a0[j] + da[j]
		}
		for j := range b {
			db[j] = (b[j] - b0[j]) / float32(alpha)
			b1[j] = b0[j] + db[j]
		}
		miss2 += alpha * alpha * (1 - alpha) * (1 - alpha) * frobProd(db, db, da, da, r)
		d2 := frobProd(b1, b1, a1, a1, r) + frobProd(b0, b0, a0, a0, r) - 2*frobProd(b1, b0, a1, a0, r)
		step2 += alpha * alpha * max(d2, 0)
	}
	if step2 == 0 {
		return 0
	}
	return math.Sqrt(miss2 / step2)
}

// frobProd is ⟨Bx·Ax, By·Ay⟩_F for B [out, r] and A [r, in] row-major:
// Σ_kl (Bxᵀ·By)_kl (Ax·Ayᵀ)_kl.
func frobProd(bx, by, ax, ay []float32, r int) float64 {
	out, in := len(bx)/r, len(ax)/r
	var sum float64
	for k := range r {
		for l := range r {
			var g, h float64
			for o := range out {
				g += float64(bx[o*r+k]) * float64(by[o*r+l])
			}
			for c := range in {
				h += float64(ax[k*in+c]) * float64(ay[l*in+c])
			}
			sum += g * h
		}
	}
	return sum
}

// loraPair is one adapted projection: the indices of its lora_A and
// lora_B tensors in Params.
type loraPair struct{ a, b int }

// loraPairs pairs each lora_A tensor with the lora_B of the same
// projection (PEFT names: "<prefix>.lora_A.weight", "<prefix>.lora_B.weight").
func (n *NativeTrainer) loraPairs() []loraPair {
	params := n.tr.Params()
	bs := map[string]int{}
	for i, p := range params {
		if pre, ok := strings.CutSuffix(p.Name, ".lora_B.weight"); ok {
			bs[pre] = i
		}
	}
	var out []loraPair
	for i, p := range params {
		if pre, ok := strings.CutSuffix(p.Name, ".lora_A.weight"); ok {
			if j, ok := bs[pre]; ok {
				out = append(out, loraPair{a: i, b: j})
			}
		}
	}
	return out
}

func allZero(xs []float32) bool {
	for _, x := range xs {
		if x != 0 {
			return false
		}
	}
	return true
}

// SetYield implements Yielder: yield runs before every micro-batch and at
// yield points a few milliseconds apart inside one (train.Trainer.SetYield),
// and between the decode steps of Answer.
func (n *NativeTrainer) SetYield(yield func(ctx context.Context) error) {
	n.yield = yield
	n.tr.SetYield(yield)
}

// Answer implements Answerer: greedy answers under the weights being
// trained, generated by the model's own forward (the one the native engine
// serves with: in LoRA mode the served model itself, its base weights shared
// with the trainer, with a snapshot of the current adapters). Nothing is
// published, so the engine never serves the candidate. The prompts decode
// together, one batched forward per token.
func (n *NativeTrainer) Answer(ctx context.Context, prompts [][]int32, maxTokens int, stop []int32, done func(i int, answer []int32) bool) ([][]int32, error) {
	m, err := n.tr.Weights().Model()
	if err != nil {
		return nil, fmt.Errorf("trainer: answer: %w", err)
	}
	var ad *model.Adapter // full fine-tuning: the model view holds the trained weights
	if n.tr.Config().Mode == train.ModeLoRA {
		if ad, err = n.tr.Adapter(); err != nil {
			return nil, fmt.Errorf("trainer: answer: %w", err)
		}
	}
	pause := func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if n.yield != nil {
			return n.yield(ctx)
		}
		return nil
	}
	out := make([][]int32, len(prompts))
	var (
		seqs []*model.Sequence
		next []int32
		idx  []int // prompt of each running sequence
	)
	// take records each running sequence's next token and keeps those that
	// go on.
	take := func(logits [][]float32) {
		keepSeqs, keepNext, keepIdx := seqs[:0], next[:0], idx[:0]
		for j, l := range logits {
			id, _ := model.Sample(l, model.SamplingParams{}, nil)
			i := idx[j]
			if slices.Contains(stop, id) {
				continue
			}
			out[i] = append(out[i], id)
			if len(out[i]) >= maxTokens || (done != nil && done(i, out[i])) {
				continue
			}
			keepSeqs, keepNext, keepIdx = append(keepSeqs, seqs[j]), append(keepNext, id), append(keepIdx, i)
		}
		seqs, next, idx = keepSeqs, keepNext, keepIdx
	}
	logits := make([][]float32, 0, len(prompts))
	for i, p := range prompts {
		if err := pause(); err != nil {
			return nil, err
		}
		seq := m.NewSequence()
		l, err := m.Prefill(ctx, seq, p, ad)
		if err != nil {
			return nil, fmt.Errorf("trainer: answer %d: %w", i, err)
		}
		seqs, next, idx = append(seqs, seq), append(next, 0), append(idx, i)
		logits = append(logits, l)
	}
	if maxTokens <= 0 {
		return out, nil
	}
	take(logits)
	for len(seqs) > 0 {
		if err := pause(); err != nil {
			return nil, err
		}
		adapters := make([]*model.Adapter, len(seqs))
		for j := range adapters {
			adapters[j] = ad
		}
		if logits, err = m.DecodeStep(seqs, next, adapters); err != nil {
			return nil, fmt.Errorf("trainer: answer: %w", err)
		}
		take(logits)
	}
	return out, nil
}

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
			BehaviourLogprobs: s.BehaviourLogprobs, TeacherLogprobs: s.TeacherLogprobs, TeacherWrote: s.TeacherWrote}
		if s.UseRL {
			ts[i].Reward, ts[i].RewardTerm = s.Reward, true
		}
	}
	for _, s := range batch {
		if s.WrittenIDs != nil {
			ts = append(ts, TrainSample{PromptIDs: s.PromptIDs, ResponseIDs: s.WrittenIDs, TeacherLogprobs: s.WrittenLogprobs, TeacherWrote: true})
		}
	}
	anchors, err := n.rehearsal.Samples(ctx)
	if err != nil {
		return StepMetrics{}, fmt.Errorf("trainer: %w", err)
	}
	ts = append(ts, anchors...)
	m, err := PolicyStep(ctx, n.st, n.cfg, ts)
	if err != nil {
		return StepMetrics{}, fmt.Errorf("trainer: %w", err)
	}
	return StepMetrics{Loss: m.Loss, ClipFraction: m.ClipFraction, KL: m.KL, Entropy: m.Entropy,
		Tokens: m.Tokens, ImportanceWeightMean: m.ISWeight, ImportanceWeightMax: m.ISWeightMax,
		ImportanceTruncated: m.ISTruncated, MomentumReset: m.MomentumReset, AvoidSatOut: m.BoundSatOut, AvoidShift: m.AvoidShift, AnchorScale: m.AnchorScale,
		Lean: m.Lean}, nil
}

// Save implements Trainer: the PEFT adapter (or full weights) with the
// optimizer state beside it, and the rehearsal's state (RehearsalFile).
func (n *PolicyTrainer) Save(dir string) error {
	if err := n.st.SaveCheckpoint(dir); err != nil {
		return err
	}
	return n.rehearsal.Save(dir)
}

// Load implements Trainer; the rehearsal's state joins what it holds
// (Rehearsal.Load).
func (n *PolicyTrainer) Load(dir string) error {
	if err := n.st.LoadCheckpoint(dir); err != nil {
		return err
	}
	return n.rehearsal.Load(dir)
}

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
