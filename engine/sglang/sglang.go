// Package sglang is engine/remote's Protocol for SGLang's native HTTP API
// (`clawrl serve --engine sglang:http://a,http://b`).
//
// The prompt goes as input_ids to /generate with return_logprob, so the
// answer's meta_info.output_token_logprobs holds each sampled id with its
// logprob; Score is a prefill of prompt+completion (max_new_tokens 0) read
// from meta_info.input_token_logprobs. Adapters load with
// /load_lora_adapter and a request names one with lora_path. Replicas,
// versions and failover are engine/remote's, as for vLLM.
//
// Start SGLang with SGLANG_RETURN_ORIGINAL_LOGPROB=True: by default it
// reports logprobs after temperature scaling, and clawrl's behaviour
// logprobs are those of the raw distribution (engine.Token).
//
// The shapes used here are SGLang's documented /generate request
// (docs/basic_usage/sampling_params.md: input_ids, sampling_params,
// return_logprob, logprob_start_len, top_logprobs_num, stream, lora_path)
// and the answer its tokenizer manager builds (text, output_ids, meta_info
// with finish_reason, prompt_tokens, completion_tokens and logprob lists of
// [logprob, token_id, text] triples).
package sglang

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/remote"
)

// Engine is a remote engine on SGLang replicas.
type Engine = remote.Engine

// Options tune Open.
type Options = remote.Options

// Protocol is SGLang's HTTP API.
type Protocol struct{}

var _ remote.Protocol = Protocol{}

// ParseURLs reads the part of --engine after "sglang:": comma-separated
// base URLs of the replicas.
func ParseURLs(spec string) ([]string, error) { return remote.ParseURLs("sglang", spec) }

// Open connects to the SGLang replicas at urls. At least one must answer
// /v1/models; the others may come up later.
func Open(ctx context.Context, urls []string, opts Options) (*Engine, error) {
	return remote.Open(ctx, Protocol{}, urls, opts)
}

// Name implements remote.Protocol.
func (Protocol) Name() string { return "sglang" }

// Models reads /v1/models (SGLang's OpenAI-compatible list, whose
// max_model_len is the context length).
func (Protocol) Models(ctx context.Context, c *remote.Client, url string) (string, int, error) {
	return c.BaseModel(ctx, "sglang", url)
}

// loadResult is /load_lora_adapter's and /unload_lora_adapter's answer
// (LoadLoRAAdapterReqOutput): a 400 carries success false.
type loadResult struct {
	Success      bool   `json:"success"`
	ErrorMessage string `json:"error_message"`
}

// LoadAdapter implements remote.Protocol.
func (Protocol) LoadAdapter(ctx context.Context, c *remote.Client, url, name, dir string) error {
	var res loadResult
	err := c.Post(ctx, url+"/load_lora_adapter", map[string]any{"lora_name": name, "lora_path": dir}, &res)
	var re *remote.Error
	if errors.As(err, &re) && re.Status == http.StatusBadRequest && strings.Contains(re.Message, "already") {
		return nil
	}
	if err == nil && !res.Success {
		err = &remote.Error{Engine: "sglang", Status: http.StatusBadRequest, Message: res.ErrorMessage}
	}
	return err
}

// UnloadAdapter implements remote.Protocol.
func (Protocol) UnloadAdapter(ctx context.Context, c *remote.Client, url, name string) error {
	return c.Post(ctx, url+"/unload_lora_adapter", map[string]any{"lora_name": name}, nil)
}

// MissingAdapter: SGLang rejects a request naming an adapter it has not
// loaded with a 400 (or an error event) saying so.
func (Protocol) MissingAdapter(err error) bool {
	var re *remote.Error
	return errors.As(err, &re) && strings.Contains(re.Message, "LoRA adapters are not loaded")
}

// Generate streams one completion from /generate.
func (Protocol) Generate(ctx context.Context, c *remote.Client, url string, t remote.Target, req engine.GenerateRequest,
	maxTokens int, stop []int32, emit func(engine.Token) error) (string, error) {
	body := generateRequest{
		InputIDs: req.PromptIDs,
		SamplingParams: samplingParams{
			MaxNewTokens: maxTokens, Temperature: req.Sampling.Temperature, StopTokenIDs: stop,
			SkipSpecialTokens: false, Seed: req.Sampling.Seed,
		},
		ReturnLogprob: true, LogprobStartLen: -1, TopLogprobsNum: req.TopLogprobs, Stream: true, LoraPath: t.Adapter,
	}
	if p := req.Sampling.TopP; p > 0 && p < 1 {
		body.SamplingParams.TopP = p
	}
	if k := req.Sampling.TopK; k > 0 {
		body.SamplingParams.TopK = k
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // closing the connection aborts the request in SGLang
	resp, err := c.Send(ctx, url+"/generate", body)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var st streamState
	finish := ""
	err = remote.ReadSSE(resp.Body, func(data []byte) (bool, error) {
		toks, fin, err := st.chunk(data, req.TopLogprobs)
		if err != nil {
			return false, err
		}
		for _, tok := range toks {
			if err := emit(tok); err != nil {
				return true, err
			}
		}
		if fin != "" {
			finish = fin
		}
		return false, nil
	})
	if err != nil {
		return "", err
	}
	if finish == "" {
		return "", fmt.Errorf("%w: stream ended without a finish reason after %d tokens", remote.ErrGarbage, st.seen)
	}
	return finish, nil
}

// Score reads the logprobs of the completion tokens from a prefill of
// prompt+completion. It asks from the last prompt position on and keeps the
// entries whose token ids are the completion's, so an off-by-one in where
// the server starts cannot shift them unnoticed.
func (Protocol) Score(ctx context.Context, c *remote.Client, url string, t remote.Target, prompt, completion []int32) ([]float32, error) {
	all := append(append(make([]int32, 0, len(prompt)+len(completion)), prompt...), completion...)
	body := generateRequest{
		InputIDs:       all,
		SamplingParams: samplingParams{MaxNewTokens: 0, Temperature: 0},
		ReturnLogprob:  true, LogprobStartLen: len(prompt) - 1, LoraPath: t.Adapter,
	}
	var resp generateResponse
	if err := c.Post(ctx, url+"/generate", body, &resp); err != nil {
		return nil, err
	}
	if err := resp.err(); err != nil {
		return nil, err
	}
	return inputLogprobs(resp.MetaInfo.InputTokenLogprobs, completion)
}
