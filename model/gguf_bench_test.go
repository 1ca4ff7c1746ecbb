package model

import (
	"context"
	"fmt"
	"testing"

	"github.com/clawrl/clawrl/modelref/demotest"
)

// BenchmarkGGUFDecode decodes the demo GGUF (the shape BENCHMARKS.md's
// llama.cpp rows use: hidden 576, 30 layers, vocab 49,152 tied; or the file
// $CLAWRL_DEMO_GGUF names) for 1 and 4 sequences after a 128-token prompt
// each, on its quantized blocks with int8 activations (quant, llama.cpp's
// arithmetic) and with float32 ones (quant-f32), and on the dequantized
// float32 copy (f32); it skips when the file is not cached. Profile it with
// -cpuprofile. cpu-µs/tok is the process's CPU time per token (all
// threads, spinning helpers included): the figure to compare on a shared
// machine, where wall time depends on the other loads.
func BenchmarkGGUFDecode(b *testing.B) {
	path := demotest.GGUF(b)
	for _, dtype := range []string{"quant", "quant-f32", "f32"} {
		m, err := LoadWith(path, Options{WeightDType: dtype})
		if err != nil {
			b.Fatal(err)
		}
		for _, batch := range []int{1, 4} {
			benchDecode(b, m, dtype, batch)
		}
	}
}

// benchDecode is one row of BenchmarkGGUFDecode.
func benchDecode(b *testing.B, m *Model, dtype string, batch int) {
	b.Run(fmt.Sprintf("weights=%s/batch=%d", dtype, batch), func(b *testing.B) {
		seqs := make([]*Sequence, batch)
		ids := make([]int32, batch)
		for i := range seqs {
			seqs[i] = m.NewSequence()
			if _, err := m.Prefill(context.Background(), seqs[i], ggufBenchIDs(m), nil); err != nil {
				b.Fatal(err)
			}
			ids[i] = int32(i + 1)
		}
		cpu0 := processCPU()
		for b.Loop() {
			if _, err := m.DecodeStep(seqs, ids, nil); err != nil {
				b.Fatal(err)
			}
			for _, s := range seqs { // stay at 128 positions
				s.Truncate(128)
			}
		}
		b.ReportMetric(float64(batch*b.N)/b.Elapsed().Seconds(), "tok/s")
		b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(batch*b.N), "cpu-µs/tok")
	})
}

// BenchmarkGGUFPrefill prefills 128 tokens of the demo GGUF with each of
// BenchmarkGGUFDecode's weight dtypes.
func BenchmarkGGUFPrefill(b *testing.B) {
	path := demotest.GGUF(b)
	for _, dtype := range []string{"quant", "quant-f32", "f32"} {
		m, err := LoadWith(path, Options{WeightDType: dtype})
		if err != nil {
			b.Fatal(err)
		}
		ids := ggufBenchIDs(m)
		b.Run("weights="+dtype, func(b *testing.B) {
			cpu0 := processCPU()
			for b.Loop() {
				if _, err := m.Prefill(context.Background(), m.NewSequence(), ids, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(ids)*b.N)/b.Elapsed().Seconds(), "tok/s")
			b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(len(ids)*b.N), "cpu-µs/tok")
		})
	}
}

// ggufBenchIDs is a 128-token prompt inside m's vocabulary.
func ggufBenchIDs(m *Model) []int32 {
	ids := benchIDs(128)
	for i := range ids {
		ids[i] %= int32(m.Config.VocabSize)
	}
	return ids
}
