package train

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"

	"github.com/clawrl/clawrl/safetensors"
)

// Checkpoints on disk, in the layouts other tools read:
//
//	adapter_config.json + adapter_model.safetensors   PEFT LoRA adapter
//	config.json + model.safetensors                  Hugging Face weights (full mode)
//	optimizer.safetensors + trainer_state.json       AdamW moments and step, to resume exactly

// hfConfig is the subset of a Hugging Face config.json the trainer reads.
type hfConfig struct {
	ModelType             string   `json:"model_type"`
	VocabSize             int      `json:"vocab_size"`
	HiddenSize            int      `json:"hidden_size"`
	IntermediateSize      int      `json:"intermediate_size"`
	NumHiddenLayers       int      `json:"num_hidden_layers"`
	NumAttentionHeads     int      `json:"num_attention_heads"`
	NumKeyValueHeads      int      `json:"num_key_value_heads"`
	HeadDim               int      `json:"head_dim"`
	RMSNormEps            float64  `json:"rms_norm_eps"`
	RopeTheta             float64  `json:"rope_theta"`
	TieWordEmbeddings     *bool    `json:"tie_word_embeddings"`
	AttentionBias         *bool    `json:"attention_bias"`
	RopeScaling           any      `json:"rope_scaling"`
	RopeParameters        ropeJSON `json:"rope_parameters"`
	HiddenAct             string   `json:"hidden_act"`
	UseSlidingWindow      bool     `json:"use_sliding_window"`
	NameOrPath            string   `json:"_name_or_path"`
	TransformersArchNames []string `json:"architectures"`
}

type ropeJSON struct {
	RopeTheta float64 `json:"rope_theta"`
	RopeType  string  `json:"rope_type"`
}

// ArchFromConfig reads a Hugging Face config.json (qwen3, qwen2, llama).
func ArchFromConfig(data []byte) (Arch, error) {
	var c hfConfig
	if err := json.Unmarshal(data, &c); err != nil {
		return Arch{}, fmt.Errorf("config.json: %w", err)
	}
	a := Arch{
		Vocab: c.VocabSize, Hidden: c.HiddenSize, Intermediate: c.IntermediateSize,
		Layers: c.NumHiddenLayers, Heads: c.NumAttentionHeads, KVHeads: c.NumKeyValueHeads,
		HeadDim: c.HeadDim, RMSNormEps: c.RMSNormEps, RopeTheta: c.RopeTheta,
	}
	if a.KVHeads == 0 {
		a.KVHeads = a.Heads
	}
	if a.HeadDim == 0 && a.Heads > 0 {
		a.HeadDim = a.Hidden / a.Heads
	}
	if a.RopeTheta == 0 {
		a.RopeTheta = c.RopeParameters.RopeTheta
	}
	if a.RopeTheta == 0 {
		a.RopeTheta = 10000
	}
	if a.RMSNormEps == 0 {
		a.RMSNormEps = 1e-6
	}
	if c.RopeParameters.RopeType != "" && c.RopeParameters.RopeType != "default" || c.RopeScaling != nil {
		return Arch{}, fmt.Errorf("config.json: rope scaling is not supported by the trainer")
	}
	if c.HiddenAct != "" && c.HiddenAct != "silu" {
		return Arch{}, fmt.Errorf("config.json: hidden_act %q, the trainer supports silu", c.HiddenAct)
	}
	switch c.ModelType {
	case "qwen3":
		a.QKNorm = true
		a.TieEmbeddings = true
	case "qwen2":
		a.QKVBias = true
		a.TieEmbeddings = false
	case "llama":
		a.TieEmbeddings = false
	default:
		return Arch{}, fmt.Errorf("config.json: model_type %q, the trainer supports qwen3, qwen2 and llama", c.ModelType)
	}
	if c.TieWordEmbeddings != nil {
		a.TieEmbeddings = *c.TieWordEmbeddings
	}
	if c.AttentionBias != nil && c.ModelType != "qwen2" {
		a.QKVBias = *c.AttentionBias
	}
	if err := a.validate(); err != nil {
		return Arch{}, fmt.Errorf("config.json: %w", err)
	}
	return a, nil
}

// LoadWeights reads a Hugging Face model folder (config.json and one or more
// safetensors files) into float32 weights.
func LoadWeights(dir string) (*Weights, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, fmt.Errorf("load model %s: %w", dir, err)
	}
	a, err := ArchFromConfig(raw)
	if err != nil {
		return nil, fmt.Errorf("load model %s: %w", dir, err)
	}
	w, err := NewWeights(a)
	if err != nil {
		return nil, err
	}
	w.ConfigJSON = raw
	w.NameOrPath = dir
	ck, err := safetensors.OpenDir(dir)
	if err != nil {
		return nil, fmt.Errorf("load model %s: %w", dir, err)
	}
	defer ck.Close()
	for _, t := range w.BaseTensors() {
		if err := readInto(ck, t); err != nil {
			return nil, fmt.Errorf("load model %s: %w", dir, err)
		}
	}
	return w, nil
}

type tensorSource interface {
	Tensor(name string) (safetensors.Tensor, error)
}

func readInto(src tensorSource, t *Tensor) error {
	st, err := src.Tensor(t.Name)
	if err != nil {
		return err
	}
	if err := st.CheckShape(t.Shape...); err != nil {
		return err
	}
	return st.Float32Into(t.Data)
}

func encode(ts []*Tensor, name func(*Tensor) string, data func(*Tensor) []float32) ([]safetensors.Tensor, error) {
	out := make([]safetensors.Tensor, 0, len(ts))
	for _, t := range ts {
		st, err := safetensors.NewTensor(name(t), safetensors.F32, t.Shape, data(t))
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

func tensorName(t *Tensor) string    { return t.Name }
func tensorData(t *Tensor) []float32 { return t.Data }

// SaveFull writes the base weights as a Hugging Face folder: config.json
// (the one loaded, or one built from Arch) and model.safetensors.
func SaveFull(w *Weights, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("save model %s: %w", dir, err)
	}
	cfg := w.ConfigJSON
	if cfg == nil {
		var err error
		if cfg, err = w.Arch.configJSON(); err != nil {
			return err
		}
	}
	if err := writeFileAtomic(filepath.Join(dir, "config.json"), cfg); err != nil {
		return err
	}
	ts, err := encode(w.BaseTensors(), tensorName, tensorData)
	if err != nil {
		return fmt.Errorf("save model %s: %w", dir, err)
	}
	return safetensors.WriteFile(filepath.Join(dir, "model.safetensors"), ts, map[string]string{"format": "pt"})
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

// AdapterConfig is PEFT's adapter_config.json for a LoRA adapter: the fields
// PEFT reads, with PEFT's defaults for the rest.
type AdapterConfig struct {
	PeftType             string         `json:"peft_type"`
	TaskType             string         `json:"task_type"`
	BaseModelNameOrPath  *string        `json:"base_model_name_or_path"`
	Revision             *string        `json:"revision"`
	R                    int            `json:"r"`
	LoraAlpha            float64        `json:"lora_alpha"`
	LoraDropout          float64        `json:"lora_dropout"`
	TargetModules        any            `json:"target_modules"` // a list, or a regex string (unsupported here)
	Bias                 string         `json:"bias"`
	FanInFanOut          bool           `json:"fan_in_fan_out"`
	InferenceMode        bool           `json:"inference_mode"`
	InitLoraWeights      bool           `json:"init_lora_weights"`
	UseRSLoRA            bool           `json:"use_rslora"`
	UseDoRA              bool           `json:"use_dora"`
	ModulesToSave        []string       `json:"modules_to_save"`
	LayersToTransform    any            `json:"layers_to_transform"`
	LayersPattern        any            `json:"layers_pattern"`
	RankPattern          map[string]any `json:"rank_pattern"`
	AlphaPattern         map[string]any `json:"alpha_pattern"`
	LoraBias             bool           `json:"lora_bias"`
	ExcludeModules       any            `json:"exclude_modules"`
	TargetParameters     any            `json:"target_parameters"`
	MegatronCore         string         `json:"megatron_core,omitempty"`
	AutoMapping          any            `json:"auto_mapping"`
	TrainableTokenIndice any            `json:"trainable_token_indices"`
}

// Targets returns the target module names; only PEFT's list form is
// supported.
func (c *AdapterConfig) Targets() ([]string, error) {
	list, ok := c.TargetModules.([]any)
	if !ok {
		return nil, fmt.Errorf("adapter_config.json: target_modules %v: only a list of module names is supported", c.TargetModules)
	}
	var out []string
	for _, m := range list {
		s, ok := m.(string)
		if !ok || !slices.Contains(AllProjections(), s) {
			return nil, fmt.Errorf("adapter_config.json: target module %v not supported", m)
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("adapter_config.json: no target modules")
	}
	return out, nil
}

// loraScale is PEFT's scaling: alpha/r, or alpha/√r with rsLoRA.
func (c *AdapterConfig) loraScale() float32 {
	if c.UseRSLoRA {
		return float32(c.LoraAlpha / math.Sqrt(float64(c.R)))
	}
	return float32(c.LoraAlpha / float64(c.R))
}

// SaveAdapter writes the adapters of w in PEFT's layout. base names the base
// model (base_model_name_or_path), "" for none.
func SaveAdapter(w *Weights, cfg LoRAConfig, base, dir string) error {
	ts := w.LoRATensors()
	if len(ts) == 0 {
		return errors.New("save adapter: no LoRA adapters attached")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("save adapter %s: %w", dir, err)
	}
	targets := make([]any, len(cfg.TargetModules))
	for i, m := range cfg.TargetModules {
		targets[i] = m
	}
	ac := AdapterConfig{
		PeftType: "LORA", TaskType: "CAUSAL_LM", R: cfg.Rank, LoraAlpha: cfg.Alpha,
		LoraDropout: cfg.Dropout, TargetModules: targets, Bias: "none", InferenceMode: true,
		InitLoraWeights: true, RankPattern: map[string]any{}, AlphaPattern: map[string]any{},
		MegatronCore: "megatron.core",
	}
	if base != "" {
		ac.BaseModelNameOrPath = &base
	}
	raw, err := json.MarshalIndent(ac, "", "  ")
	if err != nil {
		return err
	}
	sts, err := encode(ts, tensorName, tensorData)
	if err != nil {
		return fmt.Errorf("save adapter %s: %w", dir, err)
	}
	if err := safetensors.WriteFile(filepath.Join(dir, "adapter_model.safetensors"), sts, map[string]string{"format": "pt"}); err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, "adapter_config.json"), raw)
}

// ParseAdapterConfig parses PEFT's adapter_config.json and checks it is a
// plain LoRA adapter this package can run: no DoRA, no adapter biases, no
// per-module rank or alpha patterns, a list of known target modules.
func ParseAdapterConfig(raw []byte) (*AdapterConfig, []string, error) {
	var ac AdapterConfig
	if err := json.Unmarshal(raw, &ac); err != nil {
		return nil, nil, fmt.Errorf("adapter_config.json: %w", err)
	}
	switch {
	case ac.PeftType != "LORA":
		return nil, nil, fmt.Errorf("adapter_config.json: peft_type %q, want LORA", ac.PeftType)
	case ac.UseDoRA:
		return nil, nil, fmt.Errorf("adapter_config.json: DoRA is not supported")
	case ac.Bias != "" && ac.Bias != "none" || ac.LoraBias:
		return nil, nil, fmt.Errorf("adapter_config.json: adapter biases are not supported")
	case len(ac.RankPattern) > 0 || len(ac.AlphaPattern) > 0:
		return nil, nil, fmt.Errorf("adapter_config.json: rank_pattern/alpha_pattern are not supported")
	case ac.FanInFanOut:
		return nil, nil, fmt.Errorf("adapter_config.json: fan_in_fan_out is not supported")
	case ac.R <= 0 || ac.R > 1<<16:
		return nil, nil, fmt.Errorf("adapter_config.json: r = %d", ac.R)
	case ac.LoraDropout < 0 || ac.LoraDropout >= 1:
		return nil, nil, fmt.Errorf("adapter_config.json: lora_dropout %g outside [0, 1)", ac.LoraDropout)
	}
	targets, err := ac.Targets()
	if err != nil {
		return nil, nil, err
	}
	return &ac, targets, nil
}

var loraNameRE = regexp.MustCompile(`^base_model\.model\.model\.layers\.(\d+)\.(self_attn|mlp)\.(\w+)\.lora_([AB])\.weight$`)

// LoadAdapter reads a PEFT LoRA adapter and attaches it to w (replacing any
// attached adapters). It returns the adapter's settings as a LoRAConfig.
func LoadAdapter(w *Weights, dir string) (LoRAConfig, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "adapter_config.json"))
	if err != nil {
		return LoRAConfig{}, fmt.Errorf("load adapter %s: %w", dir, err)
	}
	ac, targets, err := ParseAdapterConfig(raw)
	if err != nil {
		return LoRAConfig{}, fmt.Errorf("load adapter %s: %w", dir, err)
	}
	f, err := safetensors.Open(filepath.Join(dir, "adapter_model.safetensors"))
	if err != nil {
		return LoRAConfig{}, fmt.Errorf("load adapter %s: %w", dir, err)
	}
	defer f.Close()
	for i := range w.Layers {
		for _, nl := range w.Layers[i].linears() {
			nl.lin.LoRA = nil
		}
	}
	for _, name := range f.Names() {
		m := loraNameRE.FindStringSubmatch(name)
		if m == nil {
			return LoRAConfig{}, fmt.Errorf("load adapter %s: unexpected tensor %s", dir, name)
		}
		layer, _ := strconv.Atoi(m[1])
		if layer >= len(w.Layers) {
			return LoRAConfig{}, fmt.Errorf("load adapter %s: tensor %s: model has %d layers", dir, name, len(w.Layers))
		}
		var lin *Linear
		for _, nl := range w.Layers[layer].linears() {
			if nl.path == m[2]+"."+m[3] {
				lin = nl.lin
			}
		}
		if lin == nil {
			return LoRAConfig{}, fmt.Errorf("load adapter %s: tensor %s: unknown module", dir, name)
		}
		if lin.LoRA == nil {
			prefix := fmt.Sprintf("base_model.model.model.layers.%d.%s.%s", layer, m[2], m[3])
			lin.LoRA = &LoRA{
				A:    newTensor(prefix+".lora_A.weight", ac.R, lin.In),
				B:    newTensor(prefix+".lora_B.weight", lin.Out, ac.R),
				Rank: ac.R, Scale: ac.loraScale(), Dropout: float32(ac.LoraDropout),
			}
		}
		t := lin.LoRA.A
		if m[4] == "B" {
			t = lin.LoRA.B
		}
		if err := readInto(f, t); err != nil {
			return LoRAConfig{}, fmt.Errorf("load adapter %s: %w", dir, err)
		}
	}
	for i := range w.Layers {
		for _, nl := range w.Layers[i].linears() {
			if slices.Contains(targets, moduleName(nl.path)) && nl.lin.LoRA == nil {
				return LoRAConfig{}, fmt.Errorf("load adapter %s: layer %d %s: tensors missing", dir, i, nl.path)
			}
		}
	}
	return LoRAConfig{Rank: ac.R, Alpha: ac.LoraAlpha, Dropout: ac.LoraDropout, TargetModules: targets}, nil
}

// trainerState is trainer_state.json: what, besides the tensors, resuming
// needs.
type trainerState struct {
	Step        int64       `json:"step"`
	MicroBatch  uint64      `json:"micro_batches"`
	Mode        Mode        `json:"mode"`
	AdamW       AdamWConfig `json:"adamw"`
	Seed        uint64      `json:"seed"`
	MaxGradNorm float64     `json:"max_grad_norm"`
}

// SaveCheckpoint writes the trained weights (a PEFT adapter in LoRA mode,
// Hugging Face weights in full mode) with the optimizer state beside them,
// so Resume continues exactly where this left off.
func (t *Trainer) SaveCheckpoint(dir string) error {
	var err error
	if t.cfg.Mode == ModeLoRA {
		err = t.SaveAdapter(dir)
	} else {
		err = SaveFull(t.w, dir)
	}
	if err != nil {
		return err
	}
	var sts []safetensors.Tensor
	for i, p := range t.params {
		m, err := safetensors.NewTensor(p.Name+".exp_avg", safetensors.F32, p.Shape, t.opt.m[i])
		if err != nil {
			return err
		}
		v, err := safetensors.NewTensor(p.Name+".exp_avg_sq", safetensors.F32, p.Shape, t.opt.v[i])
		if err != nil {
			return err
		}
		sts = append(sts, m, v)
	}
	if err := safetensors.WriteFile(filepath.Join(dir, "optimizer.safetensors"), sts, nil); err != nil {
		return err
	}
	st := trainerState{Step: t.opt.step, MicroBatch: t.micro, Mode: t.cfg.Mode, AdamW: t.cfg.AdamW,
		Seed: t.cfg.Seed, MaxGradNorm: t.cfg.MaxGradNorm}
	raw, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, "trainer_state.json"), raw)
}

// SaveAdapter writes the LoRA adapters in PEFT layout.
func (t *Trainer) SaveAdapter(dir string) error {
	return SaveAdapter(t.w, t.cfg.LoRA, t.w.NameOrPath, dir)
}

// Resume restores the optimizer state and step count from a checkpoint
// folder written by SaveCheckpoint. The weights must already be the
// checkpoint's (LoadAdapter or LoadWeights from the same folder).
func (t *Trainer) Resume(dir string) error {
	raw, err := os.ReadFile(filepath.Join(dir, "trainer_state.json"))
	if err != nil {
		return fmt.Errorf("resume %s: %w", dir, err)
	}
	var st trainerState
	if err := json.Unmarshal(raw, &st); err != nil {
		return fmt.Errorf("resume %s: trainer_state.json: %w", dir, err)
	}
	if st.Mode != t.cfg.Mode {
		return fmt.Errorf("resume %s: checkpoint is %s mode, trainer is %s", dir, st.Mode, t.cfg.Mode)
	}
	f, err := safetensors.Open(filepath.Join(dir, "optimizer.safetensors"))
	if err != nil {
		return fmt.Errorf("resume %s: %w", dir, err)
	}
	defer f.Close()
	for i, p := range t.params {
		for _, part := range []struct {
			suffix string
			dst    []float32
		}{{".exp_avg", t.opt.m[i]}, {".exp_avg_sq", t.opt.v[i]}} {
			if err := readInto(f, &Tensor{Name: p.Name + part.suffix, Shape: p.Shape, Data: part.dst}); err != nil {
				return fmt.Errorf("resume %s: %w", dir, err)
			}
		}
	}
	t.opt.step = st.Step
	t.micro = st.MicroBatch
	return nil
}

func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
