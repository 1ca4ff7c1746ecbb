package sglang

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"sort"

	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/remote"
)

// generateRequest is SGLang's GenerateReqInput for one prompt of token ids.
type generateRequest struct {
	InputIDs        []int32        `json:"input_ids"`
	SamplingParams  samplingParams `json:"sampling_params"`
	ReturnLogprob   bool           `json:"return_logprob"`
	LogprobStartLen int            `json:"logprob_start_len"`
	TopLogprobsNum  int            `json:"top_logprobs_num,omitempty"`
	Stream          bool           `json:"stream,omitempty"`
	LoraPath        string         `json:"lora_path,omitempty"` // a loaded adapter's name
}

// samplingParams is SGLang's SamplingParams (sampling_params.md).
type samplingParams struct {
	MaxNewTokens      int     `json:"max_new_tokens"`
	Temperature       float64 `json:"temperature"`
	TopP              float64 `json:"top_p,omitempty"`
	TopK              int     `json:"top_k,omitempty"`
	StopTokenIDs      []int32 `json:"stop_token_ids,omitempty"`
	SkipSpecialTokens bool    `json:"skip_special_tokens"`
	Seed              *int64  `json:"sampling_seed,omitempty"`
}

// generateResponse is one answer (or one streamed chunk) of /generate.
type generateResponse struct {
	Text      string    `json:"text"`
	OutputIDs []int32   `json:"output_ids"`
	MetaInfo  metaInfo  `json:"meta_info"`
	Error     *apiError `json:"error"`
}

type apiError struct {
	Message string `json:"message"`
}

type metaInfo struct {
	ID               string          `json:"id"`
	FinishReason     json.RawMessage `json:"finish_reason"` // null or {"type": "stop"|"length"|"abort", …}
	PromptTokens     int             `json:"prompt_tokens"`
	CompletionTokens int             `json:"completion_tokens"`
	// Lists of [logprob, token_id, text or null]; input logprobs start at
	// logprob_start_len, with null for the prompt's first token.
	InputTokenLogprobs  []logprobEntry   `json:"input_token_logprobs"`
	OutputTokenLogprobs []logprobEntry   `json:"output_token_logprobs"`
	OutputTopLogprobs   [][]logprobEntry `json:"output_top_logprobs"`
}

// logprobEntry is one [logprob, token_id, text] triple; Logprob is nil for
// a position without one.
type logprobEntry struct {
	Logprob *float64
	ID      int32
}

func (l *logprobEntry) UnmarshalJSON(b []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("logprob entry %s: %w", b, err)
	}
	if len(raw) < 2 {
		return fmt.Errorf("logprob entry %s: want [logprob, token_id, text]", b)
	}
	var lp *float64
	if err := json.Unmarshal(raw[0], &lp); err != nil {
		return fmt.Errorf("logprob entry %s: logprob: %w", b, err)
	}
	var id int32
	if err := json.Unmarshal(raw[1], &id); err != nil {
		return fmt.Errorf("logprob entry %s: token id: %w", b, err)
	}
	l.Logprob, l.ID = lp, id
	return nil
}

// err is the error an answer carries. SGLang reports a request it rejects
// (a ValueError) as a 400, or, once a stream has begun, as an error event:
// both are the request's fault, not the replica's.
func (r generateResponse) err() error {
	if r.Error != nil {
		return &remote.Error{Engine: "sglang", Status: http.StatusBadRequest, Message: r.Error.Message}
	}
	return nil
}

// finishReason maps meta_info.finish_reason to an engine finish reason
// ("" while the generation runs).
func finishReason(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var f struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		return "", fmt.Errorf("%w: finish_reason %s: %v", remote.ErrGarbage, raw, err)
	}
	switch f.Type {
	case "length":
		return engine.FinishLength, nil
	case "stop":
		return engine.FinishStop, nil
	case "abort":
		// The server gave up on the request (out of memory, shutting
		// down): the generation is incomplete.
		return "", &remote.Error{Engine: "sglang", Message: "request aborted: " + f.Message}
	}
	return "", fmt.Errorf("%w: finish_reason type %q", remote.ErrGarbage, f.Type)
}

// streamState turns streamed chunks into new tokens. Depending on the
// server's --stream-output / incremental streaming setting, output_ids and
// the logprob lists are either the whole output so far or only what is
// new; completion_tokens (always the running total) tells them apart.
type streamState struct {
	seen int // tokens passed on so far
}

func (s *streamState) chunk(data []byte, top int) ([]engine.Token, string, error) {
	var r generateResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, "", fmt.Errorf("%w: stream chunk: %v", remote.ErrGarbage, err)
	}
	if err := r.err(); err != nil {
		return nil, "", err
	}
	m := r.MetaInfo
	lps := m.OutputTokenLogprobs
	tops := m.OutputTopLogprobs
	switch {
	case m.CompletionTokens < s.seen:
		return nil, "", fmt.Errorf("%w: completion_tokens went back from %d to %d", remote.ErrGarbage, s.seen, m.CompletionTokens)
	case len(lps) == m.CompletionTokens && s.seen <= len(lps):
		lps = lps[s.seen:] // cumulative
		if len(tops) >= s.seen {
			tops = tops[s.seen:]
		}
	case len(lps) == m.CompletionTokens-s.seen:
		// incremental
	default:
		return nil, "", fmt.Errorf("%w: %d output logprobs with %d tokens so far, %d before", remote.ErrGarbage, len(lps), m.CompletionTokens, s.seen)
	}
	toks := make([]engine.Token, len(lps))
	for i, e := range lps {
		if e.Logprob == nil || math.IsNaN(*e.Logprob) || *e.Logprob > 0 {
			return nil, "", fmt.Errorf("%w: output token %d (id %d): logprob %v", remote.ErrGarbage, s.seen+i, e.ID, e.Logprob)
		}
		toks[i] = engine.Token{ID: e.ID, Logprob: float32(*e.Logprob)}
		if top > 0 && i < len(tops) {
			for _, alt := range tops[i] {
				if alt.Logprob == nil {
					continue
				}
				toks[i].Top = append(toks[i].Top, engine.TokenLogprob{ID: alt.ID, Logprob: float32(*alt.Logprob)})
			}
			sort.SliceStable(toks[i].Top, func(a, b int) bool {
				ta, tb := toks[i].Top[a], toks[i].Top[b]
				return ta.Logprob > tb.Logprob || ta.Logprob == tb.Logprob && ta.ID < tb.ID
			})
			if len(toks[i].Top) > top {
				toks[i].Top = toks[i].Top[:top]
			}
		}
	}
	s.seen += len(toks)
	fin, err := finishReason(m.FinishReason)
	if err != nil {
		return nil, "", err
	}
	return toks, fin, nil
}

// inputLogprobs takes the logprobs of completion from the tail of a
// prefill's input_token_logprobs, checking each entry's token id.
func inputLogprobs(entries []logprobEntry, completion []int32) ([]float32, error) {
	n := len(completion)
	if len(entries) < n {
		return nil, fmt.Errorf("%w: %d input logprobs for %d completion tokens", remote.ErrGarbage, len(entries), n)
	}
	tail := entries[len(entries)-n:]
	out := make([]float32, n)
	for i, e := range tail {
		if e.ID != completion[i] {
			return nil, fmt.Errorf("%w: input logprob %d is for token %d, want %d", remote.ErrGarbage, i, e.ID, completion[i])
		}
		if e.Logprob == nil || math.IsNaN(*e.Logprob) || *e.Logprob > 0 {
			return nil, fmt.Errorf("%w: completion token %d (id %d): logprob %v", remote.ErrGarbage, i, e.ID, e.Logprob)
		}
		out[i] = float32(*e.Logprob)
	}
	return out, nil
}
