package bench

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"net/http/httptest"
	"os"
	"reflect"
	"sync"
	"testing"

	"github.com/clawrl/clawrl/api"
	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine/scripted"
	"github.com/clawrl/clawrl/judge"
	"github.com/clawrl/clawrl/store/sqlite"
)

// TestBestOf: the selected, random-pick, any-of-k and picked counts of
// best-of-k over hand-made draws.
func TestBestOf(t *testing.T) {
	d := func(p int, score float64, ok bool) Draw { return Draw{Prompt: p, Score: score, Satisfied: ok} }
	draws := []Draw{
		// prompt 0: the judge's best (0.9) satisfies
		d(0, 0.1, false), d(0, 0.9, true), d(0, -1, false), d(0, 0.2, true),
		// prompt 1: the judge's best (0.5) does not; one other does
		d(1, 0.5, false), d(1, -0.2, true), d(1, 0.3, false), d(1, 0.4, false),
		// prompt 2: nothing above the threshold 0
		d(2, -0.5, true), d(2, -0.1, false), d(2, -3, false), d(2, -2, false),
	}
	cfg := SelectConfig{Samples: 4, Selector: &judge.Selector{Threshold: 0}}
	rows, gain := Ceilings(draws, 3, cfg)
	want := []SelectedCeiling{
		{K: 1, Selected: 0, Picked: 2, Random: 1, Any: 1},
		{K: 2, Selected: 1, Picked: 2, Random: 0.5 + 0.5 + 0.5, Any: 3},
		{K: 4, Selected: 1, Picked: 2, Random: 0.5 + 0.25 + 0.25, Any: 3},
	}
	if !reflect.DeepEqual(rows, want) || gain != nil {
		t.Errorf("rows %+v (gain %v), want %+v", rows, gain, want)
	}
}

// TestMeasureSelectedThroughGateway samples a persona's prompts at a real
// clawrl gateway (the scripted engine), has the same gateway judge them
// through top_logprobs, and scores the same answers again from the kept
// draws: the rescored ceilings equal the measured ones, and each draw is
// scored as the selector scores it alone.
func TestMeasureSelectedThroughGateway(t *testing.T) {
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := sqlite.OpenDir(ctx, t.TempDir(), sqlite.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	gw, err := api.New(api.Config{Engine: scripted.New(scripted.Options{}), Store: st, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()
	cl := &Client{BaseURL: srv.URL, HTTP: srv.Client()}
	sel := &judge.Selector{Scorer: judge.HTTPScorer{HTTPBackend: &judge.HTTPBackend{URL: srv.URL + "/v1", Model: "clawrl", Client: srv.Client()}},
		Threshold: math.Inf(-1)}
	var p *Persona
	for _, x := range Personas() {
		if x.Name == "concise" {
			p = x
		}
	}
	cfg := SelectConfig{Samples: 2, Temperature: 0.7, Seed: 1, Selector: sel}
	draws, rows, _, err := MeasureSelected(ctx, cl, p, CeilingConfig{Prompts: 3, MaxTokens: 16, Concurrency: 2}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(draws) != 6 || len(rows) != 2 || rows[1].K != 2 || rows[1].Picked != 3 {
		t.Fatalf("draws %d, rows %+v", len(draws), rows)
	}
	for k, d := range draws {
		if d.Prompt != k/2 || d.Err != "" || d.Text == "" {
			t.Errorf("draw %d: %+v", k, d)
		}
	}
	alone, err := sel.Score(ctx, []chat.Message{{Role: chat.RoleUser, Content: p.Eval[1]}}, p.Critique, draws[3].Text)
	if err != nil || alone != draws[3].Score {
		t.Errorf("draw 3 scored %v alone (%v), %v in the run", alone, err, draws[3].Score)
	}
	again := append([]Draw(nil), draws...)
	for i := range again {
		again[i].Score = 0
	}
	rescored, _, err := RescoreSelected(ctx, p, again, 3, 2, cfg)
	if err != nil || !reflect.DeepEqual(rescored, rows) || !reflect.DeepEqual(again, draws) {
		t.Errorf("rescored %+v (%v), measured %+v", rescored, err, rows)
	}
	if _, _, err := RescoreSelected(ctx, p, again[:5], 3, 2, cfg); err == nil {
		t.Error("rescored 5 draws as 3 prompts × 2")
	}

	// Under the mixed placement the draws are written under user and
	// system in turn, and the gain reads each where it was written (the
	// scripted engine echoes the last user message, so each draw's text
	// tells its placement: long enough not to be cut before the hint).
	var mu sync.Mutex
	read := map[string]judge.HintPlacement{}
	cfg.Gain = func(_ context.Context, question, _ string, at judge.HintPlacement, a Answer) (float64, error) {
		mu.Lock()
		defer mu.Unlock()
		read[question+"\x00"+a.Text] = at
		return 0, nil
	}
	mixed, _, _, err := MeasureSelected(ctx, cl, p, CeilingConfig{Prompts: 3, MaxTokens: 400, Concurrency: 2, Placement: judge.HintMixed}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if mixed[0].Text == mixed[1].Text {
		t.Fatalf("both placements wrote %q; the check shows nothing", mixed[0].Text)
	}
	for k, d := range mixed {
		want := judge.HintMixed.Writing(k % 2)
		if d.Placement != want || read[p.Eval[d.Prompt]+"\x00"+d.Text] != want {
			t.Errorf("mixed draw %d written under %q, read under %q; want %q", k, d.Placement, read[p.Eval[d.Prompt]+"\x00"+d.Text], want)
		}
	}
}

// TestRefuseOnRecordedDraws re-picks the teacher answers recorded by
// `clawrl bench teacher --samples 4` (run.sh beside them) by their
// recorded hint gain, with judge.Refuse applied and the personas' checkers
// re-run: no pick is an answer of the feedback's words only, and the
// selected counts are those BENCHMARKS.md reports ("Refusing answers made
// of the feedback's words"; before the rule: 12, and 2, 18, 16, 17), less
// the picks that do not answer (Evades, "Answers that do not answer"):
// one signoff pick, and four french ones before the rule and after it
// ("Je suis désolé, mais je ne peux pas vous aider avec cette demande."),
// and a fifth since the fifty-fourth session, an offer that asks back
// ("Oui, je suis prêt à répondre. Que puis-je vous aider aujourd'hui ?",
// BENCHMARKS.md, "Talk that does not answer").
func TestRefuseOnRecordedDraws(t *testing.T) {
	for _, c := range []struct {
		file             string
		selected, before map[string]int
	}{
		{"results/2026-11-25-qwen-student/teacher-1.5b-signoff/n4-signoff.json", map[string]int{"signoff": 13}, map[string]int{"signoff": 11}},
		{"results/2026-11-25-qwen-student/teacher-self/n4.json", map[string]int{"signoff": 5, "concise": 18, "french": 13, "tldr": 17},
			map[string]int{"signoff": 2, "concise": 18, "french": 11, "tldr": 17}},
	} {
		raw, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		var rec struct {
			Samples int               `json:"samples"`
			Draws   map[string][]Draw `json:"draws"`
		}
		if err := json.Unmarshal(raw, &rec); err != nil {
			t.Fatal(err)
		}
		for _, p := range Personas() {
			want, ok := c.selected[p.Name]
			if !ok {
				continue
			}
			draws := rec.Draws[p.Name]
			n := len(draws) / rec.Samples
			for i := range draws {
				d := &draws[i]
				d.Refused = ""
				d.Satisfied = p.Satisfied(Answer{Text: d.Text, Finished: d.Finished})
			}
			gain := func(d Draw) float64 { return d.Gain }
			if row := bestOf(draws, n, rec.Samples, rec.Samples, -math.MaxFloat64, gain); row.Selected != c.before[p.Name] {
				t.Errorf("%s %s with no refusal: %d of %d picks satisfied, want %d", c.file, p.Name, row.Selected, n, c.before[p.Name])
			}
			for i := range draws {
				draws[i].Refused = judge.Refuse(draws[i].Text, p.Critique)
			}
			row := bestOf(draws, n, rec.Samples, rec.Samples, -math.MaxFloat64, gain)
			if row.Selected != want {
				t.Errorf("%s %s: %d of %d picks satisfied, want %d", c.file, p.Name, row.Selected, n, want)
			}
			for i := range n {
				ds := draws[i*rec.Samples : (i+1)*rec.Samples]
				best := -1
				for j, d := range ds {
					if d.Refused == "" && (best < 0 || d.Gain > ds[best].Gain) {
						best = j
					}
				}
				if best >= 0 && judge.OwnWords(ds[best].Text, p.Critique) < judge.MinOwnWords {
					t.Errorf("%s %s prompt %d: picked %q", c.file, p.Name, i, ds[best].Text)
				}
			}
		}
	}
}
