package main

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/clawrl/clawrl/bench"
)

// TestBenchTeacherFlags: --teacher-serve and the {teacher} mark need each
// other; with neither, nothing starts.
func TestBenchTeacherFlags(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	arm, err := bench.ParseArm("ext:combine:--opd-response=teacher:--teacher-url={teacher}:--teacher-model=q")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		serve string
		arms  []bench.Arm
		ok    bool
	}{
		{"", []bench.Arm{{Name: "combine", Method: "combine"}}, true},
		{"", []bench.Arm{arm}, false},
		{"smollm2", []bench.Arm{{Name: "combine", Method: "combine"}}, false},
	} {
		o := benchLearnOptions{teacherServe: tc.serve}
		stop, err := startBenchTeacher(context.Background(), &o, tc.arms, log)
		if (err == nil) != tc.ok {
			t.Errorf("--teacher-serve %q, arms %+v: err %v, want ok %v", tc.serve, tc.arms, err, tc.ok)
		}
		if err == nil {
			stop()
		}
	}
}
