package rl

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/clawrl/clawrl/model"
)

// TestNativeAnswerIsGreedy: the trainer's answers are the greedy
// continuations under its current weights — the same ids as recomputing
// the whole sequence's logits at every token with the trained adapter —
// for prompts of different lengths decoded together, stopping at a stop id
// or the token bound.
func TestNativeAnswerIsGreedy(t *testing.T) {
	ctx := context.Background()
	n := newTinyNative(t)
	batch := []Sample{{TurnID: "a", PromptIDs: []int32{1, 2, 3}, ResponseIDs: []int32{4, 5, 6}, BehaviourLogprobs: []float32{-4, -4, -4},
		UseRL: true, Reward: 1}}
	for range 5 { // non-zero adapters
		if _, err := n.Step(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	m, err := n.tr.Weights().Model()
	if err != nil {
		t.Fatal(err)
	}
	ad, err := n.tr.Adapter()
	if err != nil {
		t.Fatal(err)
	}
	greedy := func(prompt []int32, maxTokens int, stop []int32) []int32 {
		ids := append([]int32(nil), prompt...)
		var out []int32
		for len(out) < maxTokens {
			logits, err := m.Logits(ctx, ids, ad)
			if err != nil {
				t.Fatal(err)
			}
			V := m.Config.VocabSize
			id, _ := model.Sample(logits[len(logits)-V:], model.SamplingParams{}, nil)
			if id == stop[0] {
				break
			}
			out, ids = append(out, id), append(ids, id)
		}
		return out
	}
	prompts := [][]int32{{1, 2, 3}, {7, 8, 9, 10, 11}, {20}}
	free := greedy(prompts[1], 12, []int32{-1})
	if len(free) < 3 {
		t.Fatal("greedy answer too short to test stopping")
	}
	k := 1 // prompt 1 stops after k tokens: at the first id it had not said before
	for k < len(free) && slices.Contains(free[:k], free[k]) {
		k++
	}
	if k == len(free) {
		t.Fatalf("greedy answer %v repeats one token: no stop to test", free)
	}
	stop := []int32{free[k]}
	got, err := n.Answer(ctx, prompts, 12, stop, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range prompts {
		want := greedy(p, 12, stop)
		if len(got[i]) != len(want) {
			t.Fatalf("prompt %d: answer %v, want %v", i, got[i], want)
		}
		for j := range want {
			if got[i][j] != want[j] {
				t.Fatalf("prompt %d: answer %v, want %v", i, got[i], want)
			}
		}
	}
	// done ends an answer early: after its first token here.
	first, err := n.Answer(ctx, prompts, 12, stop, func(i int, ids []int32) bool { return len(ids) == 1 })
	if err != nil {
		t.Fatal(err)
	}
	for i := range prompts {
		if want := min(1, len(got[i])); len(first[i]) != want || (want == 1 && first[i][0] != got[i][0]) {
			t.Errorf("prompt %d with done after one token: %v, want the first of %v", i, first[i], got[i])
		}
	}
	if len(got[1]) != k {
		t.Errorf("prompt 1: %d tokens, want %d (stopped)", len(got[1]), k)
	}
}

// tokenAnswerer answers every prompt with the same token ids.
type tokenAnswerer [][]int32

func (a tokenAnswerer) Answer(ctx context.Context, prompts [][]int32, maxTokens int, stop []int32, done func(int, []int32) bool) ([][]int32, error) {
	return a, nil
}

// TestCheckAnswers: a fact is kept when the answer names an accepted word
// in any language or phrasing, lost otherwise; MaxLost bounds the losses,
// and the reason quotes the lost answers.
func TestCheckAnswers(t *testing.T) {
	words := []string{"", "La capitale est Paris.", "Quatre.", "Oui oui la la la", "PARIS!"}
	decode := func(ids []int32) string { return words[ids[0]] }
	probes := []Probe{{Name: "France", Accept: []string{"Paris"}}, {Name: "2+2", Accept: []string{"4", "four", "quatre"}},
		{Name: "France again", Accept: []string{"Paris"}}}
	cfg := RetentionConfig{Probes: probes, Decode: decode}
	res, err := CheckAnswers(context.Background(), tokenAnswerer{{1}, {2}, {4}}, cfg)
	if err != nil || !res.Pass || res.Lost != 0 || res.Facts != 3 {
		t.Fatalf("%+v %v: want all kept", res, err)
	}
	res, err = CheckAnswers(context.Background(), tokenAnswerer{{3}, {2}, {3}}, cfg)
	if err != nil || res.Pass || res.Lost != 2 || !strings.Contains(res.Reason, `France → "Oui oui la la la"`) {
		t.Fatalf("%+v %v: want two lost, quoted", res, err)
	}
	var caught []string
	cfg.Caught = func(p Probe, answer []int32) { caught = append(caught, p.Name+" → "+decode(answer)) }
	if _, err := CheckAnswers(context.Background(), tokenAnswerer{{3}, {2}, {3}}, cfg); err != nil ||
		!slices.Equal(caught, []string{"France → Oui oui la la la", "France again → Oui oui la la la"}) {
		t.Fatalf("caught %q (%v): want the two lost facts' answers", caught, err)
	}
	cfg.MaxLost = 2
	if res, _ := CheckAnswers(context.Background(), tokenAnswerer{{3}, {2}, {3}}, cfg); !res.Pass {
		t.Fatalf("%+v: two lost within MaxLost 2", res)
	}
	if _, err := CheckAnswers(context.Background(), tokenAnswerer{{1}}, cfg); err == nil {
		t.Fatal("one answer to three questions: no error")
	}
	if _, ok := (RetentionConfig{}).Behavioural(tokenAnswerer{}); ok {
		t.Fatal("behavioural without a decoder")
	}
}

// loopAnswerer answers every prompt with the same token ids and records
// the token bound and what done says of each answer.
type loopAnswerer struct {
	answers   [][]int32
	maxTokens int
	done      []bool
}

func (a *loopAnswerer) Answer(ctx context.Context, prompts [][]int32, maxTokens int, stop []int32, done func(int, []int32) bool) ([][]int32, error) {
	a.maxTokens, a.done = maxTokens, nil
	for i, ids := range a.answers {
		a.done = append(a.done, done(i, ids))
	}
	return a.answers, nil
}

// TestCheckAnswersLoops: the open questions are answered in the facts'
// batch to OpenTokens, and a version whose answer to one loops is
// rejected, with the loop quoted from its end, even when every fact is
// kept; an open answer that ends is no loss.
func TestCheckAnswersLoops(t *testing.T) {
	words := []string{"", "The capital of France is Paris. Hope this helps!",
		"Boil water, steep the tea for three minutes, and enjoy! Hope this helps!",
		"Boil water, steep the tea for three minutes, and enjoy! Hope this helps! Hope this helps! Hope this helps! Hope this"}
	decode := func(ids []int32) string { return words[ids[0]] }
	cfg := RetentionConfig{Probes: []Probe{{Name: "France", Accept: []string{"Paris"}}}, Decode: decode,
		Open: []Probe{{Name: "tea"}, {Name: "tie"}}}
	a := &loopAnswerer{answers: [][]int32{{1}, {2}, {2}}}
	res, err := CheckAnswers(context.Background(), a, cfg)
	if err != nil || !res.Pass || res.Open != 2 || res.Loops != 0 || a.maxTokens != 64 {
		t.Fatalf("%+v %v (bound %d): want a pass, two open answers asked to 64 tokens", res, err, a.maxTokens)
	}
	if !strings.Contains(res.Reason, "0 of 2 open answers loop") {
		t.Errorf("reason %q does not count the open answers", res.Reason)
	}
	a.answers = [][]int32{{1}, {2}, {3}}
	res, err = CheckAnswers(context.Background(), a, cfg)
	if err != nil || res.Pass || res.Lost != 0 || res.Loops != 1 {
		t.Fatalf("%+v %v: want a rejection for one looping open answer", res, err)
	}
	if !strings.Contains(res.Reason, `looping: tie → "…`) || !strings.Contains(res.Reason, "Hope this helps! Hope this\"") {
		t.Errorf("reason %q does not quote the loop's end", res.Reason)
	}
	if !slices.Equal(a.done, []bool{true, false, true}) {
		t.Errorf("done said %v, want the kept fact and the loop done, the ended answer not", a.done)
	}
	// Without open questions the bound is the facts' own.
	cfg.Open, a.answers = nil, [][]int32{{1}}
	if res, err := CheckAnswers(context.Background(), a, cfg); err != nil || !res.Pass || a.maxTokens != 48 ||
		strings.Contains(res.Reason, "open") {
		t.Fatalf("%+v %v (bound %d): no open questions", res, err, a.maxTokens)
	}
}

// TestCheckAnswersUnanswered: under OpenAnswered a version that answers
// half of the open questions with topic words with none of them (the 1.5B
// student's first tldr version: "I'm sorry, but I can't assist with
// that.") is rejected, quoted, while every fact is kept; one such answer
// of four passes, a question without topic words is not counted, and
// without OpenAnswered nothing is.
func TestCheckAnswersUnanswered(t *testing.T) {
	words := []string{"", "The capital of France is Paris.", "I'm sorry, but I can't assist with that.",
		"Boil water and steep the tea.", "Cross the wide end over and loop it through.", "TL;DR: Pour faire du thé, chauffez l'eau.",
		"Cross the wide end over and pull the knot up."}
	decode := func(ids []int32) string { return words[ids[0]] }
	tea, tie := []string{"tea", "thé"}, []string{"tie", "knot"}
	cfg := RetentionConfig{Probes: []Probe{{Name: "France", Accept: []string{"Paris"}}}, Decode: decode, OpenAnswered: true,
		Open: []Probe{{Name: "tea", Accept: tea}, {Name: "tie", Accept: tie}, {Name: "tea again", Accept: tea},
			{Name: "tie again", Accept: tie}, {Name: "no topic"}}}
	check := func(answers ...int32) RetentionResult {
		t.Helper()
		a := &loopAnswerer{answers: [][]int32{{1}}}
		for _, w := range answers {
			a.answers = append(a.answers, []int32{w})
		}
		res, err := CheckAnswers(context.Background(), a, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	// Two of four: the terse tie answer and one refusal (the question
	// without topic words is not counted; "thé" answers in French).
	if res := check(3, 4, 5, 2, 2); res.Pass || res.Unanswered != 2 || !strings.Contains(res.Reason, "2 of 4 do not answer") {
		t.Fatalf("%+v: want two of four unanswered, rejected", res)
	}
	if res := check(3, 4, 5, 6, 2); !res.Pass || res.Unanswered != 1 {
		t.Fatalf("%+v: one terse answer of four is no rejection", res)
	}
	res := check(2, 2, 3, 2, 3)
	if res.Pass || res.Lost != 0 || res.Unanswered != 3 || !strings.Contains(res.Reason, `not answering: tea → "I'm sorry, but I can't assist with that."`) {
		t.Fatalf("%+v: want three refusals of four rejected, quoted", res)
	}
	cfg.OpenAnswered = false
	if res := check(2, 2, 3, 2, 3); !res.Pass || res.Unanswered != 0 || strings.Contains(res.Reason, "do not answer") {
		t.Fatalf("%+v: OpenAnswered off counts nothing", res)
	}
}

// TestShrinkStep: halving a step puts every trainable parameter halfway
// between its value before the step and after it; without a step there is
// nothing to shrink.
func TestShrinkStep(t *testing.T) {
	ctx := context.Background()
	n := newTinyNative(t)
	if err := n.ShrinkStep(0.5); err == nil {
		t.Fatal("shrank a step never taken")
	}
	batch := []Sample{{TurnID: "a", PromptIDs: []int32{1, 2, 3}, ResponseIDs: []int32{4, 5}, BehaviourLogprobs: []float32{-4, -4},
		UseRL: true, Reward: 1}}
	if _, err := n.Step(ctx, batch); err != nil { // B moves off zero
		t.Fatal(err)
	}
	var before [][]float32
	for _, p := range n.tr.Params() {
		before = append(before, append([]float32(nil), p.Data...))
	}
	if _, err := n.Step(ctx, batch); err != nil {
		t.Fatal(err)
	}
	var after [][]float32
	for _, p := range n.tr.Params() {
		after = append(after, append([]float32(nil), p.Data...))
	}
	if err := n.ShrinkStep(0.5); err != nil {
		t.Fatal(err)
	}
	moved := false
	for i, p := range n.tr.Params() {
		for j, v := range p.Data {
			want := before[i][j] + 0.5*(after[i][j]-before[i][j])
			if d := v - want; d > 1e-7 || d < -1e-7 {
				t.Fatalf("param %d[%d] = %g, want %g", i, j, v, want)
			}
			moved = moved || after[i][j] != before[i][j]
		}
	}
	if !moved {
		t.Fatal("the step moved nothing")
	}
}
