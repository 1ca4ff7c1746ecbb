package rl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
)

// Rehearsal anchors: a few generic questions, answered once by the base
// model itself (greedy), trained beside every batch with a fixed positive
// advantage on each of the base answer's tokens — supervised fine-tuning
// toward what the model already said. A persona's batch pulls the whole
// policy toward one style; the anchors pull the openings of ordinary answers
// back toward the base model's, so a step that would flip a knife-edge fact
// ("What is the capital of France?" → "L'Étoile…") is resisted in the step
// itself rather than thrown away by the retention gate afterwards.
//
// The anchor questions must be disjoint from the retention facts the gate
// and `clawrl bench learn` check (the test set is never trained on); the
// caller that builds them drops any anchor whose answer names a retention
// fact's accepted word.

// Anchor is one rehearsal pair: a question's rendered prompt and the opening
// of the base model's greedy answer (no stop token: an anchor teaches what
// an answer starts with, not how long it is). A followed anchor
// (RehearsalConfig.Follow) the teacher ended within its budget keeps its
// stop token: under a hint the whole answer is the preference.
type Anchor struct {
	Name      string
	PromptIDs []int32
	AnswerIDs []int32
}

// DefaultRehearsalWeight is the per-token advantage of an anchor token: the
// scale of a ±1 reward, so an anchor weighs about as much as a rated turn.
const DefaultRehearsalWeight = 1.0

// RehearsalConfig configures the anchors a PolicyTrainer adds to each step.
type RehearsalConfig struct {
	// PerBatch is how many anchors each step trains on (0: none).
	PerBatch int
	// Repair keeps the anchors for the gate's repair steps (All) even
	// when PerBatch is 0.
	Repair bool
	// Weight is each anchor token's advantage (default
	// DefaultRehearsalWeight).
	Weight float64
	// Anchors, or Build to make them on first use (it asks the engine for
	// the base model's answers). They are built in the first step, while
	// serving is idle, not while users' turns are generating: batched with
	// those, the base model's greedy answers and the users' sampled ones
	// could both come out differently from run to run (measured: the
	// --quick scenario's third version went from 9/10 to rejected when the
	// anchors were built during the first round's turns).
	Anchors []Anchor
	Build   func(ctx context.Context) ([]Anchor, error)
	// Follow, when set, rewrites an anchor's answer under the hint the
	// loop last trained on (SetHint): the teacher's answer to the anchor's
	// question with that hint in context, its opening kept as the base
	// answer's is, or ok false when the teacher's answer does not keep
	// what the base answer said (the anchor then sits the hint out); an
	// error that is not the context's makes it sit one step out. With
	// no hint yet, or no Follow, anchors are the base model's answers.
	// A French-speaking user's anchors then rehearse facts answered in
	// French instead of pulling every answer back to English.
	Follow func(ctx context.Context, hint string, a Anchor) (followed Anchor, ok bool, err error)
	// AvoidBound bounds how far an avoided answer is pushed down on an
	// anchor's prompt: once its log-probability is AvoidBound nats below
	// the base model's, a step leaves it out (TrainSample.Bound; 0: no
	// bound, every step pushes it further).
	AvoidBound float64
	// AvoidPasses retires an avoided answer once this many versions have
	// passed the retention gate since it was last caught (Passed); caught
	// again, it is pushed down again. 0: pushed down on every step from
	// then on. An answer in the user's language that the gate caught
	// ("La capitale de la France est Paris." to Germany's capital) has a
	// log-probability under the base model far below any bound, so
	// AvoidBound never stops it, and pushed down step after step it
	// teaches the student to leave the language (BENCHMARKS.md, "Pushed
	// down until the gate passes").
	AvoidPasses int
	// AvoidRelative reads AvoidBound against where an answer's pushes
	// began as well as against the base model: the first step that pushes
	// it down records its summed log-probability from the base model's
	// under the weights it trains (its shift), and later steps leave it out
	// once its shift is AvoidBound below that (TrainSample.BoundStart). An
	// answer in the user's language that the student learned to speak
	// starts far above the base model, so it is pushed down AvoidBound nats
	// from where it was and then only when it climbs back, not on every
	// step. The shift is read on whichever anchor's prompt the answer is
	// pushed down beside. Answers wait their turn (one per anchor a step),
	// and a push of some moves the others with them (they share the
	// student's language), so an answer that waited through a step that
	// recorded starts takes their mean as its own: where it would have been
	// found beside them, not where their pushes left it.
	AvoidRelative bool
	// Avoids says answers may be pushed down (Avoid): only then does Load
	// take the ones a saved state pushed down, so a loop started again
	// without --rehearsal-avoid pushes none.
	Avoids bool
}

// Rehearsal hands out anchors round robin, PerBatch per step, so every
// anchor is rehearsed in turn.
type Rehearsal struct {
	mu    sync.Mutex
	cfg   RehearsalConfig
	ready bool
	next  int

	avoid   []avoided // answers pushed down on the anchors' prompts (Avoid)
	nextBad int
	// begun are the starts the steps since the last Samples recorded
	// (AvoidRelative).
	begun []float64

	hint     atomic.Pointer[string]
	followed map[followKey]*Anchor // nil value: the teacher's answer was refused
	skipped  int                   // anchors that sat a hint out (Skipped)
	failed   int                   // teacher failures (Skipped)
}

type followKey struct{ hint, name string }

// avoided is an answer pushed down (Rehearsal.Avoid).
type avoided struct {
	ids []int32
	// passes counts the versions that passed the gate since it was caught
	// (RehearsalConfig.AvoidPasses).
	passes int
	// start is its shift when its pushes began (NaN: not yet;
	// RehearsalConfig.AvoidRelative).
	start float64
	// waited: it was held when the last step's samples were handed out.
	waited bool
}

// SetHint records the hint the loop last trained on; with
// RehearsalConfig.Follow set, later steps rehearse the anchors under it.
// It never waits for a step.
func (r *Rehearsal) SetHint(hint string) {
	if r == nil || r.cfg.Follow == nil || hint == "" {
		return
	}
	if old := r.hint.Load(); old != nil && *old == hint {
		return
	}
	r.hint.Store(&hint)
}

// Avoid adds an answer to push down: from the next step on, each anchor
// trained is joined by a sample of its prompt with an avoided answer (in
// turn) at the anchor weight negated, so an answer that answers nothing
// (a stock refusal the retention gate caught) becomes less likely
// whatever the question. An answer already avoided is not added twice
// (its count of passes starts again); Avoid reports whether answer was
// added.
func (r *Rehearsal) Avoid(answer []int32) bool {
	if r == nil || len(answer) == 0 {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if i := r.find(answer); i >= 0 {
		r.avoid[i].passes = 0 // where its pushes began stays: caught again, it climbed back
		return false
	}
	r.avoid = append(r.avoid, avoided{ids: slices.Clone(answer), start: math.NaN()})
	return true
}

// Passed tells the rehearsal a version passed the retention gate: with
// RehearsalConfig.AvoidPasses set, the answers pushed down that many passes
// since they were last caught are retired. It returns how many were.
func (r *Rehearsal) Passed() (retired int) {
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cfg.AvoidPasses <= 0 {
		return 0
	}
	kept := r.avoid[:0]
	for _, a := range r.avoid {
		if a.passes++; a.passes < r.cfg.AvoidPasses {
			kept = append(kept, a)
		}
	}
	retired = len(r.avoid) - len(kept)
	clear(r.avoid[len(kept):])
	r.avoid = kept
	return retired
}

// Avoided is how many answers Avoid pushes down.
func (r *Rehearsal) Avoided() int {
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.avoid)
}

// find is the index of answer among those pushed down, or -1.
func (r *Rehearsal) find(answer []int32) int {
	return slices.IndexFunc(r.avoid, func(a avoided) bool { return slices.Equal(a.ids, answer) })
}

// RehearsalFile is the file in a version folder that keeps the rehearsal's
// state at that version (RehearsalState), beside the adapter and the
// optimizer state.
const RehearsalFile = "rehearsal.json"

// RehearsalState is what of a Rehearsal lives beyond a step and is not
// rebuilt on a start: the answers the gate caught that are pushed down, and
// where the round robins of the anchors and of those answers stand. The
// anchors themselves are rebuilt from the base model (greedy, so the same).
type RehearsalState struct {
	Next    int       `json:"next"`
	NextBad int       `json:"next_avoided"`
	Avoid   [][]int32 `json:"avoided"`
	// Passes are the avoided answers' passes of the gate since they were
	// caught (RehearsalConfig.AvoidPasses), one per answer.
	Passes []int `json:"passes"`
	// Starts are the avoided answers' shifts when first pushed down
	// (RehearsalConfig.AvoidRelative), one per answer; null: not pushed
	// yet. Absent in a state written before they were kept: none pushed.
	Starts []*float64 `json:"starts,omitempty"`
}

// Save writes the state into dir (RehearsalFile).
func (r *Rehearsal) Save(dir string) error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	st := RehearsalState{Next: r.next, NextBad: r.nextBad}
	for _, a := range r.avoid {
		var start *float64
		if !math.IsNaN(a.start) {
			start = &a.start
		}
		st.Avoid, st.Passes, st.Starts = append(st.Avoid, a.ids), append(st.Passes, a.passes), append(st.Starts, start)
	}
	raw, err := json.Marshal(st)
	r.mu.Unlock()
	if err != nil {
		return fmt.Errorf("rehearsal state: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, RehearsalFile), raw, 0o644); err != nil {
		return fmt.Errorf("rehearsal state: %w", err)
	}
	return nil
}

// Load reads the state a version folder kept (Save; a folder without one,
// written before the state was kept, changes nothing). The answers it
// pushes down join those already pushed down, so that going back to an
// older version forgets none the gate caught since; the round robins are
// taken from dir only by a rehearsal that has not handed out a step yet,
// as after a start, so that a recovered loop rehearses what the one before
// the crash would have.
func (r *Rehearsal) Load(dir string) error {
	if r == nil {
		return nil
	}
	path := filepath.Join(dir, RehearsalFile)
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("rehearsal state: %w", err)
	}
	var st RehearsalState
	if err := json.Unmarshal(raw, &st); err != nil {
		return fmt.Errorf("rehearsal state %s: %w", path, err)
	}
	if st.Passes == nil {
		st.Passes = make([]int, len(st.Avoid))
	}
	if st.Starts == nil {
		st.Starts = make([]*float64, len(st.Avoid))
	}
	if st.Next < 0 || st.NextBad < 0 || len(st.Passes) != len(st.Avoid) || len(st.Starts) != len(st.Avoid) {
		return fmt.Errorf("rehearsal state %s: a negative position, or %d counts of passes and %d starts for %d answers",
			path, len(st.Passes), len(st.Starts), len(st.Avoid))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	fresh := r.next == 0 && r.nextBad == 0 && len(r.avoid) == 0
	if r.cfg.Avoids {
		for i, a := range st.Avoid {
			if len(a) == 0 || r.find(a) >= 0 {
				continue
			}
			start := math.NaN()
			if p := st.Starts[i]; p != nil {
				start = *p
			}
			r.avoid = append(r.avoid, avoided{ids: a, passes: st.Passes[i], start: start})
		}
	}
	if fresh {
		r.next, r.nextBad = st.Next, st.NextBad
	}
	return nil
}

// Skipped counts the anchors whose answer under a hint was refused, each
// (hint, anchor) once, and the teacher's failures to answer one.
func (r *Rehearsal) Skipped() (refused, failed int) {
	if r == nil {
		return 0, 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.skipped, r.failed
}

// NewRehearsal returns the anchors of cfg; nil when cfg.PerBatch is 0 and
// cfg.Repair is not set.
func NewRehearsal(cfg RehearsalConfig) *Rehearsal {
	if cfg.PerBatch <= 0 && !cfg.Repair {
		return nil
	}
	if cfg.Weight == 0 {
		cfg.Weight = DefaultRehearsalWeight
	}
	return &Rehearsal{cfg: cfg, ready: len(cfg.Anchors) > 0 || cfg.Build == nil}
}

// Prepare builds the anchors if they are not built yet.
func (r *Rehearsal) Prepare(ctx context.Context) error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.prepareLocked(ctx)
}

func (r *Rehearsal) prepareLocked(ctx context.Context) error {
	if r.ready {
		return nil
	}
	anchors, err := r.cfg.Build(ctx)
	if err != nil {
		return fmt.Errorf("rehearsal anchors: %w", err)
	}
	for _, a := range anchors {
		if len(a.PromptIDs) == 0 || len(a.AnswerIDs) == 0 {
			return fmt.Errorf("rehearsal anchor %q: empty prompt or answer", a.Name)
		}
	}
	r.cfg.Anchors, r.ready = anchors, true
	return nil
}

// Anchors are the built anchors (nil before Prepare).
func (r *Rehearsal) Anchors() []Anchor {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cfg.Anchors
}

// Samples returns the next PerBatch anchors as training samples: on-policy
// (no behaviour logprobs), with Advantage set to the anchor weight and no
// reward or teacher term.
func (r *Rehearsal) Samples(ctx context.Context) ([]TrainSample, error) {
	if r == nil || r.cfg.PerBatch <= 0 {
		return nil, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.prepareLocked(ctx); err != nil {
		return nil, err
	}
	if len(r.cfg.Anchors) == 0 {
		// Every question was dropped (its answer named a retention fact):
		// train without anchors rather than not at all.
		return nil, nil
	}
	n := min(r.cfg.PerBatch, len(r.cfg.Anchors))
	out := make([]TrainSample, 0, n)
	for range n {
		a := r.cfg.Anchors[r.next%len(r.cfg.Anchors)]
		r.next++
		a, ok, err := r.under(ctx, a)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, r.sample(a))
		}
	}
	r.shareStarts()
	for i, n := 0, len(out); i < n && len(r.avoid) > 0; i++ {
		bad := r.avoid[r.nextBad%len(r.avoid)].ids
		r.nextBad++
		s := TrainSample{PromptIDs: out[i].PromptIDs, ResponseIDs: bad, Anchor: -r.cfg.Weight, Bound: r.cfg.AvoidBound}
		if r.cfg.AvoidRelative && r.cfg.AvoidBound > 0 {
			s.BoundStart = r.startOf(bad)
		}
		out = append(out, s)
	}
	return out, nil
}

// shareStarts gives each answer that waited through the last step without
// a start of its own the mean of the starts that step recorded
// (RehearsalConfig.AvoidRelative), and marks every answer held now as
// waiting through the coming one. r.mu is held.
func (r *Rehearsal) shareStarts() {
	if len(r.begun) > 0 {
		var sum float64
		for _, v := range r.begun {
			sum += v
		}
		mean := sum / float64(len(r.begun))
		for i := range r.avoid {
			if a := &r.avoid[i]; a.waited && math.IsNaN(a.start) {
				a.start = mean
			}
		}
		r.begun = r.begun[:0]
	}
	for i := range r.avoid {
		r.avoid[i].waited = true
	}
}

// startOf is TrainSample.BoundStart for the avoided answer: the shift its
// first push found, recorded by the first step that reads it (or shared,
// shareStarts). An answer retired before the step reads it has no start
// but the shift it has.
func (r *Rehearsal) startOf(answer []int32) func(shift float64) float64 {
	return func(shift float64) float64 {
		r.mu.Lock()
		defer r.mu.Unlock()
		i := r.find(answer)
		if i < 0 {
			return shift
		}
		if a := &r.avoid[i]; math.IsNaN(a.start) {
			a.start = shift
			r.begun = append(r.begun, shift)
		}
		return r.avoid[i].start
	}
}

// under is anchor a under the recorded hint (RehearsalConfig.Follow),
// asked of the teacher once per hint and anchor; a itself with no hint or
// no Follow; ok false when the teacher's answer was refused.
func (r *Rehearsal) under(ctx context.Context, a Anchor) (Anchor, bool, error) {
	h := r.hint.Load()
	if r.cfg.Follow == nil || h == nil {
		return a, true, nil
	}
	k := followKey{*h, a.Name}
	if f, seen := r.followed[k]; seen {
		if f == nil {
			return Anchor{}, false, nil
		}
		return *f, true, nil
	}
	f, ok, err := r.cfg.Follow(ctx, *h, a)
	switch {
	case err != nil && ctx.Err() != nil:
		return Anchor{}, false, ctx.Err()
	case err != nil:
		// The teacher failed (a remote one may be down): the anchor sits
		// this step out and is asked again at its next turn.
		r.failed++
		return Anchor{}, false, nil
	}
	if ok && (len(f.PromptIDs) == 0 || len(f.AnswerIDs) == 0) {
		ok = false
	}
	if r.followed == nil {
		r.followed = map[followKey]*Anchor{}
	}
	if !ok {
		r.followed[k] = nil
		r.skipped++
		return Anchor{}, false, nil
	}
	r.followed[k] = &f
	return f, true, nil
}

// All returns every anchor as a training sample, as Samples does (the
// gate's repair step, RetentionConfig.Repairs, trains on all of them at
// once); none when every question was dropped.
func (r *Rehearsal) All(ctx context.Context) ([]TrainSample, error) {
	if r == nil {
		return nil, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.prepareLocked(ctx); err != nil {
		return nil, err
	}
	out := make([]TrainSample, 0, len(r.cfg.Anchors))
	for _, a := range r.cfg.Anchors {
		a, ok, err := r.under(ctx, a)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, r.sample(a))
		}
	}
	return out, nil
}

// sample is anchor a as a training sample: on-policy, its only term the
// anchor weight.
func (r *Rehearsal) sample(a Anchor) TrainSample {
	return TrainSample{PromptIDs: a.PromptIDs, ResponseIDs: a.AnswerIDs, Anchor: r.cfg.Weight}
}
