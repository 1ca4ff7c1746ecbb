package train

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// LoRAConfig configures the adapters. Zero values take PEFT-style defaults
// from DefaultLoRA.
type LoRAConfig struct {
	Rank          int
	Alpha         float64
	Dropout       float64
	TargetModules []string // q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj
}

// DefaultLoRA is rank 16, alpha 32 on every projection, no dropout.
func DefaultLoRA() LoRAConfig {
	return LoRAConfig{Rank: 16, Alpha: 32, TargetModules: AllProjections()}
}

// AllProjections are the seven projection module names of a decoder block.
func AllProjections() []string {
	return []string{"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}
}

func moduleName(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '.' {
			return path[i+1:]
		}
	}
	return path
}

// AttachLoRA adds zero-initialised adapters to the target projections, names
// them with PEFT's tensor names, and initialises them like PEFT: A
// Kaiming-uniform (a=√5, i.e. U(±1/√in)), B zeros, drawn from seed.
func AttachLoRA(w *Weights, cfg LoRAConfig, seed uint64) error {
	if cfg.Rank <= 0 {
		return fmt.Errorf("lora: rank %d must be positive", cfg.Rank)
	}
	if cfg.Dropout < 0 || cfg.Dropout >= 1 {
		return fmt.Errorf("lora: dropout %g outside [0, 1)", cfg.Dropout)
	}
	for _, m := range cfg.TargetModules {
		if !slices.Contains(AllProjections(), m) {
			return fmt.Errorf("lora: unknown target module %q", m)
		}
	}
	if len(cfg.TargetModules) == 0 {
		return fmt.Errorf("lora: no target modules")
	}
	rng := rand.New(rand.NewPCG(seed, 0x10a))
	for i := range w.Layers {
		for _, nl := range w.Layers[i].linears() {
			if !slices.Contains(cfg.TargetModules, moduleName(nl.path)) {
				continue
			}
			l := nl.lin
			prefix := fmt.Sprintf("base_model.model.model.layers.%d.%s", i, nl.path)
			lo := &LoRA{
				A:       newTensor(prefix+".lora_A.weight", cfg.Rank, l.In),
				B:       newTensor(prefix+".lora_B.weight", l.Out, cfg.Rank),
				Rank:    cfg.Rank,
				Scale:   float32(cfg.Alpha / float64(cfg.Rank)),
				Dropout: float32(cfg.Dropout),
			}
			bound := 1 / math.Sqrt(float64(l.In))
			for j := range lo.A.Data {
				lo.A.Data[j] = float32((2*rng.Float64() - 1) * bound)
			}
			l.LoRA = lo
		}
	}
	return nil
}

// attachedLoRAConfig describes the adapters attached to w (rank, alpha and
// dropout of the first one, every targeted module).
func (w *Weights) attachedLoRAConfig() LoRAConfig {
	var c LoRAConfig
	for i := range w.Layers {
		for _, nl := range w.Layers[i].linears() {
			lo := nl.lin.LoRA
			if lo == nil {
				continue
			}
			if c.Rank == 0 {
				c.Rank, c.Alpha, c.Dropout = lo.Rank, float64(lo.Scale)*float64(lo.Rank), float64(lo.Dropout)
			}
			if m := moduleName(nl.path); !slices.Contains(c.TargetModules, m) {
				c.TargetModules = append(c.TargetModules, m)
			}
		}
	}
	return c
}
