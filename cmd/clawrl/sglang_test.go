package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/native"
	"github.com/clawrl/clawrl/engine/sglang/sglangtest"
	"github.com/clawrl/clawrl/engine/vllm/vllmtest"
	"github.com/clawrl/clawrl/store/sqlite"
)

// TestServeOnSGLangContract runs `clawrl serve --engine sglang:…` in front
// of a stand-in SGLang server (a contract test: SGLang needs a GPU; the
// stand-in speaks SGLang's documented /generate and adapter shapes, see
// package sglangtest, with the native model's tokens): chat streaming and
// not goes through /generate, the stored ids and behaviour logprobs are
// what the model samples for the stored prompt, and a rated turn trains
// version 1, which the server then loads as clawrl-v1 and later requests
// name with lora_path.
func TestServeOnSGLangContract(t *testing.T) {
	ckpt := filepath.Join(t.TempDir(), "ckpt")
	vllmtest.WriteCheckpoint(t, ckpt)
	n, err := native.Open(ckpt, native.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fake := sglangtest.New(t, n)
	exe := buildClawrl(t)
	data := t.TempDir()
	p := startServeWith(t, exe, data, "", 2*time.Minute, "--engine", "sglang:"+fake.URL, "--model", ckpt,
		"--method", "rl", "--batch-size", "1", "--lora-rank", "4", "--judge-votes", "1", "--judge-max-tokens", "4", "--max-tokens", "8")
	ids := map[bool]string{}
	for _, stream := range []bool{false, true} {
		body := map[string]any{"messages": []any{map[string]any{"role": "user", "content": fmt.Sprintf("hello, stream %v", stream)}},
			"stream": stream, "temperature": 0}
		id, err := completeOnce(context.Background(), http.DefaultClient, p.addr, body, fmt.Sprintf("sglang-%v", stream))
		if err != nil {
			t.Fatalf("chat (stream %v): %v\n%s", stream, err, p.logText())
		}
		ids[stream] = id
	}
	st, err := sqlite.OpenDir(context.Background(), data, sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for stream, id := range ids {
		turn, err := st.Turn(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if turn.Engine != "sglang" || len(turn.ResponseIDs) == 0 || len(turn.BehaviourLogprobs) != len(turn.ResponseIDs) {
			t.Fatalf("turn (stream %v): engine %q, %d ids, %d logprobs", stream, turn.Engine, len(turn.ResponseIDs), len(turn.BehaviourLogprobs))
		}
		want, err := n.Generate(context.Background(), engine.GenerateRequest{PromptIDs: turn.PromptIDs, MaxTokens: len(turn.ResponseIDs)},
			func(engine.Token) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		for i, id := range turn.ResponseIDs {
			if i >= len(want.Tokens) || want.Tokens[i].ID != id || want.Tokens[i].Logprob != turn.BehaviourLogprobs[i] {
				t.Fatalf("turn (stream %v): stored ids %v logprobs %v; the model samples %+v", stream, turn.ResponseIDs, turn.BehaviourLogprobs, want.Tokens)
			}
		}
	}
	postJSON(t, "http://"+p.addr+"/v1/feedback", map[string]any{"id": ids[false], "rating": 1}, nil)
	rated := time.Now()
	for !fake.Loaded("clawrl-v1") {
		if time.Since(rated) > 3*time.Minute {
			t.Fatalf("SGLang was not given clawrl-v1 three minutes after the rating; adapter calls %v\n%s", fake.AdapterCalls(), p.logText())
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("rating → version 1 loaded in the SGLang stand-in: %s", time.Since(rated).Round(time.Millisecond))
	// The stand-in has the adapter before the engine switches to it: the
	// next turn is version 1's once /healthz says the engine serves it.
	for {
		var h struct {
			PolicyVersion int64 `json:"policy_version"`
		}
		resp, err := http.Get("http://" + p.addr + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		err = json.NewDecoder(resp.Body).Decode(&h)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if h.PolicyVersion == 1 {
			break
		}
		if time.Since(rated) > 3*time.Minute {
			t.Fatalf("clawrl-v1 loaded but not served three minutes after the rating:\n%s", p.logText())
		}
		time.Sleep(100 * time.Millisecond)
	}
	id, err := completeOnce(context.Background(), http.DefaultClient, p.addr,
		map[string]any{"messages": []any{map[string]any{"role": "user", "content": "and now?"}}}, "after")
	if err != nil {
		t.Fatal(err)
	}
	turn, err := st.Turn(context.Background(), id)
	if err != nil || turn.PolicyVersion != 1 {
		t.Fatalf("turn after publishing: version %d, %v", turn.PolicyVersion, err)
	}
	named := false
	for _, r := range fake.Requests() {
		named = named || r["lora_path"] == "clawrl-v1"
	}
	if !named {
		t.Error("no /generate named lora_path clawrl-v1 after publishing")
	}
}
