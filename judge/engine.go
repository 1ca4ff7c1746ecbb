package judge

import (
	"context"
	"fmt"
	"slices"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
)

// EngineBackend judges with the served engine itself, by default on its base
// weights with no adapter: one copy of the weights serves policy, judge and
// teacher, and the judge does not drift with the policy it judges.
type EngineBackend struct {
	Engine  engine.Engine
	Adapter string // engine.AdapterBase by default
	// Render options for the judge prompt; thinking stays at the template's
	// default.
	Render engine.RenderOptions
}

// Name implements Backend.
func (b *EngineBackend) Name() string {
	a := b.Adapter
	if a == "" {
		a = engine.AdapterBase
	}
	return "engine:" + a
}

// Complete implements Backend.
func (b *EngineBackend) Complete(ctx context.Context, msgs []chat.Message, p Params) (string, error) {
	f := b.Engine.Format()
	opts := b.Render
	opts.AddGenerationPrompt = true
	text, err := f.Render(msgs, nil, opts)
	if err != nil {
		return "", fmt.Errorf("render judge prompt: %w", err)
	}
	ids := f.Encode(text)
	adapter := b.Adapter
	if adapter == "" {
		adapter = engine.AdapterBase
	}
	maxTokens := p.MaxTokens
	if n := b.Engine.Info().ContextLength; n > 0 && len(ids)+maxTokens > n {
		maxTokens = n - len(ids)
		if maxTokens <= 0 {
			return "", fmt.Errorf("judge prompt of %d tokens fills the %d-token context", len(ids), n)
		}
	}
	stop := f.StopIDs()
	var out []int32
	_, err = b.Engine.Generate(ctx, engine.GenerateRequest{
		PromptIDs: ids,
		MaxTokens: maxTokens,
		Sampling:  engine.Sampling{Temperature: p.Temperature},
		Adapter:   adapter,
	}, func(t engine.Token) error {
		if slices.Contains(stop, t.ID) {
			return engine.ErrStop
		}
		out = append(out, t.ID)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("judge generation on %s: %w", adapter, err)
	}
	return f.Decode(out), nil
}
