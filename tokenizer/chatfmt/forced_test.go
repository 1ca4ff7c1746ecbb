package chatfmt

import (
	"strings"
	"testing"

	"github.com/clawrl/clawrl/chat"
)

// The forced prefix is what the real template writes for a call in the
// history, and the parser, fed the prefix and then what a model continues
// with, returns the whole call.
func TestToolCallPrefixMatchesTemplates(t *testing.T) {
	tests := []struct {
		name, config, template string
		syntax                 Syntax
		named, any             string
	}{
		{"qwen3", "qwen3_tokenizer_config.json", "", SyntaxHermes,
			"<tool_call>\n{\"name\": \"get_weather\", \"arguments\":", "<tool_call>\n{\"name\":"},
		{"llama3.1", "llama3_tokenizer_config.json", "llama3.1-tools.jinja", SyntaxLlama3,
			`{"name": "get_weather", "parameters":`, `{"name":`},
	}
	tools := []chat.Tool{{Type: "function", Function: chat.FunctionDef{Name: "get_weather", Parameters: []byte(`{"type":"object"}`)}}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := ""
			if tt.template != "" {
				src = string(mustRead(t, "testdata/"+tt.template))
			}
			tmpl, err := FromTokenizerConfig(mustRead(t, "testdata/"+tt.config), src)
			if err != nil {
				t.Fatal(err)
			}
			if got := DetectSyntax(tmpl.Source()); got != tt.syntax {
				t.Fatalf("syntax %v, want %v", got, tt.syntax)
			}
			named, ok := ToolCallPrefix(tt.syntax, "get_weather")
			anyName, ok2 := ToolCallPrefix(tt.syntax, "")
			if !ok || !ok2 || named != tt.named || anyName != tt.any {
				t.Fatalf("prefixes %q (%v), %q (%v); want %q, %q", named, ok, anyName, ok2, tt.named, tt.any)
			}
			if !strings.HasPrefix(named, anyName) {
				t.Fatalf("named prefix %q does not extend %q", named, anyName)
			}
			// What the template renders for this call in the history.
			msgs := []chat.Message{{Role: "user", Content: "weather?"}, {Role: "assistant", ContentNull: true,
				ToolCalls: []chat.ToolCall{{ID: "c1", Type: "function", Function: chat.FunctionCall{Name: "get_weather", Arguments: `{"city": "Paris"}`}}}}}
			text, err := tmpl.Render(msgs, tools, chat.RenderOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(text, named+` {"city": "Paris"}}`) {
				t.Fatalf("template renders the call as\n%q\nwhich does not continue the forced prefix %q", text, named)
			}
			// The parser sees the prefix, then the model's continuation.
			for _, c := range []struct{ prefix, rest string }{
				{named, ` {"city": "Paris"}}`},
				{anyName, ` "get_weather", "` + map[Syntax]string{SyntaxHermes: "arguments", SyntaxLlama3: "parameters"}[tt.syntax] + `": {"city": "Paris"}}`},
			} {
				rest := c.rest
				if tt.syntax == SyntaxHermes {
					rest += "\n</tool_call>"
				}
				msg := parseAll(t, ParserOptions{Syntax: tt.syntax, NewID: counterIDs()}, []string{c.prefix, rest})
				if len(msg.ToolCalls) != 1 || msg.ToolCalls[0].Function.Name != "get_weather" ||
					msg.ToolCalls[0].Function.Arguments != `{"city": "Paris"}` || msg.Content != "" {
					t.Fatalf("prefix %q + %q parsed as %+v", c.prefix, rest, msg)
				}
			}
		})
	}
	if p, ok := ToolCallPrefix(SyntaxPlain, "f"); ok || p != "" {
		t.Fatalf("plain syntax prefix %q, %v; want none", p, ok)
	}
	// Names are written as the templates write them: no HTML escaping.
	if p, _ := ToolCallPrefix(SyntaxHermes, "a<b>&c"); !strings.Contains(p, `"a<b>&c"`) {
		t.Fatalf("prefix %q escapes the name", p)
	}
}
