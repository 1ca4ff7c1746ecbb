package native

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/gguf"
	"github.com/clawrl/clawrl/model"
	"github.com/clawrl/clawrl/tokenizer"
	"github.com/clawrl/clawrl/tokenizer/chatfmt"
)

// Format is a checkpoint's tokenizer and chat template, as engine.Format.
//
// Decoding drops special tokens (<|im_end|>, <|eot_id|>, …) the way
// transformers' skip_special_tokens does, so a stop token never reaches a
// client's text; markup the output parser needs (<think>, <tool_call>) is not
// special and stays.
type Format struct {
	tok     *tokenizer.Tokenizer
	tmpl    *chatfmt.Template
	syntax  chatfmt.Syntax
	stopIDs []int32
}

// LoadFormat reads tokenizer.json and tokenizer_config.json from dir, or
// the tokenizer and chat template in a GGUF file's metadata.
func LoadFormat(dir string, cfg *model.Config) (*Format, error) {
	if model.IsGGUF(dir) {
		return LoadGGUFFormat(dir, cfg)
	}
	tok, err := tokenizer.Load(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		return nil, err
	}
	tmpl, err := chatfmt.Load(dir)
	if err != nil {
		return nil, err
	}
	return NewFormat(tok, tmpl, cfg)
}

// LoadGGUFFormat reads the tokenizer and chat template of a GGUF file.
func LoadGGUFFormat(path string, cfg *model.Config) (*Format, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tok, err := tokenizer.FromGGUF(f.Header)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	tmpl, err := chatfmt.FromGGUF(f.Header)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return NewFormat(tok, tmpl, cfg)
}

// NewFormat assembles a Format. The stop ids are the config's eos_token_id
// list plus the template's eos token and the family's end-of-turn tokens.
func NewFormat(tok *tokenizer.Tokenizer, tmpl *chatfmt.Template, cfg *model.Config) (*Format, error) {
	f := &Format{tok: tok, tmpl: tmpl, syntax: chatfmt.DetectSyntax(tmpl.Source())}
	add := func(id int32) {
		for _, s := range f.stopIDs {
			if s == id {
				return
			}
		}
		f.stopIDs = append(f.stopIDs, id)
	}
	for _, id := range cfg.EOSTokenIDs {
		add(int32(id))
	}
	names := []string{"<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|end_of_text|>", "<|eom_id|>"}
	if eos, ok := tmpl.SpecialToken("eos_token"); ok {
		names = append(names, eos)
	}
	for _, name := range names {
		if id, ok := tok.TokenID(name); ok {
			add(id)
		}
	}
	if len(f.stopIDs) == 0 {
		return nil, fmt.Errorf("format: no end-of-turn token found in the tokenizer or config")
	}
	return f, nil
}

// Tokenizer is the underlying tokenizer.
func (f *Format) Tokenizer() *tokenizer.Tokenizer { return f.tok }

// Render renders a conversation with the chat template.
func (f *Format) Render(msgs []chat.Message, tools []chat.Tool, opts engine.RenderOptions) (string, error) {
	return f.tmpl.Render(msgs, tools, opts)
}

// Encode tokenises text, recognising special tokens (rendered templates
// contain them).
func (f *Format) Encode(text string) []int32 { return f.tok.Encode(text) }

// Decode turns ids into text without special tokens.
func (f *Format) Decode(ids []int32) string { return f.tok.DecodeSkipSpecial(ids) }

// NewDecoder returns a streaming decoder that matches Decode.
func (f *Format) NewDecoder() engine.Decoder { return f.tok.NewDecoderSkipSpecial() }

// NewParser returns an output parser for the syntax the chat template
// teaches (Hermes-style <tool_call> for Qwen, JSON calls for Llama 3).
func (f *Format) NewParser(tools []chat.Tool) engine.Parser {
	return chatfmt.NewParser(chatfmt.ParserOptions{Syntax: f.syntax})
}

// ToolCallPrefix is the opening of a tool call in the syntax the chat
// template teaches (chatfmt.ToolCallPrefix).
func (f *Format) ToolCallPrefix(name string) (string, bool) {
	return chatfmt.ToolCallPrefix(f.syntax, name)
}

// StopIDs are the tokens that end a turn.
func (f *Format) StopIDs() []int32 { return f.stopIDs }

func modelIDFromDir(dir string) string {
	base := filepath.Base(filepath.Clean(dir))
	base = strings.TrimSuffix(base, ".gguf")
	if base == "." || base == string(filepath.Separator) {
		return "clawrl"
	}
	return strings.ToLower(base)
}

var (
	_ engine.Format = (*Format)(nil)
	_ engine.Parser = (*chatfmt.Parser)(nil)
)
