package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/clawrl/clawrl/env"
	"github.com/clawrl/clawrl/rl"
)

func evaluationText(ep Episode) string {
	b, err := json.Marshal(map[string]any{"reward": ep.Reward, "outcome": ep.Evaluation.Reward, "success": ep.Evaluation.Success,
		"details": ep.Evaluation.Details, "steps": len(ep.Steps), "truncated": ep.Truncated})
	if err != nil {
		return fmt.Sprint(ep.Evaluation)
	}
	return string(b)
}

// TrainOptions bound a training run.
type TrainOptions struct {
	Tasks     []env.Task
	Scheduler *rl.Scheduler // trains the ready samples; Recover it first
	// Versions stops the run once the policy reached this version (0: no
	// bound); Duration stops it after this long (0: no bound).
	Versions int64
	Duration time.Duration
	Seed     uint64
	// StatusDir, when set, receives StatusFile after every group.
	StatusDir string
	// OnGroup, when set, is called after every recorded group.
	OnGroup func(Group)
	// MaxQueued pauses new groups while this many samples wait for the
	// trainer (0: the scheduler's batch size; negative: no bound). Rollouts
	// and the trainer share the CPU: an unbounded queue spends it on
	// episodes the trainer reaches only versions later (off-policy, or
	// dropped as stale) and slows every step.
	MaxQueued int
	// BatchSize is the scheduler's batch size (the default of MaxQueued,
	// and its floor: a smaller bound would never fill a batch).
	BatchSize int
}

// Train runs groups of episodes over the tasks (shuffled, epoch after
// epoch) while the scheduler trains on what they record, until ctx ends or
// a bound is reached. Groups run side by side so that about
// Config.Concurrency episodes are in flight.
func (r *Runner) Train(ctx context.Context, o TrainOptions) error {
	if r.store == nil {
		return errors.New("agent train: no store")
	}
	if len(o.Tasks) == 0 {
		return errors.New("agent train: no tasks")
	}
	if o.Scheduler == nil {
		return errors.New("agent train: no scheduler")
	}
	if o.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Duration)
		defer cancel()
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()

	schedErr := make(chan error, 1)
	go func() { schedErr <- o.Scheduler.Run(ctx) }()

	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(o.Seed, uint64(o.Scheduler.Current().Version)))
	order := rng.Perm(len(o.Tasks))
	next, round := 0, 0
	take := func() (env.Task, int) {
		mu.Lock()
		defer mu.Unlock()
		if next == len(order) {
			order, next = rng.Perm(len(o.Tasks)), 0
			round++
		}
		t := o.Tasks[order[next]]
		next++
		return t, round
	}
	reached := func() bool { return o.Versions > 0 && o.Scheduler.Current().Version >= o.Versions }
	maxQueued := o.MaxQueued
	if maxQueued == 0 {
		maxQueued = o.BatchSize
	}
	if maxQueued > 0 {
		maxQueued = max(maxQueued, o.BatchSize, 1)
	}

	workers := max(1, (r.cfg.Concurrency+r.cfg.Samples-1)/r.cfg.Samples)
	errc := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil && !reached() {
				if err := r.waitForRoom(ctx, maxQueued); err != nil {
					if ctx.Err() == nil {
						errc <- err
						stop()
					}
					return
				}
				if ctx.Err() != nil || reached() {
					break
				}
				task, round := take()
				g, err := r.RunGroup(ctx, task, round)
				if err != nil {
					if ctx.Err() != nil {
						return
					}
					r.log.Error("task group failed", "task", task.ID, "err", err)
					errc <- err
					stop()
					return
				}
				o.Scheduler.Notify()
				if o.OnGroup != nil {
					o.OnGroup(g)
				}
				if o.StatusDir != "" {
					if err := WriteStatus(o.StatusDir, r.stats.Snapshot()); err != nil {
						r.log.Warn("write agent status", "err", err)
					}
				}
			}
			if reached() {
				stop()
			}
		}()
	}
	// Stop the groups as soon as the scheduler reaches the bound, even
	// in the middle of a long group.
	go func() {
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if reached() {
					stop()
					return
				}
			}
		}
	}()
	wg.Wait()
	stop()
	err := <-schedErr
	if o.StatusDir != "" {
		_ = WriteStatus(o.StatusDir, r.stats.Snapshot())
	}
	select {
	case gerr := <-errc:
		return gerr
	default:
	}
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("agent train: scheduler: %w", err)
	}
	return nil
}

// waitForRoom returns once fewer than limit samples wait for the trainer
// (limit ≤ 0: at once) or ctx ends. The store is the count's one source, so
// samples a previous run left ready count too.
func (r *Runner) waitForRoom(ctx context.Context, limit int) error {
	if limit <= 0 {
		return nil
	}
	paused := false
	for {
		ready, _, err := r.store.ReadySamples(ctx, limit)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("agent train: count queued samples: %w", err)
		}
		if len(ready) < limit {
			if paused {
				r.log.Debug("trainer caught up; running groups again", "queued", len(ready))
			}
			return nil
		}
		if !paused {
			r.log.Info("pausing groups until the trainer catches up", "queued", len(ready), "max", limit)
			paused = true
		}
		t := time.NewTimer(250 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// EvalResult is an evaluation over tasks.
type EvalResult struct {
	Episodes    int                `json:"episodes"`
	Successes   int                `json:"successes"`
	SuccessRate float64            `json:"success_rate"`
	CILow       float64            `json:"ci95_low"` // Wilson 95 % interval of the success rate
	CIHigh      float64            `json:"ci95_high"`
	MeanReward  float64            `json:"mean_reward"`
	Failed      int                `json:"failed"` // episodes the environment failed every attempt
	PerTask     map[string]float64 `json:"per_task_success"`
}

// Evaluate runs samples episodes of every task (nothing is recorded) and
// summarises them.
func (r *Runner) Evaluate(ctx context.Context, tasks []env.Task, samples int) (EvalResult, error) {
	if samples <= 0 {
		samples = 1
	}
	type res struct {
		task string
		ep   Episode
		err  error
	}
	out := make(chan res)
	var wg sync.WaitGroup
	for ti, t := range tasks {
		for s := range samples {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var seed *int64
				if b := r.cfg.Sampling.Seed; b != nil {
					v := *b + int64(ti)*7919 + int64(s)
					seed = &v
				}
				var ep Episode
				var err error
				for attempt := 1; attempt <= r.cfg.Attempts; attempt++ {
					ep, err = r.RunEpisode(ctx, t, "", seed)
					var ee envError
					if err == nil || !errors.As(err, &ee) || ctx.Err() != nil {
						break
					}
				}
				out <- res{t.ID, ep, err}
			}()
		}
	}
	go func() { wg.Wait(); close(out) }()
	var er EvalResult
	er.PerTask = map[string]float64{}
	var reward float64
	var firstErr error
	counts := map[string][2]int{}
	for x := range out {
		if x.err != nil {
			er.Failed++
			if firstErr == nil && !errors.As(x.err, new(envError)) {
				firstErr = x.err
			}
			continue
		}
		er.Episodes++
		reward += x.ep.Reward
		c := counts[x.task]
		c[1]++
		if x.ep.Evaluation.Success {
			er.Successes++
			c[0]++
		}
		counts[x.task] = c
	}
	if firstErr != nil {
		return er, firstErr
	}
	if er.Episodes > 0 {
		er.SuccessRate = float64(er.Successes) / float64(er.Episodes)
		er.MeanReward = reward / float64(er.Episodes)
	}
	er.CILow, er.CIHigh = Wilson(er.Successes, er.Episodes)
	for id, c := range counts {
		er.PerTask[id] = float64(c[0]) / float64(c[1])
	}
	return er, nil
}
