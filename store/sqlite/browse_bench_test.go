package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/clawrl/clawrl/store"
)

// The dashboard's queries (store.Browser) on a store with 120k turns: 10k
// sessions of 9 main turns and 1 side turn, a tenth of the main turns judged,
// plus one long session of 20k turns — beside the same queries on a store a
// hundred times smaller (100 sessions, a long one of 200 turns), the
// reference: a page must cost what it costs on a small store.
//
//	go test -run '^$' -bench Browse -benchtime 100x ./store/sqlite/

const browseTurnsPerSession = 10

type browseSize struct {
	name           string
	sessions, long int
}

var browseSizes = []browseSize{{"1.2k-turns", 100, 200}, {"120k-turns", 10_000, 20_000}}

// seedBrowse bulk-loads the rows in one transaction through the schema
// (triggers included), which takes seconds where InsertTurn would take
// minutes; the rows are what InsertTurn writes for small turns.
func seedBrowse(b *testing.B, size browseSize) *Store {
	b.Helper()
	ctx := context.Background()
	s, err := OpenDir(ctx, b.TempDir(), Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	start := time.Now()
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	err = s.write(ctx, func(tx *sql.Tx) error {
		sessStmt, err := tx.PrepareContext(ctx, `INSERT INTO sessions (id, key, key_source, client, created_at, last_seen, turns) VALUES (?, ?, 'header', 'OpenAI/Python 1.40.0', ?, ?, ?)`)
		if err != nil {
			return err
		}
		turnStmt, err := tx.PrepareContext(ctx, `INSERT INTO turns (id, session_id, idx, type, created_at, state_changed_at, completion_tokens) VALUES (?, ?, ?, ?, ?, ?, 40) RETURNING seq`)
		if err != nil {
			return err
		}
		payStmt, err := tx.PrepareContext(ctx, `INSERT INTO turn_payloads (turn_seq, messages, response, response_text) VALUES (?, '[{"role":"user","content":"hello"}]', ?, ?)`)
		if err != nil {
			return err
		}
		judgeStmt, err := tx.PrepareContext(ctx, `INSERT INTO judgments (turn_id, session_id, score, created_at) VALUES (?, ?, 1, ?)`)
		if err != nil {
			return err
		}
		addSession := func(i, turns int) error {
			id, at := fmt.Sprintf("sess-%06d", i), t0.Add(time.Duration(i)*time.Minute)
			if _, err := sessStmt.ExecContext(ctx, id, fmt.Sprintf("conv-%06d", i), nanos(at), nanos(at.Add(time.Duration(turns)*time.Second)), turns); err != nil {
				return err
			}
			for k := range turns {
				typ := "main"
				if k%10 == 9 {
					typ = "side"
				}
				tid := fmt.Sprintf("chatcmpl-%06d-%05d", i, k)
				var seq int64
				if err := turnStmt.QueryRowContext(ctx, tid, id, k, typ, nanos(at), nanos(at)).Scan(&seq); err != nil {
					return err
				}
				text := fmt.Sprintf("answer %d of session %d", k, i)
				if _, err := payStmt.ExecContext(ctx, seq, `{"role":"assistant","content":"`+text+`"}`, text); err != nil {
					return err
				}
				if i%10 == 0 && typ == "main" {
					if _, err := judgeStmt.ExecContext(ctx, tid, id, nanos(at)); err != nil {
						return err
					}
				}
			}
			return nil
		}
		for i := range size.sessions {
			if err := addSession(i, browseTurnsPerSession); err != nil {
				return err
			}
		}
		return addSession(size.sessions, size.long)
	})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.writer.ExecContext(ctx, `ANALYZE`); err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded %d sessions, %d turns in %v", size.sessions+1, size.sessions*browseTurnsPerSession+size.long, time.Since(start).Round(time.Millisecond))
	return s
}

func BenchmarkBrowse(b *testing.B) {
	for _, size := range browseSizes {
		b.Run(size.name, func(b *testing.B) { benchBrowse(b, size) })
	}
}

func benchBrowse(b *testing.B, size browseSize) {
	s := seedBrowse(b, size)
	ctx := context.Background()
	first, err := s.ListSessions(ctx, store.SessionFilter{Limit: 50})
	if err != nil || len(first) != 50 || first[0].MainTurns != size.long*9/10 {
		b.Fatalf("first page: %d sessions, %v", len(first), err)
	}
	mid, err := s.ListSessions(ctx, store.SessionFilter{Limit: size.sessions / 2})
	if err != nil {
		b.Fatal(err)
	}
	deep := mid[len(mid)-1].Session
	long := first[0].ID
	cases := []struct {
		name string
		run  func() (int, error)
	}{
		{"sessions/first-page", func() (int, error) {
			r, err := s.ListSessions(ctx, store.SessionFilter{Limit: 50})
			return len(r), err
		}},
		{"sessions/page-halfway", func() (int, error) {
			r, err := s.ListSessions(ctx, store.SessionFilter{Limit: 50, BeforeSeen: deep.LastSeen, BeforeID: deep.ID})
			return len(r), err
		}},
		{"sessions/search-hit", func() (int, error) {
			r, err := s.ListSessions(ctx, store.SessionFilter{Query: "conv-00004", Limit: 50})
			return len(r), err
		}},
		{"sessions/search-miss", func() (int, error) {
			r, err := s.ListSessions(ctx, store.SessionFilter{Query: "nobody", Limit: 50})
			return len(r) + 1, err // nothing matches
		}},
		{"turns/short-session", func() (int, error) {
			r, err := s.ListTurnSummaries(ctx, store.TurnFilter{SessionID: "sess-000042", Limit: 51})
			return len(r), err
		}},
		{"turns/long-session-page", func() (int, error) {
			r, err := s.ListTurnSummaries(ctx, store.TurnFilter{SessionID: long, AfterID: int64(size.sessions*browseTurnsPerSession + size.long/2), Limit: 51})
			return len(r), err
		}},
		{"activity", func() (int, error) {
			a, err := s.Activity(ctx, time.Now().Add(-time.Hour))
			return a.Judged + 1, err
		}},
		{"stats", func() (int, error) {
			st, err := s.Stats(ctx)
			return st.Turns, err
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				n, err := c.run()
				if err != nil || n == 0 {
					b.Fatalf("%d rows, %v", n, err)
				}
			}
		})
	}
}
