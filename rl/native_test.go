package rl

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/clawrl/clawrl/train"
)

func tinyNative(t *testing.T) *NativeTrainer {
	t.Helper()
	arch := train.Arch{Vocab: 64, Hidden: 32, Intermediate: 64, Layers: 2, Heads: 4, KVHeads: 2,
		HeadDim: 8, RMSNormEps: 1e-6, RopeTheta: 10000, TieEmbeddings: true, QKNorm: true}
	w, err := train.NewWeights(arch)
	if err != nil {
		t.Fatal(err)
	}
	train.InitRandom(w, 1, 0.15)
	n, err := NewNativeTrainer(w, train.Config{Mode: train.ModeLoRA, LoRA: train.LoRAConfig{Rank: 4, Alpha: 8},
		AdamW: train.DefaultAdamW(5e-3), Seed: 2}, DefaultStepConfig())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestNativeTrainerResumesExactly checks the crash-safety contract on the
// real trainer: a step taken after Save → Load into a fresh trainer equals
// the step the original trainer takes, so a restart loses no optimizer state.
func TestNativeTrainerResumesExactly(t *testing.T) {
	ctx := context.Background()
	batch := []Sample{
		{TurnID: "a", PromptIDs: []int32{5, 17, 3}, ResponseIDs: []int32{11, 12}, BehaviourLogprobs: []float32{-4, -4}, UseRL: true, Reward: 1},
		{TurnID: "b", PromptIDs: []int32{5, 17, 4}, ResponseIDs: []int32{20, 21}, BehaviourLogprobs: []float32{-4, -4},
			TeacherLogprobs: []float32{-0.5, -0.2}},
		{TurnID: "c", PromptIDs: []int32{6}, ResponseIDs: []int32{30}, BehaviourLogprobs: []float32{-4}, UseRL: true, Reward: 0},
	}
	a := tinyNative(t)
	if _, err := a.Step(ctx, batch); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "v1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := a.Save(dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"adapter_config.json", "adapter_model.safetensors", "optimizer.safetensors", "trainer_state.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("checkpoint lacks %s: %v", f, err)
		}
	}
	b := tinyNative(t)
	if err := b.Load(dir); err != nil {
		t.Fatal(err)
	}
	ma, err := a.Step(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	mb, err := b.Step(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	if ma.Loss != mb.Loss || ma.Tokens != mb.Tokens {
		t.Errorf("second step differs after resume: %+v vs %+v", ma, mb)
	}
	if a.Trainer().StepCount() != 2 || b.Trainer().StepCount() != 2 {
		t.Errorf("step counts %d %d, want 2", a.Trainer().StepCount(), b.Trainer().StepCount())
	}
	pa, pb := a.Trainer().Params(), b.Trainer().Params()
	if len(pa) != len(pb) {
		t.Fatalf("%d vs %d params", len(pa), len(pb))
	}
	for i := range pa {
		for j := range pa[i].Data {
			if pa[i].Data[j] != pb[i].Data[j] {
				t.Fatalf("param %s[%d]: %v vs %v after resume", pa[i].Name, j, pa[i].Data[j], pb[i].Data[j])
			}
		}
	}
}
