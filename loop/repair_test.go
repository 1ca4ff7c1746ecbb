package loop

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/clawrl/clawrl/engine/scripted"
	"github.com/clawrl/clawrl/rl"
	"github.com/clawrl/clawrl/rl/rltest"
	"github.com/clawrl/clawrl/store"
)

// repairTrainer forgets the fact with every full step ("Oui oui, la la
// la.") and gets it back after fixAfter repair steps (0: never) or once the
// step is halved.
type repairTrainer struct {
	backtrackTrainer
	fixAfter  int
	noAnchors bool
	repairs   int // since the last Step
}

func (r *repairTrainer) Step(ctx context.Context, batch []rl.Sample) (rl.StepMetrics, error) {
	r.repairs = 0
	return r.backtrackTrainer.Step(ctx, batch)
}

func (r *repairTrainer) Repair(ctx context.Context) (rl.StepMetrics, error) {
	if r.noAnchors {
		return rl.StepMetrics{}, rl.ErrNoAnchors
	}
	r.repairs++
	if r.repairs == r.fixAfter {
		r.say("C'est Paris.")
	}
	return rl.StepMetrics{Loss: 1, Tokens: 10}, nil
}

// TestRetentionRepair: a step the gate rejects gets --gate-repair repair
// steps, each checked again, before the line search; the version records
// how many it took (and the step scale, when the line search ran after
// them), and a trainer with no anchors is not counted as repaired. A
// version that passes in the end is told to RetentionConfig.Passed.
func TestRetentionRepair(t *testing.T) {
	cases := []struct {
		name               string
		repairs, shrinks   int
		fixAfter           int
		noAnchors          bool
		wantStatus         string
		wantRepairs        int
		wantScale          float64
		wantReason         string
		wantShrinkAttempts int
	}{
		{name: "one repair keeps the fact", repairs: 2, fixAfter: 1, wantStatus: store.VersionPromoted, wantRepairs: 1, wantScale: 1,
			wantReason: "after a repair step on the rehearsal anchors"},
		{name: "the second repair keeps it", repairs: 2, shrinks: 1, fixAfter: 2, wantStatus: store.VersionPromoted, wantRepairs: 2, wantScale: 1,
			wantReason: "after 2 repair steps"},
		{name: "repairs fail, the halved step keeps it", repairs: 2, shrinks: 1, wantStatus: store.VersionPromoted, wantRepairs: 2, wantScale: 0.5,
			wantReason: "shrunk to 0.5", wantShrinkAttempts: 1},
		{name: "repairs fail, rejected", repairs: 2, wantStatus: store.VersionRejected, wantRepairs: 2, wantScale: 1,
			wantReason: "lost 1 of 1 facts"},
		{name: "no anchors", repairs: 2, noAnchors: true, fixAfter: 1, wantStatus: store.VersionRejected, wantScale: 1,
			wantReason: "lost 1 of 1 facts"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			st := openStore(t, dir)
			defer st.Close()
			eng := scripted.New(scripted.Options{})
			f := eng.Format()
			tr := &repairTrainer{backtrackTrainer: backtrackTrainer{shrinkTrainer{answerTrainer: answerTrainer{
				evalTrainer: evalTrainer{Trainer: &rltest.Trainer{}, current: -0.1}, answer: "C'est Paris.", format: f},
				afterShrink: "C'est Paris."}}, fixAfter: c.fixAfter, noAnchors: c.noAnchors}
			var passed []int64
			r := newGatedRunner(t, st, eng, tr, dir, rl.RetentionConfig{Decode: f.Decode, Stop: f.StopIDs(), Repairs: c.repairs, Shrinks: c.shrinks,
				Passed: func(v int64) { passed = append(passed, v) }})
			v := (&fixture{dir: dir, store: st, engine: eng}).rateAndStep(t, r, "a")
			got := fmt.Sprintf("%s, %d repairs, step ×%g, %d shrinks", v.Status, v.Metrics.Repairs, v.Metrics.StepScale, len(tr.shrinks))
			want := fmt.Sprintf("%s, %d repairs, step ×%g, %d shrinks", c.wantStatus, c.wantRepairs, c.wantScale, c.wantShrinkAttempts)
			if got != want || !strings.Contains(v.StatusReason, c.wantReason) {
				t.Fatalf("v1 %s (%q), want %s (%q)", got, v.StatusReason, want, c.wantReason)
			}
			served := int64(0)
			if c.wantStatus == store.VersionPromoted {
				served = 1
			}
			if eng.Version() != served {
				t.Errorf("engine serves v%d, want v%d", eng.Version(), served)
			}
			// The gate tells a pass (--rehearsal-avoid-passes), once, and
			// nothing of a rejection.
			if want := fmt.Sprint([]int64{1}); c.wantStatus == store.VersionPromoted && fmt.Sprint(passed) != want ||
				c.wantStatus == store.VersionRejected && len(passed) != 0 {
				t.Errorf("passes told %v for a %s version", passed, v.Status)
			}
		})
	}
}

// TestKill9Repair kills the loop with SIGKILL after the gate's repair step
// (the first version's step rejected and repaired, not yet checked again,
// nothing saved) and restarts it on the same data (gateKilled): each
// version is then served after one repair, with the repair recorded (what
// `clawrl versions` shows as "repaired ×1") and its step whole.
func TestKill9Repair(t *testing.T) {
	_, _, vs := gateKilled(t, "TestKill9Repair", rl.PointRepaired, func(t *testing.T, dir string) (*Runner, *scripted.Engine, func()) {
		st := openStore(t, dir)
		eng := scripted.New(scripted.Options{})
		f := eng.Format()
		tr := &repairTrainer{backtrackTrainer: backtrackTrainer{shrinkTrainer{answerTrainer: answerTrainer{
			evalTrainer: evalTrainer{Trainer: &rltest.Trainer{}, current: -0.1}, answer: "C'est Paris.", format: f},
			afterShrink: "C'est Paris."}}, fixAfter: 1}
		r := newGatedRunner(t, st, eng, tr, dir, rl.RetentionConfig{Decode: f.Decode, Stop: f.StopIDs(), Repairs: 1})
		return r, eng, func() { st.Close() }
	})
	for _, v := range vs {
		if v.Status != store.VersionPromoted || v.Metrics.Repairs != 1 || v.Metrics.StepScale != 1 || !strings.Contains(v.StatusReason, "after a repair step") {
			t.Errorf("v%d: %s, %d repairs, step ×%g (%s); want promoted after one repair at its whole step", v.Version, v.Status, v.Metrics.Repairs, v.Metrics.StepScale, v.StatusReason)
		}
	}
}
