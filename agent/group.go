package agent

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/clawrl/clawrl/env"
	"github.com/clawrl/clawrl/rl"
	"github.com/clawrl/clawrl/store"
)

// Judge names recorded on agent judgments: the environment is the judge.
const judgePrefix = "env:"

// Drop reasons of agent turns.
const (
	ReasonEnvFailed       = "agent: the environment failed during the episode"
	ReasonInterrupted     = "agent: episode interrupted (the trainer restarted); its environment state is gone"
	ReasonGroupIncomplete = "agent: the task's group of episodes did not finish"
	ReasonUniform         = "agent: zero advantage (every episode of the task scored the same at this step)"
)

// Group is the n episodes of one task.
type Group struct {
	Task     env.Task
	Episodes []Episode
	Failed   int // episodes the environment failed (run again)
}

// RunGroup runs cfg.Samples episodes of task in parallel (each retried up
// to cfg.Attempts times when its environment fails) and, with a store,
// records the group: each step's turn becomes judged with the episode's
// verdict and ready with its advantage. round tells groups of the same
// task apart in session keys.
func (r *Runner) RunGroup(ctx context.Context, task env.Task, round int) (Group, error) {
	n := r.cfg.Samples
	g := Group{Task: task, Episodes: make([]Episode, n)}
	errs := make([]error, n)
	var failed sync.Mutex
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for attempt := 1; ; attempt++ {
				// The process's nonce keeps a resumed run (which counts rounds
				// from 0 again) off the sessions of the run it resumes.
				key := fmt.Sprintf("agent/%s/%s/r%d-%s/s%d/a%d", r.cfg.Run, task.ID, round, r.nonce, i, attempt)
				var seed *int64
				if s := r.cfg.Sampling.Seed; s != nil {
					v := *s + int64(round)*1_000_003 + int64(i)*7919 + int64(attempt)
					seed = &v
				}
				ep, err := r.RunEpisode(ctx, task, key, seed)
				if err == nil {
					g.Episodes[i] = ep
					return
				}
				r.dropSteps(ctx, ep, ReasonEnvFailed+": "+err.Error())
				var ee envError
				if !errors.As(err, &ee) || attempt >= r.cfg.Attempts || ctx.Err() != nil {
					errs[i] = err
					return
				}
				failed.Lock()
				g.Failed++
				failed.Unlock()
				r.log.Warn("episode failed; running it again", "task", task.ID, "sample", i, "attempt", attempt, "err", err)
				select {
				case <-ctx.Done():
				case <-time.After(time.Duration(attempt) * 500 * time.Millisecond):
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, ep := range g.Episodes {
			r.dropSteps(ctx, ep, ReasonGroupIncomplete+": "+err.Error())
		}
		return g, fmt.Errorf("task %q: %w", task.ID, err)
	}
	if r.store != nil {
		// A finished group is recorded whole even when the run is stopping
		// (a handful of quick writes).
		if err := r.recordGroup(context.WithoutCancel(ctx), g); err != nil {
			return g, err
		}
	}
	r.stats.groupDone()
	return g, nil
}

// Advantage normalisations (Config.AdvantageNorm).
const (
	// NormStd is GRPO's (r − mean)/(std + ε) over the (task, step).
	NormStd = "std"
	// NormMean only centres: r − mean (Dr. GRPO's choice). Dividing by the
	// std scales a group's small reward gaps up to the size of a success:
	// in a group where nothing succeeds, partial credit (one check of two)
	// gets the same advantage as a solved task elsewhere.
	NormMean = "mean"
)

// Advantages returns, per episode and step, the reward normalised over the
// steps with the same index in the group's episodes ((task, step)
// normalisation, GRPO's (r − mean)/(std + ε) with rl.GroupNormalize).
func Advantages(g Group) ([][]float64, error) { return AdvantagesNorm(g, NormStd) }

// AdvantagesNorm is Advantages with the normalisation norm (NormStd or
// NormMean).
func AdvantagesNorm(g Group, norm string) ([][]float64, error) {
	var rewards []float64
	var groups []int
	for _, ep := range g.Episodes {
		for k := range ep.Steps {
			rewards = append(rewards, ep.Reward)
			groups = append(groups, k+1)
		}
	}
	var out1 []float64
	var err error
	switch norm {
	case NormStd, "":
		out1, err = rl.GroupNormalize(rewards, groups)
	case NormMean:
		out1, err = rl.GroupCentre(rewards, groups)
	default:
		err = fmt.Errorf("advantage normalisation %q: want %s or %s", norm, NormStd, NormMean)
	}
	if err != nil {
		return nil, err
	}
	out := make([][]float64, len(g.Episodes))
	i := 0
	for e, ep := range g.Episodes {
		out[e] = out1[i : i+len(ep.Steps)]
		i += len(ep.Steps)
	}
	return out, nil
}

// recordGroup moves every step turn of the group observed → judged → ready.
func (r *Runner) recordGroup(ctx context.Context, g Group) error {
	adv, err := AdvantagesNorm(g, r.cfg.AdvantageNorm)
	if err != nil {
		return fmt.Errorf("task %q: advantages: %w", g.Task.ID, err)
	}
	for e, ep := range g.Episodes {
		score := 0
		switch {
		case ep.Reward > 0:
			score = 1
		case ep.Reward < 0:
			score = -1
		}
		for k, st := range ep.Steps {
			if st.TurnID == "" {
				continue
			}
			a := adv[e][k]
			reason := fmt.Sprintf("environment %s: episode reward %+.3f (success %v), advantage %+.3f at step %d over %d episodes",
				g.Task.Env, ep.Reward, ep.Evaluation.Success, a, k, len(g.Episodes))
			j := store.Judgment{TurnID: st.TurnID, SessionID: ep.SessionID, Score: score, Judge: judgePrefix + g.Task.Env,
				Reason: reason, Keep: true, Why: "agent step: " + reason, CreatedAt: time.Now(),
				Votes: []store.Vote{{Kind: "env", Source: "environment", Score: score, Valid: true, Raw: evaluationText(ep)}}}
			if err := r.store.RecordJudgment(ctx, j); err != nil {
				return fmt.Errorf("record verdict of task %q step %d: %w", g.Task.ID, k, err)
			}
			if r.cfg.DropUniform && math.Abs(a) < 1e-9 {
				if err := r.store.DropTurn(ctx, st.TurnID, ReasonUniform); err != nil {
					return fmt.Errorf("drop uniform step of task %q: %w", g.Task.ID, err)
				}
				continue
			}
			s := store.Sample{TurnID: st.TurnID, SessionID: ep.SessionID, Method: string(rl.MethodRL), UseRL: true, Reward: a,
				PolicyVersion: st.PolicyVersion, Why: j.Why, CreatedAt: time.Now()}
			if err := r.store.AddSample(ctx, s); err != nil {
				return fmt.Errorf("record sample of task %q step %d: %w", g.Task.ID, k, err)
			}
		}
	}
	return nil
}

// dropSteps drops the recorded, untrained turns of an episode that will not
// be trained, keeping the reason.
func (r *Runner) dropSteps(ctx context.Context, ep Episode, reason string) {
	if r.store == nil {
		return
	}
	ctx = context.WithoutCancel(ctx)
	for _, st := range ep.Steps {
		if st.TurnID == "" {
			continue
		}
		if err := r.store.DropTurn(ctx, st.TurnID, reason); err != nil && !errors.Is(err, store.ErrConflict) {
			r.log.Warn("drop agent step", "turn", st.TurnID, "err", err)
		}
	}
	// A step recorded but not yet in ep.Steps (failed between insert and
	// append) is caught by Recover at the next start.
}

// Recover drops the turns of agent episodes a previous process left
// unfinished (generated, observed, or judged but never made a sample),
// with the reason, and returns how many it dropped. Call it before
// running groups on a store another run of this process may have used.
func Recover(ctx context.Context, st store.LearningStore) (int, error) {
	turns, err := st.ListTurns(ctx, store.TurnFilter{Type: store.Main, States: []store.TurnState{store.Generated, store.Observed, store.Judged}})
	if err != nil {
		return 0, fmt.Errorf("agent recover: %w", err)
	}
	keys := map[string]string{}
	dropped := 0
	for _, t := range turns {
		key, ok := keys[t.SessionID]
		if !ok {
			s, err := st.Session(ctx, t.SessionID)
			if err != nil {
				return dropped, fmt.Errorf("agent recover: session %s: %w", t.SessionID, err)
			}
			key = s.Key
			keys[t.SessionID] = key
		}
		if !isAgentKey(key) {
			continue
		}
		reason := ReasonInterrupted
		if t.State == store.Judged {
			reason = ReasonGroupIncomplete + " (the trainer restarted)"
		}
		if err := st.DropTurn(ctx, t.ID, reason); err != nil {
			return dropped, fmt.Errorf("agent recover: drop %s: %w", t.ID, err)
		}
		dropped++
	}
	return dropped, nil
}

func isAgentKey(k string) bool { return len(k) > 6 && k[:6] == "agent/" }
