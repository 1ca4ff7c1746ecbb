package native

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/enginetest"
	"github.com/clawrl/clawrl/model"
	"github.com/clawrl/clawrl/safetensors"
	"github.com/clawrl/clawrl/tokenizer/vocab"
)

// tinyCheckpoint writes a random tiny checkpoint of family with the real
// tokenizer files, as `clawrl model new` does.
func tinyCheckpoint(t *testing.T, family model.Family, vocabFamily string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), string(family)+"-tiny")
	cfg, err := model.NewConfig(family, model.SizeTiny)
	if err != nil {
		t.Fatal(err)
	}
	if err := model.WriteRandom(dir, cfg, 1, safetensors.F32); err != nil {
		t.Fatal(err)
	}
	tj, tc, err := vocab.Files(vocabFamily)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), tj, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), tc, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func openTiny(t *testing.T, family model.Family, vocabFamily string) *Engine {
	t.Helper()
	e, err := Open(tinyCheckpoint(t, family, vocabFamily), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func TestConformance(t *testing.T) {
	for _, tc := range []struct {
		family model.Family
		vocab  string
	}{{model.Qwen3, "qwen3"}, {model.Qwen2, "qwen2"}, {model.Llama, "llama"}} {
		t.Run(string(tc.family), func(t *testing.T) {
			enginetest.Run(t, openTiny(t, tc.family, tc.vocab), enginetest.Options{})
		})
	}
}

func prompt(t *testing.T, e *Engine) []int32 {
	t.Helper()
	text, err := e.Format().Render([]chat.Message{{Role: chat.RoleUser, Content: "hi"}}, nil, engine.RenderOptions{AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	return e.Format().Encode(text)
}

// A published adapter serves new requests; a request admitted before the
// publish finishes on the version it started with, and explicit versions
// and the base stay selectable.
func TestPublishSwapsVersions(t *testing.T) {
	e := openTiny(t, model.Qwen3, "qwen3")
	ids := prompt(t, e)
	ctx := context.Background()

	base, err := e.Generate(ctx, engine.GenerateRequest{PromptIDs: ids, MaxTokens: 4}, func(engine.Token) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if base.PolicyVersion != 0 {
		t.Fatalf("before any publish: version %d, want 0", base.PolicyVersion)
	}

	// Start a long generation, publish while it runs, check its version.
	started := make(chan struct{})
	release := make(chan struct{})
	type result struct {
		g   engine.Generation
		err error
	}
	inflight := make(chan result, 1)
	go func() {
		n := 0
		g, err := e.Generate(ctx, engine.GenerateRequest{PromptIDs: ids, MaxTokens: 8}, func(engine.Token) error {
			n++
			if n == 1 {
				close(started)
				<-release
			}
			return nil
		})
		inflight <- result{g, err}
	}()
	<-started

	a, err := e.Model().NewAdapter(4, 8, []string{"q_proj", "v_proj"}, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range a.Layers {
		for _, lo := range l {
			if lo == nil {
				continue
			}
			for i := range lo.B {
				lo.B[i] = 0.05 * float32(i%7-3)
			}
		}
	}
	dir := filepath.Join(t.TempDir(), "v1")
	if err := a.Save(dir); err != nil {
		t.Fatal(err)
	}
	if err := e.Publish(ctx, 1, dir); err != nil {
		t.Fatal(err)
	}
	close(release)
	r := <-inflight
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.g.PolicyVersion != 0 {
		t.Fatalf("in-flight request finished on version %d, want 0 (the version it started on)", r.g.PolicyVersion)
	}

	next, err := e.Generate(ctx, engine.GenerateRequest{PromptIDs: ids, MaxTokens: 4}, func(engine.Token) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if next.PolicyVersion != 1 || e.Version() != 1 {
		t.Fatalf("after publish: generation on %d, engine at %d; want 1", next.PolicyVersion, e.Version())
	}
	sBase, err := e.Score(ctx, engine.ScoreRequest{PromptIDs: ids, CompletionIDs: []int32{base.Tokens[0].ID}, Adapter: engine.AdapterBase})
	if err != nil {
		t.Fatal(err)
	}
	sV1, err := e.Score(ctx, engine.ScoreRequest{PromptIDs: ids, CompletionIDs: []int32{base.Tokens[0].ID}, Adapter: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	if sBase.PolicyVersion != 0 || sV1.PolicyVersion != 1 {
		t.Fatalf("Score versions: base %d, v1 %d", sBase.PolicyVersion, sV1.PolicyVersion)
	}
	if sBase.Logprobs[0] == sV1.Logprobs[0] {
		t.Fatalf("adapter changed nothing: logprob %v under both", sBase.Logprobs[0])
	}
	if _, err := e.Score(ctx, engine.ScoreRequest{PromptIDs: ids, CompletionIDs: []int32{1}, Adapter: "v9"}); err == nil {
		t.Fatal("Score with an unknown version succeeded")
	}
}

func TestPromptTooLong(t *testing.T) {
	e := openTiny(t, model.Qwen3, "qwen3")
	ids := make([]int32, e.Info().ContextLength+1)
	if _, err := e.Generate(context.Background(), engine.GenerateRequest{PromptIDs: ids, MaxTokens: 1}, func(engine.Token) error { return nil }); err == nil {
		t.Fatal("a prompt longer than the context window was accepted")
	}
}

// warmAndCold opens one tiny checkpoint twice: with the prefix cache (the
// default) and without it.
func warmAndCold(t *testing.T) (warm, cold *Engine) {
	t.Helper()
	dir := tinyCheckpoint(t, model.Qwen3, "qwen3")
	warm, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { warm.Close() })
	cold, err = Open(dir, Options{PrefixCacheBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cold.Close() })
	return warm, cold
}

// A follow-up request that extends an earlier conversation reuses its KV
// cache and gets exactly what a cold engine computes.
func TestPrefixCacheReuse(t *testing.T) {
	warm, cold := warmAndCold(t)
	ctx := context.Background()
	gen := func(e *Engine, ids []int32) engine.Generation {
		t.Helper()
		g, err := e.Generate(ctx, engine.GenerateRequest{PromptIDs: ids, MaxTokens: 6}, func(engine.Token) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	first := prompt(t, warm)
	g1 := gen(warm, first)
	follow := append(append([]int32(nil), first...), ids(g1)...)
	follow = append(follow, warm.Format().Encode("<|im_end|>\n<|im_start|>user\nmore<|im_end|>\n<|im_start|>assistant\n")...)
	got, want := gen(warm, follow), gen(cold, follow)
	if warm.prefix.hits != 1 || warm.prefix.reusedTokens < int64(len(first)) {
		t.Fatalf("prefix cache: %d hits, %d tokens reused; want 1 hit of at least %d", warm.prefix.hits, warm.prefix.reusedTokens, len(first))
	}
	for i := range want.Tokens {
		if got.Tokens[i].ID != want.Tokens[i].ID || math.Abs(float64(got.Tokens[i].Logprob-want.Tokens[i].Logprob)) > 1e-4 {
			t.Fatalf("token %d with the cache %+v, cold %+v", i, got.Tokens[i], want.Tokens[i])
		}
	}
}

// Requests that arrive together with one prompt (a turn's best-of-N
// answers) start from a copy of what a running sequence already prefilled,
// and each gets exactly what a cold engine computes: greedy, seeded, and a
// prompt that shares only part of it.
func TestPrefixSharedWhileRunning(t *testing.T) {
	warm, cold := warmAndCold(t)
	ctx := context.Background()
	p := prompt(t, warm)
	half := append(append([]int32(nil), p[:len(p)/2]...), warm.Format().Encode("other words")...)
	seed := int64(7)
	reqs := []engine.GenerateRequest{
		{PromptIDs: p, MaxTokens: 8},
		{PromptIDs: p, MaxTokens: 8, Sampling: engine.Sampling{Temperature: 1, Seed: &seed}},
		{PromptIDs: half, MaxTokens: 8},
	}
	version, adapter, err := warm.resolve("")
	if err != nil {
		t.Fatal(err)
	}
	// Admitted as the scheduler admits what waits for it, each while the
	// ones before run (its own goroutine waits on an empty queue).
	var active []*running
	var rs []*request
	for _, q := range reqs {
		r := warm.newRequest(ctx, q, version, adapter)
		rs = append(rs, r)
		active = warm.admit(active, r)
	}
	if len(active) != len(reqs) {
		t.Fatalf("%d of %d requests running after their first token", len(active), len(reqs))
	}
	shared := int64(len(p)-1) + int64(commonPrefix(p, half[:len(half)-1]))
	if warm.prefix.copies != 2 || warm.prefix.reusedTokens != shared || warm.prefix.hits != 0 {
		t.Fatalf("prefix: %d copies, %d hits, %d tokens reused; want 2 copies of %d tokens in all", warm.prefix.copies, warm.prefix.hits, warm.prefix.reusedTokens, shared)
	}
	for len(active) > 0 {
		active = warm.step(active)
	}
	for i, q := range reqs {
		want, err := cold.Generate(ctx, q, func(engine.Token) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		rs[i].mu.Lock()
		got := rs[i].pending
		rs[i].mu.Unlock()
		if len(got) != len(want.Tokens) {
			t.Fatalf("request %d: %d tokens from the shared prefix, %d cold", i, len(got), len(want.Tokens))
		}
		for j := range want.Tokens {
			if got[j].ID != want.Tokens[j].ID || math.Abs(float64(got[j].Logprob-want.Tokens[j].Logprob)) > 1e-4 {
				t.Fatalf("request %d token %d from the shared prefix %+v, cold %+v", i, j, got[j], want.Tokens[j])
			}
		}
	}
}

func ids(g engine.Generation) []int32 {
	out := make([]int32, len(g.Tokens))
	for i, t := range g.Tokens {
		out[i] = t.ID
	}
	return out
}

// SetStartAdapter: version 0 (the current policy before any publish) plays
// the adapter, the base weights stay selectable, and a published version
// still takes over.
func TestSetStartAdapter(t *testing.T) {
	e := openTiny(t, model.Qwen3, "qwen3")
	ids := prompt(t, e)
	ctx := context.Background()
	gen := func(adapter string) engine.Generation {
		t.Helper()
		g, err := e.Generate(ctx, engine.GenerateRequest{PromptIDs: ids, MaxTokens: 6, Adapter: adapter}, func(engine.Token) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	same := func(a, b engine.Generation) bool {
		for i := range a.Tokens {
			if i >= len(b.Tokens) || a.Tokens[i].ID != b.Tokens[i].ID || a.Tokens[i].Logprob != b.Tokens[i].Logprob {
				return false
			}
		}
		return len(a.Tokens) == len(b.Tokens)
	}
	base := gen(engine.AdapterBase)
	a, err := e.Model().NewAdapter(4, 8, []string{"q_proj", "v_proj"}, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range a.Layers {
		for _, lo := range l {
			if lo == nil {
				continue
			}
			for i := range lo.B {
				lo.B[i] = 0.5 * float32(i%7-3)
			}
		}
	}
	dir := filepath.Join(t.TempDir(), "start")
	if err := a.Save(dir); err != nil {
		t.Fatal(err)
	}
	if err := e.SetStartAdapter(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing start adapter was accepted")
	}
	if err := e.SetStartAdapter(dir); err != nil {
		t.Fatal(err)
	}
	start, v0 := gen(engine.AdapterCurrent), gen("v0")
	if start.PolicyVersion != 0 || same(start, base) || !same(start, v0) {
		t.Errorf("version %d; current equals base: %v, equals v0: %v (want the start adapter, unlike base)", start.PolicyVersion, same(start, base), same(start, v0))
	}
	if again := gen(engine.AdapterBase); !same(again, base) {
		t.Error("the base weights changed with a start adapter")
	}
	if err := e.Publish(ctx, 1, dir); err != nil {
		t.Fatal(err)
	}
	if g := gen(engine.AdapterCurrent); g.PolicyVersion != 1 {
		t.Errorf("after publishing v1: version %d", g.PolicyVersion)
	}
}
