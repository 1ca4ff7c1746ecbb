// Package vllm is an engine.Engine on one or more vLLM servers
// (`clawrl serve --engine vllm:http://a,http://b`).
//
// clawrl keeps the chat template, the tokenizer and tool-call parsing (the
// Format comes from the local checkpoint folder vLLM serves), sends the
// prompt as token ids to /v1/completions and gets back the sampled ids with
// their logprobs, so the stored ids and behaviour logprobs are exactly what
// vLLM sampled. Score reads prompt_logprobs of prompt+completion.
//
// # Versions
//
// Each published adapter is loaded on every replica under a versioned name
// (clawrl-v<N>, /v1/load_lora_adapter; the server needs
// VLLM_ALLOW_RUNTIME_LORA_UPDATING). A request resolves its adapter once and
// holds it until it ends; an older version is unloaded when no request holds
// it any more. A replica that restarted (and lost its adapters) gets them
// again before its next request.
//
// # Replicas
//
// A request goes to the replica its affinity key (the session) hashes to
// (rendezvous hashing), so a conversation keeps hitting one prefix cache.
// A replica that fails (connection refused, 5xx, a malformed answer) is
// taken out for a while and the request fails over to the next one, at
// most Options.Attempts times, and only while nothing was streamed to the
// caller yet: a generation cut off mid-way fails, and the gateway records
// nothing of it.
package vllm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/native"
	"github.com/clawrl/clawrl/model"
)

// Options tune Open.
type Options struct {
	// ModelDir is the checkpoint folder the servers serve (their --model):
	// its tokenizer and chat template are clawrl's Format. Required.
	ModelDir string
	// Model is the served model name (default: the first of /v1/models).
	Model string
	// Attempts bounds the tries of one request across replicas (default 3).
	Attempts int
	// DownFor is how long a failed replica is left out (default 10s).
	DownFor time.Duration
	// Client makes the HTTP calls (default: one without a timeout; requests
	// end with their context).
	Client *http.Client
	Logger *slog.Logger
}

// Engine is an engine.Engine and engine.Publisher on vLLM replicas.
type Engine struct {
	replicas []*replica
	format   engine.Format
	info     engine.Info
	model    string
	opts     Options
	log      *slog.Logger

	mu       sync.Mutex
	current  int64
	versions map[int64]*version
}

var (
	_ engine.Engine    = (*Engine)(nil)
	_ engine.Publisher = (*Engine)(nil)
)

type replica struct {
	url string

	mu        sync.Mutex
	downUntil time.Time
	loaded    map[string]bool // adapter names loaded there
}

// version is a published adapter and the requests holding it.
type version struct {
	dir  string
	refs int
}

// adapterName is the name version v is loaded under on every replica.
func adapterName(v int64) string { return "clawrl-v" + strconv.FormatInt(v, 10) }

// ParseURLs reads the part of --engine after "vllm:": comma-separated base
// URLs of the replicas.
func ParseURLs(spec string) ([]string, error) {
	var urls []string
	for _, u := range strings.Split(spec, ",") {
		u = strings.TrimRight(strings.TrimSpace(u), "/")
		if u == "" {
			continue
		}
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			return nil, fmt.Errorf("vllm replica %q: want http://host:port", u)
		}
		urls = append(urls, u)
	}
	if len(urls) == 0 {
		return nil, errors.New("vllm: no replica URL")
	}
	return urls, nil
}

// Open connects to the replicas at urls. At least one must answer
// /v1/models; the others may come up later.
func Open(ctx context.Context, urls []string, opts Options) (*Engine, error) {
	if opts.ModelDir == "" {
		return nil, errors.New("vllm engine: the local checkpoint folder (--model) is needed for the tokenizer and chat template")
	}
	if opts.Attempts <= 0 {
		opts.Attempts = 3
	}
	if opts.DownFor <= 0 {
		opts.DownFor = 10 * time.Second
	}
	if opts.Client == nil {
		opts.Client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: time.Minute}}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	cfg, err := model.LoadConfig(opts.ModelDir)
	if err != nil {
		return nil, fmt.Errorf("vllm engine: %w", err)
	}
	format, err := native.LoadFormat(opts.ModelDir, cfg)
	if err != nil {
		return nil, fmt.Errorf("vllm engine: %w", err)
	}
	e := &Engine{format: format, opts: opts, log: opts.Logger.With("engine", "vllm"), versions: map[int64]*version{}}
	for _, u := range urls {
		e.replicas = append(e.replicas, &replica{url: u, loaded: map[string]bool{}})
	}
	var lastErr error
	for _, r := range e.replicas {
		id, maxLen, err := e.models(ctx, r)
		if err != nil {
			lastErr = err
			r.markDown(opts.DownFor)
			continue
		}
		if opts.Model == "" {
			opts.Model = id
		}
		if maxLen <= 0 {
			maxLen = cfg.MaxPositionEmbeddings
		}
		e.model = opts.Model
		e.info = engine.Info{ID: opts.Model, Family: string(cfg.ModelType), ContextLength: maxLen, Engine: "vllm"}
		return e, nil
	}
	return nil, fmt.Errorf("vllm engine: no replica answers: %w", lastErr)
}

// models asks a replica for the served model (its id and max_model_len).
func (e *Engine) models(ctx context.Context, r *replica) (string, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.url+"/v1/models", nil)
	if err != nil {
		return "", 0, err
	}
	resp, err := e.opts.Client.Do(req)
	if err != nil {
		return "", 0, fmt.Errorf("vllm %s: %w", r.url, err)
	}
	defer resp.Body.Close()
	var body struct {
		Data []struct {
			ID          string `json:"id"`
			Parent      any    `json:"parent"`
			MaxModelLen int    `json:"max_model_len"`
		} `json:"data"`
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return "", 0, fmt.Errorf("vllm %s: /v1/models: HTTP %d: %s", r.url, resp.StatusCode, msg)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&body); err != nil {
		return "", 0, fmt.Errorf("vllm %s: /v1/models: %w: %v", r.url, errGarbage, err)
	}
	for _, m := range body.Data {
		if m.Parent == nil { // adapters name their base as parent
			return m.ID, m.MaxModelLen, nil
		}
	}
	return "", 0, fmt.Errorf("vllm %s: /v1/models lists no base model", r.url)
}

// Info describes the served model.
func (e *Engine) Info() engine.Info { return e.info }

// Format is the checkpoint's tokenizer and chat template.
func (e *Engine) Format() engine.Format { return e.format }

// Version is the current policy version.
func (e *Engine) Version() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.current
}

// Close releases idle connections.
func (e *Engine) Close() error {
	e.opts.Client.CloseIdleConnections()
	return nil
}

func (r *replica) up(now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !now.Before(r.downUntil)
}

func (r *replica) markDown(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.downUntil = time.Now().Add(d)
	// A replica that comes back may be a restarted server: it has none of
	// the adapters it had.
	clear(r.loaded)
}

func (r *replica) hasAdapter(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.loaded[name]
}

func (r *replica) setAdapter(name string, loaded bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if loaded {
		r.loaded[name] = true
	} else {
		delete(r.loaded, name)
	}
}

// order lists the replicas for a request with affinity key: rendezvous
// hashing, so each key has a stable first choice and a removed replica only
// moves its own keys. Replicas that are down go last.
func (e *Engine) order(key string) []*replica {
	type scored struct {
		r     *replica
		score uint64
		up    bool
	}
	now := time.Now()
	s := make([]scored, len(e.replicas))
	for i, r := range e.replicas {
		h := fnv.New64a()
		h.Write([]byte(r.url))
		h.Write([]byte{0})
		h.Write([]byte(key))
		s[i] = scored{r, h.Sum64(), r.up(now)}
	}
	sort.SliceStable(s, func(i, j int) bool {
		if s[i].up != s[j].up {
			return s[i].up
		}
		return s[i].score > s[j].score
	})
	out := make([]*replica, len(s))
	for i := range s {
		out[i] = s[i].r
	}
	return out
}

// affinityKey is the request's session, else the start of its prompt.
func affinityKey(affinity string, prompt []int32) string {
	if affinity != "" {
		return affinity
	}
	n := min(len(prompt), 256)
	var b strings.Builder
	for _, id := range prompt[:n] {
		b.WriteString(strconv.Itoa(int(id)))
		b.WriteByte(',')
	}
	return b.String()
}

// acquire resolves an adapter name to the served model name and version,
// holding the version until release.
func (e *Engine) acquire(name string) (served string, v int64, release func(), err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch name {
	case engine.AdapterCurrent:
		v = e.current
	case engine.AdapterBase:
		v = 0
	default:
		n, perr := strconv.ParseInt(strings.TrimPrefix(name, "v"), 10, 64)
		if perr != nil || !strings.HasPrefix(name, "v") {
			return "", 0, nil, fmt.Errorf("adapter %q: want %q, %q or v<N>", name, engine.AdapterCurrent, engine.AdapterBase)
		}
		v = n
	}
	if v == 0 {
		return e.model, 0, func() {}, nil
	}
	ver, ok := e.versions[v]
	if !ok {
		return "", 0, nil, fmt.Errorf("adapter %q is not loaded (current version %d)", name, e.current)
	}
	ver.refs++
	once := sync.Once{}
	return adapterName(v), v, func() { once.Do(func() { e.releaseVersion(v) }) }, nil
}

// releaseVersion drops a request's hold on v and unloads v when it was the
// last holder of a version that is no longer current.
func (e *Engine) releaseVersion(v int64) {
	e.mu.Lock()
	ver := e.versions[v]
	ver.refs--
	unload := ver.refs == 0 && v != e.current
	if unload {
		delete(e.versions, v)
	}
	e.mu.Unlock()
	if unload {
		go e.unload(v)
	}
}

// Publish loads the adapter in dir as version v on every replica that is up
// and makes it current. It fails only when no replica took it; one that was
// down gets it before its next request.
func (e *Engine) Publish(ctx context.Context, v int64, dir string) error {
	if v <= 0 {
		return fmt.Errorf("publish adapter %s: version %d must be positive", dir, v)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("publish version %d: %w", v, err)
	}
	e.mu.Lock()
	if _, ok := e.versions[v]; !ok {
		e.versions[v] = &version{dir: abs}
	}
	e.mu.Unlock()
	loaded := 0
	var lastErr error
	now := time.Now()
	for _, r := range e.replicas {
		if !r.up(now) {
			continue
		}
		if err := e.load(ctx, r, v, abs); err != nil {
			lastErr = err
			continue
		}
		loaded++
	}
	if loaded == 0 {
		e.mu.Lock()
		if e.versions[v].refs == 0 && e.current != v {
			delete(e.versions, v)
		}
		e.mu.Unlock()
		if lastErr == nil {
			lastErr = errors.New("no replica is up")
		}
		return fmt.Errorf("publish version %d: %w", v, lastErr)
	}
	e.mu.Lock()
	old := e.current
	if v > e.current {
		e.current = v
	}
	var unload []int64
	for n, ver := range e.versions {
		if n != e.current && ver.refs == 0 {
			delete(e.versions, n)
			unload = append(unload, n)
		}
	}
	e.mu.Unlock()
	for _, n := range unload {
		e.unload(n)
	}
	e.log.Info("published adapter", "version", v, "previous", old, "replicas", loaded, "of", len(e.replicas))
	return nil
}

// load loads adapter version v from dir on replica r.
func (e *Engine) load(ctx context.Context, r *replica, v int64, dir string) error {
	name := adapterName(v)
	err := e.post(ctx, r, "/v1/load_lora_adapter", map[string]any{"lora_name": name, "lora_path": dir}, nil)
	var re *remoteError
	if errors.As(err, &re) && re.Status == http.StatusBadRequest && strings.Contains(re.Message, "already been loaded") {
		err = nil
	}
	if err != nil {
		if retryableErr(err) {
			r.markDown(e.opts.DownFor)
		}
		return fmt.Errorf("load %s on %s: %w", name, r.url, err)
	}
	r.setAdapter(name, true)
	return nil
}

// unload removes version v from every replica that has it.
func (e *Engine) unload(v int64) {
	name := adapterName(v)
	for _, r := range e.replicas {
		if !r.hasAdapter(name) {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := e.post(ctx, r, "/v1/unload_lora_adapter", map[string]any{"lora_name": name}, nil)
		cancel()
		r.setAdapter(name, false)
		if err != nil {
			e.log.Warn("unload adapter", "adapter", name, "replica", r.url, "err", err)
		}
	}
}

// ensure makes sure replica r has the adapter a request will name.
func (e *Engine) ensure(ctx context.Context, r *replica, v int64) error {
	if v == 0 || r.hasAdapter(adapterName(v)) {
		return nil
	}
	e.mu.Lock()
	ver, ok := e.versions[v]
	e.mu.Unlock()
	if !ok {
		return fmt.Errorf("adapter version %d is gone", v)
	}
	return e.load(ctx, r, v, ver.dir)
}

// post sends a JSON body and decodes a JSON answer into out (nil: ignore).
func (e *Engine) post(ctx context.Context, r *replica, path string, body, out any) error {
	resp, err := e.send(ctx, r, path, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%w: %s: %v", errGarbage, path, err)
	}
	return nil
}

// send posts body and returns the response when it is a 200; any other
// status becomes a remoteError with vLLM's message.
func (e *Engine) send(ctx context.Context, r *replica, path string, body any) (*http.Response, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url+path, bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.opts.Client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusOK {
		return resp, nil
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	msg := strings.TrimSpace(string(data))
	var parsed completionResponse
	if json.Unmarshal(data, &parsed) == nil {
		if perr := parsed.err(); perr != nil {
			msg = perr.(*remoteError).Message
		}
	}
	return nil, &remoteError{Status: resp.StatusCode, Message: msg}
}

// retryableErr says whether err may pass on another replica.
func retryableErr(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var re *remoteError
	if errors.As(err, &re) {
		return re.retryable()
	}
	return true // connection refused or reset, a malformed answer
}

// missingAdapter reports a replica that does not know the adapter a request
// named (it restarted): load it again and retry there.
func missingAdapter(err error) bool {
	var re *remoteError
	return errors.As(err, &re) && re.Status == http.StatusNotFound
}

// attempt runs fn on replicas in affinity order until one succeeds, a
// failure is not the replica's fault, or fn says it cannot be retried.
func (e *Engine) attempt(ctx context.Context, key string, v int64, fn func(r *replica) (retry bool, err error)) error {
	var lastErr error
	reps := e.order(key)
	for i := 0; i < e.opts.Attempts; i++ {
		r := reps[i%len(reps)]
		if err := e.ensure(ctx, r, v); err != nil {
			lastErr = err
			if ctx.Err() != nil {
				return ctx.Err()
			}
			continue
		}
		retry, err := fn(r)
		if err == nil {
			return nil
		}
		lastErr = err
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if missingAdapter(err) && v != 0 {
			r.setAdapter(adapterName(v), false)
			continue
		}
		if !retry || !retryableErr(err) {
			return err
		}
		e.log.Warn("replica failed; trying another", "replica", r.url, "err", err)
		r.markDown(e.opts.DownFor)
	}
	return fmt.Errorf("vllm: %d attempts failed: %w", e.opts.Attempts, lastErr)
}

// Generate streams a completion of req.PromptIDs from the replica the
// request's session maps to.
func (e *Engine) Generate(ctx context.Context, req engine.GenerateRequest, emit func(engine.Token) error) (engine.Generation, error) {
	if req.MaxTokens <= 0 {
		return engine.Generation{}, fmt.Errorf("vllm generate: max tokens %d must be positive", req.MaxTokens)
	}
	if len(req.PromptIDs) == 0 {
		return engine.Generation{}, errors.New("vllm generate: empty prompt")
	}
	if len(req.PromptIDs) >= e.info.ContextLength {
		return engine.Generation{}, fmt.Errorf("vllm generate: prompt of %d tokens leaves no room in the context window of %d", len(req.PromptIDs), e.info.ContextLength)
	}
	served, v, release, err := e.acquire(req.Adapter)
	if err != nil {
		return engine.Generation{}, err
	}
	defer release()
	maxTokens := min(req.MaxTokens, e.info.ContextLength-len(req.PromptIDs))
	logprobs := max(req.TopLogprobs, 1)
	body := completionRequest{
		Model: served, Prompt: req.PromptIDs, MaxTokens: maxTokens,
		Temperature: req.Sampling.Temperature, TopK: req.Sampling.TopK, Seed: req.Sampling.Seed,
		Logprobs: &logprobs, Stream: true, StopTokenIDs: e.format.StopIDs(),
		ReturnTokenIDs: true, ReturnTokensAsTokenIDs: true,
	}
	if p := req.Sampling.TopP; p > 0 && p < 1 {
		body.TopP = p
	}
	start := time.Now()
	var gen engine.Generation
	err = e.attempt(ctx, affinityKey(req.Affinity, req.PromptIDs), v, func(r *replica) (bool, error) {
		gen = engine.Generation{PolicyVersion: v, PromptTokens: len(req.PromptIDs)}
		err := e.stream(ctx, r, body, req, &gen, start, emit)
		// Only a request that gave the caller nothing may start again.
		return len(gen.Tokens) == 0, err
	})
	if err != nil {
		return engine.Generation{}, err
	}
	return gen, nil
}

// stream runs one streamed completion on r, passing tokens to emit.
func (e *Engine) stream(ctx context.Context, r *replica, body completionRequest, req engine.GenerateRequest,
	gen *engine.Generation, start time.Time, emit func(engine.Token) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // closing the connection aborts the request in vLLM
	resp, err := e.send(ctx, r, "/v1/completions", body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var first time.Time
	finished := false
	for sc.Scan() {
		line := sc.Bytes()
		data, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			continue
		}
		data = bytes.TrimSpace(data)
		if string(data) == "[DONE]" {
			break
		}
		choice, ok, err := parseChunk(data)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		toks, err := chunkTokens(choice, req.TopLogprobs)
		if err != nil {
			return err
		}
		for _, t := range toks {
			if first.IsZero() {
				first = time.Now()
			}
			gen.Tokens = append(gen.Tokens, t)
			if err := emit(t); err != nil {
				if errors.Is(err, engine.ErrStop) {
					gen.FinishReason = engine.FinishStop
					e.timings(gen, start, first)
					return nil
				}
				return err
			}
		}
		if choice.FinishReason != nil {
			switch *choice.FinishReason {
			case "stop", "abort":
				gen.FinishReason = engine.FinishStop
			case "length":
				gen.FinishReason = engine.FinishLength
			default:
				gen.FinishReason = engine.FinishStop
			}
			finished = true
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if !finished {
		return fmt.Errorf("%w: stream ended without a finish reason after %d tokens", errGarbage, len(gen.Tokens))
	}
	e.timings(gen, start, first)
	return nil
}

func (e *Engine) timings(gen *engine.Generation, start, first time.Time) {
	now := time.Now()
	if first.IsZero() {
		first = now
	}
	gen.PrefillNanos = first.Sub(start).Nanoseconds()
	gen.DecodeNanos = now.Sub(first).Nanoseconds()
}

// Score returns the logprob of each completion token after the prompt,
// from the prompt logprobs of one prefill.
func (e *Engine) Score(ctx context.Context, req engine.ScoreRequest) (engine.Scored, error) {
	if len(req.PromptIDs) == 0 {
		return engine.Scored{}, errors.New("vllm score: empty prompt")
	}
	if len(req.CompletionIDs) == 0 {
		return engine.Scored{Logprobs: []float32{}}, nil
	}
	served, v, release, err := e.acquire(req.Adapter)
	if err != nil {
		return engine.Scored{}, err
	}
	defer release()
	all := append(append(make([]int32, 0, len(req.PromptIDs)+len(req.CompletionIDs)), req.PromptIDs...), req.CompletionIDs...)
	zero := 0
	body := completionRequest{Model: served, Prompt: all, MaxTokens: 1, Temperature: 0, PromptLogprobs: &zero,
		ReturnTokenIDs: true, ReturnTokensAsTokenIDs: true}
	var out engine.Scored
	err = e.attempt(ctx, affinityKey("", req.PromptIDs), v, func(r *replica) (bool, error) {
		var resp completionResponse
		if err := e.post(ctx, r, "/v1/completions", body, &resp); err != nil {
			return true, err
		}
		if err := resp.err(); err != nil {
			return true, err
		}
		if len(resp.Choices) != 1 {
			return true, fmt.Errorf("%w: %d choices", errGarbage, len(resp.Choices))
		}
		lps, err := parsePromptLogprobs(resp.Choices[0].PromptLogprobs, all, len(req.CompletionIDs))
		if err != nil {
			return true, err
		}
		out = engine.Scored{Logprobs: lps, PolicyVersion: v}
		return true, nil
	})
	if err != nil {
		return engine.Scored{}, fmt.Errorf("vllm score: %w", err)
	}
	return out, nil
}
