package postgres

import (
	"log/slog"
	"os"
	"testing"

	"github.com/clawrl/clawrl/store"
	"github.com/clawrl/clawrl/store/learningtest"
	"github.com/clawrl/clawrl/store/postgres/pgtest"
	"github.com/clawrl/clawrl/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// openTest opens the database that stands for dir (one per test folder, so
// a reopen finds the same rows).
func openTest(t *testing.T, dir string) *Store {
	t.Helper()
	srv := pgtest.Start(t)
	s, err := Open(t.Context(), srv.Database(t, pgtest.NameFor(dir)), Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("open store for %s: %v", dir, err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, dir string) store.Store { return openTest(t, dir) })
}

func TestLearningConformance(t *testing.T) {
	learningtest.Run(t, func(t *testing.T, dir string) store.LearningStore { return openTest(t, dir) })
}

func TestCrash(t *testing.T) {
	storetest.RunCrash(t, func(t *testing.T, dir string) store.Store { return openTest(t, dir) })
}

// A database written before 0005 (no max_tokens column) is upgraded on
// open (storetest.RunMigrationAddsMaxTokens).
func TestMigrationAddsMaxTokens(t *testing.T) {
	open := func(t *testing.T, dir string) store.Store { return openTest(t, dir) }
	storetest.RunMigrationAddsMaxTokens(t, open, func(t *testing.T, st store.Store) {
		for _, q := range []string{`ALTER TABLE turns DROP COLUMN max_tokens`, `DELETE FROM schema_migrations WHERE version = 5`} {
			if _, err := st.(*Store).pool.Exec(t.Context(), q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}, 5)
}
