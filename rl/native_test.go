package rl

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/clawrl/clawrl/model"
	"github.com/clawrl/clawrl/safetensors"
	"github.com/clawrl/clawrl/train"
)

func newTinyNative(t *testing.T) *NativeTrainer {
	t.Helper()
	return newTinyNativeBudget(t, 0)
}

// newTinyNativeBudget is newTinyNative with an activation budget
// (train.Config.ActivationBudget).
func newTinyNativeBudget(t *testing.T, budget int64) *NativeTrainer {
	t.Helper()
	arch := train.Arch{Vocab: 64, Hidden: 32, Intermediate: 64, Layers: 2, Heads: 4, KVHeads: 2,
		HeadDim: 8, RMSNormEps: 1e-6, RopeTheta: 10000, TieEmbeddings: true, QKNorm: true}
	w, err := train.NewWeights(arch)
	if err != nil {
		t.Fatal(err)
	}
	train.InitRandom(w, 1, 0.1)
	tr, err := train.New(w, train.Config{LoRA: train.LoRAConfig{Rank: 4, Alpha: 8}, AdamW: train.DefaultAdamW(1e-3), Seed: 3,
		ActivationBudget: budget})
	if err != nil {
		t.Fatal(err)
	}
	return NewNativeTrainer(tr, DefaultStepConfig())
}

// tinyBatch is a rated turn (RL) and a taught one (OPD) for the tiny
// trainer.
func tinyBatch() []Sample {
	return []Sample{
		{TurnID: "a", PromptIDs: []int32{1, 2, 3}, ResponseIDs: []int32{4, 5}, BehaviourLogprobs: []float32{-4, -3},
			UseRL: true, Reward: 1},
		{TurnID: "b", PromptIDs: []int32{7}, ResponseIDs: []int32{8, 9, 10}, BehaviourLogprobs: []float32{-5, -4, -9},
			TeacherLogprobs: []float32{-1, -2, -3}},
	}
}

// TestNativeTrainerLean: a trainer past its activation budget says so in
// the step's metrics (the scheduler logs it with the trained version), and
// the step is otherwise the one a trainer keeping everything takes.
func TestNativeTrainerLean(t *testing.T) {
	ctx := context.Background()
	batch := tinyBatch()
	kept, err := newTinyNativeBudget(t, -1).Step(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	lean, err := newTinyNativeBudget(t, 1).Step(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	if kept.Lean || !lean.Lean {
		t.Fatalf("lean: %v without a budget, %v with one byte", kept.Lean, lean.Lean)
	}
	lean.Lean = false
	if lean != kept {
		t.Fatalf("lean step %+v, kept %+v", lean, kept)
	}
}

// TestNativeTrainerSaveLoad: a trainer restored from Save continues exactly
// like the one that saved, and the metrics describe the batch.
func TestNativeTrainerSaveLoad(t *testing.T) {
	ctx := context.Background()
	batch := tinyBatch()
	a := newTinyNative(t)
	m, err := a.Step(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	if m.Tokens != 5 || m.ImportanceTruncated == 0 || m.ImportanceWeightMax != 2 {
		t.Fatalf("metrics %+v: want 5 tokens and some weights truncated at 2", m)
	}
	dir := t.TempDir()
	if err := a.Save(dir); err != nil {
		t.Fatal(err)
	}
	b := newTinyNative(t)
	if err := b.Load(dir); err != nil {
		t.Fatal(err)
	}
	ma, err := a.Step(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	mb, err := b.Step(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	if ma != mb {
		t.Fatalf("after reload: %+v, continued: %+v", mb, ma)
	}
	bad := []Sample{{TurnID: "c", PromptIDs: []int32{1}, ResponseIDs: []int32{2}}}
	if _, err := a.Step(ctx, bad); err == nil {
		t.Fatal("want an error for a sample without behaviour logprobs")
	}
}

// TestKLAgainstBaseModel: with a KL coefficient and no reference logprobs,
// the reference is the base model; a fresh adapter (B = 0) equals it, so the
// KL starts at 0 and grows once the adapter has moved.
func TestKLAgainstBaseModel(t *testing.T) {
	n := newTinyNative(t)
	n.cfg.Loss.KLCoef = 0.1
	ctx := context.Background()
	batch := []TrainSample{{PromptIDs: []int32{1, 2}, ResponseIDs: []int32{3, 4}, Reward: 1}}
	m0, err := PolicyStep(ctx, n.tr, n.cfg, batch)
	if err != nil {
		t.Fatal(err)
	}
	if m0.KL != 0 {
		t.Fatalf("KL %g before any update, want 0", m0.KL)
	}
	m1, err := PolicyStep(ctx, n.tr, n.cfg, batch)
	if err != nil {
		t.Fatal(err)
	}
	if m1.KL == 0 {
		t.Fatal("KL still 0 after an update")
	}
}

// TestLazyOldLogprobs: taking π_old from the step's own forward pass gives
// the same update as scoring it first.
func TestLazyOldLogprobs(t *testing.T) {
	ctx := context.Background()
	batch := func() []TrainSample {
		return []TrainSample{
			{PromptIDs: []int32{1, 2, 3}, ResponseIDs: []int32{4, 5}, BehaviourLogprobs: []float32{-4, -3}, Reward: 1,
				TeacherLogprobs: []float32{-1, -0.5}},
			{PromptIDs: []int32{7}, ResponseIDs: []int32{8, 9, 10}, BehaviourLogprobs: []float32{-5, -4, -9}, Reward: -1},
		}
	}
	a, b := newTinyNative(t), newTinyNative(t)
	explicit := batch()
	sc, err := a.tr.Score(ctx, []train.Sequence{{PromptIDs: explicit[0].PromptIDs, ResponseIDs: explicit[0].ResponseIDs},
		{PromptIDs: explicit[1].PromptIDs, ResponseIDs: explicit[1].ResponseIDs}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range explicit {
		explicit[i].OldLogprobs = sc[i].Logprobs
	}
	ma, err := PolicyStep(ctx, a.tr, a.cfg, explicit)
	if err != nil {
		t.Fatal(err)
	}
	mb, err := PolicyStep(ctx, b.tr, b.cfg, batch())
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(ma.Loss-mb.Loss) > 1e-6 || math.Abs(ma.OldLogprobGap-mb.OldLogprobGap) > 1e-6 {
		t.Fatalf("explicit old: %+v\nlazy old: %+v", ma, mb)
	}
	pa, pb := a.tr.Params(), b.tr.Params()
	for i := range pa {
		for j := range pa[i].Data {
			if math.Abs(float64(pa[i].Data[j]-pb[i].Data[j])) > 1e-7 {
				t.Fatalf("%s[%d]: %g explicit, %g lazy", pa[i].Name, j, pa[i].Data[j], pb[i].Data[j])
			}
		}
	}
}

// TestNativeTrainerForServedModel trains next to a model.Model and checks
// the base weights it serves are untouched while the saved adapter is
// what the model's loader reads.
func TestNativeTrainerForServedModel(t *testing.T) {
	cfg, err := model.NewConfig(model.Qwen3, model.SizeTiny)
	if err != nil {
		t.Fatal(err)
	}
	cfg.VocabSize = 128
	dir := t.TempDir()
	if err := model.WriteRandom(dir, cfg, 1, safetensors.F32); err != nil {
		t.Fatal(err)
	}
	m, err := model.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	before := append([]float32(nil), m.Weights.Blocks[0].Q.W...)
	n, err := NewNativeTrainerFor(m, train.Config{LoRA: train.LoRAConfig{Rank: 4, Alpha: 8}, AdamW: train.DefaultAdamW(1e-2)}, DefaultStepConfig())
	if err != nil {
		t.Fatal(err)
	}
	batch := []Sample{{TurnID: "a", PromptIDs: []int32{1, 2, 3}, ResponseIDs: []int32{4, 5}, BehaviourLogprobs: []float32{-5, -5}, UseRL: true, Reward: 1}}
	for range 3 {
		if _, err := n.Step(context.Background(), batch); err != nil {
			t.Fatal(err)
		}
	}
	for i, v := range m.Weights.Blocks[0].Q.W {
		if v != before[i] {
			t.Fatalf("LoRA training changed the served base weight q_proj[%d]", i)
		}
	}
	out := t.TempDir()
	if err := n.Save(out); err != nil {
		t.Fatal(err)
	}
	ad, err := m.LoadAdapter(out)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := m.Score(context.Background(), batch[0].PromptIDs, batch[0].ResponseIDs, ad)
	if err != nil {
		t.Fatal(err)
	}
	mine, err := n.Trainer().Score(context.Background(), []train.Sequence{{PromptIDs: batch[0].PromptIDs, ResponseIDs: batch[0].ResponseIDs}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range sc {
		if math.Abs(float64(sc[i]-mine[0].Logprobs[i])) > 1e-4 {
			t.Fatalf("token %d: engine scores %g with the saved adapter, trainer %g", i, sc[i], mine[0].Logprobs[i])
		}
	}
}

// TestNativeTrainerYields: the yield function runs before every
// micro-batch, and its error aborts the step without touching the weights.
func TestNativeTrainerYields(t *testing.T) {
	n := newTinyNative(t)
	calls := 0
	n.SetYield(func(ctx context.Context) error { calls++; return nil })
	batch := []Sample{{TurnID: "a", PromptIDs: []int32{1, 2}, ResponseIDs: []int32{3, 4}, BehaviourLogprobs: []float32{-4, -4}, UseRL: true, Reward: 1}}
	if _, err := n.Step(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	if calls == 0 {
		t.Fatal("yield never called")
	}
	before := append([]float32(nil), n.tr.Params()[1].Data...)
	stop := errors.New("stop")
	n.SetYield(func(ctx context.Context) error { return stop })
	if _, err := n.Step(context.Background(), batch); !errors.Is(err, stop) {
		t.Fatalf("err = %v, want the yield's error", err)
	}
	for i, v := range n.tr.Params()[1].Data {
		if v != before[i] {
			t.Fatal("an aborted step changed the weights")
		}
	}
}

// TestRetentionGateNative: before any step the adapters are zero, so the
// probes score the same under the current and the base weights and the gate
// passes; steps that push the probed answer down make it fail.
func TestRetentionGateNative(t *testing.T) {
	ctx := context.Background()
	n := newTinyNative(t)
	probes := []Probe{{Name: "fact", PromptIDs: []int32{5, 6, 7}, PrefixIDs: []int32{8}, AnswerIDs: []int32{9, 10}}}
	base, err := n.ProbeLogprobs(ctx, probes, true)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := n.ProbeLogprobs(ctx, probes, false)
	if err != nil || cur[0] != base[0] {
		t.Fatalf("untrained: current %v, base %v, %v", cur, base, err)
	}
	cfg := RetentionConfig{Probes: probes}
	if res, err := CheckRetention(ctx, n, cfg, base); err != nil || !res.Pass {
		t.Fatalf("untrained version fails the gate: %+v %v", res, err)
	}
	// Unlearn the fact: the very answer, rewarded -1, many times.
	bad := Sample{TurnID: "x", PromptIDs: []int32{5, 6, 7, 8}, ResponseIDs: []int32{9, 10},
		BehaviourLogprobs: []float32{float32(base[0] / 2), float32(base[0] / 2)}, UseRL: true, Reward: -1}
	n.cfg.Advantage.Baseline = BaselineNone
	for range 30 {
		if _, err := n.Step(ctx, []Sample{bad}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := CheckRetention(ctx, n, cfg, base)
	if err != nil || res.Pass || res.Lost != 1 {
		t.Fatalf("after unlearning: %+v %v, want a lost fact", res, err)
	}
}

// TestEpochs: a step of two PPO epochs is two optimizer steps against the
// π_old of the first pass — the same update as scoring π_old first and
// stepping twice with it fixed — and the second epoch's ratios leave 1.
func TestEpochs(t *testing.T) {
	ctx := context.Background()
	batch := func() []TrainSample {
		return []TrainSample{
			{PromptIDs: []int32{1, 2, 3}, ResponseIDs: []int32{4, 5}, BehaviourLogprobs: []float32{-4, -3}, Reward: 1,
				TeacherLogprobs: []float32{-1, -0.5}, RewardTerm: true},
			{PromptIDs: []int32{7}, ResponseIDs: []int32{8, 9, 10}, BehaviourLogprobs: []float32{-5, -4, -9}, Reward: -1, RewardTerm: true},
		}
	}
	a, b := newTinyNative(t), newTinyNative(t)
	a.cfg.Epochs = 2
	ma, err := PolicyStep(ctx, a.tr, a.cfg, batch())
	if err != nil {
		t.Fatal(err)
	}
	if a.tr.StepCount() != 2 {
		t.Fatalf("%d optimizer steps, want 2", a.tr.StepCount())
	}
	if ma.Ratio == 1 {
		t.Fatal("mean ratio exactly 1 over two epochs: the second epoch did not see the first's update")
	}
	explicit := batch()
	sc, err := b.tr.Score(ctx, []train.Sequence{{PromptIDs: explicit[0].PromptIDs, ResponseIDs: explicit[0].ResponseIDs},
		{PromptIDs: explicit[1].PromptIDs, ResponseIDs: explicit[1].ResponseIDs}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range explicit {
		explicit[i].OldLogprobs = sc[i].Logprobs
	}
	for range 2 {
		if _, err := PolicyStep(ctx, b.tr, b.cfg, explicit); err != nil {
			t.Fatal(err)
		}
	}
	pa, pb := a.tr.Params(), b.tr.Params()
	for i := range pa {
		for j := range pa[i].Data {
			if math.Abs(float64(pa[i].Data[j]-pb[i].Data[j])) > 1e-6 {
				t.Fatalf("%s[%d]: %g two epochs, %g two steps with π_old fixed", pa[i].Name, j, pa[i].Data[j], pb[i].Data[j])
			}
		}
	}
}

// TestFirstEpochs: StepConfig.FirstEpochs gives the batch of a fresh
// optimizer that many steps, and every later batch cfg.Epochs — also after
// a checkpoint of a stepped trainer is loaded into a fresh one.
func TestFirstEpochs(t *testing.T) {
	ctx := context.Background()
	batch := []TrainSample{
		{PromptIDs: []int32{1, 2, 3}, ResponseIDs: []int32{4, 5}, BehaviourLogprobs: []float32{-4, -3}, Reward: 1, RewardTerm: true},
		{PromptIDs: []int32{7}, ResponseIDs: []int32{8, 9, 10}, BehaviourLogprobs: []float32{-5, -4, -9}, Reward: -1, RewardTerm: true},
	}
	a := newTinyNative(t)
	a.cfg.FirstEpochs = 3
	for i, want := range []int64{3, 4, 5} {
		if _, err := PolicyStep(ctx, a.tr, a.cfg, batch); err != nil {
			t.Fatal(err)
		}
		if got := a.tr.StepCount(); got != want {
			t.Fatalf("after batch %d: %d optimizer steps, want %d", i+1, got, want)
		}
	}
	dir := t.TempDir()
	if err := a.tr.SaveCheckpoint(dir); err != nil {
		t.Fatal(err)
	}
	b := newTinyNative(t)
	b.cfg.FirstEpochs = 3
	if err := b.tr.LoadCheckpoint(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := PolicyStep(ctx, b.tr, b.cfg, batch); err != nil {
		t.Fatal(err)
	}
	if got := b.tr.StepCount(); got != 6 {
		t.Fatalf("resumed at step 5, then one batch: %d optimizer steps, want 6", got)
	}
}

// TestVersionStepResetsMomentum: a version whose batch has nothing to learn
// (every answer liked: advantage 0 under the batch baseline, no teacher
// term, no anchors) leaves the adapters where the version before left them
// — only AdamW's weight decay (lr·λ of each weight) moves them — under the
// default MomentumNoSignal and under MomentumEveryStep. With the first
// moment kept (MomentumKeep, the behaviour before) the same step repeats
// the last update at 0.67 of its size (the second step of a fresh
// optimizer; train's TestAdamWZeroGradientRepeatsTheLastUpdate). A batch
// with contrast resets only under MomentumEveryStep.
func TestVersionStepResetsMomentum(t *testing.T) {
	ctx := context.Background()
	contrast := []Sample{
		{TurnID: "a", PromptIDs: []int32{1, 2, 3}, ResponseIDs: []int32{4, 5}, BehaviourLogprobs: []float32{-4, -3}, UseRL: true, Reward: 1},
		{TurnID: "b", PromptIDs: []int32{7}, ResponseIDs: []int32{8, 9, 10}, BehaviourLogprobs: []float32{-5, -4, -9}, UseRL: true, Reward: -1},
	}
	liked := []Sample{
		{TurnID: "c", PromptIDs: []int32{1, 2}, ResponseIDs: []int32{6, 5}, BehaviourLogprobs: []float32{-4, -3}, UseRL: true, Reward: 1},
		{TurnID: "d", PromptIDs: []int32{9}, ResponseIDs: []int32{8, 11}, BehaviourLogprobs: []float32{-5, -4}, UseRL: true, Reward: 1},
	}
	params := func(n *NativeTrainer) [][]float32 {
		var out [][]float32
		for _, p := range n.tr.Params() {
			out = append(out, append([]float32(nil), p.Data...))
		}
		return out
	}
	moved := func(a, b [][]float32) (sq, decayMiss float64) {
		for i := range a {
			for j := range a[i] {
				d := float64(b[i][j]) - float64(a[i][j])
				sq += d * d
				decayMiss = max(decayMiss, math.Abs(d+1e-3*0.1*float64(a[i][j])))
			}
		}
		return math.Sqrt(sq), decayMiss
	}
	for _, mode := range []MomentumReset{MomentumNoSignal, MomentumEveryStep, MomentumKeep} {
		n := newTinyNative(t)
		n.cfg.Advantage.Baseline = BaselineBatch
		n.cfg.MomentumReset = mode
		w0 := params(n)
		m1, err := n.Step(ctx, contrast)
		if err != nil {
			t.Fatal(err)
		}
		w1 := params(n)
		m2, err := n.Step(ctx, liked)
		if err != nil {
			t.Fatal(err)
		}
		w2 := params(n)
		d1, _ := moved(w0, w1)
		d2, miss := moved(w1, w2)
		t.Logf("%s: version 1 moved the adapters %.4g, the all-liked version 2 %.4g (%.3f of it)", mode, d1, d2, d2/d1)
		switch {
		case d1 == 0:
			t.Fatal("the version with contrast did not move the adapters")
		case m1.MomentumReset != (mode == MomentumEveryStep) || m2.MomentumReset != (mode != MomentumKeep):
			t.Fatalf("%s: reset before version 1 %v, version 2 %v", mode, m1.MomentumReset, m2.MomentumReset)
		case mode != MomentumKeep && miss > 2e-7: // float32 rounding of weights of order 1
			t.Fatalf("%s: the all-liked version moved a weight %.3g beyond the weight decay", mode, miss)
		case mode == MomentumKeep && math.Abs(d2/d1-0.673) > 0.01:
			t.Fatalf("kept momentum: the all-liked version moved %.3f of the last update, want 0.673", d2/d1)
		}
	}
}

// TestStepSignal: which batches have nothing to learn.
func TestStepSignal(t *testing.T) {
	rated := func(r float64) TrainSample { return TrainSample{Reward: r, RewardTerm: true} }
	anchor := TrainSample{Anchor: 0.5}
	for _, c := range []struct {
		name    string
		samples []TrainSample
		rewards []float64 // after the baseline
		signal  bool
	}{
		{"all liked (batch baseline), anchors", []TrainSample{rated(1), rated(1), anchor}, []float64{0, 0, 0}, false},
		{"one disliked", []TrainSample{rated(1), rated(-1), anchor}, []float64{0.7, -0.7, 0}, true},
		{"a teacher-written answer", []TrainSample{rated(1), {TeacherWrote: true}, anchor}, []float64{0, 0, 0}, true},
		{"a teacher term", []TrainSample{rated(1), {TeacherLogprobs: []float32{-1}}}, []float64{0, 0}, true},
		{"a liked answer, no baseline", []TrainSample{rated(1)}, []float64{1}, true},
		{"anchors alone", []TrainSample{anchor}, []float64{0}, true},
	} {
		if got := stepSignal(c.samples, c.rewards); got != c.signal {
			t.Errorf("%s: signal %v, want %v", c.name, got, c.signal)
		}
	}
}

// TestSortByContent: a step's batch handed over in any order trains the
// same adapters, bit for bit, once sorted by content (the scheduler sorts
// every batch): the order of a batch's turns in the store is whichever of
// its concurrent requests finished first.
func TestSortByContent(t *testing.T) {
	ctx := context.Background()
	batch := func() []Sample {
		return []Sample{
			{TurnID: "a", PromptIDs: []int32{1, 2, 3}, ResponseIDs: []int32{4, 5}, BehaviourLogprobs: []float32{-4, -3}, Reward: 1, UseRL: true},
			{TurnID: "b", PromptIDs: []int32{7}, ResponseIDs: []int32{8, 9, 10}, BehaviourLogprobs: []float32{-5, -4, -9}, Reward: -1, UseRL: true},
			{TurnID: "c", PromptIDs: []int32{11, 12}, ResponseIDs: []int32{13, 14, 15, 16}, TeacherWrote: true, TeacherLogprobs: []float32{-1, -0.5, -2, -0.1}},
			{TurnID: "d", PromptIDs: []int32{1, 2, 3}, ResponseIDs: []int32{20, 21}, BehaviourLogprobs: []float32{-6, -2}, Reward: 1, UseRL: true,
				TeacherLogprobs: []float32{-1, -1}},
			{TurnID: "e", PromptIDs: []int32{30, 31, 32, 33}, ResponseIDs: []int32{40}, BehaviourLogprobs: []float32{-3}, Reward: -1, UseRL: true},
		}
	}
	orders := [][]int{{0, 1, 2, 3, 4}, {4, 3, 2, 1, 0}, {2, 0, 4, 1, 3}}
	var want []string
	var wantParams []*train.Tensor
	for k, order := range orders {
		b := batch()
		in := make([]Sample, len(order))
		for i, j := range order {
			in[i] = b[j]
		}
		sorted := SortByContent(in)
		var ids []string
		for _, s := range sorted {
			ids = append(ids, s.TurnID)
		}
		tr := newTinyNative(t)
		if _, err := tr.Step(ctx, sorted); err != nil {
			t.Fatal(err)
		}
		if k == 0 {
			want, wantParams = ids, tr.tr.Params()
			continue
		}
		if !slices.Equal(ids, want) {
			t.Fatalf("order %v sorts to %v, order %v to %v", order, ids, orders[0], want)
		}
		for i, p := range tr.tr.Params() {
			for j := range p.Data {
				if p.Data[j] != wantParams[i].Data[j] {
					t.Fatalf("order %v: %s[%d] = %g, order %v gave %g", order, p.Name, j, p.Data[j], orders[0], wantParams[i].Data[j])
				}
			}
		}
	}
	// Unsorted, the order does change the step's last bits.
	b := batch()
	tr := newTinyNative(t)
	if _, err := tr.Step(ctx, []Sample{b[4], b[3], b[2], b[1], b[0]}); err != nil {
		t.Fatal(err)
	}
	differ := 0
	for i, p := range tr.tr.Params() {
		for j := range p.Data {
			if p.Data[j] != wantParams[i].Data[j] {
				differ++
			}
		}
	}
	if differ == 0 {
		t.Fatal("the reversed batch, unsorted, trained the same bits: the test shows nothing")
	}
}
