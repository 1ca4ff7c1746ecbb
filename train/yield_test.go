package train

import (
	"context"
	"errors"
	"math"
	"runtime"
	"testing"
	"time"
)

// TestYieldPausesAreExact: steps whose yield hook really pauses (sleeps,
// and lets other goroutines run) at many points inside the forward and the
// backward end with bit-identical weights, optimizer state and scores to
// steps without a hook, in every mode.
func TestYieldPausesAreExact(t *testing.T) {
	cases := []struct {
		name      string
		mode      Mode
		recompute bool
		tie       bool
	}{
		{"lora", ModeLoRA, false, true},
		{"lora-recompute", ModeLoRA, true, false},
		{"full", ModeFull, false, true},
		{"full-untied-recompute", ModeFull, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := tinyArch(true, false, c.tie)
			a.Vocab = 500
			seqs := randomSeqs(a.Vocab, 4, [2]int{5, 20}, [2]int{3, 9}, [2]int{9, 14})
			run := func(pause bool) (*Trainer, []TokenScores, int) {
				t.Helper()
				tr, err := New(randomWeights(t, a, 3), Config{Mode: c.mode, Recompute: c.recompute, MicroBatchTokens: 30,
					LoRA: LoRAConfig{Rank: 4, Dropout: 0.1}})
				if err != nil {
					t.Fatal(err)
				}
				// Small pieces and head chunks: many yield points.
				tr.ws.headBudget, tr.ws.pieceFlops, tr.ws.pieceElems = 5*a.Vocab, 2*5*a.Hidden*24, 2*256
				calls := 0
				if pause {
					tr.SetYield(func(ctx context.Context) error {
						calls++
						if calls%3 == 0 {
							time.Sleep(50 * time.Microsecond)
						}
						runtime.Gosched()
						return nil
					})
				}
				for range 2 {
					if _, err := tr.Step(context.Background(), seqs, newWeightedObjective(seqs, 5)); err != nil {
						t.Fatal(err)
					}
				}
				sc, err := tr.Score(context.Background(), seqs)
				if err != nil {
					t.Fatal(err)
				}
				return tr, sc, calls
			}
			plain, plainSc, _ := run(false)
			paused, pausedSc, calls := run(true)
			// 2 steps + 1 score over 3 micro-batches, each with several
			// blocks and head pieces.
			if calls < 100 {
				t.Fatalf("only %d yield points", calls)
			}
			for i, p := range plain.Params() {
				q := paused.Params()[i]
				for j := range p.Data {
					if math.Float32bits(p.Data[j]) != math.Float32bits(q.Data[j]) {
						t.Fatalf("%s[%d]: %v without pauses, %v with", p.Name, j, p.Data[j], q.Data[j])
					}
				}
			}
			for i := range plainSc {
				for j, v := range plainSc[i].Logprobs {
					if math.Float32bits(v) != math.Float32bits(pausedSc[i].Logprobs[j]) {
						t.Fatalf("seq %d token %d: logprob %v without pauses, %v with", i, j, v, pausedSc[i].Logprobs[j])
					}
				}
			}
		})
	}
}

// TestYieldAbortsInsideMicroBatch: an error from the hook deep inside a
// micro-batch (here the 40th yield point) stops the step there, leaves the
// weights untouched, and the next step without the error trains normally.
func TestYieldAbortsInsideMicroBatch(t *testing.T) {
	a := tinyArch(true, false, true)
	a.Vocab = 500
	seqs := randomSeqs(a.Vocab, 4, [2]int{5, 20})
	tr, err := New(randomWeights(t, a, 3), Config{Mode: ModeLoRA})
	if err != nil {
		t.Fatal(err)
	}
	tr.ws.pieceFlops, tr.ws.pieceElems = 2*20*a.Hidden*24, 2*256
	stop := errors.New("stop")
	calls := 0
	tr.SetYield(func(ctx context.Context) error {
		if calls++; calls == 40 {
			return stop
		}
		return nil
	})
	before := append([]float32(nil), tr.Params()[1].Data...)
	if _, err := tr.Step(context.Background(), seqs, newWeightedObjective(seqs, 5)); !errors.Is(err, stop) {
		t.Fatalf("err = %v, want the yield's error", err)
	}
	if calls != 40 {
		t.Fatalf("%d yield calls after the error, want it to stop at 40", calls)
	}
	for i, v := range tr.Params()[1].Data {
		if v != before[i] {
			t.Fatal("an aborted step changed the weights")
		}
	}
	if tr.StepCount() != 0 {
		t.Fatalf("step count %d after an aborted step", tr.StepCount())
	}
	if _, err := tr.Step(context.Background(), seqs, newWeightedObjective(seqs, 5)); err != nil {
		t.Fatal(err)
	}
}
