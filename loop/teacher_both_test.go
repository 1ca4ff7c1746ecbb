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

// TestTeacherAlsoWrites: with --opd-response both, a thumbs-down with
// written feedback becomes one sample that trains on two responses: the
// policy's own, re-scored by the teacher and carrying the rating, and the
// one the teacher writes with the feedback as its hint (the engine's greedy
// answer), OPD only. The store keeps them in one row; the trainer receives
// the turn's prompt, its response and the teacher's response beside it.
func TestTeacherAlsoWrites(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f := &fixture{dir: dir, store: openStore(t, dir), engine: scripted.New(scripted.Options{}), trainer: &rltest.Trainer{}}
	t.Cleanup(func() { f.store.Close() })
	j := judge.New(&judge.EngineBackend{Engine: f.engine}, judge.Config{Verdict: judge.VerdictVotes,
		EvalVotes: 1, Retries: judge.NoRetries, MaxTokens: 512, HintTokens: 256}, quiet())
	teacher := &judge.Teacher{Engine: f.engine}
	r, err := New(Options{Store: f.store, Judge: j, Teacher: teacher, Trainer: f.trainer, Publisher: f.engine, Log: quiet(),
		Config: Config{Method: rl.MethodCombine, SessionTimeout: -1, TeacherAlsoWrites: true, TeacherTokens: 40,
			Train: rl.SchedulerConfig{BatchSize: 1, VersionsDir: filepath.Join(dir, "versions")}}})
	if err != nil {
		t.Fatal(err)
	}
	f.runner = r
	if err := r.Scheduler().Recover(ctx); err != nil {
		t.Fatal(err)
	}
	msgs := []chat.Message{{Role: chat.RoleUser, Content: "write a haiku"}}
	rated := f.serve(t, "rated", msgs)
	const critique = `[[say:Short.]] Be brief.`
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
	s := samples[0]
	rescored, _, err := teacher.Logprobs(ctx, msgs, nil, rated.PromptText, rated.ResponseIDs, critique)
	if err != nil {
		t.Fatal(err)
	}
	prompt, err := teacher.Prompt(msgs, nil, rated.PromptText, critique)
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
	if reflect.DeepEqual(want, rated.ResponseIDs) {
		t.Fatalf("the scripted teacher wrote the policy's own response; the test shows nothing")
	}
	if !reflect.DeepEqual(s.TeacherResponseIDs, want) || !reflect.DeepEqual(s.TeacherLogprobs, append(append([]float32(nil), rescored...), wantLP...)) {
		t.Fatalf("stored teacher response %v, logprobs %v; want %v, %v then %v", s.TeacherResponseIDs, s.TeacherLogprobs, want, rescored, wantLP)
	}
	if !s.UseRL || s.Reward != -1 {
		t.Errorf("the policy's response lost its rating: use %v, reward %v", s.UseRL, s.Reward)
	}
	if _, err := r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if len(f.trainer.Batches) != 1 || len(f.trainer.Batches[0]) != 1 {
		t.Fatalf("trainer batches: %+v", f.trainer.Batches)
	}
	got := f.trainer.Batches[0][0]
	if !reflect.DeepEqual(got.PromptIDs, rated.PromptIDs) || !reflect.DeepEqual(got.ResponseIDs, rated.ResponseIDs) ||
		!reflect.DeepEqual(got.BehaviourLogprobs, rated.BehaviourLogprobs) || got.TeacherWrote ||
		!reflect.DeepEqual(got.TeacherLogprobs, rescored) || !got.UseRL ||
		!reflect.DeepEqual(got.WrittenIDs, want) || !reflect.DeepEqual(got.WrittenLogprobs, wantLP) {
		t.Errorf("trained sample: %+v", got)
	}
}
