// Package native is clawrl's default engine: the Go transformer of package
// model running inside this process, behind the engine.Engine interface.
//
// One scheduler goroutine owns every running sequence. Each iteration it
// admits waiting requests (prefill) and then advances all running sequences by
// one token in a single batched forward pass, so the weights are read once per
// step for the whole batch (continuous batching). Tokens are handed to each
// caller's goroutine through a small queue, so a slow client never stalls the
// batch.
//
// Adapter versions are published while serving: a request resolves its
// adapter once, when it is admitted, and keeps it to the end, so in-flight
// requests finish on the version they started with.
package native

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/model"
)

// Options configure an Engine.
type Options struct {
	// ModelID is the id shown in /v1/models (default: the folder name).
	ModelID string
	// MaxBatch bounds how many sequences decode together (default 16).
	MaxBatch int
	// KeepVersions is how many published adapter versions stay loaded for
	// explicit "v<N>" selection, besides the current one (default 4, the
	// default staleness bound).
	KeepVersions int
	// DefaultSampling is the sampling for requests that set none (Open
	// reads the model's generation_config.json or GGUF metadata; nil = the
	// gateway's fallback).
	DefaultSampling *engine.Sampling
	// PrefixCacheBytes bounds the KV caches kept for prefix reuse (default
	// 1 GiB; negative turns the cache off).
	PrefixCacheBytes int64
	// WeightDType is model.Options.WeightDType: "" (the checkpoint's own;
	// for a GGUF file, model.DefaultGGUFWeights: its blocks, with float32
	// activations where this CPU has those kernels for every type, else
	// with llama.cpp's int8 ones; a float32 copy only without AVX2),
	// "quant" (a GGUF file's blocks with llama.cpp's int8 activations),
	// "quant-f32", "f32" or "bf16".
	WeightDType string
}

// Engine serves a model.Model.
type Engine struct {
	m      *model.Model
	format *Format
	info   engine.Info
	opts   Options

	submit chan *request
	prefix *prefixCache // owned by the scheduler goroutine
	// versionsChanged tells the scheduler to forget caches of unloaded
	// adapter versions.
	versionsChanged atomic.Bool
	stop            chan struct{}
	done            chan struct{}
	busy            atomic.Int64 // requests admitted or waiting

	mu       sync.RWMutex
	current  int64
	versions map[int64]*model.Adapter // 0: stored only by SetStartAdapter (else base)
}

// Open loads the checkpoint in dir (config.json, *.safetensors,
// tokenizer.json, tokenizer_config.json) and starts the scheduler.
func Open(dir string, opts Options) (*Engine, error) {
	dtype := opts.WeightDType
	if dtype == "" && model.IsGGUF(dir) {
		var err error
		if dtype, err = model.DefaultGGUFWeights(dir); err != nil {
			return nil, fmt.Errorf("native engine: %w", err)
		}
	}
	m, err := model.LoadWith(dir, model.Options{WeightDType: dtype})
	if err != nil {
		return nil, fmt.Errorf("native engine: %w", err)
	}
	f, err := LoadFormat(dir, m.Config)
	if err != nil {
		return nil, fmt.Errorf("native engine: %w", err)
	}
	if opts.ModelID == "" {
		opts.ModelID = modelIDFromDir(dir)
	}
	if opts.DefaultSampling == nil {
		p, ok, err := model.SamplingDefaults(dir)
		if err != nil {
			return nil, fmt.Errorf("native engine: %w", err)
		}
		if ok {
			opts.DefaultSampling = &engine.Sampling{Temperature: p.Temperature, TopP: p.TopP, TopK: p.TopK}
		}
	}
	return New(m, f, opts), nil
}

// New starts an engine over a loaded model and format.
func New(m *model.Model, f *Format, opts Options) *Engine {
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = 16
	}
	if opts.KeepVersions <= 0 {
		opts.KeepVersions = 4
	}
	if opts.ModelID == "" {
		opts.ModelID = string(m.Config.ModelType)
	}
	if opts.PrefixCacheBytes == 0 {
		opts.PrefixCacheBytes = 1 << 30
	}
	e := &Engine{
		m:      m,
		format: f,
		opts:   opts,
		info: engine.Info{
			ID:              opts.ModelID,
			Family:          string(m.Config.ModelType),
			ContextLength:   m.Config.MaxPositionEmbeddings,
			Engine:          "native",
			DefaultSampling: opts.DefaultSampling,
		},
		submit:   make(chan *request),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
		versions: map[int64]*model.Adapter{},
	}
	if opts.PrefixCacheBytes > 0 {
		e.prefix = newPrefixCache(m.Config, opts.PrefixCacheBytes)
	}
	go e.run()
	return e
}

// Close stops the scheduler; requests still running fail.
func (e *Engine) Close() error {
	select {
	case <-e.stop:
	default:
		close(e.stop)
	}
	<-e.done
	return nil
}

// Model is the loaded model (the trainer shares its weights).
func (e *Engine) Model() *model.Model { return e.m }

// Info describes the served model.
func (e *Engine) Info() engine.Info { return e.info }

// Format is the model's tokenizer and chat template.
func (e *Engine) Format() engine.Format { return e.format }

// Busy reports how many generations are running or waiting; the trainer
// yields to serving while it is above zero.
func (e *Engine) Busy() int { return int(e.busy.Load()) }

// Version is the current policy version (0 = base weights).
func (e *Engine) Version() int64 {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.current
}

// Publish loads the PEFT adapter in dir as version v and makes it current.
// Versions older than the newest KeepVersions are unloaded; requests that
// already hold one keep it alive until they finish.
func (e *Engine) Publish(ctx context.Context, v int64, dir string) error {
	if v <= 0 {
		return fmt.Errorf("publish adapter %s: version %d must be positive", dir, v)
	}
	a, err := e.m.LoadAdapter(dir)
	if err != nil {
		return fmt.Errorf("publish version %d: %w", v, err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.versions[v] = a
	if v > e.current {
		e.current = v
	}
	for old := range e.versions {
		if old <= e.current-int64(e.opts.KeepVersions) {
			delete(e.versions, old)
			e.versionsChanged.Store(true)
		}
	}
	return nil
}

// SetStartAdapter makes version 0 (the policy before any published
// version) run the PEFT adapter in dir instead of the bare base weights: the
// policy a training run starts from, such as an SFT warm start. Requests for
// engine.AdapterBase still get the base weights alone.
func (e *Engine) SetStartAdapter(dir string) error {
	a, err := e.m.LoadAdapter(dir)
	if err != nil {
		return fmt.Errorf("start adapter: %w", err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.versions[0] = a
	e.versionsChanged.Store(true)
	return nil
}

// resolve maps a request's adapter name to a version and its weights.
func (e *Engine) resolve(name string) (int64, *model.Adapter, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	switch name {
	case engine.AdapterCurrent:
		return e.current, e.versions[e.current], nil
	case engine.AdapterBase:
		return 0, nil, nil
	}
	v, err := strconv.ParseInt(strings.TrimPrefix(name, "v"), 10, 64)
	if err != nil || !strings.HasPrefix(name, "v") {
		return 0, nil, fmt.Errorf("adapter %q: want %q, %q or v<N>", name, engine.AdapterCurrent, engine.AdapterBase)
	}
	if v == 0 {
		return 0, e.versions[0], nil
	}
	a, ok := e.versions[v]
	if !ok {
		return 0, nil, fmt.Errorf("adapter %q is not loaded (current version %d)", name, e.current)
	}
	return v, a, nil
}

// ErrPromptTooLong is returned when the prompt leaves no room to generate.
var ErrPromptTooLong = errors.New("prompt does not fit the model's context window")

// request is one generation, shared between its caller and the scheduler.
type request struct {
	ctx     context.Context
	req     engine.GenerateRequest
	version int64
	adapter *model.Adapter
	rng     *rand.Rand
	params  model.SamplingParams
	stopIDs []int32
	queued  time.Time

	// Set by the caller when it stops reading: the scheduler drops the
	// sequence at its next step.
	abandoned atomic.Bool

	mu       sync.Mutex
	pending  []engine.Token
	final    bool   // no more tokens will come
	finish   string // FinishStop or FinishLength, once final
	err      error
	admitted time.Time
	prefill  time.Duration
	decode   time.Duration
	signal   chan struct{} // capacity 1: "pending or final changed"
}

func (r *request) push(tok engine.Token) {
	r.mu.Lock()
	r.pending = append(r.pending, tok)
	r.mu.Unlock()
	r.notify()
}

func (r *request) end(finish string, err error) {
	r.mu.Lock()
	r.final, r.finish, r.err = true, finish, err
	r.mu.Unlock()
	r.notify()
}

func (r *request) notify() {
	select {
	case r.signal <- struct{}{}:
	default:
	}
}

// Generate samples a completion; see engine.Engine.
func (e *Engine) Generate(ctx context.Context, req engine.GenerateRequest, emit func(engine.Token) error) (engine.Generation, error) {
	gen := engine.Generation{PromptTokens: len(req.PromptIDs)}
	if len(req.PromptIDs) == 0 {
		return gen, errors.New("generate: empty prompt")
	}
	if limit := e.info.ContextLength; limit > 0 {
		room := limit - len(req.PromptIDs)
		if room <= 0 {
			return gen, fmt.Errorf("generate: %d prompt tokens, context window %d: %w", len(req.PromptIDs), limit, ErrPromptTooLong)
		}
		if req.MaxTokens <= 0 || req.MaxTokens > room {
			req.MaxTokens = room
		}
	}
	if req.MaxTokens <= 0 {
		req.MaxTokens = 1
	}
	version, adapter, err := e.resolve(req.Adapter)
	if err != nil {
		return gen, fmt.Errorf("generate: %w", err)
	}
	for _, id := range req.PromptIDs {
		if id < 0 || int(id) >= e.m.Config.VocabSize {
			return gen, fmt.Errorf("generate: prompt token id %d outside the vocabulary (%d)", id, e.m.Config.VocabSize)
		}
	}
	r := e.newRequest(ctx, req, version, adapter)
	gen.PolicyVersion = version
	e.busy.Add(1)
	defer e.busy.Add(-1)
	defer r.abandoned.Store(true)

	select {
	case e.submit <- r:
	case <-ctx.Done():
		return gen, ctx.Err()
	case <-e.stop:
		return gen, errors.New("generate: engine closed")
	}
	for {
		select {
		case <-r.signal:
		case <-ctx.Done():
			return gen, ctx.Err()
		}
		r.mu.Lock()
		toks := r.pending
		r.pending = nil
		final, finish, ferr := r.final, r.finish, r.err
		prefill, decode, admitted := r.prefill, r.decode, r.admitted
		r.mu.Unlock()
		gen.QueueNanos = max(0, admitted.Sub(r.queued).Nanoseconds())
		for _, tok := range toks {
			gen.Tokens = append(gen.Tokens, tok)
			if err := emit(tok); err != nil {
				gen.PrefillNanos, gen.DecodeNanos = prefill.Nanoseconds(), decode.Nanoseconds()
				if errors.Is(err, engine.ErrStop) {
					gen.FinishReason = engine.FinishStop
					return gen, nil
				}
				return gen, err
			}
		}
		if final {
			gen.PrefillNanos, gen.DecodeNanos = prefill.Nanoseconds(), decode.Nanoseconds()
			if ferr != nil {
				if cerr := ctx.Err(); cerr != nil {
					return gen, cerr
				}
				return gen, ferr
			}
			gen.FinishReason = finish
			return gen, nil
		}
	}
}

// newRequest is the scheduler's record of a checked request for version
// (its adapter).
func (e *Engine) newRequest(ctx context.Context, req engine.GenerateRequest, version int64, adapter *model.Adapter) *request {
	r := &request{
		ctx:     ctx,
		req:     req,
		version: version,
		adapter: adapter,
		params:  model.SamplingParams{Temperature: req.Sampling.Temperature, TopP: req.Sampling.TopP, TopK: req.Sampling.TopK},
		stopIDs: e.format.StopIDs(),
		queued:  time.Now(),
		signal:  make(chan struct{}, 1),
	}
	if req.Sampling.Temperature > 0 {
		seed := rand.Uint64()
		if req.Sampling.Seed != nil {
			seed = uint64(*req.Sampling.Seed)
		}
		r.rng = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	}
	return r
}

// running is a sequence the scheduler advances.
type running struct {
	r       *request
	seq     *model.Sequence
	next    int32 // the token to feed at the next step
	emitted int
}

func (e *Engine) run() {
	defer close(e.done)
	var active []*running
	for {
		// Admit: block when idle, otherwise take whatever is waiting.
		if len(active) == 0 {
			select {
			case r := <-e.submit:
				active = e.admit(active, r)
			case <-e.stop:
				return
			}
		}
	admit:
		for len(active) < e.opts.MaxBatch {
			select {
			case r := <-e.submit:
				active = e.admit(active, r)
			case <-e.stop:
				for _, a := range active {
					a.r.end("", errors.New("engine closed"))
				}
				return
			default:
				break admit
			}
		}
		active = slices.DeleteFunc(active, func(a *running) bool {
			if a.r.abandoned.Load() || a.r.ctx.Err() != nil {
				a.r.end("", context.Canceled)
				e.release(a)
				return true
			}
			return false
		})
		if e.prefix != nil && e.versionsChanged.Swap(false) {
			e.mu.RLock()
			e.prefix.drop(func(a *model.Adapter) bool {
				for _, v := range e.versions {
					if v == a {
						return true
					}
				}
				return a == nil
			})
			e.mu.RUnlock()
		}
		if len(active) == 0 {
			continue
		}
		active = e.step(active)
	}
}

// admit prefills r's prompt and samples its first token.
func (e *Engine) admit(active []*running, r *request) []*running {
	if r.ctx.Err() != nil || r.abandoned.Load() {
		r.end("", context.Canceled)
		return active
	}
	start := time.Now()
	var seq *model.Sequence
	reused := 0
	if e.prefix != nil {
		seq, reused = e.prefix.take(r.req.PromptIDs, r.adapter, active)
	}
	if seq == nil {
		seq = e.m.NewSequence()
	}
	logits, err := e.m.Prefill(r.ctx, seq, r.req.PromptIDs[reused:], r.adapter)
	r.mu.Lock()
	r.admitted, r.prefill = start, time.Since(start)
	r.mu.Unlock()
	if err != nil {
		r.end("", err)
		return active
	}
	a := &running{r: r, seq: seq}
	if e.sampleNext(a, logits) {
		e.release(a)
		return active
	}
	return append(active, a)
}

// release hands a finished sequence's cache to the prefix cache.
func (e *Engine) release(a *running) {
	if e.prefix != nil {
		e.prefix.put(a.seq, a.r.adapter)
	}
}

// sampleNext samples the next token of a from logits and hands it over. It
// reports whether the sequence is finished.
func (e *Engine) sampleNext(a *running, logits []float32) bool {
	r := a.r
	id, lp := model.Sample(logits, r.params, r.rng)
	tok := engine.Token{ID: id, Logprob: lp}
	if r.req.TopLogprobs > 0 {
		for _, t := range model.TopLogprobs(logits, r.req.TopLogprobs) {
			tok.Top = append(tok.Top, engine.TokenLogprob{ID: t.ID, Logprob: t.Logprob})
		}
	}
	r.push(tok)
	a.emitted++
	a.next = id
	switch {
	case slices.Contains(r.stopIDs, id):
		r.end(engine.FinishStop, nil)
		return true
	case a.emitted >= r.req.MaxTokens:
		r.end(engine.FinishLength, nil)
		return true
	}
	return false
}

// step advances every active sequence by one token in one batched forward.
func (e *Engine) step(active []*running) []*running {
	start := time.Now()
	seqs := make([]*model.Sequence, len(active))
	ids := make([]int32, len(active))
	adapters := make([]*model.Adapter, len(active))
	for i, a := range active {
		seqs[i], ids[i], adapters[i] = a.seq, a.next, a.r.adapter
	}
	logits, err := e.m.DecodeStep(seqs, ids, adapters)
	elapsed := time.Since(start)
	if err != nil {
		for _, a := range active {
			a.r.end("", err)
		}
		return nil
	}
	kept := active[:0]
	for i, a := range active {
		a.r.mu.Lock()
		a.r.decode += elapsed
		a.r.mu.Unlock()
		if e.sampleNext(a, logits[i]) {
			e.release(a)
		} else {
			kept = append(kept, a)
		}
	}
	clear(active[len(kept):])
	return kept
}

// Score returns the logprob of each completion token after the prompt.
func (e *Engine) Score(ctx context.Context, req engine.ScoreRequest) (engine.Scored, error) {
	version, adapter, err := e.resolve(req.Adapter)
	if err != nil {
		return engine.Scored{}, fmt.Errorf("score: %w", err)
	}
	if n := len(req.PromptIDs) + len(req.CompletionIDs); e.info.ContextLength > 0 && n > e.info.ContextLength {
		return engine.Scored{}, fmt.Errorf("score: %d tokens, context window %d: %w", n, e.info.ContextLength, ErrPromptTooLong)
	}
	lps, err := e.m.Score(ctx, req.PromptIDs, req.CompletionIDs, adapter)
	if err != nil {
		return engine.Scored{}, fmt.Errorf("score: %w", err)
	}
	return engine.Scored{Logprobs: lps, PolicyVersion: version}, nil
}

var (
	_ engine.Engine    = (*Engine)(nil)
	_ engine.Publisher = (*Engine)(nil)
)
