package judge

import (
	"context"
	"fmt"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
)

// HintHeader introduces the hint appended to the last user message, as the
// seed system did.
const HintHeader = "\n\n[user's hint / instruction]\n"

// Teacher computes OPD teacher logprobs: the same model, shown the hint, re-
// scores the response the policy actually sampled.
type Teacher struct {
	Engine engine.Engine
	// Adapter is engine.AdapterCurrent (the current policy, default) or
	// engine.AdapterBase (the frozen initial model, --teacher base).
	Adapter string
	Render  engine.RenderOptions
}

// TeacherPrompt returns msgs with hint appended to the last user message.
func TeacherPrompt(msgs []chat.Message, hint string) ([]chat.Message, error) {
	out := make([]chat.Message, len(msgs))
	copy(out, msgs)
	for i := len(out) - 1; i >= 0; i-- {
		if out[i].Role == chat.RoleUser {
			out[i].Content += HintHeader + hint
			return out, nil
		}
	}
	return nil, fmt.Errorf("teacher prompt: no user message to append the hint to")
}

// Logprobs returns one teacher logprob per response id. The prompt is re-
// rendered and re-tokenised with the hint; the response ids are the exact ids
// the engine sampled, never re-tokenised text. It also returns the policy
// version the teacher ran on.
func (t *Teacher) Logprobs(ctx context.Context, msgs []chat.Message, tools []chat.Tool, responseIDs []int32, hint string) ([]float32, int64, error) {
	tm, err := TeacherPrompt(msgs, hint)
	if err != nil {
		return nil, 0, err
	}
	opts := t.Render
	opts.AddGenerationPrompt = true
	text, err := t.Engine.Format().Render(tm, tools, opts)
	if err != nil {
		return nil, 0, fmt.Errorf("render teacher prompt: %w", err)
	}
	scored, err := t.Engine.Score(ctx, engine.ScoreRequest{
		PromptIDs:     t.Engine.Format().Encode(text),
		CompletionIDs: responseIDs,
		Adapter:       t.Adapter,
	})
	if err != nil {
		return nil, 0, fmt.Errorf("teacher score on adapter %q: %w", t.Adapter, err)
	}
	if len(scored.Logprobs) != len(responseIDs) {
		return nil, 0, fmt.Errorf("teacher score: %d logprobs for %d response tokens", len(scored.Logprobs), len(responseIDs))
	}
	return scored.Logprobs, scored.PolicyVersion, nil
}
