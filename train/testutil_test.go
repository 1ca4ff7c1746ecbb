package train

import (
	"context"
	"math/rand/v2"
	"testing"
)

// randomWeights fills a tiny model with small random values (norm weights
// near 1) so every path carries signal.
func randomWeights(t testing.TB, a Arch, seed uint64) *Weights {
	t.Helper()
	w, err := NewWeights(a)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	for _, p := range w.BaseTensors() {
		norm := len(p.Shape) == 1 && p.Name[len(p.Name)-len("weight"):] == "weight"
		for i := range p.Data {
			if norm {
				p.Data[i] = float32(1 + 0.2*rng.NormFloat64())
			} else {
				p.Data[i] = float32(0.08 * rng.NormFloat64())
			}
		}
	}
	return w
}

func tinyArch(qkNorm, bias, tie bool) Arch {
	return Arch{Vocab: 64, Hidden: 32, Intermediate: 48, Layers: 2, Heads: 4, KVHeads: 2,
		HeadDim: 8, RMSNormEps: 1e-6, RopeTheta: 10000, TieEmbeddings: tie, QKNorm: qkNorm, QKVBias: bias}
}

// weightedObjective is Σ_i c_i·logp_i + e_i·H_i with fixed random
// coefficients: a loss whose gradient reaches both the logprob and the
// entropy paths.
type weightedObjective struct {
	cl, ce [][]float32
}

func newWeightedObjective(seqs []Sequence, seed uint64) *weightedObjective {
	rng := rand.New(rand.NewPCG(seed, 2))
	o := &weightedObjective{}
	for _, s := range seqs {
		cl := make([]float32, len(s.ResponseIDs))
		ce := make([]float32, len(s.ResponseIDs))
		for i := range cl {
			cl[i] = float32(rng.NormFloat64())
			ce[i] = float32(rng.NormFloat64())
		}
		o.cl = append(o.cl, cl)
		o.ce = append(o.ce, ce)
	}
	return o
}

func (o *weightedObjective) TokenLoss(i int, logp, entropy, dlogp, dentropy []float32) float64 {
	var s float64
	for j := range logp {
		s += float64(o.cl[i][j]*logp[j] + o.ce[i][j]*entropy[j])
		dlogp[j] = o.cl[i][j]
		dentropy[j] = o.ce[i][j]
	}
	return s
}

func randomSeqs(vocab int, seed uint64, lens ...[2]int) []Sequence {
	rng := rand.New(rand.NewPCG(seed, 3))
	var out []Sequence
	for _, l := range lens {
		s := Sequence{}
		for range l[0] {
			s.PromptIDs = append(s.PromptIDs, int32(rng.IntN(vocab)))
		}
		for range l[1] {
			s.ResponseIDs = append(s.ResponseIDs, int32(rng.IntN(vocab)))
		}
		out = append(out, s)
	}
	return out
}

// tinyAccumulated builds a trainer on random weights of arch a, gives its
// adapters random B (non-zero, so A's gradient is non-zero too) and
// accumulates one pass over three short sequences under a weighted
// objective: the gradient checks' common start.
func tinyAccumulated(t *testing.T, a Arch, cfg Config) (*Trainer, []Sequence, Objective) {
	t.Helper()
	w := randomWeights(t, a, 7)
	tr, err := New(w, cfg)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	for _, p := range w.LoRATensors() {
		for i := range p.Data {
			p.Data[i] = float32(0.1 * rng.NormFloat64())
		}
	}
	seqs := randomSeqs(w.Arch.Vocab, 5, [2]int{3, 4}, [2]int{5, 2}, [2]int{1, 6})
	obj := newWeightedObjective(seqs, 11)
	tr.ZeroGrad()
	if _, _, err := tr.Accumulate(context.Background(), seqs, obj, 1); err != nil {
		t.Fatal(err)
	}
	return tr, seqs, obj
}
