package judge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/clawrl/clawrl/chat"
)

// HTTPBackend asks any OpenAI-compatible endpoint (--judge-url, --judge-model,
// --judge-key) with a plain chat completion.
type HTTPBackend struct {
	URL    string // base URL, e.g. http://host:8000/v1
	Model  string
	Key    string // sent as a Bearer token when set
	Client *http.Client
}

// Name implements Backend.
func (b *HTTPBackend) Name() string { return "http:" + b.Model }

// maxJudgeBody bounds what we read from a judge endpoint.
const maxJudgeBody = 8 << 20

// Complete implements Backend.
func (b *HTTPBackend) Complete(ctx context.Context, msgs []chat.Message, p Params) (string, error) {
	req := newChatRequest(b.Model, msgs, p.Temperature, p.MaxTokens, p.Stop)
	data, err := postChat(ctx, b.Client, b.URL, b.Key, req, maxJudgeBody, "judge")
	if err != nil {
		return "", err
	}
	text, finish, err := parseCompletion(data)
	if err != nil {
		return "", err
	}
	if finish == "stop" && len(p.Stop) > 0 && !hasSuffixAny(text, p.Stop) {
		// OpenAI servers cut the stop string off; put it back, as the engine
		// backend keeps it, so parsers see the closing marker. (An answer
		// that ended on its own is complete all the same.)
		text += p.Stop[0]
	}
	return text, nil
}

// chatRequest is the body of an OpenAI chat completion request, not
// streamed.
type chatRequest struct {
	Model       string        `json:"model"`
	Messages    []chatWireMsg `json:"messages"`
	Temperature float64       `json:"temperature"`
	MaxTokens   int           `json:"max_tokens,omitempty"`
	Stop        []string      `json:"stop,omitempty"`
	Seed        *int64        `json:"seed,omitempty"`
	Stream      bool          `json:"stream"`
}

type chatWireMsg struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

func newChatRequest(model string, msgs []chat.Message, temperature float64, maxTokens int, stop []string) chatRequest {
	req := chatRequest{Model: model, Temperature: temperature, MaxTokens: maxTokens, Stop: stop}
	for _, m := range msgs {
		req.Messages = append(req.Messages, chatWireMsg{Role: m.Role, Content: m.Content})
	}
	return req
}

// postChat POSTs req to base/chat/completions of an OpenAI-compatible
// server (with key as a Bearer token when set) and returns the body of a
// 200 answer, read up to limit bytes; who ("judge", "teacher") names the
// caller in errors. The judge and the remote teacher both ask this way.
func postChat(ctx context.Context, client *http.Client, base, key string, req any, limit int64, who string) ([]byte, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("%s request to %s: %w", who, base, err)
	}
	url := strings.TrimRight(base, "/") + "/chat/completions"
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%s request to %s: %w", who, url, err)
	}
	hr.Header.Set("Content-Type", "application/json")
	if key != "" {
		hr.Header.Set("Authorization", "Bearer "+key)
	}
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(hr)
	if err != nil {
		return nil, fmt.Errorf("%s POST %s: %w", who, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return nil, fmt.Errorf("%s POST %s: read body: %w", who, url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s POST %s: HTTP %d: %s", who, url, resp.StatusCode, clip(string(data), 300))
	}
	return data, nil
}

func hasSuffixAny(s string, suffixes []string) bool {
	for _, x := range suffixes {
		if strings.HasSuffix(s, x) {
			return true
		}
	}
	return false
}

// ParseCompletion extracts the assistant text of an OpenAI chat completion
// response: reasoning (when the server splits it off) followed by content, so
// a \boxed{} in either is found.
func ParseCompletion(data []byte) (string, error) {
	text, _, err := parseCompletion(data)
	return text, err
}

// parseCompletion is ParseCompletion that also returns the finish reason.
func parseCompletion(data []byte) (string, string, error) {
	var out struct {
		Choices []struct {
			FinishReason string `json:"finish_reason"`
			Message      struct {
				Content          *string `json:"content"`
				ReasoningContent string  `json:"reasoning_content"`
				Reasoning        string  `json:"reasoning"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return "", "", fmt.Errorf("judge response %q: %w", clip(string(data), 200), err)
	}
	if len(out.Choices) == 0 {
		return "", "", fmt.Errorf("judge response %q: no choices", clip(string(data), 200))
	}
	m := out.Choices[0].Message
	var parts []string
	for _, s := range []string{m.ReasoningContent, m.Reasoning} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	if m.Content != nil {
		parts = append(parts, *m.Content)
	}
	if len(parts) == 0 {
		return "", "", fmt.Errorf("judge response %q: empty message", clip(string(data), 200))
	}
	return strings.Join(parts, "\n"), out.Choices[0].FinishReason, nil
}
