package judge

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/store"
)

// Verdicts read from one prefill. A small model asked to reason and end with
// \boxed{} rarely gets there (SmolLM2-135M produced no valid box in 2,048
// tokens, three times in a row: a minute of CPU per turn for nothing). What
// it does have is a preference between the boxed values at the place the
// verdict goes: the judge prompt is rendered, the answer is begun with
// `\boxed{`, and the log-probabilities of the next token being `1`, `0` or
// `-` (of -1) are read from a single forward pass.
//
// Those raw preferences are biased: SmolLM2 as its own judge favours `1` for
// thanks and complaints alike, but by a smaller margin for complaints
// (REFERENCE.md §6). So the verdict is calibrated: the margin
// log p(1) − log p(-1) of the case is compared with a reference margin, either
// the same prompt with a content-free next state ("neutral", contextual
// calibration: it cancels what the task and the answer alone make the judge
// think) or a running mean of this judge's recent margins ("running").

// NextTokenScorer is a Backend that can read next-token log-probabilities
// after a begun answer from one prefill. The engine backend implements it;
// a plain OpenAI-compatible endpoint does not, and keeps sampled votes.
type NextTokenScorer interface {
	// NextLogprobs renders msgs with the generation prompt, begins the
	// answer with begun, and returns the log-probability of each
	// candidate's first token at the next position.
	NextLogprobs(ctx context.Context, msgs []chat.Message, begun string, candidates []string) ([]float64, error)
}

// VerdictMode says how the score is read.
type VerdictMode string

const (
	// VerdictPrefill reads the boxed value's probabilities from one prefill
	// (needs a NextTokenScorer backend; others fall back to votes).
	VerdictPrefill VerdictMode = "prefill"
	// VerdictVotes samples EvalVotes answers and takes the majority of their
	// last \boxed{} values (the seed system's way).
	VerdictVotes VerdictMode = "votes"
)

// Calibration says what a prefill verdict's margin is compared with.
type Calibration string

const (
	CalibrateNeutral Calibration = "neutral" // the same prompt with a content-free next state
	CalibrateRunning Calibration = "running" // the running mean of recent margins
	CalibrateNone    Calibration = "none"    // the raw margin against 0
)

// The begun answer and the candidates' first tokens: "-" stands for -1 (the
// minus is its own token in byte-level BPEs that split digits).
const verdictBegun = `\boxed{`

var verdictCandidates = []string{"1", "0", "-"}

const verdictSystem = `You are a strict reviewer of an AI assistant's work. You see the task the assistant was given, what it answered, and what happened next: the user's reply, the result of a tool it called, or feedback the user gave explicitly.

Judge the assistant's answer by what happened next:
- The next state shows the answer served the task (the user moves on, thanks it, builds on it; a tool call succeeded): score 1.
- The next state shows the answer failed (the user corrects it, complains, repeats or rephrases the request; a tool call failed): score -1.
- The next state says nothing either way: score 0.

Answer with the score only: \boxed{1}, \boxed{0} or \boxed{-1}.`

// VerdictPrompt is the conversation a prefill verdict reads.
func VerdictPrompt(in Input) []chat.Message {
	return []chat.Message{
		{Role: chat.RoleSystem, Content: verdictSystem},
		{Role: chat.RoleUser, Content: caseText(in) + "\nWas the assistant's answer good? Answer \\boxed{1}, \\boxed{0} or \\boxed{-1}."},
	}
}

// neutral is in with a content-free next state: the reference of the
// neutral calibration. Everything before "What happened next" is the same
// text, so an engine with a prefix cache prefills only the tail again.
func neutral(in Input) Input {
	in.Next, in.NextKind, in.FeedbackRating, in.FeedbackText = nil, "", 0, ""
	return in
}

// runningBaseline is the running mean of a judge's recent raw margins.
type runningBaseline struct {
	mu     sync.Mutex
	recent []float64 // ring of the last runningWindow margins
	next   int
}

const runningWindow = 32

// observe returns the mean of the margins seen before m (ok false when none
// was), then records m.
func (b *runningBaseline) observe(m float64) (mean float64, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.recent) > 0 {
		for _, x := range b.recent {
			mean += x
		}
		mean /= float64(len(b.recent))
		ok = true
	}
	if len(b.recent) < runningWindow {
		b.recent = append(b.recent, m)
	} else {
		b.recent[b.next] = m
		b.next = (b.next + 1) % runningWindow
	}
	return mean, ok
}

// prefillVerdict scores a turn from one prefill (two with the neutral
// reference) and returns the eval vote it amounts to.
func (j *Judge) prefillVerdict(ctx context.Context, sc NextTokenScorer, in Input) store.Vote {
	v := store.Vote{Kind: store.VoteEval, Source: "judge"}
	lp, err := j.nextLogprobs(ctx, sc, VerdictPrompt(in))
	if err != nil {
		v.Err = err.Error()
		return v
	}
	margin := lp[0] - lp[2]
	var ref float64
	var refText string
	switch j.cfg.Calibration {
	case CalibrateNeutral:
		rlp, err := j.nextLogprobs(ctx, sc, VerdictPrompt(neutral(in)))
		if err != nil {
			v.Err = "neutral reference: " + err.Error()
			return v
		}
		ref = rlp[0] - rlp[2]
		refText = fmt.Sprintf("neutral reference margin %.3f", ref)
	case CalibrateRunning:
		mean, ok := j.baseline.observe(margin)
		if !ok {
			// Nothing to compare with yet: the first verdict is unclear.
			mean = margin
		}
		ref = mean
		refText = fmt.Sprintf("running mean margin %.3f", ref)
	default:
		refText = "uncalibrated"
	}
	d := margin - ref
	switch {
	case d > j.cfg.Threshold:
		v.Score = 1
	case d < -j.cfg.Threshold:
		v.Score = -1
	}
	v.Valid = true
	v.Raw = fmt.Sprintf("prefill verdict: log p(1)=%.3f log p(0)=%.3f log p(-1)=%.3f, margin %.3f, %s, calibrated %+.3f (threshold %.3f)",
		lp[0], lp[1], lp[2], margin, refText, d, j.cfg.Threshold)
	return v
}

// nextLogprobs asks the scorer with the judge's timeout and retries.
func (j *Judge) nextLogprobs(ctx context.Context, sc NextTokenScorer, msgs []chat.Message) ([]float64, error) {
	var errs []string
	backoff := j.cfg.Backoff
	for attempt := 0; attempt <= j.cfg.Retries; attempt++ {
		if attempt > 0 {
			if err := sleep(ctx, backoff); err != nil {
				break
			}
			backoff = min(2*backoff, j.cfg.MaxBackoff)
		}
		callCtx, cancel := context.WithTimeout(ctx, j.cfg.CallTimeout)
		lp, err := sc.NextLogprobs(callCtx, msgs, verdictBegun, verdictCandidates)
		cancel()
		if err == nil && len(lp) != len(verdictCandidates) {
			err = fmt.Errorf("%d logprobs for %d candidates", len(lp), len(verdictCandidates))
		}
		if err == nil {
			for _, x := range lp {
				if math.IsNaN(x) {
					err = fmt.Errorf("NaN logprob")
				}
			}
		}
		if err == nil {
			return lp, nil
		}
		errs = append(errs, fmt.Sprintf("attempt %d: %v", attempt+1, err))
		if ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("prefill verdict: %s", strings.Join(errs, "; "))
}
