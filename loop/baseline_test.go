package loop

import (
	"context"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine/scripted"
	"github.com/clawrl/clawrl/rl"
	"github.com/clawrl/clawrl/rl/rltest"
	"github.com/clawrl/clawrl/store"
)

// TestRunningBaseline: with --baseline running, a step's 👍s are compared
// with the running mean of the ratings, a 👎 trained on the teacher's
// answer included, and the mean goes on from the last version after a
// restart. A step's ratings join lowest first, whatever the order of
// its turns; --baseline-clip bounds the centred rewards. The expected
// means are pandas':
//
//	pd.Series([-1, 1, -1, -1], dtype=float).ewm(alpha=1/8, adjust=True).mean()[[1, 3]]
func TestRunningBaseline(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := Config{Method: rl.MethodCombine, SessionTimeout: -1, TeacherWrites: true, TeacherTokens: 40,
		Train: rl.SchedulerConfig{BatchSize: 2, VersionsDir: filepath.Join(dir, "versions"), RunningBaseline: 8}}
	f := &fixture{dir: dir, store: openStore(t, dir), engine: scripted.New(scripted.Options{})}
	t.Cleanup(func() { f.store.Close() })
	start := func() (*Runner, *rltest.Trainer) {
		tr := &rltest.Trainer{}
		r := f.newRunner(t, cfg, tr)
		if err := r.Scheduler().Recover(ctx); err != nil {
			t.Fatal(err)
		}
		return r, tr
	}
	rate := func(session, prompt string, rating int, text string) store.Turn {
		tr := f.serve(t, session, []chat.Message{{Role: chat.RoleUser, Content: prompt}})
		if err := f.store.AddFeedback(ctx, tr.ID, store.Feedback{Rating: rating, Text: text, CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		return tr
	}
	step := func(r *Runner, tr *rltest.Trainer) []rl.Sample {
		t.Helper()
		if _, err := r.judgeRound(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := r.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		if len(tr.Batches) != 1 || len(tr.Batches[0]) != 2 {
			t.Fatalf("trainer batches: %d", len(tr.Batches))
		}
		return tr.Batches[0]
	}

	r, tr := start()
	disliked := rate("a", cuedHaiku, -1, `[[say: Short.]] Be brief.`)
	liked := rate("b", "hello there", 1, "")
	batch := step(r, tr)
	const mean1 = 0.06666666666666667
	for _, s := range batch {
		switch s.TurnID {
		case disliked.ID:
			if !s.TeacherWrote || s.UseRL {
				t.Errorf("the 👎 with written feedback: teacher wrote %v, RL %v; want the teacher's answer, OPD only", s.TeacherWrote, s.UseRL)
			}
		case liked.ID:
			if !s.UseRL || math.Abs(s.Reward-(1-mean1)) > 1e-12 {
				t.Errorf("the 👍: RL %v, reward %.17g; want 1 − %.17g (the 👎 that went to the teacher counted)", s.UseRL, s.Reward, mean1)
			}
		}
	}
	v, err := f.store.LatestVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(v.Metrics.RewardBaseline-mean1) > 1e-12 || v.Metrics.RatingWeight == 0 || v.Metrics.MeanReward != 0.5 {
		t.Errorf("version %d metrics: baseline %v, rating weight %v, mean reward %v; want %v, > 0, 0.5 (the ratings as given)",
			v.Version, v.Metrics.RewardBaseline, v.Metrics.RatingWeight, v.Metrics.MeanReward, mean1)
	}

	// A restart goes on from the version's running mean: two bare 👎s are
	// compared with it, not with each other (that would train nothing) or
	// with 0 (that would be "less of everything" at full strength).
	r, tr = start()
	rate("c", "tell me a joke", -1, "")
	rate("d", "and another", -1, "")
	const mean2 = -0.5374631268436578
	for _, s := range step(r, tr) {
		if !s.UseRL || math.Abs(s.Reward-(-1-mean2)) > 1e-12 {
			t.Errorf("bare 👎 after the restart: RL %v, reward %.17g; want −1 − %.17g", s.UseRL, s.Reward, mean2)
		}
	}

	// With --baseline-clip 1 a 👍 given while the mean is still below 0
	// trains at 1, not 1 − mean; a reward inside the bound is left as it
	// is. mean3 is the same recurrence one step on (ratings −1, 1 after
	// the four above).
	cfg.Train.RunningClip = 1
	r, tr = start()
	liked = rate("e", "thanks, that was short", 1, "")
	rate("f", "one more", -1, "")
	const mean3 = -0.28058410325616806
	for _, s := range step(r, tr) {
		want := -1 - mean3
		if s.TurnID == liked.ID {
			want = 1 // 1 − mean3 ≈ 1.28, bounded
		}
		if !s.UseRL || math.Abs(s.Reward-want) > 1e-12 {
			t.Errorf("turn %s with the clip: RL %v, reward %.17g; want %.17g", s.TurnID, s.UseRL, s.Reward, want)
		}
	}
}
