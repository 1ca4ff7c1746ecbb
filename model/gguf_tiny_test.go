package model

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/clawrl/clawrl/gguf"
	"github.com/clawrl/clawrl/tokenizer"
)

// TestGGUFTinyParity loads the tiny GGUF fixtures (testdata/gen_gguf_tiny.py:
// llama with llama.cpp's Q/K permutation, qwen2 with biases, qwen3 with q/k
// norms; their tensors cycle through all thirteen types clawrl reads) and
// compares with transformers' GGUF loader — every logit within 1e-4 of its
// float64 forward pass on the dequantized weights, the same float32
// greedy ids, with the weights dequantized and kept as blocks computed
// with float32 activations — and with llama.cpp's tokenizer and greedy ids, up to where
// llama.cpp's quantized activations leave transformers' path.
func TestGGUFTinyParity(t *testing.T) {
	raw, err := os.ReadFile("testdata/gguf_tiny.json")
	if err != nil {
		t.Fatal(err)
	}
	var fx map[string]struct {
		File           string      `json:"file"`
		Text           string      `json:"text"`
		IDs            []int32     `json:"ids"`
		IDsLlamaCpp    []int32     `json:"ids_llamacpp"`
		Logits         [][]float64 `json:"logits"`
		GreedyHF       []int32     `json:"greedy_hf"`
		GreedyLlamaCpp []int32     `json:"greedy_llamacpp"`
	}
	if err := json.Unmarshal(raw, &fx); err != nil {
		t.Fatal(err)
	}
	for _, arch := range []string{"llama", "qwen2", "qwen3"} {
		t.Run(arch, func(t *testing.T) {
			c := fx[arch]
			path := filepath.Join("testdata", c.File)
			f, err := gguf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			types := map[gguf.Type]bool{}
			for _, ti := range f.Tensors {
				types[ti.Type] = true
			}
			tok, err := tokenizer.FromGGUF(f.Header)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			if len(types) < 10 {
				t.Fatalf("fixture holds only %d tensor types", len(types))
			}
			if ids := tok.Encode(c.Text); !slices.Equal(ids, c.IDs) || !slices.Equal(ids, c.IDsLlamaCpp) {
				t.Errorf("tokens %v\ntransformers %v\nllama.cpp %v", ids, c.IDs, c.IDsLlamaCpp)
			}
			// The dequantized float32 copy, and the blocks with float32
			// activations (packed kernels where they exist, widened tiles
			// for the rest): both are transformers' numbers. The packed
			// kernels sum a Q4_1 block as d·Σq·x + m·Σx (llama.cpp's form,
			// the one order they use at every batch), two terms that
			// largely cancel where m ≈ −7.5·d, so their rounding weighs
			// more than the dequantized dot's: up to 1.3e-4 (llama,
			// position 24) where the float32 copy is within 3.5e-5.
			for _, dtype := range []string{"f32", "quant-f32"} {
				tol := parityTol
				if dtype == "quant-f32" {
					tol = 3 * parityTol
				}
				m, err := LoadWith(path, Options{WeightDType: dtype})
				if err != nil {
					t.Fatal(err)
				}
				if m.Config.ModelType != Family(arch) {
					t.Fatalf("family %s", m.Config.ModelType)
				}
				logits, err := m.Logits(context.Background(), c.IDs, nil)
				if err != nil {
					t.Fatal(err)
				}
				V := m.Config.VocabSize
				bad, worst := 0, 0.0
				for pos, want := range c.Logits {
					for j, w := range want {
						got := float64(logits[pos*V+j])
						worst = max(worst, math.Abs(got-w)/math.Max(1, math.Abs(w)))
						if math.Abs(got-w) > tol*math.Max(1, math.Abs(w)) {
							if bad++; bad <= 5 {
								t.Errorf("position %d logit %d: %.7g, transformers %.7g", pos, j, got, w)
							}
						}
					}
				}
				if bad > 0 {
					t.Fatalf("%d of %d logits differ from transformers by more than %g (at most %.2g)", bad, len(c.Logits)*V, tol, worst)
				}
				seq := m.NewSequence()
				last, err := m.Prefill(context.Background(), seq, c.IDs, nil)
				if err != nil {
					t.Fatal(err)
				}
				var got []int32
				for len(got) < len(c.GreedyHF) {
					id := int32(argmax(last))
					got = append(got, id)
					all, err := m.DecodeStep([]*Sequence{seq}, []int32{id}, nil)
					if err != nil {
						t.Fatal(err)
					}
					last = all[0]
				}
				if !slices.Equal(got, c.GreedyHF) {
					t.Errorf("greedy %v, transformers %v", got, c.GreedyHF)
				}
				agree := 0
				for agree < len(c.GreedyHF) && c.GreedyHF[agree] == c.GreedyLlamaCpp[agree] {
					agree++
				}
				if !slices.Equal(got[:agree], c.GreedyLlamaCpp[:agree]) {
					t.Errorf("greedy %v, llama.cpp %v", got, c.GreedyLlamaCpp)
				}
				t.Logf("%s %s: %d types, %d logits within %g of transformers (at most %.2g); greedy equal to transformers (%d ids), to llama.cpp for %d", arch, dtype, len(types), len(c.Logits)*V, tol, worst, len(got), agree)
			}
		})
	}
}
