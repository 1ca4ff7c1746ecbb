package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
)

// chatRequest is a decoded, validated chat completion request.
type chatRequest struct {
	Model          string
	Messages       []chat.Message
	Tools          []chat.Tool
	ToolChoice     string // auto, none, required or function
	ToolChoiceName string // the function tool_choice names (ToolChoice "function")
	Sampling       engine.Sampling
	// TemperatureSet and TopPSet say whether the client chose them; unset
	// ones take the model's defaults (withDefaultSampling).
	TemperatureSet bool
	TopPSet        bool
	MaxTokens      int // 0 = the server's default
	Stop           []string
	Logprobs       bool
	TopLogprobs    int
	User           string
	PromptCacheKey string
	SessionID      string
	TurnType       string
	Stream         bool
	IncludeUsage   bool
	EnableThinking *bool
}

// Limits on what one request may ask for.
const (
	maxStops       = 16
	maxTopLogprobs = 20
)

// decodeChatRequest parses and validates a chat completion request body.
// Every failure is a 400 in OpenAI's shape naming the parameter.
func decodeChatRequest(body []byte) (*chatRequest, *Error) {
	if !utf8.Valid(body) {
		// encoding/json would silently replace invalid bytes with U+FFFD,
		// and we would train on text the client never sent.
		return nil, badRequest("", "request body is not valid UTF-8")
	}
	var w wireRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&w); err != nil {
		return nil, jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, badRequest("", "request body has data after the JSON object")
	}
	req := &chatRequest{
		Model: w.Model, User: w.User, PromptCacheKey: w.PromptCacheKey, SessionID: w.SessionID,
		TurnType: w.TurnType, Stream: w.Stream, EnableThinking: w.ChatTemplateKwargs.EnableThinking,
	}
	if w.StreamOptions != nil {
		req.IncludeUsage = w.StreamOptions.IncludeUsage
	}
	if w.N != nil && *w.N != 1 {
		return nil, badRequest("n", "n = %d is not supported: clawrl returns one choice per request", *w.N)
	}
	if w.Temperature != nil {
		if *w.Temperature < 0 || *w.Temperature > 2 {
			return nil, badRequest("temperature", "temperature %v is outside [0, 2]", *w.Temperature)
		}
		req.Sampling.Temperature = *w.Temperature
		req.TemperatureSet = true
	}
	if w.TopP != nil {
		if *w.TopP <= 0 || *w.TopP > 1 {
			return nil, badRequest("top_p", "top_p %v is outside (0, 1]", *w.TopP)
		}
		req.Sampling.TopP = *w.TopP
		req.TopPSet = true
	}
	req.Sampling.Seed = w.Seed
	for _, mt := range []struct {
		name string
		v    *int
	}{{"max_tokens", w.MaxTokens}, {"max_completion_tokens", w.MaxCompletionTokens}} {
		if mt.v == nil {
			continue
		}
		if *mt.v < 1 {
			return nil, badRequest(mt.name, "%s = %d, want at least 1", mt.name, *mt.v)
		}
		// max_completion_tokens is the newer name and wins when both are set.
		req.MaxTokens = *mt.v
	}
	if w.Logprobs != nil {
		req.Logprobs = *w.Logprobs
	}
	if w.TopLogprobs != nil {
		if *w.TopLogprobs < 0 || *w.TopLogprobs > maxTopLogprobs {
			return nil, badRequest("top_logprobs", "top_logprobs = %d is outside [0, %d]", *w.TopLogprobs, maxTopLogprobs)
		}
		if *w.TopLogprobs > 0 && !req.Logprobs {
			return nil, badRequest("top_logprobs", "top_logprobs needs logprobs: true")
		}
		req.TopLogprobs = *w.TopLogprobs
	}
	if err := decodeStop(w.Stop, req); err != nil {
		return nil, err
	}
	if len(w.Metadata) > 0 && !isJSONObjectOrNull(w.Metadata) {
		return nil, badRequest("metadata", "metadata must be an object")
	}
	if err := decodeTools(w.Tools, req); err != nil {
		return nil, err
	}
	if err := decodeToolChoice(w.ToolChoice, req); err != nil {
		return nil, err
	}
	if err := decodeMessages(w.Messages, req); err != nil {
		return nil, err
	}
	return req, nil
}

// jsonError turns a decoding error into a 400 naming the field when it can.
func jsonError(err error) *Error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		return badRequest(typeErr.Field, "%s: got a JSON %s, want %s", typeErr.Field, typeErr.Value, typeErr.Type)
	case errors.As(err, &syntaxErr):
		return badRequest("", "malformed JSON at byte %d: %v", syntaxErr.Offset, err)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("", "request body is empty or truncated JSON")
	}
	return badRequest("", "malformed request body: %v", err)
}

func isJSONObjectOrNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return bytes.Equal(t, []byte("null")) || (len(t) > 0 && t[0] == '{')
}

func decodeStop(raw json.RawMessage, req *chatRequest) *Error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		if one != "" {
			req.Stop = []string{one}
		}
		return nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return badRequest("stop", "stop must be a string or an array of strings")
	}
	if len(many) > maxStops {
		return badRequest("stop", "stop has %d strings, at most %d are allowed", len(many), maxStops)
	}
	for _, s := range many {
		if s != "" {
			req.Stop = append(req.Stop, s)
		}
	}
	return nil
}

func decodeTools(tools []wireTool, req *chatRequest) *Error {
	seen := map[string]bool{}
	for i, t := range tools {
		param := fmt.Sprintf("tools[%d]", i)
		if t.Type != "function" {
			return badRequest(param+".type", "tool type %q is not supported, want \"function\"", t.Type)
		}
		if t.Function.Name == "" {
			return badRequest(param+".function.name", "tool %d has no function name", i)
		}
		if seen[t.Function.Name] {
			return badRequest(param+".function.name", "tool %q is defined twice", t.Function.Name)
		}
		seen[t.Function.Name] = true
		if len(t.Function.Parameters) > 0 && !isJSONObjectOrNull(t.Function.Parameters) {
			return badRequest(param+".function.parameters", "tool %q: parameters must be a JSON schema object", t.Function.Name)
		}
		params := t.Function.Parameters
		if bytes.Equal(bytes.TrimSpace(params), []byte("null")) {
			params = nil
		}
		req.Tools = append(req.Tools, chat.Tool{Type: "function", Function: chat.FunctionDef{
			Name: t.Function.Name, Description: t.Function.Description, Parameters: params, Strict: t.Function.Strict,
		}})
	}
	return nil
}

func decodeToolChoice(raw json.RawMessage, req *chatRequest) *Error {
	raw = bytes.TrimSpace(raw)
	req.ToolChoice = "auto"
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	var mode string
	if err := json.Unmarshal(raw, &mode); err == nil {
		switch mode {
		case "auto", "none":
			req.ToolChoice = mode
			return nil
		case "required":
			if len(req.Tools) == 0 {
				return badRequest("tool_choice", "tool_choice \"required\" needs tools to call, and the request has none")
			}
			req.ToolChoice = mode
			return nil
		}
		return badRequest("tool_choice", "tool_choice %q: want auto, none, required or a function", mode)
	}
	var named struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &named); err != nil || named.Type != "function" || named.Function.Name == "" {
		return badRequest("tool_choice", "tool_choice must be a string or {\"type\":\"function\",\"function\":{\"name\":…}}")
	}
	for _, t := range req.Tools {
		if t.Function.Name == named.Function.Name {
			req.ToolChoice, req.ToolChoiceName = "function", named.Function.Name
			return nil
		}
	}
	return badRequest("tool_choice", "tool_choice names function %q, which is not among the tools", named.Function.Name)
}

// decodeContent flattens string, null or content-part array content.
func decodeContent(raw json.RawMessage, param string) (text string, null bool, e *Error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", true, nil
	}
	switch raw[0] {
	case '"':
		if err := json.Unmarshal(raw, &text); err != nil {
			return "", false, badRequest(param, "content: %v", err)
		}
		return text, false, nil
	case '[':
		var parts []wireContentPart
		if err := json.Unmarshal(raw, &parts); err != nil {
			return "", false, badRequest(param, "content parts: %v", err)
		}
		var b strings.Builder
		for i, p := range parts {
			switch p.Type {
			case "text", "input_text":
				if p.Text == nil {
					return "", false, badRequest(fmt.Sprintf("%s[%d].text", param, i), "text content part without text")
				}
				b.WriteString(*p.Text)
			default:
				return "", false, badRequest(fmt.Sprintf("%s[%d].type", param, i), "content part type %q is not supported (text only)", p.Type)
			}
		}
		return b.String(), false, nil
	}
	return "", false, badRequest(param, "content must be a string, null or an array of content parts")
}

func decodeMessages(msgs []wireMessage, req *chatRequest) *Error {
	if len(msgs) == 0 {
		return badRequest("messages", "messages must not be empty")
	}
	calls := map[string]bool{} // tool-call ids issued so far
	req.Messages = make([]chat.Message, 0, len(msgs))
	for i, w := range msgs {
		param := fmt.Sprintf("messages[%d]", i)
		m := chat.Message{Role: w.Role, Name: w.Name}
		var e *Error
		m.Content, m.ContentNull, e = decodeContent(w.Content, param+".content")
		if e != nil {
			return e
		}
		switch w.Role {
		case chat.RoleSystem, chat.RoleDeveloper, chat.RoleUser:
			if m.ContentNull {
				return badRequest(param+".content", "%s message %d has no content", w.Role, i)
			}
		case chat.RoleAssistant:
			if w.ReasoningContent != nil {
				m.ReasoningContent = *w.ReasoningContent
			}
			for j, tc := range w.ToolCalls {
				tparam := fmt.Sprintf("%s.tool_calls[%d]", param, j)
				if tc.Type != "" && tc.Type != "function" {
					return badRequest(tparam+".type", "tool call type %q, want \"function\"", tc.Type)
				}
				if tc.ID == "" {
					return badRequest(tparam+".id", "tool call without an id")
				}
				if tc.Function.Name == "" {
					return badRequest(tparam+".function.name", "tool call %q without a function name", tc.ID)
				}
				calls[tc.ID] = true
				m.ToolCalls = append(m.ToolCalls, chat.ToolCall{ID: tc.ID, Type: "function",
					Function: chat.FunctionCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments}})
			}
		case chat.RoleTool:
			if w.ToolCallID == "" {
				return badRequest(param+".tool_call_id", "tool message %d has no tool_call_id", i)
			}
			if !calls[w.ToolCallID] {
				return badRequest(param+".tool_call_id", "tool message %d answers tool call %q, which no earlier assistant message made", i, w.ToolCallID)
			}
			m.ToolCallID = w.ToolCallID
		case "":
			return badRequest(param+".role", "message %d has no role", i)
		default:
			return badRequest(param+".role", "message %d has unknown role %q (want system, developer, user, assistant or tool)", i, w.Role)
		}
		req.Messages = append(req.Messages, m)
	}
	return nil
}

// withDefaultSampling fills what the client left unset from the model's
// own sampling defaults (info.DefaultSampling), else the gateway's
// fallback. Top-k is not an OpenAI parameter: it always comes from the
// model.
func withDefaultSampling(req *chatRequest, info engine.Info) engine.Sampling {
	s := req.Sampling
	def := engine.Sampling{Temperature: engine.DefaultTemperature, TopP: engine.DefaultTopP}
	if info.DefaultSampling != nil {
		def = *info.DefaultSampling
	}
	if !req.TemperatureSet {
		s.Temperature = def.Temperature
	}
	if !req.TopPSet {
		s.TopP = def.TopP
	}
	if s.TopK == 0 {
		s.TopK = def.TopK
	}
	return s
}
