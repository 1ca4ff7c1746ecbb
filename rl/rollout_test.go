package rl

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/native"
	"github.com/clawrl/clawrl/model"
	"github.com/clawrl/clawrl/safetensors"
	"github.com/clawrl/clawrl/tokenizer/vocab"
	"github.com/clawrl/clawrl/train"
)

func TestEvenTokenReward(t *testing.T) {
	for _, tc := range []struct {
		name string
		ids  []int32
		want float64
	}{
		{"empty", nil, 0},
		{"all even", []int32{0, 2, 4}, 1},
		{"all odd", []int32{1, 3}, 0},
		{"mixed", []int32{1, 2, 3, 4}, 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := EvenTokenReward([]int32{1}, tc.ids); got != tc.want {
				t.Fatalf("EvenTokenReward(%v) = %v, want %v", tc.ids, got, tc.want)
			}
		})
	}
}

// seedGenerator is a test double of the engine: its completion is a
// function of the request's seed and prompt, so the test can tell which
// request produced which sample.
type seedGenerator struct {
	mu    sync.Mutex
	seeds []int64
	fail  int64 // a seed that fails; -1 none
}

func (g *seedGenerator) Generate(ctx context.Context, req engine.GenerateRequest, emit func(engine.Token) error) (engine.Generation, error) {
	s := *req.Sampling.Seed
	g.mu.Lock()
	g.seeds = append(g.seeds, s)
	g.mu.Unlock()
	if s == g.fail {
		return engine.Generation{}, errors.New("boom")
	}
	var gen engine.Generation
	for i := range req.MaxTokens {
		tok := engine.Token{ID: int32(s) + int32(i)*int32(len(req.PromptIDs)), Logprob: -float32(s)}
		if err := emit(tok); err != nil {
			return gen, err
		}
		gen.Tokens = append(gen.Tokens, tok)
	}
	return gen, nil
}

func TestRollout(t *testing.T) {
	ctx := context.Background()
	prompts := [][]int32{{5, 6}, {7, 8, 9}}
	seed := int64(100)
	cfg := RolloutConfig{Group: 3, MaxTokens: 4, Sampling: engine.Sampling{Temperature: 1, Seed: &seed}}
	g := &seedGenerator{fail: -1}
	samples, st, err := Rollout(ctx, g, prompts, cfg, EvenTokenReward)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(g.seeds)
	if want := []int64{100, 101, 102, 103, 104, 105}; !slices.Equal(g.seeds, want) {
		t.Fatalf("seeds %v, want one per completion %v", g.seeds, want)
	}
	if st != (RolloutStats{Completions: 6, PromptTokens: 3*2 + 3*3, CompletionTokens: 24}) {
		t.Fatalf("stats %+v", st)
	}
	for k, s := range samples {
		i := k / 3
		seed := int64(100 + k)
		if s.Group != i+1 || !slices.Equal(s.PromptIDs, prompts[i]) {
			t.Fatalf("sample %d: group %d prompt %v, want group %d prompt %v", k, s.Group, s.PromptIDs, i+1, prompts[i])
		}
		if s.ResponseIDs[0] != int32(seed) || s.BehaviourLogprobs[3] != -float32(seed) {
			t.Fatalf("sample %d: response %v logprobs %v, want those of seed %d", k, s.ResponseIDs, s.BehaviourLogprobs, seed)
		}
		if s.Reward != EvenTokenReward(nil, s.ResponseIDs) {
			t.Fatalf("sample %d: reward %v", k, s.Reward)
		}
	}
	// Group 1's prompt has an even length: ids keep the seed's parity, so
	// rewards differ between completions and GRPO has a signal.
	if samples[0].Reward == samples[1].Reward {
		t.Fatalf("rewards %v and %v of one group are equal", samples[0].Reward, samples[1].Reward)
	}
}

func TestRolloutErrors(t *testing.T) {
	ctx := context.Background()
	seed := int64(0)
	ok := RolloutConfig{Group: 2, MaxTokens: 2, Sampling: engine.Sampling{Seed: &seed}}
	for _, tc := range []struct {
		name    string
		prompts [][]int32
		cfg     RolloutConfig
		reward  RewardFunc
		fail    int64
		want    string
	}{
		{"no group", [][]int32{{1}}, RolloutConfig{MaxTokens: 2}, EvenTokenReward, -1, "group size 0"},
		{"no reward", [][]int32{{1}}, ok, nil, -1, "no reward function"},
		{"empty prompt", [][]int32{{1}, {}}, ok, EvenTokenReward, -1, "prompt 1 is empty"},
		{"generation fails", [][]int32{{1}, {2}}, ok, EvenTokenReward, 3, "prompt 1, completion 1: boom"},
		{"empty completion", [][]int32{{1}}, RolloutConfig{Group: 2, Sampling: engine.Sampling{Seed: &seed}}, EvenTokenReward, -1, "completion 0 of prompt 0 is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Rollout(ctx, &seedGenerator{fail: tc.fail}, tc.prompts, tc.cfg, tc.reward)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestGRPOStepNative runs the step `clawrl bench grpo` times, on the real
// engine and trainer: a rollout of the base policy, a PPO-clip step on the
// group-normalised rewards, and the new adapter published, after which the
// engine samples from it.
func TestGRPOStepNative(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg, err := model.NewConfig(model.Qwen3, model.SizeTiny)
	if err != nil {
		t.Fatal(err)
	}
	if err := model.WriteRandom(dir, cfg, 7, safetensors.F32); err != nil {
		t.Fatal(err)
	}
	if err := vocab.Write(string(model.Qwen3), dir); err != nil {
		t.Fatal(err)
	}
	eng, err := native.Open(dir, native.Options{PrefixCacheBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	w, err := train.FromModel(eng.Model(), false)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := train.New(w, train.Config{AdamW: train.DefaultAdamW(1e-2), Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	f := eng.Format()
	prompts := [][]int32{f.Encode("Say something even."), f.Encode("And once more, please.")}
	seed := int64(1)
	rc := RolloutConfig{Group: 4, MaxTokens: 6, Sampling: engine.Sampling{Temperature: 1, Seed: &seed}}
	samples, st, err := Rollout(ctx, eng, prompts, rc, EvenTokenReward)
	if err != nil {
		t.Fatal(err)
	}
	if st.Completions != 8 || st.CompletionTokens == 0 {
		t.Fatalf("stats %+v", st)
	}
	stepCfg := StepConfig{Loss: LossConfig{Kind: LossPPO, ClipLow: 0.2, ClipHigh: 0.28}, Advantage: AdvantageConfig{Method: MethodRL}}
	m, err := PolicyStep(ctx, tr, stepCfg, samples)
	if err != nil {
		t.Fatal(err)
	}
	if m.Samples != 8 || m.Tokens == 0 || m.GradNorm == 0 || math.IsNaN(m.Loss) {
		t.Fatalf("metrics %+v: want a step over 8 samples with a gradient", m)
	}
	adir := t.TempDir()
	if err := tr.SaveAdapter(adir); err != nil {
		t.Fatal(err)
	}
	if err := eng.Publish(ctx, 1, adir); err != nil {
		t.Fatal(err)
	}
	seed = 1
	again, _, err := Rollout(ctx, eng, prompts[:1], RolloutConfig{Group: 1, MaxTokens: 6, Sampling: rc.Sampling}, EvenTokenReward)
	if err != nil {
		t.Fatal(err)
	}
	// Same seed, same prompt, new policy: the sampled tokens' logprobs move.
	if slices.Equal(again[0].BehaviourLogprobs, samples[0].BehaviourLogprobs) {
		t.Fatalf("logprobs %v unchanged after publishing the trained adapter", again[0].BehaviourLogprobs)
	}
}
