// Package judge is the process reward model: it reads a turn's task, the
// assistant's answer and what happened next, and votes whether the answer was
// good (\boxed{1}), bad (\boxed{-1}) or unclear (\boxed{0}). For on-policy
// distillation it also asks, in hindsight, whether the next state reveals a
// better answer and, if so, for a short hint. Votes run concurrently on a
// Backend: the served model's base weights (EngineBackend) or any
// OpenAI-compatible endpoint (HTTPBackend). A backend that is down, slow or
// answers garbage costs bounded retries and then a 0 score with the reason
// kept; the judge never returns an error for it.
package judge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/store"
)

// Backend answers one judge prompt.
type Backend interface {
	// Name identifies the backend in judgments (engine:base, http:<model>).
	Name() string
	Complete(ctx context.Context, msgs []chat.Message, p Params) (string, error)
}

// Params are the sampling settings of one vote.
type Params struct {
	Temperature float64
	MaxTokens   int
}

// FeedbackMode says how explicit /v1/feedback ratings count.
type FeedbackMode string

const (
	// FeedbackDecides: a rating is the score; no eval votes are asked for.
	FeedbackDecides FeedbackMode = "decide"
	// FeedbackVotes: a rating adds Config.FeedbackVotes votes to the judge's.
	FeedbackVotes FeedbackMode = "vote"
)

// Config tunes the judge. Zero fields take the defaults.
type Config struct {
	EvalVotes   int     // score votes per turn (m); default 3
	HintVotes   int     // hindsight votes per turn; default 1
	Temperature float64 // default 0.6
	MaxTokens   int     // per vote; default 2048
	// CallTimeout bounds one backend call; Retries more attempts follow a
	// failed one, after Backoff, doubling up to MaxBackoff.
	CallTimeout time.Duration // default 2m
	Retries     int           // default 2
	Backoff     time.Duration // default 500ms
	MaxBackoff  time.Duration // default 10s
	Feedback    FeedbackMode  // default FeedbackDecides
	// FeedbackWeight is how many votes a rating adds in FeedbackVotes mode;
	// default EvalVotes, so a rating alone outweighs any single judge vote.
	FeedbackWeight int
	// Concurrency bounds the backend calls in flight for one turn; default
	// EvalVotes+HintVotes.
	Concurrency int
}

func (c Config) withDefaults() Config {
	if c.EvalVotes <= 0 {
		c.EvalVotes = 3
	}
	if c.HintVotes <= 0 {
		c.HintVotes = 1
	}
	if c.Temperature == 0 {
		c.Temperature = 0.6
	}
	if c.MaxTokens <= 0 {
		c.MaxTokens = 2048
	}
	if c.CallTimeout <= 0 {
		c.CallTimeout = 2 * time.Minute
	}
	if c.Retries < 0 {
		c.Retries = 0
	} else if c.Retries == 0 {
		c.Retries = 2
	}
	if c.Backoff <= 0 {
		c.Backoff = 500 * time.Millisecond
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = 10 * time.Second
	}
	if c.Feedback == "" {
		c.Feedback = FeedbackDecides
	}
	if c.FeedbackWeight <= 0 {
		c.FeedbackWeight = c.EvalVotes
	}
	if c.Concurrency <= 0 {
		c.Concurrency = c.EvalVotes + c.HintVotes
	}
	return c
}

// NoRetries is the Config.Retries value that disables retries (0 means the
// default).
const NoRetries = -1

// Judge votes on turns.
type Judge struct {
	backend Backend
	cfg     Config
	log     *slog.Logger
}

// New returns a judge on backend.
func New(backend Backend, cfg Config, log *slog.Logger) *Judge {
	if log == nil {
		log = slog.Default()
	}
	return &Judge{backend: backend, cfg: cfg.withDefaults(), log: log}
}

// Config returns the effective configuration.
func (j *Judge) Config() Config { return j.cfg }

// Request says what to ask the judge for.
type Request struct {
	Score bool // eval votes → Judgment.Score
	Hint  bool // hindsight votes → Judgment.Hint
}

// Judge votes on one turn. It returns an error only when ctx ends; a failing
// backend yields score 0 and no hint, with the reason in the judgment.
func (j *Judge) Judge(ctx context.Context, in Input, want Request) (store.Judgment, error) {
	out := store.Judgment{TurnID: in.TurnID, SessionID: in.SessionID, Judge: j.backend.Name(), CreatedAt: time.Now()}
	rating := in.FeedbackRating
	if rating > 1 {
		rating = 1
	} else if rating < -1 {
		rating = -1
	}

	evalVotes := 0
	if want.Score && !(rating != 0 && j.cfg.Feedback == FeedbackDecides) {
		evalVotes = j.cfg.EvalVotes
	}
	hintVotes := 0
	if want.Hint {
		hintVotes = j.cfg.HintVotes
	}

	votes := make([]store.Vote, evalVotes+hintVotes)
	sem := make(chan struct{}, j.cfg.Concurrency)
	var wg sync.WaitGroup
	for i := range votes {
		kind, prompt := store.VoteEval, EvalPrompt(in)
		if i >= evalVotes {
			kind, prompt = store.VoteHint, HintPrompt(in)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				votes[i] = store.Vote{Kind: kind, Source: "judge", Err: ctx.Err().Error()}
				return
			}
			defer func() { <-sem }()
			votes[i] = j.vote(ctx, kind, prompt)
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return store.Judgment{}, fmt.Errorf("judge turn %s: %w", in.TurnID, err)
	}

	// Score: the valid eval votes plus the explicit rating.
	if want.Score {
		out.Score, out.Reason, out.Votes = j.Rescore(votes, rating, in.FeedbackText)
	} else {
		out.Reason, out.Votes = "score not asked for", votes
	}

	// Hint: the longest hint of the positive hindsight votes.
	for _, v := range votes[evalVotes:] {
		if v.Valid && v.Score == 1 && len(v.Hint) > MinHintLen && len(v.Hint) > len(out.Hint) {
			out.Hint = v.Hint
		}
	}
	out.HintAccepted = out.Hint != ""
	if want.Hint && !out.HintAccepted {
		failed, lastErr := 0, ""
		for _, v := range votes[evalVotes:] {
			if v.Raw == "" && v.Err != "" { // no answer at all, not a garbage one
				failed++
				lastErr = v.Err
			}
		}
		if failed == hintVotes && hintVotes > 0 {
			out.Reason += "; hint judge unavailable: " + lastErr
		}
	}
	return out, nil
}

// Rescore computes a score from a turn's votes and its explicit feedback
// rating (0 = none): in FeedbackDecides mode a rating is the score; in
// FeedbackVotes mode it adds FeedbackWeight votes to the valid judge eval
// votes, and the majority decides. Feedback votes already among votes are
// replaced, so a judgment can be rescored when feedback arrives after it. It
// returns the score, how it came about, and the votes with the feedback vote
// first.
func (j *Judge) Rescore(votes []store.Vote, rating int, feedbackText string) (int, string, []store.Vote) {
	rating = max(-1, min(1, rating))
	var values []int
	var lastErr string
	var judged []store.Vote
	for _, v := range votes {
		if v.Source == "feedback" {
			continue
		}
		judged = append(judged, v)
		if v.Kind != store.VoteEval {
			continue
		}
		switch {
		case v.Valid:
			values = append(values, v.Score)
		case v.Raw == "" && v.Err != "":
			lastErr = "judge unavailable: " + v.Err // no answer at all
		case v.Err != "":
			lastErr = "no valid vote: " + v.Err // answers without a box
		}
	}
	var out []store.Vote
	if rating != 0 {
		weight := j.cfg.FeedbackWeight
		if j.cfg.Feedback == FeedbackDecides {
			weight = 1
		}
		for range weight {
			values = append(values, rating)
		}
		out = append(out, store.Vote{Kind: store.VoteEval, Source: "feedback", Score: rating, Valid: true,
			Raw: strings.TrimSpace(fmt.Sprintf("explicit feedback %+d (weight %d) %s", rating, weight, feedbackText))})
	}
	out = append(out, judged...)
	switch {
	case rating != 0 && j.cfg.Feedback == FeedbackDecides:
		return rating, "explicit feedback decides", out
	case len(values) == 0 && lastErr != "":
		return 0, lastErr, out
	case len(values) == 0:
		return 0, "no valid vote", out
	}
	score, reason := Majority(values)
	if rating != 0 {
		reason += " with explicit feedback"
	}
	return score, reason, out
}

// vote asks the backend once, with bounded retries, and parses the answer.
func (j *Judge) vote(ctx context.Context, kind string, prompt []chat.Message) store.Vote {
	v := store.Vote{Kind: kind, Source: "judge"}
	p := Params{Temperature: j.cfg.Temperature, MaxTokens: j.cfg.MaxTokens}
	backoff := j.cfg.Backoff
	var errs []string
	for attempt := 0; attempt <= j.cfg.Retries; attempt++ {
		if attempt > 0 {
			t := time.NewTimer(backoff)
			select {
			case <-ctx.Done():
				t.Stop()
				v.Err = strings.Join(append(errs, ctx.Err().Error()), "; ")
				return v
			case <-t.C:
			}
			backoff = min(2*backoff, j.cfg.MaxBackoff)
		}
		callCtx, cancel := context.WithTimeout(ctx, j.cfg.CallTimeout)
		raw, err := j.backend.Complete(callCtx, prompt, p)
		timedOut := errors.Is(callCtx.Err(), context.DeadlineExceeded)
		cancel()
		if err != nil {
			if timedOut {
				err = fmt.Errorf("timed out after %s: %w", j.cfg.CallTimeout, err)
			}
			errs = append(errs, fmt.Sprintf("attempt %d: %v", attempt+1, err))
			if ctx.Err() != nil {
				break
			}
			continue
		}
		v.Raw = raw
		v.Score, v.Valid = ParseBoxed(raw)
		if kind == store.VoteHint {
			v.Hint = ParseHint(raw)
		}
		if v.Valid {
			v.Err = ""
			return v
		}
		// A garbage answer is retried too: at temperature 0.6 the next one
		// may well be parseable.
		errs = append(errs, fmt.Sprintf("attempt %d: no valid \\boxed{} in answer", attempt+1))
	}
	v.Err = strings.Join(errs, "; ")
	j.log.Warn("judge vote failed", "backend", j.backend.Name(), "kind", kind, "err", v.Err)
	return v
}
