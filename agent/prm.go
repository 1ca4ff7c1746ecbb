package agent

import (
	"context"
	"fmt"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/judge"
	"github.com/clawrl/clawrl/store"
)

// JudgeScorer is the PRM of the conversation track used per step: the
// judge reads the step's context, the model's message and what the
// environment answered, and votes \boxed{1|0|-1}; the majority is the score.
type JudgeScorer struct{ Judge *judge.Judge }

// ScoreStep implements StepScorer.
func (s JudgeScorer) ScoreStep(ctx context.Context, msgs []chat.Message, action chat.Message, obs []chat.Message) (float64, error) {
	j, err := s.Judge.Judge(ctx, judge.Input{Messages: msgs, Response: action, Next: obs, NextKind: store.NextTool}, judge.Request{Score: true})
	if err != nil {
		return 0, fmt.Errorf("PRM: %w", err)
	}
	return float64(j.Score), nil
}
