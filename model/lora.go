package model

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/clawrl/clawrl/blas"
	"github.com/clawrl/clawrl/safetensors"
)

// Module names a linear layer of a decoder block that LoRA can adapt.
type Module int

// The adaptable modules, in PEFT's target_modules spelling via String.
const (
	ModQ Module = iota
	ModK
	ModV
	ModO
	ModGate
	ModUp
	ModDown
	numModules
)

var moduleNames = [numModules]string{"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}
var modulePaths = [numModules]string{"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj", "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"}

func (m Module) String() string { return moduleNames[m] }

// ModuleByName maps "q_proj" etc. to a Module.
func ModuleByName(name string) (Module, bool) {
	for i, n := range moduleNames {
		if n == name {
			return Module(i), true
		}
	}
	return 0, false
}

// linear returns block b's Linear for module m.
func (b *Block) linear(m Module) *Linear {
	switch m {
	case ModQ:
		return &b.Q
	case ModK:
		return &b.K
	case ModV:
		return &b.V
	case ModO:
		return &b.O
	case ModGate:
		return &b.Gate
	case ModUp:
		return &b.Up
	}
	return &b.Down
}

// AdapterConfig is PEFT's adapter_config.json (the fields that matter here;
// Extra keeps the rest so a round trip loses nothing).
type AdapterConfig struct {
	PeftType            string             `json:"peft_type"`
	TaskType            string             `json:"task_type"`
	R                   int                `json:"r"`
	LoraAlpha           float64            `json:"lora_alpha"`
	TargetModules       []string           `json:"target_modules"`
	UseRSLoRA           bool               `json:"use_rslora"`
	FanInFanOut         bool               `json:"fan_in_fan_out"`
	Bias                string             `json:"bias"`
	LoraDropout         float64            `json:"lora_dropout"`
	RankPattern         map[string]int     `json:"rank_pattern"`
	AlphaPattern        map[string]float64 `json:"alpha_pattern"`
	UseDoRA             bool               `json:"use_dora"`
	BaseModelNameOrPath string             `json:"base_model_name_or_path"`
	InferenceMode       bool               `json:"inference_mode"`
}

// ParseAdapterConfig parses and checks PEFT's adapter_config.json: a LoRA
// adapter this package can apply (no DoRA, no fan_in_fan_out, positive
// rank).
func ParseAdapterConfig(raw []byte) (AdapterConfig, error) {
	var ac AdapterConfig
	if err := json.Unmarshal(raw, &ac); err != nil {
		return ac, err
	}
	switch {
	case ac.PeftType != "" && ac.PeftType != "LORA":
		return ac, fmt.Errorf("peft_type %q, want LORA", ac.PeftType)
	case ac.UseDoRA || ac.FanInFanOut:
		return ac, fmt.Errorf("use_dora and fan_in_fan_out are not supported")
	case ac.R <= 0:
		return ac, fmt.Errorf("r = %d, want a positive rank", ac.R)
	case math.IsNaN(ac.LoraAlpha) || math.IsInf(ac.LoraAlpha, 0):
		return ac, fmt.Errorf("lora_alpha = %v", ac.LoraAlpha)
	}
	return ac, nil
}

// LoRA is one adapted layer: y += Scale · (x·Aᵀ)·Bᵀ.
type LoRA struct {
	R     int
	A     []float32 // lora_A [R, in]
	B     []float32 // lora_B [out, R]
	Scale float32   // lora_alpha / R (or / sqrt(R) with rsLoRA)
}

// Adapter is a PEFT LoRA adapter for one model shape. It is read-only once
// loaded, so any number of requests can run on it at once, and several
// adapters (policy versions) can serve side by side over one base model.
type Adapter struct {
	Config AdapterConfig
	// Layers[i][m] is the LoRA on block i's module m, nil when not adapted.
	Layers [][numModules]*LoRA
}

// PEFT's tensor names: base_model.model.<module path>.lora_A.weight.
const peftPrefix = "base_model.model."

func loraTensorName(layer int, m Module, ab string) string {
	return fmt.Sprintf("%smodel.layers.%d.%s.lora_%s.weight", peftPrefix, layer, modulePaths[m], ab)
}

var loraNameRE = regexp.MustCompile(`^base_model\.model\.model\.layers\.(\d+)\.(self_attn|mlp)\.(\w+_proj)\.lora_([AB])(?:\.default)?\.weight$`)

// LoadAdapter reads a PEFT adapter directory (adapter_config.json and
// adapter_model.safetensors) and checks it against the model's shapes.
func (m *Model) LoadAdapter(dir string) (*Adapter, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "adapter_config.json"))
	if err != nil {
		return nil, fmt.Errorf("load adapter: %w", err)
	}
	ac, err := ParseAdapterConfig(raw)
	if err != nil {
		return nil, fmt.Errorf("load adapter %s: adapter_config.json: %w", dir, err)
	}
	path := filepath.Join(dir, "adapter_model.safetensors")
	f, err := safetensors.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load adapter: %w", err)
	}
	defer f.Close()
	cfg := m.Config
	a := &Adapter{Config: ac, Layers: make([][numModules]*LoRA, cfg.NumHiddenLayers)}
	for _, name := range f.Names() {
		sub := loraNameRE.FindStringSubmatch(name)
		if sub == nil {
			if strings.Contains(name, "lora_") {
				return nil, fmt.Errorf("load adapter %s: tensor %s: not a LoRA weight of a decoder layer this model has", path, name)
			}
			continue // e.g. modules_to_save copies we do not use
		}
		var layer int
		fmt.Sscan(sub[1], &layer)
		mod, ok := ModuleByName(sub[3])
		if !ok || layer >= cfg.NumHiddenLayers || modulePaths[mod] != sub[2]+"."+sub[3] {
			return nil, fmt.Errorf("load adapter %s: tensor %s: no such module in a %d-layer model", path, name, cfg.NumHiddenLayers)
		}
		if sub[4] == "B" {
			continue // read with its A
		}
		base := m.Weights.Blocks[layer].linear(mod)
		ta, err := f.Tensor(name)
		if err != nil {
			return nil, err
		}
		r := 0
		if len(ta.Shape) == 2 {
			r = ta.Shape[0]
		}
		if err := ta.CheckShape(r, base.In); err != nil || r == 0 {
			return nil, fmt.Errorf("load adapter: %w", ta.CheckShape(max(r, 1), base.In))
		}
		bName := strings.Replace(name, ".lora_A", ".lora_B", 1)
		tb, err := f.Tensor(bName)
		if err != nil {
			return nil, fmt.Errorf("load adapter: %w", err)
		}
		if err := tb.CheckShape(base.Out, r); err != nil {
			return nil, fmt.Errorf("load adapter: %w", err)
		}
		lo := &LoRA{R: r, Scale: ac.scale(name, r)}
		if lo.A, err = ta.Float32(); err != nil {
			return nil, err
		}
		if lo.B, err = tb.Float32(); err != nil {
			return nil, err
		}
		a.Layers[layer][mod] = lo
	}
	return a, nil
}

// scale is PEFT's scaling for the module a tensor belongs to: alpha/r, with
// alpha_pattern overriding alpha for matching module names.
func (ac AdapterConfig) scale(tensorName string, r int) float32 {
	alpha := ac.LoraAlpha
	module := strings.TrimPrefix(tensorName, peftPrefix)
	if i := strings.Index(module, ".lora_"); i >= 0 {
		module = module[:i]
	}
	for pat, v := range ac.AlphaPattern {
		if module == pat || strings.HasSuffix(module, "."+pat) {
			alpha = v
		}
	}
	if ac.UseRSLoRA {
		return float32(alpha / math.Sqrt(float64(r)))
	}
	return float32(alpha / float64(r))
}

// NewAdapter makes a fresh adapter with PEFT's default initialisation:
// A ~ kaiming-uniform (bound 1/sqrt(in)), B = 0, so it starts as a no-op.
// targets are module names (q_proj, …); empty means all seven.
func (m *Model) NewAdapter(r int, alpha float64, targets []string, seed uint64) (*Adapter, error) {
	if len(targets) == 0 {
		targets = moduleNames[:]
	}
	ac := AdapterConfig{PeftType: "LORA", TaskType: "CAUSAL_LM", R: r, LoraAlpha: alpha, TargetModules: targets, Bias: "none"}
	a := &Adapter{Config: ac, Layers: make([][numModules]*LoRA, m.Config.NumHiddenLayers)}
	rng := rand.New(rand.NewPCG(seed, 0x10a))
	for i := range a.Layers {
		for _, t := range targets {
			mod, ok := ModuleByName(t)
			if !ok {
				return nil, fmt.Errorf("new adapter: target module %q: want one of %v", t, moduleNames)
			}
			base := m.Weights.Blocks[i].linear(mod)
			lo := &LoRA{R: r, A: make([]float32, r*base.In), B: make([]float32, base.Out*r), Scale: float32(alpha / float64(r))}
			bound := 1 / math.Sqrt(float64(base.In))
			for j := range lo.A {
				lo.A[j] = float32((2*rng.Float64() - 1) * bound)
			}
			a.Layers[i][mod] = lo
		}
	}
	return a, nil
}

// Save writes the adapter in PEFT's layout (adapter_config.json and
// adapter_model.safetensors), which PEFT's from_pretrained loads.
func (a *Adapter) Save(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("save adapter: %w", err)
	}
	var tensors []safetensors.Tensor
	for i, layer := range a.Layers {
		for mod, lo := range layer {
			if lo == nil {
				continue
			}
			in, out := len(lo.A)/lo.R, len(lo.B)/lo.R
			ta, err := safetensors.NewTensor(loraTensorName(i, Module(mod), "A"), safetensors.F32, []int{lo.R, in}, lo.A)
			if err != nil {
				return fmt.Errorf("save adapter %s: %w", dir, err)
			}
			tb, err := safetensors.NewTensor(loraTensorName(i, Module(mod), "B"), safetensors.F32, []int{out, lo.R}, lo.B)
			if err != nil {
				return fmt.Errorf("save adapter %s: %w", dir, err)
			}
			tensors = append(tensors, ta, tb)
		}
	}
	if err := safetensors.WriteFile(filepath.Join(dir, "adapter_model.safetensors"), tensors, map[string]string{"format": "pt"}); err != nil {
		return fmt.Errorf("save adapter: %w", err)
	}
	ac := a.Config
	// PEFT reads these as dicts; null makes from_pretrained fail.
	if ac.RankPattern == nil {
		ac.RankPattern = map[string]int{}
	}
	if ac.AlphaPattern == nil {
		ac.AlphaPattern = map[string]float64{}
	}
	if ac.PeftType == "" {
		ac.PeftType = "LORA"
	}
	if ac.Bias == "" {
		ac.Bias = "none"
	}
	cfgJSON, err := json.MarshalIndent(ac, "", "  ")
	if err != nil {
		return fmt.Errorf("save adapter %s: %w", dir, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "adapter_config.json"), cfgJSON, 0o644); err != nil {
		return fmt.Errorf("save adapter: %w", err)
	}
	return nil
}

// loraSpan is a run of consecutive batch rows sharing one LoRA.
type loraSpan struct {
	lo, hi int
	lora   *LoRA
}

// loraForward adds each span's low-rank update to out[T, outDim]:
// out[rows] += scale · (inp[rows]·Aᵀ)·Bᵀ, beside the base matmul rather than
// merged into it, so rows in one batch can use different adapters.
func loraForward(out, inp []float32, spans []loraSpan, in, outDim int) {
	for _, s := range spans {
		n := s.hi - s.lo
		tmp := make([]float32, n*s.lora.R)
		s.lora.apply(out[s.lo*outDim:], inp[s.lo*in:], tmp, n, in, outDim)
	}
}

// apply adds scale·(inp·Aᵀ)·Bᵀ to out[n, outDim], leaving inp·Aᵀ in u
// [n, R]. The serving forward and the trainer's both run it, so a policy
// scores the same tokens the same, bit for bit, in either.
func (lo *LoRA) apply(out, inp, u []float32, n, in, outDim int) {
	r := lo.R
	blas.Sgemm(false, true, n, r, in, 1, inp, in, lo.A, in, 0, u, r)
	blas.Sgemm(false, true, n, outDim, r, lo.Scale, u, r, lo.B, r, 1, out, outDim)
}
