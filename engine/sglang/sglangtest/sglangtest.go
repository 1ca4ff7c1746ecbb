// Package sglangtest is a stand-in SGLang server for contract tests: SGLang
// needs a GPU, so tests here serve its documented HTTP shapes from an
// httptest server whose tokens and logprobs come from clawrl's native
// engine.
//
// The shapes follow SGLang's own documentation and source:
//   - docs/basic_usage/sampling_params.md (sgl-project/sglang): /generate
//     takes input_ids, sampling_params {max_new_tokens, temperature, top_p,
//     top_k, stop_token_ids, skip_special_tokens, sampling_seed},
//     return_logprob, logprob_start_len (-1 = output tokens only),
//     top_logprobs_num, stream, lora_path; streaming sends
//     "data: {json}\n\n" events ending with "data: [DONE]".
//   - python/sglang/srt/managers/tokenizer_manager.py: each answer is
//     {"text", "output_ids", "meta_info": {"id", "finish_reason" (null, or
//     {"type": "stop"|"length"|"abort", …}), "prompt_tokens",
//     "completion_tokens", "input_token_logprobs", "output_token_logprobs",
//     "output_top_logprobs"}}, logprob lists of [logprob, token_id, text]
//     triples, cumulative over a stream unless the server streams
//     incrementally.
//   - python/sglang/srt/entrypoints/http_server.py: /load_lora_adapter and
//     /unload_lora_adapter take {"lora_name", "lora_path"} and answer
//     {"success", "error_message", "loaded_adapters"} (400 when success is
//     false); a ValueError is {"error": {"message"}} — a 400, or an event in
//     a stream; an unknown lora_path is "The following requested LoRA
//     adapters are not loaded: …".
package sglangtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/native"
)

// Fake answers SGLang's HTTP API from a native engine: tokens and logprobs
// are the model's, the shapes SGLang's.
type Fake struct {
	URL string
	n   *native.Engine
	srv *httptest.Server

	mu          sync.Mutex
	loaded      map[string]int64 // adapter name → the native engine's version
	next        int64
	requests    []map[string]any // /generate bodies, in order
	loads       []string         // "load NAME PATH" / "unload NAME"
	incremental bool             // stream only what is new, as --incremental-streaming-output
	garbage     bool             // answer nonsense
}

func New(tb testing.TB, n *native.Engine) *Fake {
	f := &Fake{n: n, loaded: map[string]int64{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", f.models)
	mux.HandleFunc("POST /generate", f.generate)
	mux.HandleFunc("POST /load_lora_adapter", f.load)
	mux.HandleFunc("POST /unload_lora_adapter", f.unload)
	f.srv = httptest.NewServer(mux)
	f.URL = f.srv.URL
	tb.Cleanup(f.srv.Close)
	return f
}

func (f *Fake) models(w http.ResponseWriter, _ *http.Request) {
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": []map[string]any{ //nolint:errcheck
		{"id": "tiny-qwen3", "object": "model", "owned_by": "sglang", "root": "tiny-qwen3", "max_model_len": 2048}}})
}

func sglangError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg}}) //nolint:errcheck
}

func (f *Fake) load(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Name string `json:"lora_name"`
		Path string `json:"lora_path"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		sglangError(w, 400, err.Error())
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.loads = append(f.loads, "load "+body.Name+" "+body.Path)
	if _, ok := f.loaded[body.Name]; ok {
		w.WriteHeader(400)
		json.NewEncoder(w).Encode(map[string]any{"success": false, "error_message": "The LoRA adapter " + body.Name + " is already loaded."}) //nolint:errcheck
		return
	}
	f.next++
	if err := f.n.Publish(r.Context(), f.next, body.Path); err != nil {
		w.WriteHeader(400)
		json.NewEncoder(w).Encode(map[string]any{"success": false, "error_message": err.Error()}) //nolint:errcheck
		return
	}
	f.loaded[body.Name] = f.next
	json.NewEncoder(w).Encode(map[string]any{"success": true, "error_message": "", "loaded_adapters": map[string]string{body.Name: body.Path}}) //nolint:errcheck
}

func (f *Fake) unload(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Name string `json:"lora_name"`
	}
	json.NewDecoder(r.Body).Decode(&body) //nolint:errcheck
	f.mu.Lock()
	defer f.mu.Unlock()
	f.loads = append(f.loads, "unload "+body.Name)
	delete(f.loaded, body.Name)
	json.NewEncoder(w).Encode(map[string]any{"success": true, "error_message": ""}) //nolint:errcheck
}

// Forget drops every adapter, as a restarted server would.
func (f *Fake) Forget() {
	f.mu.Lock()
	defer f.mu.Unlock()
	clear(f.loaded)
}

func triple(lp float32, id int32) []any { return []any{float64(lp), id, nil} }

func (f *Fake) generate(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		sglangError(w, 400, err.Error())
		return
	}
	var req struct {
		InputIDs       []int32 `json:"input_ids"`
		SamplingParams struct {
			MaxNewTokens int     `json:"max_new_tokens"`
			Temperature  float64 `json:"temperature"`
			TopP         float64 `json:"top_p"`
			TopK         int     `json:"top_k"`
			StopTokenIDs []int32 `json:"stop_token_ids"`
			Seed         *int64  `json:"sampling_seed"`
		} `json:"sampling_params"`
		ReturnLogprob   bool   `json:"return_logprob"`
		LogprobStartLen int    `json:"logprob_start_len"`
		TopLogprobsNum  int    `json:"top_logprobs_num"`
		Stream          bool   `json:"stream"`
		LoraPath        string `json:"lora_path"`
	}
	json.Unmarshal(raw, &req) //nolint:errcheck
	f.mu.Lock()
	f.requests = append(f.requests, body)
	garbage, incremental := f.garbage, f.incremental
	adapter := engine.AdapterBase
	v, ok := f.loaded[req.LoraPath]
	f.mu.Unlock()
	if garbage {
		w.Write([]byte("data: {not json\n\n")) //nolint:errcheck
		return
	}
	if req.LoraPath != "" {
		if !ok {
			msg := "The following requested LoRA adapters are not loaded: " + req.LoraPath + "\nLoaded adapters: dict_keys([])."
			if req.Stream {
				fmt.Fprintf(w, "data: {\"error\": {\"message\": %q}}\n\ndata: [DONE]\n\n", msg)
			} else {
				sglangError(w, 400, msg)
			}
			return
		}
		adapter = "v" + strconv.FormatInt(v, 10)
	}
	if req.SamplingParams.MaxNewTokens == 0 { // a prefill: input logprobs only
		start := max(req.LogprobStartLen, 1)
		sc, err := f.n.Score(r.Context(), engine.ScoreRequest{PromptIDs: req.InputIDs[:start], CompletionIDs: req.InputIDs[start:], Adapter: adapter})
		if err != nil {
			sglangError(w, 400, err.Error())
			return
		}
		var in [][]any
		if req.LogprobStartLen <= 0 {
			in = append(in, []any{nil, req.InputIDs[0], nil})
		}
		for i, lp := range sc.Logprobs {
			in = append(in, triple(lp, req.InputIDs[start+i]))
		}
		json.NewEncoder(w).Encode(map[string]any{"text": "", "output_ids": []int32{}, "meta_info": map[string]any{ //nolint:errcheck
			"id": "r1", "finish_reason": map[string]any{"type": "length", "length": 0}, "prompt_tokens": len(req.InputIDs),
			"completion_tokens": 0, "input_token_logprobs": in, "output_token_logprobs": [][]any{}}})
		return
	}
	sp := req.SamplingParams
	greq := engine.GenerateRequest{PromptIDs: req.InputIDs, MaxTokens: sp.MaxNewTokens, Adapter: adapter, TopLogprobs: req.TopLogprobsNum,
		Sampling: engine.Sampling{Temperature: sp.Temperature, TopP: sp.TopP, TopK: sp.TopK, Seed: sp.Seed}}
	stop := map[int32]bool{}
	for _, id := range sp.StopTokenIDs {
		stop[id] = true
	}
	w.Header().Set("Content-Type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	var ids []int32
	var lps, tops []any
	sent := 0
	send := func(finish any) {
		m := map[string]any{"id": "r1", "finish_reason": finish, "prompt_tokens": len(req.InputIDs), "completion_tokens": len(ids)}
		out, outLps, outTops := ids, lps, tops
		if incremental {
			out, outLps, outTops = ids[sent:], lps[sent:], tops[sent:]
		}
		m["output_token_logprobs"] = outLps
		if req.TopLogprobsNum > 0 {
			m["output_top_logprobs"] = outTops
		}
		sent = len(ids)
		data, _ := json.Marshal(map[string]any{"text": "…", "output_ids": out, "meta_info": m})
		fmt.Fprintf(w, "data: %s\n\n", data)
		if flusher != nil {
			flusher.Flush()
		}
	}
	var pending bool
	gen, err := f.n.Generate(r.Context(), greq, func(tok engine.Token) error {
		if pending {
			send(nil) // the previous token; the last one goes with the finish reason
		}
		ids = append(ids, tok.ID)
		lps = append(lps, triple(tok.Logprob, tok.ID))
		var alts []any
		for _, a := range tok.Top {
			alts = append(alts, triple(a.Logprob, a.ID))
		}
		tops = append(tops, alts)
		pending = true
		if stop[tok.ID] {
			return engine.ErrStop
		}
		return nil
	})
	if err != nil {
		fmt.Fprintf(w, "data: {\"error\": {\"message\": %q}}\n\ndata: [DONE]\n\n", err.Error())
		return
	}
	finish := map[string]any{"type": "length", "length": len(ids)}
	if gen.FinishReason == engine.FinishStop {
		finish = map[string]any{"type": "stop", "matched": ids[len(ids)-1]}
	}
	send(finish)
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// Requests are the /generate bodies received, in order.
func (f *Fake) Requests() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.requests...)
}

// AdapterCalls are the load and unload calls received ("load NAME PATH",
// "unload NAME"), in order.
func (f *Fake) AdapterCalls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.loads...)
}

// Loaded says whether adapter name is loaded.
func (f *Fake) Loaded(name string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.loaded[name]
	return ok
}

// SetIncremental makes streams carry only what is new in each event (the
// server's incremental streaming output) instead of everything so far.
func (f *Fake) SetIncremental(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.incremental = on
}

// SetGarbage makes /generate answer a malformed stream.
func (f *Fake) SetGarbage(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.garbage = on
}

// Close stops the server, as a replica that died.
func (f *Fake) Close() {
	f.srv.CloseClientConnections()
	f.srv.Close()
}
