package rl

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/store"
)

// SchedulerConfig tunes the training loop. Zero fields take the defaults.
type SchedulerConfig struct {
	Method       Method
	BatchSize    int   // samples per trainer step; default 16
	MaxStaleness int64 // K; default DefaultMaxStaleness
	VersionsDir  string
	Poll         time.Duration // how often to look for ready samples; default 1s
	// IdleWait bounds how long a step waits for serving to go idle before it
	// runs anyway; default 5s: under sustained traffic learning still moves
	// (at half duty), a few seconds behind.
	IdleWait time.Duration
}

func (c SchedulerConfig) withDefaults() SchedulerConfig {
	if c.BatchSize <= 0 {
		c.BatchSize = 16
	}
	if c.MaxStaleness <= 0 {
		c.MaxStaleness = DefaultMaxStaleness
	}
	if c.Poll <= 0 {
		c.Poll = time.Second
	}
	if c.IdleWait <= 0 {
		c.IdleWait = 5 * time.Second
	}
	return c
}

// Points at which the scheduler's crash-safety tests kill the process.
const (
	PointStepped   = "stepped"   // trainer step done, nothing saved
	PointSaved     = "saved"     // version folder renamed into place, not recorded
	PointCommitted = "committed" // version recorded, samples trained, not published
	PointPublished = "published" // engine serves the new version
)

// Scheduler is the train loop: when a batch of ready samples exists it runs a
// trainer step, writes the adapter as a new version, records the version and
// marks its samples trained in one transaction, and publishes it to the
// engine. Every step is idempotent across crashes: a sample is marked trained
// only together with the version that trained on it, and a restart reloads the
// last recorded version (weights and optimizer state) and serves it.
type Scheduler struct {
	store     store.LearningStore
	trainer   Trainer
	publisher engine.Publisher
	gate      *Gate
	cfg       SchedulerConfig
	versions  Versions
	log       *slog.Logger

	// AtPoint, when set (tests only), is called at each crash point.
	AtPoint func(point string)

	wake chan struct{}

	mu      sync.Mutex
	current store.Version // the last recorded version; Version 0 = base
	stats   SchedulerStats
}

// SchedulerStats are the scheduler's running counters.
type SchedulerStats struct {
	Steps         int
	FailedSteps   int
	DroppedStale  int
	DroppedBad    int
	LastError     string
	PublishErrors int
}

// NewScheduler returns a scheduler; gate may be nil (no serving priority).
func NewScheduler(st store.LearningStore, tr Trainer, pub engine.Publisher, gate *Gate, cfg SchedulerConfig, log *slog.Logger) *Scheduler {
	if log == nil {
		log = slog.Default()
	}
	cfg = cfg.withDefaults()
	if y, ok := tr.(Yielder); ok && gate != nil {
		y.SetYield(TrainerYield(gate, cfg.IdleWait))
	}
	return &Scheduler{store: st, trainer: tr, publisher: pub, gate: gate, cfg: cfg,
		versions: Versions{Dir: cfg.VersionsDir}, log: log, wake: make(chan struct{}, 1)}
}

// Notify wakes the loop early (new samples are ready).
func (s *Scheduler) Notify() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Current is the last recorded version (Version 0 when only base weights).
func (s *Scheduler) Current() store.Version {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.current
}

// Stats returns the running counters.
func (s *Scheduler) Stats() SchedulerStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

func (s *Scheduler) at(point string) {
	if s.AtPoint != nil {
		s.AtPoint(point)
	}
}

// Recover restores the state of the last recorded version after a start or a
// crash: trainer weights and optimizer state, the engine's served version,
// and a versions folder without unrecorded leftovers.
func (s *Scheduler) Recover(ctx context.Context) error {
	latest, err := s.store.LatestVersion(ctx)
	switch {
	case errors.Is(err, store.ErrNotFound):
		latest = store.Version{}
	case err != nil:
		return fmt.Errorf("recover training: %w", err)
	}
	removed, err := s.versions.Clean(latest.Version)
	if err != nil {
		return fmt.Errorf("recover training: %w", err)
	}
	for _, p := range removed {
		s.log.Info("removed unrecorded version folder", "path", p)
	}
	if latest.Version > 0 {
		if err := s.trainer.Load(latest.Dir); err != nil {
			return fmt.Errorf("recover training: load version %d from %s: %w", latest.Version, latest.Dir, err)
		}
		if s.publisher != nil && s.publisher.Version() != latest.Version {
			if err := s.publisher.Publish(ctx, latest.Version, latest.Dir); err != nil {
				return fmt.Errorf("recover training: publish version %d: %w", latest.Version, err)
			}
		}
	}
	s.mu.Lock()
	s.current = latest
	s.mu.Unlock()
	s.log.Info("training recovered", "version", latest.Version)
	return nil
}

// Run steps whenever a batch is ready, until ctx ends. Call Recover first.
func (s *Scheduler) Run(ctx context.Context) error {
	backoff := s.cfg.Poll
	for {
		stepped, err := s.TryStep(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		wait := s.cfg.Poll
		switch {
		case err != nil:
			s.log.Error("training step failed", "err", err)
			backoff = min(2*backoff, time.Minute)
			wait = backoff
		case stepped:
			backoff = s.cfg.Poll
			continue // maybe another batch is ready
		default:
			backoff = s.cfg.Poll
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-s.wake:
			t.Stop()
		case <-t.C:
		}
	}
}

// TryStep trains one batch if enough fresh ready samples exist, and reports
// whether it did.
func (s *Scheduler) TryStep(ctx context.Context) (bool, error) {
	if s.cfg.Method == MethodOff {
		return false, nil
	}
	stored, turns, err := s.store.ReadySamples(ctx, 0)
	if err != nil {
		return false, fmt.Errorf("ready samples: %w", err)
	}
	current := s.Current()
	var all []Sample
	for i := range stored {
		smp := FromStore(stored[i], turns[i])
		if err := smp.Validate(); err != nil {
			s.drop(ctx, smp.TurnID, "invalid sample: "+err.Error(), &s.stats.DroppedBad)
			continue
		}
		all = append(all, smp)
	}
	fresh, stale, reasons := SplitStale(all, current.Version, s.cfg.MaxStaleness)
	if len(fresh) < s.cfg.BatchSize {
		// Not enough to train; refuse the stale ones now so they stop
		// counting as ready.
		for i, smp := range stale {
			s.drop(ctx, smp.TurnID, reasons[i], &s.stats.DroppedStale)
		}
		return false, nil
	}
	batch := fresh[:s.cfg.BatchSize]

	if _, err := s.gate.WaitIdle(ctx, s.cfg.IdleWait); err != nil {
		return false, err
	}
	start := time.Now()
	m, err := s.trainer.Step(ctx, batch)
	if err != nil {
		s.fail(err)
		// The step may have touched the weights: go back to the last
		// recorded version so the retry starts clean.
		if current.Version > 0 {
			if lerr := s.trainer.Load(current.Dir); lerr != nil {
				return false, fmt.Errorf("trainer step: %w; reload version %d: %w", err, current.Version, lerr)
			}
		}
		return false, fmt.Errorf("trainer step on %d samples: %w", len(batch), err)
	}
	s.at(PointStepped)

	next := store.Version{Version: current.Version + 1, Method: string(s.cfg.Method), CreatedAt: time.Now(),
		Metrics: versionMetrics(m, batch, len(stale), current.Version, time.Since(start))}
	next.Dir, err = s.versions.Write(next.Version, s.trainer.Save)
	if err != nil {
		s.fail(err)
		return false, s.resync(err, current)
	}
	s.at(PointSaved)

	ids := make([]string, len(batch))
	for i, smp := range batch {
		ids[i] = smp.TurnID
	}
	staleIDs := make([]string, len(stale))
	for i, smp := range stale {
		staleIDs[i] = smp.TurnID
	}
	staleReason := fmt.Sprintf("stale: more than %d versions behind v%d", s.cfg.MaxStaleness, current.Version)
	if err := s.store.CommitVersion(ctx, next, ids, staleIDs, staleReason); err != nil {
		s.fail(err)
		return false, s.resync(fmt.Errorf("record version %d: %w", next.Version, err), current)
	}
	s.mu.Lock()
	s.current = next
	s.stats.Steps++
	s.stats.DroppedStale += len(stale)
	s.mu.Unlock()
	s.at(PointCommitted)

	if s.publisher != nil {
		if err := s.publish(ctx, next); err != nil {
			return true, err
		}
	}
	s.at(PointPublished)
	s.log.Info("trained version", "version", next.Version, "loss", m.Loss, "samples", len(batch),
		"stale_dropped", len(stale), "mean_reward", next.Metrics.MeanReward, "step", time.Since(start).Round(time.Millisecond))
	return true, nil
}

// publish makes v current in the engine, retrying a few times; a version that
// could not be published is published again by the next Recover.
func (s *Scheduler) publish(ctx context.Context, v store.Version) error {
	var err error
	for attempt, wait := 0, 100*time.Millisecond; attempt < 5; attempt, wait = attempt+1, wait*2 {
		if err = s.publisher.Publish(ctx, v.Version, v.Dir); err == nil {
			return nil
		}
		s.mu.Lock()
		s.stats.PublishErrors++
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
	return fmt.Errorf("publish version %d from %s: %w", v.Version, v.Dir, err)
}

// resync reloads the last recorded version after the step's result could not
// be recorded, so the trainer's weights match what the store says.
func (s *Scheduler) resync(cause error, current store.Version) error {
	if _, err := s.versions.Clean(current.Version); err != nil {
		s.log.Warn("clean versions", "err", err)
	}
	if current.Version > 0 {
		if err := s.trainer.Load(current.Dir); err != nil {
			return fmt.Errorf("%w; reload version %d: %w", cause, current.Version, err)
		}
	}
	return cause
}

func (s *Scheduler) fail(err error) {
	s.mu.Lock()
	s.stats.FailedSteps++
	s.stats.LastError = err.Error()
	s.mu.Unlock()
}

func (s *Scheduler) drop(ctx context.Context, turnID, reason string, counter *int) {
	if err := s.store.DropTurn(ctx, turnID, reason); err != nil {
		s.log.Warn("drop turn", "turn", turnID, "reason", reason, "err", err)
		return
	}
	s.mu.Lock()
	*counter++
	s.mu.Unlock()
}

// versionMetrics combines the trainer's numbers with the batch's.
func versionMetrics(m StepMetrics, batch []Sample, stale int, current int64, took time.Duration) store.VersionMetrics {
	vm := store.VersionMetrics{
		Loss: m.Loss, Samples: len(batch), DroppedStale: stale, Tokens: m.Tokens,
		ClipFraction: m.ClipFraction, KL: m.KL, Entropy: m.Entropy,
		ImportanceWeightMean: m.ImportanceWeightMean, ImportanceWeightMax: m.ImportanceWeightMax,
		ImportanceTruncated: m.ImportanceTruncated, StepNanos: took.Nanoseconds(),
	}
	var reward float64
	for _, s := range batch {
		if s.UseRL {
			vm.RLSamples++
		}
		if s.HasOPD() {
			vm.OPDSamples++
		}
		reward += s.Reward
	}
	if len(batch) > 0 {
		vm.MeanReward = reward / float64(len(batch))
	}
	vm.StalenessMean, vm.StalenessMax = StalenessStats(batch, current)
	return vm
}

// FromStore joins a stored sample with its turn's tokens.
func FromStore(s store.Sample, t store.Turn) Sample {
	return Sample{
		TurnID: s.TurnID, SessionID: s.SessionID,
		PromptIDs: t.PromptIDs, ResponseIDs: t.ResponseIDs, BehaviourLogprobs: t.BehaviourLogprobs,
		PolicyVersion: t.PolicyVersion,
		UseRL:         s.UseRL, Reward: s.Reward, TeacherLogprobs: s.TeacherLogprobs, Why: s.Why,
	}
}
