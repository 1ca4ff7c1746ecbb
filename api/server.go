package api

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/session"
	"github.com/clawrl/clawrl/store"
)

// Config configures a Server.
type Config struct {
	Engine engine.Engine
	Store  store.Store
	Logger *slog.Logger
	// APIKey, when set, is required as "Authorization: Bearer <key>" on
	// every route but /healthz.
	APIKey string
	// MaxBodyBytes bounds request bodies (413 beyond). Default 32 MiB:
	// agents send long system prompts and tool outputs.
	MaxBodyBytes int64
	// DefaultMaxTokens caps a completion that asks for no limit. Default 4096.
	DefaultMaxTokens int
	// BodyReadTimeout bounds reading a request body (default 1 minute), as
	// a deadline set around the read, so it never limits how long a
	// generation may stream afterwards.
	BodyReadTimeout time.Duration
	// Registry receives the gateway's metrics; a fresh one when nil.
	Registry *prometheus.Registry
	// UI, when set, serves the dashboard and browser chat at "/" and under
	// "/ui/" (package ui), behind the same middleware as the API.
	UI UI
}

// UI is the dashboard's handler. Its static page (the paths Public
// reports) loads without the key, as it holds no data and asks for the key
// itself; everything else it serves needs the key like the API.
type UI interface {
	http.Handler
	Public(path string) bool
}

// Server is the gateway. Create it with New; serve Handler().
type Server struct {
	cfg     Config
	engine  engine.Engine
	format  engine.Format
	stopIDs map[int32]bool
	info    engine.Info
	store   store.Store
	tracker *session.Tracker
	log     *slog.Logger
	metrics *metrics
	started time.Time
	handler http.Handler
}

// New returns a gateway serving cfg.Engine and recording into cfg.Store.
func New(cfg Config) (*Server, error) {
	if cfg.Engine == nil || cfg.Store == nil {
		return nil, errors.New("api: Config needs an Engine and a Store")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 32 << 20
	}
	if cfg.DefaultMaxTokens <= 0 {
		cfg.DefaultMaxTokens = 4096
	}
	if cfg.BodyReadTimeout <= 0 {
		cfg.BodyReadTimeout = time.Minute
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	s := &Server{
		cfg: cfg, engine: cfg.Engine, format: cfg.Engine.Format(), info: cfg.Engine.Info(),
		store: cfg.Store, log: cfg.Logger, started: time.Now(), stopIDs: map[int32]bool{},
		tracker: session.NewTracker(cfg.Store, cfg.Logger),
	}
	for _, id := range s.format.StopIDs() {
		s.stopIDs[id] = true
	}
	s.metrics = newMetrics(cfg.Registry, cfg.Store)
	mux := http.NewServeMux()
	s.route(mux, "/v1/chat/completions", http.MethodPost, s.handleChatCompletions)
	s.route(mux, "/v1/models", http.MethodGet, s.handleModels)
	s.route(mux, "/v1/feedback", http.MethodPost, s.handleFeedback)
	s.route(mux, "/healthz", http.MethodGet, s.handleHealth)
	s.route(mux, "/metrics", http.MethodGet, promhttp.HandlerFor(cfg.Registry, promhttp.HandlerOpts{}).ServeHTTP)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, errorWithCode(http.StatusNotFound, "invalid_request_error", "not_found", "no route %s %s", r.Method, r.URL.Path))
	})
	if cfg.UI != nil {
		mux.Handle("/{$}", cfg.UI)
		mux.Handle("/ui/", cfg.UI)
	}
	s.handler = s.recoverer(s.observe(s.authenticate(mux)))
	return s, nil
}

// Tracker is the session tracker (for the idle-expiry loop).
func (s *Server) Tracker() *session.Tracker { return s.tracker }

// Handler is the gateway's HTTP handler with its middleware.
func (s *Server) Handler() http.Handler { return s.handler }

// HTTPServer wraps Handler in an http.Server with header and idle timeouts
// (bodies have their own deadline, Config.BodyReadTimeout). There is no
// timeout on the whole exchange: a long generation streams for as long as it
// runs, and a client that goes away cancels it.
func (s *Server) HTTPServer(addr string) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    1 << 20,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
}

// CheckAddr refuses to listen beyond this machine without an API key.
func CheckAddr(addr, apiKey string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: %w", addr, err)
	}
	if isLoopback(host) || apiKey != "" {
		return nil
	}
	return fmt.Errorf("address %q is reachable from other machines: set an API key (--api-key or CLAWRL_API_KEY) or bind 127.0.0.1", addr)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

func (s *Server) route(mux *http.ServeMux, path, method string, h http.HandlerFunc) {
	mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != method && !(method == http.MethodGet && r.Method == http.MethodHead) {
			w.Header().Set("Allow", method)
			writeError(w, errorWithCode(http.StatusMethodNotAllowed, "invalid_request_error", "method_not_allowed", "%s %s: use %s", r.Method, path, method))
			return
		}
		h(w, r)
	})
}

// statusWriter records the status for logs and metrics; Unwrap keeps
// http.ResponseController (flushing) working through it.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func routeLabel(path string) string {
	switch path {
	case "/v1/chat/completions", "/v1/models", "/v1/feedback", "/healthz", "/metrics":
		return path
	}
	if path == "/" || strings.HasPrefix(path, "/ui/") {
		return "/ui"
	}
	return "other"
}

// requestInfo is filled by handlers for the access log (never content).
type requestInfo struct {
	session, turn, typ, finish string
	stream                     bool
	promptTokens, completion   int
}

type infoKey struct{}

// observe logs each request at info level (route, status, timing, ids —
// never message content) and feeds the request metrics.
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		info := &requestInfo{}
		next.ServeHTTP(sw, r.WithContext(contextWithInfo(r.Context(), info)))
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		route := routeLabel(r.URL.Path)
		elapsed := time.Since(start)
		s.metrics.requests.WithLabelValues(route, strconv.Itoa(sw.status)).Inc()
		s.metrics.latency.WithLabelValues(route, strconv.FormatBool(info.stream)).Observe(elapsed.Seconds())
		if route == "/metrics" || route == "/healthz" {
			return
		}
		if !s.log.Enabled(r.Context(), slog.LevelInfo) {
			return
		}
		// LogAttrs with a stack array: no boxing of every value per request.
		var buf [13]slog.Attr
		attrs := append(buf[:0], slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Int("status", sw.status),
			slog.Float64("ms", float64(elapsed.Microseconds())/1000), slog.Int64("bytes", sw.bytes))
		if info.turn != "" {
			attrs = append(attrs, slog.String("session", info.session), slog.String("turn", info.turn), slog.String("type", info.typ),
				slog.String("finish", info.finish), slog.Bool("stream", info.stream),
				slog.Int("prompt_tokens", info.promptTokens), slog.Int("completion_tokens", info.completion))
		}
		s.log.LogAttrs(r.Context(), slog.LevelInfo, "request", attrs...)
	})
}

// authenticate checks the Bearer key on every route but /healthz and the
// dashboard's static page.
func (s *Server) authenticate(next http.Handler) http.Handler {
	if s.cfg.APIKey == "" {
		return next
	}
	want := []byte(s.cfg.APIKey)
	public := func(path string) bool { return path == "/healthz" || (s.cfg.UI != nil && s.cfg.UI.Public(path)) }
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !public(r.URL.Path) {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), want) != 1 {
				writeError(w, errorWithCode(http.StatusUnauthorized, "invalid_request_error", "invalid_api_key", "missing or incorrect API key: send Authorization: Bearer <key>"))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// recoverer turns a handler panic into a 500 (and a log line) instead of a
// dropped connection.
func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("handler panic", "path", r.URL.Path, "panic", fmt.Sprint(v))
				writeError(w, errorWithCode(http.StatusInternalServerError, "server_error", "internal_error", "internal error"))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, err = w.Write(b)
	return err
}

func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, modelList{Object: "list", Data: []modelCard{{
		ID: s.info.ID, Object: "model", Created: s.started.Unix(), OwnedBy: "clawrl",
	}}})
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	body := map[string]any{"status": "ok", "model": s.info.ID, "engine": s.info.Engine}
	if p, ok := s.engine.(engine.Publisher); ok {
		body["policy_version"] = p.Version()
	}
	writeJSON(w, http.StatusOK, body)
}
