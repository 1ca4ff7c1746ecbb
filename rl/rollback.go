package rl

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/clawrl/clawrl/internal/stats"
	"github.com/clawrl/clawrl/store"
)

// Rolling back on the users' verdict (SchedulerConfig.RollbackDrop,
// `--rollback-drop`): the retention gate checks what the base model knew,
// not what the users asked for, and a step can pass it while undoing the
// preference the versions before it learned (the 1.5B coder's tldr seed 3:
// held-out 17 of 20 at v5, 0 at v6, whose answers open "TL; Summary:"; its
// users liked 11 of 16 answers of v5 and 0 of 16 of v6). The users say so
// first: the next step's batch (with the served version's rated answers
// that made no sample: under OPD, its 👍s) is their verdict on it. When
// they liked its answers significantly less often than the answers of the
// version it was trained from, that step is trained from the earlier
// version's weights and optimizer state instead (the served one's update
// dropped), on the batch the users just rated. Nothing else changes: the
// batch trains once, the new version is gated and recorded as any other,
// and its record says what it was trained from and why.

// users counts the rated answers of one served version: the liked ones
// (a rating above 0) of those rated (a rating other than 0).
type users struct {
	version      int64
	liked, rated int
}

// share is the liked fraction (0 with nothing rated).
func (u users) share() float64 {
	if u.rated == 0 {
		return 0
	}
	return float64(u.liked) / float64(u.rated)
}

// usersOf counts the users of served (a version, or the base): the rated
// answers among batch that it wrote, others (its rated answers that made
// no sample, unsampled), and those its held steps spent.
func (s *Scheduler) usersOf(ctx context.Context, batch []Sample, served store.Version, others users) (users, error) {
	u, err := s.heldUsers(ctx, served)
	if err != nil {
		return u, err
	}
	u.liked += others.liked
	u.rated += others.rated
	for _, smp := range batch {
		if smp.PolicyVersion != served.Version {
			continue
		}
		if err := u.count(ctx, s, smp); err != nil {
			return u, err
		}
	}
	return u, nil
}

// count adds smp's rating to u (nothing for an unrated sample).
func (u *users) count(ctx context.Context, s *Scheduler, smp Sample) error {
	r, _, err := s.ratingOf(ctx, smp)
	if err != nil {
		return err
	}
	if r != 0 {
		u.rated++
	}
	if r > 0 {
		u.liked++
	}
	return nil
}

// HeldPrefix starts the drop reason of the turns a held step spent; its
// kind (the text before the colon: LearningStats.DroppedBy, the
// turns_dropped metric's label) is "held".
const HeldPrefix = "held: "

// clockSkew is how far before a version was recorded its answers are
// looked for: turns are stamped by the gateway that served them, which
// may run on another machine than the trainer (a shared Postgres).
const clockSkew = 10 * time.Minute

// servedSince filters the main turns in state that were recorded since
// served was (a clock skew before; all of them for the base): those that
// served may have written.
func servedSince(served store.Version, state store.TurnState) store.TurnFilter {
	f := store.TurnFilter{Type: store.Main, States: []store.TurnState{state}}
	if !served.CreatedAt.IsZero() {
		f.Since = served.CreatedAt.Add(-clockSkew)
	}
	return f
}

// heldUsers counts the users of served that its held steps spent: the
// rated answers it wrote whose turns a held step dropped. They are read
// from the store, so a restart (kill -9 too) forgets none of them, and a
// 👎 a held step left ready (HoldKeepsDisliked) counts once, with the
// batch that trains it. (A thinned step, HoldTrainsDisliked, whose
// version the gate rejects leaves its spared answers counted here and its
// trained 👎s not: an opt-in corner that leans towards no rollback.)
func (s *Scheduler) heldUsers(ctx context.Context, served store.Version) (users, error) {
	u := users{version: served.Version}
	f := servedSince(served, store.Dropped)
	turns, err := s.store.ListTurns(ctx, f)
	if err != nil {
		return u, fmt.Errorf("held turns: %w", err)
	}
	// Each held answer, as its sample has it; one with no sample
	// (unsampled's, under OPD) is counted by its judgment alone.
	held := map[string]Sample{}
	for _, t := range turns {
		if t.PolicyVersion == served.Version && strings.HasPrefix(t.DropReason, HeldPrefix) {
			held[t.ID] = Sample{TurnID: t.ID}
		}
	}
	if len(held) == 0 {
		return u, nil
	}
	samples, err := s.store.ListSamples(ctx, f)
	if err != nil {
		return u, fmt.Errorf("held samples: %w", err)
	}
	for _, smp := range samples {
		if _, ok := held[smp.TurnID]; ok {
			held[smp.TurnID] = Sample{TurnID: smp.TurnID, UseRL: smp.UseRL, Reward: smp.Reward}
		}
	}
	for _, smp := range held {
		if err := u.count(ctx, s, smp); err != nil {
			return u, err
		}
	}
	return u, nil
}

// rollbackFrom decides what the step on batch trains from. It returns
// served (trained from what is served) unless RollbackDrop is on, served
// was trained by a step (not a copy, not the base) that recorded its
// parent's users, and served's users (now) liked their answers at least
// RollbackDrop less often than the parent's, with a one-sided Fisher
// exact test below RollbackAlpha. Then it returns the parent version, and
// why. A version trained by a rollback is not rolled back again: users
// who now dislike what they liked before (a changed mind) would otherwise
// send every step back to the same weights, one batch from them.
func (s *Scheduler) rollbackFrom(ctx context.Context, served store.Version, now users) (from store.Version, why string, err error) {
	drop, alpha := s.cfg.RollbackDrop, s.cfg.RollbackAlpha
	m := served.Metrics
	if drop <= 0 || served.Version == 0 || served.SourceVersion != 0 || m.RolledBack != 0 || m.ParentRated == 0 || now.rated == 0 {
		return served, "", nil
	}
	before := users{liked: m.ParentLiked, rated: m.ParentRated}
	if before.share()-now.share() < drop {
		return served, "", nil
	}
	p := stats.FisherGreater(before.liked, before.rated, now.liked, now.rated)
	if p >= alpha {
		return served, "", nil
	}
	if m.TrainedFrom == 0 {
		from = store.Version{Version: 0}
	} else {
		vs, err := s.store.Versions(ctx, 0)
		if err != nil {
			return served, "", fmt.Errorf("rollback: %w", err)
		}
		found := false
		for _, v := range vs {
			if v.Version == m.TrainedFrom {
				from, found = v, true
			}
		}
		if !found {
			return served, "", fmt.Errorf("rollback: v%d, which v%d was trained from, is not recorded", m.TrainedFrom, served.Version)
		}
	}
	if _, err := os.Stat(s.dirOf(from)); err != nil {
		// Its folder was removed by hand: train on from what is served.
		s.log.Warn("cannot roll back: the earlier version's folder is gone", "served", served.Version, "from", from.Version, "err", err)
		return served, "", nil
	}
	why = fmt.Sprintf("trained from v%d, not v%d: v%d's users liked %d of %d answers, v%d's %d of %d (p = %.1g; --rollback-drop %g)",
		from.Version, served.Version, served.Version, now.liked, now.rated, from.Version, before.liked, before.rated, p, drop)
	return from, why, nil
}
