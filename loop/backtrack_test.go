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
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine/scripted"
	"github.com/clawrl/clawrl/rl"
	"github.com/clawrl/clawrl/rl/rltest"
	"github.com/clawrl/clawrl/store"
)

// backtrackTrainer forgets the fact with every full step ("Oui oui, la la
// la.") and keeps it once the step is halved ("C'est Paris."): the gate
// must backtrack on every version.
type backtrackTrainer struct{ shrinkTrainer }

func (b *backtrackTrainer) Step(ctx context.Context, batch []rl.Sample) (rl.StepMetrics, error) {
	m, err := b.shrinkTrainer.Step(ctx, batch)
	b.say("Oui oui, la la la.")
	return m, err
}

func newBacktrackRunner(t *testing.T, dir string) (*Runner, *backtrackTrainer, *scripted.Engine, func()) {
	t.Helper()
	st := openStore(t, dir)
	eng := scripted.New(scripted.Options{})
	tr := &backtrackTrainer{shrinkTrainer{answerTrainer: answerTrainer{evalTrainer: evalTrainer{Trainer: &rltest.Trainer{}, current: -0.1},
		answer: "C'est Paris.", format: eng.Format()}, afterShrink: "C'est Paris."}}
	f := eng.Format()
	r := newGatedRunner(t, st, eng, tr, dir, rl.RetentionConfig{Decode: f.Decode, Stop: f.StopIDs(), Shrinks: 2})
	return r, tr, eng, func() { st.Close() }
}

const (
	gateKillDirEnv   = "CLAWRL_LOOP_GATE_KILL_DIR"
	gateKillPointEnv = "CLAWRL_LOOP_GATE_KILL_POINT"
	backtrackTurns   = 2
)

// gateKilled runs the loop, opened on a folder by open, in a child process
// killed with SIGKILL at the gate's point (a step rejected and being mended,
// nothing saved), then restarts it on the same data and checks what must
// hold whatever the mend: no version was recorded and no folder is left,
// and after the restart each of backtrackTurns rated turns is trained
// exactly once, one version each. It returns the restarted runner, its
// engine and the versions, for the mend's own checks. The child is the
// test named test run again.
func gateKilled(t *testing.T, test, point string, open func(t *testing.T, dir string) (*Runner, *scripted.Engine, func())) (*Runner, *scripted.Engine, []store.Version) {
	t.Helper()
	if dir := os.Getenv(gateKillDirEnv); dir != "" {
		r, _, done := open(t, dir)
		defer done()
		r.Scheduler().AtPoint = func(p string) {
			if p == os.Getenv(gateKillPointEnv) {
				killSelf()
			}
		}
		if _, err := r.RunOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(os.Stderr, "gate child finished without reaching %s\n", point)
		os.Exit(3)
	}
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	ctx := context.Background()
	dir := t.TempDir()
	func() { // rated turns, before the child starts
		st := openStore(t, dir)
		defer st.Close()
		fx := &fixture{dir: dir, store: st, engine: scripted.New(scripted.Options{})}
		for i := range backtrackTurns {
			turn := fx.serve(t, fmt.Sprintf("b%d", i), []chat.Message{{Role: chat.RoleUser, Content: fmt.Sprintf("question %d", i)}})
			if err := st.AddFeedback(ctx, turn.ID, store.Feedback{Rating: 1, CreatedAt: time.Now()}); err != nil {
				t.Fatal(err)
			}
		}
	}()

	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), gateKillDirEnv+"="+dir, gateKillPointEnv+"="+point)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child was not killed at %s: %v\n%s", point, err, out.String())
	}

	r, eng, done := open(t, dir)
	t.Cleanup(done)
	st := r.store
	if v, err := st.LatestVersion(ctx); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("after a kill at %s: version %+v (%v), want none recorded", point, v, err)
	}
	checkVersionsDir(t, filepath.Join(dir, "versions"), 0)
	for range 2 * backtrackTurns {
		if _, err := r.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	vs, err := st.Versions(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != backtrackTurns {
		t.Fatalf("%d versions, want %d", len(vs), backtrackTurns)
	}
	if eng.Version() != backtrackTurns {
		t.Errorf("engine serves v%d, want v%d", eng.Version(), backtrackTurns)
	}
	latest, err := st.LatestVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	state, err := rltest.ReadState(latest.Dir)
	if err != nil {
		t.Fatal(err)
	}
	sorted := slices.Clone(state.Trained)
	slices.Sort(sorted)
	if len(state.Trained) != backtrackTurns || len(slices.Compact(sorted)) != backtrackTurns {
		t.Errorf("lineage trained %v, want each of %d turns once", state.Trained, backtrackTurns)
	}
	return r, eng, vs
}

// TestKill9Backtrack kills the loop with SIGKILL while the gate backtracks
// (the first version's step halved, not yet checked again, nothing saved)
// and restarts it on the same data (gateKilled); each version is then
// served at half its step with the scale recorded (what `clawrl versions`
// and clawrl_loop_version_step_scale show).
func TestKill9Backtrack(t *testing.T) {
	var tr *backtrackTrainer
	r, _, vs := gateKilled(t, "TestKill9Backtrack", rl.PointShrunk, func(t *testing.T, dir string) (*Runner, *scripted.Engine, func()) {
		r, btr, eng, done := newBacktrackRunner(t, dir)
		tr = btr
		return r, eng, done
	})
	for _, v := range vs {
		if v.Status != store.VersionPromoted || v.Metrics.StepScale != 0.5 || !strings.Contains(v.StatusReason, "shrunk to 0.5") {
			t.Errorf("v%d: %s at step ×%g (%s), want promoted at half its step", v.Version, v.Status, v.Metrics.StepScale, v.StatusReason)
		}
	}
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(r.Collector()); err != nil {
		t.Fatal(err)
	}
	if got, err := gatherValue(reg, "clawrl_loop_version_step_scale", nil); err != nil || got != 0.5 {
		t.Errorf("clawrl_loop_version_step_scale = %v (%v), want 0.5", got, err)
	}
	if got := len(tr.shrinks); got != backtrackTurns {
		t.Errorf("%d shrinks after the restart, want one per version", got)
	}
}
