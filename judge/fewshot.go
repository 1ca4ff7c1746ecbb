package judge

import (
	"context"
	"fmt"
	"strings"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/store"
)

// Few-shot verdicts on a user's next message. Asked zero-shot whether the
// answer was good, SmolLM2-135M prefers `1` for thanks and complaints
// alike, calibrated or not, in every wording tried (BENCHMARKS.md, "Learning
// loop"). Shown a handful of labelled replies first, as earlier turns of
// the same chat, it does separate them: the demonstrations carry the task
// better than any instruction a model this size follows, and they fix the
// label prior too, so no calibration prompt is needed. Measured on the
// labelled corpus judge/testdata/next_messages.tsv (TestNextMessageCorpus,
// BENCHMARKS.md "A judge of next messages").
//
// The prompt holds the reply alone, not the task and the answer: the
// attitude is in the reply, and a fixed prefix (system message and
// demonstrations) is one the engine's prefix cache prefills once, so a
// verdict costs only the reply's few tokens.

// VerdictFewShot reads the verdict on a user's next message from one
// prefill of the few-shot prompt (needs a NextTokenScorer backend; other
// next states, and written feedback, are read as VerdictPrefill).
const VerdictFewShot VerdictMode = "fewshot"

const fewShotSystem = `You read a user's reply to an AI assistant's answer and say what it shows about the answer: \boxed{-1} if the user complains, corrects the answer or asks for it to be done differently; \boxed{1} if the user is satisfied or thanks the assistant; \boxed{0} if the user just asks something else.`

// fewShotDemos are the demonstrations, written for the prompt (none is in
// the test corpus or a benchmark persona), alternating the labels so no
// label is favoured by recency.
var fewShotDemos = []struct {
	Score int
	Reply string
}{
	{-1, "This is way too complicated, just tell me simply."},
	{1, "Thanks, that's very helpful!"},
	{0, "What about cats?"},
	{-1, "No, that's not correct."},
	{0, "How long does it take?"},
	{1, "Perfect, that's what I was looking for."},
	{-1, "Please don't use a list next time."},
	{1, "Great explanation, thank you."},
	{0, "Can you tell me more about its history?"},
	{-1, "You forgot the part about prices."},
	{0, "Who discovered it?"},
	{1, "It works now, thanks!"},
	{-1, "Can you write it in Portuguese?"},
	{1, "Nice, that's clear."},
	{0, "Is it expensive?"},
	{-1, "Shorter, please."},
}

// FewShotPrompt is the conversation a few-shot verdict reads for the user's
// next message next.
func FewShotPrompt(next string) []chat.Message {
	msgs := []chat.Message{{Role: chat.RoleSystem, Content: fewShotSystem}}
	for _, d := range fewShotDemos {
		msgs = append(msgs,
			chat.Message{Role: chat.RoleUser, Content: "Reply: " + d.Reply},
			chat.Message{Role: chat.RoleAssistant, Content: fmt.Sprintf(`\boxed{%d}`, d.Score)})
	}
	return append(msgs, chat.Message{Role: chat.RoleUser, Content: "Reply: " + clip(next, maxNextChars)})
}

// fewShotVerdict scores a turn by the likeliest label after the few-shot
// prompt; a lead under the threshold over the runner-up is unclear (0).
func (j *Judge) fewShotVerdict(ctx context.Context, sc NextTokenScorer, next string) store.Vote {
	v := store.Vote{Kind: store.VoteEval, Source: "judge"}
	lp, err := j.nextLogprobs(ctx, sc, FewShotPrompt(next))
	if err != nil {
		v.Err = err.Error()
		return v
	}
	// lp is in verdictCandidates order: 1, 0, -1.
	scores := [3]int{1, 0, -1}
	best, second := 0, 1
	if lp[1] > lp[0] {
		best, second = 1, 0
	}
	if lp[2] > lp[best] {
		best, second = 2, best
	} else if lp[2] > lp[second] {
		second = 2
	}
	lead := lp[best] - lp[second]
	if lead > j.cfg.Threshold {
		v.Score = scores[best]
	}
	v.Valid = true
	v.Raw = fmt.Sprintf("few-shot verdict: log p(1)=%.3f log p(0)=%.3f log p(-1)=%.3f, lead %.3f (threshold %.3f)",
		lp[0], lp[1], lp[2], lead, j.cfg.Threshold)
	return v
}

// nextUserText is the text of the user's next message when that is the
// next state ("" for a tool result or nothing).
func nextUserText(in Input) string {
	if in.NextKind == store.NextTool || len(in.Next) == 0 {
		return ""
	}
	m := in.Next[len(in.Next)-1]
	if m.Role != chat.RoleUser {
		return ""
	}
	return strings.TrimSpace(m.Content)
}
