package sqlite

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/clawrl/clawrl/store"
	"github.com/clawrl/clawrl/store/storetest"
)

func openTest(t *testing.T, dir string) store.Store {
	t.Helper()
	s, err := OpenDir(t.Context(), dir, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("open store in %s: %v", dir, err)
	}
	return s
}

func TestConformance(t *testing.T) { storetest.Run(t, openTest) }

// TestConformanceNoCache runs the suite with the payload cache off, so both
// read paths (cache hit, turn_payloads) are held to the same contract.
func TestConformanceNoCache(t *testing.T) {
	storetest.Run(t, func(t *testing.T, dir string) store.Store {
		t.Helper()
		s, err := OpenDir(t.Context(), dir, Options{PayloadCacheBytes: -1, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatalf("open store in %s: %v", dir, err)
		}
		return s
	})
}

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

// TestQueryPlansUseIndexes guards the hot lookups against full table scans
// (a partial index silently stops applying when a query omits its WHERE).
func TestQueryPlansUseIndexes(t *testing.T) {
	s := openTest(t, t.TempDir()).(*Store)
	defer s.Close()
	cases := []struct {
		name, query string
		args        []any
	}{
		{"turn by id", `SELECT ` + rowColumns + ` FROM turns t WHERE t.id = ?`, []any{"x"}},
		{"last turn", `SELECT ` + rowColumns + ` FROM turns t WHERE t.session_id = ? AND t.type = ? ORDER BY t.idx DESC LIMIT 1`, []any{"s", "main"}},
		{"turn by hash", `SELECT ` + rowColumns + ` FROM turns t WHERE t.conversation_hash = ? AND t.conversation_hash <> '' ORDER BY t.seq DESC LIMIT 1`, []any{"h"}},
		{"payload", `SELECT ` + payloadColumns + ` FROM turn_payloads WHERE turn_seq = ?`, []any{1}},
		{"ready turns", `SELECT ` + rowColumns + ` FROM turns t WHERE t.state = 'ready' ORDER BY t.seq`, nil},
		{"chunk by hash", `SELECT id FROM chunks WHERE hash = ?`, []any{[]byte("h")}},
		{"chunk by id", `SELECT data FROM chunks WHERE id = ?`, []any{1}},
		{"session by key", `SELECT ` + sessionColumns + ` FROM sessions WHERE key = ? AND key <> ''`, []any{"k"}},
	}
	for _, f := range []store.TurnFilter{
		{States: []store.TurnState{store.Observed}, Type: store.Main, Limit: 10},
		{SessionID: "s", AfterID: 5, Limit: 10},
		{AfterID: 100, Limit: 10},
	} {
		q, args := listQuery(f)
		cases = append(cases, struct {
			name, query string
			args        []any
		}{fmt.Sprintf("list %+v", f), q, args})
	}
	for _, c := range cases {
		rows, err := s.reader.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+c.query, c.args...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		for _, step := range plan {
			if strings.HasPrefix(step, "SCAN ") && !strings.Contains(step, "USING") {
				t.Errorf("%s scans a whole table: %v", c.name, plan)
			}
		}
	}
}

func TestReadOnly(t *testing.T) {
	dir := t.TempDir()
	if _, err := OpenDir(t.Context(), dir, Options{ReadOnly: true}); err == nil {
		t.Fatal("read-only open of an empty directory succeeded")
	}
	w := openTest(t, dir).(*Store)
	defer w.Close()
	sess := store.Session{Key: "ro"}
	if err := w.CreateSession(t.Context(), &sess); err != nil {
		t.Fatal(err)
	}
	r, err := OpenDir(t.Context(), dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open next to a writer: %v", err)
	}
	defer r.Close()
	if got, err := r.SessionByKey(t.Context(), "ro"); err != nil || got.ID != sess.ID {
		t.Errorf("read-only SessionByKey = %+v, %v", got, err)
	}
	// Writes are refused before they reach SQLite.
	other := store.Session{Key: "ro2"}
	if err := r.CreateSession(t.Context(), &other); !errors.Is(err, errReadOnly) {
		t.Errorf("CreateSession on a read-only store: %v", err)
	}
	tr := store.Turn{ID: "x", SessionID: sess.ID}
	if err := r.InsertTurn(t.Context(), &tr); !errors.Is(err, errReadOnly) {
		t.Errorf("InsertTurn on a read-only store: %v", err)
	}
	// Rows written after the reader opened are visible to it.
	tr = store.Turn{ID: "chatcmpl-late", SessionID: sess.ID}
	if err := w.InsertTurn(t.Context(), &tr); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Turn(t.Context(), "chatcmpl-late"); err != nil {
		t.Errorf("reader does not see a later commit: %v", err)
	}
}

func TestOpenOptions(t *testing.T) {
	dir := t.TempDir()
	for _, o := range []Options{{Synchronous: "OFF"}, {PageSize: 1000}, {PageSize: 1 << 17}} {
		if s, err := OpenDir(t.Context(), t.TempDir(), o); err == nil {
			s.Close()
			t.Errorf("Open(%+v) succeeded", o)
		}
	}
	s, err := OpenDir(t.Context(), dir, Options{Synchronous: "full", PageSize: 8192})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for pragma, want := range map[string]string{"journal_mode": "wal", "synchronous": "2", "page_size": "8192", "foreign_keys": "1"} {
		var got string
		if err := s.writer.QueryRowContext(t.Context(), "PRAGMA "+pragma).Scan(&got); err != nil || got != want {
			t.Errorf("PRAGMA %s = %q, %v; want %q", pragma, got, err, want)
		}
	}
	if err := s.IntegrityCheck(t.Context()); err != nil {
		t.Error(err)
	}
}

func TestMigrations(t *testing.T) {
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range ms {
		if i > 0 && m.version <= ms[i-1].version {
			t.Errorf("migrations out of order: %s after %s", m.name, ms[i-1].name)
		}
	}
	if ms[0].version != 1 || ms[0].name != "0001_init.sql" {
		t.Errorf("first migration = %s", ms[0].name)
	}
	dir := t.TempDir()
	s := openTest(t, dir).(*Store)
	v, err := s.SchemaVersion(t.Context())
	if err != nil || v != ms[len(ms)-1].version {
		t.Errorf("SchemaVersion = %d, %v; want %d", v, err, ms[len(ms)-1].version)
	}
	// A database from a newer binary is refused, not silently used.
	if _, err := s.writer.ExecContext(t.Context(), `INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, '9999_future.sql', 0)`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s2, err := OpenDir(t.Context(), dir, Options{}); err == nil {
		s2.Close()
		t.Error("opened a database with a newer schema")
	} else if !strings.Contains(err.Error(), "newer") {
		t.Errorf("newer schema error does not say so: %v", err)
	}
	if s2, err := OpenDir(t.Context(), dir, Options{ReadOnly: true}); err == nil {
		s2.Close()
		t.Error("read-only open of a database with a newer schema succeeded")
	}
}

// A database written before 0004 (no forced_text column) is upgraded on
// open: its turns read back unchanged, with nothing forced, and new turns
// keep their forced text.
func TestMigrationAddsForcedText(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir).(*Store)
	ctx := t.Context()
	sess := store.Session{Key: "old", KeySource: "header"}
	if err := s.CreateSession(ctx, &sess); err != nil {
		t.Fatal(err)
	}
	old := store.Turn{ID: "chatcmpl-old", SessionID: sess.ID, Type: store.Main, PromptText: "p", PromptIDs: []int32{1, 2},
		ResponseText: "r", ResponseIDs: []int32{3}, BehaviourLogprobs: []float32{-1}}
	if err := s.InsertTurn(ctx, &old); err != nil {
		t.Fatal(err)
	}
	// Turn the database back into a 0003 one.
	for _, q := range []string{`ALTER TABLE turn_payloads DROP COLUMN forced_text`, `DELETE FROM schema_migrations WHERE version = 4`} {
		if _, err := s.writer.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s.Close()

	s = openTest(t, dir).(*Store)
	defer s.Close()
	if v, err := s.SchemaVersion(ctx); err != nil || v < 4 {
		t.Fatalf("SchemaVersion after reopen = %d, %v; want 0004 applied", v, err)
	}
	got, err := s.Turn(ctx, old.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ForcedText != "" || got.PromptText != "p" || len(got.PromptIDs) != 2 || got.ResponseText != "r" {
		t.Fatalf("old turn after the upgrade: %+v", got)
	}
	forced := store.Turn{ID: "chatcmpl-new", SessionID: sess.ID, Type: store.Main, PromptText: "p{\"name\":", ForcedText: "{\"name\":"}
	if err := s.InsertTurn(ctx, &forced); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openTest(t, dir).(*Store) // past the payload cache
	defer s.Close()
	if got, err := s.Turn(ctx, forced.ID); err != nil || got.ForcedText != forced.ForcedText {
		t.Fatalf("forced turn after reopen: %+v, %v", got, err)
	}
}

// A database written before 0008 (no max_tokens column) is upgraded on
// open (storetest.RunMigrationAddsMaxTokens).
func TestMigrationAddsMaxTokens(t *testing.T) {
	storetest.RunMigrationAddsMaxTokens(t, openTest, func(t *testing.T, st store.Store) {
		for _, q := range []string{`ALTER TABLE turns DROP COLUMN max_tokens`, `DELETE FROM schema_migrations WHERE version = 8`} {
			if _, err := st.(*Store).writer.ExecContext(t.Context(), q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}, 8)
}
