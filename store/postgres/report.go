package postgres

import (
	"context"
	"fmt"

	"github.com/clawrl/clawrl/store"
)

// What `clawrl export` and `clawrl status` read beyond the Store interface
// (store.Annotator, store.Reporter, the newest row order); package store
// shapes the fields, so both backends report the same.

var (
	_ store.Annotator = (*Store)(nil)
	_ store.Reporter  = (*Store)(nil)
)

// AnnotateTurns implements store.Annotator (store.Annotations).
func (s *Store) AnnotateTurns(ctx context.Context, turnIDs []string) (map[string]map[string]any, error) {
	if len(turnIDs) == 0 {
		return map[string]map[string]any{}, nil
	}
	judgments, err := queryAll(ctx, s, "annotate judgments",
		`SELECT `+judgmentColumns+` FROM judgments j WHERE j.turn_id = ANY($1)`, []any{turnIDs}, scanJudgment)
	if err != nil {
		return nil, err
	}
	samples, err := queryAll(ctx, s, "annotate samples",
		`SELECT `+sampleColumns+` FROM samples s WHERE s.turn_id = ANY($1)`, []any{turnIDs}, scanSample)
	if err != nil {
		return nil, err
	}
	return store.Annotations(judgments, samples), nil
}

// Report implements store.Reporter (store.LearningReport).
func (s *Store) Report(ctx context.Context) (map[string]any, error) {
	return store.LearningReport(ctx, s)
}

// MaxSeq is the row order of the newest turn (0 when there is none): a
// reader that wants a stable end, like export, stops there.
func (s *Store) MaxSeq(ctx context.Context) (int64, error) {
	var seq int64
	if err := s.pool.QueryRow(ctx, `SELECT COALESCE(MAX(seq), 0) FROM turns`).Scan(&seq); err != nil {
		return 0, fmt.Errorf("newest turn of %s: %w", s.url, err)
	}
	return seq, nil
}
