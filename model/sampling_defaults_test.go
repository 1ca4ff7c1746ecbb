package model

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/clawrl/clawrl/safetensors"
)

func TestSamplingDefaults(t *testing.T) {
	dir := t.TempDir()
	cfg, err := NewConfig(Qwen3, SizeTiny)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteRandom(dir, cfg, 0, safetensors.F32); err != nil {
		t.Fatal(err)
	}
	// Qwen3's generation_config.json: do_sample, temperature 0.6, top_k 20, top_p 0.95.
	if p, ok, err := SamplingDefaults(dir); err != nil || !ok || p != (SamplingParams{Temperature: 0.6, TopP: 0.95, TopK: 20}) {
		t.Errorf("qwen3 folder: %+v, %v, %v", p, ok, err)
	}
	for content, want := range map[string]SamplingParams{
		`{"do_sample": false, "temperature": 0.6}`: {},
		`{"temperature": 0.3}`:                     {Temperature: 0.3, TopP: 1, TopK: 50},
	} {
		if err := os.WriteFile(filepath.Join(dir, "generation_config.json"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if p, ok, err := SamplingDefaults(dir); err != nil || !ok || p != want {
			t.Errorf("%s: %+v, %v, %v; want %+v", content, p, ok, err, want)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "generation_config.json"), []byte(`{"temperature": 7}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := SamplingDefaults(dir); err == nil {
		t.Error("temperature 7 accepted")
	}
	os.Remove(filepath.Join(dir, "generation_config.json"))
	if _, ok, err := SamplingDefaults(dir); ok || err != nil {
		t.Errorf("no generation_config.json: %v, %v", ok, err)
	}
	// The GGUF fixtures carry no general.sampling.* keys.
	if _, ok, err := SamplingDefaults("testdata/tiny_qwen3.gguf"); ok || err != nil {
		t.Errorf("GGUF without sampling keys: %v, %v", ok, err)
	}
}
