package rl

import (
	"context"
	"fmt"
	"os"

	"github.com/clawrl/clawrl/internal/stats"
	"github.com/clawrl/clawrl/store"
)

// Rolling back on the users' verdict (SchedulerConfig.RollbackDrop,
// `--rollback-drop`): the retention gate checks what the base model knew,
// not what the users asked for, and a step can pass it while undoing the
// preference the versions before it learned (the 1.5B coder's tldr seed 3:
// held-out 17 of 20 at v5, 0 at v6, whose answers open "TL; Summary:"; its
// users liked 11 of 16 answers of v5 and 0 of 16 of v6). The users say so
// first: the next step's batch is their verdict on the served version. When
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

// usersOf counts the rated answers among batch that version v served,
// added to what earlier held steps counted for it (tally).
func (s *Scheduler) usersOf(ctx context.Context, batch []Sample, v int64) (users, error) {
	u := users{version: v}
	s.mu.Lock()
	if s.tally.version == v {
		u.liked, u.rated = s.tally.liked, s.tally.rated
	}
	s.mu.Unlock()
	for _, smp := range batch {
		if smp.PolicyVersion != v {
			continue
		}
		r, _, err := s.ratingOf(ctx, smp)
		if err != nil {
			return u, err
		}
		if r != 0 {
			u.rated++
		}
		if r > 0 {
			u.liked++
		}
	}
	return u, nil
}

// addHeld keeps a held step's count of the served version's users (which
// usersOf started from the tally so far) as the tally the next step's
// verdict starts from (in memory: a restart forgets it, and the verdict
// then reads only the batch at hand).
func (s *Scheduler) addHeld(u users) {
	s.mu.Lock()
	s.tally = u
	s.mu.Unlock()
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
