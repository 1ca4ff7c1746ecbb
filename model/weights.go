package model

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/clawrl/clawrl/safetensors"
)

// Block is one decoder layer's weights, named after the checkpoint's modules.
type Block struct {
	InputNorm      []float32 // input_layernorm [hidden]
	Q, K, V, O     Linear    // self_attn.{q,k,v,o}_proj
	QNorm, KNorm   []float32 // self_attn.{q,k}_norm [head_dim], Qwen3 only
	PostAttnNorm   []float32 // post_attention_layernorm [hidden]
	Gate, Up, Down Linear    // mlp.{gate,up,down}_proj
}

// Weights are all of a model's parameters.
type Weights struct {
	Embed     Linear // model.embed_tokens [vocab, hidden]
	Blocks    []Block
	FinalNorm []float32 // model.norm [hidden]
	// LMHead is lm_head [vocab, hidden], or &Embed when the embeddings are tied.
	LMHead *Linear
}

// Options control how a checkpoint is loaded.
type Options struct {
	// WeightDType is how linear and embedding weights are kept in memory:
	// "f32", "bf16" (half the memory and decode bandwidth; compute stays
	// float32), or "" (the default): bf16 for tensors the checkpoint stores
	// in bf16, f32 for the rest. Keeping bf16 costs no accuracy — the
	// widening is exact and the kernels sum in the same order either way —
	// only a little prefill speed. Norms and biases are always float32.
	// For a GGUF file: "" or "f32" dequantize every tensor; "quant" keeps
	// the quantized matrices as their blocks (model/quantized.go).
	WeightDType string
}

// loader reads tensors from a checkpoint with shape checks.
type loader struct {
	ck    *safetensors.Checkpoint
	dtype string // "", "f32" or "bf16" (Options.WeightDType)
	used  map[string]bool
}

func (l *loader) tensor(name string, shape ...int) (safetensors.Tensor, error) {
	t, err := l.ck.Tensor(name)
	if err != nil {
		return t, err
	}
	if err := t.CheckShape(shape...); err != nil {
		return t, err
	}
	l.used[name] = true
	return t, nil
}

func (l *loader) vector(name string, n int) ([]float32, error) {
	t, err := l.tensor(name, n)
	if err != nil {
		return nil, err
	}
	return t.Float32()
}

func (l *loader) linear(prefix string, out, in int, bias bool) (Linear, error) {
	lin := Linear{Out: out, In: in}
	t, err := l.tensor(prefix+".weight", out, in)
	if err != nil {
		return lin, err
	}
	if l.dtype == "bf16" || (l.dtype == "" && t.DType == safetensors.BF16) {
		raw, err := t.BF16()
		if err != nil {
			return lin, fmt.Errorf("load %s.weight: %w", prefix, err)
		}
		// The mapping may be unmapped later; keep our own copy.
		lin.WBF16 = append([]uint16(nil), raw...)
	} else if lin.W, err = t.Float32(); err != nil {
		return lin, err
	}
	if bias {
		if lin.Bias, err = l.vector(prefix+".bias", out); err != nil {
			return lin, err
		}
	}
	return lin, nil
}

// loadWeights reads every parameter cfg names from ck, checking shapes.
func loadWeights(cfg *Config, ck *safetensors.Checkpoint, opts Options) (*Weights, error) {
	switch opts.WeightDType {
	case "", "f32", "bf16":
	default:
		return nil, fmt.Errorf("weight dtype %q: want f32 or bf16", opts.WeightDType)
	}
	l := &loader{ck: ck, dtype: opts.WeightDType, used: map[string]bool{}}
	H, I := cfg.HiddenSize, cfg.IntermediateSize
	w := &Weights{}
	var err error
	if w.Embed, err = l.linear("model.embed_tokens", cfg.VocabSize, H, false); err != nil {
		return nil, err
	}
	qkvBias, oBias := cfg.AttentionBias, cfg.AttentionBias && cfg.ModelType != Qwen2
	w.Blocks = make([]Block, cfg.NumHiddenLayers)
	for i := range w.Blocks {
		b := &w.Blocks[i]
		p := fmt.Sprintf("model.layers.%d.", i)
		steps := []func() error{
			func() (err error) { b.InputNorm, err = l.vector(p+"input_layernorm.weight", H); return },
			func() (err error) { b.Q, err = l.linear(p+"self_attn.q_proj", cfg.QDim(), H, qkvBias); return },
			func() (err error) { b.K, err = l.linear(p+"self_attn.k_proj", cfg.KVDim(), H, qkvBias); return },
			func() (err error) { b.V, err = l.linear(p+"self_attn.v_proj", cfg.KVDim(), H, qkvBias); return },
			func() (err error) { b.O, err = l.linear(p+"self_attn.o_proj", H, cfg.QDim(), oBias); return },
			func() (err error) { b.PostAttnNorm, err = l.vector(p+"post_attention_layernorm.weight", H); return },
			func() (err error) { b.Gate, err = l.linear(p+"mlp.gate_proj", I, H, cfg.MLPBias); return },
			func() (err error) { b.Up, err = l.linear(p+"mlp.up_proj", I, H, cfg.MLPBias); return },
			func() (err error) { b.Down, err = l.linear(p+"mlp.down_proj", H, I, cfg.MLPBias); return },
		}
		if cfg.QKNorm() {
			steps = append(steps,
				func() (err error) { b.QNorm, err = l.vector(p+"self_attn.q_norm.weight", cfg.HeadDim); return },
				func() (err error) { b.KNorm, err = l.vector(p+"self_attn.k_norm.weight", cfg.HeadDim); return })
		}
		for _, step := range steps {
			if err := step(); err != nil {
				return nil, err
			}
		}
	}
	if w.FinalNorm, err = l.vector("model.norm.weight", H); err != nil {
		return nil, err
	}
	if cfg.TieWordEmbeddings {
		w.LMHead = &w.Embed
		l.used["lm_head.weight"] = true // saved by some exporters even when tied
	} else {
		head, err := l.linear("lm_head", cfg.VocabSize, H, false)
		if err != nil {
			return nil, err
		}
		w.LMHead = &head
	}
	var unused []string
	for _, n := range ck.Names() {
		if !l.used[n] && !strings.HasSuffix(n, "rotary_emb.inv_freq") {
			unused = append(unused, n)
		}
	}
	if len(unused) > 0 {
		slog.Warn("checkpoint tensors not used by the model", "dir", ck.Dir, "count", len(unused), "first", unused[0])
	}
	return w, nil
}

// BF16 reports whether the linear weights are kept as bfloat16.
func (w *Weights) BF16() bool { return w.Embed.WBF16 != nil }
