// Package chatfmt renders conversations with a model's Hugging Face chat
// template exactly as transformers' apply_chat_template(..., tokenize=False)
// does, and parses the model's generated text back into content, reasoning
// and tool calls while it streams.
//
// Rendering passes the template the same variables transformers does:
// messages as dicts (keys whose value is None dropped, reasoning aliased to
// "thinking"), tools as {"type":"function","function":{…}} dicts in the
// client's key order, documents=None, add_generation_prompt, the tokenizer's
// special tokens (bos_token, eos_token, …) and enable_thinking when set.
package chatfmt

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/tokenizer/jinja"
)

// Template is a compiled chat template plus the special tokens transformers
// exposes to it. It is immutable and safe for concurrent use.
type Template struct {
	source   string
	tmpl     *jinja.Template
	toolTmpl *jinja.Template // the "tool_use" named template, used when tools are given
	special  map[string]string
}

// SpecialTokenKeys are the tokenizer_config.json entries transformers passes
// to a template (its special_tokens_map), when set.
var specialTokenKeys = []string{"bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"}

// New compiles a chat template. special holds the special tokens the
// template may read (bos_token, eos_token, …); unset ones stay undefined.
func New(source string, special map[string]string) (*Template, error) {
	t, err := jinja.Parse(source, jinja.HFOptions())
	if err != nil {
		return nil, fmt.Errorf("chatfmt: compile chat template: %w", err)
	}
	sp := map[string]string{}
	for k, v := range special {
		sp[k] = v
	}
	return &Template{source: source, tmpl: t, special: sp}, nil
}

// FromTokenizerConfig reads the chat template and special tokens from the
// contents of a tokenizer_config.json. chatTemplateFile, when not empty, is
// the contents of a separate chat_template.jinja (newer checkpoints keep it
// there), which wins over the config's entry as in transformers.
func FromTokenizerConfig(config []byte, chatTemplateFile string) (*Template, error) {
	var cfg map[string]json.RawMessage
	if err := json.Unmarshal(config, &cfg); err != nil {
		return nil, fmt.Errorf("chatfmt: parse tokenizer_config.json: %w", err)
	}
	special := map[string]string{}
	for _, k := range specialTokenKeys {
		raw, ok := cfg[k]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			special[k] = s
			continue
		}
		var added struct {
			Content *string `json:"content"`
		}
		if json.Unmarshal(raw, &added) == nil && added.Content != nil {
			special[k] = *added.Content
		}
	}
	source := chatTemplateFile
	var toolSource string
	if source == "" {
		raw, ok := cfg["chat_template"]
		if !ok {
			return nil, fmt.Errorf("chatfmt: tokenizer_config.json has no chat_template")
		}
		if json.Unmarshal(raw, &source) != nil {
			// A list of named templates: "default" and optionally "tool_use".
			var named []struct {
				Name     string `json:"name"`
				Template string `json:"template"`
			}
			if err := json.Unmarshal(raw, &named); err != nil {
				return nil, fmt.Errorf("chatfmt: tokenizer_config.json chat_template is neither a string nor a list of named templates: %w", err)
			}
			for _, n := range named {
				switch n.Name {
				case "default":
					source = n.Template
				case "tool_use":
					toolSource = n.Template
				}
			}
			if source == "" {
				return nil, fmt.Errorf("chatfmt: tokenizer_config.json has no default chat template")
			}
		}
	}
	t, err := New(source, special)
	if err != nil {
		return nil, err
	}
	if toolSource != "" {
		if t.toolTmpl, err = jinja.Parse(toolSource, jinja.HFOptions()); err != nil {
			return nil, fmt.Errorf("chatfmt: compile tool_use chat template: %w", err)
		}
	}
	return t, nil
}

// Load reads the chat template of a Hugging Face model folder: its
// tokenizer_config.json and, when present, chat_template.jinja.
func Load(dir string) (*Template, error) {
	config, err := os.ReadFile(filepath.Join(dir, "tokenizer_config.json"))
	if err != nil {
		return nil, fmt.Errorf("chatfmt: %w", err)
	}
	jinjaFile, err := os.ReadFile(filepath.Join(dir, "chat_template.jinja"))
	if err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("chatfmt: %w", err)
	}
	t, err := FromTokenizerConfig(config, string(jinjaFile))
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, dir)
	}
	return t, nil
}

// Source is the template text.
func (t *Template) Source() string { return t.source }

// SpecialToken returns a special token's text (bos_token, eos_token, …).
func (t *Template) SpecialToken(name string) (string, bool) {
	v, ok := t.special[name]
	return v, ok
}

// ArgumentsMode says how an assistant tool call's arguments (a JSON string
// on the OpenAI wire) reach the template.
type ArgumentsMode int

const (
	// ArgumentsAsSent passes the JSON string unchanged, which is what
	// transformers sees when the OpenAI-style message dict is passed as is.
	// Qwen3's template prints a string verbatim, so a call the model made
	// re-renders byte for byte.
	ArgumentsAsSent ArgumentsMode = iota
	// ArgumentsAsMapping decodes a JSON object string into a mapping first,
	// as vLLM does; templates that tojson the arguments (Llama 3.1, Qwen2.5)
	// need it. Arguments that are not a JSON object stay a string.
	ArgumentsAsMapping
	// ArgumentsAuto is ArgumentsAsSent for templates that test
	// "arguments is string" (Qwen3) and ArgumentsAsMapping for the others.
	ArgumentsAuto
)

// Options control one rendering.
type Options struct {
	AddGenerationPrompt bool
	// EnableThinking is passed as enable_thinking when set (Qwen3 reads it).
	EnableThinking *bool
	Arguments      ArgumentsMode
	// Extra are more template variables (date_string, custom_tools, …);
	// they override the special tokens, as apply_chat_template's kwargs do.
	Extra map[string]any
	// Now is strftime_now's clock; nil means the wall clock.
	Now func() time.Time
}

// Render implements engine.Format's Render: transformers' variables, with
// tool-call arguments passed the way the template expects (ArgumentsAuto).
func (t *Template) Render(msgs []chat.Message, tools []chat.Tool, opts chat.RenderOptions) (string, error) {
	return t.RenderWith(msgs, tools, Options{AddGenerationPrompt: opts.AddGenerationPrompt, EnableThinking: opts.EnableThinking, Arguments: ArgumentsAuto})
}

// RenderWith renders a conversation.
func (t *Template) RenderWith(msgs []chat.Message, tools []chat.Tool, opts Options) (string, error) {
	if len(msgs) == 0 {
		return "", fmt.Errorf("chatfmt: cannot render an empty conversation")
	}
	mode := opts.Arguments
	if mode == ArgumentsAuto {
		mode = ArgumentsAsMapping
		if strings.Contains(t.source, "arguments is string") {
			mode = ArgumentsAsSent
		}
	}
	messages, err := MessageValues(msgs, mode)
	if err != nil {
		return "", err
	}
	vars := map[string]any{}
	for k, v := range t.special {
		vars[k] = v
	}
	for k, v := range opts.Extra {
		vars[k] = v
	}
	vars["messages"] = messages
	vars["documents"] = nil
	vars["add_generation_prompt"] = opts.AddGenerationPrompt
	vars["tools"] = nil
	tmpl := t.tmpl
	if len(tools) > 0 {
		tv, err := ToolValues(tools)
		if err != nil {
			return "", err
		}
		vars["tools"] = tv
		if t.toolTmpl != nil {
			tmpl = t.toolTmpl
		}
	}
	if opts.EnableThinking != nil {
		vars["enable_thinking"] = *opts.EnableThinking
	}
	if opts.Now != nil {
		tmpl = tmpl.WithClock(opts.Now)
	}
	out, err := tmpl.Render(vars)
	if err != nil {
		return "", fmt.Errorf("chatfmt: render chat template (%d messages, %d tools): %w", len(msgs), len(tools), err)
	}
	return out, nil
}

// MessageValues converts messages into the dicts a template sees. Like
// transformers, a field that is absent (or null on the wire) is not a key:
// the template finds it undefined. One exception: "content": null (OpenAI
// tool-call rounds) becomes "" rather than a missing key, because Qwen3's
// and most other templates concatenate message.content and fail on an
// undefined one — the same choice vLLM and SGLang make.
func MessageValues(msgs []chat.Message, mode ArgumentsMode) ([]any, error) {
	out := make([]any, len(msgs))
	for i, m := range msgs {
		d := jinja.NewMap()
		if m.ReasoningContent != "" {
			// transformers' _alias_reasoning_fields: {"thinking": r, **message, "reasoning_content": r}
			d.Set("thinking", m.ReasoningContent)
		}
		d.Set("role", m.Role)
		d.Set("content", m.Content)
		if m.ReasoningContent != "" {
			d.Set("reasoning_content", m.ReasoningContent)
		}
		if len(m.ToolCalls) > 0 {
			calls := make([]any, len(m.ToolCalls))
			for j, c := range m.ToolCalls {
				fn := jinja.NewMap()
				fn.Set("name", c.Function.Name)
				var args any = c.Function.Arguments
				if mode == ArgumentsAsMapping {
					if v, err := jinja.FromJSON([]byte(c.Function.Arguments)); err == nil {
						if _, isObject := v.(*jinja.Map); isObject {
							args = v
						}
					}
				}
				fn.Set("arguments", args)
				call := jinja.NewMap()
				if c.ID != "" {
					call.Set("id", c.ID)
				}
				typ := c.Type
				if typ == "" {
					typ = "function"
				}
				call.Set("type", typ)
				call.Set("function", fn)
				calls[j] = call
			}
			d.Set("tool_calls", calls)
		}
		if m.ToolCallID != "" {
			d.Set("tool_call_id", m.ToolCallID)
		}
		if m.Name != "" {
			d.Set("name", m.Name)
		}
		out[i] = d
	}
	return out, nil
}

// ToolValues converts tool definitions into the dicts a template sees, with
// each JSON schema decoded in its original key order.
func ToolValues(tools []chat.Tool) ([]any, error) {
	out := make([]any, len(tools))
	for i, tool := range tools {
		fn := jinja.NewMap()
		fn.Set("name", tool.Function.Name)
		if tool.Function.Description != "" {
			fn.Set("description", tool.Function.Description)
		}
		if len(tool.Function.Parameters) > 0 && string(tool.Function.Parameters) != "null" {
			params, err := jinja.FromJSON(tool.Function.Parameters)
			if err != nil {
				return nil, fmt.Errorf("chatfmt: tool %d (%s): parameters: %w", i, tool.Function.Name, err)
			}
			fn.Set("parameters", params)
		}
		if tool.Function.Strict != nil {
			fn.Set("strict", *tool.Function.Strict)
		}
		d := jinja.NewMap()
		typ := tool.Type
		if typ == "" {
			typ = "function"
		}
		d.Set("type", typ)
		d.Set("function", fn)
		out[i] = d
	}
	return out, nil
}
