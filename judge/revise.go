package judge

import (
	"errors"
	"fmt"

	"github.com/clawrl/clawrl/chat"
)

// A revising teacher (HintAsRevision) sees the conversation the way it
// really happened: the question, the student's own answer, and the user's
// written feedback as the next message ("Too long, just give me the short
// version"). Answering that is what a chat model is tuned to do, where a
// hint appended to the question is an instruction it may not follow
// (SmolLM2-135M answers 'Be brief. Your last words must be "Hope this
// helps!"' with an apology and the sign-off alone). The trained sample is
// still the original prompt followed by the teacher's revised answer:
// context distillation teaches the student to give the revision without
// being asked.

var errNoAnswer = errors.New("the revise hint placement needs the student's answer (TeacherPromptAfter, Teacher.WithAnswer)")

// TeacherPromptAfter is TeacherPromptAt for a teacher that knows the
// student's answer to msgs. Under HintAsRevision it returns msgs, then
// answer as the assistant's turn, then hint as the user's next message;
// under the other placements the answer is not shown.
func TeacherPromptAfter(msgs []chat.Message, answer chat.Message, hint string, p HintPlacement) ([]chat.Message, error) {
	if p == HintAsContinuation {
		// The answer is continued as ids (Teacher.Write), not shown.
		p = HintInUser
	}
	if p != HintAsRevision {
		return TeacherPromptAt(msgs, hint, p)
	}
	if len(msgs) == 0 || msgs[len(msgs)-1].Role == chat.RoleAssistant {
		return nil, fmt.Errorf("revision prompt: the conversation must end with the message the answer replies to, not %d messages ending with an assistant's", len(msgs))
	}
	answer.Role = chat.RoleAssistant
	out := make([]chat.Message, 0, len(msgs)+2)
	out = append(out, msgs...)
	return append(out, answer, chat.Message{Role: chat.RoleUser, Content: hint}), nil
}

// WithAnswer returns a copy of t that knows the student's answer to the
// messages it is given: the message shown under HintAsRevision, and the
// exact ids the policy sampled, which HintAsContinuation continues; the
// other placements ignore both. The copy shares the engine and the remote
// teacher.
func (t *Teacher) WithAnswer(answer chat.Message, ids []int32) *Teacher {
	c := *t
	c.answer, c.answerIDs = &answer, ids
	return &c
}

// messages is the teacher's conversation for msgs and hint.
func (t *Teacher) messages(msgs []chat.Message, hint string) ([]chat.Message, error) {
	if t.answer == nil {
		return TeacherPromptAt(msgs, hint, t.Placement)
	}
	return TeacherPromptAfter(msgs, *t.answer, hint, t.Placement)
}
