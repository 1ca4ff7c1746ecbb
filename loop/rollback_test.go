package loop

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/clawrl/clawrl/rl"
	"github.com/clawrl/clawrl/rl/rltest"
	"github.com/clawrl/clawrl/store"
)

// TestRollbackDrop: with --rollback-drop 0.5 (α 0.1, steps of 4, the hold
// at 0.75), a version whose users liked far fewer answers than the users
// of the version it was trained from is not trained on: the next step
// starts from that earlier version's saved state, trains the batch its
// users just rated once, and records why. A version trained so is not
// rolled back again.
func TestRollbackDrop(t *testing.T) {
	ctx := context.Background()
	tr := &rltest.Trainer{}
	f, r, rate, round := holdRunnerWith(t, rl.SchedulerConfig{RollbackDrop: 0.5, RollbackAlpha: 0.1}, tr)
	version := func(want int64) rlVersion {
		t.Helper()
		v, err := f.store.LatestVersion(ctx)
		if err != nil || v.Version != want {
			t.Fatalf("latest version %d, %v; want %d", v.Version, err, want)
		}
		st, err := rltest.ReadState(v.Dir)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(st.Trained) // a step's batch is in content order
		return rlVersion{v.Metrics.TrainedFrom, v.Metrics.ParentLiked, v.Metrics.ParentRated, v.Metrics.RolledBack, v.StatusReason, st}
	}

	first := rate(-1, -1, -1, -1) // the base's users: v1
	if !round() {
		t.Fatal("no first step")
	}
	if v := version(1); v.from != 0 || v.liked != 0 || v.rated != 4 || v.rolledBack != 0 {
		t.Errorf("v1: trained from v%d, parent's users %d of %d, rolled back %d; want v0, 0 of 4, none", v.from, v.liked, v.rated, v.rolledBack)
	}
	rate(1, 1, 1, -1) // v1's users, satisfied: held, counted
	if !round() || len(tr.Batches) != 1 {
		t.Fatalf("the satisfied step: %d batches, want it held", len(tr.Batches))
	}
	second := rate(1, 1, -1, -1) // v1's users again: 5 of 8 in all, v2
	if !round() {
		t.Fatal("no second step")
	}
	if v := version(2); v.from != 1 || v.liked != 5 || v.rated != 8 || !slices.Equal(v.state.Trained, turns(first, second)) {
		t.Errorf("v2: trained from v%d, parent's users %d of %d, state %v; want v1, 5 of 8 (the held step's count too), the two batches", v.from, v.liked, v.rated, v.state.Trained)
	}

	// v2's users like none: 0 of 4 after 5 of 8 (p = 0.071 < 0.1, a fall
	// of 0.625 ≥ 0.5): the step trains from v1.
	third := rate(-1, -1, -1, -1)
	if !round() {
		t.Fatal("no third step")
	}
	v := version(3)
	if v.from != 1 || v.rolledBack != 2 || v.liked != 5 || v.rated != 8 {
		t.Errorf("v3: trained from v%d, rolled back v%d, parent's users %d of %d; want v1, v2, v1's 5 of 8", v.from, v.rolledBack, v.liked, v.rated)
	}
	if want := turns(first, third); !slices.Equal(v.state.Trained, want) || v.state.Steps != 2 {
		t.Errorf("v3's trainer state: %d steps on %v; want v1's state and the third batch, 2 steps on %v", v.state.Steps, v.state.Trained, want)
	}
	if !strings.Contains(v.reason, "trained from v1, not v2: v2's users liked 0 of 4 answers, v1's 5 of 8") {
		t.Errorf("v3's reason %q: want it to say it was trained from v1 and why", v.reason)
	}
	if got, st := r.Scheduler().Served().Version, r.Scheduler().Stats(); got != 3 || st.RolledBack != 1 || st.Steps != 3 {
		t.Errorf("serving v%d after the rolled-back step, %d of %d steps rolled back; want v3, 1 of 3", got, st.RolledBack, st.Steps)
	}

	// v3's users like none either: a rolled-back version is not rolled
	// back again; the step trains from v3.
	fourth := rate(-1, -1, -1, -1)
	if !round() {
		t.Fatal("no fourth step")
	}
	if v := version(4); v.from != 3 || v.rolledBack != 0 || !slices.Equal(v.state.Trained, turns(first, third, fourth)) {
		t.Errorf("v4: trained from v%d, rolled back v%d, state %v; want v3, none, the first, third and fourth batches", v.from, v.rolledBack, v.state.Trained)
	}
}

// TestRollbackDropOff: without --rollback-drop the same fall trains on
// from the served version, as before.
func TestRollbackDropOff(t *testing.T) {
	ctx := context.Background()
	f, _, rate, round := holdRunnerWith(t, rl.SchedulerConfig{}, &rltest.Trainer{})
	for _, ratings := range [][]int{{-1, -1, -1, -1}, {1, 1, 1, -1}, {1, 1, -1, -1}, {-1, -1, -1, -1}} {
		rate(ratings...)
		round()
	}
	v, err := f.store.LatestVersion(ctx)
	if err != nil || v.Version != 3 || v.Metrics.TrainedFrom != 2 || v.Metrics.RolledBack != 0 {
		t.Errorf("v%d trained from v%d, rolled back v%d (%v); want v3 from v2, none", v.Version, v.Metrics.TrainedFrom, v.Metrics.RolledBack, err)
	}
}

// TestRollbackHeldRestart: the users a held step spent are read from the
// store, so a restart between the held step and the next keeps them in
// the verdict (v1's users 5 of 8, not the last batch's 2 of 4), and under
// --hold-keep-disliked a 👎 the held step left ready counts once (7
// answers rated, not 8).
func TestRollbackHeldRestart(t *testing.T) {
	ctx := context.Background()
	for _, keep := range []bool{false, true} {
		cfg := rl.SchedulerConfig{RollbackDrop: 0.5, RollbackAlpha: 0.1, HoldKeepsDisliked: keep}
		f, _, rate, round := holdRunnerWith(t, cfg, &rltest.Trainer{})
		rate(-1, -1, -1, -1)
		round() // v1
		rate(1, 1, 1, -1)
		if !round() {
			t.Fatal("no held step")
		}
		r := f.holdRestart(t, cfg, &rltest.Trainer{}) // kill -9, then serve again
		if keep {
			rate(1, 1, -1) // with the kept 👎, a batch of 4
		} else {
			rate(1, 1, -1, -1)
		}
		if !holdRound(t, r) {
			t.Fatal("no step after the restart")
		}
		v, err := f.store.LatestVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := [3]int64{2, 5, 8}
		if keep {
			want = [3]int64{2, 5, 7}
		}
		if got := [3]int64{v.Version, int64(v.Metrics.ParentLiked), int64(v.Metrics.ParentRated)}; got != want {
			t.Errorf("keep %v: v%d recorded its parent's users as %d of %d; want v%d, %d of %d", keep, got[0], got[1], got[2], want[0], want[1], want[2])
		}
	}
}

// turns is the turn ids of batches, sorted.
func turns(batches ...[]string) []string {
	return slices.Sorted(slices.Values(slices.Concat(batches...)))
}

type rlVersion struct {
	from         int64
	liked, rated int
	rolledBack   int64
	reason       string
	state        rltest.State
}

// TestRollbackStepFails: a rolled-back step that fails leaves the trainer
// on the served version's state (as any failed step does), records
// nothing, and the next try rolls back again and trains the batch once.
func TestRollbackStepFails(t *testing.T) {
	ctx := context.Background()
	tr := &rltest.Trainer{}
	f, r, rate, round := holdRunnerWith(t, rl.SchedulerConfig{RollbackDrop: 0.5, RollbackAlpha: 0.1}, tr)
	first := rate(-1, -1, -1, -1)
	round()
	rate(1, 1, 1, -1)
	round() // held
	second := rate(1, 1, -1, -1)
	round() // v2, from v1: v1's users liked 5 of 8
	third := rate(-1, -1, -1, -1)
	served := tr.State()
	tr.StepHook = func(context.Context, []rl.Sample) error { return errors.New("out of memory") }
	if _, err := r.judgeRound(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := r.RunOnce(ctx); err == nil {
		t.Fatal("the failing step reported no error")
	}
	if got := tr.State(); !slices.Equal(got.Trained, served.Trained) {
		t.Errorf("after the failed rolled-back step the trainer holds %v; want v2's %v", got.Trained, served.Trained)
	}
	tr.StepHook = nil
	if !round() {
		t.Fatal("no step after the failure")
	}
	v, err := f.store.LatestVersion(ctx)
	if err != nil || v.Version != 3 || v.Metrics.TrainedFrom != 1 || v.Metrics.RolledBack != 2 {
		t.Fatalf("v%d from v%d rolling back v%d (%v); want v3 from v1, rolling back v2", v.Version, v.Metrics.TrainedFrom, v.Metrics.RolledBack, err)
	}
	st, err := rltest.ReadState(v.Dir)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(st.Trained)
	if want := turns(first, third); !slices.Equal(st.Trained, want) {
		t.Errorf("v3 holds %v; want the first and third batches once, %v (not the second, %v)", st.Trained, want, second)
	}
}

// TestRollbackReadsUnsampled: under OPD a step's batch is its hinted 👎s
// alone, so its users are read with the served version's 👍s (no
// sample), and those a held step spent are counted by their judgments.
// v1's users: 12 👍 beside 4 👎 (held), then 4 👎 (trained: 12 of 20
// liked, v2); v2's users like none of 4 (p = 0.047 < 0.1): the step
// trains from v1. Reading the samples alone, v1's users were 0 of 8 and
// nothing rolled back.
func TestRollbackReadsUnsampled(t *testing.T) {
	ctx := context.Background()
	f, r, tr, rate := opdRunner(t, rl.SchedulerConfig{RollbackDrop: 0.5, RollbackAlpha: 0.1})
	latest := func(want int64) store.Version {
		t.Helper()
		v, err := f.store.LatestVersion(ctx)
		if err != nil || v.Version != want {
			t.Fatalf("latest version v%d, %v; want v%d", v.Version, err, want)
		}
		return v
	}

	rate(-1, 4) // the base's users: v1
	if !holdRound(t, r) {
		t.Fatal("no first step")
	}
	latest(1)
	rate(1, 12)
	rate(-1, 4)
	if !holdRound(t, r) || len(tr.Batches) != 1 {
		t.Fatalf("12 👍 beside 4 👎: %d batches; want the step held", len(tr.Batches))
	}
	rate(-1, 4)
	if !holdRound(t, r) {
		t.Fatal("no second step")
	}
	if m := latest(2).Metrics; m.TrainedFrom != 1 || m.ParentLiked != 12 || m.ParentRated != 20 {
		t.Errorf("v2: trained from v%d, its parent's users %d of %d; want v1, 12 of 20 (the held step's 👍s counted)", m.TrainedFrom, m.ParentLiked, m.ParentRated)
	}
	rate(-1, 4)
	if !holdRound(t, r) {
		t.Fatal("no third step")
	}
	v := latest(3)
	if m := v.Metrics; m.TrainedFrom != 1 || m.RolledBack != 2 {
		t.Errorf("v3: trained from v%d, rolled back v%d; want v1, v2", m.TrainedFrom, m.RolledBack)
	}
	if !strings.Contains(v.StatusReason, "v2's users liked 0 of 4 answers, v1's 12 of 20") {
		t.Errorf("v3's reason %q: want it to say v2's users liked 0 of 4, v1's 12 of 20", v.StatusReason)
	}
}
