// Package ui is clawrl's dashboard and browser chat: a few static files
// embedded in the binary (no CDN, no external fonts or scripts) and the
// read-only JSON they page through. The gateway mounts it beside the API:
// the page itself holds no data and loads without the key; everything it
// shows comes from /ui/api/…, which needs the key like every other route.
//
// The pages render every model- or user-written string as text (the script
// builds the DOM with textContent, never innerHTML), and the Content Security
// Policy forbids inline and foreign script as a second guard.
package ui

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/clawrl/clawrl/store"
)

//go:embed assets
var assets embed.FS

// Paths the gateway routes here. Public ones serve the static page; the
// rest need the API key.
const (
	AssetsPrefix = "/ui/assets/"
	DataPrefix   = "/ui/api/"
)

// Public reports whether path is part of the static page, served without
// the key (it holds no data; the page asks for the key).
// A path with dot segments is never public: the mux redirects it to its
// clean form, which is checked again.
func (h *Handler) Public(p string) bool {
	return p == "/" || (strings.HasPrefix(p, AssetsPrefix) && path.Clean(p) == p)
}

// Store is what the dashboard reads.
type Store interface {
	Session(ctx context.Context, id string) (store.Session, error)
	Turn(ctx context.Context, id string) (store.Turn, error)
	LastTurn(ctx context.Context, sessionID string, typ store.TurnType) (store.Turn, error)
	Stats(ctx context.Context) (store.Stats, error)
	Judgment(ctx context.Context, turnID string) (store.Judgment, error)
	Versions(ctx context.Context, limit int) ([]store.Version, error)
	LearningStats(ctx context.Context) (store.LearningStats, error)
	store.Browser
}

// Config configures the dashboard.
type Config struct {
	Store  Store
	Logger *slog.Logger
	// Model is the served model's id, shown in the header and sent by the chat.
	Model string
	// Decode turns token ids of the served model back into text: a sample
	// that trains on a response the teacher wrote (with the hint in
	// context) keeps only its ids, and the turn's page shows that text as
	// what the rating taught. nil: only its length is shown.
	Decode func(ids []int32) string
	// BenchDir holds `clawrl bench learn` result files (*.json); the
	// learning page draws their curves. Empty or missing: none.
	BenchDir string
	// Now is the clock (tests); time.Now when nil.
	Now func() time.Time
}

// Page limits: a page is never larger than maxPage rows.
const (
	defaultPage = 50
	maxPage     = 200
)

// Handler serves the dashboard: "/" and everything under "/ui/".
type Handler struct {
	cfg    Config
	static http.Handler
	mux    *http.ServeMux
}

// New returns the dashboard's handler.
func New(cfg Config) (*Handler, error) {
	if cfg.Store == nil {
		return nil, errors.New("ui: Config needs a Store")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		return nil, fmt.Errorf("ui: embedded assets: %w", err)
	}
	h := &Handler{cfg: cfg, static: http.StripPrefix(AssetsPrefix, http.FileServerFS(sub)), mux: http.NewServeMux()}
	h.mux.HandleFunc("GET /{$}", h.index)
	h.mux.Handle("GET "+AssetsPrefix, h.static)
	h.mux.HandleFunc("GET "+DataPrefix+"overview", h.overview)
	h.mux.HandleFunc("GET "+DataPrefix+"sessions", h.sessions)
	h.mux.HandleFunc("GET "+DataPrefix+"sessions/{id}", h.session)
	h.mux.HandleFunc("GET "+DataPrefix+"turns/{id}", h.turn)
	h.mux.HandleFunc("GET "+DataPrefix+"learning", h.learning)
	h.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("no route %s %s", r.Method, r.URL.Path))
	})
	return h, nil
}

// contentSecurityPolicy allows the page's own files and nothing else: no
// inline script, no other origin, no frames, no plugins.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", contentSecurityPolicy)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Frame-Options", "DENY")
	if strings.HasPrefix(r.URL.Path, DataPrefix) {
		// Conversations are private: never kept by a shared cache.
		hd.Set("Cache-Control", "no-store")
	}
	h.mux.ServeHTTP(w, r)
}

func (h *Handler) index(w http.ResponseWriter, r *http.Request) {
	b, err := assets.ReadFile("assets/index.html")
	if err != nil {
		writeError(w, http.StatusInternalServerError, "internal_error", "index.html missing from the build")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(b)
}

// writeError answers in OpenAI's error shape, as the rest of the API does.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	typ := "invalid_request_error"
	if status >= 500 {
		typ = "server_error"
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": code}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "internal_error", "encode response: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}

// fail answers a store error: not found is a 404, anything else a 500
// (logged without any conversation content: only the route and the error).
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, what string, err error) {
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusNotFound, "not_found", what+" not found")
		return
	}
	if r.Context().Err() != nil {
		return // the browser went away
	}
	h.cfg.Logger.Warn("dashboard query failed", "path", r.URL.Path, "err", err)
	writeError(w, http.StatusInternalServerError, "internal_error", what+": the store failed (see the server log)")
}

// pageLimit reads ?limit=, bounded to maxPage.
func pageLimit(r *http.Request) (int, error) {
	s := r.URL.Query().Get("limit")
	if s == "" {
		return defaultPage, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("limit %q: want a positive number", s)
	}
	return min(n, maxPage), nil
}
