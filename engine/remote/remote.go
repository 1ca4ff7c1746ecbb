// Package remote is the part of a remote engine that does not depend on the
// server's wire protocol: an engine.Engine and engine.Publisher over one or
// more replicas of an inference server (vLLM, SGLang), each protocol a
// small Protocol implementation in its own package (engine/vllm,
// engine/sglang).
//
// clawrl keeps the chat template, the tokenizer and tool-call parsing (the
// Format comes from the local checkpoint folder the servers serve) and sends
// token ids, so the stored ids and behaviour logprobs are exactly what the
// server sampled.
//
// # Versions
//
// Each published adapter is loaded on every replica under a versioned name
// (clawrl-v<N>). A request resolves its adapter once and holds it until it
// ends; an older version is unloaded when no request holds it any more. A
// replica that restarted (and lost its adapters) gets them again before its
// next request.
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
package remote

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
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

// Target names the weights one call runs on.
type Target struct {
	Model   string // the served base model's id (from Protocol.Models)
	Adapter string // a loaded adapter's name; "" = the base weights
}

// Protocol is one inference server's HTTP API. Every method talks to one
// replica at base URL url. Errors the server answered with are *Error
// (with its HTTP status); answers of the wrong shape wrap ErrGarbage.
type Protocol interface {
	// Name is the engine's name ("vllm", "sglang") for Info and messages.
	Name() string
	// Models returns the served base model's id and its context length
	// (0 = unknown).
	Models(ctx context.Context, c *Client, url string) (id string, contextLength int, err error)
	// LoadAdapter loads the PEFT adapter in dir under name; a name that is
	// already loaded is success.
	LoadAdapter(ctx context.Context, c *Client, url, name, dir string) error
	UnloadAdapter(ctx context.Context, c *Client, url, name string) error
	// Generate streams a completion of req.PromptIDs (at most maxTokens
	// new tokens, ending at any of stop), passing each sampled token to
	// emit and returning emit's error as it is. finish is
	// engine.FinishStop or engine.FinishLength.
	Generate(ctx context.Context, c *Client, url string, t Target, req engine.GenerateRequest, maxTokens int,
		stop []int32, emit func(engine.Token) error) (finish string, err error)
	// Score returns the logprob of each completion token after prompt,
	// from one prefill.
	Score(ctx context.Context, c *Client, url string, t Target, prompt, completion []int32) ([]float32, error)
	// MissingAdapter says err means the replica does not know the adapter
	// the request named (it restarted): load it again and retry there.
	MissingAdapter(err error) bool
}

// Options tune Open.
type Options struct {
	// ModelDir is the checkpoint folder the servers serve: its tokenizer
	// and chat template are clawrl's Format. Required.
	ModelDir string
	// Model is the served model name (default: what Protocol.Models says).
	Model string
	// Attempts bounds the tries of one request across replicas (default 3).
	Attempts int
	// DownFor is how long a failed replica is left out (default 10s).
	DownFor time.Duration
	// HTTP makes the calls (default: one without a timeout; requests end
	// with their context).
	HTTP   *http.Client
	Logger *slog.Logger
}

// Engine is an engine.Engine and engine.Publisher on replicas of one server.
type Engine struct {
	proto    Protocol
	client   *Client
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

// AdapterName is the name version v is loaded under on every replica.
func AdapterName(v int64) string { return "clawrl-v" + strconv.FormatInt(v, 10) }

// ParseURLs reads the part of --engine after "NAME:": comma-separated base
// URLs of the replicas.
func ParseURLs(name, spec string) ([]string, error) {
	var urls []string
	for _, u := range strings.Split(spec, ",") {
		u = strings.TrimRight(strings.TrimSpace(u), "/")
		if u == "" {
			continue
		}
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			return nil, fmt.Errorf("%s replica %q: want http://host:port", name, u)
		}
		urls = append(urls, u)
	}
	if len(urls) == 0 {
		return nil, fmt.Errorf("%s: no replica URL", name)
	}
	return urls, nil
}

// Open connects to the replicas at urls that speak proto. At least one must
// answer; the others may come up later.
func Open(ctx context.Context, proto Protocol, urls []string, opts Options) (*Engine, error) {
	name := proto.Name()
	if opts.ModelDir == "" {
		return nil, fmt.Errorf("%s engine: the local checkpoint folder (--model) is needed for the tokenizer and chat template", name)
	}
	if len(urls) == 0 {
		return nil, fmt.Errorf("%s engine: no replica URL", name)
	}
	if opts.Attempts <= 0 {
		opts.Attempts = 3
	}
	if opts.DownFor <= 0 {
		opts.DownFor = 10 * time.Second
	}
	if opts.HTTP == nil {
		opts.HTTP = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: time.Minute}}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	cfg, err := model.LoadConfig(opts.ModelDir)
	if err != nil {
		return nil, fmt.Errorf("%s engine: %w", name, err)
	}
	format, err := native.LoadFormat(opts.ModelDir, cfg)
	if err != nil {
		return nil, fmt.Errorf("%s engine: %w", name, err)
	}
	e := &Engine{proto: proto, client: &Client{HTTP: opts.HTTP, Engine: name}, format: format, opts: opts,
		log: opts.Logger.With("engine", name), versions: map[int64]*version{}}
	for _, u := range urls {
		e.replicas = append(e.replicas, &replica{url: u, loaded: map[string]bool{}})
	}
	var lastErr error
	for _, r := range e.replicas {
		id, maxLen, err := proto.Models(ctx, e.client, r.url)
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
		e.info = engine.Info{ID: opts.Model, Family: string(cfg.ModelType), ContextLength: maxLen, Engine: name}
		return e, nil
	}
	return nil, fmt.Errorf("%s engine: no replica answers: %w", name, lastErr)
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
	e.opts.HTTP.CloseIdleConnections()
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

// ReplicaOrder lists the replicas' URLs in the order a request with
// affinity key tries them.
func (e *Engine) ReplicaOrder(key string) []string {
	var out []string
	for _, r := range e.order(key) {
		out = append(out, r.url)
	}
	return out
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
		s[i] = scored{r, mix64(h.Sum64()), r.up(now)}
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

// mix64 is MurmurHash3's 64-bit finaliser. FNV-1a alone mixes the last
// bytes it reads poorly: for keys that differ only at the end ("session-1",
// "session-2", ...) the comparison between two replicas' hashes came out
// the same for every key on some pairs of URLs, so one replica took every
// session. The finaliser's avalanche makes each key's winner independent.
func mix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
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

// acquire resolves an adapter name to the target it runs on and its
// version, holding the version until release.
func (e *Engine) acquire(name string) (t Target, v int64, release func(), err error) {
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
			return Target{}, 0, nil, fmt.Errorf("adapter %q: want %q, %q or v<N>", name, engine.AdapterCurrent, engine.AdapterBase)
		}
		v = n
	}
	if v == 0 {
		return Target{Model: e.model}, 0, func() {}, nil
	}
	ver, ok := e.versions[v]
	if !ok {
		return Target{}, 0, nil, fmt.Errorf("adapter %q is not loaded (current version %d)", name, e.current)
	}
	ver.refs++
	once := sync.Once{}
	return Target{Model: e.model, Adapter: AdapterName(v)}, v, func() { once.Do(func() { e.releaseVersion(v) }) }, nil
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
	name := AdapterName(v)
	if err := e.proto.LoadAdapter(ctx, e.client, r.url, name, dir); err != nil {
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
	name := AdapterName(v)
	for _, r := range e.replicas {
		if !r.hasAdapter(name) {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := e.proto.UnloadAdapter(ctx, e.client, r.url, name)
		cancel()
		r.setAdapter(name, false)
		if err != nil {
			e.log.Warn("unload adapter", "adapter", name, "replica", r.url, "err", err)
		}
	}
}

// ensure makes sure replica r has the adapter a request will name.
func (e *Engine) ensure(ctx context.Context, r *replica, v int64) error {
	if v == 0 || r.hasAdapter(AdapterName(v)) {
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

// retryableErr says whether err may pass on another replica.
func retryableErr(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var re *Error
	if errors.As(err, &re) {
		return re.retryable()
	}
	return true // connection refused or reset, a malformed answer
}

// attempt runs fn on replicas in affinity order until one succeeds, a
// failure is not the replica's fault, or fn says it cannot be retried. A
// replica that no longer knows the request's adapter (it restarted) gets it
// again and the request retries there, keeping the session's prefix cache.
func (e *Engine) attempt(ctx context.Context, key string, v int64, fn func(r *replica) (retry bool, err error)) error {
	var lastErr error
	reps := e.order(key)
	next := 0
	for i := 0; i < e.opts.Attempts; i++ {
		r := reps[next%len(reps)]
		if err := e.ensure(ctx, r, v); err != nil {
			lastErr = err
			if ctx.Err() != nil {
				return ctx.Err()
			}
			next++
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
		if v != 0 && e.proto.MissingAdapter(err) {
			r.setAdapter(AdapterName(v), false)
			continue
		}
		if !retry || !retryableErr(err) {
			return err
		}
		e.log.Warn("replica failed; trying another", "replica", r.url, "err", err)
		r.markDown(e.opts.DownFor)
		next++
	}
	return fmt.Errorf("%s: %d attempts failed: %w", e.proto.Name(), e.opts.Attempts, lastErr)
}

// Generate streams a completion of req.PromptIDs from the replica the
// request's session maps to.
func (e *Engine) Generate(ctx context.Context, req engine.GenerateRequest, emit func(engine.Token) error) (engine.Generation, error) {
	name := e.proto.Name()
	if req.MaxTokens <= 0 {
		return engine.Generation{}, fmt.Errorf("%s generate: max tokens %d must be positive", name, req.MaxTokens)
	}
	if len(req.PromptIDs) == 0 {
		return engine.Generation{}, fmt.Errorf("%s generate: empty prompt", name)
	}
	if len(req.PromptIDs) >= e.info.ContextLength {
		return engine.Generation{}, fmt.Errorf("%s generate: prompt of %d tokens leaves no room in the context window of %d", name, len(req.PromptIDs), e.info.ContextLength)
	}
	target, v, release, err := e.acquire(req.Adapter)
	if err != nil {
		return engine.Generation{}, err
	}
	defer release()
	maxTokens := min(req.MaxTokens, e.info.ContextLength-len(req.PromptIDs))
	start := time.Now()
	var gen engine.Generation
	err = e.attempt(ctx, affinityKey(req.Affinity, req.PromptIDs), v, func(r *replica) (bool, error) {
		gen = engine.Generation{PolicyVersion: v, PromptTokens: len(req.PromptIDs)}
		var first time.Time
		finish, err := e.proto.Generate(ctx, e.client, r.url, target, req, maxTokens, e.format.StopIDs(), func(t engine.Token) error {
			if first.IsZero() {
				first = time.Now()
			}
			gen.Tokens = append(gen.Tokens, t)
			return emit(t)
		})
		if errors.Is(err, engine.ErrStop) {
			finish, err = engine.FinishStop, nil
		}
		if err == nil {
			gen.FinishReason = finish
			now := time.Now()
			if first.IsZero() {
				first = now
			}
			gen.PrefillNanos = first.Sub(start).Nanoseconds()
			gen.DecodeNanos = now.Sub(first).Nanoseconds()
		}
		// Only a request that gave the caller nothing may start again.
		return len(gen.Tokens) == 0, err
	})
	if err != nil {
		return engine.Generation{}, err
	}
	return gen, nil
}

// Score returns the logprob of each completion token after the prompt,
// from one prefill.
func (e *Engine) Score(ctx context.Context, req engine.ScoreRequest) (engine.Scored, error) {
	name := e.proto.Name()
	if len(req.PromptIDs) == 0 {
		return engine.Scored{}, fmt.Errorf("%s score: empty prompt", name)
	}
	if len(req.CompletionIDs) == 0 {
		return engine.Scored{Logprobs: []float32{}}, nil
	}
	target, v, release, err := e.acquire(req.Adapter)
	if err != nil {
		return engine.Scored{}, err
	}
	defer release()
	var out engine.Scored
	err = e.attempt(ctx, affinityKey("", req.PromptIDs), v, func(r *replica) (bool, error) {
		lps, err := e.proto.Score(ctx, e.client, r.url, target, req.PromptIDs, req.CompletionIDs)
		if err != nil {
			return true, err
		}
		if len(lps) != len(req.CompletionIDs) {
			return true, fmt.Errorf("%w: %d logprobs for %d completion tokens", ErrGarbage, len(lps), len(req.CompletionIDs))
		}
		out = engine.Scored{Logprobs: lps, PolicyVersion: v}
		return true, nil
	})
	if err != nil {
		return engine.Scored{}, fmt.Errorf("%s score: %w", name, err)
	}
	return out, nil
}
