package agent

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/native"
	"github.com/clawrl/clawrl/env"
	"github.com/clawrl/clawrl/env/toolcall"
	"github.com/clawrl/clawrl/model"
	"github.com/clawrl/clawrl/tokenizer"
	"github.com/clawrl/clawrl/tokenizer/chatfmt"
	"github.com/clawrl/clawrl/tokenizer/vocab"
)

// smolLM2Template is SmolLM2-Instruct's chat template (ChatML without any
// tool syntax), as its tokenizer_config.json ships it.
const smolLM2Template = "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"

// formats returns a ChatML format without tool syntax (SmolLM2's template)
// and Qwen3's, both on the real Qwen3 tokenizer.
func formats(t *testing.T) (plain, qwen engine.Format) {
	t.Helper()
	dir := t.TempDir()
	if err := vocab.Write("qwen3", dir); err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.Load(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := model.NewConfig(model.Qwen3, model.SizeTiny)
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := chatfmt.New(smolLM2Template, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := native.NewFormat(tok, tmpl, cfg)
	if err != nil {
		t.Fatal(err)
	}
	qt, err := chatfmt.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	q, err := native.NewFormat(tok, qt, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p, q
}

func TestWithToolsAddsHermesSyntax(t *testing.T) {
	plain, qwen := formats(t)
	if WithTools(qwen) != qwen {
		t.Error("a template with a tool syntax was wrapped")
	}
	f := WithTools(plain)
	if p, ok := f.ToolCallPrefix("python"); !ok || !strings.HasPrefix(p, "<tool_call>") {
		t.Errorf("tool-call prefix %q, %v", p, ok)
	}
	call := chat.ToolCall{ID: "c1", Type: "function", Function: chat.FunctionCall{Name: "python", Arguments: `{"code": "print(1 < 2)"}`}}
	msgs := []chat.Message{
		{Role: chat.RoleSystem, Content: "Solve it."},
		{Role: chat.RoleUser, Content: "What is 1 < 2?"},
		{Role: chat.RoleAssistant, Content: "Let me check.", ToolCalls: []chat.ToolCall{call}},
		{Role: chat.RoleTool, ToolCallID: "c1", Name: "python", Content: "True"},
		{Role: chat.RoleTool, ToolCallID: "c1", Name: "python", Content: "again"},
	}
	got, err := f.Render(msgs, toolcall.Tools, engine.RenderOptions{AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	want := "<|im_start|>system\nSolve it.\n\nYou may call these tools:\n<tools>\n" +
		`{"name":"python","description":"Run Python 3 code and return what it prints (stdout and stderr).","parameters":{"type":"object","properties":{"code":{"type":"string","description":"Python code to run"}},"required":["code"]}}` +
		"\n</tools>\nTo call one, reply with <tool_call>\n{\"name\": <tool-name>, \"arguments\": <arguments-json-object>}\n</tool_call><|im_end|>\n" +
		"<|im_start|>user\nWhat is 1 < 2?<|im_end|>\n" +
		"<|im_start|>assistant\nLet me check.\n<tool_call>\n{\"name\":\"python\",\"arguments\":{\"code\":\"print(1 < 2)\"}}\n</tool_call><|im_end|>\n" +
		"<|im_start|>user\n<tool_response>\nTrue\n</tool_response>\n<tool_response>\nagain\n</tool_response><|im_end|>\n" +
		"<|im_start|>assistant\n"
	if got != want {
		t.Errorf("rendered\n%s\nwant\n%s", got, want)
	}
	// Without tools the template renders as it always did.
	noTools, err := f.Render(msgs[:2], nil, engine.RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if direct, _ := plain.Render(msgs[:2], nil, engine.RenderOptions{}); noTools != direct {
		t.Errorf("without tools: %q, want %q", noTools, direct)
	}

	// What the model writes in that syntax parses back into the call, and
	// the parsed message renders as the original did.
	p := f.NewParser(toolcall.Tools)
	p.Add("Let me check.\n<tool_call>\n{\"name\":\"python\",\"arguments\":{\"code\":\"print(1 < 2)\"}}\n</tool_call>")
	_, m := p.Finish()
	if len(m.ToolCalls) != 1 || m.ToolCalls[0].Function.Name != "python" {
		t.Fatalf("parsed %+v", m)
	}
	var args struct{ Code string }
	if err := json.Unmarshal([]byte(m.ToolCalls[0].Function.Arguments), &args); err != nil || args.Code != "print(1 < 2)" {
		t.Errorf("arguments %q: %v", m.ToolCalls[0].Function.Arguments, err)
	}
	m.Role = chat.RoleAssistant
	again, err := f.Render(append(append([]chat.Message(nil), msgs[:2]...), m), toolcall.Tools, engine.RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	orig, _ := f.Render(msgs[:3], toolcall.Tools, engine.RenderOptions{})
	if again != orig {
		t.Errorf("parsed call renders as\n%q\nwant\n%q", again, orig)
	}
}

// A demonstration played in the real toolcall environment succeeds, and its
// training sequences are what the runner would see and should write.
func TestDemonstrationSteps(t *testing.T) {
	pool := toolcallPool(t)
	plain, qwen := formats(t)
	task := toolcall.Generate(1, 7, env.SplitTrain, "demo")[0]
	actions, err := toolcall.Demonstration(task)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Demonstrate(context.Background(), pool, task, actions)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Evaluation.Success || d.Evaluation.Reward != 1 {
		t.Fatalf("reference solution of %q (%s) scored %+v", task.Prompt, task.Solution, d.Evaluation)
	}
	if tm := d.Messages[3]; tm.Role != chat.RoleTool || strings.TrimSpace(tm.Content) != task.Answer {
		t.Errorf("tool observation %+v, want the answer %s", tm, task.Answer)
	}
	for name, f := range map[string]engine.Format{"smollm2 template": plain, "qwen3 template": qwen} {
		steps, err := d.Steps(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(steps) != 2 {
			t.Fatalf("%s: %d steps", name, len(steps))
		}
		rf := WithTools(f)
		first, _ := rf.Render(d.Messages[:2], d.Tools, engine.RenderOptions{AddGenerationPrompt: true})
		if got, want := rf.Decode(steps[0].PromptIDs), rf.Decode(rf.Encode(first)); got != want {
			t.Errorf("%s: step 0 prompt %q, want the runner's %q", name, got, want)
		}
		stop := steps[1].CompletionIDs[len(steps[1].CompletionIDs)-1]
		if !slices.Contains(f.StopIDs(), stop) {
			t.Errorf("%s: completion does not end with a stop token: %v", name, steps[1].CompletionIDs)
		}
		p := rf.NewParser(d.Tools)
		p.Add(rf.Decode(steps[0].CompletionIDs))
		_, m := p.Finish()
		if len(m.ToolCalls) != 1 || !strings.Contains(m.ToolCalls[0].Function.Arguments, task.Solution) {
			t.Errorf("%s: step 0 completion parses as %+v", name, m)
		}
		if got := strings.TrimSpace(rf.Decode(steps[1].CompletionIDs)); !strings.HasSuffix(got, `\boxed{`+task.Answer+`}`) {
			t.Errorf("%s: step 1 completion %q", name, got)
		}
	}
}
