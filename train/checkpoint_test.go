package train

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestResumeIsExact: train 2 steps, checkpoint, train 2 more; a fresh
// trainer loaded from the checkpoint and resumed takes the same 2 steps to
// bit-identical weights — in both modes, with LoRA dropout on (its masks are
// seeded by the micro-batch count, which the checkpoint keeps).
func TestResumeIsExact(t *testing.T) {
	for _, mode := range []Mode{ModeLoRA, ModeFull} {
		t.Run(string(mode), func(t *testing.T) {
			a := tinyArch(true, false, true)
			w := randomWeights(t, a, 1)
			cfg := Config{Mode: mode, LoRA: LoRAConfig{Rank: 4, Alpha: 8, Dropout: 0.1}, Seed: 5,
				AdamW: DefaultAdamW(1e-3)}
			tr, err := New(w, cfg)
			if err != nil {
				t.Fatal(err)
			}
			seqs := randomSeqs(a.Vocab, 2, [2]int{3, 4}, [2]int{2, 5})
			obj := newWeightedObjective(seqs, 3)
			ctx := context.Background()
			for range 2 {
				if _, err := tr.Step(ctx, seqs, obj); err != nil {
					t.Fatal(err)
				}
			}
			dir := t.TempDir()
			if err := tr.SaveCheckpoint(dir); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if _, err := tr.Step(ctx, seqs, obj); err != nil {
					t.Fatal(err)
				}
			}

			// Restart: base weights from scratch (LoRA) or from the checkpoint (full).
			var w2 *Weights
			if mode == ModeLoRA {
				w2 = randomWeights(t, a, 1)
				if _, err := LoadAdapter(w2, dir); err != nil {
					t.Fatal(err)
				}
			} else {
				if w2, err = LoadWeights(dir); err != nil {
					t.Fatal(err)
				}
			}
			tr2, err := New(w2, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := tr2.Resume(dir); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if _, err := tr2.Step(ctx, seqs, obj); err != nil {
					t.Fatal(err)
				}
			}
			if tr2.StepCount() != 4 {
				t.Fatalf("step count %d after resume + 2, want 4", tr2.StepCount())
			}
			p1, p2 := tr.Params(), tr2.Params()
			for i := range p1 {
				if p1[i].Name != p2[i].Name {
					t.Fatalf("param %d: %s vs %s", i, p1[i].Name, p2[i].Name)
				}
				for j := range p1[i].Data {
					if p1[i].Data[j] != p2[i].Data[j] {
						t.Fatalf("%s[%d]: continued %g, resumed %g", p1[i].Name, j, p1[i].Data[j], p2[i].Data[j])
					}
				}
			}
			// The same through LoadCheckpoint into a trainer that already exists.
			w3 := randomWeights(t, a, 1)
			tr3, err := New(w3, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := tr3.LoadCheckpoint(dir); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if _, err := tr3.Step(ctx, seqs, obj); err != nil {
					t.Fatal(err)
				}
			}
			for i, p := range tr3.Params() {
				for j := range p.Data {
					if p.Data[j] != p1[i].Data[j] {
						t.Fatalf("LoadCheckpoint: %s[%d]: continued %g, resumed %g", p.Name, j, p1[i].Data[j], p.Data[j])
					}
				}
			}
			for _, f := range []string{"optimizer.safetensors", "trainer_state.json"} {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Error(err)
				}
			}
		})
	}
}
