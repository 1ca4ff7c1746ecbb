package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/clawrl/clawrl/gguf"
)

// SamplingDefaults reads the sampling a model's authors recommend, for
// requests that set none: generation_config.json in a Hugging Face folder
// (do_sample false means greedy), or a GGUF file's general.sampling.temp,
// general.sampling.top_p and general.sampling.top_k. ok is false when the
// model says nothing.
func SamplingDefaults(path string) (p SamplingParams, ok bool, err error) {
	if IsGGUF(path) {
		f, err := gguf.Open(path)
		if err != nil {
			return p, false, err
		}
		defer f.Close()
		return samplingFromGGUF(f.Header)
	}
	raw, err := os.ReadFile(filepath.Join(path, "generation_config.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return p, false, nil
	}
	if err != nil {
		return p, false, err
	}
	var g struct {
		DoSample    *bool    `json:"do_sample"`
		Temperature *float64 `json:"temperature"`
		TopP        *float64 `json:"top_p"`
		TopK        *int     `json:"top_k"`
	}
	if err := json.Unmarshal(raw, &g); err != nil {
		return p, false, fmt.Errorf("%s: generation_config.json: %w", path, err)
	}
	if g.DoSample != nil && !*g.DoSample {
		return SamplingParams{}, true, nil // greedy
	}
	// transformers' GenerationConfig defaults, where the file is silent.
	p = SamplingParams{Temperature: 1, TopP: 1, TopK: 50}
	if g.Temperature != nil {
		p.Temperature = *g.Temperature
	}
	if g.TopP != nil {
		p.TopP = *g.TopP
	}
	if g.TopK != nil {
		p.TopK = *g.TopK
	}
	ok = g.DoSample != nil || g.Temperature != nil || g.TopP != nil || g.TopK != nil
	return p, ok, checkSampling(p, path)
}

func samplingFromGGUF(h *gguf.Header) (SamplingParams, bool, error) {
	var p SamplingParams
	temp, okT := h.Float("general.sampling.temp")
	topP, okP := h.Float("general.sampling.top_p")
	topK, okK := h.Uint("general.sampling.top_k")
	if !okT && !okP && !okK {
		return p, false, nil
	}
	// llama.cpp's own defaults for what the file leaves out.
	p = SamplingParams{Temperature: 0.8, TopP: 0.95, TopK: 40}
	if okT {
		p.Temperature = temp
	}
	if okP {
		p.TopP = topP
	}
	if okK && topK < 1<<20 {
		p.TopK = int(topK)
	}
	return p, true, checkSampling(p, "GGUF general.sampling")
}

func checkSampling(p SamplingParams, where string) error {
	if p.Temperature < 0 || p.Temperature > 2 || p.TopP < 0 || p.TopP > 1 || p.TopK < 0 {
		return fmt.Errorf("%s: sampling temperature %v, top_p %v, top_k %d out of range", where, p.Temperature, p.TopP, p.TopK)
	}
	return nil
}
