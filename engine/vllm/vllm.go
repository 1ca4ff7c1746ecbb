// Package vllm is engine/remote's Protocol for vLLM's OpenAI-compatible
// server (`clawrl serve --engine vllm:http://a,http://b`).
//
// The prompt goes as token ids to /v1/completions, which answers with the
// sampled ids (return_token_ids) and their logprobs keyed by token id
// (return_tokens_as_token_ids); Score reads prompt_logprobs of
// prompt+completion. Adapters load with /v1/load_lora_adapter (the server
// needs VLLM_ALLOW_RUNTIME_LORA_UPDATING) and a request names one as its
// model. Replicas, versions and failover are engine/remote's.
package vllm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/remote"
)

// Engine is a remote engine on vLLM replicas.
type Engine = remote.Engine

// Options tune Open.
type Options = remote.Options

// Protocol is vLLM's HTTP API.
type Protocol struct{}

var _ remote.Protocol = Protocol{}

// adapterName is the name version v is loaded under.
func adapterName(v int64) string { return remote.AdapterName(v) }

// ParseURLs reads the part of --engine after "vllm:": comma-separated base
// URLs of the replicas.
func ParseURLs(spec string) ([]string, error) { return remote.ParseURLs("vllm", spec) }

// Open connects to the vLLM replicas at urls. At least one must answer
// /v1/models; the others may come up later.
func Open(ctx context.Context, urls []string, opts Options) (*Engine, error) {
	return remote.Open(ctx, Protocol{}, urls, opts)
}

// Name implements remote.Protocol.
func (Protocol) Name() string { return "vllm" }

// Models asks a replica for the served model (its id and max_model_len).
func (Protocol) Models(ctx context.Context, c *remote.Client, url string) (string, int, error) {
	return c.BaseModel(ctx, "vllm", url)
}

// LoadAdapter implements remote.Protocol.
func (Protocol) LoadAdapter(ctx context.Context, c *remote.Client, url, name, dir string) error {
	err := c.Post(ctx, url+"/v1/load_lora_adapter", map[string]any{"lora_name": name, "lora_path": dir}, nil)
	var re *remote.Error
	if errors.As(err, &re) && re.Status == http.StatusBadRequest && strings.Contains(re.Message, "already been loaded") {
		return nil
	}
	return err
}

// UnloadAdapter implements remote.Protocol.
func (Protocol) UnloadAdapter(ctx context.Context, c *remote.Client, url, name string) error {
	return c.Post(ctx, url+"/v1/unload_lora_adapter", map[string]any{"lora_name": name}, nil)
}

// MissingAdapter: vLLM answers 404 for a model name it does not serve.
func (Protocol) MissingAdapter(err error) bool {
	var re *remote.Error
	return errors.As(err, &re) && re.Status == http.StatusNotFound
}

func served(t remote.Target) string {
	if t.Adapter != "" {
		return t.Adapter
	}
	return t.Model
}

// Generate streams one completion from /v1/completions.
func (Protocol) Generate(ctx context.Context, c *remote.Client, url string, t remote.Target, req engine.GenerateRequest,
	maxTokens int, stop []int32, emit func(engine.Token) error) (string, error) {
	logprobs := max(req.TopLogprobs, 1)
	body := completionRequest{
		Model: served(t), Prompt: req.PromptIDs, MaxTokens: maxTokens,
		Temperature: req.Sampling.Temperature, TopK: req.Sampling.TopK, Seed: req.Sampling.Seed,
		Logprobs: &logprobs, Stream: true, StopTokenIDs: stop,
		ReturnTokenIDs: true, ReturnTokensAsTokenIDs: true,
	}
	if p := req.Sampling.TopP; p > 0 && p < 1 {
		body.TopP = p
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // closing the connection aborts the request in vLLM
	resp, err := c.Send(ctx, url+"/v1/completions", body)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	finish, n := "", 0
	err = remote.ReadSSE(resp.Body, func(data []byte) (bool, error) {
		choice, ok, err := parseChunk(data)
		if err != nil || !ok {
			return false, err
		}
		toks, err := chunkTokens(choice, req.TopLogprobs)
		if err != nil {
			return false, err
		}
		for _, tok := range toks {
			n++
			if err := emit(tok); err != nil {
				return true, err
			}
		}
		if choice.FinishReason != nil {
			finish = engine.FinishStop // "stop", "abort"
			if *choice.FinishReason == "length" {
				finish = engine.FinishLength
			}
		}
		return false, nil
	})
	if err != nil {
		return "", err
	}
	if finish == "" {
		return "", fmt.Errorf("%w: stream ended without a finish reason after %d tokens", errGarbage, n)
	}
	return finish, nil
}

// Score reads the prompt logprobs of prompt+completion from one prefill.
func (Protocol) Score(ctx context.Context, c *remote.Client, url string, t remote.Target, prompt, completion []int32) ([]float32, error) {
	all := append(append(make([]int32, 0, len(prompt)+len(completion)), prompt...), completion...)
	zero := 0
	body := completionRequest{Model: served(t), Prompt: all, MaxTokens: 1, Temperature: 0, PromptLogprobs: &zero,
		ReturnTokenIDs: true, ReturnTokensAsTokenIDs: true}
	var resp completionResponse
	if err := c.Post(ctx, url+"/v1/completions", body, &resp); err != nil {
		return nil, err
	}
	if err := resp.err(); err != nil {
		return nil, err
	}
	if len(resp.Choices) != 1 {
		return nil, fmt.Errorf("%w: %d choices", errGarbage, len(resp.Choices))
	}
	return parsePromptLogprobs(resp.Choices[0].PromptLogprobs, all, len(completion))
}
