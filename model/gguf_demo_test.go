package model

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/clawrl/clawrl/modelref/demotest"
)

type ggufDemoFixture struct {
	File   string `json:"file"`
	SHA256 string `json:"sha256"`
	Cases  []struct {
		Text           string  `json:"text"`
		IDsHF          []int32 `json:"ids_hf"`
		GreedyHF       []int32 `json:"greedy_hf"`
		GreedyLlamaCpp []int32 `json:"greedy_llamacpp"`
	} `json:"cases"`
}

// TestGGUFDemoGreedy decodes the demo GGUF greedily and compares the ids with
// transformers' GGUF loader (testdata/gen_gguf_demo.py), which dequantizes
// to float32 as clawrl does, so the ids must be equal: on the dequantized
// float32 copy and on the blocks with float32 activations ("quant-f32"),
// whose sums differ from it only in float32 rounding. llama.cpp multiplies
// with quantized activations and leaves the float32 path where two logits
// are within its rounding (the first token of the France question: "The"
// 25.33 vs "L" 25.24); the ids up to that point must agree with it too.
func TestGGUFDemoGreedy(t *testing.T) {
	path := demotest.GGUF(t)
	raw, err := os.ReadFile("testdata/gguf_demo.json")
	if err != nil {
		t.Fatal(err)
	}
	var fx ggufDemoFixture
	if err := json.Unmarshal(raw, &fx); err != nil {
		t.Fatal(err)
	}
	for _, dtype := range []string{"f32", "quant-f32"} {
		t.Run(dtype, func(t *testing.T) {
			m, err := LoadWith(path, Options{WeightDType: dtype})
			if err != nil {
				t.Fatal(err)
			}
			if m.Weights.Quantized() != (dtype == "quant-f32") {
				t.Fatalf("%s: weights quantized = %v", dtype, m.Weights.Quantized())
			}
			demoGreedy(t, m, fx)
		})
	}
}

// demoGreedy checks m's greedy ids on the fixture's cases against
// transformers' and, up to their first disagreement, llama.cpp's.
func demoGreedy(t *testing.T, m *Model, fx ggufDemoFixture) {
	if c := m.Config; c.ModelType != Llama || c.NumHiddenLayers != 30 || c.HiddenSize != 576 || c.NumKeyValueHeads != 3 || !c.TieWordEmbeddings || c.RopeTheta != 100000 {
		t.Fatalf("config %+v", c)
	}
	for i, c := range fx.Cases {
		seq := m.NewSequence()
		logits, err := m.Prefill(context.Background(), seq, c.IDsHF, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []int32
		for len(got) < len(c.GreedyHF) {
			id := int32(argmax(logits))
			got = append(got, id)
			if id == 2 || len(got) == len(c.GreedyHF) { // <|im_end|>
				break
			}
			all, err := m.DecodeStep([]*Sequence{seq}, []int32{id}, nil)
			if err != nil {
				t.Fatal(err)
			}
			logits = all[0]
		}
		if !equalIDs(got, c.GreedyHF) {
			t.Errorf("case %d: greedy ids\n%v\ntransformers\n%v", i, got, c.GreedyHF)
		}
		agree := 0
		for agree < len(c.GreedyHF) && agree < len(c.GreedyLlamaCpp) && c.GreedyHF[agree] == c.GreedyLlamaCpp[agree] {
			agree++
		}
		if !equalIDs(got[:min(agree, len(got))], c.GreedyLlamaCpp[:agree]) {
			t.Errorf("case %d: the first %d ids differ from llama.cpp's %v", i, agree, c.GreedyLlamaCpp[:agree])
		}
		t.Logf("case %d: %d ids equal to transformers'; llama.cpp agrees with both for the first %d", i, len(got), agree)
	}
}

func equalIDs(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
