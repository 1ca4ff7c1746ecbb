// Package tokenizer reads Hugging Face tokenizer.json files of byte-level BPE
// models (Qwen2, Qwen2.5, Qwen3, Llama 3, GPT-2 style) and encodes and decodes
// text exactly as the Rust `tokenizers` library does, in pure Go.
//
// The pipeline mirrors tokenizers': added tokens (special and not) are cut
// out of the raw text first, then each remaining piece is normalized (NFC for
// Qwen), split into words by the pre-tokenizer (the model's regex), and each
// word is merged by BPE over its bytes. Decoding maps tokens back to bytes and
// replaces invalid UTF-8 the way Rust's String::from_utf8_lossy does.
//
// Speed: the Qwen and Llama 3 split patterns run on a hand-written scanner
// (other patterns on regexp2), BPE merges through an open-addressing pair
// table with no allocation per merge, words are cached, and so is every long
// stretch of text between added tokens, so a system prompt resent each turn
// costs a hash lookup.
//
// Compatibility notes, all checked by the parity tests against tokenizers
// 0.23.3: NFC is computed with Unicode 9.0 data, as tokenizers does (code
// points assigned later pass through untouched); the Qwen and Llama 3 split patterns see the
// letters and numbers of Unicode 16.0, as tokenizers' Oniguruma does (other
// patterns, on regexp2, see Go's Unicode 15.0); added
// tokens get the ids tokenizers assigns when it loads a file. Supported:
// model BPE (merges as "a b" or ["a", "b"], ignore_merges, unk_token);
// normalizers NFC, NFD, NFKC, NFKD, Prepend, Replace (string), Sequence;
// pre-tokenizers Split (regex or string, every behavior, invert), ByteLevel
// (use_regex, add_prefix_space when it comes first), Sequence; decoder
// ByteLevel. Anything else is a load error, never a silent difference.
// post_processor, truncation and padding are ignored: Encode is
// encode(text, add_special_tokens=False), which is what a rendered chat
// template needs.
//
// The chat template lives in tokenizer/chatfmt; tokenizer/vocab holds real
// tokenizer files for the families clawrl creates.
package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"unicode/utf8"
)

// Tokenizer is a loaded tokenizer. It is safe for concurrent use.
type Tokenizer struct {
	model          bpe
	normalizer     normalizer // nil = none
	steps          []preTokenizer
	addPrefixSpace bool

	vocab      map[string]int32 // model tokens by their tokenizer.json string
	tokens     []string         // id → tokenizer.json string ("" = no such id)
	tokenBytes [][]byte         // id → the bytes it decodes to (nil = no such id)
	special    []bool           // id → an added token marked special

	added     map[string]int32 // added token content → id
	rawAdded  *addedMatcher    // added tokens matched in the raw text
	normAdded *addedMatcher    // added tokens matched after normalization
	maxID     int32

	segments segmentCache // tokens of long text stretches seen before
	scratch  sync.Pool    // *scratch buffers, one per encode in flight
}

// Load reads a tokenizer.json file.
func Load(path string) (*Tokenizer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load tokenizer: %w", err)
	}
	t, err := FromJSON(data)
	if err != nil {
		return nil, fmt.Errorf("load tokenizer %s: %w", path, err)
	}
	return t, nil
}

type fileJSON struct {
	AddedTokens  []addedTokenJSON `json:"added_tokens"`
	Normalizer   json.RawMessage  `json:"normalizer"`
	PreTokenizer json.RawMessage  `json:"pre_tokenizer"`
	Decoder      json.RawMessage  `json:"decoder"`
	Truncation   json.RawMessage  `json:"truncation"`
	Padding      json.RawMessage  `json:"padding"`
	Model        struct {
		Type                    string            `json:"type"`
		Vocab                   map[string]int32  `json:"vocab"`
		Merges                  []json.RawMessage `json:"merges"`
		IgnoreMerges            bool              `json:"ignore_merges"`
		UnkToken                *string           `json:"unk_token"`
		FuseUnk                 bool              `json:"fuse_unk"`
		ByteFallback            bool              `json:"byte_fallback"`
		Dropout                 *float64          `json:"dropout"`
		ContinuingSubwordPrefix *string           `json:"continuing_subword_prefix"`
		EndOfWordSuffix         *string           `json:"end_of_word_suffix"`
	} `json:"model"`
	// post_processor is ignored: Encode never adds special tokens (the chat
	// template writes them), like encode(add_special_tokens=False).

	// mergePairs, when set, replaces Model.Merges (a GGUF file's merges,
	// already split).
	mergePairs [][2]string
}

type addedTokenJSON struct {
	ID         int32  `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

// FromJSON parses the contents of a tokenizer.json file.
func FromJSON(data []byte) (*Tokenizer, error) {
	var f fileJSON
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("parse tokenizer.json: %w", err)
	}
	return fromFile(&f)
}

// fromFile builds a tokenizer from a parsed (or assembled) tokenizer.json.
func fromFile(f *fileJSON) (*Tokenizer, error) {
	m := &f.Model
	switch {
	case m.Type != "BPE" && m.Type != "":
		return nil, fmt.Errorf("model type %q: only BPE is supported", m.Type)
	case m.Dropout != nil && *m.Dropout != 0:
		return nil, fmt.Errorf("BPE dropout %v is not supported", *m.Dropout)
	case m.ContinuingSubwordPrefix != nil && *m.ContinuingSubwordPrefix != "":
		return nil, fmt.Errorf("BPE continuing_subword_prefix %q is not supported", *m.ContinuingSubwordPrefix)
	case m.EndOfWordSuffix != nil && *m.EndOfWordSuffix != "":
		return nil, fmt.Errorf("BPE end_of_word_suffix %q is not supported", *m.EndOfWordSuffix)
	case m.ByteFallback:
		return nil, fmt.Errorf("BPE byte_fallback is not supported (byte-level BPE needs none)")
	case len(m.Vocab) == 0:
		return nil, fmt.Errorf("BPE model has an empty vocab")
	}

	if !isNull(f.Truncation) || !isNull(f.Padding) {
		// Hugging Face would truncate or pad encodings; clawrl budgets the
		// context itself, so Encode always returns every token.
		slog.Warn("tokenizer.json: truncation and padding settings are ignored")
	}
	t := &Tokenizer{vocab: m.Vocab, added: make(map[string]int32)}
	var err error
	if t.normalizer, err = parseNormalizer(f.Normalizer); err != nil {
		return nil, err
	}
	var bl byteLevelConfig
	if t.steps, err = parsePreTokenizer(f.PreTokenizer, nil, &bl); err != nil {
		return nil, err
	}
	if !bl.present {
		return nil, fmt.Errorf("pre_tokenizer has no ByteLevel step: only byte-level BPE is supported")
	}
	t.addPrefixSpace = bl.addPrefixSpace
	if err := checkDecoder(f.Decoder); err != nil {
		return nil, err
	}

	// Added tokens get their ids the way tokenizers' AddedVocabulary assigns
	// them when it loads a file (the ids written in the file are only
	// checked, with a warning): a token already in the model vocab takes that
	// id, any other the next id after the vocab and the added tokens so far.
	// Duplicates and empty tokens are ignored.
	var addedTokens []addedTokenJSON
	nextID := int64(-1)
	for _, a := range f.AddedTokens {
		if a.Content == "" {
			continue
		}
		if _, dup := t.added[a.Content]; dup {
			continue
		}
		id, inVocab := m.Vocab[a.Content]
		if !inVocab {
			if nextID < 0 {
				nextID = int64(len(m.Vocab))
			}
			id = int32(nextID)
			nextID++
		}
		if id != a.ID {
			slog.Warn("tokenizer.json: added token id differs from the id tokenizers assigns; using the latter",
				"token", a.Content, "file_id", a.ID, "id", id)
		}
		a.ID = id
		t.added[a.Content] = id
		addedTokens = append(addedTokens, a)
	}
	f.AddedTokens = addedTokens

	// Guard the id range so a hostile file cannot make us allocate gigabytes.
	limit := int64(len(m.Vocab)+len(f.AddedTokens))*4 + 1024
	t.maxID = -1
	for tok, id := range m.Vocab {
		if id < 0 || int64(id) >= limit {
			return nil, fmt.Errorf("vocab token %q has id %d, out of range", tok, id)
		}
		t.maxID = max(t.maxID, id)
	}
	for _, a := range f.AddedTokens {
		if a.ID < 0 || int64(a.ID) >= limit {
			return nil, fmt.Errorf("added token %q has id %d, out of range", a.Content, a.ID)
		}
		t.maxID = max(t.maxID, a.ID)
	}
	n := int(t.maxID) + 1
	t.tokens = make([]string, n)
	t.tokenBytes = make([][]byte, n)
	t.special = make([]bool, n)
	bytesTable := newRuneByteTable()
	t.model.wordID = make(map[string]int32, len(m.Vocab))
	for tok, id := range m.Vocab {
		t.tokens[id] = tok
		b, ok := bytesTable.byteLevelDecode(tok)
		if ok {
			t.model.wordID[string(b)] = id
		} else {
			b = []byte(tok)
		}
		t.tokenBytes[id] = b
	}
	for _, a := range f.AddedTokens {
		t.tokens[a.ID] = a.Content
		if b, ok := bytesTable.byteLevelDecode(a.Content); ok {
			t.tokenBytes[a.ID] = b
		} else {
			t.tokenBytes[a.ID] = []byte(a.Content)
		}
		t.special[a.ID] = a.Special
	}

	// The model.
	t.model.ignoreMerges = m.IgnoreMerges
	t.model.unk = -1
	if m.UnkToken != nil {
		id, ok := m.Vocab[*m.UnkToken]
		if !ok {
			return nil, fmt.Errorf("unk_token %q is not in the vocab", *m.UnkToken)
		}
		t.model.unk = id
	}
	t.model.fuseUnk = m.FuseUnk
	for b, r := range byteRunes() {
		id, ok := m.Vocab[string(r)]
		if !ok {
			id = -1
		}
		t.model.byteID[b] = id
	}
	nMerges := len(m.Merges)
	if f.mergePairs != nil {
		nMerges = len(f.mergePairs)
	}
	t.model.merges = newMergeTable(nMerges)
	for rank := range nMerges {
		var left, right string
		if f.mergePairs != nil {
			left, right = f.mergePairs[rank][0], f.mergePairs[rank][1]
		} else {
			var err error
			if left, right, err = parseMerge(m.Merges[rank]); err != nil {
				return nil, fmt.Errorf("merges[%d]: %w", rank, err)
			}
		}
		l, ok1 := m.Vocab[left]
		r, ok2 := m.Vocab[right]
		merged, ok3 := m.Vocab[left+right]
		if !ok1 || !ok2 || !ok3 {
			return nil, fmt.Errorf("merges[%d] %q %q: token not in the vocab", rank, left, right)
		}
		t.model.merges.put(l, r, int32(rank), merged)
	}

	// Added tokens, split by where tokenizers matches them.
	var raw, normalized []addedToken
	for _, a := range f.AddedTokens {
		tok := addedToken{id: a.ID, content: a.Content, singleWord: a.SingleWord, lstrip: a.LStrip, rstrip: a.RStrip, special: a.Special}
		if a.Normalized {
			if t.normalizer != nil {
				tok.content = t.normalizer.normalize(tok.content)
			}
			if tok.content != "" {
				normalized = append(normalized, tok)
			}
		} else {
			raw = append(raw, tok)
		}
	}
	t.rawAdded = newAddedMatcher(raw)
	t.normAdded = newAddedMatcher(normalized)
	return t, nil
}

// parseMerge reads one merge, "a b" (older files) or ["a", "b"] (newer
// files, which allow spaces inside tokens).
func parseMerge(raw json.RawMessage) (string, string, error) {
	// Fast path: a quarter of a million merges go through here at load time,
	// and nearly all are plain strings without escapes.
	if left, right, ok := parseMergeFast(raw); ok {
		return left, right, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		left, right, ok := strings.Cut(s, " ")
		if !ok || strings.Contains(right, " ") {
			return "", "", fmt.Errorf("merge %q: want two tokens separated by one space", s)
		}
		return left, right, nil
	}
	var pair []string
	if err := json.Unmarshal(raw, &pair); err != nil || len(pair) != 2 {
		return "", "", fmt.Errorf("merge %s: want \"a b\" or [\"a\", \"b\"]", raw)
	}
	return pair[0], pair[1], nil
}

// parseMergeFast handles merges whose strings need no unescaping; ok is
// false for anything else, which the caller parses with encoding/json.
func parseMergeFast(raw []byte) (left, right string, ok bool) {
	plain := func(b []byte) bool {
		for _, c := range b {
			if c == '\\' || c == '"' || c < 0x20 {
				return false
			}
		}
		return utf8.Valid(b)
	}
	switch {
	case len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"':
		body := raw[1 : len(raw)-1]
		if !plain(body) {
			return "", "", false
		}
		l, r, found := strings.Cut(string(body), " ")
		if !found || strings.Contains(r, " ") {
			return "", "", false
		}
		return l, r, true
	case len(raw) >= 2 && raw[0] == '[':
		// ["a", "b"], with any JSON whitespace (tokenizers pretty-prints it).
		i := 1
		str := func() (string, bool) {
			for i < len(raw) && isJSONSpace(raw[i]) {
				i++
			}
			if i >= len(raw) || raw[i] != '"' {
				return "", false
			}
			start := i + 1
			end := bytes.IndexByte(raw[start:], '"')
			if end < 0 || !plain(raw[start:start+end]) {
				return "", false
			}
			i = start + end + 1
			for i < len(raw) && isJSONSpace(raw[i]) {
				i++
			}
			return string(raw[start : start+end]), true
		}
		l, ok1 := str()
		if !ok1 || i >= len(raw) || raw[i] != ',' {
			return "", "", false
		}
		i++
		r, ok2 := str()
		if !ok2 || i != len(raw)-1 || raw[i] != ']' {
			return "", "", false
		}
		return l, r, true
	}
	return "", "", false
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// checkDecoder accepts the ByteLevel decoder, alone or in a Sequence.
func checkDecoder(raw json.RawMessage) error {
	var d struct {
		Type     string            `json:"type"`
		Decoders []json.RawMessage `json:"decoders"`
	}
	if isNull(raw) {
		return fmt.Errorf("decoder: none; only the ByteLevel decoder is supported")
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return fmt.Errorf("decoder: %w", err)
	}
	switch {
	case d.Type == "ByteLevel":
		return nil
	case d.Type == "Sequence" && len(d.Decoders) == 1:
		return checkDecoder(d.Decoders[0])
	}
	return fmt.Errorf("decoder: unsupported type %q (only ByteLevel)", d.Type)
}

// VocabSize is one more than the highest token id, model and added tokens
// together: the number of embedding rows the ids need at least.
func (t *Tokenizer) VocabSize() int { return int(t.maxID) + 1 }

// TokenID returns the id of a token given by its tokenizer.json string
// (added tokens such as "<|im_end|>" by their content).
func (t *Tokenizer) TokenID(token string) (int32, bool) {
	if id, ok := t.added[token]; ok {
		return id, true
	}
	id, ok := t.vocab[token]
	return id, ok
}

// Token returns the tokenizer.json string of id (byte-level form for model
// tokens, e.g. "Ġhello"), or "" when there is no such id.
func (t *Tokenizer) Token(id int32) string {
	if id < 0 || int(id) >= len(t.tokens) {
		return ""
	}
	return t.tokens[id]
}

// TokenBytes returns the bytes id decodes to (for example for the "bytes"
// field of OpenAI logprobs), or nil when there is no such id. The slice is
// shared: do not modify it.
func (t *Tokenizer) TokenBytes(id int32) []byte {
	if id < 0 || int(id) >= len(t.tokenBytes) {
		return nil
	}
	return t.tokenBytes[id]
}

// IsSpecial reports whether id is an added token marked special (the ones
// Decode with skipSpecial drops: <|im_end|>, <|eot_id|>, …; not <think>).
func (t *Tokenizer) IsSpecial(id int32) bool {
	return id >= 0 && int(id) < len(t.special) && t.special[id]
}

// Encode tokenises text as Hugging Face's encode(text,
// add_special_tokens=False) does: added tokens in the text (<|im_start|>,
// <think>, <|eot_id|>…) become their ids, nothing is prepended or appended.
// Invalid UTF-8 is encoded byte by byte, so nothing is lost.
func (t *Tokenizer) Encode(text string) []int32 {
	return t.AppendEncode(make([]int32, 0, len(text)/3+4), text)
}

// AppendEncode appends the tokens of text to dst and returns it.
func (t *Tokenizer) AppendEncode(dst []int32, text string) []int32 {
	sc, _ := t.scratch.Get().(*scratch)
	if sc == nil {
		sc = new(scratch)
	}
	defer t.scratch.Put(sc)
	var segs [16]segment
	for _, seg := range t.rawAdded.split(segs[:0], text) {
		if seg.id >= 0 {
			dst = append(dst, seg.id)
			continue
		}
		piece := text[seg.start:seg.end]
		if ids, ok := t.segments.get(piece); ok {
			dst = append(dst, ids...)
			continue
		}
		start := len(dst)
		dst = t.encodeSegment(dst, piece, sc)
		t.segments.put(piece, dst[start:])
	}
	return dst
}

// encodeSegment encodes text between two added tokens of the raw text.
func (t *Tokenizer) encodeSegment(dst []int32, piece string, sc *scratch) []int32 {
	if t.normalizer != nil {
		piece = t.normalizer.normalize(piece)
	}
	if t.normAdded == nil {
		return t.encodePiece(dst, piece, sc)
	}
	var segs [16]segment
	for _, seg := range t.normAdded.split(segs[:0], piece) {
		if seg.id >= 0 {
			dst = append(dst, seg.id)
		} else {
			dst = t.encodePiece(dst, piece[seg.start:seg.end], sc)
		}
	}
	return dst
}

// encodePiece pre-tokenizes and BPE-encodes text that holds no added token.
func (t *Tokenizer) encodePiece(dst []int32, piece string, sc *scratch) []int32 {
	if piece == "" {
		return dst
	}
	if t.addPrefixSpace && piece[0] != ' ' {
		piece = " " + piece
	}
	words := append(sc.words[:0], span{0, len(piece)})
	for _, step := range t.steps {
		next := sc.words2[:0]
		for _, w := range words {
			k := len(next)
			next = step.split(next, piece[w.start:w.end])
			for i := k; i < len(next); i++ {
				next[i].start += w.start
				next[i].end += w.start
			}
		}
		words, sc.words2 = next, words
	}
	sc.words = words
	for _, w := range words {
		if w.end > w.start {
			dst = t.model.encodeWord(dst, piece[w.start:w.end], sc)
		}
	}
	return dst
}

// Decode turns ids into text, special tokens included (Hugging Face's
// decode(ids, skip_special_tokens=False)). Ids outside the vocabulary are
// dropped; byte sequences that are not valid UTF-8 become U+FFFD, one per
// maximal invalid subsequence, as in Rust's String::from_utf8_lossy.
func (t *Tokenizer) Decode(ids []int32) string { return t.decode(ids, false) }

// DecodeSkipSpecial is Decode without the special added tokens
// (skip_special_tokens=True).
func (t *Tokenizer) DecodeSkipSpecial(ids []int32) string { return t.decode(ids, true) }

func (t *Tokenizer) decode(ids []int32, skipSpecial bool) string {
	buf := make([]byte, 0, len(ids)*4)
	for _, id := range ids {
		if id < 0 || int(id) >= len(t.tokenBytes) || (skipSpecial && t.special[id]) {
			continue
		}
		buf = append(buf, t.tokenBytes[id]...)
	}
	if utf8.Valid(buf) {
		return string(buf)
	}
	out, _ := appendLossy(make([]byte, 0, len(buf)+8), buf, true)
	return string(out)
}
