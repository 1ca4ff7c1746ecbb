package loop

import (
	"reflect"
	"strings"
	"testing"

	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/judge"
)

// TestReviseTeacherTrainsOriginalPrompt: under --hint-placement revise the
// teacher is shown the conversation as it happened (the question, the
// policy's own answer, the written feedback as the user's next message) and
// writes the revision; the sample trains the ORIGINAL prompt (no answer, no
// feedback in it) followed by that revision. The scripted engine answers
// the uncued prompt with "ok: write a haiku", and the feedback's [[again]]
// cue repeats the last assistant message, so the revision here is that
// answer followed by the sign-off the feedback asks for, which the
// hint-in-question placement never writes (it shows no answer to repeat).
func TestReviseTeacherTrainsOriginalPrompt(t *testing.T) {
	const critique = "[[again]][[say: Hope this helps!]] End with the sign-off."
	c := critiquedTurnAt(t, Config{TeacherWrites: true}, judge.HintAsRevision, "write a haiku", critique)
	ctx, f, r, rated, s := c.ctx, c.f, c.r, c.rated, c.sample
	prompt, err := c.teacher.WithAnswer(rated.Response, rated.ResponseIDs).Prompt(c.msgs, nil, rated.PromptText, critique)
	if err != nil {
		t.Fatal(err)
	}
	wantPrompt := rated.PromptText + rated.Response.Content + "<|im_end|>\n<|im_start|>user\n" + critique + "<|im_end|>\n<|im_start|>assistant\n"
	if !strings.HasPrefix(rated.PromptText, "<|im_start|>user\nwrite a haiku") || prompt != wantPrompt {
		t.Fatalf("revise teacher's prompt\n%q\nwant the student's prompt, its answer and the feedback:\n%q", prompt, wantPrompt)
	}
	f2 := f.engine.Format()
	if got := f2.Decode(s.TeacherResponseIDs); got != "ok: write a haiku Hope this helps!<|im_end|>" {
		t.Fatalf("teacher wrote %q, want the revision of the scripted engine", got)
	}
	if !reflect.DeepEqual(s.TeacherResponseIDs, c.want) || !reflect.DeepEqual(s.TeacherLogprobs, c.wantLP) {
		t.Fatalf("teacher response %v, want the engine's greedy answer to the revise prompt %v", s.TeacherResponseIDs, c.want)
	}
	if s.UseRL || s.Reward != 0 {
		t.Errorf("teacher-written sample carries the RL term (use %v, reward %v)", s.UseRL, s.Reward)
	}
	if _, err := r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if len(f.trainer.Batches) != 1 || len(f.trainer.Batches[0]) != 1 {
		t.Fatalf("trainer batches: %+v", f.trainer.Batches)
	}
	got := f.trainer.Batches[0][0]
	if !reflect.DeepEqual(got.PromptIDs, rated.PromptIDs) || !reflect.DeepEqual(got.ResponseIDs, c.want) || !got.TeacherWrote {
		t.Errorf("trained sample: prompt %q, response %q, teacher wrote %v; want the original prompt %q and the revision",
			f2.Decode(got.PromptIDs), f2.Decode(got.ResponseIDs), got.TeacherWrote, rated.PromptText)
	}
}

// TestContinueTeacherKeepsTheAnswer: under --hint-placement continue the
// teacher's prompt is the hint-in-question prompt followed by the policy's
// own answer without its end-of-turn token, and the sample trains the
// original prompt on that answer plus what the teacher wrote after it. The
// scripted engine continues a begun answer that its script starts with:
// the rated answer is the prompt's cue, "Autumn leaves drift down.", and
// the teacher, shown the prompt and the feedback, says the prompt's cue and
// then the feedback's, so it adds the sign-off.
func TestContinueTeacherKeepsTheAnswer(t *testing.T) {
	const critique = "[[say: Hope this helps!]] End with the sign-off."
	c := critiquedTurnAt(t, Config{TeacherWrites: true}, judge.HintAsContinuation, cuedHaiku, critique)
	ctx, f, r, rated, s := c.ctx, c.f, c.r, c.rated, c.sample
	f2 := f.engine.Format()
	stop := rated.ResponseIDs[len(rated.ResponseIDs)-1]
	if got := f2.Decode(rated.ResponseIDs); got != "Autumn leaves drift down.<|im_end|>" {
		t.Fatalf("rated answer %q", got)
	}
	answer := rated.ResponseIDs[:len(rated.ResponseIDs)-1]
	if got := f2.Decode(s.TeacherResponseIDs); got != "Autumn leaves drift down. Hope this helps!<|im_end|>" {
		t.Fatalf("teacher wrote %q, want the policy's answer continued with the sign-off", got)
	}
	if !reflect.DeepEqual(s.TeacherResponseIDs[:len(answer)], answer) || s.TeacherResponseIDs[len(s.TeacherResponseIDs)-1] != stop {
		t.Fatalf("teacher response %v does not start with the answer's own ids %v", s.TeacherResponseIDs, answer)
	}
	// The logprobs: the teacher's scores of the kept answer, then those of
	// the tokens it generated after it.
	prompt, err := c.teacher.Prompt(c.msgs, nil, rated.PromptText, critique)
	if err != nil {
		t.Fatal(err)
	}
	pids := f2.Encode(prompt)
	scored, err := f.engine.Score(ctx, engine.ScoreRequest{PromptIDs: pids, CompletionIDs: answer})
	if err != nil {
		t.Fatal(err)
	}
	g, err := f.engine.Generate(ctx, engine.GenerateRequest{PromptIDs: append(append([]int32(nil), pids...), answer...), MaxTokens: 40}, func(engine.Token) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	wantLP := scored.Logprobs
	for _, tok := range g.Tokens {
		wantLP = append(wantLP, tok.Logprob)
	}
	if !reflect.DeepEqual(s.TeacherLogprobs, wantLP) {
		t.Errorf("teacher logprobs %v, want %v", s.TeacherLogprobs, wantLP)
	}
	if _, err := r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	got := f.trainer.Batches[0][0]
	if !reflect.DeepEqual(got.PromptIDs, rated.PromptIDs) || !reflect.DeepEqual(got.ResponseIDs, s.TeacherResponseIDs) || !got.TeacherWrote {
		t.Errorf("trained sample: prompt %q, response %q; want the original prompt and the continued answer", f2.Decode(got.PromptIDs), f2.Decode(got.ResponseIDs))
	}
}
