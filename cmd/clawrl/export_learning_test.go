package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/clawrl/clawrl/store"
	"github.com/clawrl/clawrl/store/learningtest"
	"github.com/clawrl/clawrl/store/postgres"
	"github.com/clawrl/clawrl/store/postgres/pgtest"
	"github.com/clawrl/clawrl/store/sqlite"
)

// TestExportAndStatusCarryTheLearningLoop checks that `clawrl export` adds
// judgments and samples (the seed's PRM and OPD record fields) to each turn,
// and `clawrl status` reports versions.
func TestExportAndStatusCarryTheLearningLoop(t *testing.T) {
	dir := t.TempDir()
	st, err := sqlite.OpenDir(t.Context(), dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	exportAndStatusCarryTheLearningLoop(t, st, "--data", dir)
}

// TestExportAndStatusOnPostgres: the same on a Postgres store, named with
// --store (what several gateways and a trainer share).
func TestExportAndStatusOnPostgres(t *testing.T) {
	srv := pgtest.New(t)
	url := srv.Database(t, "exportstatus")
	st, err := postgres.Open(t.Context(), url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	exportAndStatusCarryTheLearningLoop(t, st, "--store", url)
	out, err := runCLI(t, "status", "--store", url)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "/exportstatus (schema ") || !strings.Contains(out, "latest_version") {
		t.Errorf("status table on Postgres:\n%s", out)
	}
	if _, err := runCLI(t, "export", "--store", srv.URL("nosuchdb")); err == nil {
		t.Error("export of a database that does not exist succeeded")
	}
}

// exportAndStatusCarryTheLearningLoop seeds st (closing it after), then
// reads it back with export and status given storeArgs.
func exportAndStatusCarryTheLearningLoop(t *testing.T, st store.LearningStore, storeArgs ...string) {
	t.Helper()
	ctx := t.Context()
	turns := learningtest.Seed(t, st, "export", 2, true)
	j := store.Judgment{TurnID: turns[0].ID, SessionID: turns[0].SessionID, Score: 1, Keep: true, Why: "score +1 and an accepted hint",
		Hint: "Answer in kilometres.", HintAccepted: true, Judge: "engine:base", Reason: "majority",
		Votes: []store.Vote{
			{Kind: store.VoteEval, Source: "judge", Score: 1, Valid: true, Raw: `right \boxed{1}`},
			{Kind: store.VoteEval, Source: "judge", Raw: "no box", Err: "no valid \\boxed{}"},
			{Kind: store.VoteHint, Source: "judge", Score: 1, Valid: true, Hint: "Answer in kilometres.", Raw: `[HINT]Answer in kilometres.[/HINT] \boxed{1}`},
		}}
	if err := st.RecordJudgment(ctx, j); err != nil {
		t.Fatal(err)
	}
	if err := st.AddSample(ctx, store.Sample{TurnID: turns[0].ID, Method: "combine",
		TeacherLogprobs: []float32{-1, -2, -3}, TeacherResponseIDs: []int32{7, 8, 9}, Why: j.Why}); err != nil {
		t.Fatal(err)
	}
	if err := st.CommitVersion(ctx, store.Version{Version: 1, Dir: "/v1", Metrics: store.VersionMetrics{Loss: 0.25, Samples: 1, MeanReward: 1}},
		[]string{turns[0].ID}, nil, ""); err != nil {
		t.Fatal(err)
	}
	st.Close()

	var out bytes.Buffer
	root := newRootCmd()
	root.SetOut(&out)
	root.SetArgs(append([]string{"export"}, storeArgs...))
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	var records []map[string]any
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("export line %q: %v", sc.Text(), err)
		}
		records = append(records, rec)
	}
	if len(records) != 2 {
		t.Fatalf("%d records, want 2", len(records))
	}
	r := records[0]
	want := map[string]any{"score": 1.0, "accepted": true, "hint": "Answer in kilometres.", "hint_len": 21.0,
		"teacher_logprob_len": 3.0, "representative_eval": `right \boxed{1}`, "state": "trained"}
	for k, v := range want {
		if r[k] != v {
			t.Errorf("export %s = %v, want %v", k, r[k], v)
		}
	}
	if votes, _ := r["votes"].([]any); len(votes) != 2 || votes[0] != 1.0 || votes[1] != nil {
		t.Errorf("export votes %v, want [1 null]", r["votes"])
	}
	if s, _ := r["sample"].(map[string]any); s == nil || s["trained_version"] != 1.0 || s["why"] != j.Why ||
		s["teacher_wrote"] != true || fmt.Sprint(s["teacher_response_ids"]) != "[7 8 9]" {
		t.Errorf("export sample %v", r["sample"])
	}
	// Without ids, the teacher's answer is only flagged.
	noIDs, err := runCLI(t, append([]string{"export", "--ids=false"}, storeArgs...)...)
	if err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(noIDs, "\n"); !strings.Contains(first, `"teacher_wrote":true`) || strings.Contains(first, "teacher_response_ids") {
		t.Errorf("export --ids=false first record: %s", first)
	}
	if jm, _ := r["judgment"].(map[string]any); jm == nil || len(jm["votes"].([]any)) != 3 {
		t.Errorf("export judgment %v", r["judgment"])
	}
	if _, ok := records[1]["score"]; ok {
		t.Errorf("unjudged turn has judgment fields: %v", records[1])
	}

	out.Reset()
	root = newRootCmd()
	root.SetOut(&out)
	root.SetArgs(append([]string{"status", "--json"}, storeArgs...))
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Loop map[string]any `json:"loop"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Loop["latest_version"] != 1.0 || rep.Loop["samples_trained"] != 1.0 || rep.Loop["judgments"] != 1.0 {
		t.Errorf("status loop section: %v", rep.Loop)
	}
}
