package rl

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/clawrl/clawrl/store"
	"github.com/clawrl/clawrl/train"
)

// A sample's per-token slices must line up with its response; a response
// the teacher wrote has no behaviour logprobs (the policy never sampled it)
// and may lack the teacher's (an outside teacher that reports none: the step
// trains it by cross-entropy), but any it carries must line up.
func TestSampleValidate(t *testing.T) {
	ok := Sample{TurnID: "a", ResponseIDs: []int32{1, 2}, BehaviourLogprobs: []float32{-1, -2}}
	wrote := Sample{TurnID: "b", ResponseIDs: []int32{1, 2}, TeacherLogprobs: []float32{-1, -2}, TeacherWrote: true}
	bare := Sample{TurnID: "e", ResponseIDs: []int32{1, 2}, TeacherWrote: true}
	for _, s := range []Sample{ok, wrote, bare} {
		if err := s.Validate(); err != nil {
			t.Errorf("%s: %v", s.TurnID, err)
		}
	}
	for _, tc := range []struct {
		s    Sample
		want string
	}{
		{Sample{TurnID: "c"}, "empty response"},
		{Sample{TurnID: "d", ResponseIDs: []int32{1, 2}, BehaviourLogprobs: []float32{-1}}, "1 behaviour logprobs for 2"},
		{Sample{TurnID: "f", ResponseIDs: []int32{1, 2}, TeacherLogprobs: []float32{-1}, TeacherWrote: true}, "1 teacher logprobs for 2"},
	} {
		if err := tc.s.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.s.TurnID, err, tc.want)
		}
	}
}

// A stored sample with both responses (the turn's, re-scored, and the one
// the teacher wrote) splits into the turn's response with its teacher
// logprobs and the written one beside it; a teacher-only sample still
// trains on the teacher's response alone; the trainer gets one sequence per
// response.
func TestBothResponses(t *testing.T) {
	turn := store.Turn{ID: "t", PromptIDs: []int32{1, 2}, ResponseIDs: []int32{3, 4, 5}, BehaviourLogprobs: []float32{-1, -2, -3}}
	both := FromStore(store.Sample{TurnID: "t", UseRL: true, Reward: -1, TeacherLogprobs: []float32{-4, -5, -6, -7, -8},
		TeacherResponseIDs: []int32{9, 10}}, turn)
	if err := both.Validate(); err != nil {
		t.Fatal(err)
	}
	if both.TeacherWrote || !reflect.DeepEqual(both.ResponseIDs, turn.ResponseIDs) || !reflect.DeepEqual(both.TeacherLogprobs, []float32{-4, -5, -6}) ||
		!reflect.DeepEqual(both.WrittenIDs, []int32{9, 10}) || !reflect.DeepEqual(both.WrittenLogprobs, []float32{-7, -8}) || !both.UseRL {
		t.Fatalf("both: %+v", both)
	}
	only := FromStore(store.Sample{TurnID: "t", TeacherLogprobs: []float32{-7, -8}, TeacherResponseIDs: []int32{9, 10}}, turn)
	if !only.TeacherWrote || !reflect.DeepEqual(only.ResponseIDs, []int32{9, 10}) || only.WrittenIDs != nil {
		t.Fatalf("teacher only: %+v", only)
	}
	bad := both
	bad.WrittenLogprobs = bad.WrittenLogprobs[:1]
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "second response of 2 tokens with 1") {
		t.Fatalf("mismatched written logprobs: %v", err)
	}
	tr := &countingStepper{}
	p := NewPolicyTrainer(tr, DefaultStepConfig())
	if _, err := p.Step(context.Background(), []Sample{both}); err != nil {
		t.Fatal(err)
	}
	if len(tr.seqs) != 2 || !reflect.DeepEqual(tr.seqs[1].ResponseIDs, []int32{9, 10}) || !reflect.DeepEqual(tr.seqs[1].PromptIDs, turn.PromptIDs) {
		t.Fatalf("trainer sequences: %+v", tr.seqs)
	}
}

// countingStepper records the sequences of its one step and the momentum
// resets asked of it, and trains nothing.
type countingStepper struct {
	seqs   []train.Sequence
	resets int
}

func (c *countingStepper) Config() train.Config { return train.Config{} }
func (c *countingStepper) Score(_ context.Context, seqs []train.Sequence) ([]train.TokenScores, error) {
	return nil, errors.New("not used")
}
func (c *countingStepper) ScoreReference(_ context.Context, seqs []train.Sequence) ([]train.TokenScores, error) {
	return nil, errors.New("not used")
}
func (c *countingStepper) Step(_ context.Context, seqs []train.Sequence, obj train.Objective) (train.Stats, error) {
	c.seqs = seqs
	for i, s := range seqs {
		n := len(s.ResponseIDs)
		lp := make([]float32, n)
		obj.TokenLoss(i, lp, make([]float32, n), make([]float32, n), make([]float32, n))
	}
	return train.Stats{Tokens: 5}, nil
}
func (c *countingStepper) ResetMomentum() error        { c.resets++; return nil }
func (c *countingStepper) SaveCheckpoint(string) error { return nil }
func (c *countingStepper) LoadCheckpoint(string) error { return nil }
