package sqlite

import (
	"errors"
	"fmt"
	"testing"

	"github.com/clawrl/clawrl/store"
	"github.com/clawrl/clawrl/store/storetest"
)

func openTest(t *testing.T, dir string) store.Store {
	t.Helper()
	s, err := OpenDir(t.Context(), dir, Options{})
	if err != nil {
		t.Fatalf("open store in %s: %v", dir, err)
	}
	return s
}

func TestConformance(t *testing.T) { storetest.Run(t, openTest) }

func TestCrash(t *testing.T) { storetest.RunCrash(t, openTest) }

// TestTriggerEnforcesStateMachine bypasses the Go guards and writes states
// with raw SQL: the schema itself must refuse every move that is not an
// arrow of store.CanTransition.
func TestTriggerEnforcesStateMachine(t *testing.T) {
	s := openTest(t, t.TempDir()).(*Store)
	defer s.Close()
	ctx := t.Context()
	sess := store.Session{Key: "raw"}
	if err := s.CreateSession(ctx, &sess); err != nil {
		t.Fatal(err)
	}
	path := map[store.TurnState][]store.TurnState{
		store.Observed: {store.Observed},
		store.Expired:  {store.Expired},
		store.Judged:   {store.Observed, store.Judged},
		store.Ready:    {store.Observed, store.Judged, store.Ready},
		store.Trained:  {store.Observed, store.Judged, store.Ready, store.Trained},
		store.Dropped:  {store.Dropped},
	}
	setState := func(id string, to store.TurnState) error {
		_, err := s.writer.ExecContext(ctx, `UPDATE turns SET state = ? WHERE id = ?`, string(to), id)
		return classify(err)
	}
	n := 0
	for _, from := range store.TurnStates() {
		for _, to := range store.TurnStates() {
			if from == to {
				continue
			}
			n++
			tr := store.Turn{ID: fmt.Sprintf("raw-%d", n), SessionID: sess.ID}
			if err := s.InsertTurn(ctx, &tr); err != nil {
				t.Fatal(err)
			}
			for _, step := range path[from] {
				if err := setState(tr.ID, step); err != nil {
					t.Fatalf("setup %s → %s: %v", tr.ID, step, err)
				}
			}
			err := setState(tr.ID, to)
			if allowed := store.CanTransition(from, to); allowed != (err == nil) {
				t.Errorf("raw UPDATE %s → %s: err %v, CanTransition %v", from, to, err, allowed)
			} else if err != nil && !errors.Is(err, store.ErrConflict) {
				t.Errorf("raw UPDATE %s → %s: %v, want ErrConflict", from, to, err)
			}
		}
	}
	// A new row must be born generated.
	_, err := s.writer.ExecContext(ctx, `INSERT INTO turns (id, session_id, idx, type, state, created_at, state_changed_at)
		VALUES ('raw-born', ?, 999, 'main', 'ready', 0, 0)`, sess.ID)
	if !errors.Is(classify(err), store.ErrConflict) {
		t.Errorf("inserting a ready turn: %v, want a refusal", err)
	}
}
