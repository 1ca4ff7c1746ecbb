package vocab

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFiles(t *testing.T) {
	tests := []struct {
		family    string
		vocabSize int    // entries in model.vocab
		eos       string // tokenizer_config.json eos_token
	}{
		{"qwen3", 151643, "<|im_end|>"},
		{"qwen2", 151643, "<|im_end|>"},
		{"llama3", 128000, "<|end_of_text|>"},
		{"llama", 128000, "<|end_of_text|>"},
	}
	for _, tt := range tests {
		t.Run(tt.family, func(t *testing.T) {
			tok, cfg, err := Files(tt.family)
			if err != nil {
				t.Fatal(err)
			}
			var tj struct {
				Model struct {
					Type  string           `json:"type"`
					Vocab map[string]int32 `json:"vocab"`
				} `json:"model"`
			}
			if err := json.Unmarshal(tok, &tj); err != nil {
				t.Fatalf("tokenizer.json: %v", err)
			}
			if tj.Model.Type != "BPE" || len(tj.Model.Vocab) != tt.vocabSize {
				t.Errorf("model type %q with %d vocab entries, want BPE with %d", tj.Model.Type, len(tj.Model.Vocab), tt.vocabSize)
			}
			var cj struct {
				ChatTemplate string `json:"chat_template"`
				EOS          string `json:"eos_token"`
			}
			if err := json.Unmarshal(cfg, &cj); err != nil {
				t.Fatalf("tokenizer_config.json: %v", err)
			}
			if cj.ChatTemplate == "" {
				t.Error("tokenizer_config.json has no chat_template")
			}
			if cj.EOS != tt.eos {
				t.Errorf("eos_token %q, want %q", cj.EOS, tt.eos)
			}
		})
	}
	if _, _, err := Files("gpt2"); err == nil {
		t.Error("Files(gpt2): want an error for an unknown family")
	}
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	if err := Write("llama3", dir); err != nil {
		t.Fatal(err)
	}
	tok, cfg, err := Files("llama3")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]byte{"tokenizer.json": tok, "tokenizer_config.json": cfg} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: written file differs from Files", name)
		}
	}
	if err := Write("llama3", filepath.Join(dir, "missing")); err == nil {
		t.Error("Write into a missing folder: want an error")
	}
}

// `clawrl model new --arch llama` must write a template that renders tools:
// Llama 3.1's, over the same tokenizer.
func TestLlama31Template(t *testing.T) {
	tok30, cfg30, err := Files("llama3")
	if err != nil {
		t.Fatal(err)
	}
	tok31, cfg31, err := Files("llama")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(tok30, tok31) {
		t.Fatal("llama3.1 must share Llama 3's tokenizer.json")
	}
	var c30, c31 map[string]any
	if err := json.Unmarshal(cfg30, &c30); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(cfg31, &c31); err != nil {
		t.Fatalf("rewritten tokenizer_config.json is not JSON: %v", err)
	}
	tmpl, _ := c31["chat_template"].(string)
	if !strings.Contains(tmpl, "tools") || tmpl == c30["chat_template"] {
		t.Fatalf("llama3.1 chat_template does not render tools: %.200q", tmpl)
	}
	delete(c30, "chat_template")
	delete(c31, "chat_template")
	if len(c30) != len(c31) {
		t.Fatalf("rewriting the template changed other fields: %d vs %d keys", len(c30), len(c31))
	}
}
