package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/clawrl/clawrl/store"
)

// Stats counts sessions and turns: the turn counts read the state index,
// the policy version only the newest row, so status and /metrics stay cheap
// as the tables grow.
func (s *Store) Stats(ctx context.Context) (store.Stats, error) {
	st := store.Stats{TurnsByState: map[store.TurnState]int{}, TurnsByType: map[store.TurnType]int{}}
	// One read transaction, so the numbers agree with each other.
	tx, err := s.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return st, fmt.Errorf("stats: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only; nothing to undo
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(expired), 0) FROM sessions`).
		Scan(&st.Sessions, &st.ExpiredSessions); err != nil {
		return st, fmt.Errorf("stats: count sessions: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT state, type, COUNT(*) FROM turns GROUP BY state, type`)
	if err != nil {
		return st, fmt.Errorf("stats: count turns: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var state, typ string
		var n int
		if err := rows.Scan(&state, &typ, &n); err != nil {
			return st, fmt.Errorf("stats: count turns: %w", err)
		}
		st.Turns += n
		st.TurnsByState[store.TurnState(state)] += n
		st.TurnsByType[store.TurnType(typ)] += n
		if store.TurnType(typ) == store.Main {
			switch store.TurnState(state) {
			case store.Observed:
				st.AwaitingJudge += n
			case store.Ready:
				st.AwaitingTrainer += n
			}
		}
	}
	if err := rows.Err(); err != nil {
		return st, fmt.Errorf("stats: count turns: %w", err)
	}
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE((SELECT policy_version FROM turns ORDER BY seq DESC LIMIT 1), 0)`).Scan(&st.PolicyVersion); err != nil {
		return st, fmt.Errorf("stats: policy version: %w", err)
	}
	return st, nil
}

// MaxSeq is the row order of the newest turn (0 when there is none): a
// reader that wants a stable end, like export, stops there.
func (s *Store) MaxSeq(ctx context.Context) (int64, error) {
	var seq int64
	if err := s.reader.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM turns`).Scan(&seq); err != nil {
		return 0, fmt.Errorf("newest turn of %s: %w", s.path, err)
	}
	return seq, nil
}
