package model

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/clawrl/clawrl/quant"
)

// TestGGUFTinyQuantized runs the tiny GGUF fixtures (every block type
// clawrl reads, testdata/gen_gguf_tiny.py) on their blocks — the quantized
// kernels, packed where a matrix's rows come in groups of eight — and
// compares with the fixture's references: logits within 4% of the logit
// range of transformers' (its GGUF loader dequantizes; the difference is
// the Q8 rounding of activations, as in llama.cpp), and greedy ids equal
// to llama.cpp's on the same file as far as transformers' and llama.cpp's
// agree.
func TestGGUFTinyQuantized(t *testing.T) {
	raw, err := os.ReadFile("testdata/gguf_tiny.json")
	if err != nil {
		t.Fatal(err)
	}
	var fx map[string]struct {
		File           string      `json:"file"`
		IDs            []int32     `json:"ids"`
		Logits         [][]float64 `json:"logits"`
		GreedyHF       []int32     `json:"greedy_hf"`
		GreedyLlamaCpp []int32     `json:"greedy_llamacpp"`
	}
	if err := json.Unmarshal(raw, &fx); err != nil {
		t.Fatal(err)
	}
	// The bound is the Q8 rounding of activations on these 64-wide random
	// models (the pure-Go reference kernels, -tags purego, differ from
	// transformers just as much): 2.2–2.4% measured.
	const logitTol = 0.04
	for _, arch := range []string{"llama", "qwen2", "qwen3"} {
		t.Run(arch, func(t *testing.T) {
			c := fx[arch]
			m, err := LoadWith(filepath.Join("testdata", c.File), Options{WeightDType: "quant"})
			if err != nil {
				t.Fatal(err)
			}
			types := map[quant.Type]int{}
			for i := range m.Weights.Blocks {
				for mod := range numModules {
					if q := m.Weights.Blocks[i].linear(mod).Q; q != nil {
						types[q.Type]++
					}
				}
			}
			if len(types) < 5 {
				t.Fatalf("only %d block types kept quantized: %v", len(types), types)
			}
			V := m.Config.VocabSize
			logits, err := m.Logits(context.Background(), c.IDs, nil)
			if err != nil {
				t.Fatal(err)
			}
			worst := 0.0 // largest |difference| ÷ the position's logit range
			var worstAt [2]int
			over := 0 // logits beyond logitTol
			for pos, want := range c.Logits {
				lo, hi := want[0], want[0]
				for _, v := range want {
					lo, hi = min(lo, v), max(hi, v)
				}
				for j, v := range want {
					d := math.Abs(float64(logits[pos*V+j])-v) / (hi - lo)
					if d > worst {
						worst, worstAt = d, [2]int{pos, j}
					}
					if d > logitTol {
						over++
					}
				}
			}
			t.Logf("%s: logits within %.2f%% of the range of transformers' (worst at position %d, token %d); %d of %d beyond %.0f%%", arch, 100*worst, worstAt[0], worstAt[1], over, len(c.Logits)*V, 100*logitTol)
			// llama's fixture has 1.8% of its logits beyond the bound, up
			// to 42% of the range, on the assembly and on the pure-Go
			// reference kernels alike. Widening every quantized matrix to
			// float32 gives transformers' logits exactly; widening any one
			// of them leaves the same 42%: this random model amplifies any
			// activation rounding (llama.cpp's greedy ids leave
			// transformers' after 5 tokens on it), so its logits are
			// logged, not bounded; its greedy ids are checked below.
			if over > 0 && arch != "llama" {
				t.Errorf("%d logits differ from transformers' by more than %.0f%% of the range (worst %.2f%%)", over, 100*logitTol, 100*worst)
			}
			seq := m.NewSequence()
			last, err := m.Prefill(context.Background(), seq, c.IDs, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []int32
			for len(got) < len(c.GreedyLlamaCpp) {
				id := int32(argmax(last))
				got = append(got, id)
				all, err := m.DecodeStep([]*Sequence{seq}, []int32{id}, nil)
				if err != nil {
					t.Fatal(err)
				}
				last = all[0]
			}
			agree := 0
			for agree < len(c.GreedyHF) && c.GreedyHF[agree] == c.GreedyLlamaCpp[agree] {
				agree++
			}
			same := 0
			for same < len(got) && got[same] == c.GreedyLlamaCpp[same] {
				same++
			}
			t.Logf("%s: quantized types %v; greedy %v, llama.cpp %v, transformers %v: %d equal to llama.cpp's (transformers and llama.cpp agree on %d)", arch, types, got, c.GreedyLlamaCpp, c.GreedyHF, same, agree)
			if same < agree {
				t.Errorf("greedy ids follow llama.cpp's for %d, want at least the %d where transformers agrees", same, agree)
			}
		})
	}
}
