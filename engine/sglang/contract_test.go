package sglang

// Contract tests: SGLang itself needs a GPU (no CPU build runs here), so
// these tests serve SGLang's documented HTTP shapes (see package sglangtest
// for the sources: docs/basic_usage/sampling_params.md, tokenizer_manager.py
// and http_server.py of sgl-project/sglang) from a stand-in server whose
// tokens and logprobs are clawrl's native engine's, and check that the
// engine speaks them and keeps the remote-engine semantics (versions,
// replicas, failover, errors).

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/enginetest"
	"github.com/clawrl/clawrl/engine/native"
	"github.com/clawrl/clawrl/engine/remote"
	"github.com/clawrl/clawrl/engine/sglang/sglangtest"
	"github.com/clawrl/clawrl/engine/vllm/vllmtest"
)

var (
	nativeOnce sync.Once
	nativeEng  *native.Engine
	ckptDir    string
	nativeErr  error
)

// tiny is the shared checkpoint and a native engine on it.
func tiny(t *testing.T) (string, *native.Engine) {
	t.Helper()
	nativeOnce.Do(func() {
		dir, err := osMkdirTemp()
		if err != nil {
			nativeErr = err
			return
		}
		ckptDir = filepath.Join(dir, "ckpt")
		vllmtest.WriteCheckpoint(t, ckptDir)
		nativeEng, nativeErr = native.Open(ckptDir, native.Options{})
	})
	if nativeErr != nil {
		t.Fatal(nativeErr)
	}
	return ckptDir, nativeEng
}

// newNative is a native engine of its own (one per fake replica: adapters
// published to one do not leak into another).
func newNative(t *testing.T) *native.Engine {
	t.Helper()
	dir, _ := tiny(t)
	n, err := native.Open(dir, native.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func openEngine(t *testing.T, urls ...string) *Engine {
	t.Helper()
	dir, _ := tiny(t)
	e, err := Open(t.Context(), urls, Options{ModelDir: dir, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func writeAdapter(t *testing.T, n *native.Engine, seed uint64) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), fmt.Sprintf("adapter-%d", seed))
	a, err := n.Model().NewAdapter(4, 8, nil, seed)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 1))
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
	if err := a.Save(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func lastRequest(t *testing.T, f *sglangtest.Fake) map[string]any {
	t.Helper()
	reqs := f.Requests()
	if len(reqs) == 0 {
		t.Fatal("no /generate request")
	}
	return reqs[len(reqs)-1]
}

// TestContractConformance runs the engine suite through the SGLang wire
// shapes, streamed cumulatively (SGLang's default) and incrementally.
func TestContractConformance(t *testing.T) {
	for _, incremental := range []bool{false, true} {
		t.Run(fmt.Sprintf("incremental=%v", incremental), func(t *testing.T) {
			f := sglangtest.New(t, newNative(t))
			f.SetIncremental(incremental)
			enginetest.Run(t, openEngine(t, f.URL), enginetest.Options{})
		})
	}
}

// TestContractMatchesModel: what the engine returns through SGLang's shapes
// is exactly what the model sampled and scores, and the requests carry the
// documented fields.
func TestContractMatchesModel(t *testing.T) {
	n := newNative(t)
	f := sglangtest.New(t, n)
	e := openEngine(t, f.URL)
	if info := e.Info(); info.Engine != "sglang" || info.ID != "tiny-qwen3" || info.ContextLength != 2048 {
		t.Errorf("info %+v", info)
	}
	fm := e.Format()
	text, err := fm.Render([]chat.Message{{Role: chat.RoleUser, Content: "Name three colours."}}, nil, chat.RenderOptions{AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	prompt := fm.Encode(text)
	req := engine.GenerateRequest{PromptIDs: prompt, MaxTokens: 10, TopLogprobs: 3}
	g, err := e.Generate(t.Context(), req, func(engine.Token) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	body := lastRequest(t, f)
	sp, _ := body["sampling_params"].(map[string]any)
	if body["return_logprob"] != true || body["stream"] != true || body["logprob_start_len"] != -1.0 || body["top_logprobs_num"] != 3.0 ||
		len(body["input_ids"].([]any)) != len(prompt) || sp["max_new_tokens"] != 10.0 || sp["temperature"] != 0.0 || body["lora_path"] != nil {
		t.Errorf("generate request %v", body)
	}
	want, err := n.Generate(t.Context(), req, func(engine.Token) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Tokens) != len(want.Tokens) || g.FinishReason != want.FinishReason {
		t.Fatalf("%d tokens (%s), model %d (%s)", len(g.Tokens), g.FinishReason, len(want.Tokens), want.FinishReason)
	}
	for i := range g.Tokens {
		a, b := g.Tokens[i], want.Tokens[i]
		if a.ID != b.ID || a.Logprob != b.Logprob || len(a.Top) != 3 || a.Top[0] != b.Top[0] {
			t.Errorf("token %d: %+v, model %+v", i, a, b)
		}
	}
	ids := make([]int32, len(g.Tokens))
	for i, tok := range g.Tokens {
		ids[i] = tok.ID
	}
	sc, err := e.Score(t.Context(), engine.ScoreRequest{PromptIDs: prompt, CompletionIDs: ids})
	if err != nil {
		t.Fatal(err)
	}
	body = lastRequest(t, f)
	if sp := body["sampling_params"].(map[string]any); sp["max_new_tokens"] != 0.0 || body["logprob_start_len"] != float64(len(prompt)-1) || body["stream"] != nil {
		t.Errorf("score request %v", body)
	}
	for i := range ids {
		if math.Abs(float64(sc.Logprobs[i]-g.Tokens[i].Logprob)) > 1e-3 {
			t.Errorf("token %d: score %v, generate %v", i, sc.Logprobs[i], g.Tokens[i].Logprob)
		}
	}
}

// TestContractVersions: a published adapter is loaded on every replica
// under its versioned name and named by lora_path; a request in flight on
// version 1 finishes on it while version 2 is published, and version 1 is
// unloaded only when that request ends.
func TestContractVersions(t *testing.T) {
	a, b := sglangtest.New(t, newNative(t)), sglangtest.New(t, newNative(t))
	e := openEngine(t, a.URL, b.URL)
	ctx := t.Context()
	_, n := tiny(t)
	dir1, dir2 := writeAdapter(t, n, 1), writeAdapter(t, n, 2)
	if err := e.Publish(ctx, 1, dir1); err != nil {
		t.Fatal(err)
	}
	for _, f := range []*sglangtest.Fake{a, b} {
		if calls := f.AdapterCalls(); len(calls) != 1 || calls[0] != "load clawrl-v1 "+dir1 {
			t.Errorf("replica %s: adapter calls %v", f.URL, calls)
		}
	}
	prompt := e.Format().Encode("The adapter changes this answer")
	started, release := make(chan struct{}), make(chan struct{})
	done := make(chan engine.Generation)
	go func() {
		first := true
		g, err := e.Generate(ctx, engine.GenerateRequest{PromptIDs: prompt, MaxTokens: 4, Affinity: "s1"}, func(engine.Token) error {
			if first {
				first = false
				close(started)
				<-release
			}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
		done <- g
	}()
	<-started
	if err := e.Publish(ctx, 2, dir2); err != nil {
		t.Fatal(err)
	}
	if e.Version() != 2 {
		t.Errorf("version %d after publishing 2", e.Version())
	}
	for _, f := range []*sglangtest.Fake{a, b} {
		if !f.Loaded("clawrl-v1") {
			t.Errorf("replica %s unloaded v1 while a request held it: %v", f.URL, f.AdapterCalls())
		}
	}
	close(release)
	if g := <-done; g.PolicyVersion != 1 || len(g.Tokens) != 4 {
		t.Errorf("in-flight request: version %d, %d tokens", g.PolicyVersion, len(g.Tokens))
	}
	g, err := e.Generate(ctx, engine.GenerateRequest{PromptIDs: prompt, MaxTokens: 2, Affinity: "s1"}, func(engine.Token) error { return nil })
	if err != nil || g.PolicyVersion != 2 {
		t.Fatalf("after publish: version %d, %v", g.PolicyVersion, err)
	}
	owner := a
	if e.ReplicaOrder("s1")[0] == b.URL {
		owner = b
	}
	if lp := lastRequest(t, owner)["lora_path"]; lp != "clawrl-v2" {
		t.Errorf("lora_path %v, want clawrl-v2", lp)
	}
	// The unload runs in the background once the last holder lets go.
	for _, f := range []*sglangtest.Fake{a, b} {
		waitFor(t, func() bool { return !f.Loaded("clawrl-v1") })
	}
	// The adapter scores what the model scores with it.
	completion := e.Format().Encode(" quite a lot, or not at all.")
	got, err := e.Score(ctx, engine.ScoreRequest{PromptIDs: prompt, CompletionIDs: completion})
	if err != nil {
		t.Fatal(err)
	}
	ref := newNative(t)
	if err := ref.Publish(ctx, 2, dir2); err != nil {
		t.Fatal(err)
	}
	want, err := ref.Score(ctx, engine.ScoreRequest{PromptIDs: prompt, CompletionIDs: completion})
	if err != nil {
		t.Fatal(err)
	}
	for i := range want.Logprobs {
		if math.Abs(float64(got.Logprobs[i]-want.Logprobs[i])) > 1e-4 || got.PolicyVersion != 2 {
			t.Errorf("token %d: %v (v%d), model with adapter %v", i, got.Logprobs[i], got.PolicyVersion, want.Logprobs[i])
		}
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for range 200 {
		if cond() {
			return
		}
		sleep()
	}
	t.Fatal("condition not reached")
}

// TestContractFailover: a replica that restarted (lost its adapters) gets
// the current one again and the request retries there; a replica that is
// gone is left out and its sessions fail over, still on the same version.
func TestContractFailover(t *testing.T) {
	a, b := sglangtest.New(t, newNative(t)), sglangtest.New(t, newNative(t))
	e := openEngine(t, a.URL, b.URL)
	ctx := t.Context()
	_, n := tiny(t)
	if err := e.Publish(ctx, 1, writeAdapter(t, n, 3)); err != nil {
		t.Fatal(err)
	}
	session := ""
	for i := range 64 {
		if key := fmt.Sprintf("session-%d", i); e.ReplicaOrder(key)[0] == b.URL {
			session = key
			break
		}
	}
	prompt := e.Format().Encode("Keep answering, whichever replica is left.")
	req := engine.GenerateRequest{PromptIDs: prompt, MaxTokens: 5, Affinity: session}
	before, err := e.Generate(ctx, req, func(engine.Token) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	b.Forget()
	again, err := e.Generate(ctx, req, func(engine.Token) error { return nil })
	if err != nil {
		t.Fatalf("after the replica forgot its adapters: %v", err)
	}
	if calls := b.AdapterCalls(); len(calls) != 2 || calls[1] != calls[0] || again.PolicyVersion != 1 || again.Tokens[0].ID != before.Tokens[0].ID {
		t.Errorf("reload: calls %v, version %d", calls, again.PolicyVersion)
	}
	b.Close()
	for i := range 3 {
		after, err := e.Generate(ctx, req, func(engine.Token) error { return nil })
		if err != nil {
			t.Fatalf("request %d after the replica died: %v", i, err)
		}
		if after.PolicyVersion != 1 || len(after.Tokens) != len(before.Tokens) || after.Tokens[0].ID != before.Tokens[0].ID {
			t.Errorf("request %d after failover: version %d, tokens %v", i, after.PolicyVersion, after.Tokens)
		}
	}
	if got := e.ReplicaOrder(session)[0]; got != a.URL {
		t.Errorf("dead replica still first for its session: %s", got)
	}
}

// TestContractErrors: a request SGLang rejects is its 400 message and is
// not retried; garbage is retried a bounded number of times, then fails;
// an aborted generation fails; nothing is returned half.
func TestContractErrors(t *testing.T) {
	f := sglangtest.New(t, newNative(t))
	e := openEngine(t, f.URL)
	ctx := t.Context()
	prompt := e.Format().Encode("hello")
	if _, err := e.Generate(ctx, engine.GenerateRequest{PromptIDs: prompt, MaxTokens: 4, Adapter: "v9"}, nil); err == nil ||
		!strings.Contains(err.Error(), "not loaded") {
		t.Errorf("unknown version: %v", err)
	}
	f.SetGarbage(true)
	before := len(f.Requests())
	_, err := e.Generate(ctx, engine.GenerateRequest{PromptIDs: prompt, MaxTokens: 4}, func(engine.Token) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "malformed") {
		t.Errorf("garbage: %v", err)
	}
	if n := len(f.Requests()) - before; n != 3 {
		t.Errorf("garbage was tried %d times, want 3", n)
	}
	if _, err := e.Score(ctx, engine.ScoreRequest{PromptIDs: prompt, CompletionIDs: prompt}); err == nil {
		t.Error("score on garbage succeeded")
	}
}

// TestStreamChunks: recorded chunk shapes, cumulative and incremental, an
// abort, an error event and malformed ones.
func TestStreamChunks(t *testing.T) {
	var st streamState
	toks, fin, err := st.chunk([]byte(`{"text":"Hi","output_ids":[9707],"meta_info":{"id":"a","finish_reason":null,"prompt_tokens":5,"completion_tokens":1,
		"output_token_logprobs":[[-0.25,9707,null]],"output_top_logprobs":[[[-0.25,9707,null],[-1.5,13,null]]]}}`), 2)
	if err != nil || fin != "" || len(toks) != 1 || toks[0].ID != 9707 || toks[0].Logprob != -0.25 || len(toks[0].Top) != 2 || toks[0].Top[1].ID != 13 {
		t.Fatalf("first chunk: %+v %q %v", toks, fin, err)
	}
	toks, fin, err = st.chunk([]byte(`{"text":"Hi!","output_ids":[9707,0],"meta_info":{"finish_reason":{"type":"stop","matched":151645},"completion_tokens":2,
		"output_token_logprobs":[[-0.25,9707,null],[-0.5,0,"!"]]}}`), 0)
	if err != nil || fin != engine.FinishStop || len(toks) != 1 || toks[0].ID != 0 || toks[0].Logprob != -0.5 {
		t.Fatalf("cumulative chunk: %+v %q %v", toks, fin, err)
	}
	var inc streamState
	inc.chunk([]byte(`{"meta_info":{"completion_tokens":1,"output_token_logprobs":[[-1,5,null]]}}`), 0) //nolint:errcheck
	toks, fin, err = inc.chunk([]byte(`{"meta_info":{"finish_reason":{"type":"length","length":2},"completion_tokens":2,"output_token_logprobs":[[-2,6,null]]}}`), 0)
	if err != nil || fin != engine.FinishLength || len(toks) != 1 || toks[0].ID != 6 {
		t.Fatalf("incremental chunk: %+v %q %v", toks, fin, err)
	}
	var ab streamState
	if _, _, err := ab.chunk([]byte(`{"meta_info":{"finish_reason":{"type":"abort","message":"out of memory"},"completion_tokens":0,"output_token_logprobs":[]}}`), 0); err == nil ||
		!strings.Contains(err.Error(), "out of memory") {
		t.Errorf("abort: %v", err)
	}
	var re *remote.Error
	if _, _, err := ab.chunk([]byte(`{"error":{"message":"prompt too long"}}`), 0); !errorsAs(err, &re) || re.Message != "prompt too long" || re.Status != 400 {
		t.Errorf("error event: %v", err)
	}
	for _, bad := range []string{
		`not json`,
		`{"meta_info":{"completion_tokens":3,"output_token_logprobs":[[-1,5,null]]}}`,   // counts disagree
		`{"meta_info":{"completion_tokens":1,"output_token_logprobs":[[0.5,5,null]]}}`,  // positive logprob
		`{"meta_info":{"completion_tokens":1,"output_token_logprobs":[[null,5,null]]}}`, // no logprob
		`{"meta_info":{"completion_tokens":1,"output_token_logprobs":[[-1]]}}`,          // not a triple
		`{"meta_info":{"completion_tokens":0,"finish_reason":{"type":"weird"}}}`,
	} {
		var s streamState
		if _, _, err := s.chunk([]byte(bad), 0); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

func TestInputLogprobs(t *testing.T) {
	var entries []logprobEntry
	if err := json.Unmarshal([]byte(`[[null,1,null],[-0.5,2,null],[-1.5,3,null]]`), &entries); err != nil {
		t.Fatal(err)
	}
	got, err := inputLogprobs(entries, []int32{2, 3})
	if err != nil || len(got) != 2 || got[0] != -0.5 || got[1] != -1.5 {
		t.Errorf("inputLogprobs = %v, %v", got, err)
	}
	if _, err := inputLogprobs(entries, []int32{3, 2}); err == nil {
		t.Error("token ids out of place accepted")
	}
	if _, err := inputLogprobs(entries, []int32{1, 2, 3}); err == nil {
		t.Error("a null logprob accepted")
	}
}

// FuzzStreamChunk: no chunk makes the parser panic, and what it accepts is
// tokens with finite non-positive logprobs.
func FuzzStreamChunk(f *testing.F) {
	f.Add([]byte(`{"meta_info":{"completion_tokens":1,"output_token_logprobs":[[-1,5,null]],"output_top_logprobs":[[[-1,5,null]]]}}`), 2)
	f.Add([]byte(`{"meta_info":{"finish_reason":{"type":"stop","matched":1},"completion_tokens":0,"output_token_logprobs":[]}}`), 0)
	f.Add([]byte(`{"error":{"message":"x"}}`), 1)
	f.Fuzz(func(t *testing.T, data []byte, top int) {
		var s streamState
		toks, _, err := s.chunk(data, top%8)
		if err != nil {
			return
		}
		for _, tok := range toks {
			if math.IsNaN(float64(tok.Logprob)) || tok.Logprob > 0 {
				t.Fatalf("accepted logprob %v", tok.Logprob)
			}
		}
	})
}
