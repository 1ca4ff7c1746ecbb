package loop

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clawrl/clawrl/judge"
	"github.com/clawrl/clawrl/rl"
	"github.com/clawrl/clawrl/store"
)

// judgeRound runs one pass of the judge loop: expire idle sessions, drop side
// turns that were observed, judge observed main turns, build the samples of
// judged turns that are kept, and settle sessions that ended. Every step
// moves rows from one state to the next in a transaction, so a round cut
// short by a crash is simply redone.
func (r *Runner) judgeRound(ctx context.Context) (int, error) {
	return r.judgeRoundUpTo(ctx, 0)
}

// judgeRoundUpTo is judgeRound building at most teacherLimit samples that
// need the teacher (all with 0); the rest wait for the next round
// (buildSamples).
func (r *Runner) judgeRoundUpTo(ctx context.Context, teacherLimit int) (int, error) {
	if r.cfg.SessionTimeout > 0 {
		if _, err := r.store.ExpireIdle(ctx, time.Now().Add(-r.cfg.SessionTimeout)); err != nil {
			return 0, err
		}
	}
	side, err := r.store.ListTurns(ctx, store.TurnFilter{Type: store.Side, States: []store.TurnState{store.Observed}, Limit: 100})
	if err != nil {
		return 0, err
	}
	for _, t := range side {
		r.drop(ctx, t.ID, "side turn: served and recorded, never trained")
	}

	observed, err := r.store.ListTurns(ctx, store.TurnFilter{Type: store.Main, States: []store.TurnState{store.Observed}, Limit: r.cfg.JudgeBatch})
	if err != nil {
		return 0, err
	}
	var wg sync.WaitGroup
	var judged atomic.Int32
	sem := make(chan struct{}, r.cfg.JudgeConcurrency)
	for _, t := range observed {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := r.judgeTurn(ctx, t); err != nil {
				if ctx.Err() == nil {
					r.log.Warn("judge turn", "turn", t.ID, "err", err)
				}
				return
			}
			judged.Add(1)
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}

	// Feedback that arrived after its turn was judged (the user replied, the
	// judge ran, then the thumbs-down came) is still the strongest evidence:
	// rescore those turns while they can still be trained.
	outdated, err := r.store.OutdatedByFeedback(ctx, r.cfg.JudgeBatch)
	if err != nil {
		return 0, err
	}
	for _, j := range outdated {
		if err := r.revise(ctx, j); err != nil {
			if ctx.Err() != nil {
				return 0, ctx.Err()
			}
			r.log.Warn("revise judgment", "turn", j.TurnID, "err", err)
		}
	}

	// Judged turns whose sample is not built yet: the ones just judged, and
	// any a crash left between judgment and sample.
	todo, err := r.store.JudgedToSample(ctx, r.cfg.JudgeBatch)
	if err != nil {
		return 0, err
	}
	built, left, err := r.buildSamples(ctx, todo, teacherLimit)
	if err != nil {
		return built, err
	}

	sessions, err := r.store.SessionsToSettle(ctx, 100)
	if err != nil {
		return built, err
	}
	for _, id := range sessions {
		n, err := r.settle(ctx, id)
		if err != nil {
			r.log.Warn("settle session", "session", id, "err", err)
		}
		built += n
	}
	if built > 0 && r.scheduler != nil {
		r.scheduler.Notify()
	}
	// Teacher samples left for the next round count as work, so that the
	// judge loop comes back at once.
	return int(judged.Load()) + built + left, nil
}

// Input builds what the judge sees from a stored turn.
func Input(t store.Turn) judge.Input {
	in := judge.Input{TurnID: t.ID, SessionID: t.SessionID, Messages: t.Messages, Response: t.Response,
		Next: t.NextState, NextKind: t.NextStateKind}
	if t.Feedback != nil {
		in.FeedbackRating, in.FeedbackText = t.Feedback.Rating, t.Feedback.Text
	}
	return in
}

// judgeTurn judges one observed main turn and records the judgment with the
// method's decision.
func (r *Runner) judgeTurn(ctx context.Context, t store.Turn) error {
	if len(t.ResponseIDs) == 0 {
		r.drop(ctx, t.ID, "no response tokens: nothing to train on")
		return nil
	}
	if r.cfg.YieldToServing {
		if _, err := r.gate.WaitIdle(ctx, r.cfg.IdleWait); err != nil {
			return err
		}
	}
	j, err := r.judge.Judge(ctx, Input(t), judge.Request{Score: r.cfg.Method.WantsScore(), Hint: r.cfg.Method.WantsHint()})
	if err != nil {
		return err
	}
	d := rl.Decide(r.cfg.Method, j.Score, j.HintAccepted)
	// A turn that is not kept stays judged until its session ends, when
	// the at-least-one rule decides (settle).
	j.Keep, j.Why = d.Keep, d.Reason
	if err := r.store.RecordJudgment(ctx, j); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return nil // judged meanwhile (feedback raced, or another round)
		}
		return err
	}
	r.count(func(c *Counters) {
		c.Judged++
		if j.HintAccepted {
			c.HintsAccepted++
		}
		if j.Score > 0 {
			c.Positive++
		} else if j.Score < 0 {
			c.Negative++
		}
	})
	return nil
}

// revise rescores a judgment with feedback that arrived after it, and
// updates the turn's sample (or builds or drops it) to match.
func (r *Runner) revise(ctx context.Context, j store.Judgment) error {
	t, err := r.store.Turn(ctx, j.TurnID)
	if err != nil {
		return err
	}
	if t.Feedback == nil {
		return nil
	}
	score, reason, votes := r.judge.Rescore(j.Votes, t.Feedback.Rating, t.Feedback.Text)
	d := rl.Decide(r.cfg.Method, score, j.HintAccepted)
	j.Score, j.Votes, j.Reason, j.Keep, j.Why = score, votes, reason+" (feedback after the judgment)", d.Keep, d.Reason
	reward := 0.0
	if d.UseRL {
		reward = float64(score)
	}
	if err := r.store.ReviseJudgment(ctx, j, d.UseRL, reward, d.Reason+" (revised by later feedback)"); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return nil // trained or dropped meanwhile
		}
		return err
	}
	r.count(func(c *Counters) { c.Revised++ })
	if t.State == store.Ready && !d.Keep {
		r.drop(ctx, t.ID, d.Reason+" (after later feedback)")
	}
	// A judged turn now kept gets its sample from JudgedToSample below.
	return nil
}

// buildSamples builds the samples of kept judgments: first those that
// need no teacher (a rating's RL term: a row written), then those that do
// (the teacher's pass over the response, or with --teacher-samples N its N
// written answers and their selection: tens of seconds each on a CPU),
// TeacherConcurrency at a time, so that the engine that writes their
// answers (a remote teacher's server, or the policy's own) decodes them in
// one batch. With teacherLimit > 0 it builds at most that many teacher
// samples and leaves the rest to the next round: the judge loop then
// judges turns rated meanwhile and builds their plain samples between
// teacher builds, instead of after the whole backlog of disliked turns
// (BENCHMARKS.md, "The hint gain read by the base weights"). todo comes
// newest first (store.Learning.JudgedToSample), so the teacher's work
// goes to the turns the served policy wrote last. It returns
// how many samples it built and how many teacher samples it left; only a
// cancelled context is an error.
func (r *Runner) buildSamples(ctx context.Context, todo []store.Judgment, teacherLimit int) (built, left int, err error) {
	var plain, taught []store.Judgment
	for _, j := range todo {
		if rl.Decide(r.cfg.Method, j.Score, j.HintAccepted).UseOPD {
			taught = append(taught, j)
		} else {
			plain = append(plain, j)
		}
	}
	if teacherLimit > 0 && len(taught) > teacherLimit {
		taught, left = taught[:teacherLimit], len(taught)-teacherLimit
	}
	var n atomic.Int32
	build := func(j store.Judgment) {
		ok, err := r.buildSample(ctx, j)
		switch {
		case err != nil && ctx.Err() == nil:
			r.log.Warn("build sample", "turn", j.TurnID, "err", err)
		case ok:
			n.Add(1)
		}
	}
	for _, j := range plain {
		if ctx.Err() != nil {
			break
		}
		build(j)
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, r.cfg.TeacherConcurrency)
	for _, j := range taught {
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			build(j)
		})
	}
	wg.Wait()
	return int(n.Load()), left, ctx.Err()
}

// buildSample turns a kept judgment into a sample: with the teacher's
// logprobs when the method uses the hint.
func (r *Runner) buildSample(ctx context.Context, j store.Judgment) (bool, error) {
	t, err := r.store.Turn(ctx, j.TurnID)
	if err != nil {
		return false, err
	}
	d := rl.Decide(r.cfg.Method, j.Score, j.HintAccepted)
	if !d.Keep {
		// The method changed since the judgment: drop with the new reason.
		r.drop(ctx, t.ID, d.Reason)
		return false, nil
	}
	if r.scheduler != nil && r.scheduler.RefuseStale(ctx, t.ID, t.PolicyVersion) {
		// No step would take it: spend no teacher work on it.
		return false, nil
	}
	smp := store.Sample{TurnID: t.ID, SessionID: t.SessionID, Method: string(r.cfg.Method), Why: d.Reason, PolicyVersion: t.PolicyVersion}
	if d.UseRL {
		smp.UseRL, smp.Reward = true, float64(j.Score)
	}
	if d.UseOPD {
		if r.cfg.YieldToServing {
			if _, err := r.gate.WaitIdle(ctx, r.cfg.IdleWait); err != nil {
				return false, err
			}
		}
		var lp []float32
		var wrote []int32
		var v int64
		// The teacher knows the answer the hint is about (shown under
		// --hint-placement revise, continued under continue).
		teacher := r.teacher.WithAnswer(t.Response, t.ResponseIDs)
		if r.cfg.TeacherWrites {
			wrote, lp, v, err = r.writeTeacher(ctx, teacher, t, j.Hint)
		} else {
			lp, v, err = teacher.Logprobs(ctx, t.Messages, t.Tools, t.PromptText, t.ResponseIDs, j.Hint)
		}
		switch {
		case err != nil && ctx.Err() != nil:
			return false, ctx.Err()
		case errors.Is(err, errNoPick):
			// Better no sample than a bad one; the rating's RL term
			// would push down the rated answer, which teacher-written
			// OPD does not do either.
			r.drop(ctx, t.ID, err.Error())
			return false, nil
		case err != nil && d.UseRL:
			smp.Why = fmt.Sprintf("score %+d: RL term only, the teacher failed: %v", j.Score, err)
		case err != nil:
			r.drop(ctx, t.ID, "teacher failed: "+err.Error())
			return false, nil
		default:
			smp.TeacherLogprobs, smp.TeacherVersion, smp.TeacherAdapter = lp, v, r.teacher.Adapter
			r.rehearsal.SetHint(j.Hint) // --rehearsal-follow-hint
			switch {
			case wrote != nil:
				// The reward rated the policy's response, not the
				// teacher's: a teacher-written sample is OPD only.
				smp.TeacherResponseIDs, smp.UseRL, smp.Reward = wrote, false, 0
				smp.Why += "; trained on the teacher's response"
			case r.cfg.TeacherAlsoWrites:
				if err := r.alsoWrite(ctx, t, j.Hint, &smp); err != nil {
					return false, err
				}
			}
		}
	}
	if err := r.store.AddSample(ctx, smp); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return false, nil
		}
		return false, err
	}
	r.count(func(c *Counters) { c.Samples++ })
	return true, nil
}

// alsoWrite puts the teacher's own answer to t's prompt beside smp's
// re-scored response (--opd-response both): the policy's response keeps
// its reward, the teacher's is OPD only, and the store holds both sets of
// teacher logprobs one after the other (rl.FromStore splits them). A
// failed write leaves the re-scored response alone; only a cancelled
// context is an error.
func (r *Runner) alsoWrite(ctx context.Context, t store.Turn, hint string, smp *store.Sample) error {
	w, wlp, _, err := r.writeTeacher(ctx, r.teacher.WithAnswer(t.Response, t.ResponseIDs), t, hint)
	switch {
	case err != nil && ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		smp.Why += "; the teacher's own answer failed: " + err.Error()
	default:
		smp.TeacherLogprobs = append(append([]float32(nil), smp.TeacherLogprobs...), wlp...)
		smp.TeacherResponseIDs = w
		smp.Why += "; and on the teacher's response"
	}
	return nil
}

// settle applies the at-least-one rule to an ended session: if it produced no
// sample, its first held turn (the first with a next state that was judged
// but not kept) becomes a sample with reward 0; the other held turns are
// dropped with the reason their judgment gave.
func (r *Runner) settle(ctx context.Context, sessionID string) (int, error) {
	samples, err := r.store.ListSamples(ctx, store.TurnFilter{SessionID: sessionID, Limit: 1})
	if err != nil {
		return 0, err
	}
	judgments, err := r.store.ListJudgments(ctx, store.TurnFilter{SessionID: sessionID, Type: store.Main, States: []store.TurnState{store.Judged}})
	if err != nil {
		return 0, err
	}
	var held []store.Judgment
	for _, j := range judgments {
		if !j.Keep {
			held = append(held, j)
		}
	}
	if len(held) == 0 {
		return 0, nil
	}
	// ListJudgments is in row order, which is the session's turn order, so
	// held[0] is the session's first turn with a next state still undecided.
	kept := 0
	if len(samples) == 0 && r.cfg.Method != rl.MethodOff {
		first := held[0]
		err := r.store.AddSample(ctx, store.Sample{TurnID: first.TurnID, SessionID: sessionID, Method: string(r.cfg.Method),
			UseRL: true, Reward: 0, Why: rl.AtLeastOneReason})
		if err != nil && !errors.Is(err, store.ErrConflict) {
			return 0, err
		}
		if err == nil {
			kept = 1
			r.count(func(c *Counters) { c.Samples++; c.AtLeastOne++ })
		}
		held = held[1:]
	}
	for _, j := range held {
		r.drop(ctx, j.TurnID, j.Why)
	}
	return kept, nil
}

func (r *Runner) drop(ctx context.Context, id, reason string) {
	if err := r.store.DropTurn(ctx, id, reason); err != nil {
		if !errors.Is(err, store.ErrConflict) {
			r.log.Warn("drop turn", "turn", id, "reason", reason, "err", err)
		}
		return
	}
	r.count(func(c *Counters) { c.Dropped++ })
}
