package scripted

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/enginetest"
)

func TestConformance(t *testing.T) {
	enginetest.Run(t, New(Options{}), enginetest.Options{ScoreTolerance: 1e-7})
}

// run generates an answer to one user message and parses it the way the
// gateway does: incremental decoding, stop ids skipped, streamed parsing.
func run(t *testing.T, e *Engine, user string, max int) (chat.Message, []engine.Delta, engine.Generation) {
	t.Helper()
	f := e.Format()
	prompt, err := f.Render([]chat.Message{{Role: chat.RoleUser, Content: user}}, nil, engine.RenderOptions{AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	dec, p := f.NewDecoder(), f.NewParser(nil)
	var deltas []engine.Delta
	stop := map[int32]bool{}
	for _, id := range f.StopIDs() {
		stop[id] = true
	}
	g, err := e.Generate(context.Background(), engine.GenerateRequest{PromptIDs: f.Encode(prompt), MaxTokens: max, TopLogprobs: 2}, func(tok engine.Token) error {
		if !stop[tok.ID] {
			deltas = append(deltas, p.Add(dec.Add(tok.ID)))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	last, msg := p.Finish()
	deltas = append(deltas, last)
	return msg, deltas, g
}

func TestCues(t *testing.T) {
	e := New(Options{})
	tests := []struct {
		user      string
		content   string
		reasoning string
		tools     []chat.FunctionCall
		finish    string
	}{
		{user: "hello", content: "ok: hello", finish: "stop"},
		{user: "[[say:héllo 🦀]]", content: "héllo 🦀", finish: "stop"},
		{user: "[[think:let me see]][[say:42]]", content: "42", reasoning: "let me see", finish: "stop"},
		{user: `list [[tool:ls {"path":"."}]]`, tools: []chat.FunctionCall{{Name: "ls", Arguments: `{"path":"."}`}}, finish: "stop"},
		{user: `[[think:two]][[say:calling]][[tool:a {"x":[1,2]}]][[tool:b]]`, reasoning: "two", content: "calling",
			tools: []chat.FunctionCall{{Name: "a", Arguments: `{"x":[1,2]}`}, {Name: "b", Arguments: `{}`}}, finish: "stop"},
		{user: "[[long]]", content: strings.Repeat("la ", 10)[:20], finish: "length"},
	}
	for _, tt := range tests {
		t.Run(tt.user, func(t *testing.T) {
			max := 200
			if tt.finish == "length" {
				max = 20
			}
			msg, deltas, g := run(t, e, tt.user, max)
			if msg.Content != tt.content || msg.ReasoningContent != tt.reasoning {
				t.Errorf("content %q reasoning %q, want %q %q", msg.Content, msg.ReasoningContent, tt.content, tt.reasoning)
			}
			if g.FinishReason != tt.finish {
				t.Errorf("finish %q, want %q", g.FinishReason, tt.finish)
			}
			if len(msg.ToolCalls) != len(tt.tools) {
				t.Fatalf("tool calls %+v, want %+v", msg.ToolCalls, tt.tools)
			}
			for i, tc := range msg.ToolCalls {
				if tc.Function != tt.tools[i] || tc.ID == "" || strings.Trim(tc.ID, alnum) != "" {
					t.Errorf("tool call %d = %+v, want %+v with an alphanumeric id", i, tc, tt.tools[i])
				}
			}
			// The streamed deltas add up to the final message.
			var content, reasoning strings.Builder
			args := map[int]string{}
			for _, d := range deltas {
				content.WriteString(d.Content)
				reasoning.WriteString(d.Reasoning)
				for _, tc := range d.ToolCalls {
					args[tc.Index] += tc.Arguments
				}
			}
			if content.String() != msg.Content || reasoning.String() != msg.ReasoningContent {
				t.Errorf("streamed content %q reasoning %q, final %q %q", content.String(), reasoning.String(), msg.Content, msg.ReasoningContent)
			}
			for i, tc := range msg.ToolCalls {
				if args[i] != tc.Function.Arguments {
					t.Errorf("streamed args %d = %q, final %q", i, args[i], tc.Function.Arguments)
				}
			}
			for i, tok := range g.Tokens {
				if len(tok.Top) != 2 || tok.Top[0].ID != tok.ID {
					t.Fatalf("token %d top logprobs %+v", i, tok.Top)
				}
			}
		})
	}
}

func TestAfterToolResult(t *testing.T) {
	e := New(Options{})
	f := e.Format()
	msgs := []chat.Message{
		{Role: chat.RoleUser, Content: `[[tool:ls {}]]`},
		{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: "call1", Type: "function", Function: chat.FunctionCall{Name: "ls", Arguments: "{}"}}}},
		{Role: chat.RoleTool, ToolCallID: "call1", Content: "a.txt b.txt"},
	}
	prompt, err := f.Render(msgs, nil, engine.RenderOptions{AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	g, err := e.Generate(context.Background(), engine.GenerateRequest{PromptIDs: f.Encode(prompt), MaxTokens: 100}, func(engine.Token) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	var ids []int32
	for _, tok := range g.Tokens {
		ids = append(ids, tok.ID)
	}
	if got := f.Decode(ids); got != "tool said: a.txt b.txt<|im_end|>" {
		t.Fatalf("answer after tool result = %q", got)
	}
}

// TestAgainCue: [[again]] says the last assistant message, so a reply to an
// answer can keep it and add to it; with no assistant message it says
// nothing.
func TestAgainCue(t *testing.T) {
	e := New(Options{})
	f := e.Format()
	for _, tc := range []struct {
		msgs []chat.Message
		want string
	}{
		{[]chat.Message{{Role: chat.RoleUser, Content: "hi"}, {Role: chat.RoleAssistant, Content: "Autumn leaves."},
			{Role: chat.RoleUser, Content: "[[again]][[say: Hope this helps!]] End with the sign-off."}}, "Autumn leaves. Hope this helps!<|im_end|>"},
		{[]chat.Message{{Role: chat.RoleUser, Content: "[[again]][[say:first]]"}}, "first<|im_end|>"},
		{[]chat.Message{{Role: chat.RoleUser, Content: "[[again]] hi"}}, "ok: hi<|im_end|>"},
	} {
		prompt, err := f.Render(tc.msgs, nil, engine.RenderOptions{AddGenerationPrompt: true})
		if err != nil {
			t.Fatal(err)
		}
		g, err := e.Generate(context.Background(), engine.GenerateRequest{PromptIDs: f.Encode(prompt), MaxTokens: 100}, func(engine.Token) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		var ids []int32
		for _, tok := range g.Tokens {
			ids = append(ids, tok.ID)
		}
		if got := f.Decode(ids); got != tc.want {
			t.Errorf("%+v: answer %q, want %q", tc.msgs, got, tc.want)
		}
	}
}

func TestSlowCueAndVersion(t *testing.T) {
	e := New(Options{})
	if err := e.Publish(context.Background(), 3, ""); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, _, g := run(t, e, "[[slow:5]][[say:abc]]", 10)
	if el := time.Since(start); el < 20*time.Millisecond {
		t.Errorf("4 tokens at 5 ms took %v", el)
	}
	if g.PolicyVersion != 3 {
		t.Errorf("policy version %d, want 3", g.PolicyVersion)
	}
}

func FuzzParser(f *testing.F) {
	f.Add("<think>\nx\n</think>\n\nhi<tool_call>{\"name\":\"a\",\"arguments\":{\"b\":1}}</tool_call>", 3)
	f.Add("<tool_call>{\"nam", 1)
	f.Add("</think><think>", 2)
	f.Fuzz(func(t *testing.T, text string, chunk int) {
		if chunk <= 0 || chunk > 64 {
			chunk = 1
		}
		p := Format{}.NewParser(nil)
		var content strings.Builder
		for i := 0; i < len(text); i += chunk {
			d := p.Add(text[i:min(len(text), i+chunk)])
			content.WriteString(d.Content)
		}
		d, msg := p.Finish()
		content.WriteString(d.Content)
		if content.String() != msg.Content {
			t.Fatalf("streamed content %q != final %q", content.String(), msg.Content)
		}
		for _, tc := range msg.ToolCalls {
			if _, err := json.Marshal(tc); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// A prompt ending in a forced tool-call opening is continued from there, so
// the opening plus the generated text is one call.
func TestContinuesForcedToolCall(t *testing.T) {
	e := New(Options{})
	f := e.Format()
	named, _ := f.ToolCallPrefix("ls")
	anyName, _ := f.ToolCallPrefix("")
	tests := []struct {
		name, user, prefix string
		calls              []chat.ToolCall // name and arguments only
		content            string
	}{
		{"named, cued", `[[tool:ls {"path":"."}]]`, named, []chat.ToolCall{{Function: chat.FunctionCall{Name: "ls", Arguments: `{"path":"."}`}}}, ""},
		{"named, cued after thinking", `[[think:hm]][[tool:cat {}]][[tool:ls {"path":"/"}]]`, named, []chat.ToolCall{{Function: chat.FunctionCall{Name: "ls", Arguments: `{"path":"/"}`}}}, ""},
		{"named, not cued", `hello`, named, []chat.ToolCall{{Function: chat.FunctionCall{Name: "ls", Arguments: `{}`}}}, ""},
		{"any, cued twice", `[[tool:cat {"f":1}]][[tool:ls {}]]`, anyName,
			[]chat.ToolCall{{Function: chat.FunctionCall{Name: "cat", Arguments: `{"f":1}`}}, {Function: chat.FunctionCall{Name: "ls", Arguments: `{}`}}}, ""},
		// Nothing cued: the plain answer follows the opening and breaks it.
		{"any, not cued", `hello`, anyName, nil, `<tool_call>{"name":ok: hello`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prompt, err := f.Render([]chat.Message{{Role: chat.RoleUser, Content: tt.user}}, nil, engine.RenderOptions{AddGenerationPrompt: true})
			if err != nil {
				t.Fatal(err)
			}
			dec, p := f.NewDecoder(), f.NewParser(nil)
			p.Add(tt.prefix)
			g, err := e.Generate(context.Background(), engine.GenerateRequest{PromptIDs: f.Encode(prompt + tt.prefix), MaxTokens: 200}, func(tok engine.Token) error {
				if tok.ID != IDImEnd {
					p.Add(dec.Add(tok.ID))
				}
				return nil
			})
			if err != nil || g.FinishReason != engine.FinishStop {
				t.Fatalf("generate: %v, finish %q", err, g.FinishReason)
			}
			_, msg := p.Finish()
			var got []chat.ToolCall
			for _, c := range msg.ToolCalls {
				got = append(got, chat.ToolCall{Function: c.Function})
			}
			if len(got) != len(tt.calls) || msg.Content != tt.content {
				t.Fatalf("calls %+v content %q, want %+v %q", got, msg.Content, tt.calls, tt.content)
			}
			for i := range got {
				if got[i] != tt.calls[i] {
					t.Fatalf("call %d = %+v, want %+v", i, got[i], tt.calls[i])
				}
			}
		})
	}
}
