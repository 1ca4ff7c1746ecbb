package model

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
)

// Family is a supported architecture family.
type Family string

// The supported families, named like Hugging Face's model_type.
const (
	Qwen3 Family = "qwen3"
	Qwen2 Family = "qwen2"
	Llama Family = "llama"
)

// Config is the part of a Hugging Face config.json the forward pass needs.
type Config struct {
	Architectures         []string `json:"architectures"`
	ModelType             Family   `json:"model_type"`
	HiddenSize            int      `json:"hidden_size"`
	IntermediateSize      int      `json:"intermediate_size"`
	NumHiddenLayers       int      `json:"num_hidden_layers"`
	NumAttentionHeads     int      `json:"num_attention_heads"`
	NumKeyValueHeads      int      `json:"num_key_value_heads"`
	HeadDim               int      `json:"head_dim"`
	RMSNormEps            float64  `json:"rms_norm_eps"`
	RopeTheta             float64  `json:"rope_theta"`
	RopeScaling           *Rope    `json:"rope_scaling"`
	TieWordEmbeddings     bool     `json:"tie_word_embeddings"`
	AttentionBias         bool     `json:"attention_bias"`
	MLPBias               bool     `json:"mlp_bias"`
	MaxPositionEmbeddings int      `json:"max_position_embeddings"`
	VocabSize             int      `json:"vocab_size"`
	HiddenAct             string   `json:"hidden_act"`
	TorchDtype            string   `json:"torch_dtype,omitempty"`
	BOSTokenID            *int     `json:"bos_token_id"`
	// EOSTokenIDs holds eos_token_id, which config.json spells as a number or
	// a list.
	EOSTokenIDs []int `json:"-"`
	// RopeFreqFactors divide the rotary frequencies one by one (llama.cpp's
	// rope_freqs tensor, which GGUF files of Llama 3.1-style models carry
	// instead of rope_scaling); nil = none.
	RopeFreqFactors []float32 `json:"-"`
}

// Rope describes rotary embeddings beyond the base frequency: Hugging Face's
// rope_scaling (and transformers 5's rope_parameters, which also carries
// rope_theta). Type "default" (or empty) is plain RoPE; "linear" divides
// positions by Factor; "llama3" rescales low frequencies as Llama 3.1 does.
type Rope struct {
	Type                          string  `json:"rope_type"`
	LegacyType                    string  `json:"type,omitempty"`
	RopeTheta                     float64 `json:"rope_theta,omitempty"`
	Factor                        float64 `json:"factor,omitempty"`
	LowFreqFactor                 float64 `json:"low_freq_factor,omitempty"`
	HighFreqFactor                float64 `json:"high_freq_factor,omitempty"`
	OriginalMaxPositionEmbeddings int     `json:"original_max_position_embeddings,omitempty"`
}

// LoadConfig reads dir/config.json.
func LoadConfig(dir string) (*Config, error) {
	path := filepath.Join(dir, "config.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load config: %w", err)
	}
	c, err := ParseConfig(raw)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	return c, nil
}

// ParseConfig parses and validates config.json contents, filling the
// defaults transformers fills (head_dim = hidden/heads, kv heads = heads,
// rope_theta 10000, eps 1e-6).
func ParseConfig(raw []byte) (*Config, error) {
	var c Config
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	var extra struct {
		EOS            json.RawMessage `json:"eos_token_id"`
		RopeParameters *Rope           `json:"rope_parameters"`
		Dtype          string          `json:"dtype"`
		TextConfig     json.RawMessage `json:"text_config"`
	}
	if err := json.Unmarshal(raw, &extra); err != nil {
		return nil, err
	}
	if len(extra.EOS) > 0 && string(extra.EOS) != "null" {
		var one int
		if err := json.Unmarshal(extra.EOS, &one); err == nil {
			c.EOSTokenIDs = []int{one}
		} else if err := json.Unmarshal(extra.EOS, &c.EOSTokenIDs); err != nil {
			return nil, fmt.Errorf("eos_token_id: %w", err)
		}
	}
	if c.RopeScaling == nil && extra.RopeParameters != nil {
		c.RopeScaling = extra.RopeParameters
	}
	if c.RopeScaling != nil {
		if c.RopeScaling.Type == "" {
			c.RopeScaling.Type = c.RopeScaling.LegacyType
		}
		if c.RopeTheta == 0 {
			c.RopeTheta = c.RopeScaling.RopeTheta
		}
	}
	if c.TorchDtype == "" {
		c.TorchDtype = extra.Dtype
	}
	if c.ModelType == "" && len(c.Architectures) > 0 {
		c.ModelType = familyOfArchitecture(c.Architectures[0])
	}
	if err := c.fillAndValidate(); err != nil {
		return nil, err
	}
	return &c, nil
}

func familyOfArchitecture(a string) Family {
	switch a {
	case "Qwen3ForCausalLM":
		return Qwen3
	case "Qwen2ForCausalLM":
		return Qwen2
	case "LlamaForCausalLM":
		return Llama
	}
	return ""
}

func (c *Config) fillAndValidate() error {
	switch c.ModelType {
	case Qwen3, Llama:
	case Qwen2:
		// Qwen2 always has q/k/v biases; its config does not say so.
		c.AttentionBias = true
	default:
		return fmt.Errorf("model_type %q (architectures %v) is not supported: want qwen3, qwen2 or llama", c.ModelType, c.Architectures)
	}
	if c.NumKeyValueHeads == 0 {
		c.NumKeyValueHeads = c.NumAttentionHeads
	}
	if c.HeadDim == 0 && c.NumAttentionHeads > 0 {
		c.HeadDim = c.HiddenSize / c.NumAttentionHeads
	}
	if c.RopeTheta == 0 {
		c.RopeTheta = 10000
	}
	if c.RMSNormEps == 0 {
		c.RMSNormEps = 1e-6
	}
	if c.HiddenAct == "" {
		c.HiddenAct = "silu"
	}
	switch {
	case c.HiddenSize <= 0, c.IntermediateSize <= 0, c.NumHiddenLayers <= 0, c.NumAttentionHeads <= 0, c.VocabSize <= 0, c.HeadDim <= 0:
		return fmt.Errorf("hidden_size %d, intermediate_size %d, num_hidden_layers %d, num_attention_heads %d, head_dim %d, vocab_size %d: all must be positive",
			c.HiddenSize, c.IntermediateSize, c.NumHiddenLayers, c.NumAttentionHeads, c.HeadDim, c.VocabSize)
	case c.NumAttentionHeads%c.NumKeyValueHeads != 0:
		return fmt.Errorf("num_attention_heads %d is not a multiple of num_key_value_heads %d", c.NumAttentionHeads, c.NumKeyValueHeads)
	case c.HeadDim%2 != 0:
		return fmt.Errorf("head_dim %d is odd; rotary embeddings need it even", c.HeadDim)
	case c.HiddenAct != "silu":
		return fmt.Errorf("hidden_act %q is not supported: want silu", c.HiddenAct)
	}
	if r := c.RopeScaling; r != nil {
		switch r.Type {
		case "", "default":
		case "linear":
			if r.Factor <= 0 {
				return fmt.Errorf("rope_scaling linear: factor %v must be positive", r.Factor)
			}
		case "llama3":
			if r.Factor <= 0 || r.LowFreqFactor <= 0 || r.HighFreqFactor <= r.LowFreqFactor || r.OriginalMaxPositionEmbeddings <= 0 {
				return fmt.Errorf("rope_scaling llama3: factor %v, low_freq_factor %v, high_freq_factor %v, original_max_position_embeddings %d are inconsistent",
					r.Factor, r.LowFreqFactor, r.HighFreqFactor, r.OriginalMaxPositionEmbeddings)
			}
		default:
			return fmt.Errorf("rope_scaling type %q is not supported: want default, linear or llama3", r.Type)
		}
	}
	return nil
}

// QKNorm reports whether the family normalises queries and keys per head
// (Qwen3's q_norm and k_norm).
func (c *Config) QKNorm() bool { return c.ModelType == Qwen3 }

// QDim is the width of the query projection (heads × head_dim).
func (c *Config) QDim() int { return c.NumAttentionHeads * c.HeadDim }

// KVDim is the width of the key and value projections.
func (c *Config) KVDim() int { return c.NumKeyValueHeads * c.HeadDim }

// invFreq returns the rotary inverse frequencies, one per pair of head
// dimensions, with the configured scaling applied (transformers'
// _compute_default_rope_parameters and _compute_llama3_parameters).
func (c *Config) invFreq() []float64 {
	half := c.HeadDim / 2
	inv := make([]float64, half)
	for i := range inv {
		// torch computes base ** (arange(0, dim, 2, int64).float() / dim) in
		// float32; do the same so the angles match bit for bit.
		exp := float32(2*i) / float32(c.HeadDim)
		inv[i] = float64(float32(1.0 / float32(math.Pow(c.RopeTheta, float64(exp)))))
	}
	if len(c.RopeFreqFactors) == len(inv) {
		for i, f := range c.RopeFreqFactors {
			inv[i] /= float64(f)
		}
	}
	r := c.RopeScaling
	if r == nil {
		return inv
	}
	switch r.Type {
	case "linear":
		for i := range inv {
			inv[i] /= r.Factor
		}
	case "llama3":
		lowWavelen := float64(r.OriginalMaxPositionEmbeddings) / r.LowFreqFactor
		highWavelen := float64(r.OriginalMaxPositionEmbeddings) / r.HighFreqFactor
		for i, f := range inv {
			wavelen := 2 * math.Pi / f
			switch {
			case wavelen > lowWavelen:
				inv[i] = f / r.Factor
			case wavelen < highWavelen:
				inv[i] = f
			default:
				smooth := (float64(r.OriginalMaxPositionEmbeddings)/wavelen - r.LowFreqFactor) / (r.HighFreqFactor - r.LowFreqFactor)
				inv[i] = (1-smooth)*f/r.Factor + float64(smooth*f)
			}
		}
	}
	return inv
}
