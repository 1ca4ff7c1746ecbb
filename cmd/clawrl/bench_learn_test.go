package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchLearnPlumbing runs `clawrl bench learn` end to end on the
// deterministic test engine: servers start and stop per run, turns are
// rated through /v1/feedback, evaluations are recorded, the learning arm
// (no trainer on the test engine) is reported as stalled, and the three
// reports are written.
func TestBenchLearnPlumbing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the clawrl binary")
	}
	exe := buildClawrl(t)
	out := t.TempDir()
	cmd := exec.Command(exe, "bench", "learn", "--out", out, "--arms", "off,rl", "--personas", "concise,signoff",
		"--versions", "2", "--per-version", "3", "--eval-prompts", "2", "--retention", "2", "--max-tokens", "8",
		"--version-timeout", "2s", "--concurrency", "4")
	cmd.Env = append(os.Environ(), testEngineEnv+"=scripted")
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bench learn: %v\n%s", err, b)
	}
	var rep learnReport
	js, err := os.ReadFile(filepath.Join(out, "learn.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(js, &rep); err != nil {
		t.Fatalf("learn.json: %v", err)
	}
	if len(rep.Runs) != 4 {
		t.Fatalf("%d runs, want 4 (2 arms × 2 personas):\n%s", len(rep.Runs), js)
	}
	for _, r := range rep.Runs {
		if r.Err != "" {
			t.Errorf("run %s/%s: %s", r.Arm, r.Persona, r.Err)
		}
		switch r.Arm {
		case "off":
			// Control: the base evaluation and one after a round of rated turns.
			if len(r.Evals) != 2 || r.Evals[1].TrainRated != 3 || r.Stalled != "" {
				t.Errorf("control run %+v", r)
			}
		case "rl":
			if len(r.Evals) != 1 || !strings.Contains(r.Stalled, "no new version") {
				t.Errorf("rl run on the test engine should stall after its base evaluation: %+v", r)
			}
		}
		for _, e := range r.Evals {
			if e.Asked != 2 || e.RetentionAsked != 2 {
				t.Errorf("evaluation %+v: want 2 prompts and 2 facts", e)
			}
		}
	}
	if len(rep.Summary) != 2 || rep.Summary[1].Stalled != 2 {
		t.Errorf("summary %+v", rep.Summary)
	}
	for _, name := range []string{"learn.md", "learn.svg", "serve-off-concise-1.log", "serve-rl-signoff-1.log"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(string(b), "| off |") {
		t.Errorf("no table on stdout:\n%s", b)
	}
}
