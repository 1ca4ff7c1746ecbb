package loop

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine/scripted"
	"github.com/clawrl/clawrl/judge"
	"github.com/clawrl/clawrl/rl"
	"github.com/clawrl/clawrl/rl/rltest"
	"github.com/clawrl/clawrl/store"
	"github.com/clawrl/clawrl/store/sqlite"
)

// TestRetentionProbes builds probes from a scripted model's answers: the
// prefix is the answer before the accepted word, the answer is the word;
// a fact the model gets wrong is left out.
func TestRetentionProbes(t *testing.T) {
	eng := scripted.New(scripted.Options{})
	facts := []Fact{
		{Question: "[[say:The capital of France is Paris, of course.]] capital?", Accept: []string{"Paris"}},
		{Question: "[[say:Two and two make four.]] 2+2?", Accept: []string{"4", "four"}},
		{Question: "[[say:I do not know.]] capital of Peru?", Accept: []string{"Lima"}},
	}
	probes, err := RetentionProbes(context.Background(), eng, facts)
	if err != nil {
		t.Fatal(err)
	}
	if len(probes) != 2 {
		t.Fatalf("%d probes, want 2 (the unknown fact left out): %+v", len(probes), probes)
	}
	f := eng.Format()
	for i, want := range [][2]string{{"The capital of France is ", "Paris"}, {"Two and two make ", "four"}} {
		if got := f.Decode(probes[i].PrefixIDs); got != want[0] {
			t.Errorf("probe %d prefix %q, want %q", i, got, want[0])
		}
		if got := f.Decode(probes[i].AnswerIDs); got != want[1] {
			t.Errorf("probe %d answer %q, want %q", i, got, want[1])
		}
	}
}

// evalTrainer is the rltest double that also scores retention probes: the
// base model's score is -0.1 per probe, the trained weights' what Current
// says.
type evalTrainer struct {
	*rltest.Trainer
	mu      sync.Mutex
	current float64
}

func (e *evalTrainer) ProbeLogprobs(ctx context.Context, probes []rl.Probe, base bool) ([]float64, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]float64, len(probes))
	for i := range out {
		out[i] = e.current
		if base {
			out[i] = -0.1
		}
	}
	return out, nil
}

func (e *evalTrainer) set(v float64) {
	e.mu.Lock()
	e.current = v
	e.mu.Unlock()
}

// TestEvalGatedPromotion: a version that keeps the retention facts is served;
// one that loses them is recorded as rejected with the reason, not served,
// and the trainer goes back to the served weights; `versions promote` of the
// rejected one serves a copy of it as a new version, also after a restart.
func TestEvalGatedPromotion(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := openStore(t, dir)
	defer st.Close()
	eng := scripted.New(scripted.Options{})
	tr := &evalTrainer{Trainer: &rltest.Trainer{}, current: -0.1}
	newRunner := func() *Runner {
		return newGatedRunner(t, st, eng, tr, dir, rl.RetentionConfig{})
	}
	r := newRunner()
	f := &fixture{dir: dir, store: st, engine: eng}
	rate := func(key string) {
		turn := f.serve(t, key, []chat.Message{{Role: chat.RoleUser, Content: "hello " + key}})
		if err := st.AddFeedback(ctx, turn.ID, store.Feedback{Rating: 1, CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		trained, err := r.RunOnce(ctx)
		if err != nil || !trained {
			t.Fatalf("step after %s: %v %v", key, trained, err)
		}
	}

	rate("a") // keeps the facts: v1 served
	if eng.Version() != 1 || r.Scheduler().Served().Version != 1 {
		t.Fatalf("v1 not served: engine %d", eng.Version())
	}
	tr.set(-3) // forgets them
	rate("b")
	v2, err := st.LatestVersion(ctx)
	if err != nil || v2.Version != 2 || v2.Status != store.VersionRejected || !strings.Contains(v2.StatusReason, "lost 1 of 1") ||
		v2.Metrics.RetentionLost != 1 || v2.Metrics.RetentionBase != -0.1 {
		t.Fatalf("v2 %+v %v, want rejected for the lost fact", v2, err)
	}
	if eng.Version() != 1 {
		t.Errorf("the engine serves v%d after v2 was rejected", eng.Version())
	}
	if served, _ := st.ServedVersion(ctx); served.Version != 1 {
		t.Errorf("store serves v%d", served.Version)
	}
	if got := tr.State().Steps; got != 1 {
		t.Errorf("trainer at step %d after the rejection, want 1 (back on v1)", got)
	}
	// Its sample is spent, never trained again.
	turns, _ := st.ListSamples(ctx, store.TurnFilter{})
	for _, s := range turns {
		if s.TrainedVersion == 0 {
			t.Errorf("sample of %s not marked trained", s.TurnID)
		}
	}

	// A person promotes the rejected version; a restart carries it out.
	if _, err := st.RequestServing(ctx, 2, "promote"); err != nil {
		t.Fatal(err)
	}
	tr.set(-0.1)
	r = newRunner()
	v3, err := st.ServedVersion(ctx)
	if err != nil || v3.Version != 3 || v3.SourceVersion != 2 || !strings.Contains(v3.StatusReason, "promote to v2 by hand") {
		t.Fatalf("served %+v %v, want v3 = copy of v2", v3, err)
	}
	if eng.Version() != 3 || tr.State().Steps != 2 {
		t.Errorf("engine at v%d, trainer at step %d; want v3 and v2's step 2", eng.Version(), tr.State().Steps)
	}
	// A rollback to v1 while running: v4 is v1's weights.
	if _, err := st.RequestServing(ctx, 1, "rollback"); err != nil {
		t.Fatal(err)
	}
	if ok, err := r.Scheduler().ServeRequested(ctx); err != nil || !ok {
		t.Fatalf("rollback: %v %v", ok, err)
	}
	if eng.Version() != 4 || tr.State().Steps != 1 {
		t.Errorf("engine at v%d, trainer at step %d; want v4 and v1's step 1", eng.Version(), tr.State().Steps)
	}
}

// answerTrainer is the rltest double that answers retention questions with
// a set text (its "weights"), and counts log-probability scoring calls.
type answerTrainer struct {
	evalTrainer
	answer string
	format interface{ Encode(string) []int32 }
	scored int
}

func (a *answerTrainer) Answer(ctx context.Context, prompts [][]int32, maxTokens int, stop []int32, done func(int, []int32) bool) ([][]int32, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([][]int32, len(prompts))
	for i := range out {
		out[i] = a.format.Encode(a.answer)
	}
	return out, nil
}

func (a *answerTrainer) ProbeLogprobs(ctx context.Context, probes []rl.Probe, base bool) ([]float64, error) {
	a.mu.Lock()
	a.scored++
	a.mu.Unlock()
	return a.evalTrainer.ProbeLogprobs(ctx, probes, base)
}

func (a *answerTrainer) say(text string) {
	a.mu.Lock()
	a.answer = text
	a.mu.Unlock()
}

// TestBehaviouralPromotion: with a trainer that can answer, the gate reads
// the candidate's answers, not scores: a French answer that names the fact
// is served, gibberish is rejected with the answer in the reason (what
// `clawrl versions` shows), and no log-probability is computed.
func TestBehaviouralPromotion(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	defer st.Close()
	eng := scripted.New(scripted.Options{})
	f := eng.Format()
	tr := &answerTrainer{evalTrainer: evalTrainer{Trainer: &rltest.Trainer{}, current: -0.1}, answer: "It is Paris.", format: f}
	r := newGatedRunner(t, st, eng, tr, dir, rl.RetentionConfig{Decode: f.Decode, Stop: f.StopIDs()})
	fx := &fixture{dir: dir, store: st, engine: eng}
	rate := func(key string) store.Version { return fx.rateAndStep(t, r, key) }
	tr.say("La capitale de la France est Paris.")
	if v := rate("a"); v.Status != store.VersionPromoted || eng.Version() != 1 || v.Metrics.RetentionFacts != 1 {
		t.Fatalf("v1 %+v, engine v%d: want a French answer naming Paris served", v, eng.Version())
	}
	tr.say("Oui oui, la la la, c'est la vie.")
	v := rate("b")
	if v.Status != store.VersionRejected || v.Metrics.RetentionLost != 1 || !strings.Contains(v.StatusReason, "c'est la vie") {
		t.Fatalf("v2 %+v: want rejected, quoting the answer", v)
	}
	if eng.Version() != 1 {
		t.Errorf("the engine serves v%d after v2 was rejected", eng.Version())
	}
	if tr.scored != 0 {
		t.Errorf("%d log-probability scorings; the behavioural gate needs none", tr.scored)
	}
}

// TestOpenTopics: every default open question has topic words, so
// --gate-answers holds each one the base model answers to its topic.
func TestOpenTopics(t *testing.T) {
	for _, q := range DefaultOpen {
		if len(OpenTopics[q]) < 2 {
			t.Errorf("open question %q: topic words %q", q, OpenTopics[q])
		}
	}
	if len(OpenTopics) != len(DefaultOpen) {
		t.Errorf("%d topics for %d open questions", len(OpenTopics), len(DefaultOpen))
	}
}

// TestGateLoops: with open questions the gate rejects a version that
// keeps every fact but loops on an open question, quoting the loop, and an
// open question the base model itself loops on is not asked.
func TestGateLoops(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := openStore(t, dir)
	defer st.Close()
	eng := scripted.New(scripted.Options{})
	f := eng.Format()
	tr := &answerTrainer{evalTrainer: evalTrainer{Trainer: &rltest.Trainer{}, current: -0.1}, format: f}
	teaQ, tieQ, sheetQ := "[[say:Boil water and steep the tea.]] How do I make tea?",
		"[[say:Tie it, tie it, tie it, tie it.]] How do I tie a tie?", "[[say:Fold it in half.]] How do I fold a fitted sheet?"
	topics := map[string][]string{teaQ: {"tea", "thé"}, tieQ: {"tie"}, sheetQ: {"sheet", "drap"}}
	open, err := OpenProbes(ctx, eng, []string{teaQ, tieQ, sheetQ}, topics, 64)
	if err != nil || len(open) != 2 || !strings.Contains(open[0].Name, "make tea") {
		t.Fatalf("open probes %+v %v: want the two the base model answers without a loop", open, err)
	}
	// Topic words only where the base answer names one: the sheet's
	// answer names no sheet, so no answer to it is held to one.
	if !slices.Equal(open[0].Accept, topics[teaQ]) || open[1].Accept != nil {
		t.Fatalf("open probes' topics %q, %q: want the tea's alone", open[0].Accept, open[1].Accept)
	}
	open = open[:1]
	r := newGatedRunner(t, st, eng, tr, dir, rl.RetentionConfig{Decode: f.Decode, Stop: f.StopIDs(), Open: open})
	fx := &fixture{dir: dir, store: st, engine: eng}
	rate := func(key string) store.Version { return fx.rateAndStep(t, r, key) }
	tr.say("It is Paris. Hope this helps!")
	if v := rate("a"); v.Status != store.VersionPromoted || eng.Version() != 1 {
		t.Fatalf("v1 %+v, engine v%d: want an answer that ends served", v, eng.Version())
	}
	tr.say("It is Paris. Hope this helps! Hope this helps! Hope this helps!")
	v := rate("b")
	if v.Status != store.VersionRejected || v.Metrics.RetentionLost != 0 || !strings.Contains(v.StatusReason, "looping: [[say:Boil water") ||
		!strings.Contains(v.StatusReason, "1 of 1 open answers loop") {
		t.Fatalf("v2 %+v: want rejected for the loop, every fact kept", v)
	}
	if eng.Version() != 1 {
		t.Errorf("the engine serves v%d after v2 was rejected", eng.Version())
	}
}

// shrinkTrainer is an answerTrainer whose shrunk step answers afterShrink.
type shrinkTrainer struct {
	answerTrainer
	afterShrink string
	shrinks     []float64
}

func (s *shrinkTrainer) ShrinkStep(frac float64) error {
	s.shrinks = append(s.shrinks, frac)
	s.say(s.afterShrink)
	return nil
}

// TestRetentionLineSearch: with Shrinks set, a step the gate rejects is
// halved and checked again; the halved step that keeps the fact is served,
// and its reason says so.
func TestRetentionLineSearch(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := openStore(t, dir)
	defer st.Close()
	eng := scripted.New(scripted.Options{})
	f := eng.Format()
	tr := &shrinkTrainer{answerTrainer: answerTrainer{evalTrainer: evalTrainer{Trainer: &rltest.Trainer{}, current: -0.1},
		answer: "Oui oui, la la la.", format: f}, afterShrink: "C'est Paris."}
	j := judge.New(&judge.EngineBackend{Engine: eng}, judge.Config{Verdict: judge.VerdictVotes, EvalVotes: 1, Retries: judge.NoRetries}, quiet())
	r, err := New(Options{Store: st, Judge: j, Teacher: &judge.Teacher{Engine: eng}, Trainer: tr, Publisher: eng, Log: quiet(),
		Config: Config{Method: rl.MethodCombine, SessionTimeout: -1, Train: rl.SchedulerConfig{BatchSize: 1,
			VersionsDir: filepath.Join(dir, "versions"),
			Retention: &rl.RetentionConfig{Decode: f.Decode, Stop: f.StopIDs(), Shrinks: 2, Build: func(ctx context.Context) ([]rl.Probe, error) {
				return RetentionProbes(ctx, eng, []Fact{{Question: "[[say:It is Paris.]] capital?", Accept: []string{"Paris"}}})
			}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Scheduler().Recover(ctx); err != nil {
		t.Fatal(err)
	}
	v := (&fixture{dir: dir, store: st, engine: eng}).rateAndStep(t, r, "a")
	if v.Status != store.VersionPromoted || !strings.Contains(v.StatusReason, "shrunk to 0.5") || eng.Version() != 1 {
		t.Fatalf("v1 %+v, engine v%d: want the halved step served", v, eng.Version())
	}
	if len(tr.shrinks) != 1 || tr.shrinks[0] != 0.5 || v.Metrics.StepScale != 0.5 {
		t.Errorf("shrinks %v, step scale %g: want one halving", tr.shrinks, v.Metrics.StepScale)
	}
}

// rateAndStep serves one turn (its session and message named by key),
// likes it, has r train one step on it and returns the version the step
// recorded.
func (fx *fixture) rateAndStep(t *testing.T, r *Runner, key string) store.Version {
	t.Helper()
	ctx := context.Background()
	turn := fx.serve(t, key, []chat.Message{{Role: chat.RoleUser, Content: "hello " + key}})
	if err := fx.store.AddFeedback(ctx, turn.ID, store.Feedback{Rating: 1, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if trained, err := r.RunOnce(ctx); err != nil || !trained {
		t.Fatalf("step after %s: %v %v", key, trained, err)
	}
	v, err := fx.store.LatestVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// newGatedRunner is a Runner of the combined method that trains every rated
// turn and gates each version on one retention fact (the capital of France,
// which the scripted engine answers "It is Paris."); gate sets the gate's
// other fields. The scheduler has recovered its versions from st.
func newGatedRunner(t *testing.T, st *sqlite.Store, eng *scripted.Engine, tr rl.Trainer, dir string, gate rl.RetentionConfig) *Runner {
	t.Helper()
	gate.Build = func(ctx context.Context) ([]rl.Probe, error) {
		return RetentionProbes(ctx, eng, []Fact{{Question: "[[say:It is Paris.]] capital?", Accept: []string{"Paris"}}})
	}
	j := judge.New(&judge.EngineBackend{Engine: eng}, judge.Config{Verdict: judge.VerdictVotes, EvalVotes: 1, Retries: judge.NoRetries}, quiet())
	r, err := New(Options{Store: st, Judge: j, Teacher: &judge.Teacher{Engine: eng}, Trainer: tr, Publisher: eng, Log: quiet(),
		Config: Config{Method: rl.MethodCombine, SessionTimeout: -1, Train: rl.SchedulerConfig{BatchSize: 1,
			VersionsDir: filepath.Join(dir, "versions"), Retention: &gate}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Scheduler().Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	return r
}
