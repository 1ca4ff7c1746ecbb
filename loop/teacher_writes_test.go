package loop

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
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

// cuedHaiku is a prompt whose own cue the student says and the teacher
// (shown the prompt and the feedback) says first: the teacher's answer has
// words the feedback does not hold, as a real teacher's has (judge.Refuse
// refuses an answer made of the feedback's words only).
const cuedHaiku = "write a haiku [[say:Autumn leaves drift down.]]"

func critiquedTurn(t *testing.T, cfg Config) critiqued {
	t.Helper()
	return critiquedTurnAt(t, cfg, judge.HintInUser, cuedHaiku, `[[say: Short.]] Be brief.`)
}

// critiquedTurnAt is critiquedTurn with the teacher's hint placement, the
// prompt and the written feedback given.
func critiquedTurnAt(t *testing.T, cfg Config, at judge.HintPlacement, prompt, critique string) critiqued {
	t.Helper()
	c := critiqueRound(t, cfg, at, prompt, critique)
	samples, err := c.f.store.ListSamples(c.ctx, store.TurnFilter{SessionID: c.rated.SessionID})
	if err != nil || len(samples) != 1 {
		t.Fatalf("samples: %v %v", samples, err)
	}
	c.sample = samples[0]
	return c
}

// critiqueRound serves prompt, rates it −1 with critique and runs one judge
// round under cfg's teacher settings; sample is left empty.
func critiqueRound(t *testing.T, cfg Config, at judge.HintPlacement, prompt, critique string) critiqued {
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
	msgs := []chat.Message{{Role: chat.RoleUser, Content: prompt}}
	rated := f.serve(t, "rated", msgs)
	if err := f.store.AddFeedback(ctx, rated.ID, store.Feedback{Rating: -1, Text: critique, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.judgeRound(ctx); err != nil {
		t.Fatal(err)
	}
	tp, err := teacher.WithAnswer(rated.Response, rated.ResponseIDs).Prompt(msgs, nil, rated.PromptText, critique)
	if err != nil {
		t.Fatal(err)
	}
	g, err := f.engine.Generate(ctx, engine.GenerateRequest{PromptIDs: f.engine.Format().Encode(tp), MaxTokens: 40}, func(engine.Token) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	var want []int32
	var wantLP []float32
	for _, tok := range g.Tokens {
		want, wantLP = append(want, tok.ID), append(wantLP, tok.Logprob)
	}
	return critiqued{ctx: ctx, f: f, r: r, teacher: teacher, msgs: msgs, rated: rated, critique: critique, want: want, wantLP: wantLP}
}

// TestLoneTeacherAnswerRefused: with one teacher answer per turn (the
// default --teacher-samples 1) nothing is selected, but the rule of
// best-of-N still holds (judge.Refuse): a lone answer made of the
// feedback's words ("Hope this helps!" for a critique that quotes it; a
// revision that says "ok: " and the critique) or one that copies the
// feedback is never trained. The turn is dropped saying why (the
// rating's RL term would push down the rated answer, which teacher-written
// OPD does not do either); under --opd-response both the policy's own
// response still trains on its rating, without the teacher's answer. The
// refusals are counted on /metrics.
func TestLoneTeacherAnswerRefused(t *testing.T) {
	const echo = `[[say:Hope this helps!]] End every answer with "Hope this helps!"`
	const copy = `[[say:End each answer with a sign-off.]] End each answer with a sign-off.`
	for _, tc := range []struct {
		name     string
		cfg      Config
		at       judge.HintPlacement
		critique string
		why      judge.Refusal
		answer   string
	}{
		{"echo", Config{TeacherWrites: true}, judge.HintInUser, echo, judge.RefuseEchoes, "Hope this helps!"},
		{"copy", Config{TeacherWrites: true}, judge.HintInUser, copy, judge.RefuseCopies, "End each answer with a sign-off."},
		{"revise echo", Config{TeacherWrites: true}, judge.HintAsRevision, "Add: Hope this helps!", judge.RefuseEchoes, "ok: Add: Hope this helps!"},
		{"both", Config{TeacherAlsoWrites: true}, judge.HintInUser, echo, judge.RefuseEchoes, "Hope this helps!"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := critiqueRound(t, tc.cfg, tc.at, "write a haiku", tc.critique)
			ctx, f, r := c.ctx, c.f, c.r
			if got := f.engine.Format().Decode(c.want); got != tc.answer+"<|im_end|>" {
				t.Fatalf("the scripted teacher writes %q, want %q", got, tc.answer)
			}
			samples, err := f.store.ListSamples(ctx, store.TurnFilter{SessionID: c.rated.SessionID})
			if err != nil {
				t.Fatal(err)
			}
			reason := "none of the teacher's answers does what the feedback asks (one answer): of 1 answer 1 " + string(tc.why)
			if tc.cfg.TeacherAlsoWrites {
				if len(samples) != 1 {
					t.Fatalf("%d samples, want the policy's response's", len(samples))
				}
				s := samples[0]
				if s.TeacherResponseIDs != nil || !s.UseRL || s.Reward != -1 || !strings.Contains(s.Why, "the teacher's own answer failed: "+reason) {
					t.Errorf("sample: teacher response %v, use RL %v, reward %v, why %q; want the rated response alone, saying why",
						s.TeacherResponseIDs, s.UseRL, s.Reward, s.Why)
				}
			} else {
				if len(samples) != 0 {
					t.Fatalf("%d samples (%+v), want none", len(samples), samples)
				}
				if got, _ := f.turn(t, c.rated.ID); got.State != store.Dropped || got.DropReason != reason {
					t.Errorf("turn state %s (%q), want dropped with %q", got.State, got.DropReason, reason)
				}
			}
			if _, err := r.RunOnce(ctx); err != nil {
				t.Fatal(err)
			}
			for _, b := range f.trainer.Batches {
				for _, s := range b {
					if s.TeacherWrote || s.WrittenIDs != nil {
						t.Errorf("trained the refused teacher answer: %+v", s)
					}
				}
			}
			if tc.cfg.TeacherAlsoWrites && len(f.trainer.Batches) != 1 {
				t.Errorf("trainer batches %d, want the rated response's", len(f.trainer.Batches))
			}
			k := r.Counters()
			wantEchoes, wantCopies := 0, 0
			if tc.why == judge.RefuseEchoes {
				wantEchoes = 1
			} else {
				wantCopies = 1
			}
			if k.RefusedEchoes != wantEchoes || k.RefusedCopies != wantCopies || k.TeacherNoPick != 0 {
				t.Errorf("counters: refused echoes %d, copies %d, no pick %d; want %d, %d, 0", k.RefusedEchoes, k.RefusedCopies, k.TeacherNoPick, wantEchoes, wantCopies)
			}
			if got := metricLabel(t, r, "reason", string(judge.RefuseEchoes)); got != float64(wantEchoes) {
				t.Errorf("metric refused (%s) = %v, want %d", judge.RefuseEchoes, got, wantEchoes)
			}
			if got := metricLabel(t, r, "reason", string(judge.RefuseCopies)); got != float64(wantCopies) {
				t.Errorf("metric refused (%s) = %v, want %d", judge.RefuseCopies, got, wantCopies)
			}
			if got := metricLabel(t, r, "result", "none"); got != -1 {
				t.Errorf("metric selections (none) = %v with one answer per turn, want no such series", got)
			}
		})
	}
}
