package train

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/clawrl/clawrl/model"
	"github.com/clawrl/clawrl/quant"
)

// Arch is the shape of a Qwen3 / Qwen2 / Llama decoder, the fields the
// training forward and backward read.
type Arch struct {
	Vocab, Hidden, Intermediate int
	Layers, Heads, KVHeads      int
	HeadDim                     int
	RMSNormEps                  float64
	RopeTheta                   float64
	TieEmbeddings               bool
	QKNorm                      bool // Qwen3: RMSNorm on each q and k head before RoPE
	QKVBias                     bool // Qwen2: biases on q, k and v projections
	// InvFreq are the rotary inverse frequencies (with any rope scaling
	// applied, from package model); nil computes plain RoPE from RopeTheta.
	InvFreq []float64
}

func (a Arch) validate() error {
	switch {
	case a.Vocab <= 0 || a.Hidden <= 0 || a.Intermediate <= 0 || a.Layers <= 0:
		return fmt.Errorf("arch: non-positive size in %+v", a)
	case a.Heads <= 0 || a.KVHeads <= 0 || a.Heads%a.KVHeads != 0:
		return fmt.Errorf("arch: %d heads not a multiple of %d kv heads", a.Heads, a.KVHeads)
	case a.HeadDim <= 0 || a.HeadDim%2 != 0:
		return fmt.Errorf("arch: head_dim %d must be positive and even", a.HeadDim)
	}
	return nil
}

// Tensor is one named parameter. Grad is nil for a frozen tensor.
type Tensor struct {
	Name  string // Hugging Face (or PEFT) name
	Shape []int
	Data  []float32
	Grad  []float32
}

func newTensor(name string, shape ...int) *Tensor {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return &Tensor{Name: name, Shape: slices.Clone(shape), Data: make([]float32, n)}
}

// Size is the number of elements.
func (t *Tensor) Size() int { return len(t.Data) }

func (t *Tensor) trainable() {
	if t.Grad == nil {
		t.Grad = make([]float32, len(t.Data))
	}
}

func gradOf(t *Tensor) []float32 {
	if t == nil {
		return nil
	}
	return t.Grad
}

// Linear is a projection y = x·Wᵀ + b with an optional LoRA adapter
// y += scale·(dropout(x)·Aᵀ)·Bᵀ.
type Linear struct {
	In, Out int
	W       *Tensor // [Out, In]; W.Data is nil when Q is set
	// Q is a frozen base weight kept as GGUF quantized blocks (QLoRA: no
	// float32 copy of the base). The forward runs model's quantized kernels
	// on it, the backward's dx = dy·W dequantizes it a tile at a time.
	Q    *quant.Matrix
	B    *Tensor // [Out], nil without bias
	LoRA *LoRA
}

// LoRA is one adapter pair. A is [r, In], B is [Out, r].
type LoRA struct {
	A, B    *Tensor
	Rank    int
	Scale   float32 // alpha / r
	Dropout float32
}

// Layer is one decoder block. QNorm and KNorm are nil unless Arch.QKNorm.
type Layer struct {
	InputNorm, PostNorm *Tensor
	QNorm, KNorm        *Tensor
	Q, K, V, O          *Linear
	Gate, Up, Down      *Linear
}

// linears lists the block's projections by PEFT module name.
func (l *Layer) linears() []namedLinear {
	return []namedLinear{
		{"self_attn.q_proj", l.Q}, {"self_attn.k_proj", l.K}, {"self_attn.v_proj", l.V},
		{"self_attn.o_proj", l.O}, {"mlp.gate_proj", l.Gate}, {"mlp.up_proj", l.Up},
		{"mlp.down_proj", l.Down},
	}
}

type namedLinear struct {
	path string
	lin  *Linear
}

// Weights is a whole decoder. LMHead is nil when tied to Embed.
type Weights struct {
	Arch      Arch
	Embed     *Tensor // [Vocab, Hidden]
	Layers    []Layer
	FinalNorm *Tensor
	LMHead    *Tensor
	// ConfigJSON is the config.json the weights came from (nil when built
	// in memory); SaveFull writes it back unchanged.
	ConfigJSON []byte
	// NameOrPath names the base model in saved adapters
	// (base_model_name_or_path); "" for none.
	NameOrPath string
	// model is the inference view over the same slices, when there is one.
	model *model.Model
	// embedQ and lmHeadQ are the embedding's and the untied head's
	// quantized blocks (their tensors' Data nil), when the model has them.
	embedQ, lmHeadQ *quant.Matrix
}

// NewWeights allocates zeroed weights of the given shape, named as in a
// Hugging Face checkpoint.
func NewWeights(a Arch) (*Weights, error) {
	if err := a.validate(); err != nil {
		return nil, err
	}
	D, F := a.Hidden, a.Intermediate
	qd, kd := a.Heads*a.HeadDim, a.KVHeads*a.HeadDim
	w := &Weights{Arch: a, Embed: newTensor("model.embed_tokens.weight", a.Vocab, D)}
	lin := func(name string, in, out int, bias bool) *Linear {
		l := &Linear{In: in, Out: out, W: newTensor(name+".weight", out, in)}
		if bias {
			l.B = newTensor(name+".bias", out)
		}
		return l
	}
	for i := range a.Layers {
		p := fmt.Sprintf("model.layers.%d.", i)
		l := Layer{
			InputNorm: newTensor(p+"input_layernorm.weight", D),
			PostNorm:  newTensor(p+"post_attention_layernorm.weight", D),
			Q:         lin(p+"self_attn.q_proj", D, qd, a.QKVBias),
			K:         lin(p+"self_attn.k_proj", D, kd, a.QKVBias),
			V:         lin(p+"self_attn.v_proj", D, kd, a.QKVBias),
			O:         lin(p+"self_attn.o_proj", qd, D, false),
			Gate:      lin(p+"mlp.gate_proj", D, F, false),
			Up:        lin(p+"mlp.up_proj", D, F, false),
			Down:      lin(p+"mlp.down_proj", F, D, false),
		}
		if a.QKNorm {
			l.QNorm = newTensor(p+"self_attn.q_norm.weight", a.HeadDim)
			l.KNorm = newTensor(p+"self_attn.k_norm.weight", a.HeadDim)
		}
		w.Layers = append(w.Layers, l)
	}
	w.FinalNorm = newTensor("model.norm.weight", D)
	if !a.TieEmbeddings {
		w.LMHead = newTensor("lm_head.weight", a.Vocab, D)
	}
	return w, nil
}

// BaseTensors lists every base-model tensor (not LoRA), in checkpoint order.
func (w *Weights) BaseTensors() []*Tensor {
	ts := []*Tensor{w.Embed}
	for i := range w.Layers {
		l := &w.Layers[i]
		ts = append(ts, l.InputNorm, l.PostNorm)
		if l.QNorm != nil {
			ts = append(ts, l.QNorm, l.KNorm)
		}
		for _, nl := range l.linears() {
			ts = append(ts, nl.lin.W)
			if nl.lin.B != nil {
				ts = append(ts, nl.lin.B)
			}
		}
	}
	ts = append(ts, w.FinalNorm)
	if w.LMHead != nil {
		ts = append(ts, w.LMHead)
	}
	return ts
}

// LoRATensors lists the adapter tensors (A then B per module), empty when no
// adapter is attached.
func (w *Weights) LoRATensors() []*Tensor {
	var ts []*Tensor
	for i := range w.Layers {
		for _, nl := range w.Layers[i].linears() {
			if nl.lin.LoRA != nil {
				ts = append(ts, nl.lin.LoRA.A, nl.lin.LoRA.B)
			}
		}
	}
	return ts
}

// lmWeight is the LM head matrix, the embedding when tied.
// Quantized reports whether any base weight is kept as quantized blocks.
func (w *Weights) Quantized() bool {
	if w.embedQ != nil || w.lmHeadQ != nil {
		return true
	}
	for i := range w.Layers {
		for _, nl := range w.Layers[i].linears() {
			if nl.lin.Q != nil {
				return true
			}
		}
	}
	return false
}

// lmQ is the LM head's quantized blocks, nil when it is float32.
func (w *Weights) lmQ() *quant.Matrix {
	if w.LMHead != nil {
		return w.lmHeadQ
	}
	return w.embedQ
}

func (w *Weights) lmWeight() *Tensor {
	if w.LMHead != nil {
		return w.LMHead
	}
	return w.Embed
}

// InitRandom initialises w like transformers' _init_weights: every matrix
// and bias normal(0, std) (std 0.02 when 0), every norm weight 1. For tests,
// benchmarks and `clawrl model new`-style scratch models.
func InitRandom(w *Weights, seed uint64, std float64) {
	if std == 0 {
		std = 0.02
	}
	rng := rand.New(rand.NewPCG(seed, 0x1a17))
	for _, t := range w.BaseTensors() {
		isNorm := len(t.Shape) == 1 && strings.HasSuffix(t.Name, "norm.weight")
		for i := range t.Data {
			if isNorm {
				t.Data[i] = 1
			} else {
				t.Data[i] = float32(std * rng.NormFloat64())
			}
		}
	}
}
