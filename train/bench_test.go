package train

import (
	"context"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Training throughput: one optimizer step (forward + backward + AdamW) on
// 2 sequences of 64 prompt + 64 response tokens, reported as tokens/s over
// all 256 tokens, plus the process's peak RSS. The reference is
// testdata/bench_torch.py (transformers + PEFT + torch.optim.AdamW, same
// shapes, same thread count):
//
//	go test ./train -run '^$' -bench TrainStep -benchtime 3x
//	CLAWRL_BENCH_LARGE=1 go test ./train -run '^$' -bench TrainStep/qwen3-0.6b -benchtime 2x -timeout 1h
//	python3 train/testdata/bench_torch.py --threads $(nproc)
//
// (add -tags openblas with CGO_ENABLED=1 for the OpenBLAS matmuls.)

type benchArch struct {
	name  string
	arch  Arch
	large bool
}

var benchArchs = []benchArch{
	{"tiny", Arch{Vocab: 151936, Hidden: 64, Intermediate: 128, Layers: 2, Heads: 4, KVHeads: 2, HeadDim: 16,
		RMSNormEps: 1e-6, RopeTheta: 1e6, TieEmbeddings: true, QKNorm: true}, false},
	{"qwen3-0.6b", Arch{Vocab: 151936, Hidden: 1024, Intermediate: 3072, Layers: 28, Heads: 16, KVHeads: 8, HeadDim: 128,
		RMSNormEps: 1e-6, RopeTheta: 1e6, TieEmbeddings: true, QKNorm: true}, true},
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

// benchTrainer is a trainer on random weights of ba's shape and its batch
// (two sequences of 64 prompt and 64 response tokens: 256 tokens), after one
// warm-up step (buffers, page faults). It skips the large shape unless
// CLAWRL_BENCH_LARGE is set.
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
	tr, err := New(w, Config{Mode: mode, MicroBatchTokens: 4096})
	if err != nil {
		b.Fatal(err)
	}
	seqs := randomSeqs(ba.arch.Vocab, 1, [2]int{64, 64}, [2]int{64, 64})
	if _, err := tr.Step(context.Background(), seqs, sftBench{}); err != nil {
		b.Fatal(err)
	}
	return tr, seqs
}

func BenchmarkTrainStep(b *testing.B) {
	for _, ba := range benchArchs {
		for _, mode := range []Mode{ModeLoRA, ModeFull} {
			b.Run(ba.name+"/"+string(mode), func(b *testing.B) {
				tr, seqs := benchTrainer(b, ba, mode)
				ctx := context.Background()
				b.ResetTimer()
				for range b.N {
					if _, err := tr.Step(ctx, seqs, sftBench{}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(256*b.N)/b.Elapsed().Seconds(), "tokens/s")
				b.ReportMetric(peakRSSMB(), "peak-RSS-MB")
				b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "threads")
			})
		}
	}
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
			b.ReportMetric(float64(256*b.N)/b.Elapsed().Seconds(), "tokens/s")
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
