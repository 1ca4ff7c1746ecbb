package tokenizer_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/clawrl/clawrl/tokenizer"
	"github.com/clawrl/clawrl/tokenizer/vocab"
)

// The real files use one pre-tokenizer and plain added tokens. These
// variants of the Qwen3 file switch on the rest of what tokenizer.json can
// say (added-token flags, normalized added tokens, ByteLevel's own regex and
// prefix space, the other Split behaviors) and compare with Hugging Face too.

type variant struct {
	name  string
	patch func(top map[string]json.RawMessage)
	texts func(g *corpusGen) string
}

func rawJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func splitPreTokenizer(regex, behavior string, invert bool) json.RawMessage {
	return rawJSON(map[string]any{"type": "Sequence", "pretokenizers": []any{
		map[string]any{"type": "Split", "pattern": map[string]string{"Regex": regex}, "behavior": behavior, "invert": invert},
		map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false},
	}})
}

var flagTokens = []string{"<ls>", "<rs>", "<both>", "word", "café", "\u00c5ngström"}

func variants() []variant {
	plain := func(g *corpusGen) string { return g.mixed(1 + g.r.IntN(10)) }
	return []variant{
		{
			name: "added-token-flags",
			patch: func(top map[string]json.RawMessage) {
				var added []map[string]any
				if err := json.Unmarshal(top["added_tokens"], &added); err != nil {
					panic(err)
				}
				next := 151669
				for i, content := range flagTokens {
					added = append(added, map[string]any{
						"id": next + i, "content": content,
						"lstrip": content == "<ls>" || content == "<both>", "rstrip": content == "<rs>" || content == "<both>",
						"single_word": content == "word", "normalized": content == "café" || content == "\u00c5ngström",
						"special": content == "<both>",
					})
				}
				top["added_tokens"] = rawJSON(added)
			},
			texts: func(g *corpusGen) string {
				parts := []string{"<ls>", "<rs>", "<both>", "word", "café", "cafe\u0301", "A\u030angström", "\u212bngström",
					" ", "  ", "\t", "\n", " \n ", "words", "sword", "word_", "Word", "a", "1", "é", "<|im_start|>", "<think>"}
				var b strings.Builder
				for k := 1 + g.r.IntN(12); k > 0; k-- {
					if g.r.IntN(4) == 0 {
						b.WriteString(g.sentence(1))
					} else {
						b.WriteString(g.pick(parts))
					}
				}
				return b.String()
			},
		},
		{
			name: "bytelevel-regex-prefix-space",
			patch: func(top map[string]json.RawMessage) {
				top["pre_tokenizer"] = rawJSON(map[string]any{"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true})
			},
			texts: plain,
		},
		{name: "split-merged-with-previous", patch: func(top map[string]json.RawMessage) {
			top["pre_tokenizer"] = splitPreTokenizer(`\s+|\d`, "MergedWithPrevious", false)
		}, texts: plain},
		{name: "split-merged-with-next", patch: func(top map[string]json.RawMessage) {
			top["pre_tokenizer"] = splitPreTokenizer(`\s+|[.,!?]`, "MergedWithNext", false)
		}, texts: plain},
		{name: "split-contiguous-inverted", patch: func(top map[string]json.RawMessage) {
			top["pre_tokenizer"] = splitPreTokenizer(`\p{L}+`, "Contiguous", true)
		}, texts: plain},
		{name: "normalizer-sequence", patch: func(top map[string]json.RawMessage) {
			top["normalizer"] = rawJSON(map[string]any{"type": "Sequence", "normalizers": []any{
				map[string]any{"type": "NFKD"},
				map[string]any{"type": "Replace", "pattern": map[string]string{"String": "\t"}, "content": "    "},
				map[string]any{"type": "Prepend", "prepend": "»"},
				map[string]any{"type": "NFKC"},
			}})
		}, texts: plain},
		{name: "split-removed", patch: func(top map[string]json.RawMessage) {
			top["pre_tokenizer"] = splitPreTokenizer(`[ \t]+`, "Removed", false)
		}, texts: plain},
	}
}

func TestParityHFVariants(t *testing.T) {
	base, _, err := vocab.Files("qwen3")
	if err != nil {
		t.Fatal(err)
	}
	for vi, v := range variants() {
		t.Run(v.name, func(t *testing.T) {
			var top map[string]json.RawMessage
			if err := json.Unmarshal(base, &top); err != nil {
				t.Fatal(err)
			}
			v.patch(top)
			data := rawJSON(top)
			path := filepath.Join(t.TempDir(), "tokenizer.json")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			tok, err := tokenizer.FromJSON(data)
			if err != nil {
				t.Fatal(err)
			}
			g := &corpusGen{r: rand.New(rand.NewPCG(corpusSeed, uint64(100+vi)))}
			texts := make([]string, 800)
			for i := range texts {
				texts[i] = v.texts(g)
			}
			var ref struct {
				IDs     [][]int32 `json:"ids"`
				Decoded []string  `json:"decoded"`
			}
			runReference(t, map[string]any{"tokenizer": path, "mode": "parity", "texts": texts}, &ref)
			bad := 0
			for i, text := range texts {
				got := tok.Encode(text)
				if !slices.Equal(got, ref.IDs[i]) {
					if bad++; bad <= 5 {
						t.Errorf("encode %q:\n got %v\nwant %v", text, got, ref.IDs[i])
					}
				}
				if d := tok.Decode(ref.IDs[i]); d != ref.Decoded[i] {
					if bad++; bad <= 5 {
						t.Errorf("decode %v: got %q, want %q", ref.IDs[i], d, ref.Decoded[i])
					}
				}
			}
			t.Logf("%s: %d strings, %d mismatches", v.name, len(texts), bad)
			if bad > 0 {
				t.Errorf("%s: %s", v.name, fmt.Sprintf("%d of %d differ", bad, len(texts)))
			}
		})
	}
}
