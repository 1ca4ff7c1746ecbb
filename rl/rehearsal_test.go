package rl

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/clawrl/clawrl/train"
)

// TestRehearsalRoundRobin: anchors are built once, on first use, and handed
// out PerBatch at a time in turn, as on-policy samples whose only term is
// the anchor weight.
func TestRehearsalRoundRobin(t *testing.T) {
	ctx := context.Background()
	if NewRehearsal(RehearsalConfig{Anchors: []Anchor{{Name: "a", PromptIDs: []int32{1}, AnswerIDs: []int32{2}}}}) != nil {
		t.Fatal("PerBatch 0 should mean no rehearsal")
	}
	builds := 0
	r := NewRehearsal(RehearsalConfig{PerBatch: 2, Build: func(context.Context) ([]Anchor, error) {
		builds++
		return []Anchor{
			{Name: "a", PromptIDs: []int32{1}, AnswerIDs: []int32{10}},
			{Name: "b", PromptIDs: []int32{2}, AnswerIDs: []int32{20}},
			{Name: "c", PromptIDs: []int32{3}, AnswerIDs: []int32{30, 31}},
		}, nil
	}})
	var got []int32
	for range 3 {
		s, err := r.Samples(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(s) != 2 {
			t.Fatalf("%d anchors per step, want 2", len(s))
		}
		for _, x := range s {
			if x.Anchor != DefaultRehearsalWeight || x.RewardTerm || x.TeacherLogprobs != nil || x.BehaviourLogprobs != nil {
				t.Fatalf("anchor sample %+v: want weight %g and no other term", x, DefaultRehearsalWeight)
			}
			got = append(got, x.PromptIDs[0])
		}
	}
	if want := []int32{1, 2, 3, 1, 2, 3}; !slices.Equal(got, want) || builds != 1 {
		t.Fatalf("anchors %v built %d times, want %v built once", got, builds, want)
	}
	bad := NewRehearsal(RehearsalConfig{PerBatch: 1, Build: func(context.Context) ([]Anchor, error) {
		return []Anchor{{Name: "empty", PromptIDs: []int32{1}}}, nil
	}})
	if _, err := bad.Samples(ctx); err == nil {
		t.Fatal("want an error for an anchor with no answer")
	}
	failing := NewRehearsal(RehearsalConfig{PerBatch: 1, Build: func(context.Context) ([]Anchor, error) { return nil, errors.New("no engine") }})
	if _, err := failing.Samples(ctx); err == nil {
		t.Fatal("want the build error")
	}
	none := NewRehearsal(RehearsalConfig{PerBatch: 1, Build: func(context.Context) ([]Anchor, error) { return nil, nil }})
	if s, err := none.Samples(ctx); err != nil || len(s) != 0 {
		t.Fatalf("every anchor dropped: %d samples, %v; want none and no error (train without anchors)", len(s), err)
	}
}

// TestAnchorIsSFT: at the step's start the PPO ratio is 1, so an anchor of
// weight 1 gives the gradient of the negative log-likelihood of its answer:
// one policy step on anchors moves the adapters exactly as one SFT step on
// the same sequences.
func TestAnchorIsSFT(t *testing.T) {
	ctx := context.Background()
	seqs := []train.Sequence{{PromptIDs: []int32{1, 2, 3}, ResponseIDs: []int32{4, 5, 6}}, {PromptIDs: []int32{7}, ResponseIDs: []int32{8, 9}}}
	a, b := newTinyNative(t), newTinyNative(t)
	var anchors []TrainSample
	for _, s := range seqs {
		anchors = append(anchors, TrainSample{PromptIDs: s.PromptIDs, ResponseIDs: s.ResponseIDs, Anchor: 1})
	}
	if _, err := PolicyStep(ctx, a.tr, a.cfg, anchors); err != nil {
		t.Fatal(err)
	}
	if _, err := b.tr.Step(ctx, seqs, SFTObjective()); err != nil {
		t.Fatal(err)
	}
	fresh := newTinyNative(t)
	pa, pb, p0 := a.tr.Params(), b.tr.Params(), fresh.tr.Params()
	moved := false
	for i := range pa {
		for j := range pa[i].Data {
			if math.Abs(float64(pa[i].Data[j]-pb[i].Data[j])) > 1e-7 {
				t.Fatalf("%s[%d]: %g anchor step, %g SFT step", pa[i].Name, j, pa[i].Data[j], pb[i].Data[j])
			}
			moved = moved || pa[i].Data[j] != p0[i].Data[j]
		}
	}
	if !moved {
		t.Fatal("the anchor step moved nothing")
	}
	after, err := a.tr.Score(ctx, seqs)
	if err != nil {
		t.Fatal(err)
	}
	before, err := fresh.tr.Score(ctx, seqs)
	if err != nil {
		t.Fatal(err)
	}
	if sum(after[0].Logprobs) <= sum(before[0].Logprobs) {
		t.Fatalf("anchor answer log-prob %g after the step, %g before: want it higher", sum(after[0].Logprobs), sum(before[0].Logprobs))
	}
}

// TestAnchorScale: under AnchorSignal an anchor weighs as much as the
// step's rated samples have to teach. A liked answer at 0.25 after the
// baseline beside an anchor of weight 1 moves the adapters exactly as the
// fixed scale does with the anchor at 0.25, and a step whose rated answers
// teach nothing (all liked, under the batch baseline) leaves the weights
// where they were but for the weight decay.
func TestAnchorScale(t *testing.T) {
	rated := func(r float64) TrainSample { return TrainSample{Reward: r, RewardTerm: true} }
	anchor := TrainSample{Anchor: 1}
	combine, opd, rlm := DefaultAdvantage(), AdvantageConfig{Method: MethodOPD, WOPD: 1}, AdvantageConfig{Method: MethodRL}
	for _, c := range []struct {
		name    string
		adv     AdvantageConfig
		samples []TrainSample
		rewards []float64 // after the baselines
		want    float64
	}{
		{"liked answers under a running mean of 0.8", combine, []TrainSample{rated(1), rated(1), anchor}, []float64{0.2, 0.2, 0}, 0.2},
		{"a teacher-written answer beside one", combine, []TrainSample{rated(1), {TeacherWrote: true}, anchor}, []float64{0.2, 0, 0}, 0.6},
		{"a teacher term", combine, []TrainSample{{TeacherLogprobs: []float32{-1}}, anchor}, []float64{0, 0}, 1},
		{"a large advantage is capped", rlm, []TrainSample{rated(-1), rated(1)}, []float64{-1.6, 0.4}, 0.7},
		{"a reward under OPD teaches nothing", opd, []TrainSample{rated(1), anchor}, []float64{1, 0}, 0},
		{"half the reward term", AdvantageConfig{Method: MethodCombine, WRL: 0.5, WOPD: 1}, []TrainSample{rated(1)}, []float64{1}, 0.5},
		{"anchors alone (a repair step)", combine, []TrainSample{anchor}, []float64{0}, 1},
	} {
		if got := stepSignalShare(c.adv, c.samples, c.rewards); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: share %g, want %g", c.name, got, c.want)
		}
	}
	if _, err := ParseAnchorScale("sometimes"); err == nil {
		t.Fatal("a bad anchor scale parsed")
	}

	ctx := context.Background()
	liked := TrainSample{PromptIDs: []int32{1, 2, 3}, ResponseIDs: []int32{4, 5, 6}, Reward: 0.25, RewardTerm: true}
	at := func(w float64) TrainSample {
		return TrainSample{PromptIDs: []int32{7}, ResponseIDs: []int32{8, 9, 10, 11}, Anchor: w}
	}
	a, b := newTinyNative(t), newTinyNative(t)
	signal := a.cfg
	signal.AnchorScale = AnchorSignal
	m, err := PolicyStep(ctx, a.tr, signal, []TrainSample{liked, at(1)})
	if err != nil {
		t.Fatal(err)
	}
	if m.AnchorScale != 0.25 {
		t.Fatalf("anchor scale %g, want 0.25", m.AnchorScale)
	}
	if m, err = PolicyStep(ctx, b.tr, b.cfg, []TrainSample{liked, at(0.25)}); err != nil || m.AnchorScale != 1 {
		t.Fatalf("fixed: anchor scale %g, %v; want 1", m.AnchorScale, err)
	}
	pa, pb := a.tr.Params(), b.tr.Params()
	for i := range pa {
		for j := range pa[i].Data {
			if pa[i].Data[j] != pb[i].Data[j] {
				t.Fatalf("%s[%d]: %g scaled anchor, %g anchor of weight 0.25", pa[i].Name, j, pa[i].Data[j], pb[i].Data[j])
			}
		}
	}
	o, fresh := newTinyNative(t), newTinyNative(t)
	cfg := o.cfg
	cfg.AnchorScale, cfg.Advantage.Baseline = AnchorSignal, BaselineBatch
	cfg.MomentumReset = MomentumEveryStep
	if m, err = PolicyStep(ctx, o.tr, cfg, []TrainSample{liked, liked, at(1)}); err != nil || m.AnchorScale != 0 {
		t.Fatalf("all liked under the batch baseline: anchor scale %g, %v; want 0 and no error", m.AnchorScale, err)
	}
	po, p0 := o.tr.Params(), fresh.tr.Params()
	decay := float32(1 - m.LearningRate*o.tr.Config().AdamW.WeightDecay)
	for i := range po {
		for j := range po[i].Data {
			if want := p0[i].Data[j] * decay; math.Abs(float64(po[i].Data[j]-want)) > 1e-9 {
				t.Fatalf("%s[%d]: %g after a step with nothing to learn, want %g (the weight decay alone)", po[i].Name, j, po[i].Data[j], want)
			}
		}
	}
}

func sum(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(v)
	}
	return s
}

// TestPolicyTrainerRehearses: a trainer with rehearsal trains its anchors
// beside the batch (their tokens count in the step).
func TestPolicyTrainerRehearses(t *testing.T) {
	ctx := context.Background()
	batch := []Sample{{TurnID: "a", PromptIDs: []int32{1, 2, 3}, ResponseIDs: []int32{4, 5}, BehaviourLogprobs: []float32{-4, -3},
		UseRL: true, Reward: 1}}
	n := newTinyNative(t)
	n.SetRehearsal(NewRehearsal(RehearsalConfig{PerBatch: 1, Anchors: []Anchor{{Name: "x", PromptIDs: []int32{7}, AnswerIDs: []int32{8, 9, 10}}}}))
	m, err := n.Step(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	if m.Tokens != 5 {
		t.Fatalf("%d tokens trained, want 2 of the batch + 3 of the anchor", m.Tokens)
	}
}

// TestRepairIsAnAnchorStep: the gate's repair step is one policy step on
// every anchor alone, following the anchors' gradient (AdamW's first moment
// reset, not the batch's), and leaves the optimizer's state as the batch's
// step left it; a ShrinkStep after it shrinks the step and the repair
// together, from the weights before the step.
func TestRepairIsAnAnchorStep(t *testing.T) {
	ctx := context.Background()
	anchors := []Anchor{{Name: "x", PromptIDs: []int32{7}, AnswerIDs: []int32{8, 9, 10}}, {Name: "y", PromptIDs: []int32{1, 2}, AnswerIDs: []int32{3, 4}}}
	batch := []Sample{{TurnID: "a", PromptIDs: []int32{1, 2, 3}, ResponseIDs: []int32{4, 5}, BehaviourLogprobs: []float32{-4, -3},
		UseRL: true, Reward: 1}}
	a, b := newTinyNative(t), newTinyNative(t)
	if _, err := a.Repair(ctx); !errors.Is(err, ErrNoAnchors) {
		t.Fatalf("repair with no rehearsal: %v, want ErrNoAnchors", err)
	}
	a.SetRehearsal(NewRehearsal(RehearsalConfig{Repair: true, Anchors: anchors}))
	if s, err := a.Rehearsal().Samples(ctx); err != nil || len(s) != 0 {
		t.Fatalf("anchors kept for repairs only: %d in a step (%v), want none", len(s), err)
	}
	before := clonedParams(a.tr.Params())
	for _, n := range []*NativeTrainer{a, b} {
		if _, err := n.Step(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	stepped := a.tr.OptimizerState()
	seqs := []train.Sequence{{PromptIDs: anchors[0].PromptIDs, ResponseIDs: anchors[0].AnswerIDs}, {PromptIDs: anchors[1].PromptIDs, ResponseIDs: anchors[1].AnswerIDs}}
	scoresBefore, err := a.tr.Score(ctx, seqs)
	if err != nil {
		t.Fatal(err)
	}
	m, err := a.Repair(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m.Tokens != 5 {
		t.Fatalf("repair trained %d tokens, want the anchors' 5", m.Tokens)
	}
	// b: the same, by hand.
	if err := b.tr.ResetMomentum(); err != nil {
		t.Fatal(err)
	}
	all, err := NewRehearsal(RehearsalConfig{Repair: true, Anchors: anchors}).All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := PolicyStep(ctx, b.tr, b.cfg, all); err != nil {
		t.Fatal(err)
	}
	pa, pb := a.tr.Params(), b.tr.Params()
	for i := range pa {
		if !slices.Equal(pa[i].Data, pb[i].Data) {
			t.Fatalf("%s: the repair's weights differ from a momentum-reset step on the anchors", pa[i].Name)
		}
	}
	if got := a.tr.OptimizerState(); !reflect.DeepEqual(got, stepped) {
		t.Fatal("the repair left its trace in the optimizer's state")
	}
	scoresAfter, err := a.tr.Score(ctx, seqs)
	if err != nil {
		t.Fatal(err)
	}
	if sum(scoresAfter[0].Logprobs)+sum(scoresAfter[1].Logprobs) <= sum(scoresBefore[0].Logprobs)+sum(scoresBefore[1].Logprobs) {
		t.Fatal("the repair did not raise the anchors' answers")
	}
	// The line search after a repair halves step + repair from before
	// the step: every adapter's B (zero before the first step) exactly.
	repaired := clonedParams(a.tr.Params())
	if err := a.ShrinkStep(0.5); err != nil {
		t.Fatal(err)
	}
	for _, pr := range a.loraPairs() {
		got, b0, b1 := a.tr.Params()[pr.b].Data, before[pr.b], repaired[pr.b]
		for j := range got {
			if want := b0[j] + 0.5*(b1[j]-b0[j]); got[j] != want {
				t.Fatalf("%s[%d] = %g after the shrink, want %g", a.tr.Params()[pr.b].Name, j, got[j], want)
			}
		}
	}
}

func clonedParams(ps []*train.Tensor) [][]float32 {
	out := make([][]float32, len(ps))
	for i, p := range ps {
		out[i] = slices.Clone(p.Data)
	}
	return out
}

// TestRehearsalFollowsHint: with RehearsalConfig.Follow, anchors are the
// base answers until a hint is set, then the followed answers, asked once
// per hint and anchor; a refused answer sits that hint out (counted once),
// a failure sits one step out and is asked again, and a new hint is asked
// anew. The repair step's All follows the hint too.
func TestRehearsalFollowsHint(t *testing.T) {
	ctx := context.Background()
	asked := map[string]int{}
	fail := true
	r := NewRehearsal(RehearsalConfig{PerBatch: 3,
		Anchors: []Anchor{
			{Name: "a", PromptIDs: []int32{1}, AnswerIDs: []int32{10}},
			{Name: "b", PromptIDs: []int32{2}, AnswerIDs: []int32{20}},
			{Name: "c", PromptIDs: []int32{3}, AnswerIDs: []int32{30}},
		},
		Follow: func(_ context.Context, hint string, a Anchor) (Anchor, bool, error) {
			asked[hint+"/"+a.Name]++
			switch {
			case a.Name == "b":
				return Anchor{}, false, nil // refused
			case a.Name == "c" && fail:
				fail = false
				return Anchor{}, false, errors.New("teacher down")
			}
			off := int32(100)
			if hint == "h2" {
				off = 200
			}
			return Anchor{Name: a.Name, PromptIDs: a.PromptIDs, AnswerIDs: []int32{a.AnswerIDs[0] + off}}, true, nil
		}})
	answers := func(s []TrainSample) []int32 {
		var out []int32
		for _, x := range s {
			if x.Anchor != DefaultRehearsalWeight {
				t.Fatalf("anchor weight %g", x.Anchor)
			}
			out = append(out, x.ResponseIDs[0])
		}
		return out
	}
	step := func() []int32 {
		t.Helper()
		s, err := r.Samples(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return answers(s)
	}
	if got := step(); !slices.Equal(got, []int32{10, 20, 30}) || len(asked) != 0 {
		t.Fatalf("no hint yet: %v (asked %v), want the base answers, nothing asked", got, asked)
	}
	r.SetHint("h1")
	if got := step(); !slices.Equal(got, []int32{110}) {
		t.Fatalf("under h1: %v, want a followed, b refused, c failed", got)
	}
	if got := step(); !slices.Equal(got, []int32{110, 130}) {
		t.Fatalf("under h1 again: %v, want a (cached), c asked again", got)
	}
	if asked["h1/a"] != 1 || asked["h1/b"] != 1 || asked["h1/c"] != 2 {
		t.Fatalf("asked %v: want a and b once, c twice (it failed once)", asked)
	}
	if refused, failed := r.Skipped(); refused != 1 || failed != 1 {
		t.Fatalf("skipped %d refused, %d failed; want 1, 1", refused, failed)
	}
	r.SetHint("h2")
	all, err := r.All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := answers(all); !slices.Equal(got, []int32{210, 230}) || asked["h2/b"] != 1 {
		t.Fatalf("All under h2: %v (asked %v), want a and c followed anew, b refused", got, asked)
	}
	plain := NewRehearsal(RehearsalConfig{PerBatch: 1, Anchors: []Anchor{{Name: "a", PromptIDs: []int32{1}, AnswerIDs: []int32{10}}}})
	plain.SetHint("h1") // no Follow: the hint is ignored
	if s, err := plain.Samples(ctx); err != nil || !slices.Equal(answers(s), []int32{10}) {
		t.Fatalf("no Follow: %v %v, want the base answer", s, err)
	}
}

// TestRehearsalAvoid: each anchor trained is joined by its prompt with an
// avoided answer, in turn, at the anchor weight negated; an answer avoided
// twice is kept once, and nothing is avoided before Avoid.
func TestRehearsalAvoid(t *testing.T) {
	ctx := context.Background()
	r := NewRehearsal(RehearsalConfig{PerBatch: 2, Weight: 0.5, Anchors: []Anchor{
		{Name: "a", PromptIDs: []int32{1}, AnswerIDs: []int32{10}},
		{Name: "b", PromptIDs: []int32{2}, AnswerIDs: []int32{20}},
	}})
	if s, err := r.Samples(ctx); err != nil || len(s) != 2 {
		t.Fatalf("%d samples (%v) before any Avoid, want the 2 anchors", len(s), err)
	}
	r.Avoid([]int32{7, 7})
	r.Avoid([]int32{8})
	r.Avoid([]int32{7, 7})
	r.Avoid(nil)
	if r.Avoided() != 2 {
		t.Fatalf("%d avoided, want 2", r.Avoided())
	}
	type pair struct {
		prompt int32
		answer string
		weight float64
	}
	var got []pair
	for range 2 {
		s, err := r.Samples(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range s {
			got = append(got, pair{x.PromptIDs[0], fmt.Sprint(x.ResponseIDs), x.Anchor})
		}
	}
	want := []pair{{1, "[10]", 0.5}, {2, "[20]", 0.5}, {1, "[7 7]", -0.5}, {2, "[8]", -0.5},
		{1, "[10]", 0.5}, {2, "[20]", 0.5}, {1, "[7 7]", -0.5}, {2, "[8]", -0.5}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("samples %v, want %v", got, want)
	}
}

// shiftFromBase is seq's summed log-probability under n's weights less the
// base model's (adapters off).
func shiftFromBase(t *testing.T, n *NativeTrainer, seq train.Sequence) float64 {
	t.Helper()
	ctx := context.Background()
	cur, err := n.tr.Score(ctx, []train.Sequence{seq})
	if err != nil {
		t.Fatal(err)
	}
	base, err := n.tr.ScoreReference(ctx, []train.Sequence{seq})
	if err != nil {
		t.Fatal(err)
	}
	var d float64
	for i := range base[0].Logprobs {
		d += float64(cur[0].Logprobs[i] - base[0].Logprobs[i])
	}
	return d
}

// TestAvoidBound: a pushed-down answer with a bound trains while its
// log-probability is within the bound of the base model's, and sits out
// (no policy loss, counted in BoundSatOut) once the steps have pushed it
// that far; without a bound it is pushed on every step.
func TestAvoidBound(t *testing.T) {
	ctx := context.Background()
	const bound = 0.05
	seq := train.Sequence{PromptIDs: []int32{1, 2}, ResponseIDs: []int32{3, 4, 5}}
	for _, b := range []float64{bound, 0} {
		n := newTinyNative(t)
		s := TrainSample{PromptIDs: seq.PromptIDs, ResponseIDs: seq.ResponseIDs, Anchor: -1, Bound: b}
		satOut := -1
		for step := range 40 {
			d := shiftFromBase(t, n, seq)
			m, err := PolicyStep(ctx, n.tr, n.cfg, []TrainSample{s})
			if err != nil {
				t.Fatal(err)
			}
			below := b > 0 && d <= -b
			if got := m.BoundSatOut == 1; got != below {
				t.Fatalf("bound %g, step %d: %g nats from the base, BoundSatOut %d", b, step, d, m.BoundSatOut)
			}
			if below {
				if m.PolicyLoss != 0 {
					t.Fatalf("bound %g, step %d: sat out with policy loss %g", b, step, m.PolicyLoss)
				}
				satOut = step
				break
			}
			if m.PolicyLoss == 0 {
				t.Fatalf("bound %g, step %d (%g nats from the base): no policy loss", b, step, d)
			}
		}
		if b > 0 && satOut < 1 {
			t.Fatalf("bound %g: sat out at step %d, want after at least one push", b, satOut)
		}
		if b == 0 && satOut >= 0 {
			t.Fatalf("no bound: sat out at step %d", satOut)
		}
	}
}

// TestRehearsalStateKept: a version folder keeps the answers pushed down and
// where the round robins stand, so a trainer that starts again from it
// (a restart, kill -9) rehearses and pushes down what the one before would
// have; loaded into a rehearsal that has stepped (a rollback), the answers
// join those it has and its positions stay; without Avoids (a loop started
// again without --rehearsal-avoid) none are pushed down; a folder without the file
// changes nothing, a damaged one is an error.
func TestRehearsalStateKept(t *testing.T) {
	ctx := context.Background()
	anchors := []Anchor{
		{Name: "a", PromptIDs: []int32{1}, AnswerIDs: []int32{10}},
		{Name: "b", PromptIDs: []int32{2}, AnswerIDs: []int32{20}},
		{Name: "c", PromptIDs: []int32{3}, AnswerIDs: []int32{30}},
	}
	newR := func() *Rehearsal { return NewRehearsal(RehearsalConfig{PerBatch: 2, Anchors: anchors, Avoids: true}) }
	steps := func(r *Rehearsal, n int) string {
		var out []string
		for range n {
			s, err := r.Samples(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range s {
				out = append(out, fmt.Sprint(x.PromptIDs, x.ResponseIDs, x.Anchor))
			}
		}
		return fmt.Sprint(out)
	}
	before := newR()
	before.Avoid([]int32{7, 7})
	steps(before, 1)
	before.Avoid([]int32{8})
	dir := t.TempDir()
	n := newTinyNative(t)
	n.SetRehearsal(before)
	if err := n.Save(dir); err != nil {
		t.Fatal(err)
	}
	want := steps(before, 3)

	after := newTinyNative(t)
	r := newR()
	after.SetRehearsal(r)
	if err := after.Load(dir); err != nil {
		t.Fatal(err)
	}
	if got := steps(r, 3); got != want {
		t.Fatalf("after a start from the folder:\n%s\nwant what the trainer before would have rehearsed:\n%s", got, want)
	}

	stepped := newR()
	stepped.Avoid([]int32{9})
	steps(stepped, 1)
	if err := stepped.Load(dir); err != nil {
		t.Fatal(err)
	}
	if stepped.Avoided() != 3 || stepped.next != 2 || stepped.nextBad != 2 {
		t.Fatalf("a rehearsal that stepped: %d avoided, next %d, %d; want 3 (its own and the folder's) and its own positions 2, 2",
			stepped.Avoided(), stepped.next, stepped.nextBad)
	}

	off := NewRehearsal(RehearsalConfig{PerBatch: 2, Anchors: anchors})
	if err := off.Load(dir); err != nil || off.Avoided() != 0 || off.next != before.next-6 {
		t.Fatalf("without Avoids: %v, %d avoided, next %d; want none avoided and the anchors' position %d", err, off.Avoided(), off.next, before.next-6)
	}

	none := newR()
	if err := none.Load(t.TempDir()); err != nil || none.Avoided() != 0 || none.next != 0 {
		t.Fatalf("a folder without %s: %v, %d avoided, next %d; want no change", RehearsalFile, err, none.Avoided(), none.next)
	}
	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, RehearsalFile), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := newR().Load(bad); err == nil {
		t.Fatal("want an error for a damaged rehearsal state")
	}
}

// TestRehearsalAvoidPasses: with AvoidPasses, an answer the gate caught is
// pushed down until that many versions have passed the gate since it was
// last caught; caught again, its count starts over. Without it, passes
// retire nothing.
func TestRehearsalAvoidPasses(t *testing.T) {
	anchors := []Anchor{{Name: "a", PromptIDs: []int32{1}, AnswerIDs: []int32{10}}}
	r := NewRehearsal(RehearsalConfig{PerBatch: 1, Anchors: anchors, AvoidPasses: 2})
	r.Avoid([]int32{7})
	r.Avoid([]int32{8})
	if n := r.Passed(); n != 0 || r.Avoided() != 2 {
		t.Fatalf("one pass: %d retired, %d left; want 0, 2", n, r.Avoided())
	}
	r.Avoid([]int32{7}) // caught again
	if n := r.Passed(); n != 1 || r.Avoided() != 1 {
		t.Fatalf("two passes: %d retired, %d left; want [8] retired, [7] left", n, r.Avoided())
	}
	s, err := r.Samples(context.Background())
	if err != nil || len(s) != 2 || !slices.Equal(s[1].ResponseIDs, []int32{7}) {
		t.Fatalf("samples %+v (%v): want the anchor and [7] pushed down", s, err)
	}
	if n := r.Passed(); n != 1 || r.Avoided() != 0 {
		t.Fatalf("three passes: %d retired, %d left; want [7] retired", n, r.Avoided())
	}
	if s, _ := r.Samples(context.Background()); len(s) != 1 {
		t.Fatalf("%d samples with nothing avoided, want the anchor alone", len(s))
	}

	dir := t.TempDir()
	kept := NewRehearsal(RehearsalConfig{PerBatch: 1, Anchors: anchors, AvoidPasses: 2, Avoids: true})
	kept.Avoid([]int32{7})
	kept.Passed()
	if err := kept.Save(dir); err != nil {
		t.Fatal(err)
	}
	back := NewRehearsal(RehearsalConfig{PerBatch: 1, Anchors: anchors, AvoidPasses: 2, Avoids: true})
	if err := back.Load(dir); err != nil {
		t.Fatal(err)
	}
	if n := back.Passed(); n != 1 {
		t.Fatalf("a saved answer one pass from retiring: %d retired at the next pass, want 1", n)
	}

	always := NewRehearsal(RehearsalConfig{PerBatch: 1, Anchors: anchors})
	always.Avoid([]int32{7})
	for range 5 {
		always.Passed()
	}
	if always.Avoided() != 1 {
		t.Fatalf("AvoidPasses 0: %d avoided after passes, want the answer kept", always.Avoided())
	}
}

// TestAvoidRelative: with AvoidRelative, an answer the student learned (far
// above the base model, as an answer in the user's language is) is pushed
// down only until it is the bound below where its first push found it, and
// then sits out where the base model's bound alone would push it on; once it
// climbs back it is pushed again, and where its pushes began is kept in the
// rehearsal's state.
func TestAvoidRelative(t *testing.T) {
	ctx := context.Background()
	const bound = 0.05
	seq := train.Sequence{PromptIDs: []int32{1, 2}, ResponseIDs: []int32{3, 4, 5}}
	n := newTinyNative(t)
	shift := func() float64 { return shiftFromBase(t, n, seq) }
	learn := func(steps int) {
		t.Helper()
		up := TrainSample{PromptIDs: seq.PromptIDs, ResponseIDs: seq.ResponseIDs, Anchor: 1}
		for range steps {
			if _, err := PolicyStep(ctx, n.tr, n.cfg, []TrainSample{up}); err != nil {
				t.Fatal(err)
			}
		}
	}
	learn(20)
	s0 := shift()
	if s0 < 4*bound {
		t.Fatalf("the learned answer is %g nats above the base model, want at least %g", s0, 4*bound)
	}
	anchors := []Anchor{{Name: "a", PromptIDs: seq.PromptIDs, AnswerIDs: []int32{6}}}
	r := NewRehearsal(RehearsalConfig{PerBatch: 1, Anchors: anchors, AvoidBound: bound, AvoidRelative: true, Avoids: true})
	r.Avoid(seq.ResponseIDs)
	push := func() Metrics {
		t.Helper()
		s, err := r.Samples(ctx)
		if err != nil || len(s) != 2 || s[1].BoundStart == nil {
			t.Fatalf("samples %+v (%v): want the anchor and the answer pushed down with its start", s, err)
		}
		m, err := PolicyStep(ctx, n.tr, n.cfg, s[1:]) // the answer alone: the anchor would move it too
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	satOut := -1
	for step := range 60 {
		d := shift()
		m := push()
		if step == 0 && math.Abs(r.avoid[0].start-s0) > 1e-4 {
			t.Fatalf("start %g, want the shift the first push found, %g", r.avoid[0].start, s0)
		}
		below := d <= r.avoid[0].start-bound
		if got := m.BoundSatOut == 1; got != below {
			t.Fatalf("step %d: %g nats from the base, start %g, BoundSatOut %d", step, d, r.avoid[0].start, m.BoundSatOut)
		}
		if below {
			if d <= -bound {
				t.Fatalf("step %d: sat out at %g nats from the base, want above the base's bound %g", step, d, -bound)
			}
			satOut = step
			break
		}
	}
	if satOut < 1 {
		t.Fatalf("sat out at step %d, want after at least one push", satOut)
	}
	learn(20)
	if m := push(); m.BoundSatOut != 0 {
		t.Fatalf("the answer climbed back to %g (start %g): sat out, want pushed again", shift(), r.avoid[0].start)
	}

	dir := t.TempDir()
	if err := r.Save(dir); err != nil {
		t.Fatal(err)
	}
	back := NewRehearsal(RehearsalConfig{PerBatch: 1, Anchors: anchors, AvoidBound: bound, AvoidRelative: true, Avoids: true})
	if err := back.Load(dir); err != nil {
		t.Fatal(err)
	}
	if back.Avoided() != 1 || back.avoid[0].start != r.avoid[0].start {
		t.Fatalf("loaded %d answers, start %g; want 1, %g", back.Avoided(), back.avoid[0].start, r.avoid[0].start)
	}
	r.Avoid(seq.ResponseIDs) // caught again: where its pushes began stays
	if r.avoid[0].start != back.avoid[0].start {
		t.Fatalf("caught again: start %g, want %g kept", r.avoid[0].start, back.avoid[0].start)
	}
}

// TestAvoidRelativeShared: answers pushed down wait their turn, one beside
// each anchor; one that waited through a step that recorded starts takes
// their mean (a push of the others moved it too), while one caught after
// that step's samples were handed out waits for a start of its own.
func TestAvoidRelativeShared(t *testing.T) {
	ctx := context.Background()
	anchors := []Anchor{{Name: "a", PromptIDs: []int32{1}, AnswerIDs: []int32{10}}}
	r := NewRehearsal(RehearsalConfig{PerBatch: 1, Anchors: anchors, AvoidBound: 2, AvoidRelative: true})
	r.Avoid([]int32{7})
	r.Avoid([]int32{8})
	step := func(shift float64) []int32 {
		t.Helper()
		s, err := r.Samples(ctx)
		if err != nil || len(s) != 2 || s[1].BoundStart == nil {
			t.Fatalf("samples %+v (%v): want the anchor and one answer pushed down with its start", s, err)
		}
		s[1].BoundStart(shift) // what the step reads
		return s[1].ResponseIDs
	}
	if got := step(20); !slices.Equal(got, []int32{7}) {
		t.Fatalf("first step pushed %v down, want [7]", got)
	}
	r.Avoid([]int32{9}) // caught by the gate after the first step
	if got := step(8); !slices.Equal(got, []int32{8}) {
		t.Fatalf("second step pushed %v down, want [8]", got)
	}
	if a := r.avoid; a[0].start != 20 || a[1].start != 20 || !math.IsNaN(a[2].start) {
		t.Fatalf("starts %g, %g, %g; want 20 (its own), 20 (shared: it waited through the first step, and 8 is where that step left it), and none yet", a[0].start, a[1].start, a[2].start)
	}
	step(5) // [9]: its own
	step(0)
	if a := r.avoid; a[2].start != 5 {
		t.Fatalf("the answer caught later: start %g, want its own 5", a[2].start)
	}
}
