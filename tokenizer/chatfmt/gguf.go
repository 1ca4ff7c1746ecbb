package chatfmt

import (
	"fmt"

	"github.com/clawrl/clawrl/gguf"
	"github.com/clawrl/clawrl/tokenizer/jinja"
)

// FromGGUF reads the chat template a GGUF file carries
// (tokenizer.chat_template, and tokenizer.chat_template.tool_use when
// present) with the special tokens transformers' GGUF loader exposes to it:
// bos_token, eos_token, unk_token and pad_token spelled from their ids.
func FromGGUF(h *gguf.Header) (*Template, error) {
	source, ok := h.String("tokenizer.chat_template")
	if !ok || source == "" {
		return nil, fmt.Errorf("chatfmt: the GGUF file has no tokenizer.chat_template")
	}
	tokens, _ := h.Strings("tokenizer.ggml.tokens")
	special := map[string]string{}
	for name, key := range map[string]string{
		"bos_token": "tokenizer.ggml.bos_token_id",
		"eos_token": "tokenizer.ggml.eos_token_id",
		"unk_token": "tokenizer.ggml.unknown_token_id",
		"pad_token": "tokenizer.ggml.padding_token_id",
	} {
		if id, ok := h.Uint(key); ok && id < uint64(len(tokens)) {
			special[name] = tokens[id]
		}
	}
	t, err := New(source, special)
	if err != nil {
		return nil, err
	}
	if tool, ok := h.String("tokenizer.chat_template.tool_use"); ok && tool != "" {
		if t.toolTmpl, err = jinja.Parse(tool, jinja.HFOptions()); err != nil {
			return nil, fmt.Errorf("chatfmt: compile tool_use chat template: %w", err)
		}
	}
	return t, nil
}
