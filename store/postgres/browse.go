package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clawrl/clawrl/store"
)

// The dashboard's read-only queries (store.Browser), each one page through
// an index (migrations/0002_browse.sql).

var _ store.Browser = (*Store)(nil)

var likeEscaper = strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`)

// ListSessions implements store.Browser.
func (s *Store) ListSessions(ctx context.Context, f store.SessionFilter) ([]store.SessionSummary, error) {
	var where []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if q := strings.TrimSpace(f.Query); q != "" {
		// ILIKE: case-insensitive; the query's own % and _ are text to find.
		p := arg("%" + likeEscaper.Replace(q) + "%")
		where = append(where, "(se.key ILIKE "+p+" OR se.id ILIKE "+p+" OR se.client ILIKE "+p+")")
	}
	if !f.BeforeSeen.IsZero() {
		where = append(where, "(se.last_seen, se.id) < ("+arg(nanos(f.BeforeSeen))+", "+arg(f.BeforeID)+")")
	}
	q := `SELECT se.id, se.key, se.key_source, se.epoch, se.client, se.created_at, se.last_seen, se.turns, se.expired,
		(SELECT COUNT(*) FROM turns t WHERE t.session_id = se.id AND t.type = 'side') FROM sessions se`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY se.last_seen DESC, se.id DESC"
	if f.Limit > 0 {
		q += " LIMIT " + arg(f.Limit)
	}
	return queryAll(ctx, s, "list sessions", q, args, func(r pgx.Row) (store.SessionSummary, error) {
		var sum store.SessionSummary
		var created, seen int64
		ss := &sum.Session
		if err := r.Scan(&ss.ID, &ss.Key, &ss.KeySource, &ss.Epoch, &ss.Client, &created, &seen, &ss.Turns, &ss.Expired,
			&sum.SideTurns); err != nil {
			return sum, err
		}
		sum.MainTurns = ss.Turns - sum.SideTurns
		ss.CreatedAt, ss.LastSeen = fromNanos(created), fromNanos(seen)
		return sum, nil
	})
}

// ListTurnSummaries implements store.Browser: turns without their token
// ids, with their judgment's verdict and the version that trained them.
func (s *Store) ListTurnSummaries(ctx context.Context, f store.TurnFilter) ([]store.TurnSummary, error) {
	where, args := turnWhere(f)
	q := fmt.Sprintf(`SELECT t.seq, t.id, t.session_id, t.idx, t.type, t.state, t.created_at, t.policy_version,
		t.finish_reason, t.prompt_tokens, t.completion_tokens, t.total_ns,
		t.feedback_rating, t.feedback_text, t.feedback_at, t.drop_reason,
		left(COALESCE(NULLIF(t.response::jsonb->>'content', ''), t.response::jsonb#>>'{tool_calls,0,function,name}', ''), %d),
		j.score, j.hint_accepted, COALESCE(smp.trained_version, 0)
		FROM turns t
		LEFT JOIN judgments j ON j.turn_id = t.id
		LEFT JOIN samples smp ON smp.turn_id = t.id`, store.PreviewRunes) + where
	return queryAll(ctx, s, "list turn summaries", q, args, func(r pgx.Row) (store.TurnSummary, error) {
		var t store.TurnSummary
		var typ, state string
		var created int64
		var fbRating, score *int32
		var fbAt *int64
		var fbText *string
		var accepted *bool
		if err := r.Scan(&t.Seq, &t.ID, &t.SessionID, &t.Index, &typ, &state, &created, &t.PolicyVersion,
			&t.FinishReason, &t.PromptTokens, &t.CompletionTokens, &t.TotalNanos,
			&fbRating, &fbText, &fbAt, &t.DropReason, &t.Preview, &score, &accepted, &t.TrainedVersion); err != nil {
			return t, err
		}
		t.Type, t.State, t.CreatedAt = store.TurnType(typ), store.TurnState(state), fromNanos(created)
		if fbRating != nil || fbText != nil {
			f := &store.Feedback{}
			if fbRating != nil {
				f.Rating = int(*fbRating)
			}
			if fbText != nil {
				f.Text = *fbText
			}
			if fbAt != nil {
				f.CreatedAt = fromNanos(*fbAt)
			}
			t.Feedback = f
		}
		if score != nil {
			t.Judged, t.Score = true, int(*score)
		}
		t.HintAccepted = accepted != nil && *accepted
		return t, nil
	})
}

// Sample implements store.Browser.
func (s *Store) Sample(ctx context.Context, turnID string) (store.Sample, error) {
	smp, err := scanSample(s.pool.QueryRow(ctx, `SELECT `+sampleColumns+` FROM samples s WHERE s.turn_id = $1`, turnID))
	if errors.Is(err, pgx.ErrNoRows) {
		return smp, fmt.Errorf("sample of turn %s: %w", turnID, store.ErrNotFound)
	}
	if err != nil {
		return smp, fmt.Errorf("sample of turn %s: %w", turnID, err)
	}
	return smp, nil
}

// Activity implements store.Browser, from one snapshot.
func (s *Store) Activity(ctx context.Context, since time.Time) (store.Activity, error) {
	a := store.Activity{Since: since}
	at := nanos(since)
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM judgments WHERE created_at >= $1`, at).Scan(&a.Judged); err != nil {
			return fmt.Errorf("judgments: %w", err)
		}
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM samples WHERE created_at >= $1`, at).Scan(&a.Sampled); err != nil {
			return fmt.Errorf("samples: %w", err)
		}
		if err := tx.QueryRow(ctx, `SELECT COUNT(*), COALESCE(SUM((metrics::jsonb->>'samples')::bigint), 0)
			FROM versions WHERE created_at >= $1`, at).Scan(&a.Versions, &a.Trained); err != nil {
			return fmt.Errorf("versions: %w", err)
		}
		return nil
	})
	if err != nil {
		return a, fmt.Errorf("activity: %w", err)
	}
	return a, nil
}
