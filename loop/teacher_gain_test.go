package loop

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/scripted"
	"github.com/clawrl/clawrl/judge"
	"github.com/clawrl/clawrl/rl"
	"github.com/clawrl/clawrl/rl/rltest"
	"github.com/clawrl/clawrl/store"
)

// adapterLog is the scripted engine recording the adapter of each
// generation and scoring pass.
type adapterLog struct {
	*scripted.Engine
	mu              sync.Mutex
	generate, score []string
}

func (a *adapterLog) Generate(ctx context.Context, req engine.GenerateRequest, emit func(engine.Token) error) (engine.Generation, error) {
	a.mu.Lock()
	a.generate = append(a.generate, req.Adapter)
	a.mu.Unlock()
	return a.Engine.Generate(ctx, req, emit)
}

func (a *adapterLog) Score(ctx context.Context, req engine.ScoreRequest) (engine.Scored, error) {
	a.mu.Lock()
	a.score = append(a.score, req.Adapter)
	a.mu.Unlock()
	return a.Engine.Score(ctx, req)
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
		dir := t.TempDir()
		f := &fixture{dir: dir, store: openStore(t, dir), engine: scripted.New(scripted.Options{}), trainer: &rltest.Trainer{}}
		t.Cleanup(func() { f.store.Close() })
		j := judge.New(&judge.EngineBackend{Engine: f.engine}, judge.Config{Verdict: judge.VerdictVotes,
			EvalVotes: 1, Retries: judge.NoRetries, MaxTokens: 512, HintTokens: 256}, quiet())
		log := &adapterLog{Engine: f.engine}
		r, err := New(Options{Store: f.store, Judge: j, Teacher: &judge.Teacher{Engine: log, Adapter: c.teacher}, Trainer: f.trainer,
			Publisher: f.engine, Log: quiet(), Config: Config{Method: rl.MethodCombine, SessionTimeout: -1, TeacherWrites: true,
				TeacherTokens: 40, TeacherSamples: selectSamples, TeacherTemperature: 0.7, TeacherSelect: SelectGain,
				TeacherSelectThreshold: math.Inf(-1), TeacherGainBy: c.by,
				Train: rl.SchedulerConfig{BatchSize: 100, VersionsDir: filepath.Join(dir, "versions")}}})
		if err != nil {
			t.Fatal(err)
		}
		f.runner = r
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
