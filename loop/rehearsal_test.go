package loop

import (
	"context"
	"strings"
	"testing"

	"github.com/clawrl/clawrl/bench"
	"github.com/clawrl/clawrl/engine/native"
	"github.com/clawrl/clawrl/modelref/demotest"
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
