package model

import (
	"context"
	"math"
	"testing"

	"github.com/clawrl/clawrl/quant"
	"github.com/clawrl/clawrl/safetensors"
)

// A model with quantized weights computes what its dequantized float32
// copy computes, up to the Q8 quantization of activations (as llama.cpp):
// logits within 2% of the logit range, same greedy token.
func TestQuantizedMatchesDequantized(t *testing.T) {
	for _, ty := range []quant.Type{quant.Q4_1, quant.Q8_0, quant.Q4_0, quant.Q5_0, quant.Q5_1} {
		t.Run(ty.String(), func(t *testing.T) {
			mq, _ := tinyModel(t, Qwen3, safetensors.F32, Options{})
			if err := mq.Weights.Quantize(ty, quant.Q8_0); err != nil {
				t.Fatal(err)
			}
			if !mq.Weights.Quantized() {
				t.Fatal("not quantized")
			}
			// The float32 twin: the same blocks widened.
			wf := *mq.Weights
			wf.Blocks = append([]Block(nil), mq.Weights.Blocks...)
			widen := func(l *Linear) Linear { return Linear{Out: l.Out, In: l.In, W: l.Dequantized(), Bias: l.Bias} }
			wf.Embed = widen(&mq.Weights.Embed)
			wf.LMHead = &wf.Embed
			for i := range wf.Blocks {
				for mod := range numModules {
					*wf.Blocks[i].linear(mod) = widen(mq.Weights.Blocks[i].linear(mod))
				}
			}
			mf := New(mq.Config, &wf)
			if mq.WeightBytes()*3 > mf.WeightBytes() {
				t.Errorf("quantized weights take %d bytes, float32 %d", mq.WeightBytes(), mf.WeightBytes())
			}
			ids := []int32{5, 77, 1000, 151000, 42, 9, 9, 9, 300, 12, 13, 14}
			ctx := context.Background()
			sq, sf := mq.NewSequence(), mf.NewSequence()
			a, err := mq.Prefill(ctx, sq, ids, nil)
			if err != nil {
				t.Fatal(err)
			}
			b, err := mf.Prefill(ctx, sf, ids, nil)
			if err != nil {
				t.Fatal(err)
			}
			closeLogits(t, "prefill", a, b)
			for step := 0; step < 4; step++ {
				next := int32(argmax(b))
				if int32(argmax(a)) != next {
					t.Fatalf("step %d: greedy %d, float32 %d", step, argmax(a), next)
				}
				da, _ := mq.DecodeStep([]*Sequence{sq}, []int32{next}, nil)
				db, _ := mf.DecodeStep([]*Sequence{sf}, []int32{next}, nil)
				a, b = da[0], db[0]
				closeLogits(t, "decode", a, b)
			}
		})
	}
}

func closeLogits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	lo, hi := want[0], want[0]
	for _, v := range want {
		lo, hi = min(lo, v), max(hi, v)
	}
	for i := range got {
		if d := math.Abs(float64(got[i] - want[i])); d > 0.02*float64(hi-lo) {
			t.Fatalf("%s: logit %d = %v, float32 %v (range %v)", what, i, got[i], want[i], hi-lo)
		}
	}
}

// A Qwen3 model 256 wide (so every matrix is whole K-quant super-blocks,
// and its rows groups of eight for the packed kernels) quantized to Q4_K,
// Q5_K or Q6_K with a Q6_K embedding computes what its dequantized float32
// copy computes: logits within 2% of the range, the same greedy tokens
// (or, where the random model's top two are within 1% of the range, a
// near-tie).
func TestQuantizedKMatchesDequantized(t *testing.T) {
	cfg, err := NewConfig(Qwen3, SizeTiny)
	if err != nil {
		t.Fatal(err)
	}
	cfg.HiddenSize, cfg.IntermediateSize, cfg.NumHiddenLayers = 256, 512, 2
	cfg.NumAttentionHeads, cfg.NumKeyValueHeads, cfg.HeadDim, cfg.VocabSize = 4, 2, 64, 2048
	dir := t.TempDir()
	if err := WriteRandom(dir, cfg, 11, safetensors.F32); err != nil {
		t.Fatal(err)
	}
	for _, ty := range []quant.Type{quant.Q4_K, quant.Q5_K, quant.Q6_K} {
		t.Run(ty.String(), func(t *testing.T) {
			mq, err := LoadWith(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := mq.Weights.Quantize(ty, quant.Q6_K); err != nil {
				t.Fatal(err)
			}
			wf := *mq.Weights
			wf.Blocks = append([]Block(nil), mq.Weights.Blocks...)
			widen := func(l *Linear) Linear { return Linear{Out: l.Out, In: l.In, W: l.Dequantized(), Bias: l.Bias} }
			wf.Embed = widen(&mq.Weights.Embed)
			wf.LMHead = &wf.Embed
			for i := range wf.Blocks {
				for mod := range numModules {
					*wf.Blocks[i].linear(mod) = widen(mq.Weights.Blocks[i].linear(mod))
				}
			}
			mf := New(mq.Config, &wf)
			ids := []int32{5, 77, 1000, 2000, 42, 9, 9, 9, 300, 12, 13, 14}
			ctx := context.Background()
			sq, sf := mq.NewSequence(), mf.NewSequence()
			a, err := mq.Prefill(ctx, sq, ids, nil)
			if err != nil {
				t.Fatal(err)
			}
			b, err := mf.Prefill(ctx, sf, ids, nil)
			if err != nil {
				t.Fatal(err)
			}
			closeLogits(t, "prefill", a, b)
			for step := 0; step < 4; step++ {
				next := int32(argmax(b))
				if g := argmax(a); int32(g) != next && !nearTie(b, g) {
					t.Fatalf("step %d: greedy %d, float32 %d (float32 logits %v, %v)", step, g, next, b[g], b[next])
				}
				da, _ := mq.DecodeStep([]*Sequence{sq}, []int32{next}, nil)
				db, _ := mf.DecodeStep([]*Sequence{sf}, []int32{next}, nil)
				a, b = da[0], db[0]
				closeLogits(t, "decode", a, b)
			}
		})
	}
}

// nearTie reports whether token g's logit in want is within 1% of want's
// range of its largest: a greedy choice the activations' Q8 rounding may
// flip (random models have many).
func nearTie(want []float32, g int) bool {
	lo, hi := want[0], want[0]
	for _, v := range want {
		lo, hi = min(lo, v), max(hi, v)
	}
	return hi-want[g] <= 0.01*(hi-lo)
}
