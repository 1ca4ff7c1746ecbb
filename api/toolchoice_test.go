package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/store"
)

var catTool = map[string]any{"type": "function", "function": map[string]any{
	"name": "cat", "description": "print a file",
	"parameters": map[string]any{"type": "object", "properties": map[string]any{"f": map[string]any{"type": "string"}}},
}}

func namedChoice(name string) map[string]any {
	return map[string]any{"type": "function", "function": map[string]any{"name": name}}
}

// answer is a response as the client saw it, from either shape.
type answer struct {
	status  int
	id      string
	finish  string
	content *string
	calls   []chat.ToolCall // id, name, arguments
	errCode string
	done    bool // streaming: [DONE] arrived
}

// ask sends body (streaming or not) and assembles what the client got.
func (ts *testServer) ask(t *testing.T, body map[string]any, stream bool) answer {
	t.Helper()
	b := map[string]any{}
	for k, v := range body {
		b[k] = v
	}
	b["stream"] = stream
	resp := ts.post(t, "/v1/chat/completions", b)
	defer resp.Body.Close()
	a := answer{status: resp.StatusCode}
	if !stream || resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(resp.Body)
		var out struct {
			completion
			Error *Error `json:"error"`
		}
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("decode %s: %v", raw, err)
		}
		if out.Error != nil {
			a.errCode = *out.Error.Code
			return a
		}
		c := out.Choices[0]
		a.id, a.finish, a.content = out.ID, c.FinishReason, c.Message.Content
		for _, tc := range c.Message.ToolCalls {
			a.calls = append(a.calls, chat.ToolCall{ID: tc.ID, Function: chat.FunctionCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments}})
		}
		return a
	}
	for _, ev := range readSSE(t, resp.Body) {
		if ev == "[DONE]" {
			a.done = true
			continue
		}
		var c struct {
			chunk
			Error *Error `json:"error"`
		}
		if err := json.Unmarshal([]byte(ev), &c); err != nil {
			t.Fatalf("decode event %s: %v", ev, err)
		}
		if c.Error != nil {
			a.errCode = *c.Error.Code
			continue
		}
		a.id = c.ID
		if len(c.Choices) == 0 {
			continue
		}
		d := c.Choices[0].Delta
		if d.Content != nil && *d.Content != "" {
			s := ""
			if a.content != nil {
				s = *a.content
			}
			s += *d.Content
			a.content = &s
		}
		for _, tc := range d.ToolCalls {
			for len(a.calls) <= tc.Index {
				a.calls = append(a.calls, chat.ToolCall{})
			}
			if tc.ID != "" {
				if a.calls[tc.Index].ID != "" {
					t.Fatalf("call %d announced twice", tc.Index)
				}
				a.calls[tc.Index].ID, a.calls[tc.Index].Function.Name = tc.ID, tc.Function.Name
			}
			a.calls[tc.Index].Function.Arguments += tc.Function.Arguments
		}
		if f := c.Choices[0].FinishReason; f != nil {
			a.finish = *f
		}
	}
	return a
}

// TestToolChoiceForced runs tool_choice "required" and named functions
// through the scripted engine, streaming and not: the client gets the whole
// call, the turn records the forced opening as prompt, and a model that
// breaks the contract gets an error, never text.
func TestToolChoiceForced(t *testing.T) {
	type call struct{ name, args string }
	tests := []struct {
		name      string
		user      string
		choice    any
		maxTokens int
		status    int
		finish    string
		calls     []call
		errCode   string
		forced    string // the recorded ForcedText; "" = not recorded
	}{
		{name: "named, as cued", user: `[[tool:ls {"path":"."}]]`, choice: namedChoice("ls"),
			status: 200, finish: "tool_calls", calls: []call{{"ls", `{"path":"."}`}}, forced: `<tool_call>{"name":"ls","arguments":`},
		{name: "named, overriding the cue", user: `[[tool:ls {"path":"."}]]`, choice: namedChoice("cat"),
			status: 200, finish: "tool_calls", calls: []call{{"cat", `{}`}}, forced: `<tool_call>{"name":"cat","arguments":`},
		{name: "named, model would answer text", user: "hello", choice: namedChoice("ls"),
			status: 200, finish: "tool_calls", calls: []call{{"ls", `{}`}}, forced: `<tool_call>{"name":"ls","arguments":`},
		{name: "required, after thinking", user: `[[think:hm]][[tool:cat {"f":"a"}]]`, choice: "required",
			status: 200, finish: "tool_calls", calls: []call{{"cat", `{"f":"a"}`}}, forced: `<tool_call>{"name":`},
		{name: "required, two calls", user: `[[tool:ls {}]][[tool:cat {"f":"b"}]]`, choice: "required",
			status: 200, finish: "tool_calls", calls: []call{{"ls", `{}`}, {"cat", `{"f":"b"}`}}, forced: `<tool_call>{"name":`},
		{name: "required, unknown function", user: `[[tool:rm {}]]`, choice: "required", status: 500, errCode: "tool_call_failed"},
		{name: "required, model writes text", user: "hello", choice: "required", status: 500, errCode: "tool_call_failed"},
		{name: "named, cut by max_tokens", user: "[[long]]", choice: namedChoice("ls"), maxTokens: 5,
			status: 200, finish: "length", calls: []call{{"ls", "la la"}}, forced: `<tool_call>{"name":"ls","arguments":`},
		{name: "required, cut before the name", user: "[[long]]", choice: "required", maxTokens: 5,
			status: 200, finish: "length", forced: `<tool_call>{"name":`},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			name := tt.name
			if stream {
				name += ", streaming"
			}
			t.Run(name, func(t *testing.T) {
				ts := newTestServer(t, serverOptions{})
				body := map[string]any{"messages": msgs("user", tt.user), "tools": []any{lsTool, catTool}, "tool_choice": tt.choice}
				if tt.maxTokens > 0 {
					body["max_tokens"] = tt.maxTokens
				}
				a := ts.ask(t, body, stream)
				// A failure after streaming began is an error event.
				status := a.status
				if stream && a.errCode != "" {
					status = 500
					if a.done {
						t.Error("stream ended with [DONE] after an error")
					}
				}
				if status != tt.status || a.errCode != tt.errCode {
					t.Fatalf("status %d error %q, want %d %q", status, a.errCode, tt.status, tt.errCode)
				}
				ctx := context.Background()
				if tt.forced == "" {
					for _, c := range a.calls {
						if c.Function.Name == "rm" {
							t.Errorf("a call of rm reached the client")
						}
					}
					if st, _ := ts.store.Stats(ctx); st.Turns != 0 {
						t.Errorf("%d turns recorded for a failed forced call", st.Turns)
					}
					if n := testutil.ToFloat64(ts.api.metrics.forcedFailed); n != 1 {
						t.Errorf("clawrl_forced_tool_calls_failed_total = %v, want 1", n)
					}
					return
				}
				var got []call
				for _, c := range a.calls {
					got = append(got, call{c.Function.Name, c.Function.Arguments})
				}
				if a.finish != tt.finish || !reflect.DeepEqual(got, tt.calls) || (len(got) > 0 || tt.finish == "length") && a.content != nil {
					t.Fatalf("finish %q calls %q content %v; want %q %q and no content", a.finish, got, a.content, tt.finish, tt.calls)
				}
				if stream && !a.done {
					t.Error("stream did not end with [DONE]")
				}
				turn, err := ts.store.Turn(ctx, a.id)
				if err != nil {
					t.Fatal(err)
				}
				f := ts.engine.Format()
				if turn.ForcedText != tt.forced || !strings.HasSuffix(turn.PromptText, tt.forced) ||
					!reflect.DeepEqual(turn.PromptIDs, f.Encode(turn.PromptText)) {
					t.Errorf("recorded forced text %q, prompt ends %q", turn.ForcedText, turn.PromptText[max(0, len(turn.PromptText)-60):])
				}
				// The response ids are what the model sampled, after the
				// forced opening; the recorded message is the whole call.
				if f.Decode(turn.ResponseIDs) != turn.ResponseText || strings.HasPrefix(turn.ResponseText, tt.forced) {
					t.Errorf("response text %q starts with the forced opening %q", turn.ResponseText, tt.forced)
				}
				if len(turn.BehaviourLogprobs) != len(turn.ResponseIDs) || turn.FinishReason != tt.finish {
					t.Errorf("%d logprobs for %d response ids, finish %q", len(turn.BehaviourLogprobs), len(turn.ResponseIDs), turn.FinishReason)
				}
				if len(turn.Response.ToolCalls) != len(a.calls) {
					t.Fatalf("recorded %d calls, client got %d", len(turn.Response.ToolCalls), len(a.calls))
				}
				for i, c := range turn.Response.ToolCalls {
					if c.ID != a.calls[i].ID || c.Function != a.calls[i].Function {
						t.Errorf("recorded call %+v, client got %+v", c, a.calls[i])
					}
				}
			})
		}
	}
}

// TestToolChoiceOpenAIGo forces calls through the openai-go client,
// streaming and not, and sends the tool result back: the forced turn pairs
// with its next state like any other.
func TestToolChoiceOpenAIGo(t *testing.T) {
	ts := newTestServer(t, serverOptions{})
	client := openaiClient(ts)
	ctx := context.Background()
	tool := func(name string) openai.ChatCompletionToolUnionParam {
		return openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: name,
			Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}}})
	}
	params := openai.ChatCompletionNewParams{
		Model:    "scripted",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(`list /tmp [[tool:ls {"path":"/tmp"}]]`)},
		Tools:    []openai.ChatCompletionToolUnionParam{tool("ls"), tool("cat")},
		ToolChoice: openai.ChatCompletionToolChoiceOptionUnionParam{OfFunctionToolChoice: &openai.ChatCompletionNamedToolChoiceParam{
			Function: openai.ChatCompletionNamedToolChoiceFunctionParam{Name: "ls"}}},
	}
	session := option.WithHeader("X-Session-Id", "forced")
	resp, err := client.Chat.Completions.New(ctx, params, session)
	if err != nil {
		t.Fatal(err)
	}
	msg := resp.Choices[0].Message
	var args struct{ Path string }
	if len(msg.ToolCalls) != 1 || msg.ToolCalls[0].Function.Name != "ls" || resp.Choices[0].FinishReason != "tool_calls" ||
		json.Unmarshal([]byte(msg.ToolCalls[0].Function.Arguments), &args) != nil || args.Path != "/tmp" {
		t.Fatalf("forced call: %+v finish %q", msg.ToolCalls, resp.Choices[0].FinishReason)
	}

	// Streaming, "required".
	params.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("required")}
	stream := client.Chat.Completions.NewStreaming(ctx, params, option.WithHeader("X-Session-Id", "other"))
	acc := openai.ChatCompletionAccumulator{}
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	smsg := acc.Choices[0].Message
	if len(smsg.ToolCalls) != 1 || smsg.ToolCalls[0].Function.Name != "ls" || smsg.ToolCalls[0].Function.Arguments != `{"path":"/tmp"}` ||
		acc.Choices[0].FinishReason != "tool_calls" {
		t.Fatalf("streamed forced call: %+v finish %q", smsg.ToolCalls, acc.Choices[0].FinishReason)
	}

	// The tool result comes back: the non-streamed forced turn is observed.
	params.Messages = append(params.Messages, msg.ToParam(), openai.ToolMessage("a.txt", msg.ToolCalls[0].ID))
	params.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("auto")}
	if _, err := client.Chat.Completions.New(ctx, params, session); err != nil {
		t.Fatal(err)
	}
	first, err := ts.store.Turn(ctx, resp.ID)
	if err != nil {
		t.Fatal(err)
	}
	if first.State != store.Observed || first.NextStateKind != store.NextTool || len(first.NextState) != 1 || first.NextState[0].Content != "a.txt" {
		t.Fatalf("forced turn: state %s next %s %+v", first.State, first.NextStateKind, first.NextState)
	}
	if first.ForcedText == "" || first.Response.ToolCalls[0].Function.Arguments != `{"path":"/tmp"}` {
		t.Fatalf("forced turn recorded %q / %+v", first.ForcedText, first.Response)
	}
}

// An engine whose format has no tool-call syntax cannot force one: 400.
func TestToolChoiceUnforceable(t *testing.T) {
	req := &chatRequest{ToolChoice: "required", Tools: []chat.Tool{{Type: "function", Function: chat.FunctionDef{Name: "f"}}}}
	if _, e := forceToolCall(plainFormat{}, req); e == nil || e.Status != 400 || *e.Param != "tool_choice" {
		t.Fatalf("forceToolCall on a format without tool calls = %+v", e)
	}
	req.ToolChoice = "auto"
	if fc, e := forceToolCall(plainFormat{}, req); fc != nil || e != nil {
		t.Fatalf("auto forced %+v, %v", fc, e)
	}
}

// plainFormat is a Format without tool-call syntax (only ToolCallPrefix is
// called).
type plainFormat struct{ engine.Format }

func (plainFormat) ToolCallPrefix(string) (string, bool) { return "", false }
