// Package rl turns judged turns into training samples and runs the training
// loop in the background (DESIGN.md, "Training signals" and "A turn's life").
//
// This file owns the sample: what a trainer step consumes, and the rule that
// decides, per training method, whether a judged turn becomes one. loss.go and
// advantage.go (the trainer's side) turn samples into per-token advantages and
// a loss; scheduler.go batches samples, runs trainer steps and publishes
// adapter versions.
package rl

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
)

// MethodOff serves and records but never trains (--method off). Method and
// the three training methods are declared in advantage.go.
const MethodOff Method = "off"

// ParseMethod checks a --method value.
func ParseMethod(s string) (Method, error) {
	switch m := Method(s); m {
	case MethodCombine, MethodRL, MethodOPD, MethodOff:
		return m, nil
	}
	return "", fmt.Errorf("training method %q: want combine, rl, opd or off", s)
}

// WantsScore says whether the method trains on the judge's score.
func (m Method) WantsScore() bool { return m == MethodRL || m == MethodCombine }

// WantsHint says whether the method trains on hindsight hints.
func (m Method) WantsHint() bool { return m == MethodOPD || m == MethodCombine }

// DefaultVotes is the number of judge votes per turn the seed system used:
// 3 for binary RL, 1 when hints are extracted too (OPD and combined).
func (m Method) DefaultVotes() int {
	if m == MethodRL {
		return 3
	}
	return 1
}

// Sample is one turn ready for a trainer step. The token ids are the exact ids
// the engine sampled (never re-tokenised text), and every per-token slice has
// one entry per response id.
type Sample struct {
	TurnID    string
	SessionID string

	PromptIDs         []int32
	ResponseIDs       []int32
	BehaviourLogprobs []float32 // from the engine that sampled ResponseIDs
	PolicyVersion     int64     // the adapter version that sampled them

	// UseRL adds the reward term: A_t += w_rl·Reward on every response token.
	UseRL  bool
	Reward float64 // −1, 0 or +1
	// TeacherLogprobs, when set, adds the OPD term:
	// A_t += w_opd·(TeacherLogprobs[t] − log π_old(a_t)).
	TeacherLogprobs []float32
	// TeacherWrote: ResponseIDs are the teacher's response (written with
	// the hint in context), not the policy's; BehaviourLogprobs is nil.
	// TeacherLogprobs may be nil too (a teacher that reports none): the
	// step then trains the response by cross-entropy (distill.go).
	TeacherWrote bool
	// WrittenIDs, when set, is a second response to the same prompt that
	// the teacher wrote with the hint in context, trained beside this one
	// with the OPD term only (WrittenLogprobs: the teacher's, one per id).
	// The step sees it as its own on-policy sequence (no behaviour weight).
	WrittenIDs      []int32
	WrittenLogprobs []float32

	// Why says why the turn became a sample, for export and debugging.
	Why string
}

// HasOPD reports whether the sample carries the distillation term.
func (s Sample) HasOPD() bool { return s.TeacherLogprobs != nil }

// Validate checks the per-token slices line up with the response.
func (s Sample) Validate() error {
	n := len(s.ResponseIDs)
	if n == 0 {
		return fmt.Errorf("sample for turn %s: empty response", s.TurnID)
	}
	if !s.TeacherWrote && len(s.BehaviourLogprobs) != n {
		return fmt.Errorf("sample for turn %s: %d behaviour logprobs for %d response tokens", s.TurnID, len(s.BehaviourLogprobs), n)
	}
	if s.TeacherLogprobs != nil && len(s.TeacherLogprobs) != n {
		return fmt.Errorf("sample for turn %s: %d teacher logprobs for %d response tokens", s.TurnID, len(s.TeacherLogprobs), n)
	}
	if s.WrittenIDs != nil && (s.TeacherWrote || len(s.WrittenLogprobs) != len(s.WrittenIDs) || len(s.WrittenIDs) == 0) {
		return fmt.Errorf("sample for turn %s: a teacher-written second response of %d tokens with %d teacher logprobs", s.TurnID, len(s.WrittenIDs), len(s.WrittenLogprobs))
	}
	return nil
}

// Decision is what a judged turn becomes under a method.
type Decision struct {
	Keep   bool   // becomes a sample
	UseRL  bool   // with the reward term
	UseOPD bool   // with the distillation term (a teacher pass is needed)
	Reason string // why it was kept, or why it was dropped
}

// Decide applies DESIGN.md's table to a judged turn: for combine, hint and ±1
// → both terms; hint and 0 → OPD only; no hint and ±1 → RL only; neither → no
// sample. rl and opd keep only their own term; off keeps nothing.
func Decide(m Method, score int, hasHint bool) Decision {
	rl := score != 0 && m.WantsScore()
	opd := hasHint && m.WantsHint()
	switch {
	case m == MethodOff:
		return Decision{Reason: "method off: nothing is trained"}
	case rl && opd:
		return Decision{Keep: true, UseRL: true, UseOPD: true, Reason: fmt.Sprintf("score %+d and an accepted hint: RL and OPD terms", score)}
	case rl:
		return Decision{Keep: true, UseRL: true, Reason: fmt.Sprintf("score %+d: RL term", score)}
	case opd:
		return Decision{Keep: true, UseOPD: true, Reason: "accepted hint: OPD term"}
	}
	switch m {
	case MethodRL:
		return Decision{Reason: "score 0: no reward signal"}
	case MethodOPD:
		return Decision{Reason: "no accepted hint: no distillation signal"}
	default:
		return Decision{Reason: "score 0 and no accepted hint: no signal"}
	}
}

// AtLeastOneReason marks a sample kept by the at-least-one-per-session rule.
const AtLeastOneReason = "at least one per session: first turn with a next state, reward 0"

// SortByContent orders a step's batch by what its samples hold (their
// prompt, responses, reward and teacher log-probabilities), not by when
// their turns were recorded, and returns it. Turns served at once get
// their store order from whichever request finished first, and a step's
// sums (the gradients over its samples, the running mean of its ratings)
// depend on the order in their last bits: sorted, one batch gives one
// step, so a run repeated on one binary and seed repeats its versions.
func SortByContent(batch []Sample) []Sample {
	type keyed struct {
		key uint64
		s   Sample
	}
	ks := make([]keyed, len(batch))
	for i := range batch {
		ks[i] = keyed{contentKey(&batch[i]), batch[i]}
	}
	slices.SortStableFunc(ks, func(a, b keyed) int { return cmp.Compare(a.key, b.key) })
	for i := range ks {
		batch[i] = ks[i].s
	}
	return batch
}

// contentKey hashes what a sample trains on.
func contentKey(s *Sample) uint64 {
	h := fnv.New64a()
	var b [8]byte
	ids := func(xs []int32) {
		binary.LittleEndian.PutUint64(b[:], uint64(len(xs)))
		h.Write(b[:])
		for _, x := range xs {
			binary.LittleEndian.PutUint32(b[:4], uint32(x))
			h.Write(b[:4])
		}
	}
	floats := func(xs []float32) {
		binary.LittleEndian.PutUint64(b[:], uint64(len(xs)))
		h.Write(b[:])
		for _, x := range xs {
			binary.LittleEndian.PutUint32(b[:4], math.Float32bits(x))
			h.Write(b[:4])
		}
	}
	ids(s.PromptIDs)
	ids(s.ResponseIDs)
	ids(s.WrittenIDs)
	floats(s.TeacherLogprobs)
	binary.LittleEndian.PutUint64(b[:], math.Float64bits(s.Reward))
	h.Write(b[:])
	if s.UseRL {
		h.Write([]byte{1})
	}
	if s.TeacherWrote {
		h.Write([]byte{2})
	}
	return h.Sum64()
}
