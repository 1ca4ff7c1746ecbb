package loop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/judge"
	"github.com/clawrl/clawrl/rl"
	"github.com/clawrl/clawrl/rl/rltest"
	"github.com/clawrl/clawrl/store"
)

// Environment of the crash child: the data directory and the point at which
// it kills itself with SIGKILL.
const (
	crashDirEnv   = "CLAWRL_LOOP_CRASH_DIR"
	crashPointEnv = "CLAWRL_LOOP_CRASH_POINT"
	pointJudging  = "judging"
)

// crashTurns turns are served and observed before the child starts; with
// batch 2 they make three versions.
const crashTurns = 6

// TestKill9 kills the learning loop with SIGKILL at each crash point — while
// judging, after a trainer step, after the version folder is written, after
// the version is recorded, after it is published — restarts it on the same
// data directory and checks: missing judgments are redone, every sample is
// trained exactly once in the lineage of recorded versions, the last recorded
// version is what the engine serves, and the trainer resumes with its
// optimizer state (the step count equals the version).
func TestKill9(t *testing.T) {
	if dir := os.Getenv(crashDirEnv); dir != "" {
		crashChild(t, dir, os.Getenv(crashPointEnv))
		return
	}
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	for _, point := range []string{pointJudging, rl.PointStepped, rl.PointSaved, rl.PointCommitted, rl.PointPublished} {
		t.Run(point, func(t *testing.T) {
			dir := t.TempDir()
			seedCrashTurns(t, dir)

			cmd := exec.Command(os.Args[0], "-test.run=^TestKill9$", "-test.count=1")
			cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, crashPointEnv+"="+point)
			var out strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("child was not killed at %s: %v\n%s", point, err, out.String())
			}

			f := newFixture(t, dir, rl.MethodRL, 2)
			ctx := context.Background()
			// The kill came where it was meant to: mid-judging some turns
			// are judged and some are not; mid-training v1 is recorded.
			before, err := f.store.ListJudgments(ctx, store.TurnFilter{})
			if err != nil {
				t.Fatal(err)
			}
			if point == pointJudging && (len(before) == 0 || len(before) >= crashTurns) {
				t.Errorf("killed while judging with %d of %d turns judged", len(before), crashTurns)
			}
			if v, err := f.store.LatestVersion(ctx); point != pointJudging && (err != nil || v.Version < 1) {
				t.Errorf("killed in the second step with latest version %d (%v)", v.Version, err)
			}
			if err := f.runner.Scheduler().Recover(ctx); err != nil {
				t.Fatal(err)
			}
			latest, err := f.store.LatestVersion(ctx)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				t.Fatal(err)
			}
			if f.engine.Version() != latest.Version {
				t.Errorf("engine serves v%d after restart, last recorded is v%d", f.engine.Version(), latest.Version)
			}
			if got := f.trainer.State().Steps; got != latest.Version {
				t.Errorf("trainer resumed at step %d, last recorded version is %d", got, latest.Version)
			}
			checkVersionsDir(t, filepath.Join(dir, "versions"), latest.Version)

			for range 5 {
				if _, err := f.runner.RunOnce(ctx); err != nil {
					t.Fatal(err)
				}
			}
			final, err := f.store.LatestVersion(ctx)
			if err != nil || final.Version != 3 {
				t.Fatalf("final version %d (%v), want 3", final.Version, err)
			}
			st, err := rltest.ReadState(final.Dir)
			if err != nil {
				t.Fatal(err)
			}
			sorted := slices.Clone(st.Trained)
			slices.Sort(sorted)
			if len(slices.Compact(sorted)) != crashTurns || len(st.Trained) != crashTurns || st.Steps != 3 {
				t.Errorf("lineage of v3 trained %v in %d steps: want each of %d turns once in 3 steps", st.Trained, st.Steps, crashTurns)
			}
			trained, err := f.store.ListTurns(ctx, store.TurnFilter{States: []store.TurnState{store.Trained}})
			if err != nil || len(trained) != crashTurns {
				t.Errorf("%d turns trained (%v), want %d", len(trained), err, crashTurns)
			}
			js, err := f.store.ListJudgments(ctx, store.TurnFilter{})
			if err != nil || len(js) != crashTurns {
				t.Errorf("%d judgments (%v), want %d", len(js), err, crashTurns)
			}
			if f.engine.Version() != 3 {
				t.Errorf("engine serves v%d, want 3", f.engine.Version())
			}
		})
	}
}

func seedCrashTurns(t *testing.T, dir string) {
	t.Helper()
	f := newFixture(t, dir, rl.MethodRL, 2)
	for i := range crashTurns {
		tr := f.serve(t, fmt.Sprintf("crash%d", i), []chat.Message{{Role: chat.RoleUser, Content: fmt.Sprintf("question %d", i)}})
		f.reply(t, tr, `[[say:\boxed{1}]] thanks`)
	}
	f.store.Close()
}

// checkVersionsDir requires version folders 1..latest and nothing else but
// the base snapshot (v000000, the trainer's untrained state).
func checkVersionsDir(t *testing.T, dir string, latest int64) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) && latest == 0 {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.Name() != "v000000" {
			names = append(names, e.Name())
		}
	}
	var want []string
	for v := int64(1); v <= latest; v++ {
		want = append(want, fmt.Sprintf("v%06d", v))
	}
	if !slices.Equal(names, want) {
		t.Errorf("versions folder holds %v, want %v", names, want)
	}
}

// killSelf is kill -9 of the current process: no deferred function, no
// buffered write, no cleanup runs.
func killSelf() {
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

// crashChild runs the loop on dir and kills itself at point: during the
// second training step's point, or at the eighth judge vote (the first two
// turns' three votes each are recorded by then).
func crashChild(t *testing.T, dir, point string) {
	f := newFixture(t, dir, rl.MethodRL, 2)
	var votes atomic.Int32
	if point == pointJudging {
		inner := &judge.EngineBackend{Engine: f.engine}
		f.runner.judge = judge.New(killingBackend{inner: inner, calls: &votes, at: 8},
			judge.Config{Verdict: judge.VerdictVotes, EvalVotes: 3, Retries: judge.NoRetries, MaxTokens: 512, HintTokens: 256}, quiet())
	}
	var hits int
	f.runner.Scheduler().AtPoint = func(p string) {
		if p == point {
			if hits++; hits == 2 {
				killSelf()
			}
		}
	}
	ctx := context.Background()
	if err := f.runner.Scheduler().Recover(ctx); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if _, err := f.runner.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Fprintf(os.Stderr, "crash child finished without reaching %s\n", point)
	os.Exit(3)
}

// killingBackend kills the process on its at-th call, while other votes of
// the same round are in flight.
type killingBackend struct {
	inner judge.Backend
	calls *atomic.Int32
	at    int32
}

func (k killingBackend) Name() string { return k.inner.Name() }

func (k killingBackend) Complete(ctx context.Context, msgs []chat.Message, p judge.Params) (string, error) {
	if k.calls.Add(1) == k.at {
		killSelf()
	}
	return k.inner.Complete(ctx, msgs, p)
}
