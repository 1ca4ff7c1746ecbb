package loop

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/scripted"
	"github.com/clawrl/clawrl/judge"
	"github.com/clawrl/clawrl/rl"
	"github.com/clawrl/clawrl/rl/rltest"
	"github.com/clawrl/clawrl/store"
)

// TestTeacherWritesResponse: with --opd-response teacher, a thumbs-down with
// written feedback becomes a sample on the response the teacher writes with
// that feedback as its hint (exactly what the engine generates greedily for
// the teacher's prompt, stop token included), OPD only, and the trainer
// receives the turn's prompt with the teacher's response and no behaviour
// logprobs.
func TestTeacherWritesResponse(t *testing.T) {
	c := critiquedTurn(t, Config{TeacherWrites: true})
	ctx, f, r, rated, s, want, wantLP := c.ctx, c.f, c.r, c.rated, c.sample, c.want, c.wantLP
	if !reflect.DeepEqual(s.TeacherResponseIDs, want) || !reflect.DeepEqual(s.TeacherLogprobs, wantLP) {
		t.Fatalf("teacher response %v (logprobs %v), want %v (%v)", s.TeacherResponseIDs, s.TeacherLogprobs, want, wantLP)
	}
	if reflect.DeepEqual(want, rated.ResponseIDs) {
		t.Fatalf("the scripted teacher wrote the policy's own response; the test shows nothing")
	}
	if s.UseRL || s.Reward != 0 {
		t.Errorf("teacher-written sample carries the RL term (use %v, reward %v): the rating was of another response", s.UseRL, s.Reward)
	}
	if _, err := r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if len(f.trainer.Batches) != 1 || len(f.trainer.Batches[0]) != 1 {
		t.Fatalf("trainer batches: %+v", f.trainer.Batches)
	}
	got := f.trainer.Batches[0][0]
	if !reflect.DeepEqual(got.PromptIDs, rated.PromptIDs) || !reflect.DeepEqual(got.ResponseIDs, want) || got.BehaviourLogprobs != nil ||
		!got.TeacherWrote || len(got.TeacherLogprobs) != len(want) {
		t.Errorf("trained sample: prompt %d ids, response %v, behaviour %v, teacher wrote %v", len(got.PromptIDs), got.ResponseIDs, got.BehaviourLogprobs, got.TeacherWrote)
	}
}

// critiqued is one rated turn with written feedback, judged into its
// sample under cfg's teacher settings, and what the teacher writes for it.
type critiqued struct {
	ctx      context.Context
	f        *fixture
	r        *Runner
	teacher  *judge.Teacher
	msgs     []chat.Message
	rated    store.Turn
	critique string
	sample   store.Sample
	// want, wantLP: the engine's greedy answer to the teacher's prompt (the
	// hint appended), at most TeacherTokens tokens, stop token included.
	want   []int32
	wantLP []float32
}

func critiquedTurn(t *testing.T, cfg Config) critiqued {
	t.Helper()
	return critiquedTurnAt(t, cfg, judge.HintInUser, `[[say:Short.]] Be brief.`)
}

// critiquedTurnAt is critiquedTurn with the teacher's hint placement and
// the written feedback given.
func critiquedTurnAt(t *testing.T, cfg Config, at judge.HintPlacement, critique string) critiqued {
	t.Helper()
	cfg.Method, cfg.SessionTimeout, cfg.TeacherTokens = rl.MethodCombine, -1, 40
	dir := t.TempDir()
	cfg.Train = rl.SchedulerConfig{BatchSize: 1, VersionsDir: filepath.Join(dir, "versions")}
	ctx := context.Background()
	f := &fixture{dir: dir, store: openStore(t, dir), engine: scripted.New(scripted.Options{}), trainer: &rltest.Trainer{}}
	t.Cleanup(func() { f.store.Close() })
	j := judge.New(&judge.EngineBackend{Engine: f.engine}, judge.Config{Verdict: judge.VerdictVotes,
		EvalVotes: 1, Retries: judge.NoRetries, MaxTokens: 512, HintTokens: 256}, quiet())
	teacher := &judge.Teacher{Engine: f.engine, Placement: at}
	r, err := New(Options{Store: f.store, Judge: j, Teacher: teacher, Trainer: f.trainer, Publisher: f.engine, Log: quiet(),
		Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	f.runner = r
	if err := r.Scheduler().Recover(ctx); err != nil {
		t.Fatal(err)
	}
	msgs := []chat.Message{{Role: chat.RoleUser, Content: "write a haiku"}}
	rated := f.serve(t, "rated", msgs)
	if err := f.store.AddFeedback(ctx, rated.ID, store.Feedback{Rating: -1, Text: critique, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.judgeRound(ctx); err != nil {
		t.Fatal(err)
	}
	samples, err := f.store.ListSamples(ctx, store.TurnFilter{SessionID: rated.SessionID})
	if err != nil || len(samples) != 1 {
		t.Fatalf("samples: %v %v", samples, err)
	}
	prompt, err := teacher.WithAnswer(rated.Response, rated.ResponseIDs).Prompt(msgs, nil, rated.PromptText, critique)
	if err != nil {
		t.Fatal(err)
	}
	g, err := f.engine.Generate(ctx, engine.GenerateRequest{PromptIDs: f.engine.Format().Encode(prompt), MaxTokens: 40}, func(engine.Token) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	var want []int32
	var wantLP []float32
	for _, tok := range g.Tokens {
		want, wantLP = append(want, tok.ID), append(wantLP, tok.Logprob)
	}
	return critiqued{ctx: ctx, f: f, r: r, teacher: teacher, msgs: msgs, rated: rated, critique: critique, sample: samples[0], want: want, wantLP: wantLP}
}
