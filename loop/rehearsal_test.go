package loop

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawrl/clawrl/bench"
	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/native"
	"github.com/clawrl/clawrl/engine/scripted"
	"github.com/clawrl/clawrl/judge"
	"github.com/clawrl/clawrl/modelref/demotest"
	"github.com/clawrl/clawrl/rl"
	"github.com/clawrl/clawrl/rl/rltest"
	"github.com/clawrl/clawrl/store"
)

// retentionSets are every retention fact the loop or the benchmark checks:
// the rehearsal anchors must teach none of them.
func retentionSets() []Fact {
	return append(append([]Fact(nil), DefaultFacts...), bench.Retention...)
}

// TestRehearsalDisjoint: no rehearsal question is a retention question (the
// gate's or the benchmark's), names one of their accepted words, or is one
// of the bench personas' prompts (trained or held out): the anchors never
// train on what the gate or `clawrl bench learn` measure.
func TestRehearsalDisjoint(t *testing.T) {
	norm := func(s string) string { return strings.ToLower(strings.TrimSpace(s)) }
	taken := map[string]string{}
	for _, f := range retentionSets() {
		taken[norm(f.Question)] = "a retention fact"
	}
	for _, p := range bench.Personas() {
		for _, q := range append(append([]string(nil), p.Train...), p.Eval...) {
			taken[norm(q)] = "persona " + p.Name + "'s prompt"
		}
		for _, q := range p.Neutral {
			taken[norm(q)] = "persona " + p.Name + "'s follow-up"
		}
	}
	seen := map[string]bool{}
	if len(DefaultRehearsal) < 16 {
		t.Fatalf("%d rehearsal questions, want ≥ 16", len(DefaultRehearsal))
	}
	for _, q := range DefaultRehearsal {
		if what, ok := taken[norm(q)]; ok {
			t.Errorf("rehearsal question %q is %s", q, what)
		}
		if seen[norm(q)] {
			t.Errorf("rehearsal question %q twice", q)
		}
		seen[norm(q)] = true
		for _, f := range retentionSets() {
			if f.Correct(q) {
				t.Errorf("rehearsal question %q names an accepted word of %q (%v)", q, f.Question, f.Accept)
			}
		}
	}
}

// TestOpenDisjoint: the gate's open questions (--gate-loops) are none of
// the retention facts, the rehearsal anchors or the bench personas'
// prompts and follow-ups, so the gate never reads the benchmark's test set.
func TestOpenDisjoint(t *testing.T) {
	norm := func(s string) string { return strings.ToLower(strings.TrimSpace(s)) }
	taken := map[string]string{}
	for _, f := range retentionSets() {
		taken[norm(f.Question)] = "a retention fact"
	}
	for _, q := range DefaultRehearsal {
		taken[norm(q)] = "a rehearsal anchor"
	}
	for _, p := range bench.Personas() {
		for _, q := range append(append(append([]string(nil), p.Train...), p.Eval...), p.Neutral...) {
			taken[norm(q)] = "persona " + p.Name + "'s"
		}
	}
	seen := map[string]bool{}
	for _, q := range DefaultOpen {
		if what, ok := taken[norm(q)]; ok {
			t.Errorf("open question %q is %s", q, what)
		}
		if seen[norm(q)] {
			t.Errorf("open question %q twice", q)
		}
		seen[norm(q)] = true
	}
}

// TestRehearsalAnchorsDemo builds the anchors from the demo model's own
// greedy answers: most questions give one, and no kept answer names an
// accepted word of any retention fact (those are dropped; the benchmark's
// are checked here too, though the loop only filters on the gate's).
func TestRehearsalAnchorsDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("generates with the demo model")
	}
	ctx := context.Background()
	eng, err := native.Open(demotest.GGUF(t), native.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	f := eng.Format()
	anchors, err := RehearsalAnchors(ctx, eng, DefaultRehearsal, DefaultRehearsalTokens, DefaultFacts)
	if err != nil {
		t.Fatal(err)
	}
	kept := map[string]bool{}
	for _, a := range anchors {
		kept[a.Name] = true
		text := f.Decode(a.AnswerIDs)
		if len(a.AnswerIDs) > DefaultRehearsalTokens {
			t.Errorf("anchor %q: %d answer tokens, want ≤ %d", a.Name, len(a.AnswerIDs), DefaultRehearsalTokens)
		}
		for _, fact := range retentionSets() {
			if fact.Correct(text) {
				t.Errorf("anchor %q answers %q, which names %v (%q)", a.Name, text, fact.Accept, fact.Question)
			}
		}
	}
	for _, q := range DefaultRehearsal {
		if !kept[q] {
			t.Logf("dropped: %q", q)
		}
	}
	if len(anchors) < 16 {
		t.Fatalf("%d of %d rehearsal questions kept, want ≥ 16", len(anchors), len(DefaultRehearsal))
	}
}

// TestOpenProbesDemo builds the gate's open questions on the demo model:
// the base model answers most without looping (an answer that loops is
// not asked: no regression to catch), and each kept probe is the
// question's rendered prompt.
func TestOpenProbesDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("generates with the demo model")
	}
	ctx := context.Background()
	eng, err := native.Open(demotest.GGUF(t), native.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	open, err := OpenProbes(ctx, eng, DefaultOpen, OpenTopics, gateOpenTokens)
	if err != nil {
		t.Fatal(err)
	}
	f := eng.Format()
	for _, p := range open {
		if text := f.Decode(p.PromptIDs); !strings.Contains(text, p.Name) {
			t.Errorf("probe %q: prompt %q does not ask it", p.Name, text)
		}
	}
	if len(open) < len(DefaultOpen)/2 {
		t.Fatalf("%d of %d open questions kept, want ≥ %d", len(open), len(DefaultOpen), len(DefaultOpen)/2)
	}
	// The base answers name their topic (--gate-answers holds them to it).
	topic := 0
	for _, p := range open {
		if len(p.Accept) > 0 {
			topic++
		}
	}
	if 2*topic < len(open) {
		t.Errorf("%d of %d kept open questions answered to their topic, want ≥ half", topic, len(open))
	}
	t.Logf("%d of %d open questions kept, %d answered to their topic", len(open), len(DefaultOpen), topic)
}

// TestBaseKept: a hinted anchor answer keeps the base answer's fact when
// it says one of the base answer's own words (a number, a name, a cognate
// by its first five letters), not only the question's words, the common
// ones, or talk about the feedback.
func TestBaseKept(t *testing.T) {
	for _, c := range []struct {
		q, base, answer string
		want            bool
	}{
		{"What is the capital of Spain?", "The capital of Spain is Madrid.", "La capitale de l'Espagne est Madrid.", true},
		{"What is the capital of Spain?", "The capital of Spain is Madrid.", "La capitale de la France est Paris.", false},
		{"What is the capital of Spain?", "The capital of Spain is Madrid.", "Bien sûr, je peux vous répondre en français.", false},
		{"How many hours are in a day?", "There are 24 hours in a day.", "Il y a 24 heures dans une journée.", true},
		{"How many hours are in a day?", "There are 24 hours in a day.", "Il y a 12 heures.", false},
		{"What gas do plants take in from the air?", "Plants take in carbon dioxide from the air.", "Les plantes absorbent du dioxyde de carbone.", true},
		{"What is 3 plus 3?", "3 plus 3 equals 6.", "3 plus 3 égale 6.", true},
		{"What is 3 plus 3?", "3 plus 3 equals 6.", "3 plus 3 égale 9.", false},
		{"Who painted the Mona Lisa?", "The Mona Lisa was painted by Leonardo da Vinci.", "La Joconde a été peinte par Léonard de Vinci.", true},
		{"What color is grass?", "Grass is green.", "L'herbe est verte.", false}, // no cognate: sits the hint out
		{"What color is grass?", "Yes.", "Oui.", false},                          // nothing to keep
		{"Who wrote Pride and Prejudice?", "Pride and Prejudice was written by Jane Austen. There are many", "There are many books.", false},
	} {
		if got := BaseKept(c.q, c.base, c.answer); got != c.want {
			t.Errorf("BaseKept(%q, %q, %q) = %v, want %v", c.q, c.base, c.answer, got, c.want)
		}
	}
}

// rehearsingTrainer is a recording trainer that rehearses.
type rehearsingTrainer struct {
	*rltest.Trainer
	r *rl.Rehearsal
}

func (t rehearsingTrainer) Rehearsal() *rl.Rehearsal { return t.r }

// TestRehearsalFollowsTheTrainedHint: under --rehearsal-follow-hint the
// runner tells the trainer's anchors the hint of each teacher sample it
// stores, and the next step rehearses each anchor as the teacher answers
// it with that hint in context (FollowAnchor: its opening, no stop token),
// while an answer that keeps nothing of the base answer sits the hint out.
func TestRehearsalFollowsTheTrainedHint(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	eng := scripted.New(scripted.Options{})
	f := eng.Format()
	st := openStore(t, dir)
	t.Cleanup(func() { st.Close() })
	teacher := &judge.Teacher{Engine: eng, Placement: judge.HintInUser}
	// The scripted teacher says the cues of the question and then of the
	// hint: "La capitale: Mad" + "rid." is a word neither holds.
	spain := "What is the capital of Spain? [[say:La capitale: Mad]]"
	base := func(q, answer string) rl.Anchor {
		text, err := f.Render([]chat.Message{{Role: chat.RoleUser, Content: q}}, nil, engine.RenderOptions{AddGenerationPrompt: true})
		if err != nil {
			t.Fatal(err)
		}
		return rl.Anchor{Name: q, PromptIDs: f.Encode(text), AnswerIDs: f.Encode(answer)}
	}
	anchors := []rl.Anchor{base(spain, "The capital of Spain is Madrid."), base("What color is grass?", "Grass is green.")}
	reh := rl.NewRehearsal(rl.RehearsalConfig{PerBatch: 2, Anchors: anchors, Follow: FollowAnchor(teacher, 64, DefaultFacts)})
	trainer := rehearsingTrainer{&rltest.Trainer{}, reh}
	j := judge.New(&judge.EngineBackend{Engine: eng}, judge.Config{Verdict: judge.VerdictVotes,
		EvalVotes: 1, Retries: judge.NoRetries, MaxTokens: 512, HintTokens: 256}, quiet())
	r, err := New(Options{Store: st, Judge: j, Teacher: teacher, Trainer: trainer, Publisher: eng, Log: quiet(),
		Config: Config{Method: rl.MethodCombine, SessionTimeout: -1, TeacherWrites: true, TeacherTokens: 40,
			Train: rl.SchedulerConfig{BatchSize: 1, VersionsDir: filepath.Join(dir, "versions")}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Scheduler().Recover(ctx); err != nil {
		t.Fatal(err)
	}
	fx := &fixture{dir: dir, store: st, engine: eng, trainer: trainer.Trainer, runner: r}
	before, err := reh.Samples(ctx)
	if err != nil || len(before) != 2 || f.Decode(before[0].ResponseIDs) != "The capital of Spain is Madrid." {
		t.Fatalf("before any hint: %v %v, want the base answers", before, err)
	}
	const critique = "[[say:rid.]] Réponds en français."
	rated := fx.serve(t, "rated", []chat.Message{{Role: chat.RoleUser, Content: cuedHaiku}})
	if err := st.AddFeedback(ctx, rated.ID, store.Feedback{Rating: -1, Text: critique, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.judgeRound(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := st.ListSamples(ctx, store.TurnFilter{SessionID: rated.SessionID}); err != nil || len(n) != 1 || n[0].TeacherResponseIDs == nil {
		t.Fatalf("samples %+v %v: want the teacher-written one", n, err)
	}
	after, err := reh.Samples(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The teacher ended its answer: the anchor keeps the end of turn.
	if len(after) != 1 || f.Decode(after[0].ResponseIDs) != "La capitale: Madrid.<|im_end|>" || !slices.Equal(after[0].PromptIDs, anchors[0].PromptIDs) {
		var got []string
		for _, a := range after {
			got = append(got, f.Decode(a.ResponseIDs))
		}
		t.Fatalf("after the hint: %q, want only Spain's, as the teacher says it under the hint", got)
	}
	if refused, failed := reh.Skipped(); refused != 1 || failed != 0 {
		t.Fatalf("skipped %d refused, %d failed; want grass's answer (\"rid.\") refused", refused, failed)
	}
}

// TestAnswers: a caught answer that says none of the question's own words
// does not answer it (a stock refusal, in any language); one about the
// question, right or wrong, does.
func TestAnswers(t *testing.T) {
	for _, c := range []struct {
		q, answer string
		want      bool
	}{
		{"Who wrote Romeo and Juliet?", "I'm sorry, but I can't assist with that.", false},
		{"Who wrote Romeo and Juliet?", "Je suis désolé, mais je ne peux pas répondre à cette question.", false},
		{"Who wrote Romeo and Juliet?", "Romeo et Juliet ont été écrits par J.R.R. Tolkien.", true},
		{"What is the capital of Japan?", "Le capital de la France est Paris.", true},
		{"What is the largest ocean on Earth?", "La plus grande ocean sur le plan est la Terre.", true},
		{"What is the largest ocean on Earth?", "Bien sûr, je peux vous aider.", false},
	} {
		if got := Answers(c.q, c.answer); got != c.want {
			t.Errorf("Answers(%q, %q) = %v, want %v", c.q, c.answer, got, c.want)
		}
		if got := avoidable(c.q, c.answer, false); got == c.want {
			t.Errorf("avoidable(%q, %q) = %v, want %v", c.q, c.answer, got, !c.want)
		}
		// --rehearsal-avoid-wrong: every caught sentence, an answer about
		// its question included.
		if !avoidable(c.q, c.answer, true) {
			t.Errorf("avoidable(%q, %q, wrong) = false, want true", c.q, c.answer)
		}
	}
	// A bare wrong number is an answer, though it says none of the
	// question's words: pushing it down would push down numbers.
	if avoidable("How many days are in a week?", "2", true) || avoidable("How many days are in a week?", "Il y a 2.", true) {
		t.Error("a short wrong answer is avoidable")
	}
}

// TestFollowAnchorBrief: under a hint that asks for brevity the teacher
// answers an anchor in a word and the sign-off; that keeps the base
// answer's fact and is rehearsed (it has fewer than judge.MinOwnWords words
// of its own, which a teacher selector would refuse as an echo), while an
// answer that repeats the feedback or keeps no fact sits the hint out.
func TestFollowAnchorBrief(t *testing.T) {
	ctx := context.Background()
	eng := scripted.New(scripted.Options{})
	f := eng.Format()
	ask := FollowAnchor(&judge.Teacher{Engine: eng, Placement: judge.HintInUser}, 64, DefaultFacts)
	const question = "What is the capital of Spain?"
	text, err := f.Render([]chat.Message{{Role: chat.RoleUser, Content: question}}, nil, engine.RenderOptions{AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	anchor := rl.Anchor{Name: question, PromptIDs: f.Encode(text), AnswerIDs: f.Encode("The capital of Spain is Madrid.")}
	// The scripted teacher says the hint's cue (the question has none).
	const feedback = `Be brief. Your last words must be "Hope this helps!"`
	for _, c := range []struct {
		name, hint string
		want       bool
	}{
		{"a word and the sign-off", "[[say:Madrid. Hope this helps!]] " + feedback, true},
		{"the feedback repeated", "[[say:Madrid. Your last words must be Hope this helps!]] " + feedback, false},
		{"no fact kept", "[[say:Sure. Hope this helps!]] " + feedback, false},
	} {
		got, ok, err := ask(ctx, c.hint, anchor)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if ok != c.want {
			t.Errorf("%s: %q ok %v, want %v", c.name, f.Decode(got.AnswerIDs), ok, c.want)
		}
	}
}

// TestFollowAnchorEnd: a followed answer the teacher ended within the
// anchor's budget keeps its stop token (the sign-off and then the end, not
// the sign-off and whatever follows), and one cut at the budget is an
// opening without it, as a base anchor is.
func TestFollowAnchorEnd(t *testing.T) {
	ctx := context.Background()
	eng := scripted.New(scripted.Options{})
	f := eng.Format()
	const question = "What is the capital of Spain?"
	text, err := f.Render([]chat.Message{{Role: chat.RoleUser, Content: question}}, nil, engine.RenderOptions{AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	anchor := rl.Anchor{Name: question, PromptIDs: f.Encode(text), AnswerIDs: f.Encode("The capital of Spain is Madrid.")}
	const hint = `[[say:Madrid. Hope this helps!]] Your last words must be "Hope this helps!"`
	stop := f.StopIDs()
	for _, c := range []struct {
		name    string
		budget  int
		wantEnd bool
	}{
		{"ended within the budget", 64, true},
		{"cut at the budget", 10, false},
	} {
		got, ok, err := FollowAnchor(&judge.Teacher{Engine: eng, Placement: judge.HintInUser}, c.budget, DefaultFacts)(ctx, hint, anchor)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !ok {
			t.Fatalf("%s: %q refused", c.name, f.Decode(got.AnswerIDs))
		}
		ids := got.AnswerIDs
		if n := len(ids); n == 0 || slices.Contains(stop, ids[n-1]) != c.wantEnd {
			t.Errorf("%s: %q (%d tokens) ends with a stop token: want %v", c.name, f.Decode(ids), n, c.wantEnd)
		}
		if slices.ContainsFunc(ids[:max(len(ids)-1, 0)], func(id int32) bool { return slices.Contains(stop, id) }) {
			t.Errorf("%s: a stop token inside %v", c.name, ids)
		}
		if !c.wantEnd && len(ids) != c.budget {
			t.Errorf("%s: %d tokens, want the budget's %d", c.name, len(ids), c.budget)
		}
	}
}
