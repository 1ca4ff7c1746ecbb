package loop

import (
	"context"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/judge"
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
	prompts, answers, err := baseAnswers(ctx, eng, f, "rehearsal question", questions, maxTokens)
	if err != nil {
		return nil, err
	}
	var out []rl.Anchor
	for i, q := range questions {
		if len(answers[i]) == 0 || namesAny(f.Decode(answers[i]), avoid) {
			continue
		}
		out = append(out, rl.Anchor{Name: q, PromptIDs: prompts[i], AnswerIDs: answers[i]})
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

// FollowAnchor is rl.RehearsalConfig.Follow over teacher
// (--rehearsal-follow-hint): the teacher answers the anchor's question
// with the hint in context, as it answers a rated turn's (greedy, at most
// maxTokens). An answer the teacher ended within maxTokens keeps its stop
// token: under a hint the end is part of what the user asked for ("Madrid.
// Hope this helps!" and the end of turn), and without it a followed anchor
// taught the sign-off with no end after it, which the policy looped
// (BENCHMARKS.md, "Signoff's drift is answers cut at the budget", item 6).
// An answer cut at maxTokens is an opening, as a base anchor is. The
// answer is refused, and the anchor sits that hint out, when it repeats
// the feedback (judge.CopiesFeedback), when it names a retention fact of
// avoid, or when it keeps none of what the base answer said (BaseKept): an
// answer about the feedback ("Bien sûr, je peux vous répondre en
// français.") or with another fact rehearses nothing. The teacher
// selectors' other refusal, fewer than judge.MinOwnWords words of the
// answer's own (an echo of the feedback), is not asked: BaseKept already
// demands the base answer's fact, and a user who asks for brevity is
// answered "Madrid. Hope this helps!", which is one word and the sign-off.
// A refused answer is returned too (ok false), for the log.
func FollowAnchor(teacher *judge.Teacher, maxTokens int, avoid []Fact) func(ctx context.Context, hint string, a rl.Anchor) (rl.Anchor, bool, error) {
	if maxTokens <= 0 {
		maxTokens = DefaultRehearsalTokens
	}
	return func(ctx context.Context, hint string, a rl.Anchor) (rl.Anchor, bool, error) {
		f := teacher.Engine.Format()
		ids, _, _, err := teacher.Write(ctx, []chat.Message{{Role: chat.RoleUser, Content: a.Name}}, nil, "", hint, maxTokens)
		if err != nil {
			return rl.Anchor{}, false, err
		}
		words, end := ids, []int32(nil)
		if i := slices.IndexFunc(ids, func(id int32) bool { return slices.Contains(f.StopIDs(), id) }); i >= 0 {
			words = ids[:i]
			if i < maxTokens {
				end = ids[i : i+1]
			}
		}
		words = words[:min(len(words), maxTokens)]
		text := f.Decode(words)
		ok := len(words) > 0 && !judge.CopiesFeedback(text, hint) && !namesAny(text, avoid) && BaseKept(a.Name, f.Decode(a.AnswerIDs), text)
		return rl.Anchor{Name: a.Name, PromptIDs: a.PromptIDs, AnswerIDs: slices.Concat(words, end)}, ok, nil
	}
}

// BaseKept reports whether answer keeps something the base answer said that
// the question did not: a number of base, or one of its words of four or
// more letters (not a common English word), matched whole or, for words of
// five or more letters, by their first five letters, so that a translation
// keeps names and cognates ("carbon" and "carbone", "Madrid"). A base
// answer with nothing to keep keeps nothing.
func BaseKept(question, base, answer string) bool {
	asked := wordSet(question)
	said := wordSet(answer)
	for w := range wordSet(base) {
		if asked[w] || commonWords[w] {
			continue
		}
		digits := strings.IndexFunc(w, func(c rune) bool { return !unicode.IsDigit(c) }) < 0
		if !digits && utf8.RuneCountInString(w) < 4 {
			continue
		}
		if said[w] {
			return true
		}
		if utf8.RuneCountInString(w) < 5 || digits {
			continue
		}
		p := string([]rune(w)[:5])
		for s := range said {
			if utf8.RuneCountInString(s) >= 5 && strings.HasPrefix(s, p) {
				return true
			}
		}
	}
	return false
}

// wordSet is the lower-cased words (runs of letters and digits) of s.
func wordSet(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(c rune) bool { return !unicode.IsLetter(c) && !unicode.IsDigit(c) }) {
		out[w] = true
	}
	return out
}

// commonWords are English words of four or more letters an answer's
// opening says whatever it is about.
var commonWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields("there their these those this that with from which what when where were have been being also about answer known called would could should into than then they them only most more some such very well each other over under your yours here just like many much") {
		commonWords[w] = true
	}
}

// Answers reports whether answer says any of question's own words (of
// four or more letters, not a common English word; matched whole, or by
// the first five letters of a longer word, as BaseKept matches): a stock
// refusal ("I'm sorry, but I can't assist with that.") does not, nor does
// a reply about something else. --rehearsal-avoid pushes down the caught
// answers that do not answer; a wrong answer about the question (a fact in
// the wrong language, "Romeo et Juliet ont été écrits par J.R.R.
// Tolkien.") is left to the gate.
func Answers(question, answer string) bool {
	return BaseKept("", question, answer)
}

// refusalWords is the fewest words an answer --rehearsal-avoid pushes down
// has: a refusal is a sentence, while a bare wrong number ("2" for the days
// of a week) is an answer, and pushing it down would push down numbers.
const refusalWords = 5

// avoidable reports whether --rehearsal-avoid pushes down a caught answer:
// a sentence that does not answer its question, or with wrong
// (--rehearsal-avoid-wrong) any caught sentence, a fact said wrongly too
// ("Le capital de la France est Paris." to Germany's capital: the answer
// a French step made of every capital question, BENCHMARKS.md
// "`--hold-liked` on the fixed binary").
func avoidable(question, answer string, wrong bool) bool {
	return len(strings.FieldsFunc(answer, func(c rune) bool { return !unicode.IsLetter(c) && !unicode.IsDigit(c) && c != '\'' })) >= refusalWords &&
		(wrong || !Answers(question, answer))
}

// maxAvoided bounds the answers --rehearsal-avoid pushes down.
const maxAvoided = 8
