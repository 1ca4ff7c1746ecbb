package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Client talks to one clawrl server through its public HTTP API, as any
// OpenAI-compatible client would.
type Client struct {
	BaseURL string // "http://127.0.0.1:30000"
	APIKey  string
	HTTP    *http.Client
	// Model is the request's "model" field ("" sends "clawrl", which a
	// clawrl server ignores; another server may need its own name).
	Model string
}

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// ChatRequest is what the benchmark asks for.
type ChatRequest struct {
	Session     string // X-Session-Id; "" for none
	Side        bool   // X-Turn-Type: side (served, never trained)
	Messages    []Message
	MaxTokens   int
	Temperature float64
	Seed        *int64
}

// Answer is one chat completion's result.
type Answer struct {
	ID   string
	Text string
	// Finished is false when the answer was cut off at max_tokens
	// (finish_reason "length"): a user sees a truncated answer.
	Finished bool
}

// Chat sends one chat completion and returns its answer.
func (c *Client) Chat(ctx context.Context, r ChatRequest) (Answer, error) {
	model := c.Model
	if model == "" {
		model = "clawrl"
	}
	body := map[string]any{"model": model, "messages": r.Messages, "max_tokens": r.MaxTokens, "temperature": r.Temperature}
	if r.Seed != nil {
		body["seed"] = *r.Seed
	}
	hdr := map[string]string{}
	if r.Session != "" {
		hdr["X-Session-Id"] = r.Session
	}
	if r.Side {
		hdr["X-Turn-Type"] = "side"
	}
	var out struct {
		ID      string `json:"id"`
		Choices []struct {
			Message      Message `json:"message"`
			FinishReason string  `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := c.post(ctx, "/v1/chat/completions", body, hdr, &out); err != nil {
		return Answer{}, err
	}
	if len(out.Choices) == 0 {
		return Answer{}, fmt.Errorf("chat completion %s: no choices", out.ID)
	}
	ch := out.Choices[0]
	return Answer{ID: out.ID, Text: ch.Message.Content, Finished: ch.FinishReason != "length"}, nil
}

// Feedback rates the completion id (+1 or −1) with optional written text.
func (c *Client) Feedback(ctx context.Context, id string, rating int, text string) error {
	body := map[string]any{"id": id, "rating": rating}
	if text != "" {
		body["text"] = text
	}
	return c.post(ctx, "/v1/feedback", body, nil, nil)
}

// Health returns the served policy version from /healthz.
func (c *Client) Health(ctx context.Context) (version int64, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.BaseURL+"/healthz", nil)
	if err != nil {
		return 0, err
	}
	resp, err := c.http().Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var h struct {
		PolicyVersion int64 `json:"policy_version"`
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET /healthz: %s", resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		return 0, fmt.Errorf("GET /healthz: %w", err)
	}
	return h.PolicyVersion, nil
}

// WaitReady polls /healthz until the server answers or ctx ends.
func (c *Client) WaitReady(ctx context.Context) error {
	for {
		if _, err := c.Health(ctx); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s/healthz: %w", c.BaseURL, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

func (c *Client) post(ctx context.Context, path string, body any, hdr map[string]string, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.BaseURL+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.APIKey)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.http().Do(req)
	if err != nil {
		return fmt.Errorf("POST %s: %w", path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("POST %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: %s: %s", path, resp.Status, bytes.TrimSpace(data))
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("POST %s: %w", path, err)
	}
	return nil
}

// LoopMetrics are the learning loop's counters on /metrics that the
// benchmark paces itself by.
type LoopMetrics struct {
	Judged         int // turns judged since start, any score
	SamplesBuilt   int // samples built since start
	SamplesTrained int // samples trained, all time
	SamplesReady   int // samples waiting for the trainer, now
	// SamplesPending is judged turns kept whose sample is not built yet
	// (the teacher's work waiting), now.
	SamplesPending int
	TrainSteps     int // trainer steps recorded as versions (served or rejected)
	HeldSteps      int // steps the loop held (--hold-liked): no version, the served one kept
	// RolledBackSteps: steps trained from the version before the served
	// one, its users having liked its answers far less (--rollback-drop).
	RolledBackSteps int
	// UnfocusedSteps: steps taken again without --distill-focus, the
	// gate having rejected the focused one.
	UnfocusedSteps int
	// Verdicts are the judged turns by their first score, the hints the
	// judge accepted and the judgments revised by later feedback.
	Verdicts Verdicts
}

// Verdicts counts the loop's judgments of main turns: the first score each
// got (−1, 0, +1), how many came with a hint the judge accepted (OPD's
// teacher signal: written feedback or a hindsight hint), and how many were
// rescored when feedback arrived after them (their first score is counted).
type Verdicts struct {
	Negative int `json:"negative"`
	Neutral  int `json:"neutral"`
	Positive int `json:"positive"`
	Hints    int `json:"hints"`
	Revised  int `json:"revised,omitempty"`
}

// Judged is the number of judged turns.
func (v Verdicts) Judged() int { return v.Negative + v.Neutral + v.Positive }

// Sub is v minus earlier counters: what was judged in between.
func (v Verdicts) Sub(earlier Verdicts) Verdicts {
	return Verdicts{Negative: v.Negative - earlier.Negative, Neutral: v.Neutral - earlier.Neutral, Positive: v.Positive - earlier.Positive,
		Hints: v.Hints - earlier.Hints, Revised: v.Revised - earlier.Revised}
}

// Add sums two counts.
func (v Verdicts) Add(o Verdicts) Verdicts {
	return Verdicts{Negative: v.Negative + o.Negative, Neutral: v.Neutral + o.Neutral, Positive: v.Positive + o.Positive,
		Hints: v.Hints + o.Hints, Revised: v.Revised + o.Revised}
}

// Metrics reads the loop's counters from /metrics (Prometheus text).
func (c *Client) Metrics(ctx context.Context) (LoopMetrics, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.BaseURL+"/metrics", nil)
	if err != nil {
		return LoopMetrics{}, err
	}
	if c.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.APIKey)
	}
	resp, err := c.http().Do(req)
	if err != nil {
		return LoopMetrics{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return LoopMetrics{}, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return LoopMetrics{}, fmt.Errorf("GET /metrics: %w", err)
	}
	return parseLoopMetrics(string(body)), nil
}

// parseLoopMetrics sums the samples of the metrics it knows; malformed lines
// are skipped (the text comes from our own server).
func parseLoopMetrics(text string) LoopMetrics {
	var m LoopMetrics
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		name, value, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		labels := ""
		if i := strings.IndexByte(name, '{'); i >= 0 {
			name, labels = name[:i], name[i:]
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			continue
		}
		switch name {
		case "clawrl_loop_judged_total":
			m.Judged += int(v)
			switch labels {
			case `{score="-1"}`:
				m.Verdicts.Negative += int(v)
			case `{score="0"}`:
				m.Verdicts.Neutral += int(v)
			case `{score="1"}`:
				m.Verdicts.Positive += int(v)
			}
		case "clawrl_loop_hints_accepted_total":
			m.Verdicts.Hints += int(v)
		case "clawrl_loop_revised_total":
			m.Verdicts.Revised += int(v)
		case "clawrl_loop_samples_built_total":
			m.SamplesBuilt += int(v)
		case "clawrl_loop_samples_trained":
			m.SamplesTrained += int(v)
		case "clawrl_loop_samples_ready":
			m.SamplesReady += int(v)
		case "clawrl_loop_samples_pending":
			m.SamplesPending += int(v)
		case "clawrl_loop_train_steps_total":
			m.TrainSteps += int(v)
		case "clawrl_loop_train_steps_held_total":
			m.HeldSteps += int(v)
		case "clawrl_loop_train_steps_rolled_back_total":
			m.RolledBackSteps += int(v)
		case "clawrl_loop_train_steps_unfocused_total":
			m.UnfocusedSteps += int(v)
		}
	}
	return m
}
