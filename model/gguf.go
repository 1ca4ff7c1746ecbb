package model

import (
	"fmt"
	"log/slog"
	"runtime"
	"strings"

	"github.com/clawrl/clawrl/gguf"
	"github.com/clawrl/clawrl/quant"
)

// GGUF files name the architecture and the tensors the llama.cpp way; this
// file maps them onto Config and Weights.

// ggufFamilies maps general.architecture to a family.
var ggufFamilies = map[string]struct {
	family Family
	arch   string
}{
	"llama": {Llama, "LlamaForCausalLM"},
	"qwen2": {Qwen2, "Qwen2ForCausalLM"},
	"qwen3": {Qwen3, "Qwen3ForCausalLM"},
}

// ConfigFromGGUF maps a GGUF header's metadata (and which tensors exist) to
// a Config, the way transformers' GGUF loader fills config.json.
func ConfigFromGGUF(h *gguf.Header) (*Config, error) {
	archName := h.Architecture()
	fam, ok := ggufFamilies[archName]
	if !ok {
		return nil, fmt.Errorf("general.architecture %q is not supported: want llama, qwen2 or qwen3", archName)
	}
	p := archName + "."
	c := &Config{Architectures: []string{fam.arch}, ModelType: fam.family, HiddenAct: "silu", TorchDtype: "float32"}
	ints := []struct {
		key      string
		dst      *int
		required bool
	}{
		{"embedding_length", &c.HiddenSize, true},
		{"feed_forward_length", &c.IntermediateSize, true},
		{"block_count", &c.NumHiddenLayers, true},
		{"attention.head_count", &c.NumAttentionHeads, true},
		{"attention.head_count_kv", &c.NumKeyValueHeads, false},
		{"attention.key_length", &c.HeadDim, false},
		{"context_length", &c.MaxPositionEmbeddings, false},
		{"vocab_size", &c.VocabSize, false},
	}
	for _, k := range ints {
		v, present := h.Get(p + k.key)
		if !present {
			if k.required {
				return nil, fmt.Errorf("metadata %s%s is missing", p, k.key)
			}
			continue
		}
		n, ok := h.Uint(p + k.key)
		if !ok || n > 1<<30 {
			return nil, fmt.Errorf("metadata %s%s = %v: want one non-negative integer", p, k.key, v)
		}
		*k.dst = int(n)
	}
	if v, ok := h.Get(p + "attention.value_length"); ok {
		if n, ok := h.Uint(p + "attention.value_length"); !ok || (c.HeadDim != 0 && int(n) != c.HeadDim) {
			return nil, fmt.Errorf("metadata %sattention.value_length %v differs from key_length %d: not supported", p, v, c.HeadDim)
		}
	}
	if c.HeadDim == 0 && c.NumAttentionHeads > 0 {
		c.HeadDim = c.HiddenSize / c.NumAttentionHeads
	}
	if v, ok := h.Get(p + "rope.dimension_count"); ok {
		if n, ok := h.Uint(p + "rope.dimension_count"); !ok || int(n) != c.HeadDim {
			return nil, fmt.Errorf("metadata %srope.dimension_count %v: partial rotary embeddings (head dim %d) are not supported", p, v, c.HeadDim)
		}
	}
	var ok2 bool
	if c.RMSNormEps, ok2 = h.Float(p + "attention.layer_norm_rms_epsilon"); !ok2 {
		return nil, fmt.Errorf("metadata %sattention.layer_norm_rms_epsilon is missing", p)
	}
	if theta, ok := h.Float(p + "rope.freq_base"); ok {
		c.RopeTheta = theta
	}
	if typ, ok := h.String(p + "rope.scaling.type"); ok && typ != "none" {
		switch typ {
		case "linear":
			f, _ := h.Float(p + "rope.scaling.factor")
			c.RopeScaling = &Rope{Type: "linear", Factor: f}
		default:
			return nil, fmt.Errorf("metadata %srope.scaling.type %q is not supported: want none or linear", p, typ)
		}
	}
	if c.VocabSize == 0 {
		if emb, ok := h.Tensor("token_embd.weight"); ok && len(emb.Dims) == 2 {
			c.VocabSize = int(min(emb.Dims[1], 1<<30))
		}
	}
	_, hasOutput := h.Tensor("output.weight")
	c.TieWordEmbeddings = !hasOutput
	if _, ok := h.Tensor("blk.0.attn_q.bias"); ok {
		c.AttentionBias = true
	}
	if _, ok := h.Tensor("blk.0.ffn_up.bias"); ok {
		c.MLPBias = true
	}
	if id, ok := h.Uint("tokenizer.ggml.bos_token_id"); ok && id < 1<<31 {
		bos := int(id)
		c.BOSTokenID = &bos
	}
	for _, key := range []string{"tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"} {
		if id, ok := h.Uint(key); ok && id < 1<<31 && !containsInt(c.EOSTokenIDs, int(id)) {
			c.EOSTokenIDs = append(c.EOSTokenIDs, int(id))
		}
	}
	if err := c.fillAndValidate(); err != nil {
		return nil, err
	}
	return c, nil
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// DefaultGGUFWeights is the weight dtype a server loads the GGUF file at
// path with when none is asked for, so that a quantized file stays
// quantized wherever this CPU has the kernels:
//   - "quant-f32" where every quantized matrix has a float32-activation
//     kernel (quant.HasF32Kernel: Q4_1 and Q8_0 with AVX2, as in the demo
//     model): the float32 model's answers at about three times its decode
//     speed (BENCHMARKS.md, "float32 activations over quantized blocks")
//     and a fifth of its memory;
//   - else "quant" where every one has an 8-bit-activation kernel
//     (quant.HasKernel: every block type with AVX2, as in a Q4_K_M file):
//     llama.cpp's arithmetic and answers, at its speed or better and
//     about a fifth of the float32 copy's memory (BENCHMARKS.md, "default
//     weights for K-quant files");
//   - else "f32", the dequantized copy (the pure-Go build, a CPU without
//     AVX2: the reference kernels are slower than blas on float32).
func DefaultGGUFWeights(path string) (string, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return "", fmt.Errorf("weights for %s: %w", path, err)
	}
	defer f.Close()
	dtype := "quant-f32"
	for _, t := range f.Header.Tensors {
		qt := quant.Type(t.Type)
		switch {
		case !qt.Supported() || quant.HasF32Kernel(qt):
		case quant.HasKernel(qt):
			dtype = "quant"
		default:
			return "f32", nil
		}
	}
	return dtype, nil
}

// IsGGUF reports whether path is a file that starts with the GGUF magic
// (Ollama's blobs have no extension, so the name cannot tell).
func IsGGUF(path string) bool { return gguf.IsFile(path) }

// LoadGGUF reads a GGUF file of a llama, qwen2 or qwen3 model. With
// WeightDType "quant" matrices of the block types package quant computes
// with (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K) stay quantized, in
// the file's mapping (the rest are dequantized): quant quantizes
// activations per block as llama.cpp does, so greedy ids follow llama.cpp's
// rather than float32's. "quant-f32" keeps the same blocks but the
// activations in float32 (quant.Matrix.F32Activations): the dequantized
// model's numbers within float32 rounding, with the blocks' memory and
// most of their speed. With "" or "f32" every tensor is dequantized to
// float32 (transformers' GGUF loader's numbers).
func LoadGGUF(path string, opts Options) (*Model, error) {
	switch opts.WeightDType {
	case "", "f32", "quant", "quant-f32":
	default:
		return nil, fmt.Errorf("load %s: weight dtype %q: GGUF weights load as f32, quant or quant-f32 (their blocks)", path, opts.WeightDType)
	}
	f, err := gguf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load model: %w", err)
	}
	l := &ggufLoader{f: f, used: map[string]bool{}, keepBlocks: strings.HasPrefix(opts.WeightDType, "quant"),
		f32Activations: opts.WeightDType == "quant-f32"}
	defer func() {
		// Quantized matrices read their blocks from the mapping: it is
		// unmapped once the last of them is unreachable, else now.
		if l.mapping != nil {
			runtime.AddCleanup(l.mapping, func(f *gguf.File) { _ = f.Close() }, f)
		} else {
			_ = f.Close()
		}
	}()
	cfg, err := ConfigFromGGUF(f.Header)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	if t, ok := f.Header.Tensor("rope_freqs.weight"); ok {
		// Llama 3.1-style RoPE: llama.cpp's converter stores the per-frequency
		// divisors instead of rope_scaling's parameters.
		if cfg.RopeFreqFactors, err = l.vector(t.Name, cfg.HeadDim/2); err != nil {
			return nil, fmt.Errorf("load %s: %w", path, err)
		}
	}
	w, err := l.weights(cfg)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	return New(cfg, w), nil
}

// ggufLoader reads tensors from a GGUF file with shape checks.
type ggufLoader struct {
	f    *gguf.File
	used map[string]bool
	// keepBlocks keeps quantized matrices as their blocks; mapping, set
	// once one does, is the owner every such matrix keeps alive.
	keepBlocks bool
	// f32Activations marks the kept matrices for float32 activations.
	f32Activations bool
	mapping        *struct{ f *gguf.File }
}

// tensor returns the named tensor, checking its shape, given outermost
// first as in PyTorch ([out, in] for a matrix; GGUF stores dims reversed).
func (l *ggufLoader) tensor(name string, shape ...int) (gguf.Tensor, error) {
	t, err := l.f.Tensor(name)
	if err != nil {
		return t, err
	}
	ok := len(t.Dims) == len(shape)
	for i := 0; ok && i < len(shape); i++ {
		ok = t.Dims[len(shape)-1-i] == uint64(shape[i])
	}
	if !ok {
		return t, fmt.Errorf("tensor %s: shape %s, want %v", name, t.ShapeString(), shape)
	}
	l.used[name] = true
	return t, nil
}

func (l *ggufLoader) vector(name string, n int) ([]float32, error) {
	t, err := l.tensor(name, n)
	if err != nil {
		return nil, err
	}
	return t.Float32()
}

// linear reads the [out, in] weight name+".weight" (and its bias). heads > 0
// undoes llama.cpp's rotary row permutation with that many heads.
func (l *ggufLoader) linear(name string, out, in int, bias bool, heads int) (Linear, error) {
	t, err := l.tensor(name+".weight", out, in)
	if err != nil {
		return Linear{}, err
	}
	raw := t.Data
	if heads > 0 {
		if raw, err = unpermuteRows(raw, out, heads); err != nil {
			return Linear{}, fmt.Errorf("tensor %s: %w", t.Name, err)
		}
	}
	var lin Linear
	if qt := quant.Type(t.Type); l.keepBlocks && qt.Supported() {
		lin, err = NewQuantLinear(qt, out, in, raw)
		if err == nil {
			lin.Q.F32Activations = l.f32Activations
		}
		if err == nil && heads == 0 { // unpermuted rows are a heap copy
			if l.mapping == nil {
				l.mapping = &struct{ f *gguf.File }{l.f}
			}
			lin.Q.SetOwner(l.mapping)
		}
	} else {
		lin, err = linearFromGGUF(t.Type, raw, out, in)
	}
	if err != nil {
		return Linear{}, fmt.Errorf("tensor %s: %w", t.Name, err)
	}
	if bias {
		if lin.Bias, err = l.vector(name+".bias", out); err != nil {
			return lin, err
		}
		if heads > 0 {
			lin.Bias = unpermuteVector(lin.Bias, heads)
		}
	}
	return lin, nil
}

// linearFromGGUF builds a Linear of out rows of in weights from a tensor's
// raw blocks (rows already in Hugging Face order). This is the one place a
// GGUF weight becomes a Linear: today it dequantizes to float32.
func linearFromGGUF(typ gguf.Type, raw []byte, out, in int) (Linear, error) {
	lin := Linear{Out: out, In: in, W: make([]float32, out*in)}
	if err := gguf.Dequantize(typ, raw, lin.W); err != nil {
		return Linear{}, err
	}
	return lin, nil
}

// unpermuteRows undoes the row order llama.cpp's converter gives llama q and
// k projections (LlamaModel.permute in convert_hf_to_gguf.py): within each
// head, GGUF row 2i+j is Hugging Face row j·half+i (half = head_dim/2), so
// the pairs RoPE rotates are adjacent in GGUF and half a head apart in
// Hugging Face's rotate_half layout. Rows move whole, so quantized blocks
// stay intact.
func unpermuteRows(raw []byte, rows, heads int) ([]byte, error) {
	if heads <= 0 || rows%heads != 0 || (rows/heads)%2 != 0 || len(raw)%rows != 0 {
		return nil, fmt.Errorf("%d rows do not split into %d heads of even size", rows, heads)
	}
	rowBytes := len(raw) / rows
	hd := rows / heads
	half := hd / 2
	out := make([]byte, len(raw))
	for h := range heads {
		for i := range half {
			for j := range 2 {
				src := h*hd + 2*i + j
				dst := h*hd + j*half + i
				copy(out[dst*rowBytes:(dst+1)*rowBytes], raw[src*rowBytes:(src+1)*rowBytes])
			}
		}
	}
	return out, nil
}

func unpermuteVector(v []float32, heads int) []float32 {
	hd := len(v) / heads
	half := hd / 2
	out := make([]float32, len(v))
	for h := range heads {
		for i := range half {
			for j := range 2 {
				out[h*hd+j*half+i] = v[h*hd+2*i+j]
			}
		}
	}
	return out
}

func (l *ggufLoader) weights(cfg *Config) (*Weights, error) {
	H, I := cfg.HiddenSize, cfg.IntermediateSize
	w := &Weights{}
	var err error
	if w.Embed, err = l.linear("token_embd", cfg.VocabSize, H, false, 0); err != nil {
		return nil, err
	}
	qkvBias, oBias := cfg.AttentionBias, cfg.AttentionBias && cfg.ModelType != Qwen2
	// Only llama files carry the rotary permutation; qwen2 and qwen3 use
	// llama.cpp's NeoX rope, which needs none.
	qHeads, kHeads := 0, 0
	if cfg.ModelType == Llama {
		qHeads, kHeads = cfg.NumAttentionHeads, cfg.NumKeyValueHeads
	}
	w.Blocks = make([]Block, cfg.NumHiddenLayers)
	for i := range w.Blocks {
		b := &w.Blocks[i]
		p := fmt.Sprintf("blk.%d.", i)
		steps := []func() error{
			func() (err error) { b.InputNorm, err = l.vector(p+"attn_norm.weight", H); return },
			func() (err error) { b.Q, err = l.linear(p+"attn_q", cfg.QDim(), H, qkvBias, qHeads); return },
			func() (err error) { b.K, err = l.linear(p+"attn_k", cfg.KVDim(), H, qkvBias, kHeads); return },
			func() (err error) { b.V, err = l.linear(p+"attn_v", cfg.KVDim(), H, qkvBias, 0); return },
			func() (err error) { b.O, err = l.linear(p+"attn_output", H, cfg.QDim(), oBias, 0); return },
			func() (err error) { b.PostAttnNorm, err = l.vector(p+"ffn_norm.weight", H); return },
			func() (err error) { b.Gate, err = l.linear(p+"ffn_gate", I, H, cfg.MLPBias, 0); return },
			func() (err error) { b.Up, err = l.linear(p+"ffn_up", I, H, cfg.MLPBias, 0); return },
			func() (err error) { b.Down, err = l.linear(p+"ffn_down", H, I, cfg.MLPBias, 0); return },
		}
		if cfg.QKNorm() {
			steps = append(steps,
				func() (err error) { b.QNorm, err = l.vector(p+"attn_q_norm.weight", cfg.HeadDim); return },
				func() (err error) { b.KNorm, err = l.vector(p+"attn_k_norm.weight", cfg.HeadDim); return })
		}
		for _, step := range steps {
			if err := step(); err != nil {
				return nil, err
			}
		}
	}
	if w.FinalNorm, err = l.vector("output_norm.weight", H); err != nil {
		return nil, err
	}
	if cfg.TieWordEmbeddings {
		w.LMHead = &w.Embed
	} else {
		head, err := l.linear("output", cfg.VocabSize, H, false, 0)
		if err != nil {
			return nil, err
		}
		w.LMHead = &head
	}
	l.used["rope_freqs.weight"] = true
	var unused []string
	for _, t := range l.f.Tensors {
		if !l.used[t.Name] {
			unused = append(unused, t.Name)
		}
	}
	if len(unused) > 0 {
		slog.Warn("GGUF tensors not used by the model", "file", l.f.Path, "count", len(unused), "names", strings.Join(unused[:min(len(unused), 5)], ","))
	}
	return w, nil
}

// HFConfigJSON renders c as the config.json transformers would write for it
// (what a GGUF model's exported checkpoints and adapters record as their
// base config).
func (c *Config) HFConfigJSON() ([]byte, error) { return jsonMarshal(c.hfConfig()) }
