package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/native"
	"github.com/clawrl/clawrl/model"
	"github.com/clawrl/clawrl/safetensors"
	"github.com/clawrl/clawrl/tokenizer/vocab"
)

// Forced tool calls with the real tokenizers, chat templates and output
// parser (Qwen3's Hermes calls and Llama 3.1's JSON calls): first with a
// model that writes a given continuation, so the outcome is known, then with
// random tiny checkpoints through the native engine.

var weatherTool = map[string]any{"type": "function", "function": map[string]any{
	"name": "get_weather", "description": "weather in a city",
	"parameters": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}},
		"required": []string{"city"}},
}}

// vocabDir writes a family's real tokenizer files (what `clawrl model new`
// writes) into a temporary folder.
func vocabDir(t *testing.T, family string) string {
	t.Helper()
	dir := t.TempDir()
	if err := vocab.Write(family, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// continuingEngine is a model stand-in over a real Format: it answers every
// prompt with the tokens of its continuation, then an end-of-turn token. It
// doubles the model only; tokenizer, template and parser are the real ones.
type continuingEngine struct {
	format       *native.Format
	continuation string
}

func (e *continuingEngine) Info() engine.Info {
	return engine.Info{ID: "continuing", Family: "test", ContextLength: 32768, Engine: "continuing"}
}
func (e *continuingEngine) Format() engine.Format { return e.format }

func (e *continuingEngine) Generate(ctx context.Context, req engine.GenerateRequest, emit func(engine.Token) error) (engine.Generation, error) {
	g := engine.Generation{PromptTokens: len(req.PromptIDs), FinishReason: engine.FinishStop}
	for _, id := range append(e.format.Encode(e.continuation), e.format.StopIDs()[0]) {
		if len(g.Tokens) == req.MaxTokens {
			g.FinishReason = engine.FinishLength
			break
		}
		tok := engine.Token{ID: id, Logprob: -0.5}
		g.Tokens = append(g.Tokens, tok)
		if err := emit(tok); err != nil {
			if errors.Is(err, engine.ErrStop) {
				break
			}
			return g, err
		}
	}
	return g, nil
}

func (e *continuingEngine) Score(context.Context, engine.ScoreRequest) (engine.Scored, error) {
	return engine.Scored{}, errors.New("continuingEngine does not score")
}

func serveEngine(t *testing.T, eng engine.Engine) *testServer {
	t.Helper()
	st := openTestStore(t)
	srv, err := New(Config{Engine: eng, Store: st, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return &testServer{Server: hs, api: srv, store: st}
}

func TestToolChoiceRealParser(t *testing.T) {
	type call struct{ name, args string }
	tests := []struct {
		family, name string
		choice       any
		continuation string
		calls        []call
		errCode      string
	}{
		{"qwen3", "named", namedChoice("get_weather"), " {\"city\": \"Paris\"}}\n</tool_call>", []call{{"get_weather", `{"city": "Paris"}`}}, ""},
		{"qwen3", "required", "required", " \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call>", []call{{"get_weather", `{"city": "Oslo"}`}}, ""},
		{"qwen3", "required, two calls", "required",
			" \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"ls\", \"arguments\": {}}\n</tool_call>",
			[]call{{"get_weather", `{"city": "Oslo"}`}, {"ls", `{}`}}, ""},
		{"qwen3", "required, unknown function", "required", " \"rm\", \"arguments\": {}}\n</tool_call>", nil, "tool_call_failed"},
		{"qwen3", "named, broken arguments", namedChoice("get_weather"), " {\"city\": Paris}}\n</tool_call>", nil, "tool_call_failed"},
		{"llama", "named", namedChoice("get_weather"), ` {"city": "Paris"}}`, []call{{"get_weather", `{"city": "Paris"}`}}, ""},
		{"llama", "required", "required", ` "ls", "parameters": {"path": "/"}}`, []call{{"ls", `{"path": "/"}`}}, ""},
		{"llama", "required, not a call", "required", ` 42}`, nil, "tool_call_failed"},
	}
	formats := map[string]*native.Format{}
	for _, tt := range tests {
		f := formats[tt.family]
		if f == nil {
			var err error
			if f, err = native.LoadFormat(vocabDir(t, tt.family), &model.Config{}); err != nil {
				t.Fatal(err)
			}
			formats[tt.family] = f
		}
		for _, stream := range []bool{false, true} {
			name := tt.family + ", " + tt.name
			if stream {
				name += ", streaming"
			}
			t.Run(name, func(t *testing.T) {
				ts := serveEngine(t, &continuingEngine{format: f, continuation: tt.continuation})
				a := ts.ask(t, map[string]any{"messages": msgs("user", "weather in Paris?"), "tools": []any{weatherTool, lsTool},
					"tool_choice": tt.choice}, stream)
				if a.errCode != tt.errCode {
					t.Fatalf("status %d error %q, want %q", a.status, a.errCode, tt.errCode)
				}
				if tt.errCode != "" {
					if stream && a.done {
						t.Error("[DONE] after an error")
					}
					return
				}
				var got []call
				for _, c := range a.calls {
					got = append(got, call{c.Function.Name, c.Function.Arguments})
				}
				if a.status != 200 || a.finish != "tool_calls" || !reflect.DeepEqual(got, tt.calls) || a.content != nil {
					t.Fatalf("status %d finish %q calls %q content %v; want tool_calls %q", a.status, a.finish, got, a.content, tt.calls)
				}
				turn, err := ts.store.Turn(context.Background(), a.id)
				if err != nil {
					t.Fatal(err)
				}
				prefix, _ := f.ToolCallPrefix(map[bool]string{true: "get_weather"}[tt.name == "named"])
				if turn.ForcedText != prefix || !reflect.DeepEqual(turn.PromptIDs, f.Encode(turn.PromptText)) ||
					!strings.HasSuffix(f.Decode(turn.PromptIDs), prefix) || turn.ResponseText != tt.continuation {
					t.Errorf("recorded forced %q, prompt ids decode to …%q, response text %q",
						turn.ForcedText, tail(f.Decode(turn.PromptIDs), 40), turn.ResponseText)
				}
				// What the model wrote, forced opening included, is the
				// recorded call, as the template would render it back.
				p := f.NewParser(nil)
				p.Add(turn.ForcedText + turn.ResponseText)
				_, whole := p.Finish()
				if len(whole.ToolCalls) != len(turn.Response.ToolCalls) || whole.ToolCalls[0].Function != turn.Response.ToolCalls[0].Function {
					t.Errorf("forced + response text parse to %+v, recorded %+v", whole.ToolCalls, turn.Response.ToolCalls)
				}
			})
		}
	}
}

func tail(s string, n int) string { return s[max(0, len(s)-n):] }

// tinyNative opens a random tiny checkpoint of family with the real
// tokenizer, as `clawrl model new --size tiny` writes it.
func tinyNative(t *testing.T, family model.Family, vocabFamily string) *native.Engine {
	t.Helper()
	dir := filepath.Join(t.TempDir(), string(family)+"-tiny")
	cfg, err := model.NewConfig(family, model.SizeTiny)
	if err != nil {
		t.Fatal(err)
	}
	if err := model.WriteRandom(dir, cfg, 7, safetensors.F32); err != nil {
		t.Fatal(err)
	}
	tj, tc, err := vocab.Files(vocabFamily)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"tokenizer.json": tj, "tokenizer_config.json": tc} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e, err := native.Open(dir, native.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// TestToolChoiceNativeTiny forces a named call on random tiny Qwen3 and
// Llama checkpoints through the openai-go client. A random model writes
// garbage arguments, so the call is cut by max_tokens: the client must get
// a well-formed response with the named call, finish_reason "length" (or, if
// the model happened to close a valid call, "tool_calls" with JSON
// arguments). "required" must never come back as text.
func TestToolChoiceNativeTiny(t *testing.T) {
	if testing.Short() {
		t.Skip("loads two tiny checkpoints")
	}
	for _, tc := range []struct {
		family      model.Family
		vocabFamily string
	}{{model.Qwen3, "qwen3"}, {model.Llama, "llama"}} {
		t.Run(string(tc.family), func(t *testing.T) {
			ts := serveEngine(t, tinyNative(t, tc.family, tc.vocabFamily))
			client := openaiClient(ts)
			ctx := context.Background()
			params := openai.ChatCompletionNewParams{
				Model:    "tiny",
				Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("What is the weather in Paris?")},
				Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
					Name: "get_weather", Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}})},
				ToolChoice: openai.ChatCompletionToolChoiceOptionUnionParam{OfFunctionToolChoice: &openai.ChatCompletionNamedToolChoiceParam{
					Function: openai.ChatCompletionNamedToolChoiceFunctionParam{Name: "get_weather"}}},
				MaxTokens: openai.Int(12), Seed: openai.Int(3),
			}
			check := func(how string, msg openai.ChatCompletionMessage, finish string) {
				t.Helper()
				if len(msg.ToolCalls) == 0 || msg.ToolCalls[0].Function.Name != "get_weather" || msg.ToolCalls[0].ID == "" {
					t.Fatalf("%s: message %+v has no call of get_weather", how, msg)
				}
				t.Logf("%s: finish %q, %d calls, first %s(%q)", how, finish, len(msg.ToolCalls), msg.ToolCalls[0].Function.Name, msg.ToolCalls[0].Function.Arguments)
				switch finish {
				case "length":
				case "tool_calls":
					if !json.Valid([]byte(msg.ToolCalls[0].Function.Arguments)) {
						t.Fatalf("%s: finish tool_calls with arguments %q", how, msg.ToolCalls[0].Function.Arguments)
					}
				default:
					t.Fatalf("%s: finish %q", how, finish)
				}
			}
			resp, err := client.Chat.Completions.New(ctx, params)
			if err != nil {
				var apiErr *openai.Error
				if errors.As(err, &apiErr) && apiErr.Code == "tool_call_failed" {
					t.Skipf("the random model broke the call after its arguments (allowed): %v", err)
				}
				t.Fatal(err)
			}
			check("non-streaming", resp.Choices[0].Message, string(resp.Choices[0].FinishReason))
			turn, err := ts.store.Turn(ctx, resp.ID)
			if err != nil {
				t.Fatal(err)
			}
			f := ts.api.format
			if prefix, _ := f.ToolCallPrefix("get_weather"); turn.ForcedText != prefix || !strings.HasSuffix(turn.PromptText, prefix) ||
				len(turn.ResponseIDs) != int(resp.Usage.CompletionTokens) || len(turn.PromptIDs) != int(resp.Usage.PromptTokens) {
				t.Errorf("recorded forced %q, %d prompt / %d response ids, usage %+v", turn.ForcedText, len(turn.PromptIDs), len(turn.ResponseIDs), resp.Usage)
			}

			stream := client.Chat.Completions.NewStreaming(ctx, params)
			acc := openai.ChatCompletionAccumulator{}
			for stream.Next() {
				acc.AddChunk(stream.Current())
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			check("streaming", acc.Choices[0].Message, string(acc.Choices[0].FinishReason))

			// "required": a call of a tool, an empty answer cut by
			// max_tokens, or a tool_call_failed error; never text.
			a := ts.ask(t, map[string]any{"messages": msgs("user", "weather?"), "tools": []any{weatherTool}, "tool_choice": "required",
				"max_tokens": 12, "seed": 3}, false)
			t.Logf("required: status %d error %q finish %q calls %+v", a.status, a.errCode, a.finish, a.calls)
			switch {
			case a.errCode == "tool_call_failed":
			case a.status == 200 && a.content == nil && (a.finish == "length" || a.finish == "tool_calls"):
				for _, c := range a.calls {
					if c.Function.Name != "get_weather" {
						t.Fatalf("required: call of %q", c.Function.Name)
					}
				}
			default:
				t.Fatalf("required: status %d error %q finish %q content %v calls %+v", a.status, a.errCode, a.finish, a.content, a.calls)
			}
		})
	}
}
