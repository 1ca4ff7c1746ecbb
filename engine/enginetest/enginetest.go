// Package enginetest is the conformance suite every engine.Engine must pass,
// in the spirit of database/sql's driver tests: the gateway, the judge and the
// trainer rely on these behaviours without knowing which engine runs.
package enginetest

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
)

// Options tune the suite to an engine.
type Options struct {
	// ScoreTolerance is the largest allowed |Score − Generate| logprob gap
	// (batching and cache layout change float rounding). Default 1e-3.
	ScoreTolerance float64
	// MaxTokens for the generations the suite makes. Default 12.
	MaxTokens int
}

// Run runs the whole suite against e.
func Run(t *testing.T, e engine.Engine, opts Options) {
	t.Helper()
	if opts.ScoreTolerance == 0 {
		opts.ScoreTolerance = 1e-3
	}
	if opts.MaxTokens == 0 {
		opts.MaxTokens = 12
	}
	s := suite{e: e, o: opts}
	t.Run("Info", s.info)
	t.Run("FormatRoundTrip", s.formatRoundTrip)
	t.Run("IncrementalDecoder", s.incrementalDecoder)
	t.Run("Render", s.render)
	t.Run("GreedyIsDeterministic", s.greedyDeterministic)
	t.Run("SeedIsDeterministic", s.seedDeterministic)
	t.Run("MaxTokens", s.maxTokens)
	t.Run("EmitStop", s.emitStop)
	t.Run("Cancel", s.cancel)
	t.Run("ScoreMatchesGenerate", s.scoreMatchesGenerate)
	t.Run("ConcurrentEqualsSequential", s.concurrent)
	t.Run("BaseAdapter", s.baseAdapter)
}

type suite struct {
	e engine.Engine
	o Options
}

var roundTripTexts = []string{
	"hello world",
	"  two  spaces\tand a tab\n\nnewlines ",
	"数学 and émoji 🦀 ok",
	"func main() { fmt.Println(\"hi\") }",
}

func (s suite) info(t *testing.T) {
	i := s.e.Info()
	if i.ID == "" || i.Engine == "" {
		t.Fatalf("Info() = %+v: ID and Engine must be set", i)
	}
	if i.ContextLength <= 0 {
		t.Fatalf("Info().ContextLength = %d, want > 0", i.ContextLength)
	}
}

func (s suite) formatRoundTrip(t *testing.T) {
	f := s.e.Format()
	for _, text := range roundTripTexts {
		ids := f.Encode(text)
		if len(ids) == 0 {
			t.Fatalf("Encode(%q) returned no ids", text)
		}
		if got := f.Decode(ids); got != text {
			t.Errorf("Decode(Encode(%q)) = %q", text, got)
		}
	}
}

func (s suite) incrementalDecoder(t *testing.T) {
	f := s.e.Format()
	for _, text := range roundTripTexts {
		ids := f.Encode(text)
		d := f.NewDecoder()
		var got string
		for _, id := range ids {
			got += d.Add(id)
		}
		got += d.Flush()
		if got != f.Decode(ids) {
			t.Errorf("incremental decode of %q = %q, want %q", text, got, f.Decode(ids))
		}
	}
}

func conversation() []chat.Message {
	return []chat.Message{
		{Role: chat.RoleSystem, Content: "You are a helpful assistant."},
		{Role: chat.RoleUser, Content: "Say hello."},
	}
}

func (s suite) prompt(t *testing.T) []int32 {
	t.Helper()
	f := s.e.Format()
	text, err := f.Render(conversation(), nil, engine.RenderOptions{AddGenerationPrompt: true})
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return f.Encode(text)
}

func (s suite) render(t *testing.T) {
	f := s.e.Format()
	without, err := f.Render(conversation(), nil, engine.RenderOptions{})
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	with, err := f.Render(conversation(), nil, engine.RenderOptions{AddGenerationPrompt: true})
	if err != nil {
		t.Fatalf("Render with generation prompt: %v", err)
	}
	// Some templates (the original Llama 3 one) always append the
	// generation prompt, so "with" may equal "without"; it must never
	// rewrite the conversation.
	if len(with) < len(without) || with[:len(without)] != without {
		t.Fatalf("the generation prompt must extend the rendered conversation:\nwithout: %q\nwith:    %q", without, with)
	}
	if len(f.StopIDs()) == 0 {
		t.Fatal("StopIDs() is empty")
	}
}

func (s suite) generate(t *testing.T, ctx context.Context, req engine.GenerateRequest) engine.Generation {
	t.Helper()
	g, err := s.e.Generate(ctx, req, func(engine.Token) error { return nil })
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	checkGeneration(t, req, g)
	return g
}

func checkGeneration(t *testing.T, req engine.GenerateRequest, g engine.Generation) {
	t.Helper()
	if len(g.Tokens) == 0 {
		t.Fatal("Generate returned no tokens")
	}
	if len(g.Tokens) > req.MaxTokens {
		t.Fatalf("Generate returned %d tokens, MaxTokens %d", len(g.Tokens), req.MaxTokens)
	}
	if g.FinishReason != engine.FinishStop && g.FinishReason != engine.FinishLength {
		t.Fatalf("FinishReason = %q", g.FinishReason)
	}
	if g.PromptTokens != len(req.PromptIDs) {
		t.Fatalf("PromptTokens = %d, want %d", g.PromptTokens, len(req.PromptIDs))
	}
	for i, tok := range g.Tokens {
		if tok.Logprob > 0 || math.IsNaN(float64(tok.Logprob)) || math.IsInf(float64(tok.Logprob), 0) {
			t.Fatalf("token %d (id %d): logprob %v is not a log-probability", i, tok.ID, tok.Logprob)
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

func equalIDs(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func (s suite) greedyDeterministic(t *testing.T) {
	req := engine.GenerateRequest{PromptIDs: s.prompt(t), MaxTokens: s.o.MaxTokens}
	a := s.generate(t, context.Background(), req)
	b := s.generate(t, context.Background(), req)
	if !equalIDs(ids(a), ids(b)) {
		t.Fatalf("greedy generations differ: %v vs %v", ids(a), ids(b))
	}
}

func (s suite) seedDeterministic(t *testing.T) {
	seed := int64(7)
	req := engine.GenerateRequest{PromptIDs: s.prompt(t), MaxTokens: s.o.MaxTokens,
		Sampling: engine.Sampling{Temperature: 1, TopP: 0.95, Seed: &seed}}
	a := s.generate(t, context.Background(), req)
	b := s.generate(t, context.Background(), req)
	if !equalIDs(ids(a), ids(b)) {
		t.Fatalf("seeded generations differ: %v vs %v", ids(a), ids(b))
	}
}

func (s suite) maxTokens(t *testing.T) {
	req := engine.GenerateRequest{PromptIDs: s.prompt(t), MaxTokens: 3}
	g := s.generate(t, context.Background(), req)
	if len(g.Tokens) == 3 && g.FinishReason != engine.FinishLength {
		// A stop token as the third token is the only way to end with "stop".
		last := g.Tokens[2].ID
		stop := false
		for _, id := range s.e.Format().StopIDs() {
			stop = stop || id == last
		}
		if !stop {
			t.Fatalf("3 tokens without a stop token, FinishReason = %q, want length", g.FinishReason)
		}
	}
}

func (s suite) emitStop(t *testing.T) {
	req := engine.GenerateRequest{PromptIDs: s.prompt(t), MaxTokens: s.o.MaxTokens}
	full := s.generate(t, context.Background(), req)
	if len(full.Tokens) < 3 {
		t.Skipf("greedy generation too short (%d tokens) to stop early", len(full.Tokens))
	}
	n := 0
	g, err := s.e.Generate(context.Background(), req, func(engine.Token) error {
		n++
		if n == 2 {
			return engine.ErrStop
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Generate stopped by emit: %v", err)
	}
	if len(g.Tokens) != 2 || g.FinishReason != engine.FinishStop {
		t.Fatalf("stopped after 2 emits: %d tokens, finish %q; want 2, stop", len(g.Tokens), g.FinishReason)
	}
	if n != 2 {
		t.Fatalf("emit called %d times after ErrStop, want 2", n)
	}
}

func (s suite) cancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := engine.GenerateRequest{PromptIDs: s.prompt(t), MaxTokens: 10000}
	n := 0
	done := make(chan error, 1)
	go func() {
		_, err := s.e.Generate(ctx, req, func(engine.Token) error {
			n++
			if n == 2 {
				cancel()
			}
			return nil
		})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Generate after cancel: err = %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Generate did not return within 30 s of its context being cancelled")
	}
}

// The trainer recomputes π from Score; it must be the very distribution the
// behaviour logprobs were taken from.
func (s suite) scoreMatchesGenerate(t *testing.T) {
	seed := int64(11)
	req := engine.GenerateRequest{PromptIDs: s.prompt(t), MaxTokens: s.o.MaxTokens,
		Sampling: engine.Sampling{Temperature: 0.8, TopK: 20, Seed: &seed}}
	g := s.generate(t, context.Background(), req)
	sc, err := s.e.Score(context.Background(), engine.ScoreRequest{PromptIDs: req.PromptIDs, CompletionIDs: ids(g)})
	if err != nil {
		t.Fatalf("Score: %v", err)
	}
	if len(sc.Logprobs) != len(g.Tokens) {
		t.Fatalf("Score returned %d logprobs for %d tokens", len(sc.Logprobs), len(g.Tokens))
	}
	if sc.PolicyVersion != g.PolicyVersion {
		t.Fatalf("Score ran on version %d, Generate on %d", sc.PolicyVersion, g.PolicyVersion)
	}
	for i, tok := range g.Tokens {
		if d := math.Abs(float64(sc.Logprobs[i] - tok.Logprob)); d > s.o.ScoreTolerance {
			t.Fatalf("token %d (id %d): Score %v, Generate %v (|Δ| %.2g > %.2g)", i, tok.ID, sc.Logprobs[i], tok.Logprob, d, s.o.ScoreTolerance)
		}
	}
}

func (s suite) concurrent(t *testing.T) {
	base := s.prompt(t)
	const n = 6
	reqs := make([]engine.GenerateRequest, n)
	want := make([]engine.Generation, n)
	for i := range reqs {
		// Different prompt lengths so batched decoding mixes positions.
		p := append(append([]int32(nil), base[:len(base)-i%3]...), base[len(base)-i%3:]...)
		p = append(s.e.Format().Encode(string(rune('a'+i))+" "), p...)
		reqs[i] = engine.GenerateRequest{PromptIDs: p, MaxTokens: s.o.MaxTokens}
		want[i] = s.generate(t, context.Background(), reqs[i])
	}
	got := make([]engine.Generation, n)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = s.e.Generate(context.Background(), reqs[i], func(engine.Token) error { return nil })
		}()
	}
	wg.Wait()
	for i := range reqs {
		if errs[i] != nil {
			t.Fatalf("concurrent Generate %d: %v", i, errs[i])
		}
		if !equalIDs(ids(got[i]), ids(want[i])) {
			t.Errorf("request %d: concurrent %v, sequential %v", i, ids(got[i]), ids(want[i]))
			continue
		}
		for j := range got[i].Tokens {
			if d := math.Abs(float64(got[i].Tokens[j].Logprob - want[i].Tokens[j].Logprob)); d > s.o.ScoreTolerance {
				t.Errorf("request %d token %d: concurrent logprob %v, sequential %v", i, j, got[i].Tokens[j].Logprob, want[i].Tokens[j].Logprob)
			}
		}
	}
}

func (s suite) baseAdapter(t *testing.T) {
	req := engine.GenerateRequest{PromptIDs: s.prompt(t), MaxTokens: 4, Adapter: engine.AdapterBase}
	g := s.generate(t, context.Background(), req)
	if g.PolicyVersion != 0 {
		t.Fatalf("base adapter generation reports policy version %d, want 0", g.PolicyVersion)
	}
}
