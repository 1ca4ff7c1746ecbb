package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawrl/clawrl/bench"
	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/store"
	"github.com/clawrl/clawrl/store/sqlite"
)

// keepRated writes a store of rated training turns, as bench learn
// --keep-data leaves one beside its learn.json.
func keepRated(t *testing.T, dir string, turns []bench.RatedTurn) {
	t.Helper()
	ctx := t.Context()
	st, err := sqlite.OpenDir(ctx, dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	t0 := time.Date(2026, 12, 6, 4, 0, 0, 0, time.UTC)
	for i, rt := range turns {
		sess := store.Session{Key: fmt.Sprintf("anon:%d", i), KeySource: "new", CreatedAt: t0}
		if err := st.CreateSession(ctx, &sess); err != nil {
			t.Fatal(err)
		}
		finish := "stop"
		if !rt.Answer.Finished {
			finish = "length"
		}
		id := fmt.Sprintf("chatcmpl-%d", i)
		tr := store.Turn{
			ID: id, SessionID: sess.ID, Type: store.Main, CreatedAt: t0.Add(time.Duration(i) * time.Second),
			Messages:     []chat.Message{{Role: chat.RoleUser, Content: rt.Question}},
			Response:     chat.Message{Role: chat.RoleAssistant, Content: rt.Answer.Text},
			ResponseText: rt.Answer.Text, FinishReason: finish,
		}
		if err := st.InsertTurn(ctx, &tr); err != nil {
			t.Fatal(err)
		}
		// A side turn (a held-out question) is never rated.
		side := tr
		side.ID, side.Type, side.Supersedes = id+"-side", store.Side, ""
		if err := st.InsertTurn(ctx, &side); err != nil {
			t.Fatal(err)
		}
		if err := st.AddFeedback(ctx, id, store.Feedback{Rating: rt.Rating, Text: rt.Text, CreatedAt: t0}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBenchCompareRerated: with --rescore, compare reads the training
// ratings a run kept (through a pool's link to its learn.json) with today's
// users and names the first they would send otherwise: the turn from which a
// rerun cannot repeat the recorded run.
func TestBenchCompareRerated(t *testing.T) {
	dir := t.TempDir()
	french := bench.PersonaNamed("french")
	fr := bench.Answer{Text: "Les chiens mangent de la viande.", Finished: true}
	es := bench.Answer{Text: "Los perros comen carne y pienso, y también algunas verduras.", Finished: true}
	run := learnRun("french", 1, []int64{0, 1, 2}, []int{0, 1, 1}, "a", "b", fr.Text, "c", fr.Text, "c")
	run.Evals[1].TrainRated, run.Evals[2].TrainRated = 2, 2
	cfg := bench.Config{Feedback: bench.FeedbackText}
	write := func(path string) {
		writeReport(t, path, learnReport{Model: "qwen2.5-coder-1.5b", Config: cfg, Runs: []bench.Run{run}})
	}
	write(filepath.Join(dir, "old", "french-s1", "learn.json"))
	keepRated(t, filepath.Join(dir, "old", "french-s1", "data-combine-french-1"), []bench.RatedTurn{
		{Question: "What is bread made of?", Answer: fr, Rating: 1},
		{Question: "Tell me about trees.", Answer: fr, Rating: 1},
		{Question: "What do dogs eat?", Answer: es, Rating: 1}, // liked as French when recorded
		{Question: "What is a school?", Answer: fr, Rating: 1},
	})
	if err := os.MkdirAll(filepath.Join(dir, "pool", "french-s1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..", "..", "old", "french-s1", "learn.json"), filepath.Join(dir, "pool", "french-s1", "learn.json")); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(dir, "new", "french-s1", "learn.json")) // no store kept
	a, b := mustReadSide(t, filepath.Join(dir, "pool")), mustReadSide(t, filepath.Join(dir, "new"))
	var out bytes.Buffer
	if err := compareLearn(&out, a, b, true); err != nil {
		t.Fatal(err)
	}
	want := `  A's training ratings, read again: 1 of 4 otherwise today, the first in round 2 ("What do dogs eat?": +1, today -1 "` + french.Critique + `"): a rerun on today's users parts there` + "\n"
	if !strings.Contains(out.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, out.String())
	}
	if strings.Contains(out.String(), "B's training ratings") {
		t.Errorf("B kept no store, yet a line reads its ratings:\n%s", out.String())
	}
	out.Reset()
	if err := compareLearn(&out, a, b, false); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "training ratings") {
		t.Errorf("without --rescore the ratings are not read again:\n%s", out.String())
	}

	key := bench.RunKey{Arm: "combine", Persona: "french", Seed: 1}
	if line := a.rerated(key, nil); line != "" {
		t.Errorf("a persona this binary lacks: %q, want nothing", line)
	}

	// A run whose users rated as today's do.
	write(filepath.Join(dir, "same", "learn.json"))
	keepRated(t, filepath.Join(dir, "same", "data-combine-french-1"), []bench.RatedTurn{
		{Question: "What is bread made of?", Answer: fr, Rating: 1},
		{Question: "What do dogs eat?", Answer: es, Rating: -1, Text: french.Critique},
	})
	same := mustReadSide(t, filepath.Join(dir, "same"))
	if line := same.rerated(key, french); line != "all 2 as recorded" {
		t.Errorf("rated as today: %q", line)
	}

	// Next messages are not read again; such a run is not counted as read.
	cfg.Feedback = bench.FeedbackImplicit
	write(filepath.Join(dir, "same", "learn.json"))
	same = mustReadSide(t, filepath.Join(dir, "same"))
	if line := same.rerated(key, french); !strings.HasPrefix(line, "not read: ") || !strings.Contains(line, "implicit") {
		t.Errorf("implicit feedback: %q", line)
	}
	if read, otherwise := same.ratedOtherwise(same.runs, rescorers(true)); read != 0 || len(otherwise) != 0 {
		t.Errorf("implicit feedback: %d read, %v otherwise; want none", read, otherwise)
	}
}

func TestOrdinal(t *testing.T) {
	for n, want := range map[int]string{1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 11: "11th", 12: "12th", 13: "13th", 21: "21st", 22: "22nd", 111: "111th", 101: "101st"} {
		if got := ordinal(n); got != want {
			t.Errorf("ordinal(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestPoolRerated holds what the README says of the Combined row's runs:
// today's simulated users rate every one of them as it was rated, so a
// binary can repeat each. A change to a persona's checks that rates one
// otherwise (no binary repeats it past that turn) fails here: draw the run
// again under the new users, or name it in the README.
func TestPoolRerated(t *testing.T) {
	personas := rescorers(true)
	var otherwise []string
	for _, dir := range []string{"combined-pool", "combined-pool-7-9"} {
		side, err := readLearnSides(filepath.Join("..", "..", "bench", "results", dir))
		if err != nil {
			t.Fatal(err)
		}
		var runs []bench.Run
		for _, r := range side.runs {
			if r.Arm == "combine" {
				runs = append(runs, r)
			}
		}
		kept, names := side.ratedOtherwise(runs, personas)
		if kept != len(runs) {
			t.Errorf("%s: %d of %d runs kept their store", dir, kept, len(runs))
		}
		otherwise = append(otherwise, names...)
	}
	slices.Sort(otherwise)
	if len(otherwise) > 0 {
		t.Errorf("runs rated otherwise today: %v; the README says every run the pools count was rated by today's users", otherwise)
	}
}
