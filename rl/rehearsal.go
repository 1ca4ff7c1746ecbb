package rl

import (
	"context"
	"fmt"
	"sync"
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
// an answer starts with, not how long it is).
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
}

// Rehearsal hands out anchors round robin, PerBatch per step, so every
// anchor is rehearsed in turn.
type Rehearsal struct {
	mu    sync.Mutex
	cfg   RehearsalConfig
	ready bool
	next  int
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
	out := make([]TrainSample, n)
	for i := range out {
		out[i] = r.sample(r.cfg.Anchors[r.next%len(r.cfg.Anchors)])
		r.next++
	}
	return out, nil
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
	out := make([]TrainSample, len(r.cfg.Anchors))
	for i, a := range r.cfg.Anchors {
		out[i] = r.sample(a)
	}
	return out, nil
}

// sample is anchor a as a training sample: on-policy, its only term the
// anchor weight.
func (r *Rehearsal) sample(a Anchor) TrainSample {
	return TrainSample{PromptIDs: a.PromptIDs, ResponseIDs: a.AnswerIDs, Anchor: r.cfg.Weight}
}
