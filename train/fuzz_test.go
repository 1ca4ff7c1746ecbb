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

func FuzzParseAdapterConfig(f *testing.F) {
	for _, arch := range []string{"qwen3", "qwen2", "llama"} {
		for _, d := range []string{"adapter_peft", "adapter_clawrl"} {
			if raw, err := os.ReadFile(filepath.Join("testdata", arch, d, "adapter_config.json")); err == nil {
				f.Add(raw)
			}
		}
	}
	f.Add([]byte(`{"peft_type":"LORA","r":4,"target_modules":"q_proj"}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		ac, targets, err := ParseAdapterConfig(raw)
		if err == nil && (ac.R <= 0 || len(targets) == 0) {
			t.Fatalf("accepted %+v", ac)
		}
	})
}
