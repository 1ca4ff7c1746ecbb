package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/clawrl/clawrl/store"
)

// The learning loop's part of the store (store.Learning): judgments, samples
// and versions, each written in one transaction with the turn's state change.

var _ store.LearningStore = (*Store)(nil)

const judgmentColumns = `j.turn_id, j.session_id, j.score, j.votes, j.hint, j.hint_accepted, j.judge, j.reason, j.keep, j.why, j.created_at, j.revised_at`

func scanJudgment(r rowScanner) (store.Judgment, error) {
	var j store.Judgment
	var votes string
	var accepted, keep int
	var created, revised int64
	if err := r.Scan(&j.TurnID, &j.SessionID, &j.Score, &votes, &j.Hint, &accepted, &j.Judge, &j.Reason, &keep, &j.Why, &created, &revised); err != nil {
		return j, err
	}
	j.HintAccepted, j.Keep, j.CreatedAt = accepted == 1, keep == 1, fromNanos(created)
	if revised != 0 {
		j.RevisedAt = fromNanos(revised)
	}
	if err := json.Unmarshal([]byte(votes), &j.Votes); err != nil {
		return j, fmt.Errorf("judgment of turn %s: decode votes: %w", j.TurnID, err)
	}
	return j, nil
}

const sampleColumns = `s.turn_id, s.session_id, s.method, s.use_rl, s.reward, s.teacher_logprobs, s.teacher_adapter,
	s.teacher_version, s.policy_version, s.why, s.created_at, s.trained_version, s.teacher_response_ids`

func scanSample(r rowScanner) (store.Sample, error) {
	var s store.Sample
	var useRL int
	var teacher, teacherResp []byte
	var created int64
	if err := r.Scan(&s.TurnID, &s.SessionID, &s.Method, &useRL, &s.Reward, &teacher, &s.TeacherAdapter,
		&s.TeacherVersion, &s.PolicyVersion, &s.Why, &created, &s.TrainedVersion, &teacherResp); err != nil {
		return s, err
	}
	s.UseRL, s.CreatedAt = useRL == 1, fromNanos(created)
	var err error
	if s.TeacherLogprobs, err = decodeFloat32s(teacher); err != nil {
		return s, fmt.Errorf("sample of turn %s: teacher logprobs: %w", s.TurnID, err)
	}
	if teacherResp != nil {
		if s.TeacherResponseIDs, err = decodeInt32s(teacherResp); err != nil {
			return s, fmt.Errorf("sample of turn %s: teacher response ids: %w", s.TurnID, err)
		}
	}
	return s, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// RecordJudgment implements store.Learning.
func (s *Store) RecordJudgment(ctx context.Context, j store.Judgment) error {
	if j.Score < -1 || j.Score > 1 {
		return fmt.Errorf("record judgment of turn %s: score %d out of range", j.TurnID, j.Score)
	}
	votes, err := jsonOrEmpty(j.Votes, "[]")
	if err != nil {
		return fmt.Errorf("record judgment of turn %s: encode votes: %w", j.TurnID, err)
	}
	if j.CreatedAt.IsZero() {
		j.CreatedAt = time.Now()
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		if err := s.transition(ctx, tx, j.TurnID, store.Observed, store.Judged, ""); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO judgments (turn_id, session_id, score, votes, hint, hint_accepted,
			judge, reason, keep, why, created_at) SELECT id, session_id, ?, ?, ?, ?, ?, ?, ?, ?, ? FROM turns WHERE id = ?`,
			j.Score, votes, j.Hint, b2i(j.HintAccepted), j.Judge, j.Reason, b2i(j.Keep), j.Why, nanos(j.CreatedAt), j.TurnID)
		return classify(err)
	})
	if err != nil {
		return fmt.Errorf("record judgment of turn %s: %w", j.TurnID, err)
	}
	return nil
}

// Judgment implements store.Learning.
func (s *Store) Judgment(ctx context.Context, turnID string) (store.Judgment, error) {
	j, err := scanJudgment(s.reader.QueryRowContext(ctx, `SELECT `+judgmentColumns+` FROM judgments j WHERE j.turn_id = ?`, turnID))
	if errors.Is(err, sql.ErrNoRows) {
		return j, fmt.Errorf("judgment of turn %s: %w", turnID, store.ErrNotFound)
	}
	if err != nil {
		return j, fmt.Errorf("judgment of turn %s: %w", turnID, err)
	}
	return j, nil
}

// turnWhere turns a TurnFilter into conditions on the turns table aliased t.
func turnWhere(f store.TurnFilter) (string, []any) {
	var where []string
	var args []any
	if f.AfterID > 0 {
		where = append(where, "t.seq > ?")
		args = append(args, f.AfterID)
	}
	if f.SessionID != "" {
		where = append(where, "t.session_id = ?")
		args = append(args, f.SessionID)
	}
	if f.Type != "" {
		where = append(where, "t.type = ?")
		args = append(args, string(f.Type))
	}
	if len(f.States) > 0 {
		where = append(where, "t.state IN (?"+strings.Repeat(", ?", len(f.States)-1)+")")
		for _, st := range f.States {
			args = append(args, string(st))
		}
	}
	if !f.Since.IsZero() {
		where = append(where, "t.created_at >= ?")
		args = append(args, nanos(f.Since))
	}
	q := ""
	if len(where) > 0 {
		q = " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY t.seq"
	if f.Newest {
		q += " DESC"
	}
	if f.Limit > 0 {
		q += " LIMIT ?"
		args = append(args, f.Limit)
	}
	return q, args
}

func queryAll[T any](ctx context.Context, db *sql.DB, what, q string, args []any, scan func(rowScanner) (T, error)) ([]T, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// ListJudgments implements store.Learning: the judgments of the turns f
// selects, in turn order.
func (s *Store) ListJudgments(ctx context.Context, f store.TurnFilter) ([]store.Judgment, error) {
	where, args := turnWhere(f)
	return queryAll(ctx, s.reader, "list judgments",
		`SELECT `+judgmentColumns+` FROM judgments j JOIN turns t ON t.id = j.turn_id`+where, args, scanJudgment)
}

// OutdatedByFeedback implements store.Learning.
func (s *Store) OutdatedByFeedback(ctx context.Context, limit int) ([]store.Judgment, error) {
	q := `SELECT ` + judgmentColumns + ` FROM judgments j JOIN turns t ON t.id = j.turn_id
		WHERE t.type = 'main' AND t.state IN ('judged', 'ready') AND t.feedback_rating IN (-1, 1)
		AND t.feedback_at > MAX(j.created_at, j.revised_at) ORDER BY t.seq`
	var args []any
	if limit > 0 {
		q += " LIMIT ?"
		args = append(args, limit)
	}
	return queryAll(ctx, s.reader, "judgments outdated by feedback", q, args, scanJudgment)
}

// ReviseJudgment implements store.Learning.
func (s *Store) ReviseJudgment(ctx context.Context, j store.Judgment, useRL bool, reward float64, sampleWhy string) error {
	if j.Score < -1 || j.Score > 1 {
		return fmt.Errorf("revise judgment of turn %s: score %d out of range", j.TurnID, j.Score)
	}
	votes, err := jsonOrEmpty(j.Votes, "[]")
	if err != nil {
		return fmt.Errorf("revise judgment of turn %s: encode votes: %w", j.TurnID, err)
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		var state string
		err := tx.QueryRowContext(ctx, `SELECT state FROM turns WHERE id = ?`, j.TurnID).Scan(&state)
		if errors.Is(err, sql.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		if st := store.TurnState(state); st != store.Judged && st != store.Ready {
			return fmt.Errorf("%w: turn is %s, want judged or ready", store.ErrConflict, st)
		}
		res, err := tx.ExecContext(ctx, `UPDATE judgments SET score = ?, votes = ?, reason = ?, keep = ?, why = ?, revised_at = ?
			WHERE turn_id = ?`, j.Score, votes, j.Reason, b2i(j.Keep), j.Why, nanos(time.Now()), j.TurnID)
		if err != nil {
			return classify(err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return store.ErrNotFound
		}
		if store.TurnState(state) == store.Ready {
			// A teacher-written sample stays OPD only (store.Learning).
			_, err = tx.ExecContext(ctx, `UPDATE samples SET
				use_rl = CASE WHEN teacher_response_ids IS NULL THEN ? ELSE 0 END,
				reward = CASE WHEN teacher_response_ids IS NULL THEN ? ELSE 0 END,
				why = ? WHERE turn_id = ?`,
				b2i(useRL), reward, sampleWhy, j.TurnID)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("revise judgment of turn %s: %w", j.TurnID, err)
	}
	return nil
}

// JudgedToSample implements store.Learning.
func (s *Store) JudgedToSample(ctx context.Context, limit int) ([]store.Judgment, error) {
	where, args := turnWhere(store.TurnFilter{States: []store.TurnState{store.Judged}, Limit: limit, Newest: true})
	where = strings.Replace(where, " WHERE ", " WHERE j.keep = 1 AND ", 1)
	return queryAll(ctx, s.reader, "judged turns to sample",
		`SELECT `+judgmentColumns+` FROM judgments j JOIN turns t ON t.id = j.turn_id`+where, args, scanJudgment)
}

// AddSample implements store.Learning.
func (s *Store) AddSample(ctx context.Context, smp store.Sample) error {
	if smp.CreatedAt.IsZero() {
		smp.CreatedAt = time.Now()
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		if err := s.transition(ctx, tx, smp.TurnID, store.Judged, store.Ready, ""); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO samples (turn_id, session_id, method, use_rl, reward, teacher_logprobs,
			teacher_adapter, teacher_version, policy_version, why, created_at, teacher_response_ids)
			SELECT id, session_id, ?, ?, ?, ?, ?, ?, policy_version, ?, ?, ? FROM turns WHERE id = ?`,
			smp.Method, b2i(smp.UseRL), smp.Reward, encodeFloat32s(smp.TeacherLogprobs), smp.TeacherAdapter,
			smp.TeacherVersion, smp.Why, nanos(smp.CreatedAt), teacherResponse(smp.TeacherResponseIDs), smp.TurnID)
		return classify(err)
	})
	if err != nil {
		return fmt.Errorf("add sample for turn %s: %w", smp.TurnID, err)
	}
	return nil
}

// DropTurn implements store.Learning.
func (s *Store) DropTurn(ctx context.Context, turnID, reason string) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		var state string
		err := tx.QueryRowContext(ctx, `SELECT state FROM turns WHERE id = ?`, turnID).Scan(&state)
		if errors.Is(err, sql.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		from := store.TurnState(state)
		if !store.CanTransition(from, store.Dropped) {
			return fmt.Errorf("%w: turn is %s", store.ErrConflict, from)
		}
		return s.transition(ctx, tx, turnID, from, store.Dropped, reason)
	})
	if err != nil {
		return fmt.Errorf("drop turn %s (%s): %w", turnID, reason, err)
	}
	return nil
}

// ReadySamples implements store.Learning. Samples and turns are read in one
// snapshot, so they always match.
func (s *Store) ReadySamples(ctx context.Context, limit int) ([]store.Sample, []store.Turn, error) {
	tx, err := s.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, nil, fmt.Errorf("ready samples: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only
	q := `SELECT ` + rowColumns + ` FROM turns t WHERE t.state = 'ready' ORDER BY t.seq`
	var args []any
	if limit > 0 {
		q += " LIMIT ?"
		args = append(args, limit)
	}
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("ready samples: %w", err)
	}
	var turns []store.Turn
	for rows.Next() {
		t, err := scanTurnRow(rows)
		if err != nil {
			rows.Close()
			return nil, nil, fmt.Errorf("ready samples: %w", err)
		}
		turns = append(turns, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("ready samples: %w", err)
	}
	if err := s.fillPayloadsTx(ctx, tx, turns); err != nil {
		return nil, nil, fmt.Errorf("ready samples: %w", err)
	}
	samples := make([]store.Sample, len(turns))
	for i, t := range turns {
		samples[i], err = scanSample(tx.QueryRowContext(ctx, `SELECT `+sampleColumns+` FROM samples s WHERE s.turn_id = ?`, t.ID))
		if err != nil {
			return nil, nil, fmt.Errorf("ready samples: turn %s: %w", t.ID, err)
		}
	}
	return samples, turns, nil
}

// ListSamples implements store.Learning.
func (s *Store) ListSamples(ctx context.Context, f store.TurnFilter) ([]store.Sample, error) {
	where, args := turnWhere(f)
	return queryAll(ctx, s.reader, "list samples",
		`SELECT `+sampleColumns+` FROM samples s JOIN turns t ON t.id = s.turn_id`+where, args, scanSample)
}

// CommitVersion implements store.Learning.
func (s *Store) CommitVersion(ctx context.Context, v store.Version, trained, stale []string, staleReason string) error {
	metrics, err := json.Marshal(v.Metrics)
	if err != nil {
		return fmt.Errorf("commit version %d: encode metrics: %w", v.Version, err)
	}
	if v.CreatedAt.IsZero() {
		v.CreatedAt = time.Now()
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		if err := insertVersion(ctx, tx, v, string(metrics)); err != nil {
			return err
		}
		for _, id := range trained {
			if err := s.transition(ctx, tx, id, store.Ready, store.Trained, ""); err != nil {
				return fmt.Errorf("turn %s: %w", id, err)
			}
			if _, err := tx.ExecContext(ctx, `UPDATE samples SET trained_version = ? WHERE turn_id = ?`, v.Version, id); err != nil {
				return err
			}
		}
		for _, id := range stale {
			if err := s.transition(ctx, tx, id, store.Ready, store.Dropped, staleReason); err != nil {
				return fmt.Errorf("stale turn %s: %w", id, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("commit version %d: %w", v.Version, err)
	}
	return nil
}

// insertVersion adds v's row, refusing a number that is not newer than the
// latest.
func insertVersion(ctx context.Context, tx *sql.Tx, v store.Version, metrics string) error {
	var latest int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM versions`).Scan(&latest); err != nil {
		return err
	}
	if v.Version <= latest {
		return fmt.Errorf("%w: version %d is not newer than %d", store.ErrConflict, v.Version, latest)
	}
	if v.Status == "" {
		v.Status = store.VersionPromoted
	}
	if v.Status != store.VersionPromoted && v.Status != store.VersionRejected {
		return fmt.Errorf("version %d: status %q: want %s or %s", v.Version, v.Status, store.VersionPromoted, store.VersionRejected)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO versions (version, dir, method, metrics, created_at, status, status_reason, source_version)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		v.Version, v.Dir, v.Method, metrics, nanos(v.CreatedAt), v.Status, v.StatusReason, v.SourceVersion); err != nil {
		return classify(err)
	}
	return nil
}

const versionColumns = `version, dir, method, metrics, created_at, status, status_reason, source_version`

func scanVersion(r rowScanner) (store.Version, error) {
	var v store.Version
	var metrics string
	var created int64
	if err := r.Scan(&v.Version, &v.Dir, &v.Method, &metrics, &created, &v.Status, &v.StatusReason, &v.SourceVersion); err != nil {
		return v, err
	}
	v.CreatedAt = fromNanos(created)
	if err := json.Unmarshal([]byte(metrics), &v.Metrics); err != nil {
		return v, fmt.Errorf("version %d: decode metrics: %w", v.Version, err)
	}
	return v, nil
}

// LatestVersion implements store.Learning.
func (s *Store) LatestVersion(ctx context.Context) (store.Version, error) {
	v, err := scanVersion(s.reader.QueryRowContext(ctx, `SELECT `+versionColumns+` FROM versions ORDER BY version DESC LIMIT 1`))
	if errors.Is(err, sql.ErrNoRows) {
		return v, fmt.Errorf("latest version: %w", store.ErrNotFound)
	}
	if err != nil {
		return v, fmt.Errorf("latest version: %w", err)
	}
	return v, nil
}

// ServedVersion implements store.Learning.
func (s *Store) ServedVersion(ctx context.Context) (store.Version, error) {
	v, err := scanVersion(s.reader.QueryRowContext(ctx, `SELECT `+versionColumns+` FROM versions WHERE status = 'promoted' ORDER BY version DESC LIMIT 1`))
	if errors.Is(err, sql.ErrNoRows) {
		return v, fmt.Errorf("served version: %w", store.ErrNotFound)
	}
	if err != nil {
		return v, fmt.Errorf("served version: %w", err)
	}
	return v, nil
}

// RequestServing implements store.Learning.
func (s *Store) RequestServing(ctx context.Context, v int64, action string) (store.ServingRequest, error) {
	r := store.ServingRequest{Version: v, Action: action, RequestedAt: time.Now()}
	if action != "promote" && action != "rollback" {
		return r, fmt.Errorf("serving request for version %d: action %q: want promote or rollback", v, action)
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM versions WHERE version = ?`, v).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return store.ErrNotFound
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO serving_requests (version, action, requested_at) VALUES (?, ?, ?)`, v, action, nanos(r.RequestedAt))
		if err != nil {
			return err
		}
		r.ID, err = res.LastInsertId()
		return err
	})
	if err != nil {
		return r, fmt.Errorf("serving request for version %d: %w", v, err)
	}
	return r, nil
}

// PendingServing implements store.Learning.
func (s *Store) PendingServing(ctx context.Context) (store.ServingRequest, error) {
	var r store.ServingRequest
	var at int64
	err := s.reader.QueryRowContext(ctx, `SELECT id, version, action, requested_at FROM serving_requests WHERE done_at = 0 ORDER BY id LIMIT 1`).
		Scan(&r.ID, &r.Version, &r.Action, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("pending serving request: %w", store.ErrNotFound)
	}
	if err != nil {
		return r, fmt.Errorf("pending serving request: %w", err)
	}
	r.RequestedAt = fromNanos(at)
	return r, nil
}

// CommitServing implements store.Learning.
func (s *Store) CommitServing(ctx context.Context, id int64, v store.Version, result string) error {
	metrics, err := json.Marshal(v.Metrics)
	if err != nil {
		return fmt.Errorf("commit serving request %d: encode metrics: %w", id, err)
	}
	if v.CreatedAt.IsZero() {
		v.CreatedAt = time.Now()
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		if err := finishServing(ctx, tx, id, result); err != nil {
			return err
		}
		return insertVersion(ctx, tx, v, string(metrics))
	})
	if err != nil {
		return fmt.Errorf("commit serving request %d (version %d): %w", id, v.Version, err)
	}
	return nil
}

// FailServing implements store.Learning.
func (s *Store) FailServing(ctx context.Context, id int64, result string) error {
	err := s.write(ctx, func(tx *sql.Tx) error { return finishServing(ctx, tx, id, result) })
	if err != nil {
		return fmt.Errorf("fail serving request %d: %w", id, err)
	}
	return nil
}

func finishServing(ctx context.Context, tx *sql.Tx, id int64, result string) error {
	res, err := tx.ExecContext(ctx, `UPDATE serving_requests SET done_at = ?, result = ? WHERE id = ? AND done_at = 0`, nanos(time.Now()), result, id)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return fmt.Errorf("%w: request %d is not pending", store.ErrConflict, id)
	}
	return nil
}

// Versions implements store.Learning: newest first.
func (s *Store) Versions(ctx context.Context, limit int) ([]store.Version, error) {
	q := `SELECT ` + versionColumns + ` FROM versions ORDER BY version DESC`
	var args []any
	if limit > 0 {
		q += " LIMIT ?"
		args = append(args, limit)
	}
	return queryAll(ctx, s.reader, "list versions", q, args, scanVersion)
}

// SessionsToSettle implements store.Learning.
func (s *Store) SessionsToSettle(ctx context.Context, limit int) ([]string, error) {
	q := `SELECT se.id FROM sessions se WHERE se.expired = 1
		AND EXISTS (SELECT 1 FROM turns t JOIN judgments j ON j.turn_id = t.id
			WHERE t.session_id = se.id AND t.type = 'main' AND t.state = 'judged' AND j.keep = 0)
		AND NOT EXISTS (SELECT 1 FROM turns t LEFT JOIN judgments j ON j.turn_id = t.id
			WHERE t.session_id = se.id AND t.type = 'main'
			AND (t.state = 'observed' OR (t.state = 'judged' AND j.keep = 1)))
		ORDER BY se.seq`
	var args []any
	if limit > 0 {
		q += " LIMIT ?"
		args = append(args, limit)
	}
	return queryAll(ctx, s.reader, "sessions to settle", q, args, func(r rowScanner) (string, error) {
		var id string
		return id, r.Scan(&id)
	})
}

// LearningStats implements store.Learning.
func (s *Store) LearningStats(ctx context.Context) (store.LearningStats, error) {
	st := store.LearningStats{DroppedBy: map[string]int{}}
	tx, err := s.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return st, fmt.Errorf("learning stats: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(hint_accepted), 0) FROM judgments`).
		Scan(&st.Judgments, &st.HintsAccepted); err != nil {
		return st, fmt.Errorf("learning stats: judgments: %w", err)
	}
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(trained_version > 0), 0) FROM samples`).
		Scan(&st.SamplesTotal, &st.Trained); err != nil {
		return st, fmt.Errorf("learning stats: samples: %w", err)
	}
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM turns WHERE state = 'ready'`).Scan(&st.SamplesReady); err != nil {
		return st, fmt.Errorf("learning stats: ready: %w", err)
	}
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM turns t JOIN judgments j ON j.turn_id = t.id
		WHERE t.state = 'judged' AND j.keep = 1`).Scan(&st.SamplesPending); err != nil {
		return st, fmt.Errorf("learning stats: pending: %w", err)
	}
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM versions`).Scan(&st.Versions); err != nil {
		return st, fmt.Errorf("learning stats: versions: %w", err)
	}
	// Drop reasons carry numbers (versions, sizes); group by their kind,
	// the text before the first colon.
	rows, err := tx.QueryContext(ctx, `SELECT drop_reason, COUNT(*) FROM turns WHERE state = 'dropped' GROUP BY drop_reason`)
	if err != nil {
		return st, fmt.Errorf("learning stats: drops: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var reason string
		var n int
		if err := rows.Scan(&reason, &n); err != nil {
			return st, fmt.Errorf("learning stats: drops: %w", err)
		}
		kind, _, _ := strings.Cut(reason, ":")
		st.DroppedBy[kind] += n
	}
	if err := rows.Err(); err != nil {
		return st, fmt.Errorf("learning stats: drops: %w", err)
	}
	v, err := scanVersion(tx.QueryRowContext(ctx, `SELECT `+versionColumns+` FROM versions ORDER BY version DESC LIMIT 1`))
	switch {
	case err == nil:
		st.Latest = &v
	case !errors.Is(err, sql.ErrNoRows):
		return st, fmt.Errorf("learning stats: latest version: %w", err)
	}
	return st, nil
}

// teacherResponse stores nil (the turn's own response) as NULL.
func teacherResponse(ids []int32) []byte {
	if ids == nil {
		return nil
	}
	return encodeInt32s(ids)
}
