package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/clawrl/clawrl/store"
)

// createSessionJob is a group job that records session id with key.
func createSessionJob(ctx context.Context, s *Store, id, key string) *groupJob {
	return &groupJob{ctx: ctx, done: make(chan struct{}), fn: func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.StmtContext(ctx, s.stmts.createSession).ExecContext(ctx, id, key, "test", 0, "", 1, 1, 0)
		return classify(err)
	}}
}

// TestCommitGroup drives one group by hand, so the jobs are known to share
// a transaction: a job that fails, one whose caller gave up and one that
// breaks the transaction must leave every other job's change committed and
// get their own error.
func TestCommitGroup(t *testing.T) {
	canceled, cancel := context.WithCancel(t.Context())
	cancel()
	tests := []struct {
		name string
		// odd is the job put in the middle of two good ones, nil for none;
		// its key is "odd".
		odd     func(s *Store, id string) *groupJob
		wantErr error // from the odd job
		oddKept bool  // whether the odd job's session exists afterwards
	}{
		{name: "all good", odd: func(s *Store, id string) *groupJob { return createSessionJob(t.Context(), s, id, "odd") }, oddKept: true},
		{name: "conflict", odd: func(s *Store, id string) *groupJob { return createSessionJob(t.Context(), s, id, "taken") }, wantErr: store.ErrConflict},
		{name: "caller gave up", odd: func(s *Store, id string) *groupJob { return createSessionJob(canceled, s, id, "odd") }, wantErr: context.Canceled},
		{name: "change fails after writing", wantErr: errBoom, odd: func(s *Store, id string) *groupJob {
			j := createSessionJob(t.Context(), s, id, "odd")
			write := j.fn
			j.fn = func(ctx context.Context, tx *sql.Tx) error {
				if err := write(ctx, tx); err != nil {
					return err
				}
				return errBoom // its session row must be rolled back
			}
			return j
		}},
		{name: "change ends the transaction", wantErr: errBoom, odd: func(s *Store, id string) *groupJob {
			return &groupJob{ctx: t.Context(), done: make(chan struct{}), fn: func(ctx context.Context, tx *sql.Tx) error {
				// What SQLite does on a full disk: the whole transaction is
				// rolled back under the savepoints.
				_, _ = tx.ExecContext(ctx, "ROLLBACK")
				return errBoom
			}}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := openTest(t, t.TempDir()).(*Store)
			defer s.Close()
			if err := s.CreateSession(t.Context(), &store.Session{ID: "sess-taken", Key: "taken"}); err != nil {
				t.Fatal(err)
			}
			batch := []*groupJob{
				createSessionJob(t.Context(), s, "sess-a", "a"),
				tc.odd(s, "sess-odd"),
				createSessionJob(t.Context(), s, "sess-b", "b"),
			}
			s.commitGroup(batch)
			for i, j := range batch {
				want := error(nil)
				if i == 1 {
					want = tc.wantErr
				}
				if (want == nil) != (j.err == nil) || (want != nil && !errors.Is(j.err, want)) {
					t.Errorf("job %d: err %v, want %v", i, j.err, want)
				}
			}
			for _, id := range []string{"sess-a", "sess-b"} {
				if _, err := s.Session(t.Context(), id); err != nil {
					t.Errorf("%s: %v", id, err)
				}
			}
			_, err := s.Session(t.Context(), "sess-odd")
			if kept := err == nil; kept != tc.oddKept {
				t.Errorf("odd job's session kept = %v (%v), want %v", kept, err, tc.oddKept)
			}
			if err := s.IntegrityCheck(t.Context()); err != nil {
				t.Error(err)
			}
		})
	}
}

var errBoom = errors.New("boom")

// TestGroupedWritesConcurrent has many callers write at once, some of them
// doomed to conflict: each caller gets its own answer, and exactly the
// changes that reported success are stored.
func TestGroupedWritesConcurrent(t *testing.T) {
	s := openTest(t, t.TempDir()).(*Store)
	defer s.Close()
	const n = 200
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			// Every fourth caller reuses the key of the caller before it.
			key := fmt.Sprintf("k%d", i-i%4/3)
			errs[i] = s.CreateSession(t.Context(), &store.Session{ID: fmt.Sprintf("sess-%d", i), Key: key})
		})
	}
	wg.Wait()
	conflicts := 0
	for i, err := range errs {
		if err != nil {
			conflicts++
		}
		_, getErr := s.Session(t.Context(), fmt.Sprintf("sess-%d", i))
		switch {
		case err == nil && getErr != nil:
			t.Errorf("caller %d succeeded but its session is missing: %v", i, getErr)
		case err != nil && !errors.Is(err, store.ErrConflict):
			t.Errorf("caller %d: %v", i, err)
		case err != nil && getErr == nil:
			t.Errorf("caller %d failed (%v) but its session is stored", i, err)
		}
	}
	if conflicts != n/4 {
		t.Errorf("%d conflicts, want %d (one per shared key)", conflicts, n/4)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateSession(t.Context(), &store.Session{}); !errors.Is(err, errClosed) {
		t.Errorf("write after Close: %v, want errClosed", err)
	}
}
