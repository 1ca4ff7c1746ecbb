package train

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/clawrl/clawrl/model"
)

// The bridge to package model, so inference and training share one config
// parser, one set of base weights in memory, and one PEFT adapter loader and
// writer: the trainer's Weights alias a model.Model's float32 slices, and
// adapters move between the two as model.Adapter values.

// archOf maps a parsed model config to the trainer's shape.
func archOf(c *model.Config) (Arch, error) {
	a := Arch{
		Vocab: c.VocabSize, Hidden: c.HiddenSize, Intermediate: c.IntermediateSize,
		Layers: c.NumHiddenLayers, Heads: c.NumAttentionHeads, KVHeads: c.NumKeyValueHeads,
		HeadDim: c.HeadDim, RMSNormEps: c.RMSNormEps, RopeTheta: c.RopeTheta,
		TieEmbeddings: c.TieWordEmbeddings, QKNorm: c.QKNorm(), QKVBias: c.AttentionBias,
		InvFreq: c.RopeInvFreq(),
	}
	return a, a.validate()
}

// ArchFromConfig parses a Hugging Face config.json with package model's
// parser.
func ArchFromConfig(raw []byte) (Arch, error) {
	c, err := model.ParseConfig(raw)
	if err != nil {
		return Arch{}, err
	}
	return archOf(c)
}

func tensorOver(name string, data []float32, copyData bool, shape ...int) *Tensor {
	if copyData {
		data = append([]float32(nil), data...)
	}
	return &Tensor{Name: name, Shape: shape, Data: data}
}

// FromModel builds training weights over a loaded model. With copyWeights
// false the base tensors alias the model's slices (LoRA training next to a
// serving engine costs no second copy; the trainer never writes frozen
// tensors). Full fine-tuning while the model serves needs copyWeights true.
// bf16-resident models are widened to float32 copies either way.
func FromModel(m *model.Model, copyWeights bool) (*Weights, error) {
	a, err := archOf(m.Config)
	if err != nil {
		return nil, err
	}
	mw := m.Weights
	lin := func(name string, l *model.Linear) *Linear {
		data := l.W
		cp := copyWeights
		if data == nil && l.Q != nil {
			if !copyWeights {
				// QLoRA: the frozen base stays in its blocks.
				return &Linear{In: l.In, Out: l.Out, W: &Tensor{Name: name + ".weight", Shape: []int{l.Out, l.In}},
					Q: l.Q, B: biasOf(name, l, copyWeights)}
			}
			// Full fine-tuning needs float weights to update.
			data, cp = l.Dequantized(), false
		}
		if data == nil && l.WBF16 != nil {
			data = make([]float32, len(l.WBF16))
			for i, b := range l.WBF16 {
				data[i] = bf16ToF32(b)
			}
			cp = false
		}
		out := &Linear{In: l.In, Out: l.Out, W: tensorOver(name+".weight", data, cp, l.Out, l.In)}
		if l.Bias != nil {
			out.B = tensorOver(name+".bias", l.Bias, copyWeights, l.Out)
		}
		return out
	}
	w := &Weights{Arch: a, model: m}
	if copyWeights {
		w.model = nil // the copy no longer matches the model's slices
	}
	embed := lin("model.embed_tokens", &mw.Embed)
	w.Embed, w.embedQ = embed.W, embed.Q
	for i := range mw.Blocks {
		b := &mw.Blocks[i]
		p := fmt.Sprintf("model.layers.%d.", i)
		l := Layer{
			InputNorm: tensorOver(p+"input_layernorm.weight", b.InputNorm, copyWeights, a.Hidden),
			PostNorm:  tensorOver(p+"post_attention_layernorm.weight", b.PostAttnNorm, copyWeights, a.Hidden),
			Q:         lin(p+"self_attn.q_proj", &b.Q),
			K:         lin(p+"self_attn.k_proj", &b.K),
			V:         lin(p+"self_attn.v_proj", &b.V),
			O:         lin(p+"self_attn.o_proj", &b.O),
			Gate:      lin(p+"mlp.gate_proj", &b.Gate),
			Up:        lin(p+"mlp.up_proj", &b.Up),
			Down:      lin(p+"mlp.down_proj", &b.Down),
		}
		if b.QNorm != nil {
			l.QNorm = tensorOver(p+"self_attn.q_norm.weight", b.QNorm, copyWeights, a.HeadDim)
			l.KNorm = tensorOver(p+"self_attn.k_norm.weight", b.KNorm, copyWeights, a.HeadDim)
		}
		w.Layers = append(w.Layers, l)
	}
	w.FinalNorm = tensorOver("model.norm.weight", mw.FinalNorm, copyWeights, a.Hidden)
	if !a.TieEmbeddings {
		head := lin("lm_head", mw.LMHead)
		w.LMHead, w.lmHeadQ = head.W, head.Q
	}
	if w.model != nil && mw.BF16() {
		w.model = nil
	}
	return w, nil
}

func biasOf(name string, l *model.Linear, copyData bool) *Tensor {
	if l.Bias == nil {
		return nil
	}
	return tensorOver(name+".bias", l.Bias, copyData, l.Out)
}

func bf16ToF32(b uint16) float32 { return math.Float32frombits(uint32(b) << 16) }

// Model returns a model.Model that reads the same float32 slices as w (the
// one w came from, or a new view), for inference on the weights being
// trained and for loading adapters with the model's PEFT loader.
func (w *Weights) Model() (*model.Model, error) {
	if w.model != nil {
		return w.model, nil
	}
	raw := w.ConfigJSON
	if raw == nil {
		var err error
		if raw, err = w.Arch.configJSON(); err != nil {
			return nil, err
		}
	}
	cfg, err := model.ParseConfig(raw)
	if err != nil {
		return nil, fmt.Errorf("model view: %w", err)
	}
	lin := func(l *Linear) model.Linear {
		ml := model.Linear{Out: l.Out, In: l.In, W: l.W.Data}
		if l.B != nil {
			ml.Bias = l.B.Data
		}
		return ml
	}
	mw := &model.Weights{Embed: model.Linear{Out: w.Arch.Vocab, In: w.Arch.Hidden, W: w.Embed.Data}, FinalNorm: w.FinalNorm.Data}
	for i := range w.Layers {
		l := &w.Layers[i]
		b := model.Block{InputNorm: l.InputNorm.Data, PostAttnNorm: l.PostNorm.Data,
			Q: lin(l.Q), K: lin(l.K), V: lin(l.V), O: lin(l.O), Gate: lin(l.Gate), Up: lin(l.Up), Down: lin(l.Down)}
		if l.QNorm != nil {
			b.QNorm, b.KNorm = l.QNorm.Data, l.KNorm.Data
		}
		mw.Blocks = append(mw.Blocks, b)
	}
	if w.LMHead != nil {
		mw.LMHead = &model.Linear{Out: w.Arch.Vocab, In: w.Arch.Hidden, W: w.LMHead.Data}
	} else {
		mw.LMHead = &mw.Embed
	}
	w.model = model.New(cfg, mw)
	return w.model, nil
}

// AttachAdapter copies a model adapter into w as trainable LoRA tensors
// (replacing any attached ones) and returns its settings.
func AttachAdapter(w *Weights, a *model.Adapter) (LoRAConfig, error) {
	if len(a.Layers) != len(w.Layers) {
		return LoRAConfig{}, fmt.Errorf("attach adapter: %d layers, model has %d", len(a.Layers), len(w.Layers))
	}
	for i := range w.Layers {
		for m, nl := range w.Layers[i].linears() {
			nl.lin.LoRA = nil
			lo := a.Layers[i][m]
			if lo == nil {
				continue
			}
			l := nl.lin
			if len(lo.A) != lo.R*l.In || len(lo.B) != l.Out*lo.R {
				return LoRAConfig{}, fmt.Errorf("attach adapter: layer %d %s: A %d, B %d values for r %d, in %d, out %d", i, nl.path, len(lo.A), len(lo.B), lo.R, l.In, l.Out)
			}
			prefix := fmt.Sprintf("base_model.model.model.layers.%d.%s", i, nl.path)
			l.LoRA = &LoRA{
				A:    tensorOver(prefix+".lora_A.weight", lo.A, true, lo.R, l.In),
				B:    tensorOver(prefix+".lora_B.weight", lo.B, true, l.Out, lo.R),
				Rank: lo.R, Scale: lo.Scale, Dropout: float32(a.Config.LoraDropout),
			}
		}
	}
	cfg := w.attachedLoRAConfig()
	if cfg.Rank == 0 {
		return cfg, fmt.Errorf("attach adapter: no LoRA weights")
	}
	cfg.Alpha = a.Config.LoraAlpha
	return cfg, nil
}

// ExportAdapter snapshots w's adapters as a model.Adapter (copies: training
// may go on while an engine serves the snapshot).
func ExportAdapter(w *Weights, cfg LoRAConfig, base string) (*model.Adapter, error) {
	a := &model.Adapter{Config: model.AdapterConfig{
		PeftType: "LORA", TaskType: "CAUSAL_LM", R: cfg.Rank, LoraAlpha: cfg.Alpha,
		TargetModules: cfg.TargetModules, Bias: "none", LoraDropout: cfg.Dropout,
		BaseModelNameOrPath: base, InferenceMode: true,
		// PEFT calls .keys() on these: null makes from_pretrained fail.
		RankPattern: map[string]int{}, AlphaPattern: map[string]float64{},
	}}
	a.Layers = make([][7]*model.LoRA, len(w.Layers))
	n := 0
	for i := range w.Layers {
		for m, nl := range w.Layers[i].linears() {
			lo := nl.lin.LoRA
			if lo == nil {
				continue
			}
			a.Layers[i][m] = &model.LoRA{R: lo.Rank, Scale: lo.Scale,
				A: append([]float32(nil), lo.A.Data...), B: append([]float32(nil), lo.B.Data...)}
			n++
		}
	}
	if n == 0 {
		return nil, fmt.Errorf("export adapter: no LoRA adapters attached")
	}
	return a, nil
}

// configJSON describes Arch as a Hugging Face config, for weights that were
// not loaded from one.
func (a Arch) configJSON() ([]byte, error) {
	mt := "llama"
	switch {
	case a.QKNorm:
		mt = "qwen3"
	case a.QKVBias:
		mt = "qwen2"
	}
	c := map[string]any{
		"model_type": mt, "vocab_size": a.Vocab, "hidden_size": a.Hidden,
		"intermediate_size": a.Intermediate, "num_hidden_layers": a.Layers,
		"num_attention_heads": a.Heads, "num_key_value_heads": a.KVHeads, "head_dim": a.HeadDim,
		"rms_norm_eps": a.RMSNormEps, "rope_theta": a.RopeTheta, "tie_word_embeddings": a.TieEmbeddings,
		"hidden_act": "silu", "attention_bias": a.QKVBias && mt != "qwen2",
	}
	return json.MarshalIndent(c, "", "  ")
}
