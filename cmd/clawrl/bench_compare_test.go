package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawrl/clawrl/bench"
)

func writeLearn(t *testing.T, path string, m *machineInfo, runs ...bench.Run) {
	t.Helper()
	writeReport(t, path, learnReport{Model: "qwen2.5-coder-1.5b", Machine: m, Runs: runs})
}

// writeReport writes rep as the learn.json at path, its folders made.
func writeReport(t *testing.T, path string, rep learnReport) {
	t.Helper()
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func learnRun(persona string, seed int64, versions []int64, liked []int, texts ...string) bench.Run {
	r := bench.Run{Arm: "combine", Method: "combine", Persona: persona, Seed: seed}
	for i, k := range liked {
		e := bench.Eval{Round: i, PolicyVersion: versions[i], Satisfied: k, Asked: 2, RetentionRight: 2, RetentionAsked: 2}
		for _, s := range texts[2*i : 2*i+2] {
			e.HeldOut = append(e.HeldOut, bench.Shown{Text: s, Finished: true})
		}
		r.Evals = append(r.Evals, e)
	}
	return r
}

// mustReadSide is readLearnSide's side, failing the test on an error.
func mustReadSide(t *testing.T, path string) learnSide {
	t.Helper()
	side, err := readLearnSide(path)
	if err != nil {
		t.Fatal(err)
	}
	return side
}

func TestBenchCompare(t *testing.T) {
	dir := t.TempDir()
	zen := &machineInfo{CPU: "AMD EPYC 9R14", Threads: 2, Arch: "linux/amd64", Sgemm: "go/avx512", BF16: "vdpbf16ps", Quant: "avx512+vnni"}
	v := []int64{0, 1, 1}
	const list = "Here:\n- one\n- two" // not plain: no concise user likes it
	// A: two files in folders below one; B: one file holding both runs.
	writeLearn(t, filepath.Join(dir, "a", "s1", "learn.json"), zen, learnRun("concise", 1, v, []int{0, 2, 2}, list, list, "Short.", "Plain.", "Short.", "Plain."))
	writeLearn(t, filepath.Join(dir, "a", "s2", "learn.json"), nil, learnRun("concise", 2, v, []int{0, 1, 1}, list, list, "Short.", "x", "Short.", "x"))
	writeLearn(t, filepath.Join(dir, "a", "t1", "learn.json"), nil, learnRun("tldr", 1, v, []int{0, 0, 1}, "a", "b", "c", "d", "TL;DR: e", "f"))
	writeLearn(t, filepath.Join(dir, "b", "learn.json"), nil,
		learnRun("concise", 1, v, []int{0, 2, 2}, list, list, "Short.", "Plain.", "Short.", "Plain."),
		learnRun("concise", 2, []int64{0, 1, 2}, []int{0, 1, 2}, list, list, "Short.", "x", "Short.", "y"),
		learnRun("tldr", 1, v, []int{0, 0, 0}, "a", "b", "c", "d", "e", "f"))
	a, b := mustReadSide(t, filepath.Join(dir, "a")), mustReadSide(t, filepath.Join(dir, "b"))
	var out bytes.Buffer
	if err := compareLearn(&out, a, b, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"runs in 3 file(s); AMD EPYC 9R14, 2 threads (sgemm go/avx512, bf16 vdpbf16ps, quant avx512+vnni); machine not recorded",
		"combine concise seed 1\n  liked by round  A 0,2,=2\n                  B 0,2,=2\n  held-out answers the same by round: 2 2 2 — repeats answer for answer",
		"combine concise seed 2\n  liked by round  A 0,1,=1\n                  B 0,1,2\n  held-out answers the same by round: 2 2 1 — parts at round 2",
		"combine tldr seed 1\n  liked by round  A 0,0,=1\n                  B 0,0,=0\n  held-out answers the same by round: 2 2 1 — parts at round 2",
		"combine: 3 run(s) on both sides, 1 repeated answer for answer",
		"A liked by round (summed over the runs that reached it: 3): 0 3 4",
		"B liked by round (summed over the runs that reached it: 3): 0 3 4",
		"A 0.67 [0.30, 0.90], B 0.67 [0.30, 0.90] (4 and 4 of 6 and 6); retention A 6 of 6, B 6 of 6",
		"there, by persona (A → B): concise 3 → 4 of 4; tldr 1 → 0 of 2",
		"B against A at that round: ahead in 1, level in 1, behind in 1 (sign test p = 1)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	// Read again with today's concise users, who like "y", "x" and "Short." but not a list.
	out.Reset()
	if err := compareLearn(&out, a, b, true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "combine concise seed 2\n  liked by round  A 0,2,=2\n                  B 0,2,2") {
		t.Errorf("--rescore:\n%s", out.String())
	}

	// A run found twice on one side, or on no side at all, is an error.
	writeLearn(t, filepath.Join(dir, "a", "again", "learn.json"), nil, learnRun("concise", 1, v, []int{0, 2, 2}, "a", "b", "c", "d", "e", "f"))
	if _, err := readLearnSide(filepath.Join(dir, "a")); err == nil || !strings.Contains(err.Error(), "combine concise seed 1 is in") {
		t.Errorf("a run twice on one side: %v", err)
	}
	writeLearn(t, filepath.Join(dir, "c", "learn.json"), nil, learnRun("tldr", 9, v, []int{0, 0, 0}, "a", "b", "c", "d", "e", "f"))
	c, err := readLearnSide(filepath.Join(dir, "c", "learn.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := compareLearn(&out, b, c, false); err == nil {
		t.Error("no run on both sides: no error")
	}
	if _, err := readLearnSide(filepath.Join(dir, "empty")); err == nil {
		t.Error("a missing folder: no error")
	}
}

// FuzzReadLearnReport: whatever the file, readLearnReport returns an error
// or runs whose rounds are in order and whose counts are in range, which
// bench.Pair and compareLearn can index without checking.
func FuzzReadLearnReport(f *testing.F) {
	f.Add([]byte(`{"runs":[{"arm":"combine","persona":"concise","seed":1,"evals":[{"round":0,"satisfied":1,"asked":2,"retention_right":1,"retention_asked":2,"held_out":[{"text":"a","finished":true}]}]}]}`))
	f.Add([]byte(`{"runs":[{"arm":"off","persona":"tldr","evals":[{"round":1}]}]}`))
	f.Add([]byte(`{"runs":[{"arm":"","persona":"x"}]}`))
	f.Add([]byte(`{"machine":{"cpu":"x"},"runs":null}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rep, err := readLearnReport(b)
		if err != nil {
			return
		}
		for _, r := range rep.Runs {
			if r.Arm == "" || r.Persona == "" {
				t.Fatalf("kept a run without arm or persona: %+v", r)
			}
			for i, e := range r.Evals {
				if e.Round != i || e.Satisfied < 0 || e.Satisfied > e.Asked || len(e.HeldOut) > e.Asked || e.RetentionRight < 0 || e.RetentionRight > e.RetentionAsked {
					t.Fatalf("kept round %d: %+v", i, e)
				}
			}
		}
		var out bytes.Buffer
		side := learnSide{runs: rep.Runs, files: 1}
		_ = compareLearn(&out, side, side, true)
	})
}
