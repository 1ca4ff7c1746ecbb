package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawrl/clawrl/bench"
)

func TestBenchReport(t *testing.T) {
	dir := t.TempDir()
	v := []int64{0, 1, 1}
	const list = "Here:\n- one\n- two" // not plain: no concise user likes it
	off := learnRun("concise", 1, []int64{0, 0}, []int{0, 0}, list, list, list, list)
	off.Arm, off.Method = "off", bench.ArmControl
	// Two persona-seeds run apart, the first with its control, as the
	// issue's protocol runs them; liked as recorded: 1 and 2 of 2 at v2.
	writeLearn(t, filepath.Join(dir, "s1", "learn.json"), nil, off, learnRun("concise", 1, v, []int{0, 1, 1}, list, list, "Short.", list, "Short.", list))
	writeLearn(t, filepath.Join(dir, "s2", "learn.json"), nil, learnRun("tldr", 2, v, []int{0, 2, 2}, "a", "b", "c", "d", "e", "f"))
	side, err := readLearnSides(filepath.Join(dir, "s1"), filepath.Join(dir, "s2", "learn.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := reportLearn(&out, side, nil, false, "", "test"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"3 run(s) from 2 file(s); personas concise, tldr; model qwen2.5-coder-1.5b; machine not recorded",
		"| combine | 0.00 [0.00, 0.49] (0w) | 0.75 [0.30, 0.95] (0w) | 0.75 [0.30, 0.95] (0w) | 0 | 0 | 0.2 |",
		"| off | 0.00 [0.00, 0.66] (0w) | 0.00 [0.00, 0.66] (0w) | · | 0 | 0 | – |",
		"| tldr | combine | 0.00 [0.00, 0.66] | 1.00 [0.34, 1.00] (v2) | 2/2 → 2/2 |",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}

	// Read again with today's users: tldr's "e" and "f" have no TL;DR
	// line, and only the combine arm is kept; the pooled files are written.
	out.Reset()
	o := filepath.Join(dir, "pooled")
	if err := reportLearn(&out, side, []string{"combine"}, true, o, "test"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"2 run(s) from 2 file(s); personas concise, tldr; held-out answers read again",
		"| combine | 0.00 [0.00, 0.49] (0w) | 0.25 [0.05, 0.70] (0w) | 0.25 [0.05, 0.70] (0w) | 0 | 0 | 1 |",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--rescore --arms combine: output lacks %q:\n%s", want, out.String())
		}
	}
	b, err := os.ReadFile(filepath.Join(o, "learn.json"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := readLearnReport(b)
	if err != nil || rep.Model != "qwen2.5-coder-1.5b" || len(rep.Runs) != 2 || rep.Runs[1].Evals[2].Satisfied != 0 || len(rep.Summary) != 1 || rep.Summary[0].Last().Satisfied.K != 1 {
		t.Errorf("pooled learn.json: %v %+v", err, rep.Summary)
	}
	for _, f := range []string{"learn.md", "learn.svg"} {
		if st, err := os.Stat(filepath.Join(o, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	// The recorded files are as they were.
	if side.runs[2].Evals[2].Satisfied != 2 {
		t.Errorf("--rescore changed the runs read: %+v", side.runs[2].Evals[2])
	}

	// A run named twice, through two paths, is an error; so is an arm
	// that no run has.
	if _, err := readLearnSides(filepath.Join(dir, "s1"), filepath.Join(dir, "s1", "learn.json")); err == nil || !strings.Contains(err.Error(), "concise seed 1 is in") {
		t.Errorf("a run twice: %v", err)
	}
	if err := reportLearn(&out, side, []string{"opd"}, false, "", "test"); err == nil {
		t.Error("no run of the arms named: no error")
	}
}

// TestCombinedPoolTable: the Combined row of BENCHMARKS.md is what its
// recorded runs say, read with today's simulated users — 395 of 480
// held-out answers liked at v8, every retention fact kept. A change to a
// persona's check that moves it shows here, and the row must move with it.
func TestCombinedPoolTable(t *testing.T) {
	side, err := readLearnSides(filepath.Join("..", "..", "bench", "results", "combined-pool"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	o := t.TempDir()
	if err := reportLearn(&out, side, []string{"combine"}, true, o, "test"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(o, "learn.json"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := readLearnReport(b)
	if err != nil {
		t.Fatal(err)
	}
	if side.files != 24 || len(rep.Runs) != 24 || len(rep.Summary) != 1 {
		t.Fatalf("%d files, %d combine runs, %d arms: want 24, 24, 1", side.files, len(rep.Runs), len(rep.Summary))
	}
	last := rep.Summary[0].Last()
	if last.Round != 8 || last.Runs != 24 || last.Satisfied.K != 395 || last.Satisfied.N != 480 || last.Retention.K != 192 || last.Retention.N != 192 {
		t.Errorf("v8: round %d, %d runs, liked %d of %d, retention %d of %d; BENCHMARKS.md says round 8, 24 runs, 395 of 480, 192 of 192",
			last.Round, last.Runs, last.Satisfied.K, last.Satisfied.N, last.Retention.K, last.Retention.N)
	}
	if !strings.Contains(out.String(), "| combine | 0.03 [0.01, 0.04] (52w) |") || !strings.Contains(out.String(), " 0.82 [0.79, 0.85] (31w) |") {
		t.Errorf("the row's table:\n%s", out.String())
	}
}
