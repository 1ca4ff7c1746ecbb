package loop

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/pflag"

	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/scripted"
	"github.com/clawrl/clawrl/judge"
	"github.com/clawrl/clawrl/rl"
	"github.com/clawrl/clawrl/store"
)

// adapterLog is the scripted engine recording the adapter and the prompt
// of each generation and scoring pass.
type adapterLog struct {
	*scripted.Engine
	mu                            sync.Mutex
	generate, score               []string
	generatePrompts, scorePrompts [][]int32
}

func (a *adapterLog) Generate(ctx context.Context, req engine.GenerateRequest, emit func(engine.Token) error) (engine.Generation, error) {
	a.mu.Lock()
	a.generate = append(a.generate, req.Adapter)
	a.generatePrompts = append(a.generatePrompts, req.PromptIDs)
	a.mu.Unlock()
	return a.Engine.Generate(ctx, req, emit)
}

func (a *adapterLog) Score(ctx context.Context, req engine.ScoreRequest) (engine.Scored, error) {
	a.mu.Lock()
	a.score = append(a.score, req.Adapter)
	a.scorePrompts = append(a.scorePrompts, req.PromptIDs)
	a.mu.Unlock()
	return a.Engine.Score(ctx, req)
}

// gainFixture is a loop whose teacher (adapter teacher, its passes
// logged) writes selectSamples answers per turn, picked by the hint gain
// at a threshold of −Inf; set adjusts the config.
func gainFixture(t *testing.T, teacher string, set func(*Config)) (*fixture, *adapterLog) {
	t.Helper()
	f, j := scriptedFixture(t)
	dir := f.dir
	log := &adapterLog{Engine: f.engine}
	cfg := Config{Method: rl.MethodCombine, SessionTimeout: -1, TeacherWrites: true,
		TeacherTokens: 40, TeacherSamples: selectSamples, TeacherTemperature: 0.7, TeacherSelect: SelectGain,
		TeacherSelectThreshold: math.Inf(-1), Train: rl.SchedulerConfig{BatchSize: 100, VersionsDir: filepath.Join(dir, "versions")}}
	set(&cfg)
	r, err := New(Options{Store: f.store, Judge: j, Teacher: &judge.Teacher{Engine: log, Adapter: teacher}, Trainer: f.trainer,
		Publisher: f.engine, Log: quiet(), Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	f.runner = r
	return f, log
}

// TestTeacherGainBy: --teacher-select-gain-by picks the weights that read
// the hint gain (its two scoring passes per answer) whatever the OPD
// teacher is; the answers are still written by the teacher's own weights.
func TestTeacherGainBy(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		teacher, by, want string
	}{
		{engine.AdapterCurrent, GainByTeacher, engine.AdapterCurrent},
		{engine.AdapterBase, GainByTeacher, engine.AdapterBase},
		{engine.AdapterCurrent, GainByBase, engine.AdapterBase},
		{engine.AdapterBase, GainByPolicy, engine.AdapterCurrent},
		{engine.AdapterCurrent, "", map[string]string{GainByTeacher: engine.AdapterCurrent, GainByBase: engine.AdapterBase, GainByPolicy: engine.AdapterCurrent}[DefaultGainBy]},
	} {
		f, log := gainFixture(t, c.teacher, func(c2 *Config) { c2.TeacherGainBy = c.by })
		r := f.runner
		turns := critiqueTurns(t, f, 1)
		if _, err := r.judgeRound(ctx); err != nil {
			t.Fatal(err)
		}
		ss, err := f.store.ListSamples(ctx, store.TurnFilter{SessionID: turns[0].SessionID})
		if err != nil || len(ss) != 1 || len(ss[0].TeacherResponseIDs) == 0 {
			t.Fatalf("teacher %q, gain by %q: samples %+v (%v), want one teacher-written", c.teacher, c.by, ss, err)
		}
		if want := slices.Repeat([]string{c.teacher}, selectSamples); !slices.Equal(log.generate, want) {
			t.Errorf("teacher %q, gain by %q: answers written on %q, want %q", c.teacher, c.by, log.generate, want)
		}
		if want := slices.Repeat([]string{c.want}, 2*selectSamples); !slices.Equal(log.score, want) {
			t.Errorf("teacher %q, gain by %q: gain read on %q, want %q", c.teacher, c.by, log.score, want)
		}
	}
}

// TestTeacherSelectRelevance: with --teacher-select-relevance each answer
// gets a third scoring pass (the feedback alone, the question's text left
// out), and one no likelier after the question than without it is kept
// from the pick however much it gains: the scripted engine's logprobs do
// not depend on the prompt, so every answer's relevance is 0, the turn is
// dropped by the hint gain, and the answers are counted on /metrics.
// Without the flag the same answers pass a threshold of −Inf.
func TestTeacherSelectRelevance(t *testing.T) {
	ctx := context.Background()
	for _, relevance := range []bool{false, true} {
		f, log := gainFixture(t, "", func(c *Config) { c.TeacherSelectRelevance = relevance })
		r := f.runner
		turns := critiqueTurns(t, f, 1)
		if _, err := r.judgeRound(ctx); err != nil {
			t.Fatal(err)
		}
		passes, samples, irrelevant := 2*selectSamples, 1, 0
		if relevance {
			passes, samples, irrelevant = 3*selectSamples, 0, selectSamples
		}
		if got := len(log.score); got != passes {
			t.Errorf("relevance %v: %d scoring passes for the selection, want %d", relevance, got, passes)
		}
		ss, err := f.store.ListSamples(ctx, store.TurnFilter{SessionID: turns[0].SessionID})
		if err != nil || len(ss) != samples {
			t.Errorf("relevance %v: %d samples (%v), want %d", relevance, len(ss), err, samples)
		}
		if got, _ := f.turn(t, turns[0].ID); relevance && (got.State != store.Dropped || !strings.Contains(got.DropReason, "by the hint gain")) {
			t.Errorf("turn state %s (%q), want dropped by the hint gain", got.State, got.DropReason)
		}
		if k := r.Counters(); k.TeacherIrrelevant != irrelevant {
			t.Errorf("relevance %v: %d answers counted irrelevant, want %d", relevance, k.TeacherIrrelevant, irrelevant)
		}
		want := float64(irrelevant)
		if !relevance {
			want = -1 // not exported
		}
		if got := counterValue(t, r, "clawrl_loop_teacher_answers_irrelevant_total"); got != want {
			t.Errorf("relevance %v: metric %v, want %v", relevance, got, want)
		}
	}
}

// TestTeacherSelectRelevanceFlag: the flag is off by default, parsed on,
// and refused beside the judge selector, which reads answers otherwise.
func TestTeacherSelectRelevanceFlag(t *testing.T) {
	var s TeacherSampleSettings
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	s.addFlags(fs)
	if s.Relevance != DefaultSelectRelevance {
		t.Errorf("default %v, want %v", s.Relevance, DefaultSelectRelevance)
	}
	if err := fs.Parse([]string{"--teacher-select-relevance", "--teacher-samples=4"}); err != nil || !s.Relevance {
		t.Fatalf("parsed %v (%v)", s.Relevance, err)
	}
	if err := s.check("teacher"); err != nil {
		t.Errorf("with gain: %v", err)
	}
	s.Select = SelectJudge
	if err := s.check("teacher"); err == nil {
		t.Error("with --teacher-select judge: no error")
	}
}

// TestTeacherSelectOpeningFlag: --teacher-select-opening is off (0) by
// default, reaches the runner's configuration, and is refused negative or
// without --teacher-select-relevance, whose reading it extends.
func TestTeacherSelectOpeningFlag(t *testing.T) {
	var s TeacherSampleSettings
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	s.addFlags(fs)
	if s.Opening != 0 {
		t.Errorf("default %v, want 0 (off)", s.Opening)
	}
	if err := fs.Parse([]string{"--teacher-select-relevance", "--teacher-samples=4", "--teacher-select-opening=0.5"}); err != nil || s.Opening != 0.5 {
		t.Fatalf("parsed %v (%v)", s.Opening, err)
	}
	if err := s.check("teacher"); err != nil {
		t.Errorf("with relevance: %v", err)
	}
	for _, bad := range []TeacherSampleSettings{{Samples: 4, Opening: 0.5}, {Samples: 4, Relevance: true, Opening: -1}} {
		if err := bad.check("teacher"); err == nil || !strings.Contains(err.Error(), "--teacher-select-opening") {
			t.Errorf("%+v: %v, want an error naming --teacher-select-opening", bad, err)
		}
	}
}

// counterValue is r's teacher counter called name (−1 when there is none).
func counterValue(t *testing.T, r *Runner, name string) float64 {
	t.Helper()
	for _, mf := range teacherMetrics(t, r) {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	return -1
}
