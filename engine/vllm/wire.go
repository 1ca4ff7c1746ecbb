package vllm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/remote"
)

// The wire shapes of vLLM's OpenAI-compatible /v1/completions with a
// token-id prompt (REFERENCE.md §4): clawrl renders and tokenises the prompt
// itself, so what is stored is exactly what the model saw, and asks for the
// sampled ids (return_token_ids) and their logprobs with token ids as keys
// (return_tokens_as_token_ids).

type completionRequest struct {
	Model                   string         `json:"model"`
	Prompt                  []int32        `json:"prompt"`
	MaxTokens               int            `json:"max_tokens"`
	Temperature             float64        `json:"temperature"`
	TopP                    float64        `json:"top_p,omitempty"`
	TopK                    int            `json:"top_k,omitempty"`
	Seed                    *int64         `json:"seed,omitempty"`
	Logprobs                *int           `json:"logprobs,omitempty"`
	PromptLogprobs          *int           `json:"prompt_logprobs,omitempty"`
	Stream                  bool           `json:"stream,omitempty"`
	StreamOptions           map[string]any `json:"stream_options,omitempty"`
	StopTokenIDs            []int32        `json:"stop_token_ids,omitempty"`
	ReturnTokenIDs          bool           `json:"return_token_ids"`
	ReturnTokensAsTokenIDs  bool           `json:"return_tokens_as_token_ids"`
	SkipSpecialTokens       bool           `json:"skip_special_tokens"`
	SpacesBetweenSpecialTok bool           `json:"spaces_between_special_tokens"`
}

// completionLogprobs is the legacy completions logprobs object.
type completionLogprobs struct {
	Tokens        []string             `json:"tokens"`
	TokenLogprobs []*float64           `json:"token_logprobs"`
	TopLogprobs   []map[string]float64 `json:"top_logprobs"`
}

type completionChoice struct {
	Index          int                          `json:"index"`
	Text           string                       `json:"text"`
	TokenIDs       []int32                      `json:"token_ids"`
	Logprobs       *completionLogprobs          `json:"logprobs"`
	FinishReason   *string                      `json:"finish_reason"`
	PromptLogprobs []map[string]json.RawMessage `json:"prompt_logprobs"`
}

type completionResponse struct {
	Choices       []completionChoice `json:"choices"`
	PromptTokenID []int32            `json:"prompt_token_ids"`
	Error         *apiError          `json:"error"`
	// vLLM's own error shape (not wrapped in "error").
	Message string `json:"message"`
	Object  string `json:"object"`
}

type apiError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    any    `json:"code"`
}

// errGarbage marks an answer that does not have the shape asked for: the
// replica is unwell, so the request may be retried elsewhere.
var errGarbage = remote.ErrGarbage

// parseTokenKey reads a logprobs key written with return_tokens_as_token_ids
// ("token_id:123").
func parseTokenKey(k string) (int32, error) {
	s, ok := strings.CutPrefix(k, "token_id:")
	if !ok {
		return 0, fmt.Errorf("%w: token %q is not token_id:N", errGarbage, k)
	}
	v, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("%w: token %q: %v", errGarbage, k, err)
	}
	return int32(v), nil
}

// chunkTokens turns one streamed (or the whole non-streamed) choice into
// engine tokens: the ids it sampled with the logprob of each and top
// alternatives. top is how many alternatives the caller asked for.
func chunkTokens(c completionChoice, top int) ([]engine.Token, error) {
	ids := c.TokenIDs
	lp := c.Logprobs
	if lp == nil {
		if len(ids) == 0 {
			return nil, nil
		}
		return nil, fmt.Errorf("%w: %d token ids without logprobs", errGarbage, len(ids))
	}
	if ids == nil {
		// Older servers: the ids only in the token_id:N strings.
		for _, k := range lp.Tokens {
			id, err := parseTokenKey(k)
			if err != nil {
				return nil, err
			}
			ids = append(ids, id)
		}
	}
	if len(lp.TokenLogprobs) != len(ids) {
		return nil, fmt.Errorf("%w: %d token ids, %d logprobs", errGarbage, len(ids), len(lp.TokenLogprobs))
	}
	out := make([]engine.Token, len(ids))
	for i, id := range ids {
		p := lp.TokenLogprobs[i]
		if p == nil || math.IsNaN(*p) || *p > 0 {
			return nil, fmt.Errorf("%w: token %d: logprob %v", errGarbage, id, p)
		}
		out[i] = engine.Token{ID: id, Logprob: float32(*p)}
		if top > 0 && i < len(lp.TopLogprobs) {
			for k, v := range lp.TopLogprobs[i] {
				tid, err := parseTokenKey(k)
				if err != nil {
					return nil, err
				}
				out[i].Top = append(out[i].Top, engine.TokenLogprob{ID: tid, Logprob: float32(v)})
			}
			sortTop(out[i].Top)
			if len(out[i].Top) > top {
				out[i].Top = out[i].Top[:top]
			}
		}
	}
	return out, nil
}

// sortTop orders alternatives most likely first (ids break ties), as the
// native engine reports them.
func sortTop(ts []engine.TokenLogprob) {
	for i := 1; i < len(ts); i++ {
		for j := i; j > 0 && (ts[j].Logprob > ts[j-1].Logprob || ts[j].Logprob == ts[j-1].Logprob && ts[j].ID < ts[j-1].ID); j-- {
			ts[j], ts[j-1] = ts[j-1], ts[j]
		}
	}
}

// parseChunk decodes one SSE data payload of a streamed completion.
func parseChunk(data []byte) (completionChoice, bool, error) {
	var r completionResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return completionChoice{}, false, fmt.Errorf("%w: stream chunk: %v", errGarbage, err)
	}
	if err := r.err(); err != nil {
		return completionChoice{}, false, err
	}
	if len(r.Choices) == 0 {
		return completionChoice{}, false, nil // a usage-only chunk
	}
	if len(r.Choices) != 1 {
		return completionChoice{}, false, fmt.Errorf("%w: %d choices, want 1", errGarbage, len(r.Choices))
	}
	return r.Choices[0], true, nil
}

// err is the error a response body carries, if any.
func (r completionResponse) err() error {
	switch {
	case r.Error != nil:
		return &remote.Error{Engine: "vllm", Message: r.Error.Message}
	case r.Object == "error":
		return &remote.Error{Engine: "vllm", Message: r.Message}
	}
	return nil
}

// parsePromptLogprobs reads the logprob of each of the last n prompt
// tokens (ids) from prompt_logprobs: one entry per prompt position, null
// for the first, otherwise a map from token id to {"logprob": …}.
func parsePromptLogprobs(entries []map[string]json.RawMessage, ids []int32, n int) ([]float32, error) {
	if len(entries) != len(ids) {
		return nil, fmt.Errorf("%w: %d prompt logprobs for %d prompt tokens", errGarbage, len(entries), len(ids))
	}
	out := make([]float32, n)
	for i := range n {
		pos := len(ids) - n + i
		if pos <= 0 {
			return nil, fmt.Errorf("%w: no logprob for the first prompt token", errGarbage)
		}
		raw, ok := entries[pos][strconv.Itoa(int(ids[pos]))]
		if !ok {
			return nil, fmt.Errorf("%w: position %d: no logprob for token %d", errGarbage, pos, ids[pos])
		}
		var v struct {
			Logprob *float64 `json:"logprob"`
		}
		if err := json.Unmarshal(raw, &v); err != nil || v.Logprob == nil {
			// Some versions give the number alone.
			var f float64
			if err2 := json.Unmarshal(raw, &f); err2 != nil {
				return nil, fmt.Errorf("%w: position %d: %s", errGarbage, pos, bytes.TrimSpace(raw))
			}
			v.Logprob = &f
		}
		if math.IsNaN(*v.Logprob) || *v.Logprob > 0 {
			return nil, fmt.Errorf("%w: position %d: logprob %v", errGarbage, pos, *v.Logprob)
		}
		out[i] = float32(*v.Logprob)
	}
	return out, nil
}
