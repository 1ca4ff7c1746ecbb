package tokenizer_test

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/clawrl/clawrl/gguf"
	"github.com/clawrl/clawrl/modelref/demotest"
	"github.com/clawrl/clawrl/tokenizer"
	"github.com/clawrl/clawrl/tokenizer/vocab"
)

// The GGUF tokenizer parity test tokenizes the parity corpus with the
// tokenizer FromGGUF builds and compares with llama.cpp's own tokenizer
// (ids committed in testdata/gguf_llamacpp_*.json.gz, made by
// testdata/gguf_ref.py llamacpp; xllamacpp is too heavy to install in CI) and
// with transformers' GGUF tokenizer (testdata/gguf_hf_*.json.gz: its ids
// where they differ from llama.cpp's, made by testdata/gguf_ref.py hf;
// transformers' GGUF reader needs torch, which CI does not install).
// The files: the demo model's GGUF (SmolLM2, pre-tokenizer smollm) and
// vocabulary-only GGUFs converted from the embedded Qwen3, Qwen2.5 and
// Llama 3 tokenizers (pre-tokenizers qwen2 and llama-bpe) by
// testdata/gguf_ref.py vocab, as llama.cpp's converter writes them.
//
// To regenerate a fixture after changing the corpus:
//
//	CLAWRL_WRITE_GGUF_CORPUS=/tmp/corpus.json go test ./tokenizer -run TestGGUFTokenizerParity
//	$REFVENV/bin/python tokenizer/testdata/gguf_ref.py vocab … /tmp/qwen3.gguf   (as the test does)
//	$REFVENV/bin/python tokenizer/testdata/gguf_ref.py llamacpp FILE.gguf /tmp/corpus.json tokenizer/testdata/gguf_llamacpp_NAME.json.gz
//	$REFVENV/bin/python tokenizer/testdata/gguf_ref.py hf FILE.gguf /tmp/corpus.json tokenizer/testdata/gguf_llamacpp_NAME.json.gz tokenizer/testdata/gguf_hf_NAME.json.gz

const ggufCorpusSize = 5000

var ggufFamilies = []struct{ name, family, pre string }{
	{"qwen3", "qwen3", "qwen2"},
	{"qwen2", "qwen2", "qwen2"},
	{"llama3", "llama3", "llama-bpe"},
}

func TestGGUFTokenizerParity(t *testing.T) {
	corpus := parityCorpus(ggufCorpusSize)
	texts, err := json.Marshal(corpus)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(texts)
	tmp := t.TempDir()
	textsPath := filepath.Join(tmp, "texts.json")
	if err := os.WriteFile(textsPath, texts, 0o644); err != nil {
		t.Fatal(err)
	}
	if p := os.Getenv("CLAWRL_WRITE_GGUF_CORPUS"); p != "" {
		if err := os.WriteFile(p, texts, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	py := ggufPython(t)
	files := map[string]string{}
	for _, f := range ggufFamilies {
		tokJSON, configJSON, err := vocab.Files(f.family)
		if err != nil {
			t.Fatal(err)
		}
		tj, cj, out := filepath.Join(tmp, f.name+".json"), filepath.Join(tmp, f.name+"_config.json"), filepath.Join(tmp, f.name+".gguf")
		if err := os.WriteFile(tj, tokJSON, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cj, configJSON, 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(py, filepath.Join("testdata", "gguf_ref.py"), "vocab", tj, cj, f.pre, out).CombinedOutput(); err != nil {
			t.Fatalf("gguf_ref.py vocab %s: %v\n%s", f.name, err, out)
		}
		files[f.name] = out
	}
	names := []string{"qwen3", "qwen2", "llama3", "smollm2"}
	if p := demotest.Path(); p != "" {
		files["smollm2"] = p
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			path, ok := files[name]
			if !ok {
				msg := "demo GGUF not in the user cache (go run ./cmd/clawrl model pull smollm2)"
				if os.Getenv("CLAWRL_REQUIRE_REFS") == "1" {
					t.Fatal(msg + " (CLAWRL_REQUIRE_REFS=1)")
				}
				t.Skip(msg)
			}
			f, err := gguf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			tok, err := tokenizer.FromGGUF(f.Header)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			cpp := readLlamaCppFixture(t, name, hex.EncodeToString(sum[:]))
			hfDiffer := readHFFixture(t, name, hex.EncodeToString(sum[:]))
			var bad []string
			cppBad, refsDiffer, tokens := 0, 0, 0
			for i, text := range corpus {
				got := tok.Encode(text)
				tokens += len(got)
				if hf, ok := hfDiffer[i]; ok {
					// The references disagree: transformers' conversion drops
					// some pre-tokenizers' splits, and llama.cpp's Unicode
					// tables are older than the Unicode 16 that tokenizers
					// and clawrl use. Ours must be one of the two.
					refsDiffer++
					if slices.Equal(got, hf) {
						continue
					}
				}
				if !slices.Equal(got, cpp[i]) {
					cppBad++
					if len(bad) < 8 {
						bad = append(bad, fmt.Sprintf("#%d %q:\n  got       %v\n  llama.cpp %v", i, clip(text), clipIDs(got), clipIDs(cpp[i])))
					}
				}
			}
			t.Logf("%s: %d strings, %d tokens: %d equal neither reference; llama.cpp and transformers disagree on %d (ours must equal one of them there)",
				name, len(corpus), tokens, cppBad, refsDiffer)
			if cppBad > 0 {
				t.Errorf("%s: %d encodings equal neither reference; first ones:\n%s", name, cppBad, strings.Join(bad, "\n"))
			}
		})
	}
}

func clipIDs(ids []int32) string {
	if len(ids) > 24 {
		return fmt.Sprint(ids[:24]) + "…"
	}
	return fmt.Sprint(ids)
}

// ggufPython is the reference Python with the gguf package (it writes the
// vocabulary-only GGUFs).
func ggufPython(tb testing.TB) string {
	tb.Helper()
	py := python(tb)
	if out, err := exec.Command(py, "-c", "import gguf").CombinedOutput(); err != nil {
		msg := "reference missing: " + py + " cannot import gguf (pip install -r scripts/requirements-test.txt): " + string(bytes.TrimSpace(out))
		if os.Getenv("CLAWRL_REQUIRE_REFS") == "1" {
			tb.Fatal(msg)
		}
		tb.Skip(msg)
	}
	return py
}

func readHFFixture(tb testing.TB, name, corpusSHA string) map[int][]int32 {
	tb.Helper()
	raw := readGz(tb, filepath.Join("testdata", "gguf_hf_"+name+".json.gz"))
	var fx struct {
		SHA256 string             `json:"sha256"`
		Differ map[string][]int32 `json:"differ"`
	}
	if err := json.Unmarshal(raw, &fx); err != nil {
		tb.Fatal(err)
	}
	if fx.SHA256 != corpusSHA {
		tb.Fatalf("gguf_hf_%s.json.gz was made from another corpus: regenerate it (see the comment above)", name)
	}
	out := map[int][]int32{}
	for k, ids := range fx.Differ {
		var i int
		if _, err := fmt.Sscan(k, &i); err != nil {
			tb.Fatal(err)
		}
		out[i] = ids
	}
	return out
}

func readGz(tb testing.TB, path string) []byte {
	tb.Helper()
	fh, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer fh.Close()
	zr, err := gzip.NewReader(fh)
	if err != nil {
		tb.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		tb.Fatal(err)
	}
	return raw
}

func readLlamaCppFixture(tb testing.TB, name, corpusSHA string) [][]int32 {
	tb.Helper()
	raw := readGz(tb, filepath.Join("testdata", "gguf_llamacpp_"+name+".json.gz"))
	var fx struct {
		SHA256 string    `json:"sha256"`
		IDs    [][]int32 `json:"ids"`
	}
	if err := json.Unmarshal(raw, &fx); err != nil {
		tb.Fatal(err)
	}
	if fx.SHA256 != corpusSHA || len(fx.IDs) != ggufCorpusSize {
		tb.Fatalf("gguf_llamacpp_%s.json.gz was made from another corpus (sha256 %s, %d texts; now %s): regenerate it (see the comment above)", name, fx.SHA256, len(fx.IDs), corpusSHA)
	}
	return fx.IDs
}
