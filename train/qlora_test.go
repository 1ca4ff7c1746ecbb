package train_test

import (
	"context"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/clawrl/clawrl/model"
	"github.com/clawrl/clawrl/quant"
	"github.com/clawrl/clawrl/safetensors"
	"github.com/clawrl/clawrl/train"
)

var updateQLoRA = flag.Bool("update-qlora", false, "rewrite testdata/qlora/{base,adapter} (gen_qlora.py runs this)")

// qloraProbe is the sequence whose log-softmax rows PEFT computed.
var qloraProbe = []int32{1, 17, 200, 33, 5, 480, 77, 12, 300, 9, 41, 256}

// writeQLoRAFixture trains LoRA (two SFT steps) on the llama fixture
// quantized to Q4_1 (embeddings Q8_0) and writes the adapter, and the
// quantized base as the float32 Hugging Face folder it dequantizes to (what
// a GGUF file converts to), into dir.
func writeQLoRAFixture(t *testing.T, dir string) {
	m, err := model.Load(filepath.Join("testdata", "llama"))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Weights.Quantize(quant.Q4_1, quant.Q8_0); err != nil {
		t.Fatal(err)
	}
	dense, err := train.FromModel(m, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := train.SaveFull(dense, filepath.Join(dir, "base")); err != nil {
		t.Fatal(err)
	}
	w, err := train.FromModel(m, false)
	if err != nil {
		t.Fatal(err)
	}
	if !w.Quantized() {
		t.Fatal("trainer weights are not quantized")
	}
	tr, err := train.New(w, train.Config{Seed: 11, AdamW: train.DefaultAdamW(1e-2)})
	if err != nil {
		t.Fatal(err)
	}
	seqs := []train.Sequence{{PromptIDs: qloraProbe[:4], ResponseIDs: qloraProbe[4:]}, {PromptIDs: []int32{3, 4, 5}, ResponseIDs: []int32{6, 7, 8, 9, 10}}}
	for range 2 {
		if _, err := tr.Step(context.Background(), seqs, nllObjective{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tr.SaveAdapter(filepath.Join(dir, "adapter")); err != nil {
		t.Fatal(err)
	}
}

// TestQLoRAAdapterInPEFT: an adapter trained over quantized base weights is
// a plain PEFT adapter. testdata/qlora holds one (written by this test with
// -update-qlora) and the log-softmax PEFT computes with it on the
// dequantized base (gen_qlora.py); package model's forward with the adapter
// must agree. The test also checks that training the fixture again writes
// the same adapter, so the committed one is what the code makes today.
func TestQLoRAAdapterInPEFT(t *testing.T) {
	committed := filepath.Join("testdata", "qlora")
	if *updateQLoRA {
		writeQLoRAFixture(t, committed)
		return
	}
	fresh := t.TempDir()
	writeQLoRAFixture(t, fresh)
	got := readTensors(t, filepath.Join(fresh, "adapter", "adapter_model.safetensors"))
	want := readTensors(t, filepath.Join(committed, "adapter", "adapter_model.safetensors"))
	nonzeroB := false
	for name, w := range want {
		g := got[name]
		if len(g) != len(w) {
			t.Fatalf("%s: %d values, committed %d", name, len(g), len(w))
		}
		for i := range w {
			if d := math.Abs(float64(g[i] - w[i])); d > 1e-5 {
				t.Fatalf("%s[%d] = %v, committed %v: re-run testdata/gen_qlora.py", name, i, g[i], w[i])
			}
			nonzeroB = nonzeroB || w[i] != 0 && filepath.Ext(name) == ".weight" && contains(name, "lora_B")
		}
	}
	if !nonzeroB {
		t.Fatal("the committed adapter's lora_B are all zero: it tests nothing")
	}
	m, err := model.Load(filepath.Join(committed, "base"))
	if err != nil {
		t.Fatal(err)
	}
	ad, err := m.LoadAdapter(filepath.Join(committed, "adapter"))
	if err != nil {
		t.Fatal(err)
	}
	logits, err := m.Logits(context.Background(), qloraProbe, ad)
	if err != nil {
		t.Fatal(err)
	}
	peft := readTensors(t, filepath.Join(committed, "expect.safetensors"))["peft_logsoftmax"]
	V := m.Config.VocabSize
	for r := range qloraProbe {
		row := logits[r*V : (r+1)*V]
		lse := float64(model.LogSumExp(row))
		for j, z := range row {
			if d := math.Abs(float64(z) - lse - float64(peft[r*V+j])); d > 1e-4 {
				t.Fatalf("row %d token %d: log-softmax %.6g, PEFT %.6g", r, j, float64(z)-lse, peft[r*V+j])
			}
		}
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func readTensors(t *testing.T, path string) map[string][]float32 {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%v (run train/testdata/gen_qlora.py)", err)
	}
	f, err := safetensors.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]float32{}
	for _, name := range f.Names() {
		tt, err := f.Tensor(name)
		if err != nil {
			t.Fatal(err)
		}
		if out[name], err = tt.Float32(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestQLoRAOnDefaultGGUFWeights trains LoRA over a GGUF file loaded as a
// server loads it by default (model.DefaultGGUFWeights: the tiny fixture
// holds every block type, K-quants included, so its blocks stay quantized
// wherever this CPU has their kernels): the frozen base stays in its
// blocks, and the loss of the trained sequence falls.
func TestQLoRAOnDefaultGGUFWeights(t *testing.T) {
	path := filepath.Join("..", "model", "testdata", "tiny_qwen3.gguf")
	dtype, err := model.DefaultGGUFWeights(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.LoadWith(path, model.Options{WeightDType: dtype})
	if err != nil {
		t.Fatal(err)
	}
	w, err := train.FromModel(m, false)
	if err != nil {
		t.Fatal(err)
	}
	if w.Quantized() != (dtype != "f32") {
		t.Fatalf("weights %s: trainer's base quantized = %v", dtype, w.Quantized())
	}
	tr, err := train.New(w, train.Config{Seed: 3, AdamW: train.DefaultAdamW(1e-2)})
	if err != nil {
		t.Fatal(err)
	}
	seqs := []train.Sequence{{PromptIDs: []int32{1, 17, 200, 33}, ResponseIDs: []int32{5, 280, 77, 12, 300, 9, 41, 256}}}
	var first, last float64
	for i := range 6 {
		st, err := tr.Step(context.Background(), seqs, nllObjective{})
		if err != nil {
			t.Fatal(err)
		}
		if math.IsNaN(st.Loss) || math.IsInf(st.Loss, 0) {
			t.Fatalf("step %d: loss %v", i, st.Loss)
		}
		if i == 0 {
			first = st.Loss
		}
		last = st.Loss
	}
	t.Logf("weights %s: loss %.4f → %.4f", dtype, first, last)
	if last >= first {
		t.Errorf("weights %s: loss %.4f → %.4f, did not fall", dtype, first, last)
	}
}
