package env

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// PoolConfig configures a Pool.
type PoolConfig struct {
	// Limit is the most episodes open at once; default 32.
	Limit int
	// Lease is how long an episode may go without a call before the pool
	// closes it; default 2 minutes.
	Lease time.Duration
	Log   *slog.Logger
}

// Pool runs episodes of in-process Kinds and implements Env.
type Pool struct {
	kinds map[string]Kind
	cfg   PoolConfig
	log   *slog.Logger
	slots chan struct{}
	stop  chan struct{}
	done  chan struct{}
	now   func() time.Time

	mu                               sync.Mutex
	episodes                         map[string]*entry
	closed                           bool
	waiting                          int
	created, closedN, reaped, failed int64
}

type entry struct {
	mu       sync.Mutex // serialises calls on the episode
	ep       Episode
	kind     string
	lastSeen time.Time
	inUse    int
	gone     bool
}

// NewPool returns a pool over kinds and starts its reaper; Close stops it.
func NewPool(cfg PoolConfig, kinds ...Kind) (*Pool, error) {
	if cfg.Limit <= 0 {
		cfg.Limit = 32
	}
	if cfg.Lease <= 0 {
		cfg.Lease = 2 * time.Minute
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	p := &Pool{kinds: map[string]Kind{}, cfg: cfg, log: cfg.Log, slots: make(chan struct{}, cfg.Limit),
		stop: make(chan struct{}), done: make(chan struct{}), now: time.Now, episodes: map[string]*entry{}}
	for _, k := range kinds {
		if _, dup := p.kinds[k.Name()]; dup {
			return nil, fmt.Errorf("env pool: kind %q given twice", k.Name())
		}
		p.kinds[k.Name()] = k
	}
	go p.reap()
	return p, nil
}

// Lease is the pool's idle timeout per episode.
func (p *Pool) Lease() time.Duration { return p.cfg.Lease }

func newEpisodeID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "ep" + hex.EncodeToString(b[:])
}

// Create implements Env.
func (p *Pool) Create(ctx context.Context, task Task) (Created, error) {
	k, ok := p.kinds[task.Env]
	if !ok {
		return Created{}, badRequest("task %q: environment kind %q is not served here (have %v)", task.ID, task.Env, p.kindNames())
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return Created{}, ErrClosed
	}
	p.waiting++
	p.mu.Unlock()
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		p.mu.Lock()
		p.waiting--
		p.mu.Unlock()
		return Created{}, ctx.Err()
	case <-p.stop:
		p.mu.Lock()
		p.waiting--
		p.mu.Unlock()
		return Created{}, ErrClosed
	}
	p.mu.Lock()
	p.waiting--
	p.mu.Unlock()
	ep, obs, err := k.Start(ctx, task)
	if err != nil {
		<-p.slots
		p.mu.Lock()
		p.failed++
		p.mu.Unlock()
		return Created{}, fmt.Errorf("start %s episode of task %q: %w", task.Env, task.ID, err)
	}
	id := newEpisodeID()
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		_ = ep.Close()
		<-p.slots
		return Created{}, ErrClosed
	}
	p.episodes[id] = &entry{ep: ep, kind: task.Env, lastSeen: p.now()}
	p.created++
	p.mu.Unlock()
	return Created{EpisodeID: id, Observation: obs, Lease: p.cfg.Lease, LeaseSeconds: p.cfg.Lease.Seconds()}, nil
}

// acquire finds an episode and marks it in use, so the reaper leaves it
// alone while a call runs.
func (p *Pool) acquire(id string) (*entry, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e, ok := p.episodes[id]
	if !ok {
		return nil, fmt.Errorf("episode %q: %w", id, ErrNotFound)
	}
	e.inUse++
	e.lastSeen = p.now()
	return e, nil
}

func (p *Pool) release(e *entry) {
	p.mu.Lock()
	e.inUse--
	e.lastSeen = p.now()
	p.mu.Unlock()
}

// Step implements Env.
func (p *Pool) Step(ctx context.Context, id string, a Action) (Observation, error) {
	e, err := p.acquire(id)
	if err != nil {
		return Observation{}, err
	}
	defer p.release(e)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.gone {
		return Observation{}, fmt.Errorf("episode %q: %w", id, ErrNotFound)
	}
	obs, err := e.ep.Step(ctx, a)
	if err != nil {
		p.mu.Lock()
		p.failed++
		p.mu.Unlock()
		return Observation{}, fmt.Errorf("episode %q: step: %w", id, err)
	}
	return obs, nil
}

// Evaluate implements Env.
func (p *Pool) Evaluate(ctx context.Context, id string) (Evaluation, error) {
	e, err := p.acquire(id)
	if err != nil {
		return Evaluation{}, err
	}
	defer p.release(e)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.gone {
		return Evaluation{}, fmt.Errorf("episode %q: %w", id, ErrNotFound)
	}
	ev, err := e.ep.Evaluate(ctx)
	if err != nil {
		return Evaluation{}, fmt.Errorf("episode %q: evaluate: %w", id, err)
	}
	return ev, nil
}

// Heartbeat implements Env.
func (p *Pool) Heartbeat(_ context.Context, id string) error {
	e, err := p.acquire(id)
	if err != nil {
		return err
	}
	p.release(e)
	return nil
}

// Close implements Env.
func (p *Pool) Close(_ context.Context, id string) error {
	p.mu.Lock()
	e, ok := p.episodes[id]
	if ok {
		delete(p.episodes, id)
		p.closedN++
	}
	p.mu.Unlock()
	if !ok {
		return fmt.Errorf("episode %q: %w", id, ErrNotFound)
	}
	return p.finish(id, e)
}

// finish closes an episode removed from the map, after any call on it ends.
func (p *Pool) finish(id string, e *entry) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.gone = true
	<-p.slots
	if err := e.ep.Close(); err != nil {
		return fmt.Errorf("episode %q: close: %w", id, err)
	}
	return nil
}

// Load implements Env.
func (p *Pool) Load(context.Context) (Load, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Load{Running: len(p.episodes), Waiting: p.waiting, Limit: p.cfg.Limit, Created: p.created,
		Closed: p.closedN, Reaped: p.reaped, Failed: p.failed, Kinds: p.kindNames()}, nil
}

func (p *Pool) kindNames() []string {
	names := make([]string, 0, len(p.kinds))
	for n := range p.kinds {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// reap closes episodes whose lease ran out.
func (p *Pool) reap() {
	defer close(p.done)
	interval := max(p.cfg.Lease/4, 10*time.Millisecond)
	t := time.NewTicker(interval)
	defer t.Stop()
	last := p.now()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			// A tick far later than due means this process did not run
			// (a stopped or starved machine): its agents could not send
			// heartbeats either, so that time does not count against
			// their leases.
			now := p.now()
			if stall := now.Sub(last) - interval; stall > interval {
				p.extendLeases(stall)
			}
			last = now
			p.ReapIdle()
		}
	}
}

// extendLeases moves every episode's last call d later.
func (p *Pool) extendLeases(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range p.episodes {
		e.lastSeen = e.lastSeen.Add(d)
	}
}

// ReapIdle closes every episode idle past its lease now and returns how many.
func (p *Pool) ReapIdle() int {
	cutoff := p.now().Add(-p.cfg.Lease)
	p.mu.Lock()
	var idle []string
	var entries []*entry
	for id, e := range p.episodes {
		if e.inUse == 0 && e.lastSeen.Before(cutoff) {
			idle = append(idle, id)
			entries = append(entries, e)
			delete(p.episodes, id)
			p.reaped++
		}
	}
	p.mu.Unlock()
	for i, id := range idle {
		p.log.Info("episode lease ran out; closing it", "episode", id, "kind", entries[i].kind, "lease", p.cfg.Lease)
		if err := p.finish(id, entries[i]); err != nil {
			p.log.Warn("close reaped episode", "err", err)
		}
	}
	return len(idle)
}

// Shutdown closes every episode and stops the reaper.
func (p *Pool) Shutdown() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	all := p.episodes
	p.episodes = map[string]*entry{}
	p.mu.Unlock()
	close(p.stop)
	<-p.done
	var errs []error
	for id, e := range all {
		if err := p.finish(id, e); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("env pool shutdown: %v", errs)
	}
	return nil
}
