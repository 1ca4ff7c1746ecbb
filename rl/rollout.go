package rl

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/clawrl/clawrl/engine"
)

// GRPO's sampling phase: n completions of each prompt from the policy,
// scored by a reward function and tied together by Group, so PolicyStep
// normalises each reward within its prompt's group.

// Generator is the part of engine.Engine a rollout needs.
type Generator interface {
	Generate(ctx context.Context, req engine.GenerateRequest, emit func(engine.Token) error) (engine.Generation, error)
}

// RewardFunc scores one completion of a prompt.
type RewardFunc func(prompt, completion []int32) float64

// RolloutConfig configures Rollout.
type RolloutConfig struct {
	Group     int // completions per prompt (GRPO's G); must be ≥ 1
	MaxTokens int // new tokens per completion
	// Sampling is every completion's sampling; a non-nil Seed is the base
	// of per-completion seeds (Seed + index), since completions of one
	// prompt sharing a seed would be identical and their advantages 0.
	Sampling engine.Sampling
	Adapter  string // engine.AdapterCurrent (the newest published policy) by default
}

// RolloutStats describe a rollout.
type RolloutStats struct {
	Completions      int
	PromptTokens     int // summed over completions (each reads its prompt)
	CompletionTokens int
}

// Rollout generates cfg.Group completions of every prompt, all submitted
// at once so a batching engine decodes them together, and scores each with
// reward. Sample k = i·Group + j is prompt i's j-th completion, with
// Group i+1 and the engine's logprobs as its behaviour logprobs.
func Rollout(ctx context.Context, gen Generator, prompts [][]int32, cfg RolloutConfig, reward RewardFunc) ([]TrainSample, RolloutStats, error) {
	if cfg.Group < 1 {
		return nil, RolloutStats{}, fmt.Errorf("rollout: group size %d, want ≥ 1", cfg.Group)
	}
	if reward == nil {
		return nil, RolloutStats{}, errors.New("rollout: no reward function")
	}
	for i, p := range prompts {
		if len(p) == 0 {
			return nil, RolloutStats{}, fmt.Errorf("rollout: prompt %d is empty", i)
		}
	}
	n := len(prompts) * cfg.Group
	out := make([]TrainSample, n)
	errs := make([]error, n)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for k := range n {
		i := k / cfg.Group
		req := engine.GenerateRequest{PromptIDs: prompts[i], MaxTokens: cfg.MaxTokens, Sampling: cfg.Sampling, Adapter: cfg.Adapter}
		if s := cfg.Sampling.Seed; s != nil {
			seed := *s + int64(k)
			req.Sampling.Seed = &seed
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			g, err := gen.Generate(ctx, req, func(engine.Token) error { return nil })
			if err != nil {
				errs[k] = fmt.Errorf("rollout: prompt %d, completion %d: %w", i, k%cfg.Group, err)
				cancel()
				return
			}
			ids := make([]int32, len(g.Tokens))
			lps := make([]float32, len(g.Tokens))
			for t, tok := range g.Tokens {
				ids[t], lps[t] = tok.ID, tok.Logprob
			}
			out[k] = TrainSample{PromptIDs: prompts[i], ResponseIDs: ids, BehaviourLogprobs: lps, Group: i + 1}
		}()
	}
	wg.Wait()
	// The first failure cancels the others; report it, not their
	// cancellations.
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return nil, RolloutStats{}, err
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, RolloutStats{}, err
	}
	st := RolloutStats{Completions: n}
	for k := range out {
		if len(out[k].ResponseIDs) == 0 {
			return nil, RolloutStats{}, fmt.Errorf("rollout: completion %d of prompt %d is empty", k%cfg.Group, k/cfg.Group)
		}
		out[k].Reward = reward(out[k].PromptIDs, out[k].ResponseIDs)
		st.PromptTokens += len(out[k].PromptIDs)
		st.CompletionTokens += len(out[k].ResponseIDs)
	}
	return out, st, nil
}

// EvenTokenReward is a fixed, model-free reward for benchmarks: the
// fraction of completion tokens whose id is even. Cheap, deterministic and
// it varies between completions, so group advantages are not all 0.
func EvenTokenReward(_, completion []int32) float64 {
	if len(completion) == 0 {
		return 0
	}
	even := 0
	for _, id := range completion {
		if id%2 == 0 {
			even++
		}
	}
	return float64(even) / float64(len(completion))
}
