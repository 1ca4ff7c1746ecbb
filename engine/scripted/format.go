package scripted

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
)

// Token ids: 0–255 are raw bytes; the special tokens follow. A byte-level
// vocabulary means any text round-trips exactly and the incremental decoder
// has real work to do (multi-byte runes arrive one byte at a time).
const (
	IDEndOfText int32 = 256 + iota
	IDImStart
	IDImEnd
	IDThinkStart
	IDThinkEnd
	IDToolCallStart
	IDToolCallEnd
	vocabSize
)

var specials = []struct {
	id   int32
	text string
}{
	{IDEndOfText, "<|endoftext|>"},
	{IDImStart, "<|im_start|>"},
	{IDImEnd, "<|im_end|>"},
	{IDThinkStart, "<think>"},
	{IDThinkEnd, "</think>"},
	{IDToolCallStart, "<tool_call>"},
	{IDToolCallEnd, "</tool_call>"},
}

// Format is the scripted engine's tokenizer and ChatML-style template (the
// shape of Qwen's, so the gateway sees the same kinds of markup a real model
// emits).
type Format struct{}

var _ engine.Format = Format{}

// Encode maps special-token strings to their ids and every other byte to
// itself.
func (Format) Encode(text string) []int32 {
	ids := make([]int32, 0, len(text))
	for i := 0; i < len(text); {
		matched := false
		if text[i] == '<' {
			for _, s := range specials {
				if strings.HasPrefix(text[i:], s.text) {
					ids = append(ids, s.id)
					i += len(s.text)
					matched = true
					break
				}
			}
		}
		if !matched {
			ids = append(ids, int32(text[i]))
			i++
		}
	}
	return ids
}

// tokenBytes is the text of one token; ids outside the vocabulary decode to
// nothing.
func tokenBytes(id int32) string {
	if id >= 0 && id < 256 {
		return string([]byte{byte(id)})
	}
	for _, s := range specials {
		if s.id == id {
			return s.text
		}
	}
	return ""
}

// Decode concatenates the tokens' bytes.
func (Format) Decode(ids []int32) string {
	var b strings.Builder
	for _, id := range ids {
		b.WriteString(tokenBytes(id))
	}
	return b.String()
}

// StopIDs end an assistant turn.
func (Format) StopIDs() []int32 { return []int32{IDImEnd, IDEndOfText} }

// NewDecoder returns a decoder that holds back incomplete UTF-8 sequences.
func (Format) NewDecoder() engine.Decoder { return &decoder{} }

type decoder struct{ pending []byte }

func (d *decoder) Add(id int32) string {
	d.pending = append(d.pending, tokenBytes(id)...)
	// Release everything up to the last rune start if what follows it is an
	// incomplete (but still possibly valid) rune.
	cut := len(d.pending)
	for back := 1; back <= utf8.UTFMax && back <= len(d.pending); back++ {
		c := d.pending[len(d.pending)-back]
		if utf8.RuneStart(c) {
			if !utf8.FullRune(d.pending[len(d.pending)-back:]) {
				cut = len(d.pending) - back
			}
			break
		}
	}
	out := string(d.pending[:cut])
	d.pending = append(d.pending[:0], d.pending[cut:]...)
	return out
}

func (d *decoder) Flush() string {
	out := string(d.pending)
	d.pending = d.pending[:0]
	return out
}

// Render renders ChatML: one <|im_start|>role … <|im_end|> block per
// message, tools described in the system block, reasoning in <think>, tool
// calls as <tool_call>{"name":…,"arguments":…}</tool_call>.
func (Format) Render(msgs []chat.Message, tools []chat.Tool, opts engine.RenderOptions) (string, error) {
	var b strings.Builder
	rest := msgs
	if len(tools) > 0 {
		b.WriteString("<|im_start|>system\n")
		if len(msgs) > 0 && (msgs[0].Role == chat.RoleSystem || msgs[0].Role == chat.RoleDeveloper) {
			b.WriteString(msgs[0].Content)
			b.WriteString("\n\n")
			rest = msgs[1:]
		}
		b.WriteString("# Tools\n")
		for _, t := range tools {
			js, err := json.Marshal(t)
			if err != nil {
				return "", fmt.Errorf("render tool %q: %w", t.Function.Name, err)
			}
			b.Write(js)
			b.WriteByte('\n')
		}
		b.WriteString("<|im_end|>\n")
	}
	for i, m := range rest {
		switch m.Role {
		case chat.RoleSystem, chat.RoleDeveloper, chat.RoleUser, chat.RoleTool:
			fmt.Fprintf(&b, "<|im_start|>%s\n%s<|im_end|>\n", m.Role, m.Content)
		case chat.RoleAssistant:
			b.WriteString("<|im_start|>assistant\n")
			if m.ReasoningContent != "" {
				fmt.Fprintf(&b, "<think>\n%s\n</think>\n\n", m.ReasoningContent)
			}
			b.WriteString(m.Content)
			for _, tc := range m.ToolCalls {
				args := tc.Function.Arguments
				if args == "" {
					args = "{}"
				}
				name, _ := json.Marshal(tc.Function.Name)
				fmt.Fprintf(&b, "<tool_call>{\"name\":%s,\"arguments\":%s}</tool_call>", name, args)
			}
			b.WriteString("<|im_end|>\n")
		default:
			return "", fmt.Errorf("render message %d: unknown role %q", i, m.Role)
		}
	}
	if opts.AddGenerationPrompt {
		b.WriteString("<|im_start|>assistant\n")
	}
	return b.String(), nil
}

// ToolCallPrefix opens a call as Render writes one (compact JSON):
// <tool_call>{"name": through the name's key, or through "arguments": for a
// named function.
func (Format) ToolCallPrefix(name string) (string, bool) {
	if name == "" {
		return tagToolOpen + `{"name":`, true
	}
	nameJSON, err := json.Marshal(name)
	if err != nil {
		return "", false
	}
	return tagToolOpen + `{"name":` + string(nameJSON) + "," + argsKey, true
}

// NewParser returns the parser of this format's assistant markup.
func (Format) NewParser(tools []chat.Tool) engine.Parser { return &parser{} }
