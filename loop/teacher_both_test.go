package loop

import (
	"reflect"
	"testing"
)

// TestTeacherAlsoWrites: with --opd-response both, a thumbs-down with
// written feedback becomes one sample that trains on two responses: the
// policy's own, re-scored by the teacher and carrying the rating, and the
// one the teacher writes with the feedback as its hint (the engine's greedy
// answer), OPD only. The store keeps them in one row; the trainer receives
// the turn's prompt, its response and the teacher's response beside it.
func TestTeacherAlsoWrites(t *testing.T) {
	c := critiquedTurn(t, Config{TeacherAlsoWrites: true})
	ctx, f, r, rated, s, want, wantLP := c.ctx, c.f, c.r, c.rated, c.sample, c.want, c.wantLP
	rescored, _, err := c.teacher.Logprobs(ctx, c.msgs, nil, rated.PromptText, rated.ResponseIDs, c.critique)
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(want, rated.ResponseIDs) {
		t.Fatalf("the scripted teacher wrote the policy's own response; the test shows nothing")
	}
	if !reflect.DeepEqual(s.TeacherResponseIDs, want) || !reflect.DeepEqual(s.TeacherLogprobs, append(append([]float32(nil), rescored...), wantLP...)) {
		t.Fatalf("stored teacher response %v, logprobs %v; want %v, %v then %v", s.TeacherResponseIDs, s.TeacherLogprobs, want, rescored, wantLP)
	}
	if !s.UseRL || s.Reward != -1 {
		t.Errorf("the policy's response lost its rating: use %v, reward %v", s.UseRL, s.Reward)
	}
	if _, err := r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if len(f.trainer.Batches) != 1 || len(f.trainer.Batches[0]) != 1 {
		t.Fatalf("trainer batches: %+v", f.trainer.Batches)
	}
	got := f.trainer.Batches[0][0]
	if !reflect.DeepEqual(got.PromptIDs, rated.PromptIDs) || !reflect.DeepEqual(got.ResponseIDs, rated.ResponseIDs) ||
		!reflect.DeepEqual(got.BehaviourLogprobs, rated.BehaviourLogprobs) || got.TeacherWrote ||
		!reflect.DeepEqual(got.TeacherLogprobs, rescored) || !got.UseRL ||
		!reflect.DeepEqual(got.WrittenIDs, want) || !reflect.DeepEqual(got.WrittenLogprobs, wantLP) {
		t.Errorf("trained sample: %+v", got)
	}
}
