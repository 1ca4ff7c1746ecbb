package loop

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/model"
	"github.com/clawrl/clawrl/rl"
	"github.com/clawrl/clawrl/safetensors"
	"github.com/clawrl/clawrl/store"
)

// TestNativeTrainerVersions runs the loop with the real native trainer on a
// random tiny Qwen3 checkpoint: judged samples (RL, OPD with teacher
// logprobs, and the at-least-one kind) train a LoRA adapter, the version
// folder holds a PEFT adapter with its optimizer state, and a restarted loop
// resumes from it at the same optimizer step.
func TestNativeTrainerVersions(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model")
	}
	ctx := context.Background()
	dir := t.TempDir()
	modelDir := filepath.Join(dir, "model")
	cfg, err := model.NewConfig(model.Family("qwen3"), model.SizeTiny)
	if err != nil {
		t.Fatal(err)
	}
	if err := model.WriteRandom(modelDir, cfg, 7, safetensors.F32); err != nil {
		t.Fatal(err)
	}
	settings := Settings{Method: "combine", TrainMode: "lora", LoRARank: 4, LearningRate: 1e-3, WRL: 1, WOPD: 1}
	newTrainer := func() *rl.NativeTrainer {
		tr, err := settings.nativeTrainer(nil, modelDir)
		if err != nil {
			t.Fatal(err)
		}
		return tr.(*rl.NativeTrainer)
	}
	tr := newTrainer()
	f := newFixtureWith(t, dir, rl.MethodCombine, 3, tr)
	if err := f.runner.Scheduler().Recover(ctx); err != nil {
		t.Fatal(err)
	}
	ask := func(q string) []chat.Message { return []chat.Message{{Role: chat.RoleUser, Content: q}} }
	a := f.serve(t, "n1", ask("how far is 3 miles?"))
	f.reply(t, a, `[[say:\boxed{-1}]] wrong`)
	b := f.serve(t, "n2", ask("how far is 5 miles?"))
	f.reply(t, b, hintReply)
	c := f.serve(t, "n3", ask("hello"))
	f.reply(t, c, `[[say:\boxed{0}]] hm`)
	if _, err := f.runner.judgeRound(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.ExpireIdle(ctx, timeNowPlusHour()); err != nil {
		t.Fatal(err)
	}
	trained, err := f.runner.RunOnce(ctx)
	if err != nil || !trained {
		t.Fatalf("step on the native trainer: %v %v", trained, err)
	}
	v, err := f.store.LatestVersion(ctx)
	// Two OPD samples: the written hint, and the correction "wrong" after
	// the -1 verdict, which is the hint as the user wrote it.
	if err != nil || v.Version != 1 || v.Metrics.Samples != 3 || v.Metrics.OPDSamples != 2 || v.Metrics.Tokens == 0 || v.Metrics.Loss == 0 {
		t.Fatalf("version 1: %+v %v", v, err)
	}
	for _, name := range []string{"adapter_config.json", "adapter_model.safetensors", "optimizer.safetensors", "trainer_state.json"} {
		if _, err := os.Stat(filepath.Join(v.Dir, name)); err != nil {
			t.Errorf("version folder lacks %s: %v", name, err)
		}
	}
	if got := tr.Trainer().StepCount(); got != 1 {
		t.Errorf("trainer at step %d, want 1", got)
	}
	for _, id := range []string{a.ID, b.ID, c.ID} {
		if turn, _ := f.turn(t, id); turn.State != store.Trained {
			t.Errorf("turn %s is %s, want trained", id, turn.State)
		}
	}
	f.store.Close()

	// Restart: a fresh trainer resumes from version 1.
	tr2 := newTrainer()
	f2 := newFixtureWith(t, dir, rl.MethodCombine, 3, tr2)
	if err := f2.runner.Scheduler().Recover(ctx); err != nil {
		t.Fatal(err)
	}
	if got := tr2.Trainer().StepCount(); got != 1 {
		t.Errorf("restarted trainer at step %d, want 1", got)
	}
	if f2.engine.Version() != 1 {
		t.Errorf("restart serves version %d, want 1", f2.engine.Version())
	}
}
