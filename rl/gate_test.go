package rl

import (
	"context"
	"testing"
	"time"

	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/scripted"
)

func TestGateWaitsForServing(t *testing.T) {
	ctx := context.Background()
	g := NewGate()
	g.Quiet = 0
	if idle, err := g.WaitIdle(ctx, time.Second); !idle || err != nil {
		t.Fatalf("idle gate: %v %v", idle, err)
	}
	done := g.Serve()
	done2 := g.Serve()
	if idle, _ := g.WaitIdle(ctx, 20*time.Millisecond); idle {
		t.Fatal("gate idle while two generations run")
	}
	released := make(chan bool)
	go func() {
		idle, _ := g.WaitIdle(ctx, 0)
		released <- idle
	}()
	done()
	done() // idempotent
	select {
	case <-released:
		t.Fatal("released while one generation still runs")
	case <-time.After(20 * time.Millisecond):
	}
	done2()
	if !<-released {
		t.Fatal("not released when serving went idle")
	}
	cctx, cancel := context.WithCancel(ctx)
	d := g.Serve()
	cancel()
	if _, err := g.WaitIdle(cctx, 0); err == nil {
		t.Error("cancelled wait returned no error")
	}
	d()
	if g.Active() != 0 {
		t.Errorf("active %d", g.Active())
	}
}

func TestGatedEngineHoldsGate(t *testing.T) {
	g := NewGate()
	e := GatedEngine{Engine: scripted.New(scripted.Options{}), Gate: g}
	f := e.Format()
	ids := f.Encode("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n")
	var during int
	_, err := e.Generate(context.Background(), engine.GenerateRequest{PromptIDs: ids, MaxTokens: 4}, func(engine.Token) error {
		during = g.Active()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if during != 1 || g.Active() != 0 {
		t.Errorf("active during generation %d, after %d", during, g.Active())
	}
	if err := e.Publish(context.Background(), 3, ""); err != nil || e.Version() != 3 {
		t.Errorf("publish through the gated engine: %v, version %d", err, e.Version())
	}
}

func TestGateQuietTime(t *testing.T) {
	g := NewGate()
	g.Quiet = 80 * time.Millisecond
	g.Serve()() // a generation just ended
	start := time.Now()
	if idle, err := g.WaitIdle(context.Background(), time.Second); !idle || err != nil {
		t.Fatalf("WaitIdle: %v %v", idle, err)
	}
	if waited := time.Since(start); waited < 60*time.Millisecond {
		t.Errorf("background work started %s after serving, before the quiet time", waited)
	}
	// A new request inside the quiet time restarts it.
	g.Serve()()
	go func() {
		time.Sleep(40 * time.Millisecond)
		g.Serve()()
	}()
	start = time.Now()
	g.WaitIdle(context.Background(), time.Second)
	if waited := time.Since(start); waited < 100*time.Millisecond {
		t.Errorf("quiet time not restarted by a new request: waited %s", waited)
	}
}

// TestTrainerYieldPacesUnderSustainedServing: while serving is quiet the
// trainer's yield returns at once; when a generation runs it waits for it
// to end; when serving stays busy past maxWait, later yield points do not
// wait maxWait again (training would starve: hundreds per micro-batch) but
// sleep about as long as the trainer worked, until serving goes quiet.
func TestTrainerYieldPacesUnderSustainedServing(t *testing.T) {
	ctx := context.Background()
	g := NewGate()
	g.Quiet = 0
	const maxWait = 100 * time.Millisecond
	y := TrainerYield(g, maxWait)
	if err := y(ctx); err != nil {
		t.Fatal(err)
	}

	// A generation that ends: the trainer waits for it.
	done := g.Serve()
	go func() {
		time.Sleep(20 * time.Millisecond)
		done()
	}()
	if err := y(ctx); err != nil {
		t.Fatal(err)
	}
	if g.Active() != 0 {
		t.Fatal("yield returned while the generation ran (before maxWait)")
	}

	// Serving that never ends, after a quiet stretch of maxWait: one wait
	// of maxWait, then paced points.
	time.Sleep(maxWait + 20*time.Millisecond)
	if err := y(ctx); err != nil { // quiet: returns at once, and ends the stretch
		t.Fatal(err)
	}
	done = g.Serve()
	start := time.Now()
	if err := y(ctx); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited < maxWait*8/10 {
		t.Fatalf("first yield under load returned after %s, want about maxWait %s", waited, maxWait)
	}
	start = time.Now()
	const points = 20
	for range points {
		time.Sleep(time.Millisecond) // a piece of training work
		if err := y(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Paced: about 2 ms a point; waiting maxWait at each would be 2 s.
	if took := time.Since(start); took > points*maxWait/2 {
		t.Fatalf("%d yield points under sustained serving took %s: the trainer starves", points, took)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := y(cctx); err == nil {
		t.Error("paced yield ignored a cancelled context")
	}
	done()
	// Quiet again: back to returning at once, and to full waits later.
	if err := y(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestTrainerYieldStaysPacedThroughShortPauses: traffic with short pauses
// (a chat client's next request) must not cost a whole maxWait at the end
// of each pause: once paced, the trainer stays paced until serving has been
// quiet for maxWait.
func TestTrainerYieldStaysPacedThroughShortPauses(t *testing.T) {
	ctx := context.Background()
	g := NewGate()
	g.Quiet = 0
	const maxWait = 4 * time.Second
	y := TrainerYield(g, maxWait)
	done := g.Serve()
	go func() { time.Sleep(50 * time.Millisecond); done() }()
	if err := y(ctx); err != nil { // waits for that generation
		t.Fatal(err)
	}
	// Serving that does not end: one wait of maxWait, then paced.
	done = g.Serve()
	if err := y(ctx); err != nil {
		t.Fatal(err)
	}
	// A short pause, then serving again for good.
	done()
	if err := y(ctx); err != nil {
		t.Fatal(err)
	}
	done = g.Serve()
	defer done()
	start := time.Now()
	if err := y(ctx); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited > maxWait/2 {
		t.Fatalf("after a short pause the trainer waited %s (maxWait %s): it was paced before the pause", waited, maxWait)
	}
}
