package agent

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/tokenizer/chatfmt"
)

// WithTools returns f itself when its chat template has a tool-call syntax,
// and otherwise f with one added: a chat template without tools (SmolLM2's
// ChatML) would drop the offered tools from the prompt, so the model could
// only ever answer directly. The added syntax is the Hermes one Qwen's
// templates teach, written into messages the plain template does render:
// the tool list and the calling convention go at the end of the system
// message, an assistant's calls become <tool_call>{…}</tool_call> lines
// after its text, and tool results become a user message of
// <tool_response>…</tool_response> blocks. Output is parsed with the Hermes
// parser. Such a model has to be taught the syntax (an SFT warm start on
// demonstrations, see Demonstrate) before it uses it.
func WithTools(f engine.Format) engine.Format {
	if _, ok := f.ToolCallPrefix(""); ok {
		return f
	}
	return hermesFormat{f}
}

// hermesFormat adds Hermes tool calls to a format without a tool syntax.
type hermesFormat struct{ engine.Format }

// Render implements engine.Format.
func (h hermesFormat) Render(msgs []chat.Message, tools []chat.Tool, opts engine.RenderOptions) (string, error) {
	plain, err := hermesMessages(msgs, tools)
	if err != nil {
		return "", err
	}
	return h.Format.Render(plain, nil, opts)
}

// NewParser implements engine.Format.
func (h hermesFormat) NewParser([]chat.Tool) engine.Parser {
	return chatfmt.NewParser(chatfmt.ParserOptions{Syntax: chatfmt.SyntaxHermes})
}

// ToolCallPrefix implements engine.Format.
func (h hermesFormat) ToolCallPrefix(name string) (string, bool) {
	return chatfmt.ToolCallPrefix(chatfmt.SyntaxHermes, name)
}

// hermesToolsPrompt is appended to the system message when tools are
// offered; %s is one JSON function definition per line.
const hermesToolsPrompt = "You may call these tools:\n<tools>\n%s</tools>\n" +
	"To call one, reply with <tool_call>\n{\"name\": <tool-name>, \"arguments\": <arguments-json-object>}\n</tool_call>"

// hermesMessages rewrites a conversation with tools into plain messages.
func hermesMessages(msgs []chat.Message, tools []chat.Tool) ([]chat.Message, error) {
	out := make([]chat.Message, 0, len(msgs)+1)
	if len(tools) > 0 {
		var defs strings.Builder
		for _, t := range tools {
			b, err := marshalNoEscape(t.Function)
			if err != nil {
				return nil, fmt.Errorf("tool %q: %w", t.Function.Name, err)
			}
			defs.WriteString(b + "\n")
		}
		block := fmt.Sprintf(hermesToolsPrompt, defs.String())
		if len(msgs) > 0 && msgs[0].Role == chat.RoleSystem {
			sys := msgs[0]
			sys.Content = strings.TrimRight(sys.Content, "\n") + "\n\n" + block
			out = append(out, sys)
			msgs = msgs[1:]
		} else {
			out = append(out, chat.Message{Role: chat.RoleSystem, Content: block})
		}
	}
	for _, m := range msgs {
		switch {
		case m.Role == chat.RoleAssistant && len(m.ToolCalls) > 0:
			var b strings.Builder
			b.WriteString(m.Content)
			for _, c := range m.ToolCalls {
				call, err := hermesCall(c)
				if err != nil {
					return nil, err
				}
				if b.Len() > 0 {
					b.WriteByte('\n')
				}
				b.WriteString("<tool_call>\n" + call + "\n</tool_call>")
			}
			out = append(out, chat.Message{Role: chat.RoleAssistant, Content: b.String()})
		case m.Role == chat.RoleTool:
			resp := "<tool_response>\n" + m.Content + "\n</tool_response>"
			// Consecutive results share one user message, as Qwen's
			// templates do.
			if n := len(out); n > 0 && out[n-1].Role == chat.RoleUser && strings.HasSuffix(out[n-1].Content, "</tool_response>") {
				out[n-1].Content += "\n" + resp
				continue
			}
			out = append(out, chat.Message{Role: chat.RoleUser, Content: resp})
		default:
			out = append(out, m)
		}
	}
	return out, nil
}

// hermesCall writes a call as {"name": …, "arguments": {…}}; arguments
// that are not a JSON object are kept as a JSON string.
func hermesCall(c chat.ToolCall) (string, error) {
	var args json.RawMessage
	if a := strings.TrimSpace(c.Function.Arguments); a != "" && json.Valid([]byte(a)) {
		args = json.RawMessage(a)
	} else {
		b, _ := marshalNoEscape(c.Function.Arguments) // a string always encodes
		args = json.RawMessage(b)
	}
	b, err := marshalNoEscape(struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}{c.Function.Name, args})
	if err != nil {
		return "", fmt.Errorf("tool call %q: %w", c.Function.Name, err)
	}
	return b, nil
}

// marshalNoEscape is json.Marshal without HTML escaping, so code such as
// "a < b" reaches the model as written.
func marshalNoEscape(v any) (string, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}
