package judge

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode"

	"github.com/clawrl/clawrl/chat"
)

// Best-of-N teacher answers (--teacher-samples). A teacher shown the
// user's written feedback follows it in only some of its answers (SmolLM2
// as its own teacher: 12 of 20 concise prompts, 1 of 20 sign-offs;
// BENCHMARKS.md, "An external teacher"), and the student distils whatever
// the one answer did. Sampling several and keeping the one a judge finds
// follows the feedback raises what can be distilled, using only what the
// system knows: the feedback and the answers (never the benchmark's hidden
// checker).
//
// The judge reads its verdict the way the prefill verdict does (verdict.go):
// one prefill of a prompt that shows the question, the feedback and one
// answer, and the log-probabilities of the answer's first token being Yes
// or No. The score is log p(Yes) − log p(No). An answer that no judge
// scores above the threshold is worse than none: the turn yields no
// teacher sample.

// selectSystem and the question are worded so that the answer's first token
// is the verdict: no begun text is needed, so an OpenAI-compatible judge
// (HTTPBackend, which cannot begin an answer) reads it the same way.
const selectSystem = `You check an AI assistant's answer against the user's written feedback. The feedback says how the user wants to be answered. Judge only whether the answer does what the feedback asks, not whether it is correct or complete. Reply with one word: Yes or No.`

// selectCandidates are the verdict's first tokens, Yes then No: spellings
// that are one token in common vocabularies (a candidate is read as its
// first token, EngineBackend; "YES" begins with "Y", which begins other
// words).
var selectCandidates = []string{"Yes", "No"}

// SelectPrompt is the conversation the selector's judge reads for one
// answer: the user's last message (the task), the written feedback and
// the answer.
func SelectPrompt(msgs []chat.Message, feedback, answer string) []chat.Message {
	task := ""
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == chat.RoleUser {
			task = msgs[i].Content
			break
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The user asked:\n%s\n\n", strings.TrimSpace(task))
	fmt.Fprintf(&b, "The user's feedback on how to answer:\n%s\n\n", strings.TrimSpace(feedback))
	fmt.Fprintf(&b, "The assistant answered:\n%s\n\n", strings.TrimSpace(answer))
	b.WriteString("Does this answer do what the feedback asks? Reply Yes or No.")
	return []chat.Message{{Role: chat.RoleSystem, Content: selectSystem}, {Role: chat.RoleUser, Content: b.String()}}
}

// Selector picks, among answers written with the feedback in context, the
// one a judge finds follows the feedback.
type Selector struct {
	Scorer NextTokenScorer
	// Threshold: the best answer's score must exceed it, or none is
	// picked. Scores are log p(Yes) − log p(No) in nats.
	Threshold float64
	// CallTimeout bounds one scoring call (0: none).
	CallTimeout time.Duration
}

// NoPick is Pick's index when no answer scored above the threshold.
const NoPick = -1

// Score is the judge's log p(Yes) − log p(No) that answer does what the
// feedback asks, read from one prefill of SelectPrompt.
func (s *Selector) Score(ctx context.Context, msgs []chat.Message, feedback, answer string) (float64, error) {
	if s.Scorer == nil {
		return 0, errors.New("answer selector: no judge that reads next-token probabilities")
	}
	if s.CallTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.CallTimeout)
		defer cancel()
	}
	lp, err := s.Scorer.NextLogprobs(ctx, SelectPrompt(msgs, feedback, answer), "", selectCandidates)
	if err != nil {
		return 0, fmt.Errorf("answer selector: %w", err)
	}
	if len(lp) != len(selectCandidates) {
		return 0, fmt.Errorf("answer selector: %d logprobs for %d candidates", len(lp), len(selectCandidates))
	}
	if math.IsNaN(lp[0]) || math.IsNaN(lp[1]) {
		return 0, errors.New("answer selector: NaN logprob")
	}
	return lp[0] - lp[1], nil
}

// Pick scores every answer a selector may pick and returns the index of the
// highest-scoring one above the threshold (NoPick when none is), with all
// the scores (PickBest). refused[i] is why answers[i] may not be picked (""
// when it may): Refusals(answers, feedback), and whatever else the caller
// refuses.
func (s *Selector) Pick(ctx context.Context, msgs []chat.Message, feedback string, answers []string, refused []Refusal) (int, []float64, error) {
	if len(refused) != len(answers) {
		return NoPick, nil, fmt.Errorf("judge: %d refusals for %d answers", len(refused), len(answers))
	}
	return PickBest(ctx, refused, s.Threshold, func(i int) (float64, error) {
		return s.Score(ctx, msgs, feedback, answers[i])
	})
}

// PickBest is the one picking rule of both selectors (Selector, and the
// loop's hint gain) over len(refused) answers: score(i) scores answer i;
// the highest score above threshold wins (NoPick when none is). An answer
// refused (refused[i] != "": Refuse's reasons, or the caller's own) is not
// scored and gets −Inf, as does one whose scoring failed; PickBest fails
// only when every scoring call did (or ctx ended).
func PickBest(ctx context.Context, refused []Refusal, threshold float64, score func(i int) (float64, error)) (int, []float64, error) {
	scores := make([]float64, len(refused))
	best := NoPick
	var errs []string
	for i, why := range refused {
		if why != "" {
			scores[i] = math.Inf(-1)
			continue
		}
		sc, err := score(i)
		if err != nil {
			if ctx.Err() != nil {
				return NoPick, nil, ctx.Err()
			}
			scores[i] = math.Inf(-1)
			errs = append(errs, fmt.Sprintf("answer %d: %v", i, err))
			continue
		}
		scores[i] = sc
		if sc > threshold && (best == NoPick || sc > scores[best]) {
			best = i
		}
	}
	if len(errs) > 0 && len(errs) == len(refused) {
		return NoPick, scores, errors.New(strings.Join(errs, "; "))
	}
	return best, scores, nil
}

// Refusal is why no selector may pick an answer, whatever its score (""
// when one may): a fixed phrase per kind, fit for a metric label.
type Refusal string

// The refusals, in the order Refuse checks them.
const (
	// RefuseCopies: the answer repeats the feedback (CopiesFeedback).
	RefuseCopies Refusal = "copies the feedback"
	// RefuseEchoes: fewer than MinOwnWords of the answer's words are not
	// the feedback's own (OwnWords): "Hope this helps!" for a feedback
	// that quotes it, "Too long." for one that begins with it. Both
	// selectors like such an answer best (the hint gain is a mean per
	// token, and every token of it is one the feedback makes likely), and
	// a student that distils it learns to answer nothing but the
	// feedback's words (BENCHMARKS.md, "Refusing answers made of the
	// feedback's words").
	RefuseEchoes Refusal = "only the feedback's words"
)

// MinOwnWords is how many words an answer must have that the feedback
// does not. Three: on the teacher answers recorded for the four personas
// (bench/results/2026-11-25-qwen-student) it refuses every bare sign-off
// and the one- and two-word French answers, and no concise or TL;DR one.
const MinOwnWords = 3

// Refuse says why no selector may pick answer, written with feedback in
// context ("" when one may).
func Refuse(answer, feedback string) Refusal {
	switch {
	case CopiesFeedback(answer, feedback):
		return RefuseCopies
	case OwnWords(answer, feedback) < MinOwnWords:
		return RefuseEchoes
	}
	return ""
}

// Refusals is Refuse of each answer.
func Refusals(answers []string, feedback string) []Refusal {
	out := make([]Refusal, len(answers))
	for i, a := range answers {
		out[i] = Refuse(a, feedback)
	}
	return out
}

// OwnWords counts the distinct words of answer that the feedback does not
// contain (case and punctuation aside; each ideograph or kana counts as a
// word, as those scripts put no spaces between words): "ok ok ok. Hope
// this helps!" has one.
func OwnWords(answer, feedback string) int {
	seen := map[string]bool{}
	for _, w := range scriptWords(feedback) {
		seen[w] = true
	}
	n := 0
	for _, w := range scriptWords(answer) {
		if !seen[w] {
			seen[w] = true
			n++
		}
	}
	return n
}

// scriptWords are words(s) with each Han, Hiragana or Katakana letter a
// word of its own, and with no quote marks around them ('Hope' is hope).
func scriptWords(s string) []string {
	var out []string
	for _, w := range words(s) {
		if w = strings.Trim(w, "'"); w == "" {
			continue
		}
		start := 0
		for i, r := range w {
			if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) {
				if start < i {
					out = append(out, w[start:i])
				}
				out = append(out, string(r))
				start = i + len(string(r))
			}
		}
		if start < len(w) {
			out = append(out, w[start:])
		}
	}
	return out
}

// copyRun is how many consecutive words of the feedback an answer may
// repeat before it counts as repeating the feedback rather than following
// it.
const copyRun = 5

// CopiesFeedback reports whether answer repeats the feedback instead of
// following it: it holds the teacher's hint header, or copyRun consecutive
// words of the feedback (case and punctuation aside). A model shown
// "Your last words must be "Hope this helps!"" writes that sentence back
// often enough; such an answer is what the feedback makes most likely
// (HintGain) and may even pass a checker, and it teaches the student to
// echo instructions. Selectors skip it.
func CopiesFeedback(answer, feedback string) bool {
	if strings.Contains(answer, strings.TrimSpace(HintHeader)) {
		return true
	}
	fw, aw := words(feedback), words(answer)
	if len(fw) < copyRun {
		return false
	}
	runs := map[string]bool{}
	for i := 0; i+copyRun <= len(fw); i++ {
		runs[strings.Join(fw[i:i+copyRun], " ")] = true
	}
	for i := 0; i+copyRun <= len(aw); i++ {
		if runs[strings.Join(aw[i:i+copyRun], " ")] {
			return true
		}
	}
	return false
}

// words are s's lower-cased words, punctuation dropped.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' })
}
