package rl

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
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
	// Retention gates promotion (nil: every version is served). It needs a
	// trainer that is an Evaluator.
	Retention *RetentionConfig
	// RunningBaseline, when > 0, centres the rewards of each step's RL
	// samples on the running mean of the ratings of the turns trained so
	// far (BaselineRunning, RatingMean with this window). A turn counts
	// with its judgment's score, so a 👎 whose sample trains the teacher's
	// response counts too. 0: the rewards go to the trainer as they are.
	RunningBaseline int
	// RunningClip, when > 0, bounds each centred reward to ±RunningClip:
	// the baseline may shrink a rating's weight but not raise it past
	// that. Without it a 👍 given while the mean is still −0.7 (the
	// user's early 👎s) trains at 1.7, more than any rating was worth.
	RunningClip float64
	// HoldLiked, when > 0, holds the policy while its users are
	// satisfied: a step whose users liked at least this share of its
	// rated answers (ratingsOf above 0, of those not 0) is not trained.
	// Its turns are spent, dropped with the reason, so none is trained
	// later or twice, and the served version stays. The step's users are
	// its batch and the served version's rated answers the method made no
	// sample of (OPD's 👍s: no hint, nothing to distil), which are spent
	// with it when it holds; without them a step of OPD, its 👎s alone,
	// would never hold. Steps of liked answers alone only sharpen what is
	// already served, and on held-out questions they walked it away from what
	// the users liked (BENCHMARKS.md, "Holding the policy while its
	// users are satisfied"). The cost: a minority 👎 in a held step is
	// not trained. 0: every step trains.
	HoldLiked float64
	// HoldMinRated, with HoldLiked, is the fewest rated answers a step
	// needs before its liked share can hold it: a share of one or two
	// ratings says little about whether the users are satisfied, and a
	// user trying the loop one 👍 at a time (batch size 1) would
	// otherwise never see a version. 0 or 1: any rated step can hold.
	HoldMinRated int
	// HoldKeepsDisliked, with HoldLiked, leaves a held step's 👎s (a
	// rating below 0) ready instead of dropping them with its liked
	// answers: they wait for the next step that trains, with the turns
	// that come after them. A held step serves no new version, so they
	// stay as fresh as when they were rated, and the step that takes
	// them holds again only while they are fewer than 1 − HoldLiked of
	// it: the corrections train once they add up to a step's worth
	// rather than never.
	HoldKeepsDisliked bool
	// HoldTrainsDisliked, with HoldLiked, trains a held step's 👎s at
	// once, alone: the step takes only the corrections (a version, gated
	// as any other), shrunk to their share of a full step where the
	// trainer can shrink one (Shrinker), and its liked answers are
	// dropped as when held once that version is recorded. A step with no
	// 👎 holds as before. Where HoldKeepsDisliked waits
	// for the corrections to add up to a step's worth, this trains the
	// few the users still give while the served version mostly pleases
	// them, without the liked answers that walk it away. The running
	// mean of the ratings does not take the step's ratings, as a held
	// step's (its liked ones are not trained). Not with HoldKeepsDisliked.
	HoldTrainsDisliked bool
	// RollbackDrop, when > 0, trains a step from the version the served
	// one was trained from when the step's users (its rated answers that
	// the served version wrote, with those of its held steps) liked at
	// least this share less than that version's users did, and a
	// one-sided Fisher exact test puts the fall below RollbackAlpha: the
	// served version's update is dropped and the batch it was rated on
	// trains from the weights before it (rollback.go). 0: off.
	RollbackDrop float64
	// RollbackAlpha is the test's significance level (default
	// DefaultRollbackAlpha).
	RollbackAlpha float64
}

// DefaultRollbackAlpha is the significance a fall in the users' liked
// share must reach before a step rolls back (SchedulerConfig.RollbackAlpha).
const DefaultRollbackAlpha = 0.01

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
	if c.RollbackAlpha <= 0 {
		c.RollbackAlpha = DefaultRollbackAlpha
	}
	return c
}

// Points at which the scheduler's crash-safety tests kill the process.
const (
	PointStepped   = "stepped"   // trainer step done, nothing saved
	PointRepaired  = "repaired"  // the gate took a repair step, nothing saved
	PointShrunk    = "shrunk"    // the gate shrank the step, nothing saved
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
	// served is the newest promoted version: what the engine serves and
	// the trainer's weights hold between steps (Version 0 = base).
	served         store.Version
	retentionBase  []float64 // the base model's probe scores (log-probability check)
	retentionReady bool      // the probes (and base scores) are built
	stats          SchedulerStats
	// ratings is the running mean of the trained turns' ratings
	// (RunningBaseline), as the last recorded step left it.
	ratings RatingMean
}

// SchedulerStats are the scheduler's running counters.
type SchedulerStats struct {
	Steps         int
	Rejected      int // versions the retention check refused
	Held          int // steps not trained because their users were satisfied (HoldLiked)
	RolledBack    int // steps trained from the version before the served one (RollbackDrop)
	Unfocused     int // steps taken again without focus, the focused one rejected (Focuser)
	FailedSteps   int
	DroppedStale  int // samples refused as stale, and judged turns refused before their sample was built (RefuseStale)
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

// RefuseStale drops the turn when a sample generated by policyVersion
// would be refused as stale now (SplitStale against the served version,
// the rule a step applies), counting it in DroppedStale, and reports
// whether it did. The judge loop asks before it builds a sample, so a
// teacher slower than the ratings spends no work on turns no step would
// take (BENCHMARKS.md, "A teacher slower than the ratings").
func (s *Scheduler) RefuseStale(ctx context.Context, turnID string, policyVersion int64) bool {
	served := s.Served().Version
	if Staleness(served, policyVersion) <= s.cfg.MaxStaleness {
		return false
	}
	s.drop(ctx, turnID, StaleReason(policyVersion, served, s.cfg.MaxStaleness)+"; refused before its sample was built", &s.stats.DroppedStale)
	return true
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

// Served is the newest promoted version, the one the engine serves.
func (s *Scheduler) Served() store.Version {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.served
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

// Recover restores the state of the last served version after a start or a
// crash: trainer weights and optimizer state, the engine's served version,
// and a versions folder without unrecorded leftovers. Then it carries out a
// pending request to serve an earlier version.
func (s *Scheduler) Recover(ctx context.Context) error {
	latest, err := s.store.LatestVersion(ctx)
	switch {
	case errors.Is(err, store.ErrNotFound):
		latest = store.Version{}
	case err != nil:
		return fmt.Errorf("recover training: %w", err)
	}
	served, err := s.store.ServedVersion(ctx)
	switch {
	case errors.Is(err, store.ErrNotFound):
		served = store.Version{}
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
	if served.Version > 0 {
		if err := s.trainer.Load(served.Dir); err != nil {
			return fmt.Errorf("recover training: load version %d from %s: %w", served.Version, served.Dir, err)
		}
		if s.publisher != nil && s.publisher.Version() != served.Version {
			if err := s.publisher.Publish(ctx, served.Version, served.Dir); err != nil {
				return fmt.Errorf("recover training: publish version %d: %w", served.Version, err)
			}
		}
	} else if err := s.snapshotBase(); err != nil {
		return fmt.Errorf("recover training: %w", err)
	}
	ratings, err := s.recordedRatings(ctx)
	if err != nil {
		return fmt.Errorf("recover training: %w", err)
	}
	s.mu.Lock()
	s.current, s.served, s.ratings = latest, served, ratings
	s.mu.Unlock()
	s.log.Info("training recovered", "version", latest.Version, "served", served.Version)
	if _, err := s.ServeRequested(ctx); err != nil {
		s.log.Warn("serving request", "err", err)
	}
	return nil
}

// snapshotBase saves the trainer's untrained state (fresh adapters and
// optimizer) as version folder 0, once, so that a version rejected while
// only the base is served can be undone like any other.
func (s *Scheduler) snapshotBase() error {
	if s.cfg.VersionsDir == "" {
		return nil
	}
	if _, err := os.Stat(s.versions.Path(0)); err == nil {
		return nil
	}
	_, err := s.versions.Write(0, s.trainer.Save)
	return err
}

// restore puts the trainer back on the served version's weights.
func (s *Scheduler) restore(served store.Version) error {
	dir := s.dirOf(served)
	if served.Version == 0 {
		if _, err := os.Stat(dir); err != nil {
			return fmt.Errorf("no base snapshot to go back to: %w", err)
		}
	}
	if err := s.trainer.Load(dir); err != nil {
		return fmt.Errorf("reload version %d: %w", served.Version, err)
	}
	return nil
}

// dirOf is the folder v's trainer state is loaded from: its own, or for
// the base (Version 0) the snapshot of the untrained state.
func (s *Scheduler) dirOf(v store.Version) string {
	if v.Version == 0 {
		return s.versions.Path(0)
	}
	return v.Dir
}

// Run steps whenever a batch is ready, until ctx ends. Call Recover first.
func (s *Scheduler) Run(ctx context.Context) error {
	backoff := s.cfg.Poll
	for {
		if _, err := s.ServeRequested(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("serving request", "err", err)
		}
		stepped, err := s.TryStep(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !stepped && err == nil {
			// Waiting for a batch: get the retention check and the
			// rehearsal anchors ready now, while serving is idle, rather
			// than in the first step (24 greedy answers: on the 1.5B coder
			// on two cores, 45 s with nothing else running).
			if _, werr := s.gate.WaitIdle(ctx, s.cfg.IdleWait); werr == nil {
				if perr := s.prepareRetention(ctx); perr != nil && ctx.Err() == nil {
					s.log.Warn("retention check", "err", perr)
				}
				if r, ok := s.trainer.(Rehearser); ok {
					if perr := r.Rehearsal().Prepare(ctx); perr != nil && ctx.Err() == nil {
						s.log.Warn("rehearsal anchors", "err", perr)
					}
				}
			}
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
	current, served := s.Current(), s.Served()
	var all []Sample
	for i := range stored {
		smp := FromStore(stored[i], turns[i])
		if err := smp.Validate(); err != nil {
			s.drop(ctx, smp.TurnID, "invalid sample: "+err.Error(), &s.stats.DroppedBad)
			continue
		}
		all = append(all, smp)
	}
	// Staleness counts the versions the trained policy moved since a sample
	// was generated: rejected versions never served and moved nothing.
	fresh, stale, reasons := SplitStale(all, served.Version, s.cfg.MaxStaleness)
	if len(fresh) < s.cfg.BatchSize {
		// Not enough to train; refuse the stale ones now so they stop
		// counting as ready.
		for i, smp := range stale {
			s.drop(ctx, smp.TurnID, reasons[i], &s.stats.DroppedStale)
		}
		return false, nil
	}
	batch := SortByContent(slices.Clone(fresh[:s.cfg.BatchSize]))
	// The served version's rated answers that made no sample (under OPD,
	// its 👍s) are its users as much as the batch is.
	others, otherIDs, err := s.unsampled(ctx, served)
	if err != nil {
		return false, fmt.Errorf("users' verdict: %w", err)
	}
	now, err := s.usersOf(ctx, batch, served, others)
	if err != nil {
		return false, fmt.Errorf("users' verdict: %w", err)
	}
	from, rollback, err := s.rollbackFrom(ctx, served, now)
	if err != nil {
		return false, err
	}
	var thin thinning
	if rollback == "" {
		// A batch its users rated far below the version before cannot
		// be one they are satisfied with: only the others may hold.
		var held bool
		batch, thin, held, err = s.hold(ctx, batch, others, otherIDs)
		if held || err != nil {
			return held, err
		}
	} else {
		s.log.Warn("rolling back", "served", served.Version, "from", from.Version, "why", rollback)
		if err := s.restore(from); err != nil {
			return false, s.resync(fmt.Errorf("rollback: %w", err), served)
		}
	}
	thinned := len(thin.spared) > 0

	trainBatch, ratings, err := s.runningBaseline(ctx, batch, !thinned)
	if err != nil {
		return false, err
	}

	plan := stepPlan{current: current, served: served, from: from, rollback: rollback, now: now,
		batch: batch, trainBatch: trainBatch, stale: len(stale), thinned: thinned, ratings: ratings}
	next, m, start, err := s.stepAndGate(ctx, plan)
	if err != nil {
		return false, err
	}
	// A focused step the gate rejected (--distill-focus; Focuser): the
	// same batch again from the same weights, unfocused, gated as any step.
	if f, ok := s.trainer.(Focuser); ok && next.Status == store.VersionRejected && f.DistillFocus() > 0 {
		focus, why := f.DistillFocus(), next.StatusReason
		s.log.Info("retention: focused step rejected; stepping again without focus", "version", next.Version, "distill_focus", focus, "reason", why)
		if err := s.restore(from); err != nil {
			s.fail(err)
			return false, s.resync(fmt.Errorf("unfocused step: %w", err), served)
		}
		f.SetDistillFocus(0)
		next, m, start, err = s.stepAndGate(ctx, plan)
		f.SetDistillFocus(focus)
		if err != nil {
			return false, err
		}
		next.Metrics.Unfocused = true
		next.StatusReason = strings.TrimPrefix(next.StatusReason+"; unfocused: the step with --distill-focus "+
			strconv.FormatFloat(focus, 'g', -1, 64)+" was rejected ("+why+")", "; ")
	}
	if rollback != "" {
		next.StatusReason = strings.TrimPrefix(next.StatusReason+"; "+rollback, "; ")
	}
	next.Dir, err = s.versions.Write(next.Version, s.trainer.Save)
	if err != nil {
		s.fail(err)
		return false, s.resync(err, served)
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
	staleReason := fmt.Sprintf("stale: more than %d versions behind v%d", s.cfg.MaxStaleness, served.Version)
	if err := s.store.CommitVersion(ctx, next, ids, staleIDs, staleReason); err != nil {
		s.fail(err)
		return false, s.resync(fmt.Errorf("record version %d: %w", next.Version, err), served)
	}
	// A thinned step's liked answers leave with its version, not before:
	// until then the step's turns stay ready together, as any step's do
	// (a user who tops up what the loop lacks sees none lacking). A crash
	// in between leaves them ready, untrained; the next step decides again.
	var spared int
	for _, smp := range thin.spared {
		s.drop(ctx, smp.TurnID, thin.reason, &spared)
	}
	rejected := next.Status == store.VersionRejected
	s.mu.Lock()
	s.current, s.ratings = next, ratings
	if !rejected {
		s.served = next
	}
	s.stats.Steps++
	s.stats.DroppedStale += len(stale)
	if rollback != "" {
		s.stats.RolledBack++
	}
	if next.Metrics.Unfocused {
		s.stats.Unfocused++
	}
	if rejected {
		s.stats.Rejected++
	}
	s.mu.Unlock()
	s.at(PointCommitted)
	if rejected {
		// Its samples are spent (never trained twice); the trainer goes back
		// to the served weights and the engine keeps serving them.
		s.log.Warn("version rejected", "version", next.Version, "reason", next.StatusReason, "served", served.Version)
		if err := s.restore(served); err != nil {
			return true, fmt.Errorf("after rejecting version %d: %w", next.Version, err)
		}
		return true, nil
	}

	if s.publisher != nil {
		if err := s.publish(ctx, next); err != nil {
			return true, err
		}
	}
	s.at(PointPublished)
	s.log.Info("trained version", "version", next.Version, "loss", m.Loss, "samples", len(batch), "momentum_reset", m.MomentumReset,
		"avoid_sat_out", m.AvoidSatOut, "avoid_shift", m.AvoidShift, "anchor_scale", m.AnchorScale, "lean", m.Lean, "stale_dropped", len(stale), "mean_reward", next.Metrics.MeanReward, "step", time.Since(start).Round(time.Millisecond))
	return true, nil
}

// stepPlan is what TryStep decided a step is: the versions it follows
// (current, the one served, the one it trains from and why when that is a
// rollback), the users' verdict on served, the batch and what the trainer
// steps on, how many stale samples it drops, whether it was thinned, and
// the running ratings with its own.
type stepPlan struct {
	current, served, from store.Version
	rollback              string
	now                   users
	batch, trainBatch     []Sample
	stale                 int
	thinned               bool
	ratings               RatingMean
}

// stepAndGate takes the trainer's step on trainBatch (batch after the
// running baseline) from the weights it holds, shrinks a thinned step to
// its share, and runs the retention check: next is the version it makes,
// promoted or rejected, not yet saved. On an error the trainer is back at
// served (the error is the one to return).
func (s *Scheduler) stepAndGate(ctx context.Context, p stepPlan) (store.Version, StepMetrics, time.Time, error) {
	if _, err := s.gate.WaitIdle(ctx, s.cfg.IdleWait); err != nil {
		return store.Version{}, StepMetrics{}, time.Time{}, err
	}
	start := time.Now()
	m, err := s.trainer.Step(ctx, p.trainBatch)
	if err != nil {
		s.fail(err)
		// The step may have touched the weights: go back to the served
		// version so the retry starts clean.
		if p.served.Version > 0 {
			if lerr := s.restore(p.served); lerr != nil {
				return store.Version{}, m, start, fmt.Errorf("trainer step: %w; %w", err, lerr)
			}
		}
		return store.Version{}, m, start, fmt.Errorf("trainer step on %d samples: %w", len(p.batch), err)
	}
	s.at(PointStepped)
	scale := 1.0
	if p.thinned {
		// A step of a few 👎s moves the weights as far as its share of a
		// full step: AdamW's update has about the same length whatever
		// the batch, so three corrections alone would move them as far
		// as sixteen answers do.
		if sh, ok := s.trainer.(Shrinker); ok {
			scale = float64(len(p.batch)) / float64(s.cfg.BatchSize)
			if err := sh.ShrinkStep(scale); err != nil {
				s.log.Warn("thinned step: cannot shrink it", "err", err)
				scale = 1
			}
		}
	}

	next := store.Version{Version: p.current.Version + 1, Method: string(s.cfg.Method), CreatedAt: time.Now(),
		Metrics: versionMetrics(m, p.batch, p.stale, p.served.Version, time.Since(start)), Status: store.VersionPromoted}
	if s.cfg.RunningBaseline > 0 {
		next.Metrics.RewardBaseline, next.Metrics.RatingSum, next.Metrics.RatingWeight = p.ratings.Mean(), p.ratings.Sum, p.ratings.Weight
	}
	if scale < 1 {
		next.Metrics.StepScale = scale // else 0 until the gate records it
	}
	next.Metrics.TrainedFrom, next.Metrics.ParentLiked, next.Metrics.ParentRated = p.from.Version, p.now.liked, p.now.rated
	if p.rollback != "" {
		// The users the version was trained from are the earlier version's.
		next.Metrics.ParentLiked, next.Metrics.ParentRated = p.served.Metrics.ParentLiked, p.served.Metrics.ParentRated
		next.Metrics.RolledBack = p.served.Version
	}
	if err := s.checkRetention(ctx, &next); err != nil {
		s.fail(err)
		return store.Version{}, m, start, s.resync(err, p.served)
	}
	return next, m, start, nil
}

// runningBaseline returns the batch the trainer steps on and the running
// mean of the ratings with the batch's added. With RunningBaseline off it
// is the batch itself. With it on, every sample's rating (its judgment's
// score; the reward of an RL sample with no judgment) joins the running
// mean first, and the RL samples' rewards are centred on the result: the
// step's own ratings take part, so a first step of bare 👎s trains
// nothing instead of "less of everything".
//
// With add false (a held step's 👎s trained alone, HoldTrainsDisliked)
// the mean stays as it was: the step's liked answers were not trained,
// and its 👎s alone would pull the mean below what the users said.
func (s *Scheduler) runningBaseline(ctx context.Context, batch []Sample, add bool) ([]Sample, RatingMean, error) {
	s.mu.Lock()
	ratings := s.ratings
	s.mu.Unlock()
	if s.cfg.RunningBaseline <= 0 {
		return batch, ratings, nil
	}
	if add {
		scores, err := s.ratingsOf(ctx, batch)
		if err != nil {
			return nil, ratings, fmt.Errorf("running baseline: %w", err)
		}
		// A step's ratings join lowest first: they were given at once, and
		// the order of a batch's turns in the store (which of its concurrent
		// requests finished first) must not move the mean.
		slices.Sort(scores)
		ratings = ratings.Add(scores, s.cfg.RunningBaseline)
	}
	mean := ratings.Mean()
	out := make([]Sample, len(batch))
	for i, smp := range batch {
		if smp.UseRL {
			smp.Reward -= mean
			if c := s.cfg.RunningClip; c > 0 {
				smp.Reward = max(-c, min(c, smp.Reward))
			}
		}
		out[i] = smp
	}
	return out, ratings, nil
}

// ratingsOf reads the rating of each of batch's samples: its judgment's
// score, else the reward of an RL sample (none for a sample with neither).
func (s *Scheduler) ratingsOf(ctx context.Context, batch []Sample) ([]float64, error) {
	var scores []float64
	for _, smp := range batch {
		r, ok, err := s.ratingOf(ctx, smp)
		if err != nil {
			return nil, err
		}
		if ok {
			scores = append(scores, r)
		}
	}
	return scores, nil
}

// ratingOf is smp's turn's judgment score, else the reward of an RL
// sample; ok is false for a sample with neither.
func (s *Scheduler) ratingOf(ctx context.Context, smp Sample) (rating float64, ok bool, err error) {
	j, err := s.store.Judgment(ctx, smp.TurnID)
	switch {
	case err == nil:
		return float64(j.Score), true, nil
	case !errors.Is(err, store.ErrNotFound):
		return 0, false, err
	case smp.UseRL:
		return smp.Reward, true, nil
	}
	return 0, false, nil
}

// thinning is what a held step's thinning spares for later: the turns
// it does not train (its liked and unrated answers), dropped with reason
// once the step's version is recorded (HoldTrainsDisliked).
type thinning struct {
	spared []Sample
	reason string
}

// hold spends batch without training it when HoldLiked is on and the
// users liked at least that share of its rated answers (rated: a rating
// other than 0; at least HoldMinRated of them; with them the served
// version's rated answers that made no sample, others, whose turns are
// otherIDs), and reports whether it did. Its turns are dropped with the
// reason, its 👎s too unless HoldKeepsDisliked leaves them ready; a crash
// halfway leaves the rest ready, and the next step holds them again or
// trains them once. Under HoldTrainsDisliked a held step with 👎s is not
// spent: it returns the 👎s to train, not held, and its other turns in
// thin, for the caller to drop once the step is recorded. Otherwise it
// returns batch as is. A batch that with the unsampled answers is smaller
// than HoldMinRated cannot hold, so its ratings are not read.
func (s *Scheduler) hold(ctx context.Context, batch []Sample, others users, otherIDs []string) ([]Sample, thinning, bool, error) {
	if s.cfg.HoldLiked <= 0 {
		return batch, thinning{}, false, nil
	}
	if len(batch)+others.rated < s.cfg.HoldMinRated {
		return batch, thinning{}, false, nil
	}
	ratings := make([]float64, len(batch))
	liked, rated := others.liked, others.rated
	for i, smp := range batch {
		r, _, err := s.ratingOf(ctx, smp)
		if err != nil {
			return nil, thinning{}, false, fmt.Errorf("hold: %w", err)
		}
		ratings[i] = r
		if r != 0 {
			rated++
		}
		if r > 0 {
			liked++
		}
	}
	if rated == 0 || rated < s.cfg.HoldMinRated || float64(liked) < s.cfg.HoldLiked*float64(rated) {
		return batch, thinning{}, false, nil
	}
	var disliked, spared []Sample
	for i, smp := range batch {
		if ratings[i] < 0 {
			disliked = append(disliked, smp)
		} else {
			spared = append(spared, smp)
		}
	}
	for _, id := range otherIDs {
		spared = append(spared, Sample{TurnID: id})
	}
	reason := fmt.Sprintf(HeldPrefix+"its step's users liked %d of %d answers (--hold-liked %g)", liked, rated, s.cfg.HoldLiked)
	if s.cfg.HoldTrainsDisliked && len(disliked) > 0 {
		s.log.Info("step thinned to its 👎s", "samples", len(batch), "disliked", len(disliked), "liked", liked, "rated", rated, "served", s.Served().Version)
		return disliked, thinning{spared: spared, reason: reason + fmt.Sprintf("; its %d 👎s trained alone", len(disliked))}, false, nil
	}
	var dropped, kept int
	for i, smp := range batch {
		if s.cfg.HoldKeepsDisliked && ratings[i] < 0 {
			kept++
			continue
		}
		s.drop(ctx, smp.TurnID, reason, &dropped)
	}
	for _, id := range otherIDs {
		s.drop(ctx, id, reason, &dropped)
	}
	s.mu.Lock()
	s.stats.Held++
	s.mu.Unlock()
	s.log.Info("step held", "samples", len(batch), "dropped", dropped, "kept_disliked", kept, "liked", liked, "rated", rated, "served", s.Served().Version)
	return nil, thinning{}, true, nil
}

// unsampled reads served's answers that were rated (a score other than
// 0) and judged, and that the method keeps no sample of (under OPD, a 👍
// with no hint; under combine and rl every rated answer is a sample, so
// there are none): the users of a step its batch does not carry. A held
// step drops them with its own turns, so each is counted by one step's
// hold (and from then on by heldUsers); a step that trains leaves them to
// the end of their session (the at-least-one rule), and the version it
// serves has users of its own. It returns them counted and their turns.
func (s *Scheduler) unsampled(ctx context.Context, served store.Version) (users, []string, error) {
	u := users{version: served.Version}
	turns, err := s.store.ListTurns(ctx, servedSince(served, store.Judged))
	if err != nil {
		return u, nil, fmt.Errorf("judged turns: %w", err)
	}
	var ids []string
	for _, t := range turns {
		if t.PolicyVersion != served.Version {
			continue
		}
		j, err := s.store.Judgment(ctx, t.ID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			continue
		case err != nil:
			return u, nil, err
		case j.Keep || j.Score == 0:
			continue
		}
		u.rated++
		if j.Score > 0 {
			u.liked++
		}
		ids = append(ids, t.ID)
	}
	return u, ids, nil
}

// recordedRatings is the running mean of the ratings the newest trained
// version recorded (copies made to serve an earlier version are skipped:
// they carry their source's). Zero when none did.
func (s *Scheduler) recordedRatings(ctx context.Context) (RatingMean, error) {
	if s.cfg.RunningBaseline <= 0 {
		return RatingMean{}, nil
	}
	vs, err := s.store.Versions(ctx, 100)
	if err != nil {
		return RatingMean{}, err
	}
	for _, v := range vs {
		if v.SourceVersion == 0 && v.Metrics.RatingWeight > 0 {
			return RatingMean{Sum: v.Metrics.RatingSum, Weight: v.Metrics.RatingWeight}, nil
		}
	}
	return RatingMean{}, nil
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

// resync reloads the served version after the step's result could not be
// recorded, so the trainer's weights match what the store says.
func (s *Scheduler) resync(cause error, served store.Version) error {
	if _, err := s.versions.Clean(s.Current().Version); err != nil {
		s.log.Warn("clean versions", "err", err)
	}
	if served.Version > 0 {
		if err := s.restore(served); err != nil {
			return fmt.Errorf("%w; %w", cause, err)
		}
	}
	return cause
}

// checkRetention runs the retention check on the trainer's new weights and records
// the result in v (status, reason, metrics).
func (s *Scheduler) checkRetention(ctx context.Context, v *store.Version) error {
	if s.cfg.Retention == nil {
		return nil
	}
	if err := s.prepareRetention(ctx); err != nil {
		return err
	}
	if s.cfg.Retention == nil || len(s.cfg.Retention.Probes) == 0 {
		v.StatusReason = "not gated: no retention check"
		return nil
	}
	frac := cmp.Or(v.Metrics.StepScale, 1) // the fraction of the step the trainer's weights hold
	check := func() (RetentionResult, error) {
		start := time.Now()
		var res RetentionResult
		var err error
		if a, ok := s.cfg.Retention.Behavioural(s.trainer); ok {
			res, err = CheckAnswers(ctx, a, *s.cfg.Retention)
		} else {
			res, err = CheckRetention(ctx, s.trainer.(Evaluator), *s.cfg.Retention, s.retentionBase)
		}
		if err == nil {
			attrs := []any{"version", v.Version, "pass", res.Pass, "facts", res.Facts, "lost", res.Lost,
				"open", res.Open, "loops", res.Loops, "step_scale", frac, "took", time.Since(start).Round(time.Millisecond)}
			if !res.Pass {
				// A step the line search then shrinks keeps only the
				// passing check's reason: the failing one is told here.
				attrs = append(attrs, "reason", res.Reason)
			}
			s.log.Info("retention check", attrs...)
		}
		return res, err
	}
	res, err := check()
	if err != nil {
		return err
	}
	// The repair: a rejected step, followed by a step on the rehearsal
	// anchors alone, may keep the facts and all of what the batch taught.
	repairs := 0
	repairer, canRepair := s.trainer.(Repairer)
	for !res.Pass && canRepair && repairs < s.cfg.Retention.Repairs {
		m, err := repairer.Repair(ctx)
		if errors.Is(err, ErrNoAnchors) {
			s.log.Warn("retention: no anchors to repair the step with", "version", v.Version)
			break
		}
		if err != nil {
			return err
		}
		repairs++
		s.log.Info("retention: step repaired", "version", v.Version, "repairs", repairs, "anchor_loss", m.Loss, "tokens", m.Tokens)
		s.at(PointRepaired)
		if res, err = check(); err != nil {
			return err
		}
	}
	if res.Pass && repairs > 0 {
		steps := "a repair step"
		if repairs > 1 {
			steps = fmt.Sprintf("%d repair steps", repairs)
		}
		res.Reason += " (after " + steps + " on the rehearsal anchors)"
	}
	// The line search: a rejected step, halved, may keep the facts and
	// still move towards what the batch taught (after repairs, the step
	// and its repairs shrink together).
	shrinker, canShrink := s.trainer.(Shrinker)
	for k := 0; !res.Pass && canShrink && k < s.cfg.Retention.Shrinks; k++ {
		if err := shrinker.ShrinkStep(0.5); err != nil {
			s.log.Warn("retention: cannot shrink the step", "err", err)
			break
		}
		frac /= 2
		if m, ok := s.trainer.(interface{ ShrinkMiss() float64 }); ok {
			// Off the exact W + α·ΔW only where the served adapter's B
			// was not zero (NativeTrainer.ShrinkStep).
			s.log.Info("retention: step shrunk", "version", v.Version, "step_scale", frac, "relative_miss", m.ShrinkMiss())
		}
		s.at(PointShrunk)
		if res, err = check(); err != nil {
			return err
		}
		if res.Pass {
			res.Reason += fmt.Sprintf(" (the step shrunk to %g of its length)", frac)
		}
	}
	v.Metrics.RetentionFacts, v.Metrics.RetentionLost = res.Facts, res.Lost
	v.Metrics.RetentionLogprob, v.Metrics.RetentionBase = res.Mean, res.Base
	v.Metrics.StepScale = frac // what the saved weights hold, served or not
	v.Metrics.Repairs = repairs
	v.StatusReason = res.Reason
	if !res.Pass {
		v.Status = store.VersionRejected
	} else if s.cfg.Retention.Passed != nil {
		s.cfg.Retention.Passed(v.Version)
	}
	return nil
}

// prepareRetention builds the retention probes and, for the
// log-probability check, the base model's scores of them, once. The train
// loop does it while it waits for its first batch, so the first version is
// not kept waiting by it. A trainer that can neither answer nor score
// leaves the gate off.
func (s *Scheduler) prepareRetention(ctx context.Context) error {
	if s.cfg.Retention == nil || s.retentionReady {
		return nil
	}
	_, behavioural := s.cfg.Retention.Behavioural(s.trainer)
	ev, scores := s.trainer.(Evaluator)
	if !behavioural && !scores {
		s.cfg.Retention = nil
		return nil
	}
	if len(s.cfg.Retention.Probes) == 0 && s.cfg.Retention.Build != nil {
		probes, err := s.cfg.Retention.Build(ctx)
		if err != nil {
			return fmt.Errorf("retention probes: %w", err)
		}
		s.cfg.Retention.Probes, s.cfg.Retention.Build = probes, nil
	}
	if len(s.cfg.Retention.Probes) == 0 {
		return nil
	}
	if behavioural {
		if len(s.cfg.Retention.Open) == 0 && s.cfg.Retention.BuildOpen != nil {
			open, err := s.cfg.Retention.BuildOpen(ctx)
			if err != nil {
				return fmt.Errorf("retention open questions: %w", err)
			}
			s.cfg.Retention.Open, s.cfg.Retention.BuildOpen = open, nil
		}
		s.retentionReady = true
		s.log.Info("retention check ready", "facts", len(s.cfg.Retention.Probes), "open", len(s.cfg.Retention.Open), "check", "greedy answers")
		return nil
	}
	// Scored before any step, when the trainer's weights still are the
	// served ones: in LoRA mode the base scores come from the adapters-off
	// pass either way.
	base, err := ev.ProbeLogprobs(ctx, s.cfg.Retention.Probes, true)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// Full fine-tuning has no base weights to score with: train on,
		// ungated, and say so once.
		s.log.Warn("retention check off: no base scores", "err", err)
		s.cfg.Retention = nil
		return nil
	}
	s.retentionBase, s.retentionReady = base, true
	s.log.Info("retention check ready", "facts", len(base), "check", "answer log-probabilities")
	return nil
}

// ServeRequested carries out the oldest pending request to serve an earlier
// version (`clawrl versions promote|rollback N`): the version's folder is
// copied into a new version, recorded as promoted in one transaction with
// the request's result, loaded into the trainer and published. Policy
// versions only grow, so staleness and the engine's "newest wins" hold. It
// reports whether a request was carried out.
func (s *Scheduler) ServeRequested(ctx context.Context) (bool, error) {
	req, err := s.store.PendingServing(ctx)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	versions, err := s.store.Versions(ctx, 0)
	if err != nil {
		return false, err
	}
	var src *store.Version
	for i := range versions {
		if versions[i].Version == req.Version {
			src = &versions[i]
		}
	}
	fail := func(why string) (bool, error) {
		if err := s.store.FailServing(ctx, req.ID, why); err != nil {
			return false, err
		}
		return false, fmt.Errorf("serve version %d: %s", req.Version, why)
	}
	if src == nil {
		return fail("no such version")
	}
	if _, err := os.Stat(src.Dir); err != nil {
		return fail(fmt.Sprintf("its folder is gone: %v", err))
	}
	current := s.Current()
	next := store.Version{Version: current.Version + 1, Method: src.Method, Metrics: src.Metrics, CreatedAt: time.Now(),
		Status: store.VersionPromoted, SourceVersion: src.Version,
		StatusReason: fmt.Sprintf("%s to v%d by hand (requested %s)", req.Action, src.Version, req.RequestedAt.Format(time.RFC3339))}
	next.Dir, err = s.versions.Write(next.Version, func(dir string) error { return copyDir(src.Dir, dir) })
	if err != nil {
		return false, err
	}
	if err := s.trainer.Load(next.Dir); err != nil {
		s.restore(s.Served()) //nolint:errcheck // the load failed; the old weights are still in place or the next recovery loads them
		os.RemoveAll(next.Dir)
		return fail(fmt.Sprintf("load: %v", err))
	}
	if err := s.store.CommitServing(ctx, req.ID, next, fmt.Sprintf("served as v%d", next.Version)); err != nil {
		s.resync(err, s.Served()) //nolint:errcheck // reported below
		return false, fmt.Errorf("record version %d (copy of v%d): %w", next.Version, src.Version, err)
	}
	s.mu.Lock()
	s.current, s.served = next, next
	s.mu.Unlock()
	if s.publisher != nil {
		if err := s.publish(ctx, next); err != nil {
			return true, err
		}
	}
	s.log.Info("serving an earlier version", "version", next.Version, "copy_of", src.Version, "action", req.Action)
	return true, nil
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

// FromStore joins a stored sample with its turn's tokens. A sample on a
// response the teacher wrote (context distillation) takes the turn's prompt
// and the teacher's response; it has no behaviour logprobs: the student
// never sampled it, so the step treats it as on-policy (no importance
// weight), and the teacher − old gap says how far to move each token.
func FromStore(s store.Sample, t store.Turn) Sample {
	out := Sample{
		TurnID: s.TurnID, SessionID: s.SessionID,
		PromptIDs: t.PromptIDs, ResponseIDs: t.ResponseIDs, BehaviourLogprobs: t.BehaviourLogprobs,
		PolicyVersion: t.PolicyVersion,
		UseRL:         s.UseRL, Reward: s.Reward, TeacherLogprobs: s.TeacherLogprobs, Why: s.Why,
	}
	n, w := len(t.ResponseIDs), len(s.TeacherResponseIDs)
	switch {
	case s.TeacherResponseIDs != nil && n > 0 && len(s.TeacherLogprobs) == n+w:
		// Both responses (store.Sample.TeacherResponseIDs): the turn's,
		// re-scored, then the teacher's.
		out.TeacherLogprobs = s.TeacherLogprobs[:n:n]
		out.WrittenIDs, out.WrittenLogprobs = s.TeacherResponseIDs, s.TeacherLogprobs[n:]
	case s.TeacherResponseIDs != nil:
		out.ResponseIDs, out.BehaviourLogprobs, out.TeacherWrote = s.TeacherResponseIDs, nil, true
	}
	return out
}
