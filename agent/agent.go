// Package agent trains and evaluates agents that act in environments
// (package env): the model speaks its own tool-call format through an
// engine.Engine, each of its messages is an action, each observation goes
// back into its context, and the environment's evaluation is the outcome.
//
// Training follows the seed's general-agent track: n episodes per task (8 by
// default), one training sample per agent step holding exactly what the
// model saw and sampled (the prompt ids of that step, its response ids and
// the engine's behaviour logprobs), the outcome reward (plus, optionally,
// coef · the mean of per-step PRM scores) normalised over the episodes'
// steps with the same (task, step index), and the same trainer, store,
// versions and staleness rules as conversations: every step is a main turn
// of an episode's session, recorded when it is generated; when the whole
// group of n episodes is evaluated its turns become judged (the
// environment's verdict is the judgment) and ready (the advantage is the
// sample's reward), and rl.Scheduler trains them like any other sample.
//
// Crash safety: a step is durable before the environment sees the action.
// A trainer that restarts drops (with the reason recorded) the turns of
// episodes and groups it cannot finish — the environment's state is gone —
// and samples are marked trained only together with the version that
// trained them, so nothing recorded is lost and nothing is trained twice.
// An environment that fails (a killed server, a reaped episode) fails only
// its episode: its turns are dropped with the reason and the episode is run
// again, up to Config.Attempts times.
package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/env"
	"github.com/clawrl/clawrl/store"
)

// Config tunes rollouts. Zero fields take the defaults.
type Config struct {
	Samples     int // episodes per task (the group's n); default 8
	MaxSteps    int // agent messages per episode at most; default 8 (the environment may end sooner)
	MaxTokens   int // new tokens per step; default 256
	Concurrency int // episodes in flight at once; default 32
	Attempts    int // tries per episode when the environment fails; default 3
	// Sampling of every step; temperature 1 by default. A non-nil Seed is
	// the base of per-episode seeds.
	Sampling engine.Sampling
	// Adapter the policy runs on (engine.AdapterCurrent by default).
	Adapter string
	// PRMCoef weighs per-step PRM scores into the outcome:
	// reward = outcome + PRMCoef · mean step score (needs a StepScorer).
	PRMCoef float64
	// DropUniform drops (with the reason) the steps of a (task, step) whose
	// advantages are all 0 instead of training on them.
	DropUniform bool
	// AdvantageNorm is NormStd (default) or NormMean.
	AdvantageNorm string
	// Run names this run in session keys ("agent/<Run>/<task>/r<round>-<nonce>/s<sample>/a<attempt>").
	Run string
}

func (c Config) withDefaults() Config {
	if c.Samples <= 0 {
		c.Samples = 8
	}
	if c.MaxSteps <= 0 {
		c.MaxSteps = 8
	}
	if c.MaxTokens <= 0 {
		c.MaxTokens = 256
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 32
	}
	if c.Attempts <= 0 {
		c.Attempts = 3
	}
	if c.Sampling.Temperature == 0 && c.Sampling.TopP == 0 && c.Sampling.TopK == 0 {
		c.Sampling.Temperature = 1
	}
	if c.Run == "" {
		c.Run = "run"
	}
	if c.AdvantageNorm == "" {
		c.AdvantageNorm = NormStd
	}
	return c
}

// StepScorer is a process reward model: it scores one step (the context,
// the model's message and what it observed) in [−1, 1].
type StepScorer interface {
	ScoreStep(ctx context.Context, context []chat.Message, action chat.Message, observation []chat.Message) (float64, error)
}

// Step is one agent step: what the model saw and did, and what followed.
type Step struct {
	TurnID            string // the store's turn (empty when not recording)
	Messages          []chat.Message
	PromptText        string
	PromptIDs         []int32
	ResponseIDs       []int32
	ResponseText      string
	BehaviourLogprobs []float32
	PolicyVersion     int64
	FinishReason      string
	Action            chat.Message
	Observation       env.Observation
	PRMScore          float64
}

// Episode is a finished episode.
type Episode struct {
	Task       env.Task
	SessionID  string
	Steps      []Step
	Evaluation env.Evaluation
	// Reward is the outcome plus the PRM term.
	Reward float64
	// Truncated: the episode hit MaxSteps or the context window before the
	// environment said done.
	Truncated bool
	Elapsed   time.Duration
}

// Runner runs episodes.
type Runner struct {
	eng   engine.Engine
	env   env.Env
	store store.LearningStore // nil: nothing recorded (evaluation)
	prm   StepScorer
	cfg   Config
	log   *slog.Logger
	stats *Stats
	slots chan struct{}
	nonce string // tells this Runner's session keys from an earlier one's
}

// Options are what a Runner joins.
type Options struct {
	Engine engine.Engine
	Env    env.Env
	Store  store.LearningStore // nil for evaluation
	PRM    StepScorer          // nil: no process reward
	Config Config
	Log    *slog.Logger
}

// New checks the options and returns a runner.
func New(o Options) (*Runner, error) {
	if o.Engine == nil || o.Env == nil {
		return nil, errors.New("agent: an engine and an environment are needed")
	}
	cfg := o.Config.withDefaults()
	if cfg.AdvantageNorm != NormStd && cfg.AdvantageNorm != NormMean {
		return nil, fmt.Errorf("agent: advantage normalisation %q: want %s or %s", cfg.AdvantageNorm, NormStd, NormMean)
	}
	if cfg.PRMCoef != 0 && o.PRM == nil {
		return nil, errors.New("agent: a PRM coefficient without a step scorer")
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	return &Runner{eng: o.Engine, env: o.Env, store: o.Store, prm: o.PRM, cfg: cfg, log: o.Log,
		stats: newStats(), slots: make(chan struct{}, cfg.Concurrency), nonce: newID("")[:8]}, nil
}

// Stats are the runner's progress counters.
func (r *Runner) Stats() *Stats { return r.stats }

// Config is the runner's configuration with defaults applied.
func (r *Runner) Config() Config { return r.cfg }

// envError marks a failure of the environment (not of the model or the
// store): the episode is worth running again.
type envError struct{ err error }

func (e envError) Error() string { return "environment: " + e.err.Error() }
func (e envError) Unwrap() error { return e.err }

func newID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// RunEpisode runs one episode of task. With a store, every step is a main
// turn of a new session keyed key, inserted as soon as it is generated and
// observed once the environment answers.
func (r *Runner) RunEpisode(ctx context.Context, task env.Task, key string, seed *int64) (Episode, error) {
	select {
	case r.slots <- struct{}{}:
	case <-ctx.Done():
		return Episode{}, ctx.Err()
	}
	defer func() { <-r.slots }()
	r.stats.started()
	ep, err := r.runEpisode(ctx, task, key, seed)
	r.stats.finished(ep, err)
	return ep, err
}

func (r *Runner) runEpisode(ctx context.Context, task env.Task, key string, seed *int64) (Episode, error) {
	start := time.Now()
	ep := Episode{Task: task}
	c, err := r.env.Create(ctx, task)
	if err != nil {
		return ep, envError{fmt.Errorf("create episode of task %q: %w", task.ID, err)}
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if err := r.env.Close(cctx, c.EpisodeID); err != nil && !errors.Is(err, env.ErrNotFound) {
			r.log.Warn("close episode", "episode", c.EpisodeID, "err", err)
		}
	}()
	hb, stopHB := context.WithCancel(ctx)
	defer stopHB()
	go env.KeepAlive(hb, r.env, c.EpisodeID, max(c.Lease/3, time.Second))

	if r.store != nil {
		sess := store.Session{Key: key, KeySource: "agent"}
		if err := r.store.CreateSession(ctx, &sess); err != nil {
			return ep, fmt.Errorf("record episode of task %q: %w", task.ID, err)
		}
		ep.SessionID = sess.ID
	}
	msgs := append([]chat.Message(nil), c.Observation.Messages...)
	tools := c.Observation.Tools
	format := WithTools(r.eng.Format())
	maxSteps := r.cfg.MaxSteps
	if task.MaxSteps > 0 {
		maxSteps = min(maxSteps, task.MaxSteps)
	}
	done := false
	for k := 0; k < maxSteps && !done; k++ {
		prompt, err := format.Render(msgs, tools, engine.RenderOptions{AddGenerationPrompt: true})
		if err != nil {
			return ep, fmt.Errorf("task %q step %d: render prompt: %w", task.ID, k, err)
		}
		ids := format.Encode(prompt)
		if cl := r.eng.Info().ContextLength; cl > 0 && len(ids)+r.cfg.MaxTokens > cl {
			ep.Truncated = true
			break
		}
		req := engine.GenerateRequest{PromptIDs: ids, MaxTokens: r.cfg.MaxTokens, Sampling: r.cfg.Sampling, Adapter: r.cfg.Adapter}
		if seed != nil {
			s := *seed*1000 + int64(k)
			req.Sampling.Seed = &s
		}
		gen, err := r.eng.Generate(ctx, req, func(engine.Token) error { return nil })
		if err != nil {
			return ep, fmt.Errorf("task %q step %d: generate: %w", task.ID, k, err)
		}
		st := Step{Messages: append([]chat.Message(nil), msgs...), PromptText: prompt, PromptIDs: ids,
			PolicyVersion: gen.PolicyVersion, FinishReason: gen.FinishReason}
		for _, t := range gen.Tokens {
			st.ResponseIDs = append(st.ResponseIDs, t.ID)
			st.BehaviourLogprobs = append(st.BehaviourLogprobs, t.Logprob)
		}
		st.ResponseText = format.Decode(st.ResponseIDs)
		parser := format.NewParser(tools)
		parser.Add(st.ResponseText)
		_, st.Action = parser.Finish()
		st.Action.Role = chat.RoleAssistant
		if r.store != nil && len(st.ResponseIDs) > 0 {
			if st.TurnID, err = r.recordStep(ctx, ep.SessionID, tools, st); err != nil {
				return ep, err
			}
		}
		obs, err := r.env.Step(ctx, c.EpisodeID, env.Action{Message: st.Action})
		if err != nil {
			ep.Steps = append(ep.Steps, st)
			return ep, envError{fmt.Errorf("task %q step %d: %w", task.ID, k, err)}
		}
		st.Observation = obs
		if r.prm != nil {
			if st.PRMScore, err = r.prm.ScoreStep(ctx, st.Messages, st.Action, obs.Messages); err != nil {
				r.log.Warn("PRM step score failed; counting 0", "task", task.ID, "step", k, "err", err)
				st.PRMScore = 0
			}
		}
		if st.TurnID != "" {
			next := obs.Messages
			if len(next) == 0 {
				next = []chat.Message{{Role: chat.RoleTool, Content: obs.Info}}
			}
			if err := r.store.ObserveTurn(ctx, st.TurnID, next, store.NextTool, time.Now()); err != nil {
				ep.Steps = append(ep.Steps, st) // so the caller drops it
				return ep, fmt.Errorf("record observation of task %q step %d: %w", task.ID, k, err)
			}
		}
		ep.Steps = append(ep.Steps, st)
		msgs = append(msgs, st.Action)
		msgs = append(msgs, obs.Messages...)
		done = obs.Done
	}
	if !done {
		ep.Truncated = true
	}
	ev, err := r.env.Evaluate(ctx, c.EpisodeID)
	if err != nil {
		return ep, envError{fmt.Errorf("evaluate task %q: %w", task.ID, err)}
	}
	ep.Evaluation = ev
	ep.Reward = ev.Reward
	if r.prm != nil && r.cfg.PRMCoef != 0 && len(ep.Steps) > 0 {
		var sum float64
		for _, s := range ep.Steps {
			sum += s.PRMScore
		}
		ep.Reward += r.cfg.PRMCoef * sum / float64(len(ep.Steps))
	}
	ep.Elapsed = time.Since(start)
	return ep, nil
}

// recordStep inserts the step's turn (state generated).
func (r *Runner) recordStep(ctx context.Context, sessionID string, tools []chat.Tool, st Step) (string, error) {
	t := store.Turn{ID: newID("agent-"), SessionID: sessionID, Type: store.Main, CreatedAt: time.Now(),
		Model: r.eng.Info().ID, Messages: st.Messages, Tools: tools, PromptText: st.PromptText, PromptIDs: st.PromptIDs,
		Response: st.Action, ResponseText: st.ResponseText, ResponseIDs: st.ResponseIDs, BehaviourLogprobs: st.BehaviourLogprobs,
		PolicyVersion: st.PolicyVersion, Engine: r.eng.Info().Engine, FinishReason: st.FinishReason,
		PromptTokens: len(st.PromptIDs), CompletionTokens: len(st.ResponseIDs), MaxTokens: r.cfg.MaxTokens}
	if err := r.store.InsertTurn(ctx, &t); err != nil {
		return "", fmt.Errorf("record agent step: %w", err)
	}
	return t.ID, nil
}
