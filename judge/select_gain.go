package judge

import (
	"context"
	"fmt"

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
	if len(answerIDs) == 0 {
		return 0, fmt.Errorf("hint gain: empty answer")
	}
	t := h.Teacher
	with, _, err := t.Logprobs(ctx, msgs, tools, promptText, answerIDs, feedback)
	if err != nil {
		return 0, fmt.Errorf("hint gain: %w", err)
	}
	plain := promptText
	if plain == "" {
		opts := t.Render
		opts.AddGenerationPrompt = true
		if plain, err = t.Engine.Format().Render(msgs, tools, opts); err != nil {
			return 0, fmt.Errorf("hint gain: render the prompt: %w", err)
		}
	}
	without, err := t.Engine.Score(ctx, engine.ScoreRequest{PromptIDs: t.Engine.Format().Encode(plain), CompletionIDs: answerIDs, Adapter: t.Adapter})
	if err != nil {
		return 0, fmt.Errorf("hint gain: score without the feedback: %w", err)
	}
	if len(without.Logprobs) != len(answerIDs) {
		return 0, fmt.Errorf("hint gain: %d logprobs for %d tokens", len(without.Logprobs), len(answerIDs))
	}
	sum := 0.0
	for i := range answerIDs {
		sum += float64(with[i]) - float64(without.Logprobs[i])
	}
	return sum / float64(len(answerIDs)), nil
}
