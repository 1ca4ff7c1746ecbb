package model

import (
	"fmt"

	"github.com/clawrl/clawrl/safetensors"
)

// Model is a loaded checkpoint. It is read-only after Load, so any number of
// goroutines may run sequences on it at once.
type Model struct {
	Config  *Config
	Weights *Weights
	invFreq []float32
}

// Load reads a Hugging Face model folder (config.json and model.safetensors
// or a sharded index), keeping bf16 weights in bf16 and the rest in float32
// (see Options), or a GGUF file.
func Load(dir string) (*Model, error) { return LoadWith(dir, Options{}) }

// LoadWith reads a model folder, or a GGUF file (LoadGGUF), with the given
// options.
func LoadWith(dir string, opts Options) (*Model, error) {
	if IsGGUF(dir) {
		return LoadGGUF(dir, opts)
	}
	cfg, err := LoadConfig(dir)
	if err != nil {
		return nil, err
	}
	ck, err := safetensors.OpenDir(dir)
	if err != nil {
		return nil, fmt.Errorf("load model: %w", err)
	}
	defer ck.Close() // weights are copied out of the mapping
	w, err := loadWeights(cfg, ck, opts)
	if err != nil {
		return nil, err
	}
	return New(cfg, w), nil
}

// New assembles a Model from a config and weights already in memory.
func New(cfg *Config, w *Weights) *Model {
	inv := cfg.invFreq()
	m := &Model{Config: cfg, Weights: w, invFreq: make([]float32, len(inv))}
	for i, f := range inv {
		m.invFreq[i] = float32(f)
	}
	return m
}

// WeightBytes is the memory the linear and embedding weights take.
func (m *Model) WeightBytes() int64 {
	var n int64
	add := func(l *Linear) { n += l.weightBytes() }
	add(&m.Weights.Embed)
	if m.Weights.LMHead != &m.Weights.Embed {
		add(m.Weights.LMHead)
	}
	for i := range m.Weights.Blocks {
		for mod := range numModules {
			add(m.Weights.Blocks[i].linear(mod))
		}
	}
	return n
}

// DecodeBytesPerStep is the weight bytes one decode step must read: every
// block's linears and the output head (the embedding lookup reads one row).
// Dividing memory bandwidth by it bounds decode tokens/s.
func (m *Model) DecodeBytesPerStep() int64 {
	var n int64
	add := func(l *Linear) { n += l.weightBytes() }
	add(m.Weights.LMHead)
	for i := range m.Weights.Blocks {
		for mod := range numModules {
			add(m.Weights.Blocks[i].linear(mod))
		}
	}
	return n
}
