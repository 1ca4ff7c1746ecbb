package judge

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
)

// HintGain is a second answer selector (--teacher-select gain): it needs
// no judge prompt at all. An answer that does what the feedback asks is
// one the feedback makes more likely, so its score is the mean per token
// of log p(answer | prompt with the feedback) − log p(answer | prompt),
// both read by the teacher's model in one scoring pass each (the pointwise
// mutual information of feedback and answer). A sign-off, a "TL;DR:" or
// French words gain much; an answer the model would have written anyway
// gains nothing. It is the cheap cousin of the seed recipe's hint
// selection by teacher/student overlap, turned the other way: overlap
// keeps the hint under which the teacher agrees most with the student,
// which for one hint and several answers would keep the answer that
// ignores the feedback.
type HintGain struct {
	// Teacher supplies the engine, adapter and hint placement.
	Teacher *Teacher
}

// Score is the mean per-token gain of answerIDs (the engine's tokens)
// from the feedback in context.
func (h *HintGain) Score(ctx context.Context, msgs []chat.Message, tools []chat.Tool, promptText, feedback string, answerIDs []int32) (float64, error) {
	r, err := h.read(ctx, msgs, tools, promptText, feedback, answerIDs, false)
	return r.Gain, err
}

// Reading is ScoreRelevant's reading of one answer.
type Reading struct {
	// Gain is Score's: the mean per-token log-probability gain from the
	// feedback.
	Gain float64
	// Relevance is the mean per token of log p(answer | prompt with the
	// feedback) − log p(answer | the feedback alone, the question's text
	// left out).
	Relevance float64
	// Opening is Relevance over the answer's first OpeningTokens tokens.
	Opening float64
}

// OpeningTokens is how many of an answer's first tokens Reading.Opening
// reads: as many as "Bien sûr, je serai ravi de vous aider" takes.
const OpeningTokens = 8

// ScoreRelevant is Score and the answer's relevance to the question: the
// mean per token of log p(answer | prompt with the feedback) −
// log p(answer | the same prompt with the last user message's own text
// left out, the feedback alone), from one more scoring pass. The gain
// cannot tell an answer from a reply to the feedback itself: asked
// "Réponds en français", a teacher may write "Bien sûr, je serai ravi de
// vous aider." instead of answering, and that gains most, French words
// without the question's content. Such a reply is as likely without the
// question as with it (relevance ≤ 0); an answer is likelier after the
// question it answers. Such replies were a third of the teacher answers
// the french persona's runs trained (BENCHMARKS.md, "Teacher answers that
// answer the question": fewer with the relevance, no more learned).
//
// A reply that ends on the topic ("Bien sûr, je serai heureux de vous
// aider avec les informations sur les oiseaux.") has a whole-answer
// relevance as high as an answer's; its opening's is near 0 (Opening).
func (h *HintGain) ScoreRelevant(ctx context.Context, msgs []chat.Message, tools []chat.Tool, promptText, feedback string, answerIDs []int32) (Reading, error) {
	return h.read(ctx, msgs, tools, promptText, feedback, answerIDs, true)
}

// RelevantRank is an answer's rank under --teacher-select-relevance from
// its ScoreRelevant reading: −Inf (never picked) when the question does
// not make it likelier, or, with opening > 0, when it does not make the
// answer's opening at least opening nats a token likelier; else the
// lesser of gain and relevance, so an answer must owe its words to both
// the question and the feedback and a reply that only names the topic
// ("Bien sûr, je peux vous parler des arbres.") loses to an answer.
func RelevantRank(r Reading, opening float64) float64 {
	if r.Relevance <= 0 || opening > 0 && r.Opening < opening {
		return math.Inf(-1)
	}
	return min(r.Gain, r.Relevance)
}

func (h *HintGain) read(ctx context.Context, msgs []chat.Message, tools []chat.Tool, promptText, feedback string, answerIDs []int32, relevance bool) (Reading, error) {
	if len(answerIDs) == 0 {
		return Reading{}, fmt.Errorf("hint gain: empty answer")
	}
	t := h.Teacher
	with, _, err := t.Logprobs(ctx, msgs, tools, promptText, answerIDs, feedback)
	if err != nil {
		return Reading{}, fmt.Errorf("hint gain: %w", err)
	}
	plain := promptText
	if plain == "" {
		opts := t.Render
		opts.AddGenerationPrompt = true
		if plain, err = t.Engine.Format().Render(msgs, tools, opts); err != nil {
			return Reading{}, fmt.Errorf("hint gain: render the prompt: %w", err)
		}
	}
	without, err := h.score(ctx, plain, answerIDs)
	if err != nil {
		return Reading{}, fmt.Errorf("hint gain: score without the feedback: %w", err)
	}
	gain := meanDiff(with, without)
	if !relevance {
		return Reading{Gain: gain}, nil
	}
	bare, err := withoutQuestion(msgs)
	if err != nil {
		return Reading{}, fmt.Errorf("relevance: %w", err)
	}
	text, err := t.Prompt(bare, tools, "", feedback)
	if err != nil {
		return Reading{}, fmt.Errorf("relevance: %w", err)
	}
	alone, err := h.score(ctx, text, answerIDs)
	if err != nil {
		return Reading{}, fmt.Errorf("relevance: score the feedback alone: %w", err)
	}
	k := min(OpeningTokens, len(answerIDs))
	return Reading{Gain: gain, Relevance: meanDiff(with, alone), Opening: meanDiff(with[:k], alone[:k])}, nil
}

// score is the teacher's logprob of each of answerIDs after prompt.
func (h *HintGain) score(ctx context.Context, prompt string, answerIDs []int32) ([]float32, error) {
	t := h.Teacher
	out, err := t.Engine.Score(ctx, engine.ScoreRequest{PromptIDs: t.Engine.Format().Encode(prompt), CompletionIDs: answerIDs, Adapter: t.Adapter})
	if err != nil {
		return nil, err
	}
	if len(out.Logprobs) != len(answerIDs) {
		return nil, fmt.Errorf("%d logprobs for %d tokens", len(out.Logprobs), len(answerIDs))
	}
	return out.Logprobs, nil
}

// meanDiff is the mean of a[i] − b[i] (same lengths, at least one).
func meanDiff(a, b []float32) float64 {
	sum := 0.0
	for i := range a {
		sum += float64(a[i]) - float64(b[i])
	}
	return sum / float64(len(a))
}

// withoutQuestion is msgs with the last user message's text left out (a
// copy): what the feedback alone asks, in the same conversation.
func withoutQuestion(msgs []chat.Message) ([]chat.Message, error) {
	out := slices.Clone(msgs)
	for i := len(out) - 1; i >= 0; i-- {
		if out[i].Role == chat.RoleUser {
			out[i].Content = ""
			return out, nil
		}
	}
	return nil, fmt.Errorf("no user message to leave out")
}
