package chatfmt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/clawrl/clawrl/chat"
)

// refPython returns the interpreter for reference runs after checking it
// can import modules. Without it the test skips, or fails when
// CLAWRL_REQUIRE_REFS=1 (scripts/test sets it).
func refPython(tb testing.TB, modules ...string) string {
	tb.Helper()
	py := os.Getenv("CLAWRL_PYTHON")
	if py == "" {
		py = "python3"
	}
	missing := func(why string) {
		tb.Helper()
		if os.Getenv("CLAWRL_REQUIRE_REFS") == "1" {
			tb.Fatalf("reference missing (CLAWRL_REQUIRE_REFS=1): %s", why)
		}
		tb.Skipf("reference missing: %s (set CLAWRL_PYTHON to a Python with scripts/requirements-test.txt)", why)
	}
	if _, err := exec.LookPath(py); err != nil {
		missing("no python at " + py)
	}
	for _, m := range modules {
		if out, err := exec.Command(py, "-c", "import "+m).CombinedOutput(); err != nil {
			missing("python module " + m + ": " + strings.TrimSpace(string(out)))
		}
	}
	return py
}

// wireMessage is a chat message as an OpenAI client sends it.
type wireMessage struct {
	Role             string          `json:"role"`
	Content          *string         `json:"content"`
	ReasoningContent *string         `json:"reasoning_content"`
	ToolCalls        []chat.ToolCall `json:"tool_calls"`
	ToolCallID       string          `json:"tool_call_id"`
	Name             string          `json:"name"`
}

// fromWire converts wire messages the way the gateway does.
func fromWire(tb testing.TB, raw []json.RawMessage) []chat.Message {
	tb.Helper()
	out := make([]chat.Message, len(raw))
	for i, r := range raw {
		var w wireMessage
		if err := json.Unmarshal(r, &w); err != nil {
			tb.Fatalf("message %d: %v", i, err)
		}
		m := chat.Message{Role: w.Role, ToolCalls: w.ToolCalls, ToolCallID: w.ToolCallID, Name: w.Name}
		if w.Content == nil {
			m.ContentNull = true
		} else {
			m.Content = *w.Content
		}
		if w.ReasoningContent != nil {
			m.ReasoningContent = *w.ReasoningContent
		}
		out[i] = m
	}
	return out
}

func toolsFromWire(tb testing.TB, raw []json.RawMessage) []chat.Tool {
	tb.Helper()
	out := make([]chat.Tool, len(raw))
	for i, r := range raw {
		if err := json.Unmarshal(r, &out[i]); err != nil {
			tb.Fatalf("tool %d: %v", i, err)
		}
	}
	return out
}

func wire(msgs ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(msgs))
	for i, m := range msgs {
		if !json.Valid([]byte(m)) {
			panic("invalid JSON in test corpus: " + m)
		}
		out[i] = json.RawMessage(m)
	}
	return out
}

// conversations is the parity corpus, as wire JSON.
func conversations() map[string][]json.RawMessage {
	return map[string][]json.RawMessage{
		"user only":   wire(`{"role":"user","content":"Hello!"}`),
		"system user": wire(`{"role":"system","content":"You are terse."}`, `{"role":"user","content":"  Hi there  \n"}`),
		"multi turn": wire(
			`{"role":"system","content":"Be kind."}`,
			`{"role":"user","content":"What is 2+2?"}`,
			`{"role":"assistant","content":"4"}`,
			`{"role":"user","content":"And 3+3?"}`),
		"assistant last": wire(
			`{"role":"user","content":"Say hi"}`,
			`{"role":"assistant","content":"hi"}`),
		"tool round null content": wire(
			`{"role":"user","content":"Weather in Paris?"}`,
			`{"role":"assistant","content":null,"tool_calls":[{"id":"call1","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Paris\", \"unit\": \"c\"}"}}]}`,
			`{"role":"tool","tool_call_id":"call1","content":"{\"temp\": 21}"}`,
			`{"role":"assistant","content":"It's 21°C in Paris."}`,
			`{"role":"user","content":"Thanks"}`),
		"tool call with content": wire(
			`{"role":"user","content":"Look up x"}`,
			`{"role":"assistant","content":"Let me check.","tool_calls":[{"id":"c2","type":"function","function":{"name":"lookup","arguments":"{\"q\":\"x\",\"n\":[1,2.5,true,null]}"}}]}`,
			`{"role":"tool","tool_call_id":"c2","content":"found"}`),
		"parallel tool calls": wire(
			`{"role":"system","content":"sys"}`,
			`{"role":"user","content":"Do both"}`,
			`{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"b","type":"function","function":{"name":"g","arguments":"{\"k\": \"é\\n\"}"}}]}`,
			`{"role":"tool","tool_call_id":"a","content":"A"}`,
			`{"role":"tool","tool_call_id":"b","content":"B"}`),
		"reasoning content": wire(
			`{"role":"user","content":"q1"}`,
			`{"role":"assistant","content":"a1","reasoning_content":"thought 1"}`,
			`{"role":"user","content":"q2"}`,
			`{"role":"assistant","content":"\n\na2","reasoning_content":"\nthought 2\n"}`),
		"think tags in content": wire(
			`{"role":"user","content":"q"}`,
			`{"role":"assistant","content":"<think>\nhmm\n</think>\n\nanswer"}`,
			`{"role":"user","content":"more"}`),
		"multi step tools with reasoning": wire(
			`{"role":"user","content":"plan a trip"}`,
			`{"role":"assistant","content":"","reasoning_content":"need weather","tool_calls":[{"id":"t1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Rome\"}"}}]}`,
			`{"role":"tool","tool_call_id":"t1","content":"sunny"}`,
			`{"role":"assistant","content":"Go to Rome.","reasoning_content":"it is sunny"}`),
		"tool response as user": wire(
			`{"role":"user","content":"start"}`,
			`{"role":"user","content":"<tool_response>\nok\n</tool_response>"}`),
		"unicode and quotes": wire(
			`{"role":"system","content":"Ünïcödé 日本語 🦞 \"quotes\" 'single' <tags> & \\ backslash"}`,
			`{"role":"user","content":"\ttabs\r\nand CRLF\u2028line sep"}`),
		"openclaw": openclawMessages(25000),
	}
}

type parityTemplate struct {
	name     string
	config   string // tokenizer_config.json in testdata
	template string // overriding .jinja in testdata, or ""
	tools    bool   // the template renders tools
	mapping  []bool // argument modes to try
}

var parityTemplates = []parityTemplate{
	{name: "qwen3", config: "qwen3_tokenizer_config.json", tools: true, mapping: []bool{false, true}},
	{name: "llama3", config: "llama3_tokenizer_config.json"},
	{name: "llama3.1-tools", config: "llama3_tokenizer_config.json", template: "llama3.1-tools.jinja", tools: true, mapping: []bool{true, false}},
	{name: "llama3.2-tools", config: "llama3_tokenizer_config.json", template: "llama3.2-tools.jinja", tools: true, mapping: []bool{true}},
}

type applyCase struct {
	Messages            []json.RawMessage `json:"messages"`
	Tools               []json.RawMessage `json:"tools"`
	AddGenerationPrompt bool              `json:"add_generation_prompt"`
	EnableThinking      *bool             `json:"enable_thinking,omitempty"`
	ArgumentsAsMapping  bool              `json:"arguments_as_mapping,omitempty"`

	name string
}

type applyResult struct {
	Out   *string `json:"out"`
	Error string  `json:"error"`
}

func runApplyRef(tb testing.TB, pt parityTemplate, cases []applyCase) []applyResult {
	tb.Helper()
	py := refPython(tb, "transformers", "tokenizers", "jinja2")
	req := map[string]any{"config": "testdata/" + pt.config, "cases": cases}
	if pt.template != "" {
		req["template"] = "testdata/" + pt.template
	}
	in, err := json.Marshal(req)
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(py, "testdata/apply_ref.py")
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("apply_ref.py: %v\n%s", err, stderr.String())
	}
	var res []applyResult
	if err := json.Unmarshal(out, &res); err != nil {
		tb.Fatalf("apply_ref.py output: %v", err)
	}
	if len(res) != len(cases) {
		tb.Fatalf("apply_ref.py: %d results for %d cases", len(res), len(cases))
	}
	return res
}

func loadParityTemplate(tb testing.TB, pt parityTemplate) *Template {
	tb.Helper()
	config, err := os.ReadFile("testdata/" + pt.config)
	if err != nil {
		tb.Fatal(err)
	}
	var override string
	if pt.template != "" {
		b, err := os.ReadFile("testdata/" + pt.template)
		if err != nil {
			tb.Fatal(err)
		}
		override = string(b)
	}
	tmpl, err := FromTokenizerConfig(config, override)
	if err != nil {
		tb.Fatal(err)
	}
	return tmpl
}

func boolPtr(b bool) *bool { return &b }

// TestRenderMatchesTransformers renders the corpus with every template and
// option combination, here and with transformers' apply_chat_template, and
// requires byte-identical text (or both failing).
func TestRenderMatchesTransformers(t *testing.T) {
	toolSets := map[string][]json.RawMessage{"no tools": nil, "openclaw tools": openclawTools()}
	for _, pt := range parityTemplates {
		t.Run(pt.name, func(t *testing.T) {
			tmpl := loadParityTemplate(t, pt)
			var cases []applyCase
			modes := pt.mapping
			if len(modes) == 0 {
				modes = []bool{false}
			}
			for convName, msgs := range conversations() {
				for toolName, tools := range toolSets {
					if tools != nil && !pt.tools {
						continue
					}
					for _, agp := range []bool{false, true} {
						for _, think := range []*bool{nil, boolPtr(true), boolPtr(false)} {
							for _, mapping := range modes {
								name := fmt.Sprintf("%s/%s/agp=%v/thinking=%s/mapping=%v", convName, toolName, agp, fmtBool(think), mapping)
								cases = append(cases, applyCase{Messages: msgs, Tools: tools, AddGenerationPrompt: agp,
									EnableThinking: think, ArgumentsAsMapping: mapping, name: name})
							}
						}
					}
				}
			}
			ref := runApplyRef(t, pt, cases)
			rendered := 0
			for i, c := range cases {
				mode := ArgumentsAsSent
				if c.ArgumentsAsMapping {
					mode = ArgumentsAsMapping
				}
				got, err := tmpl.RenderWith(fromWire(t, c.Messages), toolsFromWire(t, c.Tools),
					Options{AddGenerationPrompt: c.AddGenerationPrompt, EnableThinking: c.EnableThinking, Arguments: mode})
				want := ref[i]
				switch {
				case want.Out == nil && err == nil:
					t.Errorf("%s: transformers failed (%s) but we rendered %q", c.name, want.Error, head(got))
				case want.Out != nil && err != nil:
					t.Errorf("%s: we failed: %v", c.name, err)
				case want.Out != nil && got != *want.Out:
					t.Errorf("%s: mismatch\n%s", c.name, firstDiff(got, *want.Out))
				case want.Out != nil:
					rendered++
				}
			}
			if rendered < len(cases)/2 {
				t.Errorf("only %d of %d cases rendered without error on both sides", rendered, len(cases))
			}
			t.Logf("%d cases byte-identical, %d failing on both sides", rendered, len(cases)-rendered)
		})
	}
}

func fmtBool(b *bool) string {
	if b == nil {
		return "unset"
	}
	return fmt.Sprint(*b)
}

func head(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

func firstDiff(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	lo := max(0, i-80)
	return fmt.Sprintf("first difference at byte %d (got %d bytes, want %d)\n got: %q\nwant: %q",
		i, len(got), len(want), got[lo:min(len(got), i+80)], want[lo:min(len(want), i+80)])
}

func TestFromTokenizerConfigNamedTemplates(t *testing.T) {
	cfg := `{"bos_token": {"content": "<s>", "special": true}, "eos_token": "</s>",
		"chat_template": [{"name": "default", "template": "D{{ bos_token }}{{ eos_token }}"}, {"name": "tool_use", "template": "T{{ tools|length }}"}]}`
	tmpl, err := FromTokenizerConfig([]byte(cfg), "")
	if err != nil {
		t.Fatal(err)
	}
	msgs := []chat.Message{{Role: "user", Content: "x"}}
	tests := []struct {
		tools []chat.Tool
		want  string
	}{
		{nil, "D<s></s>"},
		{[]chat.Tool{{Type: "function", Function: chat.FunctionDef{Name: "f"}}}, "T1"},
	}
	for _, tt := range tests {
		got, err := tmpl.RenderWith(msgs, tt.tools, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

// TestRenderAutoArguments checks engine.Format's Render: Qwen3 (which prints
// string arguments verbatim) gets them as sent, Llama 3.1 (which tojson's
// them) gets them decoded.
func TestRenderAutoArguments(t *testing.T) {
	msgs := fromWire(t, conversations()["tool round null content"])
	for _, tt := range []struct {
		pt   parityTemplate
		want ArgumentsMode
	}{
		{parityTemplates[0], ArgumentsAsSent},
		{parityTemplates[2], ArgumentsAsMapping},
	} {
		tmpl := loadParityTemplate(t, tt.pt)
		got, err := tmpl.Render(msgs, nil, chat.RenderOptions{AddGenerationPrompt: true})
		if err != nil {
			t.Fatal(err)
		}
		want, err := tmpl.RenderWith(msgs, nil, Options{AddGenerationPrompt: true, Arguments: tt.want})
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: Render differs from mode %d:\n%s", tt.pt.name, tt.want, firstDiff(got, want))
		}
	}
}
