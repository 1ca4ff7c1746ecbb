package loop

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/clawrl/clawrl/engine/scripted"
	"github.com/clawrl/clawrl/rl"
	"github.com/clawrl/clawrl/rl/rltest"
	"github.com/clawrl/clawrl/store"
)

// focusTrainer is a Focuser whose steps answer the retention fact as
// answers says for the focus they were taken with (a step with a focus
// not in answers keeps the fact), halved or not: a focused step that
// breaks the fact cannot be mended by the gate's line search.
type focusTrainer struct {
	shrinkTrainer
	focus   float64
	answers map[float64]string
	// steps is the focus each Step was taken with.
	steps []float64
	// loads counts Load calls (the restores before an unfocused step).
	loads int
}

var _ rl.Focuser = (*focusTrainer)(nil)

func (f *focusTrainer) DistillFocus() float64         { return f.focus }
func (f *focusTrainer) SetDistillFocus(focus float64) { f.focus = focus }
func (f *focusTrainer) Load(dir string) error         { f.loads++; return f.shrinkTrainer.Load(dir) }
func (f *focusTrainer) Step(ctx context.Context, batch []rl.Sample) (rl.StepMetrics, error) {
	f.steps = append(f.steps, f.focus)
	m, err := f.shrinkTrainer.Step(ctx, batch)
	answer, ok := f.answers[f.focus]
	if !ok {
		answer = "C'est Paris."
	}
	f.say(answer)
	f.afterShrink = answer
	return m, err
}

func newFocusRunner(t *testing.T, focus float64, answers map[float64]string) (*Runner, *focusTrainer, *fixture) {
	t.Helper()
	dir := t.TempDir()
	st := openStore(t, dir)
	t.Cleanup(func() { st.Close() })
	eng := scripted.New(scripted.Options{})
	f := eng.Format()
	tr := &focusTrainer{shrinkTrainer: shrinkTrainer{answerTrainer: answerTrainer{evalTrainer: evalTrainer{Trainer: &rltest.Trainer{}, current: -0.1},
		answer: "C'est Paris.", format: f}}, focus: focus, answers: answers}
	r := newGatedRunner(t, st, eng, tr, dir, rl.RetentionConfig{Decode: f.Decode, Stop: f.StopIDs(), Shrinks: 2})
	return r, tr, &fixture{dir: dir, store: st, engine: eng}
}

// trainedOnce checks that v's saved lineage trained each of turns once, in
// that order: an unfocused step replaces the focused one, it does not
// follow it.
func trainedOnce(t *testing.T, v store.Version, turns int) {
	t.Helper()
	state, err := rltest.ReadState(v.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(state.Trained) != turns || len(slices.Compact(slices.Clone(state.Trained))) != turns {
		t.Errorf("v%d's lineage trained %v, want %d turns once each", v.Version, state.Trained, turns)
	}
}

// TestUnfocusedStep: a step with --distill-focus that loses the fact,
// whole and halved, is taken again on the same batch from the same weights
// without focus. When the unfocused step keeps the fact it is served,
// recorded as unfocused with the focused step's reason, and the next batch
// is stepped with focus first again; when it loses the fact too, the
// version is rejected as any is, its reason telling both steps'.
func TestUnfocusedStep(t *testing.T) {
	for _, c := range []struct {
		name    string
		focus   float64
		answers map[float64]string
		status  string
		reason  []string
	}{
		{"served", 1, map[float64]string{1: "Bonjour, monsieur."}, store.VersionPromoted,
			[]string{"unfocused: the step with --distill-focus 1 was rejected", "Bonjour"}},
		{"rejected too", 2, map[float64]string{2: "Bonjour, monsieur.", 0: "Oui oui, la la la."}, store.VersionRejected,
			[]string{"--distill-focus 2 was rejected", "Bonjour", "Oui oui"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, tr, fx := newFocusRunner(t, c.focus, c.answers)
			v := fx.rateAndStep(t, r, "a")
			served := int64(0)
			if c.status == store.VersionPromoted {
				served = 1
			}
			if v.Status != c.status || !v.Metrics.Unfocused || fx.engine.Version() != served {
				t.Fatalf("v1 %+v, engine v%d: want %s, v%d served", v, fx.engine.Version(), c.status, served)
			}
			for _, want := range c.reason {
				if !strings.Contains(v.StatusReason, want) {
					t.Errorf("v1's reason %q: want %q in it", v.StatusReason, want)
				}
			}
			if want := []float64{c.focus, 0}; !slices.Equal(tr.steps, want) || tr.focus != c.focus {
				t.Errorf("steps with focus %v, focus now %g: want %v and focus back on", tr.steps, tr.focus, want)
			}
			// The focused step was halved twice; the unfocused one too
			// when it was rejected, else it passed whole.
			if len(tr.shrinks) != 2*len(tr.steps)-int(served)*2 || (served == 1 && v.Metrics.StepScale != 1) {
				t.Errorf("shrinks %v, step scale %g", tr.shrinks, v.Metrics.StepScale)
			}
			if tr.loads == 0 {
				t.Error("the unfocused step did not start from the weights the focused one did")
			}
			if served == 0 {
				return
			}
			trainedOnce(t, v, 1)
			v = fx.rateAndStep(t, r, "b")
			if v.Version != 2 || v.Status != store.VersionPromoted || !v.Metrics.Unfocused {
				t.Fatalf("v2 %+v: want the second batch's unfocused step served", v)
			}
			if want := []float64{1, 0, 1, 0}; !slices.Equal(tr.steps, want) {
				t.Errorf("steps with focus %v, want %v: every batch tries focus first", tr.steps, want)
			}
			trainedOnce(t, v, 2)
			if st := r.Scheduler().Stats(); st.Unfocused != 2 || st.Rejected != 0 {
				t.Errorf("stats %+v: want 2 unfocused steps, none rejected", st)
			}
		})
	}
}

// TestFocusedStepPasses: a focused step that keeps the fact is served as
// it is, and one with focus 0 is never taken twice.
func TestFocusedStepPasses(t *testing.T) {
	r, tr, fx := newFocusRunner(t, 1, nil)
	v := fx.rateAndStep(t, r, "a")
	if v.Status != store.VersionPromoted || v.Metrics.Unfocused || !slices.Equal(tr.steps, []float64{1}) {
		t.Fatalf("v1 %+v after steps with focus %v: want the focused step served alone", v, tr.steps)
	}

	r, tr, fx = newFocusRunner(t, 0, map[float64]string{0: "Oui oui, la la la."})
	v = fx.rateAndStep(t, r, "a")
	if v.Status != store.VersionRejected || v.Metrics.Unfocused || !slices.Equal(tr.steps, []float64{0}) {
		t.Fatalf("v1 %+v after steps with focus %v: without focus a rejected step is not taken again", v, tr.steps)
	}
}
