package vocab

import (
	"encoding/json"
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
