package train

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/clawrl/clawrl/model"
	"github.com/clawrl/clawrl/safetensors"
)

// Checkpoints on disk, in the layouts other tools read:
//
//	adapter_config.json + adapter_model.safetensors   PEFT LoRA adapter
//	config.json + model.safetensors                  Hugging Face weights (full mode)
//	optimizer.safetensors + trainer_state.json       AdamW moments and step, to resume exactly

// LoadWeights reads a Hugging Face model folder with package model's loader
// into float32 training weights (not shared with anything else).
func LoadWeights(dir string) (*Weights, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, fmt.Errorf("load model %s: %w", dir, err)
	}
	m, err := model.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("load model %s: %w", dir, err)
	}
	w, err := FromModel(m, false)
	if err != nil {
		return nil, fmt.Errorf("load model %s: %w", dir, err)
	}
	w.ConfigJSON = raw
	w.NameOrPath = dir
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
	if w.Quantized() {
		return fmt.Errorf("save model %s: the base weights are quantized blocks, not float32 tensors", dir)
	}
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

// SaveAdapter writes the adapters of w in PEFT's layout with package
// model's writer. base names the base model (base_model_name_or_path), ""
// for none.
func SaveAdapter(w *Weights, cfg LoRAConfig, base, dir string) error {
	a, err := ExportAdapter(w, cfg, base)
	if err != nil {
		return fmt.Errorf("save adapter %s: %w", dir, err)
	}
	return a.Save(dir)
}

// LoadAdapter reads a PEFT LoRA adapter with package model's loader and
// attaches it to w as trainable tensors (replacing any attached adapters).
// It returns the adapter's settings.
func LoadAdapter(w *Weights, dir string) (LoRAConfig, error) {
	m, err := w.Model()
	if err != nil {
		return LoRAConfig{}, err
	}
	a, err := m.LoadAdapter(dir)
	if err != nil {
		return LoRAConfig{}, err
	}
	cfg, err := AttachAdapter(w, a)
	if err != nil {
		return LoRAConfig{}, fmt.Errorf("load adapter %s: %w", dir, err)
	}
	return cfg, nil
}

// trainerState is trainer_state.json: what, besides the tensors, resuming
// needs.
type trainerState struct {
	Step int64 `json:"step"`
	// MomentumStep: steps since the first moment was last reset
	// (ResetMomentum); absent (older checkpoints, torch's own) = Step.
	MomentumStep *int64      `json:"momentum_step,omitempty"`
	MicroBatch   uint64      `json:"micro_batches"`
	Mode         Mode        `json:"mode"`
	AdamW        AdamWConfig `json:"adamw"`
	Seed         uint64      `json:"seed"`
	MaxGradNorm  float64     `json:"max_grad_norm"`
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
	if t.opt.mStep != t.opt.step {
		k := t.opt.mStep
		st.MomentumStep = &k
	}
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
	t.opt.step, t.opt.mStep = st.Step, st.Step
	if st.MomentumStep != nil {
		if k := *st.MomentumStep; k < 0 || k > st.Step {
			return fmt.Errorf("resume %s: trainer_state.json: momentum_step %d outside 0…%d", dir, k, st.Step)
		}
		t.opt.mStep = *st.MomentumStep
	}
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

// LoadCheckpoint restores a folder written by SaveCheckpoint into this
// trainer: the trained tensors (adapter or full weights) are copied into
// the trainer's own tensors, then the optimizer state and step count.
func (t *Trainer) LoadCheckpoint(dir string) error {
	if t.cfg.Mode == ModeLoRA {
		m, err := t.w.Model()
		if err != nil {
			return err
		}
		a, err := m.LoadAdapter(dir)
		if err != nil {
			return fmt.Errorf("load checkpoint %s: %w", dir, err)
		}
		for i := range t.w.Layers {
			for mod, nl := range t.w.Layers[i].linears() {
				lo, got := nl.lin.LoRA, a.Layers[i][mod]
				if (lo == nil) != (got == nil) {
					return fmt.Errorf("load checkpoint %s: layer %d %s: adapter targets differ from the trainer's", dir, i, nl.path)
				}
				if lo == nil {
					continue
				}
				if len(got.A) != len(lo.A.Data) || len(got.B) != len(lo.B.Data) {
					return fmt.Errorf("load checkpoint %s: layer %d %s: rank %d, trainer has %d", dir, i, nl.path, got.R, lo.Rank)
				}
				copy(lo.A.Data, got.A)
				copy(lo.B.Data, got.B)
			}
		}
	} else {
		ck, err := safetensors.OpenDir(dir)
		if err != nil {
			return fmt.Errorf("load checkpoint %s: %w", dir, err)
		}
		defer ck.Close()
		for _, p := range t.params {
			if err := readInto(ck, p); err != nil {
				return fmt.Errorf("load checkpoint %s: %w", dir, err)
			}
		}
	}
	return t.Resume(dir)
}

// Adapter snapshots the current LoRA adapters as a model.Adapter, for an
// in-process engine to serve without a round trip through disk.
func (t *Trainer) Adapter() (*model.Adapter, error) {
	if t.cfg.Mode != ModeLoRA {
		return nil, fmt.Errorf("train: no adapter in %s mode", t.cfg.Mode)
	}
	return ExportAdapter(t.w, t.cfg.LoRA, t.w.NameOrPath)
}
