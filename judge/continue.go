package judge

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/clawrl/clawrl/engine"
)

// A continuing teacher (HintAsContinuation) keeps the student's answer and
// writes only its end: its prompt is the hint-conditioned prompt of
// HintInUser followed by the answer's ids up to its end-of-turn token, and
// what it generates from there is appended. The sample is the original
// prompt followed by the answer and that ending, so a preference that lives
// at the end of an answer (a sign-off) can be learned on the student's own
// content, where a teacher that answers afresh writes a non-answer before
// the sign-off (BENCHMARKS.md, "Context distillation by cross-entropy").

var errNoAnswerIDs = errors.New("the continue hint placement needs the student's answer ids (Teacher.WithAnswer)")

// writeContinuation is Write under HintAsContinuation: prompt is the
// teacher's prompt text. It returns the answer's ids (without their stop
// token) followed by at most maxTokens generated ones, the teacher's
// logprob of each, and the policy version. A remote teacher cannot be
// asked to continue through a chat API; it is not used here.
func (t *Teacher) writeContinuation(ctx context.Context, prompt string, maxTokens int) ([]int32, []float32, int64, error) {
	if t.answerIDs == nil {
		return nil, nil, 0, errNoAnswerIDs
	}
	f := t.Engine.Format()
	prefix := slices.Clone(t.answerIDs)
	for len(prefix) > 0 && slices.Contains(f.StopIDs(), prefix[len(prefix)-1]) {
		prefix = prefix[:len(prefix)-1]
	}
	promptIDs := f.Encode(prompt)
	g, err := t.Engine.Generate(ctx, engine.GenerateRequest{PromptIDs: append(slices.Clone(promptIDs), prefix...), MaxTokens: maxTokens,
		Adapter: t.Adapter, Sampling: t.Sampling}, func(engine.Token) error { return nil })
	if err != nil {
		return nil, nil, 0, fmt.Errorf("teacher continuation on adapter %q: %w", t.Adapter, err)
	}
	var lps []float32
	if len(prefix) > 0 {
		// The teacher's logprobs of the kept answer, in the same context.
		scored, err := t.Engine.Score(ctx, engine.ScoreRequest{PromptIDs: promptIDs, CompletionIDs: prefix, Adapter: t.Adapter})
		if err != nil {
			return nil, nil, 0, fmt.Errorf("teacher score of the continued answer on adapter %q: %w", t.Adapter, err)
		}
		if len(scored.Logprobs) != len(prefix) {
			return nil, nil, 0, fmt.Errorf("teacher score: %d logprobs for %d answer tokens", len(scored.Logprobs), len(prefix))
		}
		lps = scored.Logprobs
	}
	ids := prefix
	for _, tok := range g.Tokens {
		ids, lps = append(ids, tok.ID), append(lps, tok.Logprob)
	}
	if len(ids) == 0 {
		return nil, nil, 0, fmt.Errorf("teacher continuation on adapter %q: empty response", t.Adapter)
	}
	return ids, lps, g.PolicyVersion, nil
}
