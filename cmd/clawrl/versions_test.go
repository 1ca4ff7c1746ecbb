package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/clawrl/clawrl/store"
	"github.com/clawrl/clawrl/store/sqlite"
)

// TestVersionsCmd lists a promoted and a rejected version with their
// numbers, and records a promote request that the train loop carries out.
func TestVersionsCmd(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.OpenDir(ctx, dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CommitVersion(ctx, store.Version{Version: 1, Dir: dir + "/versions/v000001",
		Metrics: store.VersionMetrics{Loss: 0.25, Samples: 16, MeanReward: -0.5, DroppedStale: 2, RetentionFacts: 16, RetentionLogprob: -0.2, RetentionBase: -0.1, StepScale: 0.25}},
		nil, nil, ""); err != nil {
		t.Fatal(err)
	}
	if err := st.CommitVersion(ctx, store.Version{Version: 2, Status: store.VersionRejected, StatusReason: "retention: lost 3 of 16 facts",
		Metrics: store.VersionMetrics{Samples: 16, RetentionFacts: 16, RetentionLost: 3, RewardBaseline: -0.26, RatingSum: -3.1, RatingWeight: 12}}, nil, nil, ""); err != nil {
		t.Fatal(err)
	}
	st.Close()

	run := func(args ...string) (string, error) {
		root := newRootCmd()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetArgs(args)
		err := root.Execute()
		return out.String(), err
	}
	out, err := run("versions", "--data", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"v1 *", "16/16 kept", "step ×0.25", "-0.50", "(baseline -0.26)", "rejected", "lost 3 of 16", "promoted"} {
		if !strings.Contains(out, want) {
			t.Errorf("listing lacks %q:\n%s", want, out)
		}
	}
	out, err = run("versions", "--data", dir, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rows []versionRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 2 || !rows[1].Served || rows[0].Status != "rejected" {
		t.Fatalf("json %v: %s", err, out)
	}
	if _, err := run("versions", "promote", "9", "--data", dir); err == nil || !strings.Contains(err.Error(), "no version 9") {
		t.Errorf("promote of a missing version: %v", err)
	}
	if _, err := run("versions", "rollback", "x", "--data", dir); err == nil {
		t.Error("rollback x accepted")
	}
	out, err = run("versions", "promote", "2", "--data", dir)
	if err != nil || !strings.Contains(out, "requested: promote to v2") {
		t.Fatalf("promote: %v %s", err, out)
	}
	st, err = sqlite.OpenDir(ctx, dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if req, err := st.PendingServing(ctx); err != nil || req.Version != 2 || req.Action != "promote" {
		t.Errorf("pending %+v %v", req, err)
	}
}
