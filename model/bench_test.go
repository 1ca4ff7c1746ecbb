package model

import (
	"context"
	"fmt"
	"testing"

	"github.com/clawrl/clawrl/safetensors"
)

// benchModel builds a random model in memory-backed temp files: the tiny
// test shape, or Qwen3-0.6B's width with only 4 layers (so a benchmark
// starts in seconds; per-layer costs scale to 28 layers).
func benchModel(b *testing.B, shape, dtype string) *Model {
	b.Helper()
	cfg, err := NewConfig(Qwen3, SizeTiny)
	if err != nil {
		b.Fatal(err)
	}
	if shape == "0.6b-4layers" {
		cfg, _ = NewConfig(Qwen3, Size06B)
		cfg.NumHiddenLayers = 4
	}
	dir := b.TempDir()
	dt := safetensors.F32
	if dtype == "bf16" {
		dt = safetensors.BF16
	}
	if err := WriteRandom(dir, cfg, 1, dt); err != nil {
		b.Fatal(err)
	}
	m, err := LoadWith(dir, Options{WeightDType: dtype})
	if err != nil {
		b.Fatal(err)
	}
	return m
}

func benchIDs(n int) []int32 {
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32((i*7919 + 13) % 150000)
	}
	return ids
}

// BenchmarkPrefill reports prompt tokens/s for a 128-token prefill.
func BenchmarkPrefill(b *testing.B) {
	for _, shape := range []string{"tiny", "0.6b-4layers"} {
		for _, dtype := range []string{"f32", "bf16"} {
			b.Run(shape+"/"+dtype, func(b *testing.B) {
				m := benchModel(b, shape, dtype)
				ids := benchIDs(128)
				for b.Loop() {
					if _, err := m.Prefill(context.Background(), m.NewSequence(), ids, nil); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(len(ids)*b.N)/b.Elapsed().Seconds(), "tok/s")
			})
		}
	}
}

// BenchmarkDecode reports tokens/s decoding batch sequences together after
// a 64-token prompt each.
func BenchmarkDecode(b *testing.B) {
	for _, shape := range []string{"tiny", "0.6b-4layers"} {
		for _, dtype := range []string{"f32", "bf16"} {
			for _, batch := range []int{1, 4} {
				b.Run(fmt.Sprintf("%s/%s/batch=%d", shape, dtype, batch), func(b *testing.B) {
					m := benchModel(b, shape, dtype)
					seqs := make([]*Sequence, batch)
					ids := make([]int32, batch)
					for i := range seqs {
						seqs[i] = m.NewSequence()
						if _, err := m.Prefill(context.Background(), seqs[i], benchIDs(64), nil); err != nil {
							b.Fatal(err)
						}
						ids[i] = int32(i + 1)
					}
					for b.Loop() {
						if _, err := m.DecodeStep(seqs, ids, nil); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(batch*b.N)/b.Elapsed().Seconds(), "tok/s")
				})
			}
		}
	}
}

// BenchmarkPrefillLong prefills an OpenClaw-sized prompt (8192 tokens: its
// system prompt alone is 22–40k characters) on the tiny model, where
// attention, not the matmuls, is the cost.
func BenchmarkPrefillLong(b *testing.B) {
	m := benchModel(b, "tiny", "f32")
	ids := benchIDs(8192)
	for b.Loop() {
		if _, err := m.Prefill(context.Background(), m.NewSequence(), ids, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(ids)*b.N)/b.Elapsed().Seconds(), "tok/s")
}
