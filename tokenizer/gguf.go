package tokenizer

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/clawrl/clawrl/gguf"
)

// A GGUF file carries its tokenizer as metadata (tokenizer.ggml.*): the
// tokens in id order, their types, the merges, and the name of the
// pre-tokenizer llama.cpp hard-codes for the family. FromGGUF assembles the
// equivalent tokenizer.json model and builds it with the same code as Load,
// so there is one BPE.

// GGUF token types (llama.cpp's llama_token_type).
const (
	ggufTokenNormal      = 1
	ggufTokenUnknown     = 2
	ggufTokenControl     = 3
	ggufTokenUserDefined = 4
)

// Split patterns of llama.cpp's BPE pre-tokenizers (llama-vocab.cpp), in the
// spelling tokenizer.json uses (llama.cpp rewrites (?i:…) by hand; the
// meaning is the same).
const gpt2Split = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)`

// ggufPreTokenizers maps tokenizer.ggml.pre to the tokenizer.json
// pre_tokenizer llama.cpp's regex list amounts to: each regex splits the
// pieces the previous one made, keeping matches and gaps (Split, Isolated).
var ggufPreTokenizers = func() map[string]string {
	split := func(pattern string) string {
		p, _ := json.Marshal(pattern)
		return `{"type":"Split","pattern":{"Regex":` + string(p) + `},"behavior":"Isolated","invert":false}`
	}
	seq := func(steps ...string) string {
		return `{"type":"Sequence","pretokenizers":[` + strings.Join(steps, ",") + `]}`
	}
	byteLevel := func(useRegex bool) string {
		return fmt.Sprintf(`{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":%v}`, useRegex)
	}
	llama3 := seq(split(llama3Pattern), byteLevel(false))
	qwen2 := seq(split(qwenPattern), byteLevel(false))
	digits := seq(split(`\p{N}`), split(gpt2Split), byteLevel(false))
	gpt2 := seq(split(gpt2Split), byteLevel(false))
	m := map[string]string{
		"llama3": llama3, "llama-v3": llama3, "llama-bpe": llama3, "dbrx": llama3, "smaug-bpe": llama3,
		"qwen2": qwen2, "stablelm2": qwen2, "deepseek-r1-qwen": qwen2, "hunyuan": qwen2,
		"smollm": digits, "starcoder": digits, "refact": digits, "command-r": digits, "codeshell": digits, "exaone": digits, "minerva": digits,
		"gpt-2": gpt2, "gpt2": gpt2, "mpt": gpt2, "olmo": gpt2, "jais": gpt2, "trillion": gpt2,
		// llama.cpp's fallback for files that name no pre-tokenizer.
		"default": seq(split(`[\p{P}\$\+<=>\^~\|]+`), split(gpt2Split), split(`\p{N}+`), split(`[0-9][0-9][0-9]`), byteLevel(false)),
	}
	return m
}()

// ggufIgnoreMerges are the pre-tokenizers llama.cpp loads with
// ignore_merges (llama-vocab.cpp: the LLAMA3 pre-type).
var ggufIgnoreMerges = map[string]bool{"llama3": true, "llama-v3": true, "llama-bpe": true}

// FromGGUF builds the tokenizer a GGUF file's metadata describes. Only
// byte-level BPE vocabularies (tokenizer.ggml.model "gpt2") are supported:
// those of Llama 3, Qwen2/2.5/3, SmolLM and GPT-2-style models.
//
// Tokens typed control (and unknown) become special added tokens, typed
// user-defined become non-special added tokens, as transformers' GGUF
// loader does; both are matched whole in text, as llama.cpp does.
func FromGGUF(h *gguf.Header) (*Tokenizer, error) {
	model, _ := h.String("tokenizer.ggml.model")
	if model != "gpt2" {
		return nil, fmt.Errorf("tokenizer.ggml.model %q is not supported: want gpt2 (byte-level BPE)", model)
	}
	pre, ok := h.String("tokenizer.ggml.pre")
	if !ok {
		pre = "default"
	}
	preJSON, ok := ggufPreTokenizers[pre]
	if !ok {
		return nil, fmt.Errorf("tokenizer.ggml.pre %q is not supported: want llama-bpe, qwen2, smollm, gpt2 or another llama.cpp BPE pre-tokenizer clawrl knows", pre)
	}
	tokens, ok := h.Strings("tokenizer.ggml.tokens")
	if !ok || len(tokens) == 0 {
		return nil, fmt.Errorf("tokenizer.ggml.tokens: missing or not a string array")
	}
	if len(tokens) > 1<<24 {
		return nil, fmt.Errorf("tokenizer.ggml.tokens: %d tokens is implausible", len(tokens))
	}
	types, ok := h.Ints("tokenizer.ggml.token_type")
	if !ok {
		types = make([]int64, len(tokens))
		for i := range types {
			types[i] = ggufTokenNormal
		}
	}
	if len(types) != len(tokens) {
		return nil, fmt.Errorf("tokenizer.ggml.token_type has %d entries for %d tokens", len(types), len(tokens))
	}
	merges, ok := h.Strings("tokenizer.ggml.merges")
	if !ok {
		return nil, fmt.Errorf("tokenizer.ggml.merges: missing or not a string array (byte-level BPE needs merges)")
	}

	f := &fileJSON{PreTokenizer: json.RawMessage(preJSON), Decoder: json.RawMessage(`{"type":"ByteLevel"}`)}
	f.Model.Type = "BPE"
	// llama.cpp takes a word that is itself a token whole for these, as
	// Llama 3's tokenizer.json says with ignore_merges.
	f.Model.IgnoreMerges = ggufIgnoreMerges[pre]
	f.Model.Vocab = make(map[string]int32, len(tokens))
	alphabet := byteRuneSet()
	for id, tok := range tokens {
		added := types[id] == ggufTokenControl || types[id] == ggufTokenUserDefined || types[id] == ggufTokenUnknown
		if !added && !inAlphabet(tok, alphabet) {
			// A token the converter left in plain text: spell its bytes
			// the byte-level way, as transformers' GGUF loader does.
			tok = byteLevelSpell(tok)
		}
		if _, dup := f.Model.Vocab[tok]; dup {
			slog.Warn("GGUF tokenizer: duplicate token; the later id wins", "token", tok, "id", id)
		}
		f.Model.Vocab[tok] = int32(id)
		if added && tok != "" {
			f.AddedTokens = append(f.AddedTokens, addedTokenJSON{ID: int32(id), Content: tok, Special: types[id] != ggufTokenUserDefined})
		}
	}
	f.mergePairs = make([][2]string, len(merges))
	for i, m := range merges {
		left, right, ok := strings.Cut(m, " ")
		if !ok || strings.Contains(right, " ") {
			return nil, fmt.Errorf("tokenizer.ggml.merges[%d] %q: want two tokens separated by one space", i, m)
		}
		f.mergePairs[i] = [2]string{left, right}
	}
	t, err := fromFile(f)
	if err != nil {
		return nil, fmt.Errorf("GGUF tokenizer: %w", err)
	}
	return t, nil
}

func byteRuneSet() map[rune]bool {
	set := make(map[rune]bool, 256)
	for _, r := range byteRunes() {
		set[r] = true
	}
	return set
}

func inAlphabet(s string, alphabet map[rune]bool) bool {
	for _, r := range s {
		if !alphabet[r] {
			return false
		}
	}
	return true
}

func byteLevelSpell(s string) string {
	runes := byteRunes()
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteRune(runes[s[i]])
	}
	return b.String()
}
