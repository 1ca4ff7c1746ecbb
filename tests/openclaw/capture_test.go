package openclaw

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// capturedRequest is one file of testdata/capture*/: a request OpenClaw sent
// and the SSE stream the recorder answered it with (gen_capture.py).
type capturedRequest struct {
	Label       string            `json:"label"`
	Method      string            `json:"method"`
	Path        string            `json:"path"`
	Headers     map[string]string `json:"headers"`
	Body        json.RawMessage   `json:"body"`
	ResponseSSE string            `json:"response_sse"`
}

// loadCapture reads every request of a capture folder in the order they
// were sent.
func loadCapture(t *testing.T, dir string) []capturedRequest {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(names) == 0 {
		t.Fatalf("capture %s: no files (%v)", dir, err)
	}
	sort.Strings(names)
	out := make([]capturedRequest, 0, len(names))
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		var r capturedRequest
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatalf("capture %s: %v", n, err)
		}
		out = append(out, r)
	}
	return out
}

// streamedAnswer is what an OpenAI chat-completions SSE stream said.
type streamedAnswer struct {
	Content   string
	ToolCalls []streamedCall
	Finish    string
}

type streamedCall struct {
	ID, Name, Arguments string
}

// parseSSE assembles the answer of a chat-completions event stream: content
// deltas concatenated, tool-call deltas merged by index, the last finish
// reason. It stops at [DONE].
func parseSSE(stream string) (streamedAnswer, error) {
	var a streamedAnswer
	calls := map[int]*streamedCall{}
	sc := bufio.NewScanner(strings.NewReader(stream))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, ":") {
			continue
		}
		data, ok := strings.CutPrefix(line, "data:")
		if !ok {
			continue // event:, id:, retry: carry nothing we need
		}
		data = strings.TrimSpace(data)
		if data == "[DONE]" {
			break
		}
		var chunk struct {
			Choices []struct {
				Index int `json:"index"`
				Delta struct {
					Content   *string `json:"content"`
					ToolCalls []struct {
						Index    int    `json:"index"`
						ID       string `json:"id"`
						Function struct {
							Name      string `json:"name"`
							Arguments string `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			return a, fmt.Errorf("sse chunk %.80q: %w", data, err)
		}
		for _, c := range chunk.Choices {
			if c.Index != 0 {
				return a, fmt.Errorf("sse chunk: choice %d, want only choice 0", c.Index)
			}
			if c.Delta.Content != nil {
				a.Content += *c.Delta.Content
			}
			for _, tc := range c.Delta.ToolCalls {
				if tc.Index < 0 || tc.Index > 64 {
					return a, fmt.Errorf("sse chunk: tool call index %d", tc.Index)
				}
				call := calls[tc.Index]
				if call == nil {
					call = &streamedCall{}
					calls[tc.Index] = call
				}
				if tc.ID != "" {
					call.ID = tc.ID
				}
				call.Name += tc.Function.Name
				call.Arguments += tc.Function.Arguments
			}
			if c.FinishReason != nil {
				a.Finish = *c.FinishReason
			}
		}
	}
	if err := sc.Err(); err != nil {
		return a, fmt.Errorf("sse stream: %w", err)
	}
	for i := 0; i < len(calls); i++ {
		c, ok := calls[i]
		if !ok {
			return a, fmt.Errorf("sse stream: tool call indexes skip %d", i)
		}
		a.ToolCalls = append(a.ToolCalls, *c)
	}
	return a, nil
}

func TestParseSSE(t *testing.T) {
	for _, tc := range []struct {
		name, stream string
		want         streamedAnswer
		wantErr      bool
	}{
		{name: "text", stream: "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Do\"}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ne.\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
			want: streamedAnswer{Content: "Done.", Finish: "stop"}},
		{name: "tool call in pieces", stream: "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"ls\",\"arguments\":\"{\\\"pa\"}}]}}]}\n" +
			"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"th\\\": \\\".\\\"}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n" +
			"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3}}\ndata: [DONE]\n",
			want: streamedAnswer{ToolCalls: []streamedCall{{ID: "c1", Name: "ls", Arguments: `{"path": "."}`}}, Finish: "tool_calls"}},
		{name: "comments and events ignored", stream: ": keep-alive\nevent: x\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n",
			want: streamedAnswer{Content: "a"}},
		{name: "bad json", stream: "data: {\n", wantErr: true},
		{name: "second choice", stream: "data: {\"choices\":[{\"index\":1,\"delta\":{}}]}\n", wantErr: true},
		{name: "index gap", stream: "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"function\":{\"name\":\"ls\"}}]}}]}\n", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseSSE(tc.stream)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func FuzzParseSSE(f *testing.F) {
	f.Add("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\n\ndata: [DONE]\n")
	f.Add("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"function\":{\"name\":\"ls\",\"arguments\":\"{}\"}}]}}]}\n")
	f.Add(": c\n\ndata:\n")
	f.Fuzz(func(t *testing.T, s string) {
		a, err := parseSSE(s)
		if err != nil {
			return
		}
		for i, c := range a.ToolCalls {
			if c == (streamedCall{}) && !strings.Contains(strings.ToLower(s), "tool_calls") {
				t.Fatalf("tool call %d from nowhere in %q", i, s)
			}
		}
	})
}

// TestCaptureFixtures checks the recorded OpenClaw requests still say what
// README.md states about them, so the facts and the files cannot drift apart.
func TestCaptureFixtures(t *testing.T) {
	type body struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools          []json.RawMessage `json:"tools"`
		Stream         bool              `json:"stream"`
		PromptCacheKey string            `json:"prompt_cache_key"`
		MaxTokens      int               `json:"max_completion_tokens"`
	}
	for _, dir := range []string{"testdata/capture", "testdata/capture-lean"} {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			reqs := loadCapture(t, dir)
			compacted := false
			for _, r := range reqs {
				var b body
				if err := json.Unmarshal(r.Body, &b); err != nil {
					t.Fatalf("%s: %v", r.Label, err)
				}
				if r.Method != "POST" || r.Path != "/v1/chat/completions" || !b.Stream {
					t.Errorf("%s: %s %s stream=%v, want a streamed POST /v1/chat/completions", r.Label, r.Method, r.Path, b.Stream)
				}
				aff := r.Headers["x-session-affinity"]
				if r.Headers["session_id"] != aff || r.Headers["x-client-request-id"] != aff || b.PromptCacheKey != aff {
					t.Errorf("%s: session_id %q, x-session-affinity %q, x-client-request-id %q, prompt_cache_key %q: want all equal",
						r.Label, r.Headers["session_id"], aff, r.Headers["x-client-request-id"], b.PromptCacheKey)
				}
				system := string(b.Messages[0].Content)
				isCompaction := strings.Contains(system, "You are a context summarization assistant")
				switch {
				case isCompaction:
					if aff != "s1" || len(b.Tools) != 0 {
						t.Errorf("%s: compaction with affinity %q and %d tools, want s1 and none", r.Label, aff, len(b.Tools))
					}
					compacted = true
				case compacted:
					if aff != "s1:1" {
						t.Errorf("%s: after compaction affinity %q, want s1:1", r.Label, aff)
					}
				default:
					if aff != "s1:0" {
						t.Errorf("%s: affinity %q, want s1:0", r.Label, aff)
					}
				}
				if _, err := parseSSE(r.ResponseSSE); err != nil {
					t.Errorf("%s: recorded answer: %v", r.Label, err)
				}
			}
			if !compacted {
				t.Error("no compaction request in the capture")
			}
		})
	}
}
