package vllm

import (
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"encoding/json"
	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/enginetest"

	"github.com/clawrl/clawrl/engine/native"
	"github.com/clawrl/clawrl/engine/vllm/vllmtest"
)

// realSetup is one tiny checkpoint served by real vLLM (one or two
// replicas) and by the native engine, shared by the tests of this file:
// vLLM on CPU takes minutes to start.
type realSetup struct {
	dir     string
	servers []*vllmtest.Server
	native  *native.Engine
	python  string
}

var (
	setupOnce    sync.Once
	setup        realSetup
	testTempRoot string
)

func TestMain(m *testing.M) {
	var err error
	if testTempRoot, err = os.MkdirTemp("", "clawrl-vllm-"); err != nil {
		panic(err)
	}
	code := m.Run()
	for _, s := range setup.servers {
		s.Kill()
	}
	os.RemoveAll(testTempRoot) //nolint:errcheck // a temp folder
	os.Exit(code)
}

func real(t *testing.T) *realSetup {
	t.Helper()
	if testing.Short() {
		t.Skip("starts real vLLM servers")
	}
	python := vllmtest.Python(t)
	setupOnce.Do(func() {
		// Not t.TempDir: the servers outlive this test.
		setup.dir = filepath.Join(testTempRoot, "ckpt")
		vllmtest.WriteCheckpoint(t, setup.dir)
		setup.python = python
		srv, err := vllmtest.StartServer(python, setup.dir)
		if srv != nil {
			setup.servers = []*vllmtest.Server{srv}
		}
		if err != nil {
			t.Fatal(err)
		}
		n, err := native.Open(setup.dir, native.Options{})
		if err != nil {
			t.Fatal(err)
		}
		setup.native = n
	})
	if setup.native == nil {
		t.Fatal("vLLM setup failed in an earlier test")
	}
	return &setup
}

func openEngine(t *testing.T, urls ...string) *Engine {
	t.Helper()
	e, err := Open(t.Context(), urls, Options{ModelDir: setup.dir, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// TestConformance runs the engine suite on real vLLM.
func TestConformance(t *testing.T) {
	s := real(t)
	e := openEngine(t, s.servers[0].URL)
	// vLLM's CPU kernels batch and reduce differently from one request to
	// the next; logprobs agree to ~1e-4 on this model.
	enginetest.Run(t, e, enginetest.Options{ScoreTolerance: 2e-3})
}

// TestMatchesNative: vLLM and clawrl's own forward pass read the same
// checkpoint; the tokens vLLM samples greedily, and their logprobs, are what
// the native engine scores for them (and Score agrees between the two).
func TestMatchesNative(t *testing.T) {
	s := real(t)
	e := openEngine(t, s.servers[0].URL)
	f := e.Format()
	text, err := f.Render([]chat.Message{{Role: chat.RoleUser, Content: "Name three colours."}}, nil, chat.RenderOptions{AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	prompt := f.Encode(text)
	g, err := e.Generate(t.Context(), engine.GenerateRequest{PromptIDs: prompt, MaxTokens: 16}, func(engine.Token) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Tokens) == 0 {
		t.Fatal("no tokens")
	}
	ids := make([]int32, len(g.Tokens))
	for i, tok := range g.Tokens {
		ids[i] = tok.ID
	}
	ref, err := s.native.Score(t.Context(), engine.ScoreRequest{PromptIDs: prompt, CompletionIDs: ids})
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.Score(t.Context(), engine.ScoreRequest{PromptIDs: prompt, CompletionIDs: ids})
	if err != nil {
		t.Fatal(err)
	}
	for i, tok := range g.Tokens {
		if d := math.Abs(float64(tok.Logprob - ref.Logprobs[i])); d > 2e-3 {
			t.Errorf("token %d (id %d): vLLM logprob %v, native %v", i, tok.ID, tok.Logprob, ref.Logprobs[i])
		}
		if d := math.Abs(float64(got.Logprobs[i] - ref.Logprobs[i])); d > 2e-3 {
			t.Errorf("token %d (id %d): vLLM score %v, native %v", i, tok.ID, got.Logprobs[i], ref.Logprobs[i])
		}
	}
	t.Logf("%d tokens; finish %s; first logprobs vLLM %v native %v", len(g.Tokens), g.FinishReason, g.Tokens[0].Logprob, ref.Logprobs[0])
}

// TestPublishServesAdapter: a PEFT adapter published as version 1 is loaded
// into vLLM under its versioned name, requests run on it, and it scores
// what the native engine scores with the same adapter; version 2 replaces
// it and version 1 is unloaded once nothing holds it.
func TestPublishServesAdapter(t *testing.T) {
	s := real(t)
	e := openEngine(t, s.servers[0].URL)
	adapterDir := filepath.Join(t.TempDir(), "v1")
	a, err := s.native.Model().NewAdapter(8, 16, nil, 3)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, layer := range a.Layers {
		for _, lo := range layer {
			if lo == nil {
				continue
			}
			for i := range lo.B {
				lo.B[i] = float32(rng.NormFloat64() * 0.05)
			}
		}
	}
	if err := a.Save(adapterDir); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := e.Publish(ctx, 1, adapterDir); err != nil {
		t.Fatal(err)
	}
	if err := s.native.Publish(ctx, 1, adapterDir); err != nil {
		t.Fatal(err)
	}
	prompt := e.Format().Encode("The adapter changes this answer")
	completion := e.Format().Encode(" quite a lot, or not at all.")
	for _, adapter := range []string{engine.AdapterCurrent, "v1", engine.AdapterBase} {
		got, err := e.Score(ctx, engine.ScoreRequest{PromptIDs: prompt, CompletionIDs: completion, Adapter: adapter})
		if err != nil {
			t.Fatalf("score on %q: %v", adapter, err)
		}
		want, err := s.native.Score(ctx, engine.ScoreRequest{PromptIDs: prompt, CompletionIDs: completion, Adapter: adapter})
		if err != nil {
			t.Fatal(err)
		}
		if got.PolicyVersion != want.PolicyVersion {
			t.Errorf("adapter %q: vLLM version %d, native %d", adapter, got.PolicyVersion, want.PolicyVersion)
		}
		for i := range want.Logprobs {
			if d := math.Abs(float64(got.Logprobs[i] - want.Logprobs[i])); d > 2e-3 {
				t.Errorf("adapter %q token %d: vLLM %v, native %v", adapter, i, got.Logprobs[i], want.Logprobs[i])
			}
		}
	}
	g, err := e.Generate(ctx, engine.GenerateRequest{PromptIDs: prompt, MaxTokens: 4}, func(engine.Token) error { return nil })
	if err != nil || g.PolicyVersion != 1 {
		t.Fatalf("generation after publish: version %d, %v", g.PolicyVersion, err)
	}
	// Version 2 (the same weights, a new name) replaces 1, which is unloaded.
	if err := e.Publish(ctx, 2, adapterDir); err != nil {
		t.Fatal(err)
	}
	models := servedModels(t, s.servers[0].URL)
	if !models[adapterName(2)] || models[adapterName(1)] {
		t.Errorf("vLLM serves %v after publishing v2: want %s and not %s", models, adapterName(2), adapterName(1))
	}
}

// TestFailover: two replicas with version 1 published on both; the one a
// session maps to is killed; the session's next requests go to the other and
// still run on version 1.
func TestFailover(t *testing.T) {
	s := real(t)
	second := vllmtest.Start(t, s.python, s.dir)
	e := openEngine(t, s.servers[0].URL, second.URL)
	ctx := t.Context()
	// Find a session the second replica serves first.
	session := ""
	for i := range 64 {
		key := "session-" + string(rune('a'+i))
		if e.ReplicaOrder(key)[0] == second.URL {
			session = key
			break
		}
	}
	adapterDir := filepath.Join(t.TempDir(), "v1")
	a, err := s.native.Model().NewAdapter(4, 8, nil, 9)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Save(adapterDir); err != nil {
		t.Fatal(err)
	}
	if err := e.Publish(ctx, 1, adapterDir); err != nil {
		t.Fatal(err)
	}
	prompt := e.Format().Encode("Keep answering, whichever replica is left.")
	req := engine.GenerateRequest{PromptIDs: prompt, MaxTokens: 6, Affinity: session}
	before, err := e.Generate(ctx, req, func(engine.Token) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	second.Kill()
	for i := range 3 {
		after, err := e.Generate(ctx, req, func(engine.Token) error { return nil })
		if err != nil {
			t.Fatalf("request %d after the kill: %v", i, err)
		}
		if after.PolicyVersion != 1 {
			t.Errorf("request %d after failover ran on version %d, want 1", i, after.PolicyVersion)
		}
		if len(after.Tokens) != len(before.Tokens) || after.Tokens[0].ID != before.Tokens[0].ID {
			t.Errorf("request %d after failover: %d tokens, first %d; before: %d, first %d", i, len(after.Tokens), after.Tokens[0].ID, len(before.Tokens), before.Tokens[0].ID)
		}
	}
}

// servedModels lists the names a vLLM server answers to.
func servedModels(t *testing.T, url string) map[string]bool {
	t.Helper()
	resp, err := http.Get(url + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range body.Data {
		out[m.ID] = true
	}
	return out
}
