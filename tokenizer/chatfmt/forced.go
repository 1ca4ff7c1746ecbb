package chatfmt

import (
	"bytes"
	"encoding/json"
)

// ToolCallPrefix returns the text a model of syntax s writes to open a tool
// call, exactly as its chat template renders a call in the history: through
// the arguments' key when name is set (a call of that function), through the
// name's key when name is empty (a call of a function the model picks). The
// gateway appends it to the rendered prompt to enforce tool_choice: the model
// continues from inside the call, and the parser, fed the prefix first, sees
// the whole call.
//
//	Hermes (Qwen):  <tool_call>\n{"name": "NAME", "arguments":
//	Llama 3.1 JSON: {"name": "NAME", "parameters":
//
// The prefix ends right after a colon, not after the space the template
// writes next: byte-level BPE tokenisers attach that space to the following
// token (` "`, ` {`), so a prefix ending in a bare space would make the model
// continue in a tokenisation it never saw in training. ok is false for
// SyntaxPlain (no tool-call syntax to force).
func ToolCallPrefix(s Syntax, name string) (prefix string, ok bool) {
	var open, argsKey string
	switch s {
	case SyntaxHermes:
		open, argsKey = toolCallOpen+"\n", "arguments"
	case SyntaxLlama3:
		open, argsKey = "", "parameters"
	default:
		return "", false
	}
	if name == "" {
		return open + `{"name":`, true
	}
	return open + `{"name": ` + jsonString(name) + `, "` + argsKey + `":`, true
}

// jsonString quotes s as the templates write a name: JSON, without escaping
// <, > and & (json.Marshal's HTML escaping would change names the template
// writes verbatim).
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}
