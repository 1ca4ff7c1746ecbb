// Package loop runs clawrl's learning loops in the background of `clawrl
// serve` (DESIGN.md, "The four loops"): the judge loop turns observed turns
// into judgments and samples, the train loop (rl.Scheduler) turns batches of
// samples into adapter versions the engine serves. Neither waits for the
// other, and neither ever blocks serving: they only read and move rows in the
// Store, and yield the CPU to serving through an rl.Gate.
//
// Wiring, from serve.go:
//
//	gate := rl.NewGate()
//	served := rl.GatedEngine{Engine: eng, Gate: gate} // what the gateway serves from
//	r, err := loop.New(loop.Options{Store: st, Engine: eng, Publisher: eng, Trainer: tr, Gate: gate, ...})
//	err = r.Start(ctx) // recovers, then runs until ctx ends
package loop

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/judge"
	"github.com/clawrl/clawrl/rl"
	"github.com/clawrl/clawrl/store"
)

// Config tunes the loops. Zero fields take the defaults.
type Config struct {
	Method rl.Method // default combine
	// SessionTimeout, when positive, makes the judge loop expire sessions
	// idle this long itself. By default (0) the gateway's session tracker
	// does it; either way the at-least-one rule settles expired sessions.
	SessionTimeout time.Duration
	// Poll is how often the judge loop looks for work; default 500ms.
	Poll time.Duration
	// JudgeConcurrency is how many turns are judged at once (each with its
	// votes in parallel); default 2.
	JudgeConcurrency int
	// TeacherConcurrency is how many teacher samples are built at once
	// (a round builds at most this many: buildSamples); default
	// DefaultTeacherConcurrency.
	TeacherConcurrency int
	// JudgeBatch bounds the turns one judge round takes; default 64.
	JudgeBatch int
	// YieldToServing makes judge and teacher calls wait for serving to go
	// idle (at most IdleWait); on by default (set NoYield to turn it off).
	NoYield        bool
	YieldToServing bool
	IdleWait       time.Duration // default 5s (see rl.SchedulerConfig.IdleWait)
	// TeacherWrites makes OPD samples train on a response the teacher
	// writes with the hint in context (context distillation) instead of
	// the teacher re-scoring the policy's own response; TeacherTokens
	// bounds it (default 128). See judge.Teacher.Write.
	TeacherWrites bool
	TeacherTokens int
	// TeacherAlsoWrites keeps the policy's own response re-scored by the
	// teacher (with the turn's reward) and adds the teacher-written one
	// beside it, both from one turn (--opd-response both).
	TeacherAlsoWrites bool
	// TeacherSamples > 1 has the teacher write that many answers at
	// TeacherTemperature and Options.Selector keep one (teacher_samples.go).
	TeacherSamples     int
	TeacherTemperature float64
	// TeacherSelect is SelectJudge (Options.Selector picks) or SelectGain
	// (the hint gain under the teacher, above TeacherSelectThreshold).
	TeacherSelect          string
	TeacherSelectThreshold float64
	// TeacherSelectRelevance: under SelectGain, only answers the
	// question makes more likely are picked, ranked by the lesser of
	// that relevance and the gain (judge.HintGain.ScoreRelevant).
	TeacherSelectRelevance bool
	// TeacherSelectOpening: with TeacherSelectRelevance, an answer whose
	// opening the question makes less than this many nats a token
	// likelier is never picked (judge.RelevantRank); 0: off.
	TeacherSelectOpening float64
	// TeacherSelectQuoted: the answers that say the feedback's quoted
	// words are preferred (judge.PreferQuoted).
	TeacherSelectQuoted bool
	// TeacherLoops is what becomes of a teacher answer that loops
	// (rl.Loops): LoopsTrain, LoopsRefuse or LoopsCut (--teacher-loops).
	TeacherLoops string
	// TeacherQuotedRetry > 1: with one teacher answer per turn (and
	// SelectGain), a turn whose feedback quotes words the lone answer
	// does not say (or whose lone answer is refused) is written again as
	// best of TeacherQuotedRetry under TeacherSelectQuoted's preference.
	TeacherQuotedRetry int
	// TeacherFitRetry > 1: with one teacher answer per turn and the hint
	// gain, a turn whose lone answer (otherwise kept) does not end within
	// the rated turn's token budget is written again as best of
	// TeacherFitRetry, capped at the budget, and the best-gaining answer
	// that fits (and says the feedback's quoted words, where it quotes
	// any) is trained; with none, the lone answer is.
	TeacherFitRetry int
	// TeacherFitScope is FitScopeQuoted or FitScopeAny: which answers
	// TeacherFitRetry writes again ("" is FitScopeQuoted).
	TeacherFitScope string
	// TeacherGainBy is the weights that read the hint gain: GainByBase,
	// GainByPolicy, or GainByTeacher (Options.Teacher's adapter); ""
	// is DefaultGainBy.
	TeacherGainBy string
	// TeacherSelectLength is LengthOff or LengthFit (""
	// is DefaultSelectLength).
	TeacherSelectLength string
	// TeacherFitShare is the share of the budget under LengthFit
	// (judge.Share; 0 is all of it).
	TeacherFitShare float64
	// Training: batch size, staleness bound, versions folder.
	Train rl.SchedulerConfig
}

func (c Config) withDefaults() Config {
	if c.Method == "" {
		c.Method = rl.MethodCombine
	}
	if c.Poll <= 0 {
		c.Poll = 500 * time.Millisecond
	}
	if c.JudgeConcurrency <= 0 {
		c.JudgeConcurrency = 2
	}
	if c.TeacherConcurrency <= 0 {
		c.TeacherConcurrency = DefaultTeacherConcurrency
	}
	if c.JudgeBatch <= 0 {
		c.JudgeBatch = 64
	}
	c.YieldToServing = !c.NoYield
	if c.IdleWait <= 0 {
		c.IdleWait = 5 * time.Second
	}
	if c.TeacherTokens <= 0 {
		c.TeacherTokens = 128
	}
	if c.TeacherSelect == "" {
		c.TeacherSelect = DefaultTeacherSelect
	}
	if c.TeacherGainBy == "" {
		c.TeacherGainBy = DefaultGainBy
	}
	if c.TeacherSelectLength == "" {
		c.TeacherSelectLength = DefaultSelectLength
	}
	c.Train.Method = c.Method
	if c.Train.IdleWait <= 0 {
		c.Train.IdleWait = c.IdleWait
	}
	return c
}

// Options are the parts the runner joins.
type Options struct {
	Store store.LearningStore
	// Judge votes on turns (judge.New on an EngineBackend or HTTPBackend).
	Judge *judge.Judge
	// Teacher scores responses with hints; needed for opd and combine.
	Teacher *judge.Teacher
	// Selector picks among Config.TeacherSamples teacher answers; needed
	// when that is more than 1.
	Selector *judge.Selector
	// Trainer and Publisher run the train loop; with no Trainer, samples
	// are built and kept ready but nothing trains.
	Trainer   rl.Trainer
	Publisher engine.Publisher
	Gate      *rl.Gate
	Config    Config
	Log       *slog.Logger
}

// Counters are the judge loop's running totals since start.
type Counters struct {
	Judged, Positive, Negative, HintsAccepted int
	Samples, AtLeastOne, Dropped, Revised     int
	RoundErrors                               int
	LastError                                 string
	// TeacherPicked and TeacherNoPick count best-of-N teacher selections
	// (teacher_samples.go): an answer picked, or none passed the selector.
	TeacherPicked, TeacherNoPick int
	// TeacherFitOther and TeacherFitNone count the picks that
	// --teacher-select-length fit changed (judge.PreferFit): to another
	// answer, or to none (also counted in TeacherNoPick).
	TeacherFitOther, TeacherFitNone int
	// TeacherQuotedOther counts the picks --teacher-select-quoted moved
	// to an answer that says the feedback's quoted words.
	TeacherQuotedOther int
	// TeacherQuotedRetried counts the turns --teacher-quoted-retry wrote
	// again as best of N.
	TeacherQuotedRetried int
	// TeacherFitRetried counts the turns --teacher-fit-retry wrote again
	// as best of N; TeacherFitKept those of them whose lone answer was
	// trained all the same (no answer drawn fitted and passed).
	TeacherFitRetried, TeacherFitKept int
	// TeacherFitQuoted counts the turns --teacher-quoted-retry wrote
	// again whose pick --teacher-fit-retry moved to one that fits.
	TeacherFitQuoted int
	// RefusedCopies, RefusedEchoes and RefusedLoops count the teacher's
	// answers never trained whatever their score (judge.Refuse, and with
	// --teacher-loops refuse rl.Loops), lone or among best-of-N: they
	// repeat the feedback, are made of its words only, or repeat
	// themselves.
	RefusedCopies, RefusedEchoes, RefusedLoops int
	// TeacherLoopsCut counts the teacher answers cut before their loop
	// began (--teacher-loops cut).
	TeacherLoopsCut int
	// TeacherIrrelevant counts best-of-N answers --teacher-select-relevance
	// kept from the pick: no likelier after the question than without it.
	TeacherIrrelevant int
	// TeacherPickedUser and TeacherPickedSystem split TeacherPicked under
	// --hint-placement mixed by the placement the picked answer was
	// written under.
	TeacherPickedUser, TeacherPickedSystem int
}

// Runner runs the judge and train loops.
type Runner struct {
	store     store.LearningStore
	judge     *judge.Judge
	teacher   *judge.Teacher
	selector  *judge.Selector
	scheduler *rl.Scheduler
	rehearsal *rl.Rehearsal // the trainer's anchors, told the hints trained on
	gate      *rl.Gate
	cfg       Config
	log       *slog.Logger

	wake chan struct{}
	wg   sync.WaitGroup

	mu       sync.Mutex
	counters Counters
}

// New checks the options and builds a runner.
func New(o Options) (*Runner, error) {
	cfg := o.Config.withDefaults()
	if o.Store == nil {
		return nil, errors.New("learning loop: no store")
	}
	if cfg.Method != rl.MethodOff && o.Judge == nil {
		return nil, fmt.Errorf("learning loop: method %s needs a judge", cfg.Method)
	}
	if cfg.Method.WantsHint() && o.Teacher == nil {
		return nil, fmt.Errorf("learning loop: method %s needs a teacher", cfg.Method)
	}
	if cfg.TeacherSamples > 1 && cfg.Method.WantsHint() && ((o.Selector == nil && cfg.TeacherSelect != SelectGain) || !(cfg.TeacherWrites || cfg.TeacherAlsoWrites)) {
		return nil, fmt.Errorf("learning loop: %d teacher samples need a teacher that writes and a selector", cfg.TeacherSamples)
	}
	if err := (TeacherSampleSettings{GainBy: cfg.TeacherGainBy, Length: cfg.TeacherSelectLength, FitShare: cfg.TeacherFitShare}).check(""); err != nil {
		return nil, fmt.Errorf("learning loop: %w", err)
	}
	if o.Trainer != nil && cfg.Train.VersionsDir == "" {
		return nil, errors.New("learning loop: a trainer needs Config.Train.VersionsDir")
	}
	log := o.Log
	if log == nil {
		log = slog.Default()
	}
	gate := o.Gate
	if gate == nil {
		gate = rl.NewGate()
	}
	r := &Runner{store: o.Store, judge: o.Judge, teacher: o.Teacher, selector: o.Selector, gate: gate, cfg: cfg,
		log: log.With("part", "loop"), wake: make(chan struct{}, 1)}
	if t, ok := o.Trainer.(rl.Rehearser); ok {
		r.rehearsal = t.Rehearsal()
	}
	if o.Trainer != nil && cfg.Method != rl.MethodOff {
		r.scheduler = rl.NewScheduler(o.Store, o.Trainer, o.Publisher, gate, cfg.Train, log.With("part", "train"))
	}
	return r, nil
}

// Scheduler is the train loop (nil without a trainer); tests set crash points
// on it.
func (r *Runner) Scheduler() *rl.Scheduler { return r.scheduler }

// Config is the effective configuration.
func (r *Runner) Config() Config { return r.cfg }

// Start recovers the train loop's state (last recorded version: weights,
// optimizer state, served adapter) and starts both loops in the background.
// They run until ctx ends; Wait waits for them.
func (r *Runner) Start(ctx context.Context) error {
	if r.scheduler != nil {
		if err := r.scheduler.Recover(ctx); err != nil {
			return err
		}
	}
	if r.cfg.Method == rl.MethodOff {
		r.log.Info("learning loop off: serving and recording only")
		return nil
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.runJudge(ctx)
	}()
	if r.scheduler != nil {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			if err := r.scheduler.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
				r.log.Error("train loop stopped", "err", err)
			}
		}()
	}
	r.log.Info("learning loop started", "method", r.cfg.Method, "batch", r.cfg.Train.BatchSize, "trainer", r.scheduler != nil)
	return nil
}

// Wait waits until both loops have stopped.
func (r *Runner) Wait() { r.wg.Wait() }

// Notify wakes the judge loop early: the gateway calls it when a turn got its
// next state or feedback. Polling catches everything anyway.
func (r *Runner) Notify() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// RunOnce runs one judge round (and, with a trainer, one training attempt):
// for tests and `clawrl` tools that drive the loop step by step.
func (r *Runner) RunOnce(ctx context.Context) (trained bool, err error) {
	if _, err := r.judgeRound(ctx); err != nil {
		return false, err
	}
	if r.scheduler == nil {
		return false, nil
	}
	return r.scheduler.TryStep(ctx)
}

func (r *Runner) runJudge(ctx context.Context) {
	for {
		// At most TeacherConcurrency teacher builds a round: turns rated
		// meanwhile wait for those, not for every disliked turn before.
		n, err := r.judgeRoundUpTo(ctx, r.cfg.TeacherConcurrency)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			r.count(func(c *Counters) { c.RoundErrors++; c.LastError = err.Error() })
			r.log.Warn("judge round", "err", err)
		}
		if n > 0 && err == nil {
			continue // more work may be waiting
		}
		t := time.NewTimer(r.cfg.Poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-r.wake:
			t.Stop()
		case <-t.C:
		}
	}
}

func (r *Runner) count(f func(*Counters)) {
	r.mu.Lock()
	f(&r.counters)
	r.mu.Unlock()
}

// Counters returns the judge loop's totals since start.
func (r *Runner) Counters() Counters {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.counters
}
