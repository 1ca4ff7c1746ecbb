package tokenizer_test

import (
	"fmt"
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/tokenizer"
)

// StreamDecoder is what the engine streams through.
var _ engine.Decoder = (*tokenizer.StreamDecoder)(nil)

// The expected ids come from Hugging Face tokenizers 0.23.3
// (encode(text, add_special_tokens=False)); TestParityHF checks thousands
// more live. These pin a few by hand so a failure here reads at a glance.
func TestEncodeKnown(t *testing.T) {
	tests := []struct {
		family, text string
		want         []int32
	}{
		{"qwen3", "Hello world", []int32{9707, 1879}},
		{"qwen3", "<|im_start|>user\nHi there!<|im_end|>\n", []int32{151644, 872, 198, 13048, 1052, 0, 151645, 198}},
		{"qwen3", "  def f(x):\n\treturn 12345", []int32{220, 707, 282, 2075, 982, 853, 220, 16, 17, 18, 19, 20}},
		{"qwen3", "你好，世界！ 😀", []int32{108386, 3837, 99489, 6313, 90316}},
		{"qwen3", "<think>\nok\n</think>\n\n", []int32{151667, 198, 562, 198, 151668, 271}},
		{"qwen3", "", nil},
		{"llama3", "Hello world", []int32{9906, 1917}},
		{"llama3", "<|im_start|>user\nHi there!<|im_end|>\n", []int32{27, 91, 318, 5011, 91, 29, 882, 198, 13347, 1070, 88032, 91, 318, 6345, 91, 397}},
		{"llama3", "  def f(x):\n\treturn 12345", []int32{220, 711, 282, 2120, 997, 862, 220, 4513, 1774}},
		{"llama3", "你好，世界！ 😀", []int32{57668, 53901, 3922, 102616, 6447, 91416}},
	}
	for _, tt := range tests {
		f := realTokenizer(t, tt.family)
		got := f.tok.Encode(tt.text)
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s Encode(%q) = %v, want %v", tt.family, tt.text, got, tt.want)
		}
		if back := f.tok.Decode(got); back != tt.text {
			t.Errorf("%s Decode(Encode(%q)) = %q", tt.family, tt.text, back)
		}
	}
}

func TestVocabularyAPI(t *testing.T) {
	tests := []struct {
		family    string
		vocabSize int
		token     string
		id        int32
		special   bool
	}{
		{"qwen3", 151669, "<|im_end|>", 151645, true},
		{"qwen3", 151669, "<think>", 151667, false},
		{"qwen3", 151669, "Hello", 9707, false},
		{"qwen3", 151669, "Ġworld", 1879, false},
		{"qwen2", 151665, "<|im_start|>", 151644, true},
		{"llama3", 128256, "<|eot_id|>", 128009, true},
		{"llama3", 128256, "<|begin_of_text|>", 128000, true},
	}
	for _, tt := range tests {
		tok := realTokenizer(t, tt.family).tok
		if got := tok.VocabSize(); got != tt.vocabSize {
			t.Errorf("%s VocabSize() = %d, want %d", tt.family, got, tt.vocabSize)
		}
		id, ok := tok.TokenID(tt.token)
		if !ok || id != tt.id {
			t.Errorf("%s TokenID(%q) = %d, %v; want %d", tt.family, tt.token, id, ok, tt.id)
		}
		if got := tok.Token(tt.id); got != tt.token {
			t.Errorf("%s Token(%d) = %q, want %q", tt.family, tt.id, got, tt.token)
		}
		if got := tok.IsSpecial(tt.id); got != tt.special {
			t.Errorf("%s IsSpecial(%d) = %v, want %v", tt.family, tt.id, got, tt.special)
		}
	}
	tok := realTokenizer(t, "qwen3").tok
	if _, ok := tok.TokenID("no such token"); ok {
		t.Error("TokenID(no such token) found something")
	}
	for _, id := range []int32{-1, 151669, 1 << 30} {
		if tok.Token(id) != "" || tok.TokenBytes(id) != nil || tok.IsSpecial(id) {
			t.Errorf("id %d out of range answered something", id)
		}
	}
	if got := string(tok.TokenBytes(1879)); got != " world" {
		t.Errorf("TokenBytes(1879) = %q, want \" world\"", got)
	}
}

func TestDecode(t *testing.T) {
	tok := realTokenizer(t, "qwen3").tok
	ids := tok.Encode("<|im_start|>assistant\n<think>\nhm\n</think>\n\nDone 😀<|im_end|>")
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"keep special", tok.Decode(ids), "<|im_start|>assistant\n<think>\nhm\n</think>\n\nDone 😀<|im_end|>"},
		// <think> is an added token but not special: it stays.
		{"skip special", tok.DecodeSkipSpecial(ids), "assistant\n<think>\nhm\n</think>\n\nDone 😀"},
		// 😀 is F0 9F 98 80: its first two bytes alone are one maximal
		// invalid subsequence, so one U+FFFD (Rust's from_utf8_lossy).
		{"truncated emoji", tok.Decode(append(tok.Encode("a"), byteTokens(t, tok, 0xF0, 0x9F)...)), "a\uFFFD"},
		{"stray continuation bytes", tok.Decode(byteTokens(t, tok, 0x98, 0x80, 'x')), "\uFFFD\uFFFDx"},
		{"out of range ids dropped", tok.Decode([]int32{-5, 9707, 1 << 30}), "Hello"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

// TestStreamDecoder feeds a text with multi-byte characters split across
// tokens one token at a time.
func TestStreamDecoder(t *testing.T) {
	tok := realTokenizer(t, "qwen3").tok
	for _, text := range []string{
		"😀😀 🇩🇪 你好世界 naïve <|im_end|> ok",
		"\U0001F9D1\U0001F3FF\u200D\U0001F4BB and 𨾶𩸽",
	} {
		ids := tok.Encode(text)
		for _, skip := range []bool{false, true} {
			d, want := tok.NewDecoder(), tok.Decode(ids)
			if skip {
				d, want = tok.NewDecoderSkipSpecial(), tok.DecodeSkipSpecial(ids)
			}
			var got string
			for _, id := range ids {
				piece := d.Add(id)
				if !utf8.ValidString(piece) {
					t.Fatalf("Add(%d) released invalid UTF-8 %q", id, piece)
				}
				got += piece
			}
			got += d.Flush()
			if got != want {
				t.Errorf("stream (skip %v) = %q, want %q", skip, got, want)
			}
		}
	}
	// Byte by byte: nothing comes out until the character is complete, and an
	// incomplete one at the end comes out of Flush as U+FFFD.
	d := tok.NewDecoder()
	emoji := byteTokens(t, tok, 0xF0, 0x9F, 0x98, 0x80)
	for i, id := range emoji[:3] {
		if out := d.Add(id); out != "" {
			t.Errorf("byte %d of an emoji released %q", i, out)
		}
	}
	if out := d.Add(emoji[3]); out != "😀" {
		t.Errorf("last byte of an emoji released %q, want 😀", out)
	}
	d.Add(emoji[0])
	d.Add(emoji[1])
	if out := d.Flush(); out != "\uFFFD" {
		t.Errorf("Flush of a partial emoji = %q, want U+FFFD", out)
	}
}

// byteTokens returns the single-byte tokens of bs.
func byteTokens(t *testing.T, tok *tokenizer.Tokenizer, bs ...byte) []int32 {
	t.Helper()
	var ids []int32
	for _, b := range bs {
		ids = append(ids, tok.Encode(string([]byte{b}))...)
		if len(ids) == 0 || string(tok.TokenBytes(ids[len(ids)-1])) != string([]byte{b}) {
			t.Fatalf("no single-byte token for %#x", b)
		}
	}
	return ids
}

// TestConcurrentEncode: one Tokenizer serves every request at once; the
// word cache must not mix results up (run with -race to check locking too).
func TestConcurrentEncode(t *testing.T) {
	tok := realTokenizer(t, "qwen3").tok
	texts := parityCorpus(400)
	want := make([][]int32, len(texts))
	for i, s := range texts {
		want[i] = tok.Encode(s)
	}
	tok.ClearCacheForTest()
	errs := make(chan string, 8)
	for w := 0; w < 8; w++ {
		go func(w int) {
			for k := range texts {
				i := (k*7 + w*53) % len(texts)
				if got := tok.Encode(texts[i]); !slices.Equal(got, want[i]) {
					errs <- fmt.Sprintf("worker %d: Encode(%q) = %v, want %v", w, texts[i], got, want[i])
					return
				}
			}
			errs <- ""
		}(w)
	}
	for w := 0; w < 8; w++ {
		if msg := <-errs; msg != "" {
			t.Error(msg)
		}
	}
}
