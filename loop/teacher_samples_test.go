package loop

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine/scripted"
	"github.com/clawrl/clawrl/judge"
	"github.com/clawrl/clawrl/rl"
	"github.com/clawrl/clawrl/rl/rltest"
	"github.com/clawrl/clawrl/store"
)

// countingScorer is the engine's own prefill scorer that counts its calls
// and, when at > 0, kills the process at its at-th call (kill -9 in the
// middle of choosing a turn's teacher answer).
type countingScorer struct {
	inner judge.NextTokenScorer
	calls *atomic.Int32
	at    int32
}

func (c countingScorer) NextLogprobs(ctx context.Context, msgs []chat.Message, begun string, cands []string) ([]float64, error) {
	if n := c.calls.Add(1); c.at > 0 && n == c.at {
		killSelf()
	}
	return c.inner.NextLogprobs(ctx, msgs, begun, cands)
}

const selectSamples = 4

// samplesFixture is a loop on dir whose teacher writes selectSamples
// answers per turn, chosen by a selector over the scripted engine's
// prefill (threshold as given); calls counts the selector's judge calls.
func samplesFixture(t *testing.T, dir string, batch int, threshold float64, killAt int32) (*fixture, *atomic.Int32) {
	return samplesFixtureBy(t, dir, batch, threshold, killAt, SelectJudge)
}

// samplesFixtureBy is samplesFixture choosing by how (SelectJudge or
// SelectGain).
func samplesFixtureBy(t *testing.T, dir string, batch int, threshold float64, killAt int32, how string) (*fixture, *atomic.Int32) {
	t.Helper()
	f := &fixture{dir: dir, store: openStore(t, dir), engine: scripted.New(scripted.Options{}), trainer: &rltest.Trainer{}}
	t.Cleanup(func() { f.store.Close() })
	j := judge.New(&judge.EngineBackend{Engine: f.engine}, judge.Config{Verdict: judge.VerdictVotes,
		EvalVotes: 1, Retries: judge.NoRetries, MaxTokens: 512, HintTokens: 256}, quiet())
	calls := &atomic.Int32{}
	sel := &judge.Selector{Scorer: countingScorer{inner: &judge.EngineBackend{Engine: f.engine}, calls: calls, at: killAt}, Threshold: threshold}
	r, err := New(Options{Store: f.store, Judge: j, Teacher: &judge.Teacher{Engine: f.engine}, Selector: sel, Trainer: f.trainer,
		Publisher: f.engine, Log: quiet(), Config: Config{Method: rl.MethodCombine, SessionTimeout: -1, TeacherWrites: true,
			TeacherTokens: 40, TeacherSamples: selectSamples, TeacherTemperature: 0.7, TeacherSelect: how, TeacherSelectThreshold: threshold,
			Train: rl.SchedulerConfig{BatchSize: batch, VersionsDir: filepath.Join(dir, "versions")}}})
	if err != nil {
		t.Fatal(err)
	}
	f.runner = r
	return f, calls
}

// critiqueTurns serves n turns in their own sessions, each rated −1 with
// written feedback the scripted teacher follows.
func critiqueTurns(t *testing.T, f *fixture, n int) []store.Turn {
	t.Helper()
	var out []store.Turn
	for i := range n {
		// The prompt's own cue gives the teacher's answers words the
		// feedback does not hold (judge.Refuse refuses an answer made
		// of the feedback's words only).
		tr := f.serve(t, fmt.Sprintf("crit%d", i), []chat.Message{{Role: chat.RoleUser, Content: fmt.Sprintf("write a poem %d [[say:Roses are red. ]]", i)}})
		if err := f.store.AddFeedback(context.Background(), tr.ID, store.Feedback{Rating: -1, Text: fmt.Sprintf("[[say:Short %d.]] Be brief.", i),
			CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		out = append(out, tr)
	}
	return out
}

// TestTeacherSamplesOneSamplePerTurn: with --teacher-samples 4 every rated
// turn has its four answers judged (four selector calls) and stores
// exactly one sample, on the teacher's response, trained once; with a
// threshold no answer passes, the turn stores none and is counted.
func TestTeacherSamplesOneSamplePerTurn(t *testing.T) {
	ctx := context.Background()
	f, calls := samplesFixture(t, t.TempDir(), 2, math.Inf(-1), 0)
	if err := f.runner.Scheduler().Recover(ctx); err != nil {
		t.Fatal(err)
	}
	turns := critiqueTurns(t, f, 2)
	for range 3 {
		if _, err := f.runner.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := calls.Load(); got != 2*selectSamples {
		t.Errorf("selector judged %d answers for 2 turns, want %d", got, 2*selectSamples)
	}
	for i, tr := range turns {
		ss, err := f.store.ListSamples(ctx, store.TurnFilter{SessionID: tr.SessionID})
		if err != nil || len(ss) != 1 {
			t.Fatalf("turn %d: %d samples (%v), want 1", i, len(ss), err)
		}
		s := ss[0]
		text := f.engine.Format().Decode(s.TeacherResponseIDs)
		if want := fmt.Sprintf("Roses are red. Short %d.", i); !strings.HasPrefix(text, want) || s.UseRL {
			t.Errorf("turn %d's sample: teacher response %q (want %q), RL term %v", i, text, want, s.UseRL)
		}
	}
	if st := f.trainer.State(); st.Steps != 1 || !slices.Equal(sorted(st.Trained), sorted([]string{turns[0].ID, turns[1].ID})) {
		t.Errorf("trainer: %d steps on %v, want one step on both turns", st.Steps, st.Trained)
	}
	if k := f.runner.Counters(); k.TeacherPicked != 2 || k.TeacherNoPick != 0 {
		t.Errorf("counters: picked %d, none %d; want 2, 0", k.TeacherPicked, k.TeacherNoPick)
	}
	if got := metric(t, f.runner, "picked"); got != 2 {
		t.Errorf("metric picked = %v, want 2", got)
	}

	// Nothing passes: no teacher sample, the turn is dropped (a −1
	// teacher-written turn has no RL term to keep), and counted.
	g, _ := samplesFixture(t, t.TempDir(), 2, math.Inf(1), 0)
	if err := g.runner.Scheduler().Recover(ctx); err != nil {
		t.Fatal(err)
	}
	tr := critiqueTurns(t, g, 1)[0]
	if _, err := g.runner.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	ss, err := g.store.ListSamples(ctx, store.TurnFilter{SessionID: tr.SessionID})
	if err != nil || len(ss) != 0 {
		t.Fatalf("%d samples (%v) when no answer passed, want 0", len(ss), err)
	}
	if got, _ := g.turn(t, tr.ID); got.State != store.Dropped || got.DropReason != "none of the teacher's answers does what the feedback asks (by the judge): no answer of 4 scored above the threshold" {
		t.Errorf("turn state %s (%q), want dropped by the judge", got.State, got.DropReason)
	}
	if k := g.runner.Counters(); k.TeacherNoPick != 1 || k.TeacherPicked != 0 {
		t.Errorf("counters: picked %d, none %d; want 0, 1", k.TeacherPicked, k.TeacherNoPick)
	}
	if got := metric(t, g.runner, "none"); got != 1 {
		t.Errorf("metric none = %v, want 1", got)
	}
}

// TestTeacherSamplesByGain: --teacher-select gain stores one sample per
// turn without asking the judge, and none when no answer passes.
func TestTeacherSamplesByGain(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		threshold    float64
		picked, none int
	}{{math.Inf(-1), 2, 0}, {math.Inf(1), 0, 2}} {
		f, calls := samplesFixtureBy(t, t.TempDir(), 2, c.threshold, 0, SelectGain)
		if err := f.runner.Scheduler().Recover(ctx); err != nil {
			t.Fatal(err)
		}
		turns := critiqueTurns(t, f, 2)
		if _, err := f.runner.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		if calls.Load() != 0 {
			t.Errorf("the judge was asked %d times", calls.Load())
		}
		for _, tr := range turns {
			ss, err := f.store.ListSamples(ctx, store.TurnFilter{SessionID: tr.SessionID})
			if err != nil || len(ss) != min(c.picked, 1) {
				t.Errorf("threshold %v: %d samples (%v), want %d", c.threshold, len(ss), err, min(c.picked, 1))
			}
			// A turn no answer passed is dropped with the selector
			// that decided named: the hint gain, not the judge.
			if got, _ := f.turn(t, tr.ID); c.none > 0 && (got.State != store.Dropped || got.DropReason != "none of the teacher's answers does what the feedback asks (by the hint gain): no answer of 4 scored above the threshold") {
				t.Errorf("threshold %v: turn state %s (%q), want dropped by the hint gain", c.threshold, got.State, got.DropReason)
			}
		}
		if k := f.runner.Counters(); k.TeacherPicked != c.picked || k.TeacherNoPick != c.none {
			t.Errorf("threshold %v: picked %d, none %d; want %d, %d", c.threshold, k.TeacherPicked, k.TeacherNoPick, c.picked, c.none)
		}
		if got := metric(t, f.runner, "picked"); got != float64(c.picked) {
			t.Errorf("threshold %v: metric picked = %v, want %d", c.threshold, got, c.picked)
		}
	}
}

// TestTeacherSamplesRefuseFeedbackWords: answers made of the feedback's
// words only ("Hope this helps!" for a feedback that quotes it) are
// refused unscored by either selector, however low the threshold: the turn
// is dropped saying why, and the refusals are counted on /metrics.
func TestTeacherSamplesRefuseFeedbackWords(t *testing.T) {
	ctx := context.Background()
	for _, how := range []string{SelectJudge, SelectGain} {
		f, calls := samplesFixtureBy(t, t.TempDir(), 2, math.Inf(-1), 0, how)
		if err := f.runner.Scheduler().Recover(ctx); err != nil {
			t.Fatal(err)
		}
		tr := f.serve(t, "echo", []chat.Message{{Role: chat.RoleUser, Content: "How do I boil an egg?"}})
		if err := f.store.AddFeedback(ctx, tr.ID, store.Feedback{Rating: -1, Text: `[[say:Hope this helps!]] Be brief. Your last words must be "Hope this helps!"`,
			CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.runner.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		if calls.Load() != 0 {
			t.Errorf("%s: the judge scored %d refused answers", how, calls.Load())
		}
		by := map[string]string{SelectJudge: "the judge", SelectGain: "the hint gain"}[how]
		want := "none of the teacher's answers does what the feedback asks (by " + by + "): of 4 answers 4 only the feedback's words"
		if got, _ := f.turn(t, tr.ID); got.State != store.Dropped || got.DropReason != want {
			t.Errorf("%s: turn state %s (%q), want dropped with %q", how, got.State, got.DropReason, want)
		}
		if ss, err := f.store.ListSamples(ctx, store.TurnFilter{SessionID: tr.SessionID}); err != nil || len(ss) != 0 {
			t.Errorf("%s: %d samples (%v), want none", how, len(ss), err)
		}
		if k := f.runner.Counters(); k.TeacherNoPick != 1 || k.RefusedEchoes != 4 || k.RefusedCopies != 0 {
			t.Errorf("%s: counters none %d, refused echoes %d, copies %d; want 1, 4, 0", how, k.TeacherNoPick, k.RefusedEchoes, k.RefusedCopies)
		}
		if got := metricLabel(t, f.runner, "reason", string(judge.RefuseEchoes)); got != 4 {
			t.Errorf("%s: metric refused (%s) = %v, want 4", how, judge.RefuseEchoes, got)
		}
		if got := metricLabel(t, f.runner, "reason", string(judge.RefuseCopies)); got != 0 {
			t.Errorf("%s: metric refused (%s) = %v, want 0", how, judge.RefuseCopies, got)
		}
	}
}

// TestTeacherSamplesLoops: with --teacher-loops refuse a teacher answer
// that repeats itself (rl.Loops) is never a sample's target, by either
// selector: the turn is dropped with the reason, unscored, and counted.
// With cut, the answer trains up to where its loop begins. With train, it
// trains whole.
func TestTeacherSamplesLoops(t *testing.T) {
	ctx := context.Background()
	// The question's cue makes the scripted teacher (and the served
	// answer) say a loop like the french runs' teacher wrote, within the
	// fixture's 40-token (byte) limit.
	const loop = "un ciel bleu, un ciel bleu, un ciel bleu"
	for _, c := range []struct{ loops, sel string }{
		{LoopsRefuse, SelectJudge}, {LoopsRefuse, SelectGain}, {LoopsCut, SelectJudge}, {LoopsCut, SelectGain}, {LoopsTrain, SelectGain},
	} {
		how := c.loops + "/" + c.sel
		f, calls := samplesFixtureBy(t, t.TempDir(), 2, math.Inf(-1), 0, c.sel)
		f.runner.cfg.TeacherLoops = c.loops
		if err := f.runner.Scheduler().Recover(ctx); err != nil {
			t.Fatal(err)
		}
		tr := f.serve(t, "echo", []chat.Message{{Role: chat.RoleUser, Content: "[[say:" + loop + "]] Décris un jardin en été."}})
		if err := f.store.AddFeedback(ctx, tr.ID, store.Feedback{Rating: -1, Text: "Réponds en français, en deux phrases.",
			CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.runner.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		k := f.runner.Counters()
		if c.loops != LoopsRefuse {
			want := loop
			if c.loops == LoopsCut {
				want = "un ciel bleu, " // the second "un" begins the loop
			}
			ss, err := f.store.ListSamples(ctx, store.TurnFilter{SessionID: tr.SessionID})
			if err != nil || len(ss) != 1 || ss[0].TeacherResponseIDs == nil {
				t.Fatalf("%s: %d samples (%v), want one on the teacher's answer", how, len(ss), err)
			}
			if got := f.engine.Format().Decode(ss[0].TeacherResponseIDs); got != want || len(ss[0].TeacherLogprobs) != len(ss[0].TeacherResponseIDs) {
				t.Errorf("%s: trained on %q (%d logprobs for %d tokens), want %q", how, got, len(ss[0].TeacherLogprobs), len(ss[0].TeacherResponseIDs), want)
			}
			if k.RefusedLoops != 0 {
				t.Errorf("%s: %d refused as loops", how, k.RefusedLoops)
			}
			cut := 0
			if c.loops == LoopsCut {
				cut = 4 // every answer written
			}
			if k.TeacherLoopsCut != cut || counterValue(t, f.runner, "clawrl_loop_teacher_loops_cut_total") != float64(cut) {
				t.Errorf("%s: %d answers cut (metric %v), want %d", how, k.TeacherLoopsCut, counterValue(t, f.runner, "clawrl_loop_teacher_loops_cut_total"), cut)
			}
			continue
		}
		if calls.Load() != 0 {
			t.Errorf("%s: the judge scored %d refused answers", how, calls.Load())
		}
		by := map[string]string{SelectJudge: "the judge", SelectGain: "the hint gain"}[c.sel]
		want := "none of the teacher's answers does what the feedback asks (by " + by + "): of 4 answers 4 loops"
		if got, _ := f.turn(t, tr.ID); got.State != store.Dropped || got.DropReason != want {
			t.Errorf("%s: turn state %s (%q), want dropped with %q", how, got.State, got.DropReason, want)
		}
		if ss, err := f.store.ListSamples(ctx, store.TurnFilter{SessionID: tr.SessionID}); err != nil || len(ss) != 0 {
			t.Errorf("%s: %d samples (%v), want none", how, len(ss), err)
		}
		if k.TeacherNoPick != 1 || k.RefusedLoops != 4 || k.RefusedEchoes != 0 || k.TeacherLoopsCut != 0 {
			t.Errorf("%s: counters none %d, refused loops %d, echoes %d, cut %d; want 1, 4, 0, 0", how, k.TeacherNoPick, k.RefusedLoops, k.RefusedEchoes, k.TeacherLoopsCut)
		}
		if got := metricLabel(t, f.runner, "reason", string(refusedLoops)); got != 4 {
			t.Errorf("%s: metric refused (%s) = %v, want 4", how, refusedLoops, got)
		}
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// Environment of the selection crash child.
const (
	selectCrashDirEnv   = "CLAWRL_LOOP_SELECT_CRASH_DIR"
	selectCrashPointEnv = "CLAWRL_LOOP_SELECT_CRASH_POINT"
	pointSelecting      = "selecting"
	selectCrashTurns    = 4
)

// TestTeacherSamplesKill9 kills the loop with SIGKILL while it is choosing
// a turn's teacher answer (the sixth judge call: the second turn's second
// answer) and after the second trainer step is recorded, restarts it on
// the same data directory, and checks that every turn ends with exactly
// one sample, trained exactly once in the lineage of versions.
func TestTeacherSamplesKill9(t *testing.T) {
	if dir := os.Getenv(selectCrashDirEnv); dir != "" {
		selectCrashChild(t, dir, os.Getenv(selectCrashPointEnv))
		return
	}
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	for _, point := range []string{pointSelecting, rl.PointCommitted} {
		t.Run(point, func(t *testing.T) {
			dir := t.TempDir()
			seed, _ := samplesFixture(t, dir, 2, math.Inf(-1), 0)
			turns := critiqueTurns(t, seed, selectCrashTurns)
			seed.store.Close()

			cmd := exec.Command(os.Args[0], "-test.run=^TestTeacherSamplesKill9$", "-test.count=1")
			cmd.Env = append(os.Environ(), selectCrashDirEnv+"="+dir, selectCrashPointEnv+"="+point)
			var out strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("child was not killed at %s: %v\n%s", point, err, out.String())
			}

			f, _ := samplesFixture(t, dir, 2, math.Inf(-1), 0)
			ctx := context.Background()
			if point == pointSelecting {
				before, err := f.store.ListSamples(ctx, store.TurnFilter{})
				if err != nil || len(before) != 1 {
					t.Errorf("killed while selecting the second turn's answer with %d samples stored (%v), want 1", len(before), err)
				}
			}
			if err := f.runner.Scheduler().Recover(ctx); err != nil {
				t.Fatal(err)
			}
			for range 5 {
				if _, err := f.runner.RunOnce(ctx); err != nil {
					t.Fatal(err)
				}
			}
			final, err := f.store.LatestVersion(ctx)
			if err != nil || final.Version != 2 {
				t.Fatalf("final version %d (%v), want 2", final.Version, err)
			}
			st, err := rltest.ReadState(final.Dir)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, tr := range turns {
				ids = append(ids, tr.ID)
			}
			if !slices.Equal(sorted(st.Trained), sorted(ids)) || st.Steps != 2 {
				t.Errorf("lineage of v2 trained %v in %d steps: want each of %d turns once in 2 steps", st.Trained, st.Steps, selectCrashTurns)
			}
			for _, tr := range turns {
				ss, err := f.store.ListSamples(ctx, store.TurnFilter{SessionID: tr.SessionID})
				if err != nil || len(ss) != 1 || len(ss[0].TeacherResponseIDs) == 0 {
					t.Errorf("turn %s: %d samples (%v), want one teacher-written", tr.ID, len(ss), err)
				}
			}
			checkVersionsDir(t, filepath.Join(dir, "versions"), 2)
		})
	}
}

// selectCrashChild runs the loop on dir and kills itself at point.
func selectCrashChild(t *testing.T, dir, point string) {
	killAt := int32(0)
	if point == pointSelecting {
		killAt = selectSamples + 2
	}
	f, _ := samplesFixture(t, dir, 2, math.Inf(-1), killAt)
	// One teacher build at a time, so that the kill falls in the second
	// turn's selection after the first turn's sample is stored.
	f.runner.cfg.TeacherConcurrency = 1
	var hits int
	f.runner.Scheduler().AtPoint = func(p string) {
		if p == point {
			if hits++; hits == 2 {
				killSelf()
			}
		}
	}
	ctx := context.Background()
	if err := f.runner.Scheduler().Recover(ctx); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if _, err := f.runner.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Fprintf(os.Stderr, "crash child finished without reaching %s\n", point)
	os.Exit(3)
}

// TestTeacherSampleSettings: the flags' checks, and which selector each
// judge backend gets.
func TestTeacherSampleSettings(t *testing.T) {
	for _, tc := range []struct {
		s   TeacherSampleSettings
		opd string
		ok  bool
	}{
		{TeacherSampleSettings{}, "student", true},
		{TeacherSampleSettings{Samples: 1}, "student", true},
		{TeacherSampleSettings{Samples: 4}, "teacher", true},
		{TeacherSampleSettings{Samples: 4, Select: SelectJudge}, "both", true},
		{TeacherSampleSettings{Samples: 4}, "student", false},
		{TeacherSampleSettings{Samples: -1}, "teacher", false},
		{TeacherSampleSettings{Samples: 4, Temperature: -1}, "teacher", false},
		{TeacherSampleSettings{Samples: 4, Select: "vibes"}, "teacher", false},
		{TeacherSampleSettings{Samples: 4, GainBy: GainByBase}, "teacher", true},
		{TeacherSampleSettings{Samples: 4, GainBy: "student"}, "teacher", false},
	} {
		if err := tc.s.check(tc.opd); (err == nil) != tc.ok {
			t.Errorf("%+v with --opd-response %s: err %v, want ok %v", tc.s, tc.opd, err, tc.ok)
		}
	}
	eng := scripted.New(scripted.Options{})
	local := &judge.EngineBackend{Engine: eng}
	remote := &judge.HTTPBackend{URL: "http://127.0.0.1:1/v1", Model: "m"}
	judged := TeacherSampleSettings{Samples: 4, Select: SelectJudge, Threshold: -2}
	if sel, err := judged.selector(local, time.Second); err != nil || sel == nil || sel.Scorer != judge.NextTokenScorer(local) || sel.Threshold != -2 {
		t.Errorf("local judge: %+v %v", sel, err)
	}
	if sel, err := judged.selector(remote, time.Second); err != nil || sel == nil || sel.Scorer != judge.NextTokenScorer(judge.HTTPScorer{HTTPBackend: remote}) {
		t.Errorf("--judge-url: %+v %v", sel, err)
	}
	for _, s := range []TeacherSampleSettings{{Samples: 4}, {Samples: 1, Select: SelectJudge}} {
		if sel, err := s.selector(local, time.Second); err != nil || sel != nil {
			t.Errorf("%+v: a judge selector %+v (%v)", s, sel, err)
		}
	}
}
