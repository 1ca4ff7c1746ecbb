package train

import (
	"os"
	"path/filepath"
	"testing"
)

func FuzzArchFromConfig(f *testing.F) {
	for _, arch := range []string{"qwen3", "qwen2", "llama"} {
		if raw, err := os.ReadFile(filepath.Join("testdata", arch, "config.json")); err == nil {
			f.Add(raw)
		}
	}
	f.Add([]byte(`{"model_type":"qwen3","num_attention_heads":0}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		a, err := ArchFromConfig(raw)
		if err == nil {
			if err := a.validate(); err != nil {
				t.Fatalf("accepted an invalid arch: %v", err)
			}
		}
	})
}
