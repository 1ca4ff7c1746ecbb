package train

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"runtime/debug"
	"time"
)

// Mode picks what trains.
type Mode string

const (
	ModeLoRA Mode = "lora" // adapters on the projections; base weights frozen
	ModeFull Mode = "full" // every base weight (small models)
)

// Config configures a Trainer. Zero fields take the defaults named on each.
type Config struct {
	Mode  Mode       // default ModeLoRA
	LoRA  LoRAConfig // default DefaultLoRA()
	AdamW AdamWConfig
	// MaxGradNorm clips the global gradient norm; 0 takes 1.0, negative
	// disables clipping.
	MaxGradNorm float64
	// MicroBatchTokens packs sequences into micro-batches of at most this
	// many tokens (default 2048); a longer sequence gets one of its own.
	// Gradients of all micro-batches of a step accumulate before the update.
	MicroBatchTokens int
	// Recompute keeps only each block's input and recomputes the block
	// during the backward: activation memory of one block instead of all.
	Recompute bool
	// ActivationBudget bounds the bytes of activations a micro-batch keeps
	// for the backward. Past it, each block keeps only what it cannot
	// remake by an elementwise pass: its two norms' outputs and SwiGLU's
	// product are recomputed in the backward by the forward's own
	// functions, with the same bits (at Qwen2.5-1.5B's shape a third less
	// memory for a few per cent more step time; Recompute goes further).
	// 0 takes DefaultActivationBudget(); negative keeps everything.
	ActivationBudget int64
	// WideCacheBytes bounds the float32 copies of frozen quantized blocks
	// (projections and LM head) that one Accumulate call keeps when it
	// runs several micro-batches: the backward's dx = dy·W widens each
	// block once for all of them instead of once per micro-batch (the
	// numbers are the same). 0 takes DefaultWideCacheBytes; negative
	// keeps none. Blocks beyond the budget are widened a tile at a time,
	// as with a single micro-batch.
	WideCacheBytes int64
	// Precision is the arithmetic of the backward's products through
	// frozen base weights; empty is PrecisionFP32 (ParsePrecision's "auto",
	// the default of clawrl serve and clawrl train, picks bf16 where the
	// CPU has the instruction).
	Precision Precision
	// Seed drives LoRA initialisation and dropout masks.
	Seed uint64
	// Logger receives one line per step at debug level; nil discards.
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.Mode == "" {
		c.Mode = ModeLoRA
	}
	if c.LoRA.Rank == 0 {
		d := DefaultLoRA()
		d.Dropout = c.LoRA.Dropout
		if c.LoRA.Alpha != 0 {
			d.Alpha = c.LoRA.Alpha
		}
		if len(c.LoRA.TargetModules) > 0 {
			d.TargetModules = c.LoRA.TargetModules
		}
		c.LoRA = d
	}
	if c.LoRA.Alpha == 0 {
		c.LoRA.Alpha = 2 * float64(c.LoRA.Rank)
	}
	if len(c.LoRA.TargetModules) == 0 {
		c.LoRA.TargetModules = AllProjections()
	}
	// A config that sets only the schedule (warmup, first rate) keeps it
	// with the default rate.
	if a := c.AdamW; a.LR == 0 && a.Beta1 == 0 && a.Beta2 == 0 && a.Eps == 0 && a.WeightDecay == 0 {
		lr := 1e-4
		if c.Mode == ModeFull {
			lr = 1e-5
		}
		c.AdamW = DefaultAdamW(lr)
		c.AdamW.Warmup, c.AdamW.FirstLR, c.AdamW.FirstSteps = a.Warmup, a.FirstLR, a.FirstSteps
	}
	if c.MaxGradNorm == 0 {
		c.MaxGradNorm = 1
	}
	if c.MicroBatchTokens <= 0 {
		c.MicroBatchTokens = 2048
	}
	if c.ActivationBudget == 0 {
		c.ActivationBudget = DefaultActivationBudget()
	}
	if c.WideCacheBytes == 0 {
		c.WideCacheBytes = DefaultWideCacheBytes
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Precision == "" {
		c.Precision = PrecisionFP32
	}
	return c
}

// checkNumbers refuses optimizer and adapter settings that would train
// nonsense rather than fail: a negative learning rate (gradient ascent), and
// NaN or an infinity anywhere they enter the update (every weight NaN after
// the first step, found only when the adapter is saved or served).
func (c Config) checkNumbers() error {
	a := c.AdamW
	for _, v := range []struct {
		name string
		v    float64
		ok   bool
	}{
		{"learning rate", a.LR, a.LR > 0},
		{"first learning rate", a.FirstLR, a.FirstLR >= 0},
		{"AdamW beta1", a.Beta1, a.Beta1 >= 0 && a.Beta1 < 1},
		{"AdamW beta2", a.Beta2, a.Beta2 >= 0 && a.Beta2 < 1},
		{"AdamW eps", a.Eps, a.Eps > 0},
		{"weight decay", a.WeightDecay, a.WeightDecay >= 0},
		{"LoRA alpha", c.LoRA.Alpha, c.Mode != ModeLoRA || c.LoRA.Alpha > 0},
		{"max gradient norm", c.MaxGradNorm, true}, // negative: no clipping
	} {
		if math.IsNaN(v.v) || math.IsInf(v.v, 0) || !v.ok {
			return fmt.Errorf("train: %s %g: want a finite number in its range (learning rate and eps > 0, betas in [0, 1), weight decay ≥ 0, LoRA alpha > 0)", v.name, v.v)
		}
	}
	return nil
}

// Sequence is one training example: the loss reads the response tokens,
// each predicted from the prompt and the response tokens before it.
type Sequence struct {
	PromptIDs   []int32
	ResponseIDs []int32
}

// Objective turns per-token log-probabilities into a loss. The trainer calls
// TokenLoss once per sequence i of a step with the log-probabilities and
// entropies of its response tokens under the current weights; it writes
// d(loss)/d(logp) and d(loss)/d(entropy) for each token and returns the loss
// summed over the tokens. The trainer divides loss and gradients by the
// step's token count (see Normalizer).
type Objective interface {
	TokenLoss(i int, logp, entropy, dlogp, dentropy []float32) float64
}

// Normalizer is implemented by objectives that average over fewer tokens
// than all response tokens (masked tokens); Tokens is the divisor.
type Normalizer interface {
	Tokens() int
}

// Stats describe one step.
type Stats struct {
	Step          int64   // optimizer steps taken so far
	Loss          float64 // mean per-token loss
	Tokens        int     // response tokens trained on
	TotalTokens   int     // prompt + response tokens processed
	GradNorm      float64 // global norm before clipping
	MicroBatches  int
	Elapsed       time.Duration
	TokensPerSec  float64 // all tokens processed (forward+backward+update) per second
	LearningRate  float64
	SequenceCount int
	// Lean: the step's blocks kept no norm outputs or SwiGLU product and
	// the backward remade them (Config.ActivationBudget).
	Lean bool
}

// Trainer trains one model's weights in place.
type Trainer struct {
	cfg    Config
	w      *Weights
	params []*Tensor
	opt    *adamW
	ws     *workspace
	micro  uint64 // micro-batches run, seeds dropout
	yield  func(ctx context.Context) error
}

// SetYield installs a function called at every yield point of Score and
// Accumulate (so also Step): before every micro-batch and, inside one,
// between blocks, between a block's projections and between pieces of the LM
// head (each at most a few milliseconds of work apart). A serving process
// uses it to hold training while requests are being generated, so it should
// return at once when there is nothing to wait for: it runs hundreds of
// times per micro-batch. Waiting in it is safe anywhere: the trainer's
// buffers stay as they are, and a step that waited computes exactly what one
// that did not would. An error from it aborts the call (weights unchanged;
// Accumulate leaves partial gradients, which the next Step's ZeroGrad
// clears).
func (t *Trainer) SetYield(yield func(ctx context.Context) error) { t.yield = yield }

// yieldFor returns the workspace's yield hook for one call under ctx: it
// also stops the pass when ctx ends.
func (t *Trainer) yieldFor(ctx context.Context) func() error {
	return func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if t.yield != nil {
			return t.yield(ctx)
		}
		return nil
	}
}

// New prepares w for training: in LoRA mode it attaches fresh adapters unless
// w already has some (loaded from a checkpoint), and freezes the base.
func New(w *Weights, cfg Config) (*Trainer, error) {
	cfg = cfg.withDefaults()
	if err := cfg.checkNumbers(); err != nil {
		return nil, err
	}
	if err := w.Arch.validate(); err != nil {
		return nil, err
	}
	t := &Trainer{cfg: cfg, w: w}
	for _, p := range w.BaseTensors() {
		p.Grad = nil
	}
	switch cfg.Mode {
	case ModeLoRA:
		if len(w.LoRATensors()) == 0 {
			if err := AttachLoRA(w, cfg.LoRA, cfg.Seed); err != nil {
				return nil, err
			}
		} else {
			// Adapters loaded from a checkpoint: their settings win, so a
			// saved adapter describes what was trained.
			t.cfg.LoRA = w.attachedLoRAConfig()
		}
		t.params = w.LoRATensors()
	case ModeFull:
		if w.Quantized() {
			return nil, errors.New("train: full mode on quantized base weights (train LoRA on them, or load the model as float32)")
		}
		if len(w.LoRATensors()) > 0 {
			return nil, errors.New("train: full mode on weights with LoRA adapters attached")
		}
		t.params = w.BaseTensors()
	default:
		return nil, fmt.Errorf("train: unknown mode %q", cfg.Mode)
	}
	for _, p := range t.params {
		p.trainable()
	}
	t.opt = newAdamW(cfg.AdamW, t.params)
	var err error
	if t.ws, err = newWorkspace(w, cfg.Recompute, cfg.ActivationBudget); err != nil {
		return nil, err
	}
	switch cfg.Precision {
	case PrecisionFP32:
	case PrecisionBF16:
		t.ws.bf16 = &bf16Packs{}
	default:
		return nil, fmt.Errorf("train: precision %q: want fp32 or bf16", cfg.Precision)
	}
	return t, nil
}

// Weights are the weights being trained.
func (t *Trainer) Weights() *Weights { return t.w }

// Params are the trainable tensors, in optimizer order.
func (t *Trainer) Params() []*Tensor { return t.params }

// Config is the effective configuration (defaults filled in).
func (t *Trainer) Config() Config { return t.cfg }

// StepCount is the number of optimizer steps taken.
func (t *Trainer) StepCount() int64 { return t.opt.step }

func (t *Trainer) check(seqs []Sequence) error {
	v := int32(t.w.Arch.Vocab)
	for i, s := range seqs {
		if len(s.PromptIDs) == 0 {
			return fmt.Errorf("train: sequence %d: empty prompt (the first response token needs a context)", i)
		}
		for _, ids := range [][]int32{s.PromptIDs, s.ResponseIDs} {
			for _, id := range ids {
				if id < 0 || id >= v {
					return fmt.Errorf("train: sequence %d: token id %d outside vocab %d", i, id, v)
				}
			}
		}
	}
	return nil
}

// microBatches packs consecutive sequences into groups of at most the token
// budget.
func (t *Trainer) microBatches(seqs []Sequence) [][2]int {
	return MicroBatches(seqs, t.cfg.MicroBatchTokens)
}

// MicroBatches packs consecutive sequences into [start, end) groups of at
// most budget tokens (prompt + response); a longer sequence gets a group of
// its own. Other trainers (train/torchtrain) pack the same way.
func MicroBatches(seqs []Sequence, budget int) [][2]int {
	var out [][2]int
	start, tokens := 0, 0
	for i, s := range seqs {
		n := len(s.PromptIDs) + len(s.ResponseIDs)
		if i > start && tokens+n > budget {
			out = append(out, [2]int{start, i})
			start, tokens = i, 0
		}
		tokens += n
	}
	if start < len(seqs) {
		out = append(out, [2]int{start, len(seqs)})
	}
	return out
}

// TokenScores are the log-probabilities and entropies of one sequence's
// response tokens.
type TokenScores struct {
	Logprobs []float32
	Entropy  []float32
}

// Score computes per-token log-probabilities and entropies of the response
// tokens under the current weights (eval mode: no dropout, no gradients).
// It is π_old when called before a step.
func (t *Trainer) Score(ctx context.Context, seqs []Sequence) ([]TokenScores, error) {
	if err := t.check(seqs); err != nil {
		return nil, err
	}
	out := make([]TokenScores, len(seqs))
	t.ws.yield = t.yieldFor(ctx)
	defer func() { t.ws.yield = nil }()
	for _, mb := range t.microBatches(seqs) {
		if err := t.ws.pause(); err != nil {
			return nil, err
		}
		batch := seqs[mb[0]:mb[1]]
		t.ws.prepare(batch)
		if err := t.ws.forward(0, false); err != nil {
			return nil, err
		}
		off := 0
		for j, s := range batch {
			n := len(s.ResponseIDs)
			out[mb[0]+j] = TokenScores{
				Logprobs: append([]float32(nil), t.ws.logp[off:off+n]...),
				Entropy:  append([]float32(nil), t.ws.entropy[off:off+n]...),
			}
			off += n
		}
	}
	return out, nil
}

// ScoreReference is Score under the base weights with the LoRA adapters
// switched off: the reference policy π_ref for a KL penalty in LoRA mode.
func (t *Trainer) ScoreReference(ctx context.Context, seqs []Sequence) ([]TokenScores, error) {
	if t.cfg.Mode != ModeLoRA {
		return nil, errors.New("train: reference scores need LoRA mode (full fine-tuning has changed the base weights)")
	}
	t.ws.baseOnly = true
	defer func() { t.ws.baseOnly = false }()
	return t.Score(ctx, seqs)
}

// ZeroGrad clears the accumulated gradients.
func (t *Trainer) ZeroGrad() {
	for _, p := range t.params {
		clear(p.Grad)
	}
}

// Accumulate runs forward and backward over seqs and adds
// scale·d(Σ token losses)/dθ to the gradients, without an update. It returns
// the summed (unscaled) loss. Step is ZeroGrad + Accumulate + Update; call
// these directly to accumulate gradients over several calls.
func (t *Trainer) Accumulate(ctx context.Context, seqs []Sequence, obj Objective, scale float64) (float64, int, error) {
	if err := t.check(seqs); err != nil {
		return 0, 0, err
	}
	var loss float64
	mbs := t.microBatches(seqs)
	t.ws.yield = t.yieldFor(ctx)
	defer func() { t.ws.yield = nil }()
	if len(mbs) > 1 && t.cfg.WideCacheBytes > 0 {
		t.ws.wide = &wideCache{budget: t.cfg.WideCacheBytes}
		defer func() {
			// The copies go back to the OS now: left to the collector, the
			// next call's copies were allocated beside them (16 × 190
			// tokens on Qwen2.5-0.5B: peak RSS +3.4 GB instead of +2).
			t.ws.wide = nil
			debug.FreeOSMemory()
		}()
	}
	for _, mb := range mbs {
		if err := t.ws.pause(); err != nil {
			return 0, 0, err
		}
		batch := seqs[mb[0]:mb[1]]
		t.micro++
		seed := t.cfg.Seed ^ (t.micro * 0x9e3779b97f4a7c15)
		ws := t.ws
		ws.prepare(batch)
		rows := make([]int, len(batch))
		for j, s := range batch {
			rows[j] = len(s.ResponseIDs)
		}
		sc := float32(scale)
		off := 0
		// TokenLoss runs once per sequence, in order, as the LM head
		// reaches it (see workspace.trainPass).
		err := ws.trainPass(seed, rows, func(s0, s1 int) {
			lo := off
			for j := s0; j < s1; j++ {
				n := rows[j]
				dl, de := ws.dlogp[off:off+n], ws.dentropy[off:off+n]
				clear(dl)
				clear(de)
				loss += obj.TokenLoss(mb[0]+j, ws.logp[off:off+n], ws.entropy[off:off+n], dl, de)
				off += n
			}
			for i := lo; i < off; i++ {
				ws.dlogp[i] *= sc
				ws.dentropy[i] *= sc
			}
		})
		if err != nil {
			return 0, 0, err
		}
	}
	return loss, len(mbs), nil
}

// Update clips the accumulated gradients and takes one AdamW step. It
// returns the gradient norm before clipping.
func (t *Trainer) Update() float64 {
	norm := clipGradNorm(t.params, t.cfg.MaxGradNorm)
	t.opt.update(t.params)
	return norm
}

// ResetMomentum zeroes AdamW's first moment and restarts its bias
// correction, so the next update follows the next gradient alone
// (m̂ = g, scaled by the second moment kept from every step before) instead
// of carrying β1 = 0.9 of the updates before it. The loop calls it as
// rl.StepConfig.MomentumReset says (--momentum-reset no-signal: before a
// version's step whose batch has nothing to learn, where the first moment
// kept would repeat the last update; BENCHMARKS.md, "AdamW's first moment
// across versions").
// It cannot fail here (a torch worker's can); the error is rl.Stepper's.
func (t *Trainer) ResetMomentum() error {
	t.opt.resetMomentum()
	return nil
}

// OptimizerState copies AdamW's moments and step counts.
func (t *Trainer) OptimizerState() OptimizerState { return t.opt.state() }

// SetOptimizerState puts back a state OptimizerState copied from this
// trainer (the same parameters): the updates since leave no trace in the
// optimizer, only in the weights.
func (t *Trainer) SetOptimizerState(s OptimizerState) error { return t.opt.setState(s) }

// Step is one optimizer step on seqs: the loss is averaged per response
// token over the whole step (or over Normalizer.Tokens).
func (t *Trainer) Step(ctx context.Context, seqs []Sequence, obj Objective) (Stats, error) {
	start := time.Now()
	st := Stats{SequenceCount: len(seqs), LearningRate: t.cfg.AdamW.LR}
	for _, s := range seqs {
		st.Tokens += len(s.ResponseIDs)
		st.TotalTokens += len(s.PromptIDs) + len(s.ResponseIDs)
	}
	denom := st.Tokens
	if n, ok := obj.(Normalizer); ok {
		denom = n.Tokens()
	}
	if denom <= 0 {
		return st, errors.New("train: step with no response tokens to train on")
	}
	t.ZeroGrad()
	loss, mbs, err := t.Accumulate(ctx, seqs, obj, 1/float64(denom))
	if err != nil {
		return st, err
	}
	st.GradNorm = t.Update()
	st.LearningRate = t.cfg.AdamW.Rate(t.opt.step)
	st.Loss = loss / float64(denom)
	st.MicroBatches = mbs
	st.Lean = t.ws.lean()
	st.Step = t.opt.step
	st.Elapsed = time.Since(start)
	st.TokensPerSec = float64(st.TotalTokens) / st.Elapsed.Seconds()
	t.cfg.Logger.Debug("train step", "step", st.Step, "loss", st.Loss, "grad_norm", st.GradNorm,
		"tokens", st.Tokens, "micro_batches", mbs, "lean", st.Lean, "elapsed", st.Elapsed)
	return st, nil
}

// WithDefaults is c with every unset field at its default, as New uses it
// (for trainers outside this package that must train exactly alike).
func (c Config) WithDefaults() Config { return c.withDefaults() }
