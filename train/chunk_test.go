package train

import (
	"context"
	"math"
	"testing"
)

// TestHeadChunkingIsExact: processing the LM head in chunks of 3 rows
// (recomputing logits in the backward) or of whole sequences (8 rows: each
// sequence's loss taken between its chunk's head forward and backward, see
// workspace.trainPass) gives the same loss and gradients as one pass, up to
// float32 summation order in dW.
func TestHeadChunkingIsExact(t *testing.T) {
	a := tinyArch(true, false, true)
	seqs := randomSeqs(a.Vocab, 4, [2]int{3, 7}, [2]int{2, 5})
	run := func(budget int) (float64, []*Tensor) {
		w := randomWeights(t, a, 3)
		tr, err := New(w, Config{Mode: ModeFull})
		if err != nil {
			t.Fatal(err)
		}
		tr.ws.headBudget = budget
		tr.ZeroGrad()
		loss, _, err := tr.Accumulate(context.Background(), seqs, newWeightedObjective(seqs, 5), 1)
		if err != nil {
			t.Fatal(err)
		}
		return loss, tr.Params()
	}
	l1, p1 := run(0)
	for _, rows := range []int{3, 8} {
		l2, p2 := run(rows * a.Vocab)
		compareChunked(t, rows, l1, l2, p1, p2)
	}
}

func compareChunked(t *testing.T, rows int, l1, l2 float64, p1, p2 []*Tensor) {
	t.Helper()
	if math.Abs(l1-l2) > 1e-9*math.Abs(l1) {
		t.Fatalf("%d-row chunks: loss %v unchunked, %v chunked", rows, l1, l2)
	}
	for i := range p1 {
		var gmax float64
		for _, g := range p1[i].Grad {
			gmax = math.Max(gmax, math.Abs(float64(g)))
		}
		for j := range p1[i].Grad {
			if d := math.Abs(float64(p1[i].Grad[j] - p2[i].Grad[j])); d > 1e-5*gmax {
				t.Fatalf("%d-row chunks: %s[%d]: %g unchunked, %g chunked", rows, p1[i].Name, j, p1[i].Grad[j], p2[i].Grad[j])
			}
		}
	}
}
