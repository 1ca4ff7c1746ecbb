package loop

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/scripted"
	"github.com/clawrl/clawrl/judge"
	"github.com/clawrl/clawrl/rl"
	"github.com/clawrl/clawrl/rl/rltest"
	"github.com/clawrl/clawrl/store"
)

// heldTeacher is the scripted engine whose Score (the teacher's pass
// over a response) waits until release is closed; it counts the passes
// in flight and the most at once, and tells entered of each.
type heldTeacher struct {
	*scripted.Engine
	release chan struct{}
	entered chan struct{}

	mu            sync.Mutex
	inFlight, max int
}

func (h *heldTeacher) Score(ctx context.Context, req engine.ScoreRequest) (engine.Scored, error) {
	h.mu.Lock()
	h.inFlight++
	h.max = max(h.max, h.inFlight)
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.inFlight--
		h.mu.Unlock()
	}()
	h.entered <- struct{}{}
	select {
	case <-h.release:
	case <-ctx.Done():
		return engine.Scored{}, ctx.Err()
	}
	return h.Engine.Score(ctx, req)
}

// scriptedFixture is a store and the rltest trainer over a scripted
// engine, and a one-vote judge on that engine (no runner yet).
func scriptedFixture(t *testing.T) (*fixture, *judge.Judge) {
	t.Helper()
	dir := t.TempDir()
	f := &fixture{dir: dir, store: openStore(t, dir), engine: scripted.New(scripted.Options{}), trainer: &rltest.Trainer{}}
	t.Cleanup(func() { f.store.Close() })
	return f, judge.New(&judge.EngineBackend{Engine: f.engine}, judge.Config{Verdict: judge.VerdictVotes,
		EvalVotes: 1, Retries: judge.NoRetries, MaxTokens: 512, HintTokens: 256}, quiet())
}

// combineFixture is a combine runner over a scripted engine whose
// teacher is teacher(engine), with teacherConcurrency teacher passes at
// once (0: the default) and a batch too large to step.
func combineFixture(t *testing.T, teacherConcurrency int, teacher func(*scripted.Engine) engine.Engine) (*fixture, *Runner, Config) {
	t.Helper()
	f, j := scriptedFixture(t)
	dir := f.dir
	cfg := Config{Method: rl.MethodCombine, SessionTimeout: -1, TeacherConcurrency: teacherConcurrency, NoYield: true,
		Train: rl.SchedulerConfig{BatchSize: 100, VersionsDir: filepath.Join(dir, "versions")}}
	r, err := New(Options{Store: f.store, Judge: j, Teacher: &judge.Teacher{Engine: teacher(f.engine)}, Trainer: f.trainer, Publisher: f.engine, Log: quiet(), Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	return f, r, cfg
}

// TestPlainSamplesDoNotWaitForTheTeacher: a liked turn's sample (the RL
// term, no teacher) is built before the teacher's work on the disliked
// turns judged with it; the teacher's passes run TeacherConcurrency at
// once; and a round of the judge loop (judgeRoundUpTo) does at most that
// many, leaving the rest, counted as work waiting, to the next round.
func TestPlainSamplesDoNotWaitForTheTeacher(t *testing.T) {
	ctx := context.Background()
	var held *heldTeacher
	f, r, cfg := combineFixture(t, 2, func(e *scripted.Engine) engine.Engine {
		held = &heldTeacher{Engine: e, release: make(chan struct{}), entered: make(chan struct{})}
		return held
	})
	const disliked = 3
	var turns []store.Turn
	for i := range disliked {
		tr := f.serve(t, fmt.Sprintf("disliked-%d", i), []chat.Message{{Role: chat.RoleUser, Content: fmt.Sprintf("question %d", i)}})
		if err := f.store.AddFeedback(ctx, tr.ID, store.Feedback{Rating: -1, Text: "End with 'Hope this helps!'", CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		turns = append(turns, tr)
	}
	// The liked turn comes last in row order.
	liked := f.serve(t, "liked", []chat.Message{{Role: chat.RoleUser, Content: "question 3"}})
	if err := f.store.AddFeedback(ctx, liked.ID, store.Feedback{Rating: 1, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}

	type result struct {
		n   int
		err error
	}
	done := make(chan result)
	go func() {
		n, err := r.judgeRoundUpTo(ctx, cfg.TeacherConcurrency)
		done <- result{n, err}
	}()
	// Two teacher passes wait at once (a sequential build would never
	// start the second while the first waits).
	<-held.entered
	<-held.entered
	samples, err := f.store.ListSamples(ctx, store.TurnFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(samples) != 1 || samples[0].TurnID != liked.ID || !samples[0].UseRL || samples[0].TeacherLogprobs != nil {
		t.Fatalf("while the teacher works, samples = %+v; want the liked turn's RL sample alone", samples)
	}
	close(held.release)
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	// 4 judged, 3 built (the liked one, 2 with the teacher), 1 left.
	if res.n != 4+3+1 {
		t.Errorf("round's work = %d, want 8 (4 judged, 3 built, 1 teacher sample left)", res.n)
	}
	if held.max != cfg.TeacherConcurrency {
		t.Errorf("most teacher passes at once = %d, want %d", held.max, cfg.TeacherConcurrency)
	}
	// The teacher works newest first: the oldest disliked turn waits.
	left, err := f.store.JudgedToSample(ctx, 0)
	if err != nil || len(left) != 1 || left[0].TurnID != turns[0].ID {
		t.Fatalf("left for the next round: %+v %v; want the first disliked turn", left, err)
	}
	// /metrics says one sample is pending (the bench waits for it).
	reg := prometheus.NewRegistry()
	reg.MustRegister(r.Collector())
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	pending := -1.0
	for _, mf := range mfs {
		if mf.GetName() == "clawrl_loop_samples_pending" && len(mf.GetMetric()) == 1 {
			pending = mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	if pending != 1 {
		t.Errorf("clawrl_loop_samples_pending = %v, want 1", pending)
	}

	// The next round (release is closed: the pass goes through) builds it.
	go func() {
		for range held.entered {
		}
	}()
	defer close(held.entered)
	if _, err := r.judgeRound(ctx); err != nil {
		t.Fatal(err)
	}
	samples, err = f.store.ListSamples(ctx, store.TurnFilter{})
	if err != nil {
		t.Fatal(err)
	}
	withTeacher := 0
	for _, s := range samples {
		if len(s.TeacherLogprobs) > 0 {
			withTeacher++
		}
	}
	if len(samples) != disliked+1 || withTeacher != disliked {
		t.Fatalf("after the next round: %d samples, %d with the teacher's logprobs; want %d and %d", len(samples), withTeacher, disliked+1, disliked)
	}
}

// countingTeacher counts the teacher's passes.
type countingTeacher struct {
	*scripted.Engine
	passes atomic.Int32
}

func (c *countingTeacher) Score(ctx context.Context, req engine.ScoreRequest) (engine.Scored, error) {
	c.passes.Add(1)
	return c.Engine.Score(ctx, req)
}

// TestTeacherSkipsStaleTurns: a disliked turn that waited for the teacher
// while the served policy moved more than K versions is refused before the
// teacher's pass (a step would refuse its sample anyway), counted with the
// scheduler's stale samples; a fresh one is taught.
func TestTeacherSkipsStaleTurns(t *testing.T) {
	ctx := context.Background()
	var teacher *countingTeacher
	f, r, _ := combineFixture(t, 0, func(e *scripted.Engine) engine.Engine {
		teacher = &countingTeacher{Engine: e}
		return teacher
	})
	dislike := func(key string) store.Turn {
		tr := f.serve(t, key, []chat.Message{{Role: chat.RoleUser, Content: "question " + key}})
		if err := f.store.AddFeedback(ctx, tr.ID, store.Feedback{Rating: -1, Text: "End with 'Hope this helps!'", CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		return tr
	}
	old := dislike("old")
	// The served policy moves on five versions before the judge loop runs.
	f.commitVersions(t, 5)
	if err := r.Scheduler().Recover(ctx); err != nil {
		t.Fatal(err)
	}
	fresh := dislike("fresh")
	if _, err := r.judgeRound(ctx); err != nil {
		t.Fatal(err)
	}
	tr, err := f.store.Turn(ctx, old.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := "stale: generated by v0, policy at v5, more than 4 versions behind; refused before its sample was built"
	if tr.State != store.Dropped || tr.DropReason != want {
		t.Errorf("old turn: %s %q; want dropped, %q", tr.State, tr.DropReason, want)
	}
	if got := r.Scheduler().Stats().DroppedStale; got != 1 {
		t.Errorf("stale counter %d, want 1", got)
	}
	tr, err = f.store.Turn(ctx, fresh.ID)
	if err != nil {
		t.Fatal(err)
	}
	if tr.State != store.Ready {
		t.Errorf("fresh turn: %s %q; want ready", tr.State, tr.DropReason)
	}
	// One teacher pass: the fresh turn's (the scripted teacher scores the
	// policy's answer once; the stale turn costs none).
	if got := teacher.passes.Load(); got != 1 {
		t.Errorf("teacher passes %d, want 1 (the fresh turn's only)", got)
	}
}
