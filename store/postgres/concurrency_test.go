package postgres

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/clawrl/clawrl/store"
	"github.com/clawrl/clawrl/store/learningtest"
)

// TestTriggerEnforcesStateMachine writes states with raw SQL, past the Go
// guards: the schema itself refuses every move store.CanTransition does not
// allow.
func TestTriggerEnforcesStateMachine(t *testing.T) {
	s := openTest(t, t.TempDir())
	defer s.Close()
	ctx := t.Context()
	turns := learningtest.Seed(t, s, "raw", 1, false)
	for _, to := range []store.TurnState{store.Judged, store.Ready, store.Trained} {
		_, err := s.pool.Exec(ctx, `UPDATE turns SET state = $1 WHERE id = $2`, string(to), turns[0].ID)
		if !errors.Is(classify(err), store.ErrConflict) {
			t.Errorf("raw generated → %s: err %v, want a conflict from the trigger", to, err)
		}
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO turns (id, session_id, idx, type, state, created_at, state_changed_at)
		VALUES ('x', $1, 99, 'main', 'ready', 0, 0)`, turns[0].SessionID)
	if !errors.Is(classify(err), store.ErrConflict) {
		t.Errorf("raw insert of a ready turn: err %v, want a conflict", err)
	}
}

// TestRacingProcessesMoveOnce: several stores (as several processes would)
// race to judge, sample and train the same turns; each turn moves exactly
// once, and of two commits of the same version exactly one wins.
func TestRacingProcessesMoveOnce(t *testing.T) {
	dir := t.TempDir()
	const racers = 4
	stores := make([]*Store, racers)
	for i := range stores {
		stores[i] = openTest(t, dir)
		defer stores[i].Close()
	}
	ctx := t.Context()
	turns := learningtest.Seed(t, stores[0], "race", 20, true)
	var mu sync.Mutex
	won := map[string]int{}
	race := func(what string, fn func(s *Store, tr store.Turn) error) {
		t.Helper()
		clear(won)
		var wg sync.WaitGroup
		for _, s := range stores {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for _, tr := range turns {
					err := fn(s, tr)
					switch {
					case err == nil:
						mu.Lock()
						won[tr.ID]++
						mu.Unlock()
					case !errors.Is(err, store.ErrConflict):
						t.Errorf("%s %s: %v", what, tr.ID, err)
					}
				}
			}()
		}
		wg.Wait()
		for _, tr := range turns {
			if won[tr.ID] != 1 {
				t.Errorf("%s: turn %s moved %d times, want once", what, tr.ID, won[tr.ID])
			}
		}
	}
	race("judge", func(s *Store, tr store.Turn) error {
		return s.RecordJudgment(ctx, store.Judgment{TurnID: tr.ID, Score: 1, Keep: true})
	})
	race("sample", func(s *Store, tr store.Turn) error {
		return s.AddSample(ctx, store.Sample{TurnID: tr.ID, Method: "rl", UseRL: true, Reward: 1, Why: "race"})
	})
	ids := make([]string, len(turns))
	for i, tr := range turns {
		ids[i] = tr.ID
	}
	var wg sync.WaitGroup
	var wins, conflicts int
	for i, s := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.CommitVersion(ctx, store.Version{Version: 1, Dir: fmt.Sprintf("v1-by-%d", i)}, ids, nil, "")
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case errors.Is(err, store.ErrConflict):
				conflicts++
			default:
				t.Errorf("commit: %v", err)
			}
		}()
	}
	wg.Wait()
	if wins != 1 || conflicts != racers-1 {
		t.Errorf("commits of version 1: %d won, %d conflicts; want 1 and %d", wins, conflicts, racers-1)
	}
	samples, err := stores[0].ListSamples(ctx, store.TurnFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, smp := range samples {
		if smp.TrainedVersion != 1 {
			t.Errorf("sample %s trained by version %d, want 1", smp.TurnID, smp.TrainedVersion)
		}
	}
}

func TestListenWakes(t *testing.T) {
	dir := t.TempDir()
	a, b := openTest(t, dir), openTest(t, dir)
	defer a.Close()
	defer b.Close()
	ctx := t.Context()
	versions := a.Listen(ctx, ChannelVersions)
	<-versions // the wake-up every (re)connection sends
	turns := learningtest.Seed(t, b, "listen", 1, true)
	if err := b.RecordJudgment(ctx, store.Judgment{TurnID: turns[0].ID, Score: 1, Keep: true}); err != nil {
		t.Fatal(err)
	}
	if err := b.AddSample(ctx, store.Sample{TurnID: turns[0].ID, Method: "rl", UseRL: true, Reward: 1, Why: "x"}); err != nil {
		t.Fatal(err)
	}
	if err := b.CommitVersion(ctx, store.Version{Version: 3, Dir: "v3"}, []string{turns[0].ID}, nil, ""); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-versions:
		if got != "3" {
			t.Errorf("notification payload %q, want 3", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no notification of the committed version")
	}
}

func TestLeadIsExclusive(t *testing.T) {
	dir := t.TempDir()
	a, b := openTest(t, dir), openTest(t, dir)
	defer a.Close()
	defer b.Close()
	ctx := t.Context()
	release, err := a.Lead(ctx, "trainer")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Lead(ctx, "trainer"); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("second Lead: %v, want ErrNotLeader", err)
	}
	if r, err := b.Lead(ctx, "other"); err != nil {
		t.Fatalf("another role: %v", err)
	} else {
		r()
	}
	release()
	r, err := b.Lead(ctx, "trainer")
	if err != nil {
		t.Fatalf("Lead after release: %v", err)
	}
	r()
}
