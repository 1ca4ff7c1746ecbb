package judge

import (
	"context"
	"fmt"
	"slices"
	"strings"

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
	ids, err := b.prompt(msgs, "")
	if err != nil {
		return "", err
	}
	f := b.Engine.Format()
	maxTokens := p.MaxTokens
	if n := b.Engine.Info().ContextLength; n > 0 && len(ids)+maxTokens > n {
		maxTokens = n - len(ids)
		if maxTokens <= 0 {
			return "", fmt.Errorf("judge prompt of %d tokens fills the %d-token context", len(ids), n)
		}
	}
	stop := f.StopIDs()
	var out []int32
	dec := f.NewDecoder()
	var text strings.Builder
	_, err = b.Engine.Generate(ctx, engine.GenerateRequest{
		PromptIDs: ids,
		MaxTokens: maxTokens,
		Sampling:  engine.Sampling{Temperature: p.Temperature},
		Adapter:   b.adapter(),
	}, func(t engine.Token) error {
		if slices.Contains(stop, t.ID) {
			return engine.ErrStop
		}
		out = append(out, t.ID)
		if len(p.Stop) > 0 {
			text.WriteString(dec.Add(t.ID))
			for _, s := range p.Stop {
				if strings.HasSuffix(text.String(), s) {
					return engine.ErrStop
				}
			}
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("judge generation on %s: %w", b.adapter(), err)
	}
	return f.Decode(out), nil
}

// NextLogprobs implements NextTokenScorer with one generation step of one
// token: its prefill gives the next-token distribution, and the engine's
// prefix cache makes a second prompt that shares the first one's beginning
// (the neutral reference) cost only its tail. A candidate outside the
// reported top logprobs gets the smallest one reported, an upper bound on
// its own: both are negligible next to the leaders.
func (b *EngineBackend) NextLogprobs(ctx context.Context, msgs []chat.Message, begun string, candidates []string) ([]float64, error) {
	ids, err := b.prompt(msgs, begun)
	if err != nil {
		return nil, err
	}
	if n := b.Engine.Info().ContextLength; n > 0 && len(ids) >= n {
		return nil, fmt.Errorf("judge prompt of %d tokens fills the %d-token context", len(ids), n)
	}
	f := b.Engine.Format()
	want := make([]int32, len(candidates))
	for i, c := range candidates {
		cids := f.Encode(c)
		if len(cids) == 0 {
			return nil, fmt.Errorf("verdict candidate %q encodes to no token", c)
		}
		want[i] = cids[0]
	}
	var top []engine.TokenLogprob
	_, err = b.Engine.Generate(ctx, engine.GenerateRequest{
		PromptIDs:   ids,
		MaxTokens:   1,
		TopLogprobs: verdictTopLogprobs,
		Adapter:     b.adapter(),
	}, func(t engine.Token) error {
		top = t.Top
		if len(top) == 0 {
			top = []engine.TokenLogprob{{ID: t.ID, Logprob: t.Logprob}}
		}
		return engine.ErrStop
	})
	if err != nil {
		return nil, fmt.Errorf("judge prefill on %s: %w", b.adapter(), err)
	}
	if len(top) == 0 {
		return nil, fmt.Errorf("judge prefill on %s: no token", b.adapter())
	}
	floor := float64(top[len(top)-1].Logprob)
	out := make([]float64, len(candidates))
	for i, id := range want {
		out[i] = floor
		for _, t := range top {
			if t.ID == id {
				out[i] = float64(t.Logprob)
				break
			}
		}
	}
	return out, nil
}

// verdictTopLogprobs is how many alternatives a prefill verdict reads (the
// OpenAI API's maximum, which remote engines honour too).
const verdictTopLogprobs = 20

// prompt renders msgs with the generation prompt, appends begun, and
// tokenises.
func (b *EngineBackend) prompt(msgs []chat.Message, begun string) ([]int32, error) {
	f := b.Engine.Format()
	opts := b.Render
	opts.AddGenerationPrompt = true
	text, err := f.Render(msgs, nil, opts)
	if err != nil {
		return nil, fmt.Errorf("render judge prompt: %w", err)
	}
	return f.Encode(text + begun), nil
}

func (b *EngineBackend) adapter() string {
	if b.Adapter == "" {
		return engine.AdapterBase
	}
	return b.Adapter
}
