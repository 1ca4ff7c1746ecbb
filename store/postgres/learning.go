package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clawrl/clawrl/store"
)

// The learning loop's part of the store (store.Learning): judgments, samples
// and versions, each written in one transaction with the turn's state change.

const judgmentColumns = `j.turn_id, j.session_id, j.score, j.votes, j.hint, j.hint_accepted, j.judge, j.reason, j.keep, j.why, j.created_at, j.revised_at`

func scanJudgment(r pgx.Row) (store.Judgment, error) {
	var j store.Judgment
	var votes string
	var created, revised int64
	if err := r.Scan(&j.TurnID, &j.SessionID, &j.Score, &votes, &j.Hint, &j.HintAccepted, &j.Judge, &j.Reason, &j.Keep, &j.Why, &created, &revised); err != nil {
		return j, err
	}
	j.CreatedAt = fromNanos(created)
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

func scanSample(r pgx.Row) (store.Sample, error) {
	var s store.Sample
	var created int64
	if err := r.Scan(&s.TurnID, &s.SessionID, &s.Method, &s.UseRL, &s.Reward, &s.TeacherLogprobs, &s.TeacherAdapter,
		&s.TeacherVersion, &s.PolicyVersion, &s.Why, &created, &s.TrainedVersion, &s.TeacherResponseIDs); err != nil {
		return s, err
	}
	s.CreatedAt = fromNanos(created)
	return s, nil
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
	err = s.write(ctx, func(tx pgx.Tx) error {
		if err := transition(ctx, tx, j.TurnID, store.Observed, store.Judged, ""); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO judgments (turn_id, session_id, score, votes, hint, hint_accepted,
			judge, reason, keep, why, created_at) SELECT id, session_id, $1, $2, $3, $4, $5, $6, $7, $8, $9 FROM turns WHERE id = $10`,
			j.Score, votes, j.Hint, j.HintAccepted, j.Judge, j.Reason, j.Keep, j.Why, nanos(j.CreatedAt), j.TurnID)
		return classify(err)
	})
	if err != nil {
		return fmt.Errorf("record judgment of turn %s: %w", j.TurnID, err)
	}
	return nil
}

// Judgment implements store.Learning.
func (s *Store) Judgment(ctx context.Context, turnID string) (store.Judgment, error) {
	j, err := scanJudgment(s.pool.QueryRow(ctx, `SELECT `+judgmentColumns+` FROM judgments j WHERE j.turn_id = $1`, turnID))
	if errors.Is(err, pgx.ErrNoRows) {
		return j, fmt.Errorf("judgment of turn %s: %w", turnID, store.ErrNotFound)
	}
	if err != nil {
		return j, fmt.Errorf("judgment of turn %s: %w", turnID, err)
	}
	return j, nil
}

// ListJudgments implements store.Learning.
func (s *Store) ListJudgments(ctx context.Context, f store.TurnFilter) ([]store.Judgment, error) {
	where, args := turnWhere(f)
	return queryAll(ctx, s, "list judgments",
		`SELECT `+judgmentColumns+` FROM judgments j JOIN turns t ON t.id = j.turn_id`+where, args, scanJudgment)
}

// limitClause appends LIMIT $n when limit is positive.
func limitClause(q string, args []any, limit int) (string, []any) {
	if limit > 0 {
		args = append(args, limit)
		q += " LIMIT $" + strconv.Itoa(len(args))
	}
	return q, args
}

// OutdatedByFeedback implements store.Learning.
func (s *Store) OutdatedByFeedback(ctx context.Context, limit int) ([]store.Judgment, error) {
	q, args := limitClause(`SELECT `+judgmentColumns+` FROM judgments j JOIN turns t ON t.id = j.turn_id
		WHERE t.type = 'main' AND t.state IN ('judged', 'ready') AND t.feedback_rating IN (-1, 1)
		AND t.feedback_at > GREATEST(j.created_at, j.revised_at) ORDER BY t.seq`, nil, limit)
	return queryAll(ctx, s, "judgments outdated by feedback", q, args, scanJudgment)
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
	err = s.write(ctx, func(tx pgx.Tx) error {
		state, err := lockState(ctx, tx, j.TurnID)
		if err != nil {
			return err
		}
		if state != store.Judged && state != store.Ready {
			return fmt.Errorf("%w: turn is %s, want judged or ready", store.ErrConflict, state)
		}
		tag, err := tx.Exec(ctx, `UPDATE judgments SET score = $1, votes = $2, reason = $3, keep = $4, why = $5, revised_at = $6
			WHERE turn_id = $7`, j.Score, votes, j.Reason, j.Keep, j.Why, nanos(time.Now()), j.TurnID)
		if err != nil {
			return classify(err)
		}
		if tag.RowsAffected() == 0 {
			return store.ErrNotFound
		}
		if state == store.Ready {
			// A teacher-written sample stays OPD only (store.Learning).
			_, err = tx.Exec(ctx, `UPDATE samples SET
				use_rl = CASE WHEN teacher_response_ids IS NULL THEN $1 ELSE false END,
				reward = CASE WHEN teacher_response_ids IS NULL THEN $2 ELSE 0 END,
				why = $3 WHERE turn_id = $4`,
				useRL, reward, sampleWhy, j.TurnID)
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
	where, args := turnWhere(store.TurnFilter{States: []store.TurnState{store.Judged}, Limit: limit, Newest: true}, "j.keep")
	return queryAll(ctx, s, "judged turns to sample",
		`SELECT `+judgmentColumns+` FROM judgments j JOIN turns t ON t.id = j.turn_id`+where, args, scanJudgment)
}

// AddSample implements store.Learning.
func (s *Store) AddSample(ctx context.Context, smp store.Sample) error {
	if smp.CreatedAt.IsZero() {
		smp.CreatedAt = time.Now()
	}
	err := s.write(ctx, func(tx pgx.Tx) error {
		if err := transition(ctx, tx, smp.TurnID, store.Judged, store.Ready, ""); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO samples (turn_id, session_id, method, use_rl, reward, teacher_logprobs,
			teacher_adapter, teacher_version, policy_version, why, created_at, teacher_response_ids)
			SELECT id, session_id, $1, $2, $3, $4, $5, $6, policy_version, $7, $8, $10 FROM turns WHERE id = $9`,
			smp.Method, smp.UseRL, smp.Reward, smp.TeacherLogprobs, smp.TeacherAdapter,
			smp.TeacherVersion, smp.Why, nanos(smp.CreatedAt), smp.TurnID, smp.TeacherResponseIDs)
		return classify(err)
	})
	if err != nil {
		return fmt.Errorf("add sample for turn %s: %w", smp.TurnID, err)
	}
	return nil
}

// DropTurn implements store.Learning.
func (s *Store) DropTurn(ctx context.Context, turnID, reason string) error {
	err := s.write(ctx, func(tx pgx.Tx) error {
		from, err := lockState(ctx, tx, turnID)
		if err != nil {
			return err
		}
		if !store.CanTransition(from, store.Dropped) {
			return fmt.Errorf("%w: turn is %s", store.ErrConflict, from)
		}
		return transition(ctx, tx, turnID, from, store.Dropped, reason)
	})
	if err != nil {
		return fmt.Errorf("drop turn %s (%s): %w", turnID, reason, err)
	}
	return nil
}

// ReadySamples implements store.Learning: samples and turns from one
// snapshot, so they always match.
func (s *Store) ReadySamples(ctx context.Context, limit int) ([]store.Sample, []store.Turn, error) {
	var samples []store.Sample
	var turns []store.Turn
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		q, args := limitClause(`SELECT `+turnColumns+` FROM turns t WHERE t.state = 'ready' ORDER BY t.seq`, nil, limit)
		rows, err := tx.Query(ctx, q, args...)
		if err != nil {
			return err
		}
		turns, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Turn, error) { return scanTurn(r) })
		if err != nil || len(turns) == 0 {
			return err
		}
		ids := make([]string, len(turns))
		for i, t := range turns {
			ids[i] = t.ID
		}
		rows, err = tx.Query(ctx, `SELECT `+sampleColumns+` FROM samples s WHERE s.turn_id = ANY($1)`, ids)
		if err != nil {
			return err
		}
		byTurn := map[string]store.Sample{}
		_, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (struct{}, error) {
			smp, err := scanSample(r)
			byTurn[smp.TurnID] = smp
			return struct{}{}, err
		})
		if err != nil {
			return err
		}
		samples = make([]store.Sample, len(turns))
		for i, t := range turns {
			smp, ok := byTurn[t.ID]
			if !ok {
				return fmt.Errorf("turn %s is ready but has no sample", t.ID)
			}
			samples[i] = smp
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("ready samples: %w", err)
	}
	return samples, turns, nil
}

// ListSamples implements store.Learning.
func (s *Store) ListSamples(ctx context.Context, f store.TurnFilter) ([]store.Sample, error) {
	where, args := turnWhere(f)
	return queryAll(ctx, s, "list samples",
		`SELECT `+sampleColumns+` FROM samples s JOIN turns t ON t.id = s.turn_id`+where, args, scanSample)
}

// CommitVersion implements store.Learning. The versions table is locked
// for the transaction, so two trainers cannot both commit version N, and
// every trained turn must still be ready: a turn trained by anyone else
// fails the whole commit, which changes nothing.
func (s *Store) CommitVersion(ctx context.Context, v store.Version, trained, stale []string, staleReason string) error {
	metrics, err := json.Marshal(v.Metrics)
	if err != nil {
		return fmt.Errorf("commit version %d: encode metrics: %w", v.Version, err)
	}
	if v.CreatedAt.IsZero() {
		v.CreatedAt = time.Now()
	}
	err = s.write(ctx, func(tx pgx.Tx) error {
		if err := insertVersion(ctx, tx, v, string(metrics)); err != nil {
			return err
		}
		for _, id := range trained {
			if err := transition(ctx, tx, id, store.Ready, store.Trained, ""); err != nil {
				return fmt.Errorf("turn %s: %w", id, err)
			}
		}
		if len(trained) > 0 {
			if _, err := tx.Exec(ctx, `UPDATE samples SET trained_version = $1 WHERE turn_id = ANY($2)`, v.Version, trained); err != nil {
				return err
			}
		}
		for _, id := range stale {
			if err := transition(ctx, tx, id, store.Ready, store.Dropped, staleReason); err != nil {
				return fmt.Errorf("stale turn %s: %w", id, err)
			}
		}
		_, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, ChannelVersions, strconv.FormatInt(v.Version, 10))
		return err
	})
	if err != nil {
		return fmt.Errorf("commit version %d: %w", v.Version, err)
	}
	return nil
}

// insertVersion adds v's row under an exclusive lock on the versions table
// (so two trainers cannot both record version N), refusing a number that is
// not newer than the latest, and wakes the gateways.
func insertVersion(ctx context.Context, tx pgx.Tx, v store.Version, metrics string) error {
	if _, err := tx.Exec(ctx, `LOCK TABLE versions IN EXCLUSIVE MODE`); err != nil {
		return err
	}
	var latest int64
	if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM versions`).Scan(&latest); err != nil {
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
	if _, err := tx.Exec(ctx, `INSERT INTO versions (version, dir, method, metrics, created_at, status, status_reason, source_version)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		v.Version, v.Dir, v.Method, metrics, nanos(v.CreatedAt), v.Status, v.StatusReason, v.SourceVersion); err != nil {
		return classify(err)
	}
	return nil
}

const versionColumns = `version, dir, method, metrics, created_at, status, status_reason, source_version`

func scanVersion(r pgx.Row) (store.Version, error) {
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
	v, err := scanVersion(s.pool.QueryRow(ctx, `SELECT `+versionColumns+` FROM versions ORDER BY version DESC LIMIT 1`))
	if errors.Is(err, pgx.ErrNoRows) {
		return v, fmt.Errorf("latest version: %w", store.ErrNotFound)
	}
	if err != nil {
		return v, fmt.Errorf("latest version: %w", err)
	}
	return v, nil
}

// ServedVersion implements store.Learning.
func (s *Store) ServedVersion(ctx context.Context) (store.Version, error) {
	v, err := scanVersion(s.pool.QueryRow(ctx, `SELECT `+versionColumns+` FROM versions WHERE status = 'promoted' ORDER BY version DESC LIMIT 1`))
	if errors.Is(err, pgx.ErrNoRows) {
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
	err := s.write(ctx, func(tx pgx.Tx) error {
		var n int
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM versions WHERE version = $1`, v).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return store.ErrNotFound
		}
		return tx.QueryRow(ctx, `INSERT INTO serving_requests (version, action, requested_at) VALUES ($1, $2, $3) RETURNING id`,
			v, action, nanos(r.RequestedAt)).Scan(&r.ID)
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
	err := s.pool.QueryRow(ctx, `SELECT id, version, action, requested_at FROM serving_requests WHERE done_at = 0 ORDER BY id LIMIT 1`).
		Scan(&r.ID, &r.Version, &r.Action, &at)
	if errors.Is(err, pgx.ErrNoRows) {
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
	err = s.write(ctx, func(tx pgx.Tx) error {
		if err := finishServing(ctx, tx, id, result); err != nil {
			return err
		}
		if err := insertVersion(ctx, tx, v, string(metrics)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, ChannelVersions, strconv.FormatInt(v.Version, 10))
		return err
	})
	if err != nil {
		return fmt.Errorf("commit serving request %d (version %d): %w", id, v.Version, err)
	}
	return nil
}

// FailServing implements store.Learning.
func (s *Store) FailServing(ctx context.Context, id int64, result string) error {
	if err := s.write(ctx, func(tx pgx.Tx) error { return finishServing(ctx, tx, id, result) }); err != nil {
		return fmt.Errorf("fail serving request %d: %w", id, err)
	}
	return nil
}

func finishServing(ctx context.Context, tx pgx.Tx, id int64, result string) error {
	tag, err := tx.Exec(ctx, `UPDATE serving_requests SET done_at = $1, result = $2 WHERE id = $3 AND done_at = 0`, nanos(time.Now()), result, id)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%w: request %d is not pending", store.ErrConflict, id)
	}
	return nil
}

// Versions implements store.Learning: newest first.
func (s *Store) Versions(ctx context.Context, limit int) ([]store.Version, error) {
	q, args := limitClause(`SELECT `+versionColumns+` FROM versions ORDER BY version DESC`, nil, limit)
	return queryAll(ctx, s, "list versions", q, args, scanVersion)
}

// SessionsToSettle implements store.Learning.
func (s *Store) SessionsToSettle(ctx context.Context, limit int) ([]string, error) {
	q, args := limitClause(`SELECT se.id FROM sessions se WHERE se.expired
		AND EXISTS (SELECT 1 FROM turns t JOIN judgments j ON j.turn_id = t.id
			WHERE t.session_id = se.id AND t.type = 'main' AND t.state = 'judged' AND NOT j.keep)
		AND NOT EXISTS (SELECT 1 FROM turns t LEFT JOIN judgments j ON j.turn_id = t.id
			WHERE t.session_id = se.id AND t.type = 'main'
			AND (t.state = 'observed' OR (t.state = 'judged' AND j.keep)))
		ORDER BY se.seq`, nil, limit)
	return queryAll(ctx, s, "sessions to settle", q, args, func(r pgx.Row) (string, error) {
		var id string
		return id, r.Scan(&id)
	})
}

// LearningStats implements store.Learning.
func (s *Store) LearningStats(ctx context.Context) (store.LearningStats, error) {
	st := store.LearningStats{DroppedBy: map[string]int{}}
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT COUNT(*), COUNT(*) FILTER (WHERE hint_accepted) FROM judgments`).
			Scan(&st.Judgments, &st.HintsAccepted); err != nil {
			return fmt.Errorf("judgments: %w", err)
		}
		if err := tx.QueryRow(ctx, `SELECT COUNT(*), COUNT(*) FILTER (WHERE trained_version > 0) FROM samples`).
			Scan(&st.SamplesTotal, &st.Trained); err != nil {
			return fmt.Errorf("samples: %w", err)
		}
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM turns WHERE state = 'ready'`).Scan(&st.SamplesReady); err != nil {
			return fmt.Errorf("ready: %w", err)
		}
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM turns t JOIN judgments j ON j.turn_id = t.id
			WHERE t.state = 'judged' AND j.keep`).Scan(&st.SamplesPending); err != nil {
			return fmt.Errorf("pending: %w", err)
		}
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM versions`).Scan(&st.Versions); err != nil {
			return fmt.Errorf("versions: %w", err)
		}
		// Drop reasons carry numbers; group by their kind, the text before
		// the first colon.
		rows, err := tx.Query(ctx, `SELECT drop_reason, COUNT(*) FROM turns WHERE state = 'dropped' GROUP BY drop_reason`)
		if err != nil {
			return fmt.Errorf("drops: %w", err)
		}
		var reason string
		var n int
		if _, err := pgx.ForEachRow(rows, []any{&reason, &n}, func() error {
			kind, _, _ := strings.Cut(reason, ":")
			st.DroppedBy[kind] += n
			return nil
		}); err != nil {
			return fmt.Errorf("drops: %w", err)
		}
		v, err := scanVersion(tx.QueryRow(ctx, `SELECT `+versionColumns+` FROM versions ORDER BY version DESC LIMIT 1`))
		switch {
		case err == nil:
			st.Latest = &v
		case !errors.Is(err, pgx.ErrNoRows):
			return fmt.Errorf("latest version: %w", err)
		}
		return nil
	})
	if err != nil {
		return st, fmt.Errorf("learning stats: %w", err)
	}
	return st, nil
}
