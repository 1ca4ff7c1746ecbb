package tokenizer_test

import (
	"os"
	"testing"

	"github.com/clawrl/clawrl/gguf"
	"github.com/clawrl/clawrl/tokenizer"
)

// FuzzFromGGUF feeds damaged GGUF headers (seeded with a tiny model's real
// one) through the header parser and FromGGUF: a bad vocabulary is an
// error, never a panic.
func FuzzFromGGUF(f *testing.F) {
	data, err := os.ReadFile("../model/testdata/tiny_qwen2.gguf")
	if err != nil {
		f.Fatal(err)
	}
	h, err := gguf.ParseHeader(data, uint64(len(data)))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data[:h.DataOffset])
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := gguf.ParseHeader(b, uint64(len(b))+1<<30)
		if err != nil {
			return
		}
		tok, err := tokenizer.FromGGUF(h)
		if err != nil {
			return
		}
		ids := tok.Encode("Hello, world! <|im_start|>user\n123")
		_ = tok.Decode(ids)
	})
}
