package env

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// The HTTP protocol (JSON bodies; errors in OpenAI's shape,
// {"error":{"message","type","code"}}):
//
//	POST   /v1/episodes                 {"task":Task}       → Created
//	POST   /v1/episodes/{id}/step       {"action":Action}   → {"observation":Observation}
//	POST   /v1/episodes/{id}/evaluate   {}                  → {"evaluation":Evaluation}
//	POST   /v1/episodes/{id}/heartbeat  {}                  → {}
//	DELETE /v1/episodes/{id}                                → {}
//	GET    /v1/load                                         → Load
//	GET    /healthz                                         → {"ok":true}
//
// Status codes: 400 invalid_request (bad JSON, unknown kind), 404
// episode_not_found (closed, reaped or never created), 503 closed, 500
// env_error (the environment failed), 413 too large.

// MaxBodyBytes bounds a request body (an action, a task with its files).
const MaxBodyBytes = 4 << 20

// Handler serves e over HTTP. With a non-empty apiKey every request needs
// "Authorization: Bearer <apiKey>".
func Handler(e Env, apiKey string, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.Default()
	}
	h := &handler{env: e, log: log}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/episodes", h.create)
	mux.HandleFunc("POST /v1/episodes/{id}/step", h.step)
	mux.HandleFunc("POST /v1/episodes/{id}/evaluate", h.evaluate)
	mux.HandleFunc("POST /v1/episodes/{id}/heartbeat", h.heartbeat)
	mux.HandleFunc("DELETE /v1/episodes/{id}", h.close)
	mux.HandleFunc("GET /v1/load", h.load)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, map[string]bool{"ok": true}) })
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if apiKey != "" && r.Header.Get("Authorization") != "Bearer "+apiKey {
			writeError(w, http.StatusUnauthorized, "invalid_api_key", "missing or wrong Authorization: Bearer key")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		mux.ServeHTTP(w, r)
	})
}

type handler struct {
	env Env
	log *slog.Logger
}

type createRequest struct {
	Task *Task `json:"task"`
}

type stepRequest struct {
	Action *Action `json:"action"`
}

type stepResponse struct {
	Observation Observation `json:"observation"`
}

type evaluateResponse struct {
	Evaluation Evaluation `json:"evaluation"`
}

// DecodeCreate parses a create request body.
func DecodeCreate(body []byte) (Task, error) {
	var req createRequest
	if err := decodeStrict(body, &req); err != nil {
		return Task{}, err
	}
	if req.Task == nil {
		return Task{}, badRequest("create: body has no \"task\"")
	}
	if err := req.Task.Check(); err != nil {
		return Task{}, err
	}
	return *req.Task, nil
}

// DecodeStep parses a step request body.
func DecodeStep(body []byte) (Action, error) {
	var req stepRequest
	if err := decodeStrict(body, &req); err != nil {
		return Action{}, err
	}
	if req.Action == nil {
		return Action{}, badRequest("step: body has no \"action\"")
	}
	return *req.Action, nil
}

func decodeStrict(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return badRequest("request body is not valid JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return badRequest("request body has data after its JSON object")
	}
	return nil
}

func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("request body over %d bytes", MaxBodyBytes))
		} else {
			writeError(w, http.StatusBadRequest, "invalid_request", "read request body: "+err.Error())
		}
		return nil, false
	}
	return body, true
}

func (h *handler) create(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	task, err := DecodeCreate(body)
	if err != nil {
		h.fail(w, err)
		return
	}
	c, err := h.env.Create(r.Context(), task)
	if err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, c)
}

func (h *handler) step(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	a, err := DecodeStep(body)
	if err != nil {
		h.fail(w, err)
		return
	}
	obs, err := h.env.Step(r.Context(), r.PathValue("id"), a)
	if err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, stepResponse{Observation: obs})
}

func (h *handler) evaluate(w http.ResponseWriter, r *http.Request) {
	ev, err := h.env.Evaluate(r.Context(), r.PathValue("id"))
	if err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, evaluateResponse{Evaluation: ev})
}

func (h *handler) heartbeat(w http.ResponseWriter, r *http.Request) {
	if err := h.env.Heartbeat(r.Context(), r.PathValue("id")); err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

func (h *handler) close(w http.ResponseWriter, r *http.Request) {
	if err := h.env.Close(r.Context(), r.PathValue("id")); err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

func (h *handler) load(w http.ResponseWriter, r *http.Request) {
	l, err := h.env.Load(r.Context())
	if err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, l)
}

func (h *handler) fail(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, ErrBadRequest):
		writeError(w, http.StatusBadRequest, "invalid_request", err.Error())
	case errors.Is(err, ErrNotFound):
		writeError(w, http.StatusNotFound, "episode_not_found", err.Error())
	case errors.Is(err, ErrClosed):
		writeError(w, http.StatusServiceUnavailable, "closed", err.Error())
	case errors.Is(err, context.Canceled):
		writeError(w, 499, "cancelled", err.Error())
	default:
		h.log.Warn("environment call failed", "err", err)
		writeError(w, http.StatusInternalServerError, "env_error", err.Error())
	}
}

type apiError struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    string  `json:"code"`
	} `json:"error"`
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	var e apiError
	e.Error.Message, e.Error.Code = msg, code
	e.Error.Type = "invalid_request_error"
	if status >= 500 {
		e.Error.Type = "server_error"
	}
	writeJSON(w, status, e)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// Client is an Env on the other end of the HTTP protocol.
type Client struct {
	base   string
	apiKey string
	http   *http.Client
}

// NewClient returns a client for the server at base (http://host:port).
func NewClient(base, apiKey string) (*Client, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("environment server URL %q: want http://host:port", base)
	}
	return &Client{base: strings.TrimRight(base, "/"), apiKey: apiKey, http: &http.Client{}}, nil
}

// URL is the server's base URL.
func (c *Client) URL() string { return c.base }

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("%s %s: encode: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("environment server %s: %s %s: %w", c.base, method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("environment server %s: %s %s: read: %w", c.base, method, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return decodeError(resp.StatusCode, data, fmt.Sprintf("environment server %s: %s %s", c.base, method, path))
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("environment server %s: %s %s: bad response: %w", c.base, method, path, err)
	}
	return nil
}

// decodeError turns an error response into an error wrapping this
// package's sentinel for its status.
func decodeError(status int, data []byte, what string) error {
	var e apiError
	msg := strings.TrimSpace(string(data))
	if json.Unmarshal(data, &e) == nil && e.Error.Message != "" {
		msg = e.Error.Message
	}
	if len(msg) > 500 {
		msg = msg[:500] + "…"
	}
	switch status {
	case http.StatusNotFound:
		return fmt.Errorf("%s: %w (%s)", what, ErrNotFound, msg)
	case http.StatusBadRequest:
		return fmt.Errorf("%s: %w (%s)", what, ErrBadRequest, msg)
	case http.StatusServiceUnavailable:
		return fmt.Errorf("%s: %w (%s)", what, ErrClosed, msg)
	}
	return fmt.Errorf("%s: HTTP %d: %s", what, status, msg)
}

// Create implements Env.
func (c *Client) Create(ctx context.Context, task Task) (Created, error) {
	var out Created
	if err := c.do(ctx, http.MethodPost, "/v1/episodes", createRequest{Task: &task}, &out); err != nil {
		return Created{}, err
	}
	if out.EpisodeID == "" {
		return Created{}, fmt.Errorf("environment server %s: create: no episode id in the response", c.base)
	}
	out.Lease = time.Duration(out.LeaseSeconds * float64(time.Second))
	return out, nil
}

// Step implements Env.
func (c *Client) Step(ctx context.Context, id string, a Action) (Observation, error) {
	var out stepResponse
	err := c.do(ctx, http.MethodPost, "/v1/episodes/"+url.PathEscape(id)+"/step", stepRequest{Action: &a}, &out)
	return out.Observation, err
}

// Evaluate implements Env.
func (c *Client) Evaluate(ctx context.Context, id string) (Evaluation, error) {
	var out evaluateResponse
	err := c.do(ctx, http.MethodPost, "/v1/episodes/"+url.PathEscape(id)+"/evaluate", struct{}{}, &out)
	return out.Evaluation, err
}

// Heartbeat implements Env.
func (c *Client) Heartbeat(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodPost, "/v1/episodes/"+url.PathEscape(id)+"/heartbeat", struct{}{}, nil)
}

// Close implements Env.
func (c *Client) Close(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/v1/episodes/"+url.PathEscape(id), nil, nil)
}

// Load implements Env.
func (c *Client) Load(ctx context.Context) (Load, error) {
	var out Load
	err := c.do(ctx, http.MethodGet, "/v1/load", nil, &out)
	return out, err
}
