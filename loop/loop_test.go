package loop

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
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
	"github.com/clawrl/clawrl/store/sqlite"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func openStore(t testing.TB, dir string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.OpenDir(context.Background(), dir, sqlite.Options{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// fixture is a store, a scripted engine and a runner over them.
type fixture struct {
	dir     string
	store   *sqlite.Store
	engine  *scripted.Engine
	trainer *rltest.Trainer
	runner  *Runner
}

func newFixture(t *testing.T, dir string, method rl.Method, batch int) *fixture {
	t.Helper()
	return newFixtureWith(t, dir, method, batch, nil)
}

// newFixtureWith uses tr as the trainer (nil: the rltest double).
func newFixtureWith(t *testing.T, dir string, method rl.Method, batch int, tr rl.Trainer) *fixture {
	t.Helper()
	f := &fixture{dir: dir, store: openStore(t, dir), engine: scripted.New(scripted.Options{}), trainer: &rltest.Trainer{}}
	if tr == nil {
		tr = f.trainer
	}
	t.Cleanup(func() { f.store.Close() })
	f.runner = f.newRunner(t, Config{Method: method, SessionTimeout: -1, Train: rl.SchedulerConfig{BatchSize: batch, VersionsDir: filepath.Join(dir, "versions")}}, tr)
	return f
}

// newRunner is a runner over f's store and scripted engine (judge votes
// and teacher on that engine) with cfg and trainer tr.
func (f *fixture) newRunner(t *testing.T, cfg Config, tr rl.Trainer) *Runner {
	t.Helper()
	j := judge.New(&judge.EngineBackend{Engine: f.engine}, judge.Config{Verdict: judge.VerdictVotes,
		EvalVotes: cfg.Method.DefaultVotes(), Retries: judge.NoRetries, MaxTokens: 512, HintTokens: 256}, quiet())
	r, err := New(Options{Store: f.store, Judge: j, Teacher: &judge.Teacher{Engine: f.engine}, Trainer: tr,
		Publisher: f.engine, Log: quiet(), Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// serve records a turn the way the gateway does: the scripted engine
// generates the answer to msgs, and the turn is stored with its exact ids and
// behaviour logprobs.
// serve records a turn generated under 256 tokens without its limit, as
// the gateway recorded turns before it kept store.Turn.MaxTokens.
func (f *fixture) serve(t *testing.T, sessionKey string, msgs []chat.Message) store.Turn {
	t.Helper()
	return f.serveUnder(t, sessionKey, msgs, 256, 0)
}

// serveUnder records a turn generated under a limit of maxTokens, with
// recorded as its store.Turn.MaxTokens (0: not recorded).
func (f *fixture) serveUnder(t *testing.T, sessionKey string, msgs []chat.Message, maxTokens, recorded int) store.Turn {
	t.Helper()
	ctx := context.Background()
	sess, err := f.store.SessionByKey(ctx, sessionKey)
	if errors.Is(err, store.ErrNotFound) {
		sess = store.Session{Key: sessionKey, KeySource: "header", CreatedAt: time.Now(), LastSeen: time.Now()}
		err = f.store.CreateSession(ctx, &sess)
	}
	if err != nil {
		t.Fatal(err)
	}
	format := f.engine.Format()
	prompt, err := format.Render(msgs, nil, engine.RenderOptions{AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	ids := format.Encode(prompt)
	g, err := f.engine.Generate(ctx, engine.GenerateRequest{PromptIDs: ids, MaxTokens: maxTokens}, func(engine.Token) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	tr := store.Turn{SessionID: sess.ID, Type: store.Main, CreatedAt: time.Now(), Messages: msgs, PromptText: prompt, PromptIDs: ids,
		PolicyVersion: g.PolicyVersion, Engine: "scripted", FinishReason: g.FinishReason, MaxTokens: recorded}
	for _, tok := range g.Tokens {
		tr.ResponseIDs = append(tr.ResponseIDs, tok.ID)
		tr.BehaviourLogprobs = append(tr.BehaviourLogprobs, tok.Logprob)
	}
	tr.ResponseText = format.Decode(tr.ResponseIDs)
	tr.Response = chat.Message{Role: chat.RoleAssistant, Content: strings.TrimSuffix(tr.ResponseText, "<|im_end|>")}
	tr.ID = "chatcmpl-" + sessionKey + "-" + time.Now().Format("150405.000000000")
	if err := f.store.InsertTurn(ctx, &tr); err != nil {
		t.Fatal(err)
	}
	return tr
}

func (f *fixture) reply(t *testing.T, tr store.Turn, text string) {
	t.Helper()
	if err := f.store.ObserveTurn(context.Background(), tr.ID, []chat.Message{{Role: chat.RoleUser, Content: text}}, store.NextUser, time.Now()); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) turn(t *testing.T, id string) (store.Turn, store.Judgment) {
	t.Helper()
	tr, err := f.store.Turn(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	j, err := f.store.Judgment(context.Background(), id)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		t.Fatal(err)
	}
	return tr, j
}

const hintReply = `[[say:[HINT] Always give distances in kilometres with two decimals. [/HINT] \boxed{1}]] no, in km please`

// TestLoopScripted drives scripted conversations — an approval, a thumbs
// down, a written correction with a hint, and a session with no signal —
// through judge, samples and two trainer steps to a published version.
func TestLoopScripted(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, t.TempDir(), rl.MethodCombine, 2)
	if err := f.runner.Scheduler().Recover(ctx); err != nil {
		t.Fatal(err)
	}
	ask := func(q string) []chat.Message { return []chat.Message{{Role: chat.RoleUser, Content: q}} }

	approved := f.serve(t, "approve", ask("how far is 3 miles?"))
	f.reply(t, approved, `[[say:looks right \boxed{1}]] great, thanks`)

	rated := f.serve(t, "rated", ask("write a haiku"))
	if err := f.store.AddFeedback(ctx, rated.ID, store.Feedback{Rating: -1, Text: "too long", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}

	hinted := f.serve(t, "hint", ask("how far is 5 miles?"))
	f.reply(t, hinted, hintReply)

	quietA := f.serve(t, "quiet", ask("hello"))
	f.reply(t, quietA, "[[say:I cannot tell.]] hm")
	quietB := f.serve(t, "quiet", append(ask("hello"), chat.Message{Role: chat.RoleAssistant, Content: "hi"}, chat.Message{Role: chat.RoleUser, Content: "hm"}))
	f.reply(t, quietB, `[[say:unclear \boxed{0}]] ok bye`)

	if _, err := f.runner.judgeRound(ctx); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		id       string
		state    store.TurnState
		score    int
		hint     bool
		reasonIn string
	}{
		{"approval", approved.ID, store.Ready, 1, false, "majority"},
		{"thumbs down", rated.ID, store.Ready, -1, false, "explicit feedback decides"},
		{"hint", hinted.ID, store.Ready, 1, true, "majority"},
		{"no signal (held)", quietA.ID, store.Judged, 0, false, "no valid vote"},
		{"no signal (held) 2", quietB.ID, store.Judged, 0, false, "majority"},
	}
	for _, tt := range tests {
		tr, j := f.turn(t, tt.id)
		if tr.State != tt.state || j.Score != tt.score || j.HintAccepted != tt.hint || !strings.Contains(j.Reason, tt.reasonIn) {
			t.Errorf("%s: state %s score %d hint %v reason %q; want %s %d %v %q", tt.name, tr.State, j.Score, j.HintAccepted, j.Reason, tt.state, tt.score, tt.hint, tt.reasonIn)
		}
		for _, v := range j.Votes {
			if v.Source == "judge" && v.Raw == "" {
				t.Errorf("%s: vote without its raw text: %+v", tt.name, v)
			}
		}
	}
	// The hinted turn carries teacher logprobs on its exact response ids.
	samples, err := f.store.ListSamples(ctx, store.TurnFilter{SessionID: hinted.SessionID})
	if err != nil || len(samples) != 1 {
		t.Fatalf("hinted samples: %v %v", samples, err)
	}
	if s := samples[0]; len(s.TeacherLogprobs) != len(hinted.ResponseIDs) || !s.UseRL || s.Reward != 1 {
		t.Errorf("hinted sample: %d teacher logprobs for %d ids, rl %v reward %v", len(s.TeacherLogprobs), len(hinted.ResponseIDs), s.UseRL, s.Reward)
	}

	// Session end: the quiet session keeps its first turn with reward 0.
	if _, err := f.store.ExpireIdle(ctx, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := f.runner.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	trA, _ := f.turn(t, quietA.ID)
	trB, _ := f.turn(t, quietB.ID)
	if trA.State == store.Dropped || trB.State != store.Dropped || !strings.Contains(trB.DropReason, "no signal") {
		t.Errorf("at-least-one: first %s, second %s (%q)", trA.State, trB.State, trB.DropReason)
	}
	// Four samples, batch 2: two versions, published, every sample trained once.
	if v := f.engine.Version(); v != 2 {
		t.Fatalf("engine serves version %d, want 2", v)
	}
	st, err := f.store.LearningStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Trained != 4 || st.Versions != 2 || st.SamplesReady != 0 || st.Latest == nil || st.Latest.Metrics.Samples != 2 {
		t.Errorf("stats %+v", st)
	}
	state, err := rltest.ReadState(st.Latest.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if state.Steps != 2 || len(state.Trained) != 4 {
		t.Errorf("trainer state in %s: %+v", st.Latest.Dir, state)
	}
	if _, err := os.Stat(filepath.Join(st.Latest.Dir, "adapter_config.json")); err != nil {
		t.Errorf("version folder lacks the adapter: %v", err)
	}
	// Export carries the seed's PRM and OPD record fields.
	notes, err := f.store.AnnotateTurns(ctx, []string{hinted.ID, rated.ID, quietB.ID})
	if err != nil {
		t.Fatal(err)
	}
	h := notes[hinted.ID]
	if h["score"] != 1 || h["accepted"] != true || h["hint_len"].(int) <= 10 || h["teacher_logprob_len"] != len(hinted.ResponseIDs) ||
		h["representative_eval"] == "" || len(h["votes"].([]any)) != 1 || h["sample"] == nil || h["judgment"] == nil {
		t.Errorf("export fields of the hinted turn: %+v", h)
	}
	if r := notes[rated.ID]; r["score"] != -1 || r["sample"].(map[string]any)["trained_version"].(int64) == 0 {
		t.Errorf("export fields of the rated turn: %+v", r)
	}
	if q := notes[quietB.ID]; q["score"] != 0 || q["sample"] != nil {
		t.Errorf("export fields of the dropped turn: %+v", q)
	}
	rep, err := f.store.Report(ctx)
	if err != nil || rep["latest_version"] != int64(2) || rep["samples_trained"] != 4 {
		t.Errorf("status report: %+v %v", rep, err)
	}

	// A new request is served by the new version.
	next := f.serve(t, "after", ask("and now?"))
	if next.PolicyVersion != 2 {
		t.Errorf("new turn generated by version %d, want 2", next.PolicyVersion)
	}
}

func TestMethodTable(t *testing.T) {
	tests := []struct {
		method        rl.Method
		score         int
		hint          bool
		keep, rl, opd bool
	}{
		{rl.MethodCombine, 1, true, true, true, true},
		{rl.MethodCombine, 0, true, true, false, true},
		{rl.MethodCombine, -1, false, true, true, false},
		{rl.MethodCombine, 0, false, false, false, false},
		{rl.MethodRL, 1, true, true, true, false},
		{rl.MethodRL, 0, true, false, false, false},
		{rl.MethodOPD, 1, false, false, false, false},
		{rl.MethodOPD, 0, true, true, false, true},
		{rl.MethodOff, 1, true, false, false, false},
	}
	for _, tt := range tests {
		d := rl.Decide(tt.method, tt.score, tt.hint)
		if d.Keep != tt.keep || d.UseRL != tt.rl || d.UseOPD != tt.opd || d.Reason == "" {
			t.Errorf("Decide(%s, %d, %v) = %+v", tt.method, tt.score, tt.hint, d)
		}
	}
}

// commitVersions records versions 1..n of f's trainer weights as served,
// as if trained elsewhere (a Recover then serves v n).
func (f *fixture) commitVersions(t *testing.T, n int64) {
	t.Helper()
	vs := rl.Versions{Dir: filepath.Join(f.dir, "versions")}
	for v := int64(1); v <= n; v++ {
		vdir, err := vs.Write(v, f.trainer.Save)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.store.CommitVersion(context.Background(), store.Version{Version: v, Dir: vdir}, nil, nil, ""); err != nil {
			t.Fatal(err)
		}
	}
}

func TestStaleSamplesDropped(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f := newFixture(t, dir, rl.MethodRL, 2)
	ask := func(q string) []chat.Message { return []chat.Message{{Role: chat.RoleUser, Content: q}} }
	old := f.serve(t, "old", ask("q"))
	f.reply(t, old, `[[say:\boxed{1}]]`)
	if _, err := f.runner.judgeRound(ctx); err != nil {
		t.Fatal(err)
	}
	// The policy moves on five versions (trained elsewhere) while the
	// sample from v0 waits.
	f.commitVersions(t, 5)
	if err := f.runner.Scheduler().Recover(ctx); err != nil {
		t.Fatal(err)
	}
	if f.engine.Version() != 5 {
		t.Fatalf("recover published version %d, want 5", f.engine.Version())
	}
	// One fresh sample is not a batch: the stale one is refused right away.
	a := f.serve(t, "new", ask("a"))
	f.reply(t, a, `[[say:\boxed{1}]]`)
	if trained, err := f.runner.RunOnce(ctx); err != nil || trained {
		t.Fatalf("step with one fresh sample: %v %v", trained, err)
	}
	tr, _ := f.turn(t, old.ID)
	if tr.State != store.Dropped || !strings.HasPrefix(tr.DropReason, "stale: generated by v0, policy at v5") {
		t.Errorf("old sample: %s %q", tr.State, tr.DropReason)
	}
	if got := f.runner.Scheduler().Stats().DroppedStale; got != 1 {
		t.Errorf("stale counter %d, want 1", got)
	}
	b := f.serve(t, "new", ask("b"))
	f.reply(t, b, `[[say:\boxed{-1}]]`)
	if trained, err := f.runner.RunOnce(ctx); err != nil || !trained {
		t.Fatalf("step with two fresh samples: %v %v", trained, err)
	}
	latest, err := f.store.LatestVersion(ctx)
	if err != nil || latest.Version != 6 || latest.Metrics.Samples != 2 || latest.Metrics.MeanReward != 0 || latest.Metrics.StalenessMax != 0 {
		t.Errorf("version 6: %+v %v", latest, err)
	}
	st, err := f.store.LearningStats(ctx)
	if err != nil || st.DroppedBy["stale"] != 1 {
		t.Errorf("stats: %+v %v", st, err)
	}
}

func TestCollector(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, t.TempDir(), rl.MethodRL, 1)
	if err := f.runner.Scheduler().Recover(ctx); err != nil {
		t.Fatal(err)
	}
	tr := f.serve(t, "m", []chat.Message{{Role: chat.RoleUser, Content: "q"}})
	f.reply(t, tr, `[[say:\boxed{-1}]]`)
	if trained, err := f.runner.RunOnce(ctx); err != nil || !trained {
		t.Fatalf("RunOnce: %v %v", trained, err)
	}
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(f.runner.Collector()); err != nil {
		t.Fatal(err)
	}
	if fams, err := reg.Gather(); err != nil || len(fams) == 0 {
		t.Fatalf("gather: %d families, %v", len(fams), err)
	}
	for name, want := range map[string]float64{
		"clawrl_loop_policy_version":    1,
		"clawrl_loop_train_steps_total": 1,
		"clawrl_loop_samples_trained":   1,
	} {
		got, err := gatherValue(reg, name, nil)
		if err != nil || got != want {
			t.Errorf("%s = %v (%v), want %v", name, got, err, want)
		}
	}
	if got, _ := gatherValue(reg, "clawrl_loop_last_step", map[string]string{"metric": "mean_reward"}); got != -1 {
		t.Errorf("last mean reward %v, want -1", got)
	}
}

func gatherValue(reg *prometheus.Registry, name string, labels map[string]string) (float64, error) {
	families, err := reg.Gather()
	if err != nil {
		return 0, err
	}
	for _, fam := range families {
		if fam.GetName() != name {
			continue
		}
	metrics:
		for _, m := range fam.GetMetric() {
			for _, lp := range m.GetLabel() {
				if want, ok := labels[lp.GetName()]; ok && want != lp.GetValue() {
					continue metrics
				}
			}
			if g := m.GetGauge(); g != nil {
				return g.GetValue(), nil
			}
			return m.GetCounter().GetValue(), nil
		}
	}
	return 0, errors.New("no metric " + name)
}

// flakyPublisher fails its first n publishes.
type flakyPublisher struct {
	*scripted.Engine
	fail int
}

func (p *flakyPublisher) Publish(ctx context.Context, v int64, dir string) error {
	if p.fail > 0 {
		p.fail--
		return errors.New("engine busy loading")
	}
	return p.Engine.Publish(ctx, v, dir)
}

// TestAnchorsBuiltWhileIdle: the scheduler builds the rehearsal anchors
// while it waits for its first batch and serving is idle, once, so the
// first step is not kept waiting by them.
func TestAnchorsBuiltWhileIdle(t *testing.T) {
	dir := t.TempDir()
	f := newFixture(t, dir, rl.MethodRL, 2)
	var builds atomic.Int32
	reh := rl.NewRehearsal(rl.RehearsalConfig{PerBatch: 1, Build: func(context.Context) ([]rl.Anchor, error) {
		builds.Add(1)
		return []rl.Anchor{{Name: "q", PromptIDs: []int32{1}, AnswerIDs: []int32{2}}}, nil
	}})
	sch := rl.NewScheduler(f.store, rehearsingTrainer{f.trainer, reh}, f.engine, rl.NewGate(), rl.SchedulerConfig{BatchSize: 2, Poll: time.Millisecond, VersionsDir: filepath.Join(dir, "versions")}, quiet())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sch.Run(ctx) }()
	for deadline := time.Now().Add(time.Minute); reh.Anchors() == nil; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			cancel()
			t.Fatal("no anchors built while the scheduler waited for a batch")
		}
	}
	time.Sleep(20 * time.Millisecond) // more idle polls
	cancel()
	<-done
	if n := builds.Load(); n != 1 {
		t.Fatalf("anchors built %d times while idle, want once", n)
	}
	if f.trainer.State().Steps != 0 {
		t.Fatal("stepped with no batch")
	}
}

// TestTrainerAndPublishFailures: a failed step records nothing and loses no
// sample; a publish that fails at first is retried.
func TestTrainerAndPublishFailures(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f := newFixture(t, dir, rl.MethodRL, 2)
	pub := &flakyPublisher{Engine: f.engine, fail: 2}
	sch := rl.NewScheduler(f.store, f.trainer, pub, nil, rl.SchedulerConfig{BatchSize: 2, VersionsDir: filepath.Join(dir, "versions")}, quiet())
	if err := sch.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		tr := f.serve(t, "fail", []chat.Message{{Role: chat.RoleUser, Content: "q" + string(rune('a'+i))}})
		f.reply(t, tr, `[[say:\boxed{1}]]`)
	}
	if _, err := f.runner.judgeRound(ctx); err != nil {
		t.Fatal(err)
	}
	f.trainer.StepHook = func(context.Context, []rl.Sample) error { return errors.New("out of memory") }
	if ok, err := sch.TryStep(ctx); ok || err == nil {
		t.Fatalf("failing step: %v %v", ok, err)
	}
	if st, _ := f.store.LearningStats(ctx); st.SamplesReady != 2 || st.Versions != 0 {
		t.Fatalf("after a failed step: %+v", st)
	}
	if sch.Stats().FailedSteps != 1 {
		t.Errorf("failed steps %d", sch.Stats().FailedSteps)
	}
	f.trainer.StepHook = nil
	if ok, err := sch.TryStep(ctx); !ok || err != nil {
		t.Fatalf("retried step: %v %v", ok, err)
	}
	if f.engine.Version() != 1 || sch.Stats().PublishErrors != 2 {
		t.Errorf("engine v%d after %d publish errors", f.engine.Version(), sch.Stats().PublishErrors)
	}
}

func TestMethodOffTrainsNothing(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, t.TempDir(), rl.MethodOff, 1)
	if f.runner.Scheduler() != nil {
		t.Fatal("method off built a train loop")
	}
	tr := f.serve(t, "off", []chat.Message{{Role: chat.RoleUser, Content: "q"}})
	f.reply(t, tr, `[[say:\boxed{1}]]`)
	if err := f.runner.Start(ctx); err != nil {
		t.Fatal(err)
	}
	f.runner.Wait()
	got, _ := f.turn(t, tr.ID)
	if got.State != store.Observed {
		t.Errorf("method off moved the turn to %s", got.State)
	}
}

func timeNowPlusHour() time.Time { return time.Now().Add(time.Hour) }

// TestFeedbackAfterJudgment: a thumbs-down that arrives after the judge
// scored the user's reply as +1 rescores the ready sample to −1, and a
// thumbs-up on a turn held with no signal makes it a sample.
func TestFeedbackAfterJudgment(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, t.TempDir(), rl.MethodCombine, 99)
	ask := func(q string) []chat.Message { return []chat.Message{{Role: chat.RoleUser, Content: q}} }
	approved := f.serve(t, "late1", ask("q1"))
	f.reply(t, approved, `[[say:\boxed{1}]] thanks`)
	held := f.serve(t, "late2", ask("q2"))
	f.reply(t, held, `[[say:\boxed{0}]] hm`)
	if _, err := f.runner.judgeRound(ctx); err != nil {
		t.Fatal(err)
	}
	if tr, _ := f.turn(t, held.ID); tr.State != store.Judged {
		t.Fatalf("held turn is %s", tr.State)
	}
	for id, rating := range map[string]int{approved.ID: -1, held.ID: 1} {
		if err := f.store.AddFeedback(ctx, id, store.Feedback{Rating: rating, CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.runner.judgeRound(ctx); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]float64{approved.ID: -1, held.ID: 1} {
		tr, j := f.turn(t, id)
		samples, err := f.store.ListSamples(ctx, store.TurnFilter{SessionID: tr.SessionID})
		if err != nil || len(samples) != 1 {
			t.Fatalf("turn %s: %d samples (%v)", id, len(samples), err)
		}
		if tr.State != store.Ready || j.Score != int(want) || samples[0].Reward != want || !samples[0].UseRL || j.RevisedAt.IsZero() && id == approved.ID {
			t.Errorf("turn %s after late feedback: %s, judgment %+d (%s), sample reward %v", id, tr.State, j.Score, j.Reason, samples[0].Reward)
		}
		if j.Votes[0].Source != "feedback" {
			t.Errorf("turn %s: feedback vote missing: %+v", id, j.Votes)
		}
	}
	if got := f.runner.Counters().Revised; got != 2 {
		t.Errorf("revised %d, want 2", got)
	}
	// Nothing more to revise.
	if out, err := f.store.OutdatedByFeedback(ctx, 0); err != nil || len(out) != 0 {
		t.Errorf("still outdated: %v %v", out, err)
	}
}
