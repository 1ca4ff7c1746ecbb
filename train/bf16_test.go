package train_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/clawrl/clawrl/train"
)

// sftLoss is −Σ log p over response tokens (scaled by Accumulate).
type sftLoss struct{}

func (sftLoss) TokenLoss(i int, logp, entropy, dlogp, dentropy []float32) float64 {
	var s float64
	for j, lp := range logp {
		s -= float64(lp)
		dlogp[j] = -1
	}
	return s
}

// relErr is max|g − ref| / max|ref| and ‖g − ref‖ / ‖ref‖.
func relErr(g, ref []float32) (maxRel, normRel float64) {
	var mr, me, nr, ne float64
	for i := range ref {
		r, e := float64(ref[i]), float64(g[i])-float64(ref[i])
		mr, me = max(mr, math.Abs(r)), max(me, math.Abs(e))
		nr += r * r
		ne += e * e
	}
	return me / mr, math.Sqrt(ne / nr)
}

// TestBF16GradientsAgainstTorch holds the bf16 backward (Precision bf16) to
// torch at SmolLM2-135M's widths (4 layers of hidden 576, FFN 1,536, 9/3
// heads, vocabulary 49,152, LoRA r16 on all seven projections; 4 × 64
// tokens), with gradients from testdata/bf16_grads.py in float32 and under
// torch.autocast to bf16.
//
// The bound: rounding dy and W to bf16 (unit roundoff u = 2⁻⁸) changes each
// product a·b by at most 2u|a·b|; the errors of a long sum are independent
// and of either sign, so a dx = dy·W moves by about √(2/3)·u ≈ 0.3 % of its
// norm, and the LoRA gradients of the first block sit behind the LM head's
// dh and four products per block (o, down, gate + up, q + k + v) of every
// block after it: 13 roundings for the first of 4 blocks, √13·0.3 % ≈ 1.1 %
// if they add as a random walk. The test asks for 2⁻⁵ (3.1 %) in norm for
// every tensor, and no more than torch's own bf16 autocast error plus 2⁻⁸
// (autocast also rounds the forward, so it should be the larger).
// The float32 path keeps the parity tests' 1e-4.
//
// Runs when CLAWRL_TORCH_PYTHON is set (scripts/test sets it), or on a
// directory bf16_grads.py wrote already (CLAWRL_BF16_GRADS_DIR).
func TestBF16GradientsAgainstTorch(t *testing.T) {
	dir := os.Getenv("CLAWRL_BF16_GRADS_DIR")
	if dir == "" {
		py := os.Getenv("CLAWRL_TORCH_PYTHON")
		if py == "" {
			t.Skip("CLAWRL_TORCH_PYTHON is not set (torch, transformers, peft)")
		}
		dir = t.TempDir()
		if out, err := exec.Command(py, "testdata/bf16_grads.py", dir).CombinedOutput(); err != nil {
			t.Fatalf("bf16_grads.py: %v\n%s", err, out)
		}
	}
	seqs := readBF16Inputs(t, dir)
	grads := openST(t, filepath.Join(dir, "grads.safetensors"))
	ours := map[train.Precision]map[string][]float32{}
	for _, prec := range []train.Precision{train.PrecisionFP32, train.PrecisionBF16} {
		w, err := train.LoadWeights(dir)
		if err != nil {
			t.Fatal(err)
		}
		lc, err := train.LoadAdapter(w, filepath.Join(dir, "adapter_peft"))
		if err != nil {
			t.Fatal(err)
		}
		tr, err := train.New(w, train.Config{Mode: train.ModeLoRA, LoRA: lc, Precision: prec, MicroBatchTokens: 4096})
		if err != nil {
			t.Fatal(err)
		}
		tr.ZeroGrad()
		sum, _, err := tr.Accumulate(context.Background(), seqs, sftLoss{}, 1/float64(tokens(seqs)))
		if err != nil {
			t.Fatal(err)
		}
		ref := readST(t, grads, "loss/"+string(prec))[0]
		t.Logf("%s loss %.7f, torch %.7f", prec, sum/float64(tokens(seqs)), ref)
		ours[prec] = map[string][]float32{}
		for _, p := range tr.Params() {
			ours[prec][p.Name] = append([]float32(nil), p.Grad...)
		}
	}
	var worst [4][2]float64
	worstName := [4]string{}
	for name, g32 := range ours[train.PrecisionFP32] {
		t32 := readST(t, grads, "fp32/"+name)
		tbf := readST(t, grads, "bf16/"+name)
		gbf := ours[train.PrecisionBF16][name]
		for i, pair := range [][2][]float32{{g32, t32}, {gbf, t32}, {tbf, t32}, {gbf, tbf}} {
			m, n := relErr(pair[0], pair[1])
			if n > worst[i][1] {
				worstName[i] = name
			}
			worst[i] = [2]float64{max(worst[i][0], m), max(worst[i][1], n)}
		}
		if m, _ := relErr(g32, t32); m > 1e-4 {
			t.Errorf("fp32 %s: max error %.3g of the largest element, want ≤ 1e-4", name, m)
		}
		_, nb := relErr(gbf, t32)
		_, nt := relErr(tbf, t32)
		if nb > 0x1p-5 || nb > nt+0x1p-8 {
			t.Errorf("bf16 %s: error %.3g in norm against torch float32 (torch's autocast: %.3g), want ≤ %.3g and ≤ autocast's + 2⁻⁸", name, nb, nt, 0x1p-5)
		}
	}
	for i, what := range []string{"ours fp32 vs torch fp32", "ours bf16 vs torch fp32", "torch autocast bf16 vs torch fp32", "ours bf16 vs torch autocast bf16"} {
		t.Logf("%-36s worst over %d tensors: max-element %.2e, norm %.2e (%s)", what, len(ours[train.PrecisionFP32]), worst[i][0], worst[i][1], worstName[i])
	}
}

// TestBF16LossTrajectory trains the same batch for six AdamW steps (lr 1e-3,
// clipping at 1) in float32 and with the bf16 backward, from the same
// weights, as bf16_grads.py writes them: the losses of the two runs must
// stay within 1 % of each other (the first step's forward is the same
// float32 code, so its loss is equal bit for bit).
func TestBF16LossTrajectory(t *testing.T) {
	dir := os.Getenv("CLAWRL_BF16_GRADS_DIR")
	if dir == "" {
		t.Skip("CLAWRL_BF16_GRADS_DIR is not set (a directory testdata/bf16_grads.py wrote)")
	}
	seqs := readBF16Inputs(t, dir)
	const steps = 6
	losses := map[train.Precision][]float64{}
	for _, prec := range []train.Precision{train.PrecisionFP32, train.PrecisionBF16} {
		w, err := train.LoadWeights(dir)
		if err != nil {
			t.Fatal(err)
		}
		lc, err := train.LoadAdapter(w, filepath.Join(dir, "adapter_peft"))
		if err != nil {
			t.Fatal(err)
		}
		tr, err := train.New(w, train.Config{Mode: train.ModeLoRA, LoRA: lc, Precision: prec, MicroBatchTokens: 4096, AdamW: train.DefaultAdamW(1e-3)})
		if err != nil {
			t.Fatal(err)
		}
		for range steps {
			st, err := tr.Step(context.Background(), seqs, sftLoss{})
			if err != nil {
				t.Fatal(err)
			}
			losses[prec] = append(losses[prec], st.Loss)
		}
	}
	t.Logf("fp32 losses %.6f", losses[train.PrecisionFP32])
	t.Logf("bf16 losses %.6f", losses[train.PrecisionBF16])
	for i := range steps {
		a, b := losses[train.PrecisionFP32][i], losses[train.PrecisionBF16][i]
		if i == 0 && a != b {
			t.Errorf("step 1: loss %v with bf16, %v with float32: the forward differs", b, a)
		}
		if math.Abs(a-b) > 0.01*math.Abs(a) {
			t.Errorf("step %d: loss %v with bf16, %v with float32 (more than 1 %% apart)", i+1, b, a)
		}
	}
}

func TestParsePrecision(t *testing.T) {
	for in, want := range map[string]train.Precision{"fp32": train.PrecisionFP32, "bf16": train.PrecisionBF16, "": train.DefaultPrecision(), "auto": train.DefaultPrecision()} {
		if got, err := train.ParsePrecision(in); err != nil || got != want {
			t.Errorf("ParsePrecision(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := train.ParsePrecision("fp16"); err == nil {
		t.Error("ParsePrecision(fp16): no error")
	}
	w, err := train.NewWeights(train.Arch{Vocab: 16, Hidden: 8, Intermediate: 16, Layers: 1, Heads: 2, KVHeads: 1, HeadDim: 4, RMSNormEps: 1e-6, RopeTheta: 1e4})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := train.New(w, train.Config{Precision: "fp16"}); err == nil {
		t.Error("New with precision fp16: no error")
	}
}

// readBF16Inputs reads the sequences testdata/bf16_grads.py wrote to dir.
func readBF16Inputs(t *testing.T, dir string) []train.Sequence {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "inputs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var in struct {
		Seqs []struct {
			PromptIDs   []int32 `json:"prompt_ids"`
			ResponseIDs []int32 `json:"response_ids"`
		} `json:"seqs"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		t.Fatal(err)
	}
	var seqs []train.Sequence
	for _, s := range in.Seqs {
		seqs = append(seqs, train.Sequence{PromptIDs: s.PromptIDs, ResponseIDs: s.ResponseIDs})
	}
	return seqs
}
