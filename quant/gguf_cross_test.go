package quant_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/clawrl/clawrl/gguf"
	"github.com/clawrl/clawrl/modelref/demotest"
	"github.com/clawrl/clawrl/quant"
)

// quant's block table agrees with package gguf's for every format quant
// computes on: the kernels and the loader read the same layout (quant's
// DequantizeRow is gguf's reference, checked bit-exact against the gguf
// Python package in package gguf).
func TestTypesMatchGGUF(t *testing.T) {
	for _, ty := range []quant.Type{quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.Q8_0, quant.Q4_K, quant.Q5_K, quant.Q6_K} {
		info, ok := gguf.Type(ty).Info()
		if !ok || !ty.Supported() || info.BlockSize != ty.BlockSize() || info.BlockBytes != ty.BlockBytes() {
			t.Errorf("%v: quant block %d weights in %d bytes (supported %v), gguf %s %d in %d",
				ty, ty.BlockSize(), ty.BlockBytes(), ty.Supported(), info.Name, info.BlockSize, info.BlockBytes)
		}
	}
}

// On the demo file's real tensors (Q4_1 blocks from llama.cpp's quantizer,
// the Q8_0 embedding) the fast matmul matches the float product of the
// dequantized weights with the Q8-rounded activation.
func TestDemoTensors(t *testing.T) {
	f, err := gguf.Open(demotest.GGUF(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rng := rand.New(rand.NewPCG(15, 16))
	for _, name := range []string{"blk.0.ffn_down.weight", "blk.3.attn_q.weight", "token_embd.weight"} {
		tn, err := f.Tensor(name)
		if err != nil {
			t.Fatal(err)
		}
		cols, rows := int(tn.Dims[0]), int(tn.Dims[1])
		m, err := quant.NewMatrix(quant.Type(tn.Type), rows, cols, tn.Data)
		if err != nil {
			t.Fatal(err)
		}
		const T = 3
		x := make([]float32, T*cols)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		out := make([]float32, T*rows)
		quant.MatMul(out, x, T, m)
		w := make([]float32, cols)
		for _, r := range []int{0, rows / 2, rows - 1} {
			m.DequantizeRows(w, r, r+1)
			for tk := 0; tk < T; tk++ {
				var want, mag float64
				for i, v := range w {
					want += float64(v) * float64(x[tk*cols+i])
					mag += math.Abs(float64(v) * float64(x[tk*cols+i]))
				}
				// Q8 activations: each value within half a step (amax/254)
				// of x, so the dot moves by well under 1% of Σ|w·x|.
				if got := float64(out[tk*rows+r]); math.Abs(got-want) > 0.01*mag {
					t.Errorf("%s (%v) row %d token %d: %v, float %v", name, m.Type, r, tk, got, want)
				}
			}
		}
	}
}
