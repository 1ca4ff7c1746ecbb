package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawrl/clawrl/engine/vllm/vllmtest"
	"github.com/clawrl/clawrl/store/sqlite"
)

// TestServeOnVLLM runs `clawrl serve --engine vllm:…` in front of a real
// vLLM server on a tiny checkpoint: chat streaming and not goes through
// vLLM, the stored ids and behaviour logprobs are what vLLM samples for
// that prompt, and a rated turn trains version 1, which vLLM then serves
// under its versioned name.
func TestServeOnVLLM(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real vLLM")
	}
	python := vllmtest.Python(t)
	ckpt := filepath.Join(t.TempDir(), "ckpt")
	vllmtest.WriteCheckpoint(t, ckpt)
	srv := vllmtest.Start(t, python, ckpt)
	exe := buildClawrl(t)
	data := t.TempDir()
	p := startServeWith(t, exe, data, "", 2*time.Minute, "--engine", "vllm:"+srv.URL, "--model", ckpt,
		"--method", "rl", "--batch-size", "1", "--lora-rank", "4", "--judge-votes", "1", "--judge-max-tokens", "4", "--max-tokens", "8")
	base := "http://" + p.addr

	ids := map[bool]string{}
	for _, stream := range []bool{false, true} {
		body := map[string]any{"messages": []any{map[string]any{"role": "user", "content": fmt.Sprintf("hello, stream %v", stream)}},
			"stream": stream, "temperature": 0}
		id, err := completeOnce(context.Background(), http.DefaultClient, p.addr, body, fmt.Sprintf("vllm-%v", stream))
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
		if turn.Engine != "vllm" || len(turn.ResponseIDs) == 0 || len(turn.BehaviourLogprobs) != len(turn.ResponseIDs) {
			t.Fatalf("turn (stream %v): engine %q, %d ids, %d logprobs", stream, turn.Engine, len(turn.ResponseIDs), len(turn.BehaviourLogprobs))
		}
		// Ask vLLM directly, greedy, for the stored prompt ids.
		direct := directCompletion(t, srv.URL, turn.PromptIDs, len(turn.ResponseIDs))
		for i, id := range turn.ResponseIDs {
			if i >= len(direct.ids) || direct.ids[i] != id {
				t.Fatalf("turn (stream %v): stored ids %v, vLLM returns %v", stream, turn.ResponseIDs, direct.ids)
			}
			if d := math.Abs(float64(turn.BehaviourLogprobs[i]) - direct.logprobs[i]); d > 1e-4 {
				t.Errorf("turn (stream %v) token %d: stored logprob %v, vLLM %v", stream, i, turn.BehaviourLogprobs[i], direct.logprobs[i])
			}
		}
	}

	postJSON(t, base+"/v1/feedback", map[string]any{"id": ids[false], "rating": 1}, nil)
	rated := time.Now()
	deadline := time.Now().Add(5 * time.Minute)
	for !servesModel(t, srv.URL, "clawrl-v1") {
		if time.Now().After(deadline) {
			t.Fatalf("vLLM does not serve clawrl-v1 five minutes after the rating\n%s", p.logText())
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("rating → version 1 loaded in vLLM: %s", time.Since(rated).Round(time.Millisecond))
	id, err := completeOnce(context.Background(), http.DefaultClient, p.addr,
		map[string]any{"messages": []any{map[string]any{"role": "user", "content": "and now?"}}}, "after")
	if err != nil {
		t.Fatal(err)
	}
	turn, err := st.Turn(context.Background(), id)
	if err != nil || turn.PolicyVersion != 1 {
		t.Fatalf("turn after publishing: version %d, %v", turn.PolicyVersion, err)
	}
	// Served by name: vLLM answers a request for clawrl-v1 itself.
	direct := directCompletionModel(t, srv.URL, "clawrl-v1", turn.PromptIDs, len(turn.ResponseIDs))
	if len(direct.ids) == 0 {
		t.Fatal("vLLM gave no tokens for clawrl-v1")
	}
}

type directResult struct {
	ids      []int32
	logprobs []float64
}

func directCompletion(t *testing.T, url string, prompt []int32, n int) directResult {
	t.Helper()
	return directCompletionModel(t, url, "", prompt, n)
}

// directCompletionModel asks vLLM itself for a greedy completion of prompt.
func directCompletionModel(t *testing.T, url, model string, prompt []int32, n int) directResult {
	t.Helper()
	if model == "" {
		resp, err := http.Get(url + "/v1/models")
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		json.NewDecoder(resp.Body).Decode(&m) //nolint:errcheck
		resp.Body.Close()
		model = m.Data[0].ID
	}
	raw, _ := json.Marshal(map[string]any{"model": model, "prompt": prompt, "max_tokens": n, "temperature": 0,
		"logprobs": 1, "return_token_ids": true, "skip_special_tokens": false})
	resp, err := http.Post(url+"/v1/completions", "application/json", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out struct {
		Choices []struct {
			TokenIDs []int32 `json:"token_ids"`
			Logprobs struct {
				TokenLogprobs []float64 `json:"token_logprobs"`
			} `json:"logprobs"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(data, &out); err != nil || len(out.Choices) != 1 {
		t.Fatalf("vLLM /v1/completions: %s (%v)", data, err)
	}
	return directResult{ids: out.Choices[0].TokenIDs, logprobs: out.Choices[0].Logprobs.TokenLogprobs}
}

func servesModel(t *testing.T, url, name string) bool {
	t.Helper()
	resp, err := http.Get(url + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return strings.Contains(string(data), `"`+name+`"`)
}
