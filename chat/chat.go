// Package chat holds the plain domain types of a conversation — messages, tool
// definitions and tool calls — shared by every layer of clawrl. It depends on
// nothing, so the tokenizer's chat templates, the engines, the session matcher,
// the store and the HTTP gateway all speak the same types.
package chat

import "encoding/json"

// Roles a message may have.
const (
	RoleSystem    = "system"
	RoleDeveloper = "developer"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one message of a conversation with its content already flattened
// to text (content-part arrays are joined by the gateway).
type Message struct {
	Role             string     `json:"role"`
	Content          string     `json:"content"`
	ReasoningContent string     `json:"reasoning_content,omitempty"`
	ToolCalls        []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string     `json:"tool_call_id,omitempty"`
	Name             string     `json:"name,omitempty"`
	// ContentNull records that the client sent "content": null (OpenClaw does
	// for tool-call rounds). Chat templates get "" for it, as vLLM and SGLang
	// pass it: transformers drops None-valued keys, and Qwen3's template then
	// fails on the missing content.
	ContentNull bool `json:"content_null,omitempty"`
}

// ToolCall is a call the assistant made.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"` // "function"
	Function FunctionCall `json:"function"`
}

// FunctionCall names a function and carries its JSON arguments as text, as
// OpenAI's wire format does.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Tool is a tool definition offered to the model.
type Tool struct {
	Type     string      `json:"type"` // "function"
	Function FunctionDef `json:"function"`
}

// FunctionDef describes a callable function; Parameters is a JSON schema kept
// verbatim so templates render it exactly as the client sent it.
type FunctionDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

// RenderOptions control chat template rendering (what the templates' variables beyond messages and tools say).
type RenderOptions struct {
	AddGenerationPrompt bool
	// EnableThinking is passed to templates that read it (Qwen3); nil leaves
	// the template's default.
	EnableThinking *bool
}

// Delta is what a piece of generated text added to the message.
type Delta struct {
	Content   string
	Reasoning string
	ToolCalls []ToolCallDelta
}

// ToolCallDelta is a streamed fragment of a tool call: the first fragment of
// a call carries its Index, ID and Name; later ones add argument text.
type ToolCallDelta struct {
	Index     int
	ID        string
	Name      string
	Arguments string
}
