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
// open: its turns read back with MaxTokens 0 (not known), the rest
// unchanged, and new turns keep their limit.
func TestMigrationAddsMaxTokens(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir)
	ctx := t.Context()
	sess := store.Session{Key: "old", KeySource: "header"}
	if err := s.CreateSession(ctx, &sess); err != nil {
		t.Fatal(err)
	}
	old := store.Turn{ID: "chatcmpl-old", SessionID: sess.ID, Type: store.Main, PromptText: "p", PromptIDs: []int32{1, 2},
		ResponseText: "r", ResponseIDs: []int32{3}, BehaviourLogprobs: []float32{-1}, FinishReason: "length", CompletionTokens: 1}
	if err := s.InsertTurn(ctx, &old); err != nil {
		t.Fatal(err)
	}
	// Turn the database back into a 0004 one.
	for _, q := range []string{`ALTER TABLE turns DROP COLUMN max_tokens`, `DELETE FROM schema_migrations WHERE version = 5`} {
		if _, err := s.pool.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s.Close()

	s = openTest(t, dir)
	defer s.Close()
	if v, err := s.SchemaVersion(ctx); err != nil || v < 5 {
		t.Fatalf("SchemaVersion after reopen = %d, %v; want 0005 applied", v, err)
	}
	got, err := s.Turn(ctx, old.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.MaxTokens != 0 || got.FinishReason != "length" || got.CompletionTokens != 1 || got.ResponseText != "r" || len(got.ResponseIDs) != 1 {
		t.Fatalf("old turn after the upgrade: %+v", got)
	}
	limited := store.Turn{ID: "chatcmpl-new", SessionID: sess.ID, Type: store.Main, PromptText: "p", ResponseIDs: []int32{3},
		BehaviourLogprobs: []float32{-1}, MaxTokens: 512}
	if err := s.InsertTurn(ctx, &limited); err != nil {
		t.Fatal(err)
	}
	ts, err := s.ListTurns(ctx, store.TurnFilter{SessionID: sess.ID})
	if err != nil || len(ts) != 2 || ts[0].MaxTokens != 0 || ts[1].MaxTokens != 512 {
		t.Fatalf("ListTurns after the upgrade: %+v, %v", ts, err)
	}
}
