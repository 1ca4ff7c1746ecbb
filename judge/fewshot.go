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
// better than any instruction a model this size follows. They do not fix
// the prior of the neutral label, which a fitted offset does
// (fewShotNeutralBias). Measured on the labelled corpus
// judge/testdata/next_messages.tsv (TestNextMessageCorpus, BENCHMARKS.md
// "A judge of next messages" and "Neutral follow-ups").
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
// the test corpus or a benchmark persona), mixing the labels so no label is
// favoured by recency. A third are neutral follow-ups in the forms people
// use (a bare question, one opened with "Okay." or "Interesting.", a new
// topic after a short acknowledgement), and two corrections say something
// was left out again: with five neutral demonstrations of one form the
// reader took 53 of 55 neutral questions for corrections, and a persona's
// 'You forgot to end with "Hope this helps!" again.' for thanks.
var fewShotDemos = []struct {
	Score int
	Reply string
}{
	{-1, "This is way too complicated, just tell me simply."},
	{0, "And what about cats?"},
	{1, "Thanks, that's very helpful!"},
	{0, "Okay. How long does it take?"},
	{-1, "No, that's not correct."},
	{0, "Good to know. Another one: who painted the Mona Lisa?"},
	{1, "Perfect, that's what I was looking for."},
	{-1, "Please don't use a list next time."},
	{0, "Can you tell me more about its history?"},
	{-1, "You forgot to add the summary at the end again."},
	{1, "Great explanation, thank you."},
	{0, "Who discovered it?"},
	{-1, "You forgot the part about prices."},
	{1, "It works now, thanks!"},
	{0, "Now, what should I cook tonight?"},
	{-1, "Can you write it in Portuguese?"},
	{0, "Interesting. Is it expensive?"},
	{1, "Nice, that's clear."},
	{-1, "I asked you to end with my name. You didn't."},
	{0, "Where do they live?"},
	{-1, "Shorter, please."},
}

// fewShotNeutralBias (nats) is added to log p(0) before the verdict is read:
// the model, shown the demonstrations, still puts too little mass on `0`
// for a reply that is a question, whatever its content (a content-free
// reply such as "N/A" gets log p(0) ≈ −2.9 against −1.0 for `1`). It is the
// one parameter fitted on the labelled corpus, on its training split only
// (judge/testdata/next_messages.tsv above "# held-out"), for the best mean
// of the three classes' recalls; the held-out split and the benchmark
// personas' messages are the check (TestNextMessageCorpus; BENCHMARKS.md,
// "Neutral follow-ups"). The fit is flat within ±0.2 of it; an offset on
// `-1` gained nothing and is not used.
const fewShotNeutralBias = 1.8

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
// prompt, the neutral label's log-probability raised by fewShotNeutralBias;
// a lead under the threshold over the runner-up is unclear (0).
func (j *Judge) fewShotVerdict(ctx context.Context, sc NextTokenScorer, next string) store.Vote {
	v := store.Vote{Kind: store.VoteEval, Source: "judge"}
	lp, err := j.nextLogprobs(ctx, sc, FewShotPrompt(next))
	if err != nil {
		v.Err = err.Error()
		return v
	}
	// lp is in verdictCandidates order: 1, 0, -1.
	raw0 := lp[1]
	lp[1] += fewShotNeutralBias
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
	v.Raw = fmt.Sprintf("few-shot verdict: log p(1)=%.3f log p(0)=%.3f (%+.1f neutral bias) log p(-1)=%.3f, lead %.3f (threshold %.3f)",
		lp[0], raw0, fewShotNeutralBias, lp[2], lead, j.cfg.Threshold)
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
