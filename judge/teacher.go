package judge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
)

// HintHeader introduces the hint appended to the last user message, as the
// seed system did.
const HintHeader = "\n\n[user's hint / instruction]\n"

// Teacher computes OPD teacher logprobs: the same model, shown the hint, re-
// scores the response the policy actually sampled.
type Teacher struct {
	Engine engine.Engine
	// Adapter is engine.AdapterCurrent (the current policy, default) or
	// engine.AdapterBase (the frozen initial model, --teacher base).
	Adapter string
	Render  engine.RenderOptions
	// Placement is where the hint goes (HintInUser when empty).
	Placement HintPlacement
	// Remote, when set, writes Write's answers with another model
	// (remote.go); this teacher still scores them, and writes when the
	// remote one fails.
	Remote *RemoteTeacher
	// Sampling is how Write samples (zero: greedy); best-of-N writes
	// (select.go) sample at a temperature.
	Sampling engine.Sampling

	// answer and answerIDs are the student's answer the hint is about,
	// shown under HintAsRevision and continued under HintAsContinuation
	// (WithAnswer, revise.go).
	answer    *chat.Message
	answerIDs []int32
}

// HintPlacement says where the teacher's prompt carries the hint.
type HintPlacement string

const (
	// HintInUser appends the hint to the last user message under
	// HintHeader, as the seed system did.
	HintInUser HintPlacement = "user"
	// HintInSystemAndUser does that and also appends the hint to the
	// system message (making one when the conversation has none, which
	// replaces a template's default system prompt). SmolLM2-135M follows
	// some instructions only there (BENCHMARKS.md, "Learning a person's
	// preferences, round 2").
	HintInSystemAndUser HintPlacement = "system+user"
	// HintInSystem appends the hint to the system message only (making
	// one when the conversation has none), leaving the user's question as
	// it was asked: a teacher shown "What is friendship?" followed by
	// "Réponds en français" in the user's own message often answers the
	// request ("Bien sûr, je peux vous répondre en français.") instead of
	// the question (BENCHMARKS.md, "Answers that do not answer").
	HintInSystem HintPlacement = "system"
	// HintAsRevision shows the teacher the conversation as it happened:
	// the student's answer as the assistant turn, then the hint as the
	// user's next message (revise.go).
	HintAsRevision HintPlacement = "revise"
	// HintAsContinuation appends the hint to the last user message, as
	// HintInUser, and has the teacher continue the student's own answer
	// from before its end-of-turn token (continue.go).
	HintAsContinuation HintPlacement = "continue"
	// HintMixed writes a turn's answers (best of --teacher-samples) under
	// two placements in turn, HintInUser then HintInSystem (Writing), and
	// lets the selector pick among them; each answer is read (the
	// teacher's scores, the hint gain) under the placement it was written
	// under, and anything else under HintInUser. Neither placement is
	// best for every feedback: the 1.5B teacher's greedy answers satisfy
	// the sign-off persona 3 of 20 times with the hint in the user's
	// message and 0 in the system message, the french persona 18 and 20,
	// and under the user placement half of its french answers only reply
	// to the request ("Bien sûr, je peux vous répondre en français.").
	// The loop cannot tell a standing instruction from a request about one
	// answer; the selector reads which answer does what the feedback asks.
	HintMixed HintPlacement = "mixed"
	// HintBeforeQuestion puts the hint at the start of the last user
	// message, before the question (HintBeforeSep between them), so the
	// question is the last thing the teacher reads: a request appended
	// after the question is what the teacher answers under HintInUser
	// ("Bien sûr, je peux vous répondre en français."), while the system
	// message makes the 1.5B teacher drop a sign-off (HintMixed's note).
	// Measured, it fixes the first and not the second: the french
	// persona's teacher answers are liked about 9 times in 10, and the
	// sign-off is lost as under HintInSystem (BENCHMARKS.md, "The hint
	// before the question").
	HintBeforeQuestion HintPlacement = "user-first"
)

// HintBeforeSep separates the hint from the question under
// HintBeforeQuestion.
const HintBeforeSep = "\n\n"

// Writing is the placement the i-th of a turn's answers is written under:
// p itself, except under HintMixed, where even answers are written under
// HintInUser and odd ones under HintInSystem.
func (p HintPlacement) Writing(i int) HintPlacement {
	if p != HintMixed {
		return p
	}
	if i%2 == 1 {
		return HintInSystem
	}
	return HintInUser
}

// ParseHintPlacement checks a --hint-placement value ("" is HintInUser).
func ParseHintPlacement(s string) (HintPlacement, error) {
	switch p := HintPlacement(s); p {
	case "", HintInUser:
		return HintInUser, nil
	case HintInSystem, HintInSystemAndUser, HintAsRevision, HintAsContinuation, HintMixed, HintBeforeQuestion:
		return p, nil
	}
	return "", fmt.Errorf("hint placement %q: want user, user-first, system, system+user, revise, continue or mixed", s)
}

// TeacherPromptAt is TeacherPrompt with the hint placed as p says.
func TeacherPromptAt(msgs []chat.Message, hint string, p HintPlacement) ([]chat.Message, error) {
	switch p {
	case HintAsRevision:
		return nil, errNoAnswer
	case HintAsContinuation:
		p = HintInUser // the continued answer is not a message
	case HintMixed:
		p = HintInUser // read under the user placement (Writing)
	}
	last := lastUser(msgs)
	if last < 0 {
		return nil, errNoQuestion
	}
	out := slices.Clone(msgs)
	if p == HintBeforeQuestion {
		out[last].Content = hint + HintBeforeSep + out[last].Content
		return out, nil
	}
	if p != HintInSystem { // the system placement leaves the question as asked
		out[last].Content += HintHeader + hint
	}
	if p != HintInSystemAndUser && p != HintInSystem {
		return out, nil
	}
	if out[0].Role == chat.RoleSystem {
		out[0].Content += "\n\n" + hint
		return out, nil
	}
	return append([]chat.Message{{Role: chat.RoleSystem, Content: hint}}, out...), nil
}

// errNoQuestion: a teacher prompt needs a user message to answer.
var errNoQuestion = errors.New("teacher prompt: no user message to append the hint to")

// lastUser is the index of the last user message (−1 when there is none).
func lastUser(msgs []chat.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == chat.RoleUser {
			return i
		}
	}
	return -1
}

// TeacherPrompt returns msgs with hint appended to the last user message.
func TeacherPrompt(msgs []chat.Message, hint string) ([]chat.Message, error) {
	return TeacherPromptAt(msgs, hint, HintInUser)
}

// Logprobs returns one teacher logprob per response id. The prompt is re-
// rendered and re-tokenised with the hint; the response ids are the exact ids
// the engine sampled, never re-tokenised text. promptText is the prompt the
// response was generated from (the turn's PromptText): when re-rendering the
// original messages does not reproduce it (the client chose template options
// such as enable_thinking that the turn does not record), the hint is spliced
// into promptText after the last user message's text instead, so the teacher
// sees exactly the student's prompt plus the hint. It also returns the policy
// version the teacher ran on.
func (t *Teacher) Logprobs(ctx context.Context, msgs []chat.Message, tools []chat.Tool, promptText string, responseIDs []int32, hint string) ([]float32, int64, error) {
	text, err := t.Prompt(msgs, tools, promptText, hint)
	if err != nil {
		return nil, 0, err
	}
	scored, err := t.Engine.Score(ctx, engine.ScoreRequest{
		PromptIDs:     t.Engine.Format().Encode(text),
		CompletionIDs: responseIDs,
		Adapter:       t.Adapter,
	})
	if err != nil {
		return nil, 0, fmt.Errorf("teacher score on adapter %q: %w", t.Adapter, err)
	}
	if len(scored.Logprobs) != len(responseIDs) {
		return nil, 0, fmt.Errorf("teacher score: %d logprobs for %d response tokens", len(scored.Logprobs), len(responseIDs))
	}
	return scored.Logprobs, scored.PolicyVersion, nil
}

// Prompt is the teacher's prompt text (see Logprobs).
func (t *Teacher) Prompt(msgs []chat.Message, tools []chat.Tool, promptText, hint string) (string, error) {
	tm, err := t.messages(msgs, hint)
	if err != nil {
		return "", err
	}
	opts := t.Render
	opts.AddGenerationPrompt = true
	f := t.Engine.Format()
	text, err := f.Render(tm, tools, opts)
	if err != nil {
		return "", fmt.Errorf("render teacher prompt: %w", err)
	}
	if promptText == "" || t.Placement == HintAsRevision {
		// A revision follows the conversation as rendered: there is no
		// one place in promptText to splice the hint into.
		return text, nil
	}
	if orig, err := f.Render(msgs, tools, opts); err == nil && orig == promptText {
		return text, nil
	}
	// The original prompt was rendered differently: splice the hint in
	// (into the last user message only, whatever the placement: before
	// its text under HintBeforeQuestion, else after it).
	last := ""
	if i := lastUser(msgs); i >= 0 {
		last = msgs[i].Content
	}
	if i := strings.LastIndex(promptText, last); last != "" && i >= 0 {
		if t.Placement == HintBeforeQuestion {
			return promptText[:i] + hint + HintBeforeSep + promptText[i:], nil
		}
		end := i + len(last)
		return promptText[:end] + HintHeader + hint + promptText[end:], nil
	}
	return text, nil
}

// Write has the teacher answer the prompt itself, with the hint in context
// (context distillation): greedy, at most maxTokens tokens, ending at the
// model's stop token (kept, so the student learns where the answer ends).
// It returns the response ids, the teacher's logprob of each, and the policy
// version it ran on. The student is then trained toward a response it
// would not have sampled — a sign-off or a language it never produces, which
// re-scoring its own response cannot teach.
func (t *Teacher) Write(ctx context.Context, msgs []chat.Message, tools []chat.Tool, promptText, hint string, maxTokens int) ([]int32, []float32, int64, error) {
	text, err := t.Prompt(msgs, tools, promptText, hint)
	if err != nil {
		return nil, nil, 0, err
	}
	if maxTokens < 1 {
		return nil, nil, 0, fmt.Errorf("teacher write: max tokens %d: want ≥ 1", maxTokens)
	}
	if t.Placement == HintAsContinuation {
		return t.writeContinuation(ctx, text, maxTokens)
	}
	if t.Remote != nil {
		if ids, lps, v, ok, err := t.writeVia(ctx, msgs, tools, promptText, hint, maxTokens); ok || err != nil {
			return ids, lps, v, err
		}
	}
	g, err := t.Engine.Generate(ctx, engine.GenerateRequest{PromptIDs: t.Engine.Format().Encode(text), MaxTokens: maxTokens,
		Adapter: t.Adapter, Sampling: t.Sampling}, func(engine.Token) error { return nil })
	if err != nil {
		return nil, nil, 0, fmt.Errorf("teacher write on adapter %q: %w", t.Adapter, err)
	}
	if len(g.Tokens) == 0 {
		return nil, nil, 0, fmt.Errorf("teacher write on adapter %q: empty response", t.Adapter)
	}
	ids := make([]int32, len(g.Tokens))
	lps := make([]float32, len(g.Tokens))
	for i, tok := range g.Tokens {
		ids[i], lps[i] = tok.ID, tok.Logprob
	}
	return ids, lps, g.PolicyVersion, nil
}
