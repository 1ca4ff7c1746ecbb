package rl

import (
	"context"
	"sync"
	"time"

	"github.com/clawrl/clawrl/engine"
)

// Gate gives serving priority over background work on a small machine:
// serving generations register while they run, and training steps (and judge
// calls on the served engine) wait until none is running. Serving never waits
// on the gate, so training can never cause a 503 or a 429.
type Gate struct {
	mu       sync.Mutex
	active   int
	idle     chan struct{} // closed while active == 0
	lastBusy time.Time     // when the last generation ended (or started)
	// Quiet is how long serving must have been idle before background work
	// starts: agents send the next request right after a tool ran or a
	// reply streamed, so a gap shorter than this is likely not a pause.
	Quiet time.Duration
}

// DefaultQuiet is the idle time background work waits for by default.
const DefaultQuiet = 250 * time.Millisecond

// NewGate returns an idle gate with the default quiet time.
func NewGate() *Gate {
	g := &Gate{idle: make(chan struct{}), Quiet: DefaultQuiet}
	close(g.idle)
	return g
}

// Serve marks a serving generation as running until done is called.
func (g *Gate) Serve() (done func()) {
	g.mu.Lock()
	if g.active == 0 {
		g.idle = make(chan struct{})
	}
	g.active++
	g.lastBusy = time.Now()
	g.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			g.active--
			g.lastBusy = time.Now()
			if g.active == 0 {
				close(g.idle)
			}
			g.mu.Unlock()
		})
	}
}

// Active is the number of serving generations running.
func (g *Gate) Active() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.active
}

// Idle reports whether no serving generation runs and none has for Quiet.
func (g *Gate) Idle() bool {
	if g == nil {
		return true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.active == 0 && time.Since(g.lastBusy) >= g.Quiet
}

// quietFor is how long serving has been idle (0 while a generation runs).
func (g *Gate) quietFor() time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.active > 0 {
		return 0
	}
	return time.Since(g.lastBusy)
}

// WaitIdle waits until no serving generation runs and none has for Quiet,
// at most maxWait (0 = no bound), so that continuous traffic delays training
// but cannot starve it. It returns whether the gate was idle, or ctx's error.
func (g *Gate) WaitIdle(ctx context.Context, maxWait time.Duration) (bool, error) {
	if g == nil {
		return true, nil
	}
	// The trainer calls this at every yield point (hundreds per
	// micro-batch): when serving is quiet, answer without a timer.
	if g.Idle() {
		return true, nil
	}
	var timeout <-chan time.Time
	if maxWait > 0 {
		t := time.NewTimer(maxWait)
		defer t.Stop()
		timeout = t.C
	}
	for {
		g.mu.Lock()
		idle, quietFor := g.idle, time.Until(g.lastBusy.Add(g.Quiet))
		if g.active > 0 {
			quietFor = 0
		}
		g.mu.Unlock()
		select {
		case <-idle:
			if quietFor <= 0 {
				return true, nil
			}
			// Idle, but only just: wait out the quiet time and look again.
			t := time.NewTimer(quietFor)
			select {
			case <-t.C:
			case <-timeout:
				t.Stop()
				return false, nil
			case <-ctx.Done():
				t.Stop()
				return false, ctx.Err()
			}
		case <-timeout:
			return false, nil
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// GatedEngine is the engine the gateway serves from: every Generate call
// holds the gate while it runs. Background users (judge, teacher, trainer)
// use the engine underneath directly.
type GatedEngine struct {
	engine.Engine
	Gate *Gate
}

// Generate implements engine.Engine.
func (e GatedEngine) Generate(ctx context.Context, req engine.GenerateRequest, emit func(engine.Token) error) (engine.Generation, error) {
	done := e.Gate.Serve()
	defer done()
	return e.Engine.Generate(ctx, req, emit)
}

// Publish forwards to the wrapped engine when it takes adapter versions.
func (e GatedEngine) Publish(ctx context.Context, v int64, dir string) error {
	if p, ok := e.Engine.(engine.Publisher); ok {
		return p.Publish(ctx, v, dir)
	}
	return errNoPublisher
}

// Version forwards to the wrapped engine; 0 when it takes no versions.
func (e GatedEngine) Version() int64 {
	if p, ok := e.Engine.(engine.Publisher); ok {
		return p.Version()
	}
	return 0
}

// TrainerYield returns the yield function a trainer calls at each of its
// yield points (Yielder): while serving is quiet it returns at once; when a
// generation is running it waits for the gate to go idle, at most maxWait
// (0 = no bound). A trainer with hundreds of yield points per micro-batch
// must not wait at each of them: after one wait, until serving has been
// quiet for maxWait, the trainer is paced at half duty, sleeping as long as
// it worked (at most maxDutySleep) each time it has worked minDutyWork
// since the last sleep, so serving keeps about half the machine. The
// returned function is for one trainer (one goroutine) at a time.
func TrainerYield(g *Gate, maxWait time.Duration) func(ctx context.Context) error {
	var (
		paced   bool      // waited once in this busy stretch: sleep, don't wait
		resumed time.Time // when the trainer last went back to work
	)
	return func(ctx context.Context) error {
		if g.Idle() {
			// Back to full waits only after serving has been quiet for
			// maxWait: traffic with short pauses would otherwise cost a
			// whole maxWait at each pause's end.
			if maxWait <= 0 || g.quietFor() >= maxWait {
				paced = false
			}
			return nil
		}
		if !paced {
			if _, err := g.WaitIdle(ctx, maxWait); err != nil {
				return err
			}
			// One wait per busy stretch: traffic whose pauses outlast the
			// gate's quiet time but not maxWait (a chat client's next
			// request) would otherwise cost a wait at every yield point
			// that meets a generation, hundreds a step. With no bound
			// (maxWait 0) every busy stretch is waited out.
			paced = maxWait > 0
			resumed = time.Now()
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		worked := time.Since(resumed)
		if worked < minDutyWork {
			return nil // too little work yet to pay for a sleep
		}
		t := time.NewTimer(min(worked, maxDutySleep))
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
		resumed = time.Now()
		return nil
	}
}

// minDutyWork is the least work between two half-duty sleeps. A sleep
// costs more than it asks for (a timer and a thread's wake-up: a millisecond
// or more on a loaded machine), and a small model's yield points come
// microseconds apart: slept at each, a step of well under a second took
// 43 s beside steady traffic, and over 3 minutes under a loaded CI run.
// Sleeping once per minDutyWork of work keeps half duty and amortises it.
const minDutyWork = 10 * time.Millisecond

// maxDutySleep bounds one half-duty sleep (a long stretch without a yield
// point must not turn into an equally long stall).
const maxDutySleep = 50 * time.Millisecond
