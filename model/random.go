package model

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"

	"github.com/clawrl/clawrl/safetensors"
)

// Sizes for NewConfig.
const (
	SizeTiny = "tiny" // hidden 64, 2 layers, 4 heads, 2 kv heads, head_dim 16: tests
	Size06B  = "0.6b" // Qwen3-0.6B's shape (hidden 1024, 28 layers): benchmarks
)

// familyDefaults holds what a family's released checkpoints put in
// config.json besides the shape, and its special tokens.
type familyDefaults struct {
	arch       string
	vocab      int
	bos        int
	eos        []int // generation_config's list; config.json gets the first
	configEOS  int
	ropeTheta  float64
	rope       *Rope
	eps        float64
	maxPos     int
	attnBias   bool
	generation map[string]any
	tieTiny    bool
}

func defaultsFor(f Family) (familyDefaults, error) {
	switch f {
	case Qwen3:
		return familyDefaults{arch: "Qwen3ForCausalLM", vocab: 151936, bos: 151643, eos: []int{151645, 151643}, configEOS: 151645,
			ropeTheta: 1000000, eps: 1e-6, maxPos: 40960, tieTiny: true,
			generation: map[string]any{"do_sample": true, "temperature": 0.6, "top_k": 20, "top_p": 0.95, "pad_token_id": 151643}}, nil
	case Qwen2:
		return familyDefaults{arch: "Qwen2ForCausalLM", vocab: 151936, bos: 151643, eos: []int{151645, 151643}, configEOS: 151645,
			ropeTheta: 1000000, eps: 1e-6, maxPos: 32768, attnBias: true, tieTiny: true,
			generation: map[string]any{"do_sample": true, "temperature": 0.7, "top_k": 20, "top_p": 0.8, "pad_token_id": 151643, "repetition_penalty": 1.05}}, nil
	case Llama:
		return familyDefaults{arch: "LlamaForCausalLM", vocab: 128256, bos: 128000, eos: []int{128001, 128008, 128009}, configEOS: 128009,
			ropeTheta: 500000, eps: 1e-5, maxPos: 131072,
			rope:       &Rope{Type: "llama3", Factor: 32, LowFreqFactor: 1, HighFreqFactor: 4, OriginalMaxPositionEmbeddings: 8192},
			generation: map[string]any{"do_sample": true, "temperature": 0.6, "top_p": 0.9}}, nil
	}
	return familyDefaults{}, fmt.Errorf("architecture %q: want qwen3, qwen2 or llama", f)
}

// NewConfig returns the config of a family at a named size (SizeTiny or
// Size06B), with the family's real vocabulary, special tokens and RoPE
// settings. Llama's tiny config keeps a separate lm_head so that path is
// exercised; the others tie embeddings like their small releases.
func NewConfig(f Family, size string) (*Config, error) {
	d, err := defaultsFor(f)
	if err != nil {
		return nil, err
	}
	bos := d.bos
	c := &Config{Architectures: []string{d.arch}, ModelType: f, VocabSize: d.vocab, RopeTheta: d.ropeTheta, RopeScaling: d.rope,
		RMSNormEps: d.eps, MaxPositionEmbeddings: d.maxPos, AttentionBias: d.attnBias, HiddenAct: "silu",
		BOSTokenID: &bos, EOSTokenIDs: []int{d.configEOS}, TorchDtype: "float32"}
	switch size {
	case SizeTiny:
		c.HiddenSize, c.IntermediateSize, c.NumHiddenLayers, c.NumAttentionHeads, c.NumKeyValueHeads, c.HeadDim = 64, 128, 2, 4, 2, 16
		c.TieWordEmbeddings = d.tieTiny
	case Size06B:
		c.HiddenSize, c.IntermediateSize, c.NumHiddenLayers, c.NumAttentionHeads, c.NumKeyValueHeads, c.HeadDim = 1024, 3072, 28, 16, 8, 128
		c.TieWordEmbeddings = true
	default:
		return nil, fmt.Errorf("size %q: want %s or %s", size, SizeTiny, Size06B)
	}
	return c, c.fillAndValidate()
}

// hfConfig renders c as the config.json transformers writes for the family.
func (c *Config) hfConfig() map[string]any {
	m := map[string]any{
		"architectures":           c.Architectures,
		"model_type":              c.ModelType,
		"hidden_size":             c.HiddenSize,
		"intermediate_size":       c.IntermediateSize,
		"num_hidden_layers":       c.NumHiddenLayers,
		"num_attention_heads":     c.NumAttentionHeads,
		"num_key_value_heads":     c.NumKeyValueHeads,
		"head_dim":                c.HeadDim,
		"hidden_act":              c.HiddenAct,
		"rms_norm_eps":            c.RMSNormEps,
		"rope_theta":              c.RopeTheta,
		"rope_scaling":            nil,
		"tie_word_embeddings":     c.TieWordEmbeddings,
		"attention_bias":          c.AttentionBias,
		"attention_dropout":       0.0,
		"max_position_embeddings": c.MaxPositionEmbeddings,
		"vocab_size":              c.VocabSize,
		"initializer_range":       0.02,
		"torch_dtype":             c.TorchDtype,
		"use_cache":               true,
		"bos_token_id":            c.BOSTokenID,
	}
	if len(c.EOSTokenIDs) == 1 {
		m["eos_token_id"] = c.EOSTokenIDs[0]
	} else {
		m["eos_token_id"] = c.EOSTokenIDs
	}
	if r := c.RopeScaling; r != nil && r.Type != "" && r.Type != "default" {
		rs := map[string]any{"rope_type": r.Type, "factor": r.Factor}
		if r.Type == "llama3" {
			rs["low_freq_factor"], rs["high_freq_factor"], rs["original_max_position_embeddings"] = r.LowFreqFactor, r.HighFreqFactor, r.OriginalMaxPositionEmbeddings
		}
		m["rope_scaling"] = rs
	}
	switch c.ModelType {
	case Qwen3, Qwen2:
		m["max_window_layers"] = c.NumHiddenLayers
		m["use_sliding_window"] = false
		m["sliding_window"] = nil
		if c.ModelType == Qwen2 {
			delete(m, "attention_bias") // implied by the architecture
		}
	case Llama:
		m["mlp_bias"] = c.MLPBias
		m["pretraining_tp"] = 1
	}
	return m
}

// tensorSpec is one parameter of a fresh checkpoint and how to draw it.
type tensorSpec struct {
	name  string
	shape []int
	mean  float64
	std   float64
}

func (c *Config) tensorSpecs() []tensorSpec {
	H, I := c.HiddenSize, c.IntermediateSize
	lin := func(name string, out, in int) tensorSpec {
		return tensorSpec{name: name + ".weight", shape: []int{out, in}, std: 1 / math.Sqrt(float64(in))}
	}
	norm := func(name string, n int) tensorSpec {
		return tensorSpec{name: name + ".weight", shape: []int{n}, mean: 1, std: 0.1}
	}
	bias := func(name string, n int) tensorSpec {
		return tensorSpec{name: name + ".bias", shape: []int{n}, std: 0.1}
	}
	// Embeddings scaled so that tied logits have a standard deviation near 2:
	// peaked enough that greedy decoding is not decided by rounding.
	specs := []tensorSpec{{name: "model.embed_tokens.weight", shape: []int{c.VocabSize, H}, std: 2 / math.Sqrt(float64(H))}, norm("model.norm", H)}
	if !c.TieWordEmbeddings {
		specs = append(specs, tensorSpec{name: "lm_head.weight", shape: []int{c.VocabSize, H}, std: 2 / math.Sqrt(float64(H))})
	}
	qkvBias, oBias := c.AttentionBias, c.AttentionBias && c.ModelType != Qwen2
	for i := 0; i < c.NumHiddenLayers; i++ {
		p := fmt.Sprintf("model.layers.%d.", i)
		specs = append(specs, norm(p+"input_layernorm", H), norm(p+"post_attention_layernorm", H),
			lin(p+"self_attn.q_proj", c.QDim(), H), lin(p+"self_attn.k_proj", c.KVDim(), H),
			lin(p+"self_attn.v_proj", c.KVDim(), H), lin(p+"self_attn.o_proj", H, c.QDim()),
			lin(p+"mlp.gate_proj", I, H), lin(p+"mlp.up_proj", I, H), lin(p+"mlp.down_proj", H, I))
		if qkvBias {
			specs = append(specs, bias(p+"self_attn.q_proj", c.QDim()), bias(p+"self_attn.k_proj", c.KVDim()), bias(p+"self_attn.v_proj", c.KVDim()))
		}
		if oBias {
			specs = append(specs, bias(p+"self_attn.o_proj", H))
		}
		if c.MLPBias {
			specs = append(specs, bias(p+"mlp.gate_proj", I), bias(p+"mlp.up_proj", I), bias(p+"mlp.down_proj", H))
		}
		if c.QKNorm() {
			specs = append(specs, norm(p+"self_attn.q_norm", c.HeadDim), norm(p+"self_attn.k_norm", c.HeadDim))
		}
	}
	sort.Slice(specs, func(i, j int) bool { return specs[i].name < specs[j].name })
	return specs
}

// RandomTensors draws every parameter of cfg from seed. Each tensor has its
// own generator (PCG seeded by seed and a hash of its name), so the values
// do not depend on order or parallelism, and the same seed always gives the
// same checkpoint — tests rebuild fixtures' checkpoints from the seed alone.
// Linear weights are N(0, 1/in), norms N(1, 0.1²), biases N(0, 0.1²).
func RandomTensors(cfg *Config, seed uint64, dtype safetensors.DType) ([]safetensors.Tensor, error) {
	specs := cfg.tensorSpecs()
	out := make([]safetensors.Tensor, len(specs))
	errs := make([]error, len(specs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				s := specs[i]
				h := fnv.New64a()
				h.Write([]byte(s.name))
				rng := rand.New(rand.NewPCG(seed, h.Sum64()))
				n := 1
				for _, d := range s.shape {
					n *= d
				}
				vals := make([]float32, n)
				for j := range vals {
					vals[j] = float32(s.mean + s.std*rng.NormFloat64())
				}
				out[i], errs[i] = safetensors.NewTensor(s.name, dtype, s.shape, vals)
			}
		}()
	}
	for i := range specs {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// WriteRandom writes a randomly initialised checkpoint of cfg to dir in the
// Hugging Face layout: config.json, generation_config.json and
// model.safetensors (dtype F32 or BF16). Tokenizer files are the caller's.
func WriteRandom(dir string, cfg *Config, seed uint64, dtype safetensors.DType) error {
	switch dtype {
	case safetensors.F32:
		cfg.TorchDtype = "float32"
	case safetensors.BF16:
		cfg.TorchDtype = "bfloat16"
	default:
		return fmt.Errorf("write random model: dtype %s: want F32 or BF16", dtype)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write random model: %w", err)
	}
	d, err := defaultsFor(cfg.ModelType)
	if err != nil {
		return err
	}
	hf := cfg.hfConfig()
	hf["transformers_version"] = "4.51.0"
	gen := map[string]any{"bos_token_id": d.bos, "eos_token_id": d.eos, "transformers_version": "4.51.0"}
	for k, v := range d.generation {
		gen[k] = v
	}
	for name, v := range map[string]any{"config.json": hf, "generation_config.json": gen} {
		b, err := jsonMarshal(v)
		if err != nil {
			return fmt.Errorf("write random model: %s: %w", name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), append(b, '\n'), 0o644); err != nil {
			return fmt.Errorf("write random model: %w", err)
		}
	}
	tensors, err := RandomTensors(cfg, seed, dtype)
	if err != nil {
		return fmt.Errorf("write random model: %w", err)
	}
	if err := safetensors.WriteFile(filepath.Join(dir, "model.safetensors"), tensors, map[string]string{"format": "pt"}); err != nil {
		return fmt.Errorf("write random model: %w", err)
	}
	return nil
}

// jsonMarshal renders config-like maps the way WriteRandom does.
func jsonMarshal(v any) ([]byte, error) { return json.MarshalIndent(v, "", "  ") }
