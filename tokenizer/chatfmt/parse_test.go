package chatfmt

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"testing"

	"github.com/clawrl/clawrl/chat"
)

func counterIDs() func() string {
	n := 0
	return func() string { n++; return fmt.Sprintf("call%d", n) }
}

type wantCall struct{ name, args string }

func calls(cs ...wantCall) []wantCall { return cs }

func TestParser(t *testing.T) {
	tests := []struct {
		name      string
		syntax    Syntax
		inReason  bool
		text      string
		content   string
		reasoning string
		calls     []wantCall
	}{
		{name: "plain", syntax: SyntaxHermes, text: "Hello world", content: "Hello world"},
		{name: "less than is content", syntax: SyntaxHermes, text: "5 < 6 and a <b> tag <tool", content: "5 < 6 and a <b> tag <tool"},
		{name: "think", syntax: SyntaxHermes, text: "<think>\nLet me think.\n</think>\n\nThe answer.", reasoning: "Let me think.", content: "The answer."},
		{name: "think after whitespace", syntax: SyntaxHermes, text: "\n<think>r</think>c", reasoning: "r", content: "c"},
		{name: "empty think", syntax: SyntaxHermes, text: "<think>\n\n</think>\n\nHi", content: "Hi"},
		{name: "starts in reasoning", syntax: SyntaxHermes, inReason: true, text: "step 1\nstep 2\n</think>\n\nDone.", reasoning: "step 1\nstep 2", content: "Done."},
		{name: "truncated reasoning", syntax: SyntaxHermes, text: "<think>\nhalf a thou", reasoning: "half a thou"},
		{name: "late think is literal", syntax: SyntaxHermes, text: "Use <think> tags.", content: "Use <think> tags."},
		{name: "tool call", syntax: SyntaxHermes,
			text:  "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": [1, 2.5e3]}}\n</tool_call>",
			calls: calls(wantCall{"get_weather", `{"city": "Paris", "days": [1, 2.5e3]}`})},
		{name: "content then call", syntax: SyntaxHermes,
			text:    "Let me check.\n\n<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>",
			content: "Let me check.\n", calls: calls(wantCall{"f", `{}`})},
		{name: "two calls", syntax: SyntaxHermes,
			text:  "<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\": 1}}\n</tool_call>\n<tool_call>\n{\"name\": \"b\", \"arguments\": {\"y\": \"</tool_call>\"}}\n</tool_call>",
			calls: calls(wantCall{"a", `{"x": 1}`}, wantCall{"b", `{"y": "</tool_call>"}`})},
		{name: "think then call", syntax: SyntaxHermes,
			text:      "<think>\nneed data\n</think>\n\n<tool_call>\n{\"name\": \"read\", \"arguments\": {\"path\": \"TODO.md\"}}\n</tool_call>",
			reasoning: "need data", calls: calls(wantCall{"read", `{"path": "TODO.md"}`})},
		{name: "arguments before name", syntax: SyntaxHermes,
			text:  `<tool_call>{"arguments": {"q": "x"}, "name": "search"}</tool_call>`,
			calls: calls(wantCall{"search", `{"q": "x"}`})},
		{name: "arguments as string", syntax: SyntaxHermes,
			text:  `<tool_call>{"name": "f", "arguments": "{\"a\": 1}"}</tool_call>`,
			calls: calls(wantCall{"f", `{"a": 1}`})},
		{name: "missing arguments", syntax: SyntaxHermes,
			text:  `<tool_call>{"name": "now"}</tool_call>`,
			calls: calls(wantCall{"now", `{}`})},
		{name: "malformed falls back to content", syntax: SyntaxHermes,
			text:    "Hi\n<tool_call>\n{\"name\": oops}\n</tool_call>",
			content: "Hi<tool_call>\n{\"name\": oops}\n</tool_call>"},
		{name: "no name falls back", syntax: SyntaxHermes,
			text:    `<tool_call>{"arguments": {}}</tool_call>`,
			content: `<tool_call>{"arguments": {}}</tool_call>`},
		{name: "truncated before name", syntax: SyntaxHermes,
			text:    `<tool_call>{"na`,
			content: `<tool_call>{"na`},
		{name: "truncated arguments kept", syntax: SyntaxHermes,
			text:  `<tool_call>{"name": "f", "arguments": {"a": 1`,
			calls: calls(wantCall{"f", `{"a": 1`})},
		{name: "broken after name", syntax: SyntaxHermes,
			text:  `<tool_call>{"name": "f", "arguments": {"a": ]}}</tool_call>tail`,
			calls: calls(wantCall{"f", `{"a": `}), content: "]}}tail"},
		{name: "text after call", syntax: SyntaxHermes,
			text:  "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>\nAll done.",
			calls: calls(wantCall{"f", `{}`}), content: "All done."},
		{name: "unicode arguments", syntax: SyntaxHermes,
			text:  "<tool_call>\n{\"name\": \"say\", \"arguments\": {\"text\": \"héllo 🦞 \\u00e9\\n\"}}\n</tool_call>",
			calls: calls(wantCall{"say", `{"text": "héllo 🦞 \u00e9\n"}`})},
		{name: "plain syntax keeps tags", syntax: SyntaxPlain, text: "<think>r</think>x<tool_call>{}</tool_call>", reasoning: "r", content: "x<tool_call>{}</tool_call>"},

		{name: "llama call", syntax: SyntaxLlama3,
			text:  `{"name": "get_weather", "parameters": {"city": "Paris"}}`,
			calls: calls(wantCall{"get_weather", `{"city": "Paris"}`})},
		{name: "llama python tag", syntax: SyntaxLlama3,
			text:  "<|python_tag|>{\"name\": \"f\", \"parameters\": {\"a\": [true, null]}}",
			calls: calls(wantCall{"f", `{"a": [true, null]}`})},
		{name: "llama two calls", syntax: SyntaxLlama3,
			text:  `{"name": "a", "parameters": {}}; {"name": "b", "parameters": {"k": -0.5}}`,
			calls: calls(wantCall{"a", `{}`}, wantCall{"b", `{"k": -0.5}`})},
		{name: "llama type key", syntax: SyntaxLlama3,
			text:  `{"type": "function", "name": "f", "parameters": {"x": 1}}`,
			calls: calls(wantCall{"f", `{"x": 1}`})},
		{name: "llama content", syntax: SyntaxLlama3, text: "  Hello, {name}!", content: "  Hello, {name}!"},
		{name: "llama json answer is content", syntax: SyntaxLlama3, text: `{"answer": 4}`, content: `{"answer": 4}`},
		{name: "llama not json", syntax: SyntaxLlama3, text: `{not json`, content: `{not json`},
		{name: "llama call then text", syntax: SyntaxLlama3,
			text:  `{"name": "f", "parameters": {}} and more`,
			calls: calls(wantCall{"f", `{}`}), content: "and more"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := ParserOptions{Syntax: tt.syntax, StartInReasoning: tt.inReason, NewID: counterIDs()}
			msg := parseAll(t, opts, []string{tt.text})
			if msg.Content != tt.content {
				t.Errorf("content %q, want %q", msg.Content, tt.content)
			}
			if msg.ReasoningContent != tt.reasoning {
				t.Errorf("reasoning %q, want %q", msg.ReasoningContent, tt.reasoning)
			}
			var got []wantCall
			for _, c := range msg.ToolCalls {
				got = append(got, wantCall{c.Function.Name, c.Function.Arguments})
			}
			if !reflect.DeepEqual(got, tt.calls) {
				t.Errorf("calls %q, want %q", got, tt.calls)
			}
			// The same text a byte at a time gives the same message.
			var bytes []string
			for i := range len(tt.text) {
				bytes = append(bytes, tt.text[i:i+1])
			}
			opts.NewID = counterIDs()
			if byByte := parseAll(t, opts, bytes); !reflect.DeepEqual(byByte, msg) {
				t.Errorf("byte-by-byte parse differs:\n got %+v\nwant %+v", byByte, msg)
			}
		})
	}
}

// parseAll feeds chunks and checks that the deltas add up to the final
// message.
func parseAll(t *testing.T, opts ParserOptions, chunks []string) chat.Message {
	t.Helper()
	p := NewParser(opts)
	var deltas []chat.Delta
	for _, c := range chunks {
		deltas = append(deltas, p.Add(c))
	}
	last, msg := p.Finish()
	deltas = append(deltas, last)
	if err := checkDeltas(deltas, msg); err != nil {
		t.Fatal(err)
	}
	return msg
}

// checkDeltas verifies the streaming contract: the deltas' content,
// reasoning and tool calls concatenate to the final message, each call is
// announced (index, id, name) exactly once before its arguments.
func checkDeltas(deltas []chat.Delta, msg chat.Message) error {
	var content, reasoning string
	var calls []chat.ToolCall
	for _, d := range deltas {
		content += d.Content
		reasoning += d.Reasoning
		for _, tc := range d.ToolCalls {
			if tc.Name != "" {
				if tc.Index != len(calls) || tc.ID == "" {
					return fmt.Errorf("tool call announced with index %d id %q, want index %d and an id", tc.Index, tc.ID, len(calls))
				}
				calls = append(calls, chat.ToolCall{ID: tc.ID, Type: "function", Function: chat.FunctionCall{Name: tc.Name}})
			}
			if tc.Index >= len(calls) {
				return fmt.Errorf("arguments for unannounced tool call %d", tc.Index)
			}
			calls[tc.Index].Function.Arguments += tc.Arguments
		}
	}
	if content != msg.Content || reasoning != msg.ReasoningContent {
		return fmt.Errorf("deltas add up to content %q reasoning %q, message has %q %q", content, reasoning, msg.Content, msg.ReasoningContent)
	}
	if len(calls) != len(msg.ToolCalls) || (len(calls) > 0 && !reflect.DeepEqual(calls, msg.ToolCalls)) {
		return fmt.Errorf("deltas add up to calls %+v, message has %+v", calls, msg.ToolCalls)
	}
	for _, c := range msg.ToolCalls {
		for _, r := range c.ID {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
				return fmt.Errorf("tool call id %q is not alphanumeric", c.ID)
			}
		}
	}
	if msg.Role != chat.RoleAssistant {
		return fmt.Errorf("role %q", msg.Role)
	}
	return nil
}

func TestParserStreamsNameBeforeArguments(t *testing.T) {
	text := "<tool_call>\n{\"name\": \"exec\", \"arguments\": {\"command\": \"ls -la /tmp && echo done\"}}\n</tool_call>"
	p := NewParser(ParserOptions{Syntax: SyntaxHermes, NewID: counterIDs()})
	announcedAt, argPieces := -1, 0
	for i := range len(text) {
		d := p.Add(text[i : i+1])
		for _, tc := range d.ToolCalls {
			if tc.Name != "" {
				announcedAt = i
			}
			if tc.Arguments != "" {
				argPieces++
			}
		}
	}
	if announcedAt < 0 || announcedAt > len("<tool_call>\n{\"name\": \"exec\"") {
		t.Errorf("name announced at byte %d, want as soon as the name string closes", announcedAt)
	}
	if argPieces < 10 {
		t.Errorf("arguments came in %d pieces, want them streamed as they arrive", argPieces)
	}
	_, msg := p.Finish()
	if !json.Valid([]byte(msg.ToolCalls[0].Function.Arguments)) {
		t.Errorf("arguments %q are not JSON", msg.ToolCalls[0].Function.Arguments)
	}
}

func TestParserHoldsBackTagPrefix(t *testing.T) {
	p := NewParser(ParserOptions{Syntax: SyntaxHermes, NewID: counterIDs()})
	if d := p.Add("Checking <tool_"); d.Content != "Checking " {
		t.Errorf("content %q, want the possible tag held back", d.Content)
	}
	if d := p.Add("call>{\"name\": \"f\""); d.Content != "" || len(d.ToolCalls) != 1 {
		t.Errorf("delta %+v, want the call announced and no content", d)
	}
}

func TestRoundTripThroughQwen3Template(t *testing.T) {
	// A parsed reply, rendered back into history by the real template,
	// reproduces the generated text.
	config := mustRead(t, "testdata/qwen3_tokenizer_config.json")
	tmpl, err := FromTokenizerConfig(config, "")
	if err != nil {
		t.Fatal(err)
	}
	generated := "I'll look.\n<tool_call>\n{\"name\": \"read\", \"arguments\": {\"path\": \"a.txt\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"exec\", \"arguments\": {\"command\": \"ls\"}}\n</tool_call>"
	msgs := []chat.Message{{Role: "user", Content: "go"}}
	prompt, err := tmpl.RenderWith(msgs, nil, Options{AddGenerationPrompt: true, EnableThinking: boolPtr(false)})
	if err != nil {
		t.Fatal(err)
	}
	p := NewParser(ParserOptions{Syntax: DetectSyntax(tmpl.Source()), StartInReasoning: PromptOpensReasoning(prompt), NewID: counterIDs()})
	p.Add(generated)
	_, reply := p.Finish()
	full, err := tmpl.RenderWith(append(msgs, reply), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "<|im_start|>user\ngo<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n" + generated + "<|im_end|>\n"
	if full != want {
		t.Errorf("re-rendered\n%q\nwant\n%q", full, want)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func FuzzParserChunking(f *testing.F) {
	seeds := []string{
		"<think>\nr\n</think>\n\nc",
		"text\n<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": [1, {\"b\": \"</tool_call>\"}]}}\n</tool_call>\n<tool_call>{\"arguments\": \"{}\", \"name\": \"g\"}</tool_call>",
		"<tool_call>{\"name\": 1}</tool_call>",
		`<|python_tag|>{"name": "f", "parameters": {"x": -1.5e-3}}; {"name": "g", "parameters": {}}`,
		`{"answer": 4}`,
		"<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": ]}}</tool_call>x",
	}
	for i, s := range seeds {
		f.Add(s, uint64(i))
	}
	f.Fuzz(func(t *testing.T, text string, seed uint64) {
		rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		var chunks []string
		for rest := text; rest != ""; {
			n := 1 + rng.IntN(8)
			n = min(n, len(rest))
			chunks = append(chunks, rest[:n])
			rest = rest[n:]
		}
		for _, syntax := range []Syntax{SyntaxPlain, SyntaxHermes, SyntaxLlama3} {
			for _, inReason := range []bool{false, true} {
				opts := ParserOptions{Syntax: syntax, StartInReasoning: inReason, NewID: counterIDs()}
				whole := parseAll(t, opts, []string{text})
				opts.NewID = counterIDs()
				chunked := parseAll(t, opts, chunks)
				if !reflect.DeepEqual(whole, chunked) {
					t.Fatalf("syntax %d inReason %v: chunked %+v\nwhole %+v", syntax, inReason, chunked, whole)
				}
			}
		}
	})
}

// TestParserLongWhitespaceRuns feeds degenerate output (200k newlines or
// spaces, one at a time); held-back whitespace is counted, not re-scanned,
// so this takes milliseconds (quadratic handling would take minutes).
func TestParserLongWhitespaceRuns(t *testing.T) {
	for _, syntax := range []Syntax{SyntaxHermes, SyntaxLlama3} {
		for _, run := range []string{"\n", " "} {
			p := NewParser(ParserOptions{Syntax: syntax, NewID: counterIDs()})
			for range 200_000 {
				p.Add(run)
			}
			p.Add("x")
			_, msg := p.Finish()
			if len(msg.Content) != 200_001 {
				t.Errorf("syntax %d run %q: content length %d, want 200001", syntax, run, len(msg.Content))
			}
		}
	}
}
