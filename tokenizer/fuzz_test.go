package tokenizer_test

import (
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/clawrl/clawrl/tokenizer"
	"golang.org/x/text/unicode/norm"
	"golang.org/x/text/unicode/rangetable"
)

var unicode9 = rangetable.Assigned("9.0.0")

// miniTokenizerJSON is a tiny but complete byte-level BPE tokenizer.json:
// the 256 byte tokens, a few merges in both syntaxes, an added token.
func miniTokenizerJSON() []byte {
	vocab := map[string]int{}
	var alphabet []rune
	for b := '!'; b <= '~'; b++ {
		alphabet = append(alphabet, b)
	}
	for b := '¡'; b <= '¬'; b++ {
		alphabet = append(alphabet, b)
	}
	for b := '®'; b <= 'ÿ'; b++ {
		alphabet = append(alphabet, b)
	}
	for r := rune(256); r < 256+68; r++ {
		alphabet = append(alphabet, r)
	}
	for i, r := range alphabet {
		vocab[string(r)] = i
	}
	for _, tok := range []string{"he", "ll", "hell", "hello", "Ġw", "Ġwo"} {
		vocab[tok] = len(vocab)
	}
	doc := map[string]any{
		"version":    "1.0",
		"normalizer": map[string]any{"type": "NFC"},
		"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": `\s+|\w+|[^\s\w]+`}, "behavior": "Isolated", "invert": false},
			map[string]any{"type": "ByteLevel", "add_prefix_space": false, "use_regex": false},
		}},
		"decoder": map[string]any{"type": "ByteLevel"},
		"added_tokens": []any{
			map[string]any{"id": len(vocab), "content": "<|end|>", "special": true, "lstrip": false, "rstrip": false, "normalized": false, "single_word": false},
		},
		"model": map[string]any{"type": "BPE", "vocab": vocab, "ignore_merges": false,
			"merges": []any{"h e", []string{"l", "l"}, "he ll", []string{"hell", "o"}, "Ġ w", "Ġw o"}},
	}
	data, err := json.Marshal(doc)
	if err != nil {
		panic(err)
	}
	return data
}

// FuzzFromJSON: parsing never panics on garbage, and whatever parses can
// encode and decode without panicking.
func FuzzFromJSON(f *testing.F) {
	mini := miniTokenizerJSON()
	f.Add(mini)
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{"a":0},"merges":["a a"]},"pre_tokenizer":{"type":"ByteLevel"},"decoder":{"type":"ByteLevel"}}`))
	f.Add([]byte(`{"model":{"vocab":{"a":-1}},"pre_tokenizer":{"type":"ByteLevel"},"decoder":{"type":"ByteLevel"}}`))
	f.Add([]byte(`{"model":{"vocab":{"a":2000000000}},"pre_tokenizer":{"type":"ByteLevel"},"decoder":{"type":"ByteLevel"}}`))
	f.Add([]byte(`{"added_tokens":[{"id":5,"content":""}],"model":{"vocab":{"a":0}},"pre_tokenizer":{"type":"Split","pattern":{"Regex":"("}},"decoder":null}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tok, err := tokenizer.FromJSON(data)
		if err != nil {
			return
		}
		ids := tok.Encode("hello world <|end|> héllo\n\n 123 \xff")
		tok.Decode(ids)
		tok.DecodeSkipSpecial(append(ids, -1, 1<<30))
		d := tok.NewDecoder()
		for _, id := range ids {
			d.Add(id)
		}
		d.Flush()
	})
}

// FuzzRoundTrip: decoding what Encode produced gives the text back. With
// Llama 3 (no normalizer) that is the text itself; with Qwen it is the
// text in NFC (as Hugging Face computes it, with Unicode 9.0 data), since
// Qwen normalizes before splitting — the pieces between added tokens are
// normalized separately, which equals normalizing the whole because every
// added token starts with '<' and ends with '>', which nothing composes
// with. Invalid UTF-8 is left out: Encode keeps its bytes,
// but Decode replaces them with U+FFFD, as Hugging Face does.
func FuzzRoundTrip(f *testing.F) {
	for _, s := range parityCorpus(60) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		for _, name := range []string{"qwen3", "llama3"} {
			tok := realTokenizer(t, name).tok
			want := s
			if name == "qwen3" {
				want = tok.NormalizeForTest(s)
				if want != norm.NFC.String(s) && !strings.ContainsFunc(s, func(r rune) bool { return r > 0x7f && !unicode.Is(unicode9, r) }) {
					t.Fatalf("normalizing %q gave %q, not NFC %q, though it holds no code point newer than Unicode 9.0", s, want, norm.NFC.String(s))
				}
			}
			if got := tok.Decode(tok.Encode(s)); got != want {
				t.Fatalf("%s: Decode(Encode(%q)) = %q, want %q", name, s, got, want)
			}
		}
	})
}

// FuzzStreamDecoder: what the incremental decoder releases, concatenated,
// is exactly Decode of all ids, each piece is valid UTF-8, and this holds
// with special tokens skipped too.
func FuzzStreamDecoder(f *testing.F) {
	f.Add([]byte{0xF0, 0, 0, 0, 0x9F, 0, 0, 0}, false)
	f.Add([]byte{0x2C, 0x50, 0x02, 0x00, 0x41, 0, 0, 0}, true)
	f.Fuzz(func(t *testing.T, data []byte, skip bool) {
		tok := realTokenizer(t, "qwen3").tok
		var ids []int32
		for len(data) >= 4 {
			v := binary.LittleEndian.Uint32(data)
			data = data[4:]
			// Mostly single bytes and added tokens, where the edge cases are.
			switch v % 3 {
			case 0:
				ids = append(ids, int32(v>>2)%256)
			case 1:
				ids = append(ids, int32(tok.VocabSize())-1-int32(v>>2)%32)
			default:
				ids = append(ids, int32(v>>2)%int32(tok.VocabSize()+10))
			}
		}
		d, want := tok.NewDecoder(), tok.Decode(ids)
		if skip {
			d, want = tok.NewDecoderSkipSpecial(), tok.DecodeSkipSpecial(ids)
		}
		var got []byte
		for _, id := range ids {
			piece := d.Add(id)
			if !utf8.ValidString(piece) {
				t.Fatalf("Add(%d) released invalid UTF-8 %q", id, piece)
			}
			got = append(got, piece...)
		}
		got = append(got, d.Flush()...)
		if string(got) != want {
			t.Fatalf("ids %v: stream %q, Decode %q", ids, got, want)
		}
	})
}
