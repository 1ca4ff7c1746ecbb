package loop

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine/scripted"
	"github.com/clawrl/clawrl/rl"
	"github.com/clawrl/clawrl/rl/rltest"
	"github.com/clawrl/clawrl/store"
)

// holdRunner is a loop on the scripted engine with a fake trainer, steps
// of 4 and --hold-liked 0.75 (keep: --hold-keep-disliked), with rate,
// which serves one turn per rating in its own session and rates it, and
// round, which judges and runs one step and reports whether it took one.
func holdRunner(t *testing.T, keep bool) (f *fixture, r *Runner, tr *rltest.Trainer, rate func(...int) []string, round func() bool) {
	tr = &rltest.Trainer{}
	f, r, rate, round = holdRunnerWith(t, rl.SchedulerConfig{HoldKeepsDisliked: keep}, tr)
	return f, r, tr, rate, round
}

// holdRunnerWith is holdRunner with the hold's other settings from train
// (its batch size, versions folder, baseline and share are set here) and
// the trainer tr.
func holdRunnerWith(t *testing.T, train rl.SchedulerConfig, tr rl.Trainer) (f *fixture, r *Runner, rate func(...int) []string, round func() bool) {
	ctx := context.Background()
	dir := t.TempDir()
	f = &fixture{dir: dir, store: openStore(t, dir), engine: scripted.New(scripted.Options{})}
	t.Cleanup(func() { f.store.Close() })
	r = f.holdRestart(t, train, tr)
	n := 0
	rate = func(ratings ...int) []string {
		var ids []string
		for _, rating := range ratings {
			n++
			turn := f.serve(t, "s"+string(rune('a'+n)), []chat.Message{{Role: chat.RoleUser, Content: "question " + string(rune('a'+n))}})
			if err := f.store.AddFeedback(ctx, turn.ID, store.Feedback{Rating: rating, CreatedAt: time.Now()}); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, turn.ID)
		}
		return ids
	}
	round = func() bool {
		t.Helper()
		return holdRound(t, r)
	}
	return f, r, rate, round
}

// holdRestart starts holdRunnerWith's loop on f's store and versions (a
// restart, after the first): a new runner, recovered.
func (f *fixture) holdRestart(t *testing.T, train rl.SchedulerConfig, tr rl.Trainer) *Runner {
	t.Helper()
	train.BatchSize, train.VersionsDir, train.RunningBaseline, train.HoldLiked = 4, filepath.Join(f.dir, "versions"), 8, 0.75
	r := f.newRunner(t, Config{Method: rl.MethodRL, SessionTimeout: -1, Train: train}, tr)
	if err := r.Scheduler().Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	return r
}

// holdRound judges and runs one step of r and reports whether it took one.
func holdRound(t *testing.T, r *Runner) bool {
	t.Helper()
	ctx := context.Background()
	if _, err := r.judgeRound(ctx); err != nil {
		t.Fatal(err)
	}
	stepped, err := r.RunOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return stepped
}

// TestHoldLiked: with --hold-liked 0.75 a step whose users liked three of
// its four answers is not trained: no trainer step, no version, its turns
// dropped as held (a crash after it trains none of them later), the served
// version kept and counted; a step with two of four liked trains, on its
// own turns alone.
func TestHoldLiked(t *testing.T) {
	ctx := context.Background()
	f, r, tr, rate, round := holdRunner(t, false)

	held := rate(1, 1, -1, 1)
	if !round() {
		t.Fatal("the held step was not reported as taken")
	}
	if len(tr.Batches) != 0 {
		t.Fatalf("a step of 3 liked of 4 with --hold-liked 0.75 trained %d batches", len(tr.Batches))
	}
	if _, err := f.store.LatestVersion(ctx); err == nil {
		t.Error("a held step recorded a version")
	}
	st, err := f.store.LearningStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.DroppedBy["held"] != 4 || st.SamplesReady != 0 {
		t.Errorf("after the held step: dropped %v, %d ready; want 4 held, 0 ready", st.DroppedBy, st.SamplesReady)
	}
	for _, id := range held {
		turn, err := f.store.Turn(ctx, id)
		if err != nil || !strings.HasPrefix(turn.DropReason, "held: its step's users liked 3 of 4 answers") {
			t.Errorf("held turn %s: reason %q, %v", id, turn.DropReason, err)
		}
	}
	if s := r.Scheduler().Stats(); s.Held != 1 || s.Steps != 0 || r.Scheduler().Served().Version != 0 {
		t.Errorf("scheduler: %d held, %d steps, serving v%d; want 1, 0, v0", s.Held, s.Steps, r.Scheduler().Served().Version)
	}

	trained := rate(1, -1, -1, 1)
	if !round() || len(tr.Batches) != 1 {
		t.Fatalf("a step of 2 liked of 4: %d batches, want 1", len(tr.Batches))
	}
	got := map[string]bool{}
	for _, s := range tr.Batches[0] {
		got[s.TurnID] = true
	}
	for _, id := range held {
		if got[id] {
			t.Errorf("held turn %s trained", id)
		}
	}
	if len(got) != 4 || !got[trained[0]] {
		t.Errorf("trained batch %v: want four of the second step's turns", got)
	}
	if v, err := f.store.LatestVersion(ctx); err != nil || v.Version != 1 {
		t.Errorf("after the trained step: version %d, %v; want 1", v.Version, err)
	}
}

// TestHoldKeepsDisliked: with --hold-keep-disliked a held step drops its
// liked answers and leaves its 👎 ready; the next step, the 👎 and three
// new liked answers, holds again and keeps it again; the one after, the
// kept 👎, a new 👎 and two liked, trains, and the kept 👎 is in that
// batch once and in no later one.
func TestHoldKeepsDisliked(t *testing.T) {
	ctx := context.Background()
	f, r, tr, rate, round := holdRunner(t, true)
	ready := func(want int, dropped map[string]int) {
		t.Helper()
		st, err := f.store.LearningStats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.SamplesReady != want || st.DroppedBy["held"] != dropped["held"] {
			t.Errorf("%d ready, dropped %v; want %d ready, %v", st.SamplesReady, st.DroppedBy, want, dropped)
		}
	}

	first := rate(1, 1, -1, 1)
	if !round() || len(tr.Batches) != 0 {
		t.Fatalf("a step of 3 liked of 4: stepped with %d batches, want held", len(tr.Batches))
	}
	ready(1, map[string]int{"held": 3})
	if turn, err := f.store.Turn(ctx, first[2]); err != nil || turn.DropReason != "" {
		t.Errorf("the held step's 👎: dropped %q, %v; want it kept", turn.DropReason, err)
	}

	rate(1, 1, 1)
	if !round() || len(tr.Batches) != 0 {
		t.Fatalf("the kept 👎 and 3 liked: stepped with %d batches, want held", len(tr.Batches))
	}
	ready(1, map[string]int{"held": 6})

	third := rate(-1, 1, 1)
	if !round() || len(tr.Batches) != 1 {
		t.Fatalf("the kept 👎, a new 👎 and 2 liked: %d batches, want 1", len(tr.Batches))
	}
	got := map[string]int{}
	for _, s := range tr.Batches[0] {
		got[s.TurnID]++
	}
	if len(tr.Batches[0]) != 4 || got[first[2]] != 1 || got[third[0]] != 1 {
		t.Errorf("trained batch %v: want the kept 👎 %s and the new one %s once each among 4", got, first[2], third[0])
	}
	ready(0, map[string]int{"held": 6})
	if s := r.Scheduler().Stats(); s.Held != 2 || s.Steps != 1 {
		t.Errorf("scheduler: %d held, %d steps; want 2, 1", s.Held, s.Steps)
	}

	rate(-1, -1, 1, 1)
	if !round() || len(tr.Batches) != 2 {
		t.Fatalf("a fourth step: %d batches, want 2", len(tr.Batches))
	}
	for _, s := range tr.Batches[1] {
		if s.TurnID == first[2] {
			t.Errorf("the kept 👎 %s trained twice", first[2])
		}
	}
}

// shrinkRecorder is the test double with ShrinkStep: it records each
// fraction it was asked to shrink a step to.
type shrinkRecorder struct {
	*rltest.Trainer
	shrunk []float64
}

func (s *shrinkRecorder) ShrinkStep(frac float64) error {
	s.shrunk = append(s.shrunk, frac)
	return nil
}

// TestHoldTrainsDisliked: with --hold-train-disliked a held step of three
// liked answers and a 👎 trains the 👎 alone at once (a version), shrunk
// to a quarter of its step (one of four samples), its liked answers
// ready while it trains and dropped as held with its version; the
// running mean of the ratings does not take the thinned step's ratings;
// a held step with no 👎 holds; the 👎 trains once.
func TestHoldTrainsDisliked(t *testing.T) {
	ctx := context.Background()
	tr := &shrinkRecorder{Trainer: &rltest.Trainer{}}
	f, r, rate, round := holdRunnerWith(t, rl.SchedulerConfig{HoldTrainsDisliked: true}, tr)
	readyInStep := -1
	tr.StepHook = func(ctx context.Context, _ []rl.Sample) error {
		st, err := f.store.LearningStats(ctx)
		readyInStep = st.SamplesReady
		return err
	}

	first := rate(1, 1, -1, 1)
	if !round() || len(tr.Batches) != 1 {
		t.Fatalf("a step of 3 liked of 4: %d batches, want 1 (its 👎 alone)", len(tr.Batches))
	}
	if b := tr.Batches[0]; len(b) != 1 || b[0].TurnID != first[2] {
		t.Fatalf("trained batch %v: want the 👎 %s alone", b, first[2])
	}
	if readyInStep != 4 {
		t.Errorf("%d of the step's turns ready while it trained; want 4 (its liked ones leave with its version)", readyInStep)
	}
	if !slices.Equal(tr.shrunk, []float64{0.25}) {
		t.Errorf("shrunk to %v; want [0.25] (1 sample of a step of 4)", tr.shrunk)
	}
	// Method rl: the 👎's reward is −1, centred on a mean the step did
	// not move (no ratings before it: 0), so it trains at −1.
	if got := tr.Batches[0][0].Reward; got != -1 {
		t.Errorf("the 👎 trained at reward %g; want −1 (the mean untouched by the thinned step)", got)
	}
	if v, err := f.store.LatestVersion(ctx); err != nil || v.Version != 1 || v.Metrics.StepScale != 0.25 {
		t.Errorf("after the thinned step: version %d at step scale %g, %v; want 1 at 0.25", v.Version, v.Metrics.StepScale, err)
	}
	st, err := f.store.LearningStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.DroppedBy["held"] != 3 || st.SamplesReady != 0 {
		t.Errorf("after the thinned step: dropped %v, %d ready; want 3 held, 0 ready", st.DroppedBy, st.SamplesReady)
	}
	for i, id := range first {
		turn, err := f.store.Turn(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if want := i != 2; (turn.DropReason != "") != want || (want && !strings.Contains(turn.DropReason, "its 1 👎s trained alone")) {
			t.Errorf("turn %d: drop reason %q", i, turn.DropReason)
		}
	}
	if s := r.Scheduler().Stats(); s.Held != 0 || s.Steps != 1 {
		t.Errorf("scheduler: %d held, %d steps; want 0, 1", s.Held, s.Steps)
	}

	rate(1, 1, 1, 1)
	if !round() || len(tr.Batches) != 1 {
		t.Fatalf("a step of 4 liked: %d batches, want it held", len(tr.Batches))
	}
	if s := r.Scheduler().Stats(); s.Held != 1 {
		t.Errorf("scheduler: %d held; want 1", s.Held)
	}

	second := rate(-1, -1, 1, 1)
	if !round() || len(tr.Batches) != 2 || len(tr.Batches[1]) != 4 {
		t.Fatalf("a step of 2 liked of 4: %d batches, want a second of 4", len(tr.Batches))
	}
	if len(tr.shrunk) != 1 {
		t.Errorf("the full step was shrunk: %v", tr.shrunk)
	}
	for _, s := range tr.Batches[1] {
		if s.TurnID == first[2] {
			t.Errorf("the thinned step's 👎 %s trained twice", first[2])
		}
	}
	if !slices.ContainsFunc(tr.Batches[1], func(s rl.Sample) bool { return s.TurnID == second[0] }) {
		t.Errorf("the full step %v lacks its 👎 %s", tr.Batches[1], second[0])
	}
}

// TestHoldMinRated: a step of four 👍s holds under --hold-min-rated 4 and
// trains under 5 (too few ratings to read the users as satisfied): the
// case of a user trying the loop a 👍 at a time.
func TestHoldMinRated(t *testing.T) {
	for _, tc := range []struct {
		min  int
		held bool
	}{{4, true}, {5, false}} {
		tr := &rltest.Trainer{}
		f, r, rate, round := holdRunnerWith(t, rl.SchedulerConfig{HoldMinRated: tc.min}, tr)
		rate(1, 1, 1, 1)
		if !round() {
			t.Fatalf("--hold-min-rated %d: no step taken", tc.min)
		}
		_, err := f.store.LatestVersion(context.Background())
		if held := r.Scheduler().Stats().Held == 1; held != tc.held || (len(tr.Batches) == 0) != tc.held || (err != nil) != tc.held {
			t.Errorf("--hold-min-rated %d, four 👍s: held %v, %d batches, version err %v; want held %v", tc.min, held, len(tr.Batches), err, tc.held)
		}
	}
}

// TestHoldReadsUnsampled: under OPD a step's batch is its hinted 👎s
// alone, and the 👍s of the version it would train from make no sample;
// they count among the step's users all the same. A step of four 👎s
// with twelve 👍s rated meanwhile (12 of 16 liked) holds, spending the
// 👍s with its batch; the next step, four 👎s beside four new 👍s (4 of
// 8), trains its four 👎s alone and leaves the 👍s judged, counted by no
// later step.
func TestHoldReadsUnsampled(t *testing.T) {
	ctx := context.Background()
	f, r, tr, rate := opdRunner(t, rl.SchedulerConfig{})
	liked := rate(1, 12)
	disliked := rate(-1, 4)
	if !holdRound(t, r) {
		t.Fatal("the held step was not reported as taken")
	}
	if len(tr.Batches) != 0 {
		t.Fatalf("four hinted 👎s beside twelve 👍s trained %d batches; want the step held", len(tr.Batches))
	}
	for _, id := range append(slices.Clone(liked), disliked...) {
		turn, err := f.store.Turn(ctx, id)
		if err != nil || turn.State != store.Dropped || !strings.HasPrefix(turn.DropReason, "held: its step's users liked 12 of 16 answers") {
			t.Errorf("turn %s of the held step: %s, %q, %v; want dropped as held, 12 of 16", id, turn.State, turn.DropReason, err)
		}
	}

	later := rate(1, 4)
	trained := rate(-1, 4)
	if !holdRound(t, r) || len(tr.Batches) != 1 {
		t.Fatalf("four 👎s beside four 👍s (4 of 8): %d batches, want 1", len(tr.Batches))
	}
	got := map[string]bool{}
	for _, s := range tr.Batches[0] {
		got[s.TurnID] = true
	}
	if len(got) != 4 || !got[trained[0]] || !got[trained[3]] {
		t.Errorf("trained batch %v: want the second step's four 👎s %v", got, trained)
	}
	for _, id := range later {
		turn, err := f.store.Turn(ctx, id)
		if err != nil || turn.State != store.Judged {
			t.Errorf("a 👍 beside the trained step: %s, %q, %v; want it judged, left to its session", turn.State, turn.DropReason, err)
		}
	}
	if s := r.Scheduler().Stats(); s.Held != 1 || s.Steps != 1 {
		t.Errorf("scheduler: %d held, %d steps; want 1, 1", s.Held, s.Steps)
	}
}

// opdRunner is a loop under OPD with steps of 4 and the hold at 0.75 (8
// rated at least), train's other settings, and rate, which serves k
// sessions of one turn and rates each (a 👎 with a hint) and returns
// their turns.
func opdRunner(t *testing.T, train rl.SchedulerConfig) (f *fixture, r *Runner, tr *rltest.Trainer, rate func(rating, k int) []string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	f = &fixture{dir: dir, store: openStore(t, dir), engine: scripted.New(scripted.Options{})}
	t.Cleanup(func() { f.store.Close() })
	tr = &rltest.Trainer{}
	train.BatchSize, train.VersionsDir, train.RunningBaseline, train.HoldLiked, train.HoldMinRated = 4, filepath.Join(dir, "versions"), 8, 0.75, 8
	r = f.newRunner(t, Config{Method: rl.MethodOPD, SessionTimeout: -1, NoYield: true, Train: train}, tr)
	if err := r.Scheduler().Recover(ctx); err != nil {
		t.Fatal(err)
	}
	n := 0
	rate = func(rating, k int) []string {
		var ids []string
		for range k {
			n++
			turn := f.serve(t, fmt.Sprintf("s%d", n), []chat.Message{{Role: chat.RoleUser, Content: fmt.Sprintf("question %d", n)}})
			fb := store.Feedback{Rating: rating, CreatedAt: time.Now()}
			if rating < 0 {
				fb.Text = "End with 'Hope this helps!'"
			}
			if err := f.store.AddFeedback(ctx, turn.ID, fb); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, turn.ID)
		}
		return ids
	}
	return f, r, tr, rate
}
