package rl

import (
	"strings"
	"testing"
)

// A sample's per-token slices must line up with its response; a response
// the teacher wrote has no behaviour logprobs (the policy never sampled it)
// but must carry the teacher's.
func TestSampleValidate(t *testing.T) {
	ok := Sample{TurnID: "a", ResponseIDs: []int32{1, 2}, BehaviourLogprobs: []float32{-1, -2}}
	wrote := Sample{TurnID: "b", ResponseIDs: []int32{1, 2}, TeacherLogprobs: []float32{-1, -2}, TeacherWrote: true}
	for _, s := range []Sample{ok, wrote} {
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
		{Sample{TurnID: "e", ResponseIDs: []int32{1, 2}, TeacherWrote: true}, "without teacher logprobs"},
		{Sample{TurnID: "f", ResponseIDs: []int32{1, 2}, TeacherLogprobs: []float32{-1}, TeacherWrote: true}, "1 teacher logprobs for 2"},
	} {
		if err := tc.s.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.s.TurnID, err, tc.want)
		}
	}
}
