package train

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/clawrl/clawrl/model"
)

// Widening the frozen blocks once per Accumulate call (several
// micro-batches) gives the gradients bit for bit what widening tiles per
// micro-batch gives, over a GGUF file loaded as a server loads it.
func TestWideCacheSameGradients(t *testing.T) {
	path := filepath.Join("..", "model", "testdata", "tiny_qwen3.gguf")
	dtype, err := model.DefaultGGUFWeights(path)
	if err != nil {
		t.Fatal(err)
	}
	if dtype == "f32" {
		t.Skip("no quantized kernels on this CPU: the trainer's base is float32")
	}
	seqs := []Sequence{
		{PromptIDs: []int32{1, 17, 200, 33}, ResponseIDs: []int32{5, 280, 77, 12, 300, 9, 41, 256}},
		{PromptIDs: []int32{4, 90}, ResponseIDs: []int32{7, 8, 300, 2, 11}},
		{PromptIDs: []int32{3, 44, 45}, ResponseIDs: []int32{19, 101, 102, 6}},
	}
	grads := func(budget int64) ([][]float32, int) {
		m, err := model.LoadWith(path, model.Options{WeightDType: dtype})
		if err != nil {
			t.Fatal(err)
		}
		w, err := FromModel(m, false)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := New(w, Config{Seed: 3, AdamW: DefaultAdamW(1e-2), MicroBatchTokens: 12, WideCacheBytes: budget})
		if err != nil {
			t.Fatal(err)
		}
		// One update first, so the adapters' B is no longer zero and dx
		// through every frozen block reaches the gradients.
		if _, err := tr.Step(context.Background(), seqs, wideNLL{}); err != nil {
			t.Fatal(err)
		}
		tr.ZeroGrad()
		_, mbs, err := tr.Accumulate(context.Background(), seqs, wideNLL{}, 1)
		if err != nil {
			t.Fatal(err)
		}
		if tr.ws.wide != nil {
			t.Fatal("the widened blocks outlive the Accumulate call")
		}
		var g [][]float32
		for _, p := range tr.params {
			g = append(g, append([]float32(nil), p.Grad...))
		}
		return g, mbs
	}
	want, mbs := grads(-1)
	if mbs < 2 {
		t.Fatalf("%d micro-batches: the test needs several", mbs)
	}
	for _, budget := range []int64{0, 64 << 10} { // the default; room for some blocks only
		got, _ := grads(budget)
		for i := range want {
			for j := range want[i] {
				if math.Float32bits(got[i][j]) != math.Float32bits(want[i][j]) {
					t.Fatalf("budget %d: parameter %d [%d] = %v, widened per tile %v", budget, i, j, got[i][j], want[i][j])
				}
			}
		}
	}
}

// The cache holds dequantizeRows' values and keeps to its budget.
func TestWideCacheBudget(t *testing.T) {
	path := filepath.Join("..", "model", "testdata", "tiny_qwen3.gguf")
	m, err := model.LoadWith(path, model.Options{WeightDType: "quant"})
	if err != nil {
		t.Skipf("quantized weights: %v", err)
	}
	w, err := FromModel(m, false)
	if err != nil {
		t.Fatal(err)
	}
	q := w.Layers[0].Q.Q
	if q == nil {
		t.Skip("layer 0's q projection is not quantized here")
	}
	bytes := 4 * int64(q.Rows) * int64(q.Cols)
	c := &wideCache{budget: bytes}
	got := c.get(q)
	want := make([]float32, q.Rows*q.Cols)
	q.DequantizeRows(want, 0, q.Rows)
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("[%d] = %v, DequantizeRows %v", i, got[i], want[i])
		}
	}
	if again := c.get(q); &again[0] != &got[0] {
		t.Error("a second get widened again")
	}
	if k := w.Layers[0].K.Q; k != nil && c.get(k) != nil {
		t.Error("a block past the budget was cached")
	}
	if (*wideCache)(nil).get(q) != nil {
		t.Error("a nil cache returned a block")
	}
}

// wideNLL is the summed negative log-likelihood of the response tokens.
type wideNLL struct{}

func (wideNLL) TokenLoss(_ int, logp, _, dlogp, _ []float32) float64 {
	var s float64
	for j, lp := range logp {
		s -= float64(lp)
		dlogp[j] = -1
	}
	return s
}
