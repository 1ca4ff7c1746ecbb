package train_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/clawrl/clawrl/rl"
	"github.com/clawrl/clawrl/safetensors"
	"github.com/clawrl/clawrl/train"
)

// Parity with torch autograd, transformers and PEFT, against the fixtures
// testdata/gen_parity.py commits. Tolerances: losses within 1e-4 relative;
// each gradient tensor within 1e-4 of its largest reference element
// (max|g − ref| ≤ 1e-4·max|ref|), since elementwise relative error is
// meaningless for elements near zero; AdamW-updated weights within 1e-5
// absolute; log-softmax rows within 1e-4 absolute.

var updateAdapter = flag.String("update-adapter", "", "rewrite testdata/<arch>/adapter_clawrl (gen_parity.py runs this)")

var archs = []string{"qwen3", "qwen2", "llama"}

type lossSpec struct {
	Kind        string  `json:"kind"`
	ClipLow     float64 `json:"clip_low"`
	ClipHigh    float64 `json:"clip_high"`
	KLCoef      float64 `json:"kl_coef"`
	KLEstimator string  `json:"kl_estimator"`
	EntropyCoef float64 `json:"entropy_coef"`
	ISCap       float64 `json:"is_cap"`
	Method      string  `json:"method"`
	WOPD        float64 `json:"w_opd"`
	WRL         float64 `json:"w_rl"`
}

type fixture struct {
	Seqs []struct {
		PromptIDs   []int32 `json:"prompt_ids"`
		ResponseIDs []int32 `json:"response_ids"`
	} `json:"seqs"`
	Old, Behaviour, Teacher, Ref [][]float32
	Rewards                      []float64
	Losses                       map[string]lossSpec `json:"losses"`
	FullLosses                   []string            `json:"full_losses"`
	AdamW                        struct {
		LR          float64    `json:"lr"`
		Betas       [2]float64 `json:"betas"`
		Eps         float64    `json:"eps"`
		WeightDecay float64    `json:"weight_decay"`
		MaxGradNorm float64    `json:"max_grad_norm"`
		Steps       int        `json:"steps"`
	} `json:"adamw"`
	ProbeIDs       []int32            `json:"probe_ids"`
	ExpectLossFull map[string]float64 `json:"expect_loss_full"`
	ExpectLossLoRA map[string]float64 `json:"expect_loss_lora"`
}

func loadFixture(t *testing.T, arch string) *fixture {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", arch, "inputs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f fixture
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatalf("inputs.json: %v", err)
	}
	return &f
}

func (f *fixture) sequences() []train.Sequence {
	var out []train.Sequence
	for _, s := range f.Seqs {
		out = append(out, train.Sequence{PromptIDs: s.PromptIDs, ResponseIDs: s.ResponseIDs})
	}
	return out
}

// objective builds the rl loss the fixture names, on the fixture's inputs.
type objective struct {
	cfg    rl.LossConfig
	inputs []rl.TokenInputs
}

func (o *objective) TokenLoss(i int, logp, entropy, dlogp, dentropy []float32) float64 {
	l, _ := o.cfg.TokenLoss(o.inputs[i], logp, entropy, dlogp, dentropy)
	return l
}

func (f *fixture) objective(t *testing.T, name string) *objective {
	t.Helper()
	s, ok := f.Losses[name]
	if !ok {
		t.Fatalf("no loss %q in fixture", name)
	}
	o := &objective{cfg: rl.LossConfig{Kind: rl.LossKind(s.Kind), ClipLow: s.ClipLow, ClipHigh: s.ClipHigh,
		KLCoef: s.KLCoef, KLEstimator: rl.KLEstimator(s.KLEstimator), EntropyCoef: s.EntropyCoef, ISCap: s.ISCap}}
	adv := rl.AdvantageConfig{Method: rl.Method(s.Method), WOPD: s.WOPD, WRL: s.WRL}
	for i, seq := range f.Seqs {
		in := rl.TokenInputs{OldLogprobs: f.Old[i], BehaviourLogprobs: f.Behaviour[i], RefLogprobs: f.Ref[i]}
		if o.cfg.Kind == rl.LossPPO {
			a, err := adv.TokenAdvantages(f.Rewards[i], f.Teacher[i], f.Old[i])
			if err != nil {
				t.Fatal(err)
			}
			in.Advantages = a
		}
		if err := o.cfg.Validate(in, len(seq.ResponseIDs)); err != nil {
			t.Fatal(err)
		}
		o.inputs = append(o.inputs, in)
	}
	return o
}

func tokens(seqs []train.Sequence) int {
	n := 0
	for _, s := range seqs {
		n += len(s.ResponseIDs)
	}
	return n
}

func openST(t *testing.T, path string) *safetensors.File {
	t.Helper()
	f, err := safetensors.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func readST(t *testing.T, f *safetensors.File, name string) []float32 {
	t.Helper()
	st, err := f.Tensor(name)
	if err != nil {
		t.Fatal(err)
	}
	v, err := st.Float32()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// compareTensor checks max|got − want| ≤ tol·max|want| (+1e-9).
func compareTensor(t *testing.T, name string, got, want []float32, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d values, want %d", name, len(got), len(want))
		return
	}
	var maxRef, maxErr float64
	at := 0
	for i := range want {
		maxRef = math.Max(maxRef, math.Abs(float64(want[i])))
		if e := math.Abs(float64(got[i] - want[i])); e > maxErr {
			maxErr, at = e, i
		}
	}
	if maxErr > tol*maxRef+1e-9 {
		t.Errorf("%s: max error %.3g at [%d] (got %.6g, want %.6g), max |ref| %.3g", name, maxErr, at, got[at], want[at], maxRef)
	}
}

func checkLoss(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-4*math.Abs(want)+1e-7 {
		t.Errorf("%s loss %.8g, torch %.8g", what, got, want)
	}
}

func TestParityFullGradients(t *testing.T) {
	for _, arch := range archs {
		t.Run(arch, func(t *testing.T) {
			f := loadFixture(t, arch)
			grads := openST(t, filepath.Join("testdata", arch, "grads_full.safetensors"))
			w, err := train.LoadWeights(filepath.Join("testdata", arch))
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range f.FullLosses {
				for _, micro := range []int{0, 10} { // one micro-batch, then one per sequence
					tr, err := train.New(w, train.Config{Mode: train.ModeFull, MicroBatchTokens: micro})
					if err != nil {
						t.Fatal(err)
					}
					seqs := f.sequences()
					tr.ZeroGrad()
					sum, _, err := tr.Accumulate(context.Background(), seqs, f.objective(t, name), 1/float64(tokens(seqs)))
					if err != nil {
						t.Fatal(err)
					}
					checkLoss(t, name, sum/float64(tokens(seqs)), f.ExpectLossFull[name])
					for _, p := range tr.Params() {
						compareTensor(t, fmt.Sprintf("%s/%s (micro %d)", name, p.Name, micro), p.Grad, readST(t, grads, name+"/"+p.Name), 1e-4)
					}
				}
			}
		})
	}
}

func loadWithPEFT(t *testing.T, arch string) (*train.Weights, train.LoRAConfig) {
	t.Helper()
	w, err := train.LoadWeights(filepath.Join("testdata", arch))
	if err != nil {
		t.Fatal(err)
	}
	lc, err := train.LoadAdapter(w, filepath.Join("testdata", arch, "adapter_peft"))
	if err != nil {
		t.Fatal(err)
	}
	return w, lc
}

func TestParityLoRAGradients(t *testing.T) {
	for _, arch := range archs {
		t.Run(arch, func(t *testing.T) {
			f := loadFixture(t, arch)
			grads := openST(t, filepath.Join("testdata", arch, "grads_lora.safetensors"))
			w, lc := loadWithPEFT(t, arch)
			for _, recompute := range []bool{false, true} {
				tr, err := train.New(w, train.Config{Mode: train.ModeLoRA, LoRA: lc, Recompute: recompute})
				if err != nil {
					t.Fatal(err)
				}
				if len(tr.Params()) != 2*7*2 {
					t.Fatalf("%d LoRA tensors, want 28", len(tr.Params()))
				}
				for name := range f.Losses {
					seqs := f.sequences()
					tr.ZeroGrad()
					sum, _, err := tr.Accumulate(context.Background(), seqs, f.objective(t, name), 1/float64(tokens(seqs)))
					if err != nil {
						t.Fatal(err)
					}
					checkLoss(t, name, sum/float64(tokens(seqs)), f.ExpectLossLoRA[name])
					for _, p := range tr.Params() {
						compareTensor(t, fmt.Sprintf("%s/%s (recompute %v)", name, p.Name, recompute), p.Grad, readST(t, grads, name+"/"+p.Name), 1e-4)
					}
				}
			}
		})
	}
}

func TestParityAdamW(t *testing.T) {
	for _, arch := range archs {
		t.Run(arch, func(t *testing.T) {
			f := loadFixture(t, arch)
			expect := openST(t, filepath.Join("testdata", arch, "expect.safetensors"))
			w, lc := loadWithPEFT(t, arch)
			a := f.AdamW
			tr, err := train.New(w, train.Config{Mode: train.ModeLoRA, LoRA: lc, MaxGradNorm: a.MaxGradNorm,
				AdamW: train.AdamWConfig{LR: a.LR, Beta1: a.Betas[0], Beta2: a.Betas[1], Eps: a.Eps, WeightDecay: a.WeightDecay}})
			if err != nil {
				t.Fatal(err)
			}
			for range a.Steps {
				if _, err := tr.Step(context.Background(), f.sequences(), f.objective(t, "ppo")); err != nil {
					t.Fatal(err)
				}
			}
			for _, p := range tr.Params() {
				want := readST(t, expect, "adamw/"+p.Name)
				for i := range want {
					if d := math.Abs(float64(p.Data[i] - want[i])); d > 1e-5 {
						t.Errorf("%s[%d] after %d AdamW steps: %.8g, torch %.8g", p.Name, i, a.Steps, p.Data[i], want[i])
						break
					}
				}
			}
		})
	}
}

// clawrlAdapter is the adapter the Go side saves for the PEFT direction:
// PEFT-initialised A (seeded) and a deterministic non-zero B.
func clawrlAdapter(t *testing.T, arch, dir string) {
	t.Helper()
	w, err := train.LoadWeights(filepath.Join("testdata", arch))
	if err != nil {
		t.Fatal(err)
	}
	cfg := train.LoRAConfig{Rank: 4, Alpha: 8, TargetModules: train.AllProjections()}
	if err := train.AttachLoRA(w, cfg, 42); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(43, 0))
	for _, p := range w.LoRATensors() {
		for i := range p.Data {
			if p.Shape[1] == cfg.Rank { // lora_B [out, r]
				p.Data[i] = float32(0.1 * rng.NormFloat64())
			}
		}
	}
	if err := train.SaveAdapter(w, cfg, "", dir); err != nil {
		t.Fatal(err)
	}
}

// TestWriteClawrlAdapter checks the committed clawrl adapter is exactly what
// clawrl writes today (so PEFT's expectations in expect.safetensors are
// about our real output); -update-adapter=<arch> rewrites it.
func TestWriteClawrlAdapter(t *testing.T) {
	for _, arch := range archs {
		committed := filepath.Join("testdata", arch, "adapter_clawrl")
		if *updateAdapter != "" {
			if *updateAdapter == arch {
				clawrlAdapter(t, arch, committed)
			}
			continue
		}
		dir := t.TempDir()
		clawrlAdapter(t, arch, dir)
		for _, name := range []string{"adapter_config.json", "adapter_model.safetensors"} {
			got, _ := os.ReadFile(filepath.Join(dir, name))
			want, err := os.ReadFile(filepath.Join(committed, name))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s/%s differs from what clawrl writes now: re-run testdata/gen_parity.py", arch, name)
			}
		}
	}
}

func TestParityAdapterLogits(t *testing.T) {
	for _, arch := range archs {
		for _, dir := range []string{"adapter_peft", "adapter_clawrl"} {
			t.Run(arch+"/"+dir, func(t *testing.T) {
				f := loadFixture(t, arch)
				expect := openST(t, filepath.Join("testdata", arch, "expect.safetensors"))
				w, err := train.LoadWeights(filepath.Join("testdata", arch))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := train.LoadAdapter(w, filepath.Join("testdata", arch, dir)); err != nil {
					t.Fatal(err)
				}
				key := "peft_logsoftmax"
				if dir == "adapter_clawrl" {
					key = "clawrl_logsoftmax"
				}
				want := readST(t, expect, key)
				V := w.Arch.Vocab
				for r, row := range train.LogSoftmaxRows(w, f.ProbeIDs) {
					for j, v := range row {
						if d := math.Abs(float64(v - want[r*V+j])); d > 1e-4 {
							t.Fatalf("row %d token %d: log-softmax %.6g, PEFT %.6g", r, j, v, want[r*V+j])
						}
					}
				}
				// The inference side serves the same adapter: package
				// model's forward with the adapter its loader read.
				m, err := w.Model()
				if err != nil {
					t.Fatal(err)
				}
				ad, err := m.LoadAdapter(filepath.Join("testdata", arch, dir))
				if err != nil {
					t.Fatal(err)
				}
				logits, err := m.Logits(context.Background(), f.ProbeIDs, ad)
				if err != nil {
					t.Fatal(err)
				}
				for r := range f.ProbeIDs {
					row := logits[r*V : r*V+V]
					var mx, sum float64 = math.Inf(-1), 0
					for _, z := range row {
						mx = math.Max(mx, float64(z))
					}
					for _, z := range row {
						sum += math.Exp(float64(z) - mx)
					}
					for j, z := range row {
						ls := float64(z) - mx - math.Log(sum)
						if d := math.Abs(ls - float64(want[r*V+j])); d > 1e-4 {
							t.Fatalf("inference: row %d token %d: log-softmax %.6g, PEFT %.6g", r, j, ls, want[r*V+j])
						}
					}
				}
			})
		}
	}
}
