package train

import (
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"testing"

	"github.com/clawrl/clawrl/model"
)

// BenchmarkStudentStep is the LoRA step the learning loop takes on a GGUF
// student (issue 11's next one: Qwen2.5-Coder-0.5B-Instruct Q4_K_M; hidden
// 896, 24 layers, 14 heads / 2 KV heads, FFN 4864, vocabulary 151,936),
// built the way `clawrl serve --model FILE` builds it: the file loaded at
// model.DefaultGGUFWeights (its blocks, as the engine serves them), the
// trainer over that model's weights (FromModel, no copy), the loop's
// defaults (LoRA r16, alpha 32 on q,k,v,o,gate,up,down, micro-batches of
// the trainer's default size). The batch is CLAWRL_BENCH_SEQS sequences
// (default 16, the loop's --batch-size) of 64 prompt + 126 response tokens,
// after one warm-up step, as the reference does. torch+PEFT computing
// every position's logits (HF's default) needs ~17 GB at 16 sequences, so
// on a 24 GiB machine run 8 (CLAWRL_BENCH_SEQS=8) or the lean reference
// (CLAWRL_BENCH_TORCH_LOGITS=response: logits only where a response token
// is predicted, as clawrl computes them).
//
// The reference is testdata/bench_torch.py's "qwen2.5-coder-0.5b" shape:
// transformers + PEFT on random float32 weights of the same shape (no GGUF
// blocks on that side), the same batch, run right after in the same
// process's benchmark with the ratio printed (x_vs_torch):
//
//	CLAWRL_STUDENT_GGUF=~/.cache/clawrl/models/Qwen2.5-Coder-0.5B-Instruct-AWQ.Q4_K_M.gguf \
//	CLAWRL_PYTHON=~/.cache/clawrl/refvenv/bin/python CLAWRL_BENCH_SEQS=8 CLAWRL_BENCH_TORCH_LOGITS=response \
//	go test ./train -run '^$' -bench StudentStep -benchtime 1x -timeout 1h
func BenchmarkStudentStep(b *testing.B) {
	path := os.Getenv("CLAWRL_STUDENT_GGUF")
	if path == "" {
		b.Skip("set CLAWRL_STUDENT_GGUF to the student's GGUF file (Qwen2.5-Coder-0.5B-Instruct Q4_K_M)")
	}
	seqs := 16
	if s := os.Getenv("CLAWRL_BENCH_SEQS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			b.Fatalf("CLAWRL_BENCH_SEQS=%q: want a positive count", s)
		}
		seqs = n
	}
	ours, oursCPU := studentStep(b, path, seqs)
	// The reference needs ~8 GB at 8 sequences and more at 16 (all its
	// logits): the trainer and its activations are gone, give them back.
	runtime.GC()
	debug.FreeOSMemory()
	if ref, refCPU, err := torchTokensPerSec("qwen2.5-coder-0.5b", ModeLoRA, max(2, b.N), "--seqs", strconv.Itoa(seqs)); err != nil {
		b.Logf("torch reference not run: %v", err)
	} else {
		b.ReportMetric(ref, "torch-tokens/s")
		b.ReportMetric(refCPU, "torch-tokens/cpu-s")
		b.ReportMetric(ours/ref, "x_vs_torch")
		b.ReportMetric(oursCPU/refCPU, "x_vs_torch_cpu")
		b.Logf("ours %.1f tokens/s, torch+PEFT %.1f tokens/s: %.2fx wall, %.2fx per CPU-second", ours, ref, ours/ref, oursCPU/refCPU)
	}
}

// studentStep loads path as a server does, trains one warm-up step and
// b.N timed steps of seqs sequences, and reports ours; it returns our
// tokens/s and tokens per CPU-second.
func studentStep(b *testing.B, path string, seqs int) (float64, float64) {
	const prompt, response = 64, 126
	dtype, err := model.DefaultGGUFWeights(path)
	if err != nil {
		b.Fatal(err)
	}
	m, err := model.LoadWith(path, model.Options{WeightDType: dtype})
	if err != nil {
		b.Fatal(err)
	}
	w, err := FromModel(m, false)
	if err != nil {
		b.Fatal(err)
	}
	lora := DefaultLoRA()
	lora.Rank, lora.Alpha = 16, 32
	tr, err := New(w, Config{Mode: ModeLoRA, LoRA: lora, AdamW: DefaultAdamW(1e-4)})
	if err != nil {
		b.Fatal(err)
	}
	lens := make([][2]int, seqs)
	for i := range lens {
		lens[i] = [2]int{prompt, response}
	}
	batch := randomSeqs(m.Config.VocabSize, 1, lens...)
	ctx := context.Background()
	if _, err := tr.Step(ctx, batch, sftBench{}); err != nil { // warm-up: buffers, page faults
		b.Fatal(err)
	}
	cpu0 := cpuSeconds()
	b.ResetTimer()
	for range b.N {
		if _, err := tr.Step(ctx, batch, sftBench{}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	tokens := float64(seqs * (prompt + response) * b.N)
	ours, oursCPU := tokens/b.Elapsed().Seconds(), tokens/(cpuSeconds()-cpu0)
	b.ReportMetric(ours, "tokens/s")
	b.ReportMetric(oursCPU, "tokens/cpu-s")
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/step")
	b.ReportMetric(peakRSSMB(), "peak-RSS-MB")
	b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "threads")
	b.Logf("%s at %s, %d × (%d + %d) tokens", path, dtype, seqs, prompt, response)
	return ours, oursCPU
}
