package model

import (
	"os"
	"testing"

	"github.com/clawrl/clawrl/gguf"
)

// FuzzConfigFromGGUF feeds damaged GGUF headers (seeded with the tiny
// fixtures' real ones) through ConfigFromGGUF: an error, never a panic, and
// a config it accepts is a valid one.
func FuzzConfigFromGGUF(f *testing.F) {
	for _, name := range []string{"tiny_llama.gguf", "tiny_qwen2.gguf", "tiny_qwen3.gguf"} {
		data, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		h, err := gguf.ParseHeader(data, uint64(len(data)))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data[:h.DataOffset])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := gguf.ParseHeader(b, uint64(len(b))+1<<30)
		if err != nil {
			return
		}
		c, err := ConfigFromGGUF(h)
		if err != nil {
			return
		}
		if c.HiddenSize <= 0 || c.NumAttentionHeads%c.NumKeyValueHeads != 0 || c.HeadDim%2 != 0 {
			t.Fatalf("accepted an invalid config %+v", c)
		}
		_ = c.invFreq()
	})
}
