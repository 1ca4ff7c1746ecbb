package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/clawrl/clawrl/store"
)

// The dashboard's read-only queries (store.Browser). Each reads one page
// through an index (0005_browse.sql), never the whole table.

var _ store.Browser = (*Store)(nil)

var likeEscaper = strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`)

// ListSessions implements store.Browser.
func (s *Store) ListSessions(ctx context.Context, f store.SessionFilter) ([]store.SessionSummary, error) {
	var where []string
	var args []any
	if q := strings.TrimSpace(f.Query); q != "" {
		// LIKE is case-insensitive for ASCII and cheaper than lower() on
		// every row; the query's own % and _ are escaped, so it is text to
		// find, not a pattern.
		where = append(where, `(se.key LIKE ?1 ESCAPE '\' OR se.id LIKE ?1 ESCAPE '\' OR se.client LIKE ?1 ESCAPE '\')`)
		args = append(args, "%"+likeEscaper.Replace(q)+"%")
	}
	if !f.BeforeSeen.IsZero() {
		n := len(args)
		// A row value, not an OR: SQLite seeks the index to it.
		where = append(where, fmt.Sprintf("(se.last_seen, se.id) < (?%d, ?%d)", n+1, n+2))
		args = append(args, nanos(f.BeforeSeen), f.BeforeID)
	}
	// sessions.turns counts every turn; only the side turns (few, in any
	// session) are counted, through turns_by_session_type, so a session of
	// 20k turns costs what a short one does.
	q := `SELECT ` + sessionColumnsAs("se") + `,
		(SELECT COUNT(*) FROM turns t WHERE t.session_id = se.id AND t.type = 'side')
		FROM sessions se INDEXED BY sessions_by_activity`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY se.last_seen DESC, se.id DESC"
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT ?%d", len(args)+1)
		args = append(args, f.Limit)
	}
	return queryAll(ctx, s.reader, "list sessions", q, args, func(r rowScanner) (store.SessionSummary, error) {
		var sum store.SessionSummary
		var created, seen int64
		var expired int
		ss := &sum.Session
		if err := r.Scan(&ss.ID, &ss.Key, &ss.KeySource, &ss.Epoch, &ss.Client, &created, &seen, &ss.Turns, &expired,
			&sum.SideTurns); err != nil {
			return sum, err
		}
		sum.MainTurns = ss.Turns - sum.SideTurns
		ss.CreatedAt, ss.LastSeen, ss.Expired = fromNanos(created), fromNanos(seen), expired != 0
		return sum, nil
	})
}

func sessionColumnsAs(alias string) string {
	cols := strings.Split(sessionColumns, ", ")
	for i, c := range cols {
		cols[i] = alias + "." + c
	}
	return strings.Join(cols, ", ")
}

// ListTurnSummaries implements store.Browser: turns without payloads, with
// their judgment's verdict and the version that trained their sample.
func (s *Store) ListTurnSummaries(ctx context.Context, f store.TurnFilter) ([]store.TurnSummary, error) {
	where, args := turnWhere(f)
	q := fmt.Sprintf(`SELECT t.seq, t.id, t.session_id, t.idx, t.type, t.state, t.created_at, t.policy_version,
		t.finish_reason, t.prompt_tokens, t.completion_tokens, t.total_ns,
		t.feedback_rating, t.feedback_text, t.feedback_at, t.drop_reason,
		substr(COALESCE(NULLIF(json_extract(p.response, '$.content'), ''),
			json_extract(p.response, '$.tool_calls[0].function.name'), ''), 1, %d),
		j.score, j.hint_accepted, COALESCE(smp.trained_version, 0)
		FROM turns t
		LEFT JOIN turn_payloads p ON p.turn_seq = t.seq
		LEFT JOIN judgments j ON j.turn_id = t.id
		LEFT JOIN samples smp ON smp.turn_id = t.id`, store.PreviewRunes) + where
	return queryAll(ctx, s.reader, "list turn summaries", q, args, func(r rowScanner) (store.TurnSummary, error) {
		var t store.TurnSummary
		var typ, state string
		var created int64
		var fbRating, fbAt, score, accepted sql.NullInt64
		var fbText, preview sql.NullString
		if err := r.Scan(&t.Seq, &t.ID, &t.SessionID, &t.Index, &typ, &state, &created, &t.PolicyVersion,
			&t.FinishReason, &t.PromptTokens, &t.CompletionTokens, &t.TotalNanos,
			&fbRating, &fbText, &fbAt, &t.DropReason, &preview, &score, &accepted, &t.TrainedVersion); err != nil {
			return t, err
		}
		t.Type, t.State, t.CreatedAt, t.Preview = store.TurnType(typ), store.TurnState(state), fromNanos(created), preview.String
		if fbRating.Valid || fbText.Valid {
			t.Feedback = &store.Feedback{Rating: int(fbRating.Int64), Text: fbText.String, CreatedAt: fromNanos(fbAt.Int64)}
		}
		t.Judged, t.Score, t.HintAccepted = score.Valid, int(score.Int64), accepted.Int64 == 1
		return t, nil
	})
}

// Sample implements store.Browser.
func (s *Store) Sample(ctx context.Context, turnID string) (store.Sample, error) {
	smp, err := scanSample(s.reader.QueryRowContext(ctx, `SELECT `+sampleColumns+` FROM samples s WHERE s.turn_id = ?`, turnID))
	if errors.Is(err, sql.ErrNoRows) {
		return smp, fmt.Errorf("sample of turn %s: %w", turnID, store.ErrNotFound)
	}
	if err != nil {
		return smp, fmt.Errorf("sample of turn %s: %w", turnID, err)
	}
	return smp, nil
}

// Activity implements store.Browser, in one read transaction so the counts
// agree.
func (s *Store) Activity(ctx context.Context, since time.Time) (store.Activity, error) {
	a := store.Activity{Since: since}
	tx, err := s.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return a, fmt.Errorf("activity: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only
	at := nanos(since)
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM judgments WHERE created_at >= ?`, at).Scan(&a.Judged); err != nil {
		return a, fmt.Errorf("activity: judgments: %w", err)
	}
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM samples WHERE created_at >= ?`, at).Scan(&a.Sampled); err != nil {
		return a, fmt.Errorf("activity: samples: %w", err)
	}
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(json_extract(metrics, '$.samples')), 0)
		FROM versions WHERE created_at >= ?`, at).Scan(&a.Versions, &a.Trained); err != nil {
		return a, fmt.Errorf("activity: versions: %w", err)
	}
	return a, nil
}
