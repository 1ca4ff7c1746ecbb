package torchtrain_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/clawrl/clawrl/model"
	"github.com/clawrl/clawrl/rl"
	"github.com/clawrl/clawrl/safetensors"
	"github.com/clawrl/clawrl/train"
	"github.com/clawrl/clawrl/train/torchtrain"
)

// torchPython is the interpreter with torch, transformers and peft
// (CLAWRL_TORCH_PYTHON; scripts/test points it at a cached venv). Missing,
// the test skips — or fails under CLAWRL_REQUIRE_REFS=1.
func torchPython(t *testing.T) string {
	t.Helper()
	if os.Getenv("CLAWRL_TORCH_TESTS") == "0" {
		// scripts/test's second (cgo) pass: the worker's side does not
		// change with the build tag, and torch costs minutes.
		t.Skip("torch tests turned off (CLAWRL_TORCH_TESTS=0)")
	}
	py := os.Getenv("CLAWRL_TORCH_PYTHON")
	why := "CLAWRL_TORCH_PYTHON is not set"
	if py != "" {
		out, err := exec.Command(py, "-c", "import torch, transformers, peft, safetensors").CombinedOutput()
		if err == nil {
			return py
		}
		why = py + " cannot import torch, transformers, peft: " + strings.TrimSpace(string(out))
	}
	if os.Getenv("CLAWRL_REQUIRE_REFS") == "1" {
		t.Fatalf("torch trainer: %s (scripts/torch-venv makes one)", why)
	}
	t.Skipf("torch trainer: %s (scripts/torch-venv makes one)", why)
	return ""
}

// TestMatchesNativeTrainer: the same batch, one policy step (PPO clip with
// importance weights, an OPD sample, KL to the base, an entropy bonus) on
// the native trainer and on the torch worker, both starting from the same
// checkpoint: the loss terms, the gradient norm, every gradient element
// (AdamW's first moment after one step is (1−β1)·g), the adapter after the
// step and the second moment agree. The native trainer then resumes the
// torch checkpoint and scores what torch scores.
func TestMatchesNativeTrainer(t *testing.T) { matchesNativeTrainer(t, 1, false) }

// TestMatchesNativeTrainerFSDP: the same with two worker processes under
// torchrun (gloo on CPU), the model sharded with FSDP2 and each micro-batch's
// sequences split between the ranks.
func TestMatchesNativeTrainerFSDP(t *testing.T) { matchesNativeTrainer(t, 2, false) }

// TestMatchesNativeTrainerRecompute: the same with Config.Recompute (clawrl
// serve --recompute) on both sides: the native trainer recomputes each
// block from its saved input, the worker turns on the model's gradient
// checkpointing. Neither changes a number. This variant also warms the
// learning rate up over three steps (--lr-warmup 3) from a first rate of
// 2lr on the first two (--first-lr): its three steps take 2lr/3, 4lr/3 and
// lr on both sides.
func TestMatchesNativeTrainerRecompute(t *testing.T) { matchesNativeTrainer(t, 1, true) }

func matchesNativeTrainer(t *testing.T, nproc int, recompute bool) {
	py := torchPython(t)
	ctx := context.Background()
	// A tiny Qwen3 with a small vocabulary: FSDP gathers the embedding and
	// LM head on every pass, which a 151k vocabulary makes slow on CPU.
	ckpt := filepath.Join(t.TempDir(), "ckpt")
	mc, err := model.NewConfig(model.Qwen3, model.SizeTiny)
	if err != nil {
		t.Fatal(err)
	}
	mc.VocabSize = 2048
	if err := model.WriteRandom(ckpt, mc, 7, safetensors.F32); err != nil {
		t.Fatal(err)
	}
	cfg := train.Config{LoRA: train.LoRAConfig{Rank: 4, Alpha: 8, TargetModules: train.AllProjections()},
		AdamW: train.DefaultAdamW(1e-3), MicroBatchTokens: 40, Recompute: recompute, Seed: 3}
	if recompute {
		cfg.AdamW.Warmup, cfg.AdamW.FirstLR, cfg.AdamW.FirstSteps = 3, 2e-3, 2
	}
	w, err := train.LoadWeights(ckpt)
	if err != nil {
		t.Fatal(err)
	}
	native, err := train.New(w, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// LoRA starts with B = 0, which leaves A without a gradient: give B
	// values so every tensor is exercised.
	rng := rand.New(rand.NewPCG(11, 12))
	for _, p := range native.Params() {
		if strings.HasSuffix(p.Name, "lora_B.weight") {
			for i := range p.Data {
				p.Data[i] = float32(rng.NormFloat64() * 0.05)
			}
		}
	}
	start := filepath.Join(t.TempDir(), "start")
	if err := os.MkdirAll(start, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := native.SaveCheckpoint(start); err != nil {
		t.Fatal(err)
	}
	var workerLog bytes.Buffer
	torch, err := torchtrain.Start(ctx, torchtrain.Options{Python: py, ModelDir: ckpt, Config: cfg, Checkpoint: start, Device: "cpu",
		NProcPerNode: nproc, Logger: slog.New(slog.NewTextHandler(&lockedWriter{w: &workerLog}, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("worker log:\n%s", workerLog.String())
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer torch.Close()

	samples := batch(rng, 3)
	step := rl.DefaultStepConfig()
	step.Loss.KLCoef, step.Loss.EntropyCoef = 0.05, 0.01
	want, err := rl.PolicyStep(ctx, native, step, samples)
	if err != nil {
		t.Fatal(err)
	}
	got, err := rl.PolicyStep(ctx, torch, step, samples)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("native: loss %.7g policy %.7g kl %.7g entropy %.7g grad norm %.7g tokens %d", want.Loss, want.PolicyLoss, want.KL, want.Entropy, want.GradNorm, want.Tokens)
	t.Logf("torch:  loss %.7g policy %.7g kl %.7g entropy %.7g grad norm %.7g tokens %d", got.Loss, got.PolicyLoss, got.KL, got.Entropy, got.GradNorm, got.Tokens)
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"loss", got.Loss, want.Loss}, {"policy loss", got.PolicyLoss, want.PolicyLoss}, {"kl", got.KL, want.KL},
		{"entropy", got.Entropy, want.Entropy}, {"grad norm", got.GradNorm, want.GradNorm},
		{"importance weight", got.ISWeight, want.ISWeight}, {"advantage", got.Advantage, want.Advantage},
	} {
		if math.Abs(c.got-c.want) > 1e-4*max(1, math.Abs(c.want)) {
			t.Errorf("%s: torch %.8g, native %.8g", c.name, c.got, c.want)
		}
	}
	if got.Tokens != want.Tokens || got.Step != 1 {
		t.Errorf("torch step %d over %d tokens, native %d tokens", got.Step, got.Tokens, want.Tokens)
	}
	if r := cfg.AdamW.Rate(1); math.Abs(got.LearningRate-r) > 1e-12 || math.Abs(want.LearningRate-r) > 1e-12 {
		t.Errorf("first step's learning rate: torch %g, native %g, want %g", got.LearningRate, want.LearningRate, r)
	}
	nativeDir, torchDir := filepath.Join(t.TempDir(), "native"), filepath.Join(t.TempDir(), "torch")
	os.MkdirAll(nativeDir, 0o755) //nolint:errcheck
	if err := native.SaveCheckpoint(nativeDir); err != nil {
		t.Fatal(err)
	}
	if err := torch.SaveCheckpoint(torchDir); err != nil {
		t.Fatal(err)
	}
	// exp_avg = (1−β1)·clipped gradient: element-wise gradient parity.
	compareFiles(t, "optimizer.safetensors", nativeDir, torchDir, 2e-3)
	compareFiles(t, "adapter_model.safetensors", nativeDir, torchDir, 1e-4)

	// The torch checkpoint is the native layout: the native trainer resumes
	// it and scores the batch as the worker does.
	if err := native.LoadCheckpoint(torchDir); err != nil {
		t.Fatalf("native trainer resuming the torch checkpoint: %v", err)
	}
	seqs := make([]train.Sequence, len(samples))
	for i, s := range samples {
		seqs[i] = train.Sequence{PromptIDs: s.PromptIDs, ResponseIDs: s.ResponseIDs}
	}
	a, err := native.Score(ctx, seqs)
	if err != nil {
		t.Fatal(err)
	}
	b, err := torch.Score(ctx, seqs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		for j := range a[i].Logprobs {
			if d := math.Abs(float64(a[i].Logprobs[j] - b[i].Logprobs[j])); d > 1e-4 {
				t.Errorf("after resume, sequence %d token %d: native %v, torch %v", i, j, a[i].Logprobs[j], b[i].Logprobs[j])
			}
		}
	}

	// A version boundary: both reset AdamW's first moment and step again
	// (step 2, first-moment step 1: the worker rescales torch's lr and
	// weight decay); the adapters and moments still agree, and so does a
	// third step that averages the first moment from there.
	for k := 2; k <= 3; k++ {
		if k == 2 {
			if err := native.ResetMomentum(); err != nil {
				t.Fatal(err)
			}
			if err := torch.ResetMomentum(); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := rl.PolicyStep(ctx, native, step, samples); err != nil {
			t.Fatal(err)
		}
		if _, err := rl.PolicyStep(ctx, torch, step, samples); err != nil {
			t.Fatal(err)
		}
	}
	nativeDir, torchDir = filepath.Join(t.TempDir(), "native3"), filepath.Join(t.TempDir(), "torch3")
	os.MkdirAll(nativeDir, 0o755) //nolint:errcheck
	if err := native.SaveCheckpoint(nativeDir); err != nil {
		t.Fatal(err)
	}
	if err := torch.SaveCheckpoint(torchDir); err != nil {
		t.Fatal(err)
	}
	compareFiles(t, "optimizer.safetensors", nativeDir, torchDir, 2e-3)
	compareFiles(t, "adapter_model.safetensors", nativeDir, torchDir, 1e-4)
	for _, d := range []string{nativeDir, torchDir} {
		raw, err := os.ReadFile(filepath.Join(d, "trainer_state.json"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(raw, []byte(`"momentum_step": 2`)) {
			t.Errorf("%s/trainer_state.json has no momentum_step 2 (3 steps, reset before the second):\n%s", d, raw)
		}
	}

	// The worker's step count is the checkpoint's after a load, and a
	// fresh one's first batch takes --first-epochs steps, as on the
	// native trainer.
	if n := torch.StepCount(); n != 3 || native.StepCount() != 3 {
		t.Errorf("after three steps: torch counts %d, native %d", n, native.StepCount())
	}
	if err := torch.LoadCheckpoint(start); err != nil {
		t.Fatal(err)
	}
	if n := torch.StepCount(); n != 0 {
		t.Errorf("after loading a checkpoint of no steps, torch counts %d", n)
	}
	first := step
	first.FirstEpochs = 2
	for _, want := range []int64{2, 3} {
		m, err := rl.PolicyStep(ctx, torch, first, samples)
		if err != nil {
			t.Fatal(err)
		}
		if m.Step != want || torch.StepCount() != want {
			t.Errorf("--first-epochs 2: after a batch, step %d (count %d), want %d", m.Step, torch.StepCount(), want)
		}
	}
}

var _ rl.StepCounter = (*torchtrain.Trainer)(nil)

// batch is n samples over random ids: one off-policy (behaviour logprobs
// that are not the current policy's), one with an OPD teacher, rewards ±1.
func batch(rng *rand.Rand, n int) []rl.TrainSample {
	var out []rl.TrainSample
	for i := range n {
		p, r := 6+rng.IntN(10), 4+rng.IntN(8)
		s := rl.TrainSample{Reward: float64(1 - 2*(i%2)), RewardTerm: true}
		for range p {
			s.PromptIDs = append(s.PromptIDs, int32(rng.IntN(2000)))
		}
		for range r {
			s.ResponseIDs = append(s.ResponseIDs, int32(rng.IntN(2000)))
		}
		if i == 0 {
			for range r {
				s.BehaviourLogprobs = append(s.BehaviourLogprobs, float32(-11-rng.Float64()))
			}
		}
		if i == 1 {
			for range r {
				s.TeacherLogprobs = append(s.TeacherLogprobs, float32(-9-2*rng.Float64()))
			}
		}
		out = append(out, s)
	}
	return out
}

// compareFiles checks that every tensor of file in dir a is in dir b with
// the same values, to tol relative to the tensor's largest magnitude.
func compareFiles(t *testing.T, file, a, b string, tol float64) {
	t.Helper()
	fa, err := safetensors.Open(filepath.Join(a, file))
	if err != nil {
		t.Fatal(err)
	}
	defer fa.Close()
	fb, err := safetensors.Open(filepath.Join(b, file))
	if err != nil {
		t.Fatal(err)
	}
	defer fb.Close()
	names := fa.Names()
	if len(names) == 0 || len(names) != len(fb.Names()) {
		t.Fatalf("%s: %d tensors in %s, %d in %s", file, len(names), a, len(fb.Names()), b)
	}
	worst := 0.0
	for _, name := range names {
		x, err := readFloats(fa, name)
		if err != nil {
			t.Fatal(err)
		}
		y, err := readFloats(fb, name)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(x) != len(y) {
			t.Fatalf("%s %s: %d values, %d", file, name, len(x), len(y))
		}
		scale := 0.0
		for _, v := range x {
			scale = max(scale, math.Abs(float64(v)))
		}
		for i := range x {
			d := math.Abs(float64(x[i]-y[i])) / max(scale, 1e-12)
			worst = max(worst, d)
			if d > tol {
				t.Errorf("%s %s[%d]: native %.8g, torch %.8g (scale %.3g)", file, name, i, x[i], y[i], scale)
				break
			}
		}
	}
	t.Logf("%s: %d tensors, largest difference %.2g of each tensor's scale", file, len(names), worst)
}

func readFloats(f *safetensors.File, name string) ([]float32, error) {
	tn, err := f.Tensor(name)
	if err != nil {
		return nil, err
	}
	return tn.Float32()
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
