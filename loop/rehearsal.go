package loop

import (
	"context"
	"fmt"
	"sync"

	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/rl"
)

// DefaultRehearsal are the rehearsal anchors' questions (rl.Rehearsal):
// short general-knowledge questions a small instruct model answers in its
// first sentence. They are disjoint from the retention facts the gate
// (DefaultFacts) and `clawrl bench learn` (bench.Retention) check, name
// none of their accepted words, and are none of the bench personas' prompts
// (TestRehearsalDisjoint), so the test sets are never trained on. They mix
// kinds of question (a few capitals among arithmetic, science, history,
// literature, geography) so that what they keep is the model's habit of
// answering a question directly, not one kind of fact the gate happens to
// ask.
var DefaultRehearsal = []string{
	"What is the capital of Spain?",
	"What is the capital of Australia?",
	"What is 3 plus 3?",
	"How many hours are in a day?",
	"How many months are in a year?",
	"At what temperature does water freeze in Celsius?",
	"What gas do plants take in from the air?",
	"Who painted the Mona Lisa?",
	"Who wrote Pride and Prejudice?",
	"What is the largest planet in our solar system?",
	"What is the tallest animal in the world?",
	"What language is spoken in Brazil?",
	"What is the chemical symbol for gold?",
	"How many sides does a triangle have?",
	"What color is grass?",
	"What is the longest river in Africa?",
	"On which continent is Kenya?",
	"Who was the first person to walk on the Moon?",
	"What is the main language spoken in Mexico?",
	"What is the fastest land animal?",
	"Who discovered penicillin?",
	"What is the smallest prime number?",
	"What is the currency of the United States?",
	"Which organ pumps blood through the body?",
}

// DefaultRehearsalTokens bounds an anchor's answer: the opening of an
// answer, where the base model names what it was asked (and where a step
// that loses a fact shows first).
const DefaultRehearsalTokens = 32

// RehearsalAnchors asks eng's base weights each question at temperature 0
// and keeps the opening of each answer, at most maxTokens, as an anchor.
// An answer that names an accepted word of any of avoid (the retention
// facts) is dropped, so no anchor teaches a fact the gate or the benchmark
// checks.
func RehearsalAnchors(ctx context.Context, eng engine.Engine, questions []string, maxTokens int, avoid []Fact) ([]rl.Anchor, error) {
	if maxTokens <= 0 {
		maxTokens = DefaultRehearsalTokens
	}
	f := eng.Format()
	anchors := make([]rl.Anchor, len(questions))
	errs := make([]error, len(questions))
	var wg sync.WaitGroup
	for i, q := range questions {
		wg.Add(1)
		go func() { // the engine batches concurrent generations
			defer wg.Done()
			prompt, ids, err := baseAnswer(ctx, eng, f, q, maxTokens)
			if err != nil {
				errs[i] = fmt.Errorf("rehearsal question %q: %w", q, err)
				return
			}
			anchors[i] = rl.Anchor{Name: q, PromptIDs: prompt, AnswerIDs: ids}
		}()
	}
	wg.Wait()
	var out []rl.Anchor
	for i, a := range anchors {
		if errs[i] != nil {
			return nil, errs[i]
		}
		if len(a.AnswerIDs) == 0 || namesAny(f.Decode(a.AnswerIDs), avoid) {
			continue
		}
		out = append(out, a)
	}
	return out, nil
}

// namesAny reports whether text contains an accepted word of any fact.
func namesAny(text string, facts []Fact) bool {
	for _, fact := range facts {
		if fact.Correct(text) {
			return true
		}
	}
	return false
}
