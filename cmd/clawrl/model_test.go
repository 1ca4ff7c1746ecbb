package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/clawrl/clawrl/model"
)

// TestModelNew runs `clawrl model new` for each family and checks that the
// folder loads, has the family's vocabulary, and carries a tokenizer whose
// config has a chat template.
func TestModelNew(t *testing.T) {
	for _, tc := range []struct {
		arch  string
		vocab int
	}{{"qwen3", 151936}, {"qwen2", 151936}, {"llama", 128256}} {
		t.Run(tc.arch, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "m")
			root := newRootCmd()
			var out bytes.Buffer
			root.SetOut(&out)
			root.SetArgs([]string{"model", "new", "--arch", tc.arch, "--size", "tiny", "--seed", "4", "--out", dir})
			if err := root.Execute(); err != nil {
				t.Fatal(err)
			}
			m, err := model.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if m.Config.VocabSize != tc.vocab || string(m.Config.ModelType) != tc.arch {
				t.Errorf("config: vocab %d, model_type %s", m.Config.VocabSize, m.Config.ModelType)
			}
			raw, err := os.ReadFile(filepath.Join(dir, "tokenizer_config.json"))
			if err != nil {
				t.Fatal(err)
			}
			var tc2 struct {
				ChatTemplate string `json:"chat_template"`
			}
			if err := json.Unmarshal(raw, &tc2); err != nil || tc2.ChatTemplate == "" {
				t.Errorf("tokenizer_config.json has no chat_template (err %v)", err)
			}
			for _, f := range []string{"tokenizer.json", "generation_config.json"} {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	root := newRootCmd()
	root.SetArgs([]string{"model", "new", "--arch", "gpt2", "--out", t.TempDir()})
	if err := root.Execute(); err == nil {
		t.Error("unknown arch accepted")
	}
}
