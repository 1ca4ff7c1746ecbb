package tokenizer_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/clawrl/clawrl/tokenizer/vocab"
)

// parityCorpusSize is the number of generated strings compared per family;
// renderedConversations more are chat requests rendered with the family's
// real chat template by the reference.
const (
	parityCorpusSize      = 6000
	renderedConversations = 300
)

// TestParityHF encodes and decodes the generated corpus with the real
// Qwen3, Qwen2.5 and Llama 3 tokenizers, here and in Hugging Face tokenizers,
// and requires every id and every decoded string to be identical.
func TestParityHF(t *testing.T) {
	corpus := parityCorpus(parityCorpusSize)
	for _, name := range familyNames {
		t.Run(name, func(t *testing.T) {
			f := realTokenizer(t, name)
			decodeCases := randomIDLists(f, 500)
			_, configJSON, err := vocab.Files(name)
			if err != nil {
				t.Fatal(err)
			}
			var config struct {
				ChatTemplate string `json:"chat_template"`
				BOS          any    `json:"bos_token"`
				EOS          any    `json:"eos_token"`
			}
			if err := json.Unmarshal(configJSON, &config); err != nil {
				t.Fatal(err)
			}
			var ref struct {
				Rendered    []string  `json:"rendered"`
				IDs         [][]int32 `json:"ids"`
				Decoded     []string  `json:"decoded"`
				DecodedSkip []string  `json:"decoded_skip"`
				Decode      []string  `json:"decode"`
				DecodeSkip  []string  `json:"decode_skip"`
			}
			runReference(t, map[string]any{
				"tokenizer": f.path, "mode": "parity", "texts": corpus, "decode": decodeCases,
				"chat_template": config.ChatTemplate, "conversations": conversations(renderedConversations),
				"template_vars": map[string]any{"bos_token": config.BOS, "eos_token": config.EOS},
			}, &ref)
			corpus := append(slices.Clone(corpus), ref.Rendered...)
			if len(ref.Rendered) != renderedConversations || len(ref.IDs) != len(corpus) || len(ref.Decode) != len(decodeCases) {
				t.Fatalf("reference answered %d/%d encodings and %d/%d decodings", len(ref.IDs), len(corpus), len(ref.Decode), len(decodeCases))
			}
			var bad []string
			report := func(format string, args ...any) {
				if len(bad) < 10 {
					bad = append(bad, fmt.Sprintf(format, args...))
				}
			}
			encodeBad, decodeBad, tokens := 0, 0, 0
			for i, text := range corpus {
				got := f.tok.Encode(text)
				want := ref.IDs[i]
				tokens += len(want)
				if !slices.Equal(got, want) {
					encodeBad++
					k := firstDiff(got, want)
					report("encode #%d %q:\n  at token %d: got %v\n               want %v", i, clip(text), k, window(f, got, k), window(f, want, k))
				}
				if d := f.tok.Decode(want); d != ref.Decoded[i] {
					decodeBad++
					report("decode #%d %v: got %q, want %q", i, want, clip(d), clip(ref.Decoded[i]))
				}
				if d := f.tok.DecodeSkipSpecial(want); d != ref.DecodedSkip[i] {
					decodeBad++
					report("decode skip-special #%d: got %q, want %q", i, clip(d), clip(ref.DecodedSkip[i]))
				}
			}
			for i, ids := range decodeCases {
				if d := f.tok.Decode(ids); d != ref.Decode[i] {
					decodeBad++
					report("decode random ids %v: got %q, want %q", ids, d, ref.Decode[i])
				}
				if d := f.tok.DecodeSkipSpecial(ids); d != ref.DecodeSkip[i] {
					decodeBad++
					report("decode skip-special random ids %v: got %q, want %q", ids, d, ref.DecodeSkip[i])
				}
			}
			t.Logf("%s: %d strings (%d of them rendered chats; %d tokens) encoded, %d id lists decoded: %d encode and %d decode mismatches",
				name, len(corpus), len(ref.Rendered), tokens, len(corpus)+len(decodeCases), encodeBad, decodeBad)
			if len(bad) > 0 {
				t.Errorf("%s: %d of %d encodings differ from Hugging Face tokenizers, %d decodings differ; first ones:\n%s",
					name, encodeBad, len(corpus), decodeBad, strings.Join(bad, "\n"))
			}
		})
	}
}

// randomIDLists makes id lists that split UTF-8 sequences between tokens and
// mix in special tokens and ids out of range, for decode parity.
func randomIDLists(f *family, n int) [][]int32 {
	r := rand.New(rand.NewPCG(corpusSeed, 2))
	vocabSize := int32(f.tok.VocabSize())
	var lists [][]int32
	for i := 0; i < n; i++ {
		ids := make([]int32, 1+r.IntN(12))
		for k := range ids {
			switch r.IntN(4) {
			case 0: // single-byte tokens: the first 256 ids are bytes in these vocabularies
				ids[k] = r.Int32N(256)
			case 1: // added tokens
				ids[k] = vocabSize - 1 - r.Int32N(30)
			default:
				ids[k] = r.Int32N(vocabSize)
			}
		}
		lists = append(lists, ids)
	}
	return lists
}

func firstDiff(a, b []int32) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// window shows the tokens around position k.
func window(f *family, ids []int32, k int) string {
	lo, hi := max(0, k-2), min(len(ids), k+4)
	var parts []string
	for _, id := range ids[lo:hi] {
		parts = append(parts, fmt.Sprintf("%d:%q", id, f.tok.Token(id)))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
