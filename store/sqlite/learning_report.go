package sqlite

import (
	"context"
	"strings"

	"github.com/clawrl/clawrl/store"
)

// What `clawrl export` and `clawrl status` show of the learning loop
// (store.Annotator and store.Reporter); package store shapes the fields.

var (
	_ store.Annotator = (*Store)(nil)
	_ store.Reporter  = (*Store)(nil)
)

// AnnotateTurns implements store.Annotator (store.Annotations).
func (s *Store) AnnotateTurns(ctx context.Context, turnIDs []string) (map[string]map[string]any, error) {
	if len(turnIDs) == 0 {
		return map[string]map[string]any{}, nil
	}
	in := "(?" + strings.Repeat(", ?", len(turnIDs)-1) + ")"
	args := make([]any, len(turnIDs))
	for i, id := range turnIDs {
		args[i] = id
	}
	judgments, err := queryAll(ctx, s.reader, "annotate judgments",
		`SELECT `+judgmentColumns+` FROM judgments j WHERE j.turn_id IN `+in, args, scanJudgment)
	if err != nil {
		return nil, err
	}
	samples, err := queryAll(ctx, s.reader, "annotate samples",
		`SELECT `+sampleColumns+` FROM samples s WHERE s.turn_id IN `+in, args, scanSample)
	if err != nil {
		return nil, err
	}
	return store.Annotations(judgments, samples), nil
}

// Report implements store.Reporter (store.LearningReport).
func (s *Store) Report(ctx context.Context) (map[string]any, error) {
	return store.LearningReport(ctx, s)
}
