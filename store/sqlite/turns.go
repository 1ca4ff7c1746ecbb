package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/store"
)

// rowColumns is the SELECT list of a turn's mutable row (turns t), in the
// order scanTurnRow reads it.
const rowColumns = `t.seq, t.id, t.session_id, t.idx, t.type, t.epoch, t.state, t.created_at,
	t.model, t.policy_version, t.engine, t.finish_reason, t.prompt_tokens, t.completion_tokens, t.max_tokens,
	t.queue_ns, t.prefill_ns, t.decode_ns, t.total_ns, t.conversation_hash,
	t.next_state, t.next_state_kind, t.observed_at, t.feedback_rating, t.feedback_text, t.feedback_at, t.drop_reason`

type rowScanner interface{ Scan(dest ...any) error }

// turnRow holds the columns of a turns row that need converting.
type turnRow struct {
	typ, state        string
	created, observed int64
	nextState         sql.NullString
	fbRating, fbAt    sql.NullInt64
	fbText            sql.NullString
}

func (r *turnRow) dest(t *store.Turn) []any {
	return []any{&t.Seq, &t.ID, &t.SessionID, &t.Index, &r.typ, &t.Epoch, &r.state, &r.created,
		&t.Model, &t.PolicyVersion, &t.Engine, &t.FinishReason, &t.PromptTokens, &t.CompletionTokens, &t.MaxTokens,
		&t.QueueNanos, &t.PrefillNanos, &t.DecodeNanos, &t.TotalNanos, &t.ConversationHash,
		&r.nextState, &t.NextStateKind, &r.observed, &r.fbRating, &r.fbText, &r.fbAt, &t.DropReason}
}

func (r *turnRow) finish(t *store.Turn) error {
	t.Type, t.State = store.TurnType(r.typ), store.TurnState(r.state)
	t.CreatedAt, t.ObservedAt = fromNanos(r.created), fromNanos(r.observed)
	if r.nextState.Valid {
		if err := json.Unmarshal([]byte(r.nextState.String), &t.NextState); err != nil {
			return fmt.Errorf("turn %s: decode next state: %w", t.ID, err)
		}
	}
	if r.fbRating.Valid || r.fbText.Valid {
		t.Feedback = &store.Feedback{Rating: int(r.fbRating.Int64), Text: r.fbText.String, CreatedAt: fromNanos(r.fbAt.Int64)}
	}
	return nil
}

// scanTurnRow reads rowColumns; the payload fields stay empty until
// fillPayloads.
func scanTurnRow(r rowScanner) (store.Turn, error) {
	var t store.Turn
	var row turnRow
	if err := r.Scan(row.dest(&t)...); err != nil {
		return store.Turn{}, err
	}
	if err := row.finish(&t); err != nil {
		return store.Turn{}, err
	}
	return t, nil
}

// jsonOrEmpty marshals v, writing empty for a nil slice so the column never
// holds JSON null.
func jsonOrEmpty(v any, empty string) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	if string(b) == "null" {
		return empty, nil
	}
	return string(b), nil
}

// InsertTurn records a generated turn: it takes the session's next index,
// counts the turn on the session and marks the session live again, all in
// one transaction. When it returns nil the turn is committed to the WAL.
func (s *Store) InsertTurn(ctx context.Context, t *store.Turn) error {
	if t.ID == "" {
		return fmt.Errorf("insert turn: empty id")
	}
	if t.SessionID == "" {
		return fmt.Errorf("insert turn %s: empty session id", t.ID)
	}
	if t.State != "" && t.State != store.Generated {
		return fmt.Errorf("insert turn %s: state %q: a new turn is generated", t.ID, t.State)
	}
	if t.Type == "" {
		t.Type = store.Main
	}
	if t.Type != store.Main && t.Type != store.Side {
		return fmt.Errorf("insert turn %s: unknown type %q", t.ID, t.Type)
	}
	if t.BehaviourLogprobs != nil && t.ResponseIDs != nil && len(t.BehaviourLogprobs) != len(t.ResponseIDs) {
		return fmt.Errorf("insert turn %s: %d behaviour logprobs for %d response ids", t.ID, len(t.BehaviourLogprobs), len(t.ResponseIDs))
	}
	if t.Supersedes == t.ID {
		return fmt.Errorf("insert turn %s: it supersedes itself", t.ID)
	}
	created := t.CreatedAt
	if created.IsZero() {
		created = time.Now()
	}
	messages, err := jsonOrEmpty(t.Messages, "[]")
	if err != nil {
		return fmt.Errorf("insert turn %s: encode messages: %w", t.ID, err)
	}
	tools, err := jsonOrEmpty(t.Tools, "[]")
	if err != nil {
		return fmt.Errorf("insert turn %s: encode tools: %w", t.ID, err)
	}
	response, err := json.Marshal(t.Response)
	if err != nil {
		return fmt.Errorf("insert turn %s: encode response: %w", t.ID, err)
	}
	var next any
	if t.NextState != nil {
		b, err := json.Marshal(t.NextState)
		if err != nil {
			return fmt.Errorf("insert turn %s: encode next state: %w", t.ID, err)
		}
		next = string(b)
	}
	promptIDs := encodeInt32s(t.PromptIDs)
	var index int
	var seq int64
	chunks := chunkWriter{s: s}
	err = s.writeGrouped(ctx, func(ctx context.Context, tx *sql.Tx) error {
		// A retried group runs this again: nothing of a failed run may stay.
		chunks.tx, chunks.seen = tx, map[chunkHash]int64{}
		if err := tx.StmtContext(ctx, s.stmts.claimIndex).QueryRowContext(ctx, nanos(created), t.SessionID).Scan(&index); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("session %s: %w", t.SessionID, store.ErrNotFound)
			}
			return err
		}
		res, err := tx.StmtContext(ctx, s.stmts.insertTurn).ExecContext(ctx,
			t.ID, t.SessionID, index, string(t.Type), t.Epoch, nanos(created), nanos(created),
			t.Model, t.PolicyVersion, t.Engine, t.FinishReason,
			t.PromptTokens, t.CompletionTokens, t.QueueNanos, t.PrefillNanos, t.DecodeNanos, t.TotalNanos,
			t.ConversationHash, next, t.NextStateKind, t.MaxTokens)
		if err != nil {
			return classify(err)
		}
		if seq, err = res.LastInsertId(); err != nil {
			return err
		}
		// A chunked field keeps an empty inline value; readers go by the
		// *_chunks column.
		inlineMessages, inlineTools, inlinePromptText, inlinePromptIDs := messages, tools, t.PromptText, promptIDs
		var msgChunks, toolChunks, textChunks, idChunks []byte
		if msgChunks, err = chunks.put(ctx, []byte(messages)); err != nil {
			return err
		} else if msgChunks != nil {
			inlineMessages = ""
		}
		if toolChunks, err = chunks.put(ctx, []byte(tools)); err != nil {
			return err
		} else if toolChunks != nil {
			inlineTools = ""
		}
		if textChunks, err = chunks.put(ctx, []byte(t.PromptText)); err != nil {
			return err
		} else if textChunks != nil {
			inlinePromptText = ""
		}
		if idChunks, err = chunks.put(ctx, promptIDs); err != nil {
			return err
		} else if idChunks != nil {
			inlinePromptIDs = nil
		}
		_, err = tx.StmtContext(ctx, s.stmts.insertPayload).ExecContext(ctx, seq,
			inlineMessages, inlineTools, inlinePromptText, inlinePromptIDs, string(response), t.ResponseText,
			encodeInt32s(t.ResponseIDs), encodeFloat32s(t.BehaviourLogprobs),
			msgChunks, toolChunks, textChunks, idChunks, t.ForcedText)
		if err != nil {
			return classify(err)
		}
		return supersede(ctx, tx, t)
	})
	if err != nil {
		return fmt.Errorf("insert turn %s: %w", t.ID, err)
	}
	s.chunkIDs.addAll(chunks.seen)
	t.Index, t.Seq, t.State, t.CreatedAt = index, seq, store.Generated, fromNanos(nanos(created))
	if s.cache != nil {
		size := len(messages) + len(tools) + len(t.PromptText) + len(t.ForcedText) + len(response) + len(t.ResponseText) +
			4*(len(t.PromptIDs)+len(t.ResponseIDs)+len(t.BehaviourLogprobs))
		s.cache.put(seq, payloadOf(t, size), size)
	}
	return nil
}

// supersede drops the turn t replaces (store.Turn.Supersedes) when it is
// still generated; one that moved on is left as it is.
func supersede(ctx context.Context, tx *sql.Tx, t *store.Turn) error {
	if t.Supersedes == "" {
		return nil
	}
	_, err := tx.ExecContext(ctx, `UPDATE turns SET state = 'dropped', state_changed_at = ?, drop_reason = ?
		WHERE id = ? AND session_id = ? AND type = ? AND state = 'generated'`,
		nanos(time.Now()), store.SupersededBy(t.ID), t.Supersedes, t.SessionID, string(t.Type))
	if err != nil {
		return fmt.Errorf("drop superseded turn %s: %w", t.Supersedes, classify(err))
	}
	return nil
}

// oneTurn reads the turn a row statement selects, with its payload.
func (s *Store) oneTurn(ctx context.Context, stmt *sql.Stmt, args ...any) (store.Turn, error) {
	t, err := scanTurnRow(stmt.QueryRowContext(ctx, args...))
	if err != nil {
		return store.Turn{}, err
	}
	ts := []store.Turn{t}
	if err := s.fillPayloads(ctx, ts); err != nil {
		return store.Turn{}, err
	}
	return ts[0], nil
}

// Turn returns one turn by id.
func (s *Store) Turn(ctx context.Context, id string) (store.Turn, error) {
	t, err := s.oneTurn(ctx, s.stmts.turnByID, id)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Turn{}, fmt.Errorf("turn %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.Turn{}, fmt.Errorf("read turn %s: %w", id, err)
	}
	return t, nil
}

// LastTurn returns the session's turn of type typ with the highest index.
func (s *Store) LastTurn(ctx context.Context, sessionID string, typ store.TurnType) (store.Turn, error) {
	t, err := s.oneTurn(ctx, s.stmts.lastTurn, sessionID, string(typ))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Turn{}, fmt.Errorf("last %s turn of session %s: %w", typ, sessionID, store.ErrNotFound)
	}
	if err != nil {
		return store.Turn{}, fmt.Errorf("read last %s turn of session %s: %w", typ, sessionID, err)
	}
	return t, nil
}

// TurnByConversationHash returns the newest turn with hash h (identical
// conversations can recur; the newest is the one a continuation extends).
func (s *Store) TurnByConversationHash(ctx context.Context, h string) (store.Turn, error) {
	if h == "" {
		return store.Turn{}, fmt.Errorf("turn by empty conversation hash: %w", store.ErrNotFound)
	}
	t, err := s.oneTurn(ctx, s.stmts.turnByHash, h)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Turn{}, fmt.Errorf("turn with conversation hash %s: %w", h, store.ErrNotFound)
	}
	if err != nil {
		return store.Turn{}, fmt.Errorf("read turn with conversation hash %s: %w", h, err)
	}
	return t, nil
}

// validNextKind reports whether kind is one of store's NextState kinds.
func validNextKind(kind string) bool {
	return kind == store.NextUser || kind == store.NextTool || kind == store.NextFeedback
}

// ObserveTurn attaches the next state and moves the turn generated → observed.
func (s *Store) ObserveTurn(ctx context.Context, id string, next []chat.Message, kind string, at time.Time) error {
	if !validNextKind(kind) {
		return fmt.Errorf("observe turn %s: unknown next-state kind %q", id, kind)
	}
	if at.IsZero() {
		at = time.Now()
	}
	b, err := jsonOrEmpty(next, "[]")
	if err != nil {
		return fmt.Errorf("observe turn %s: encode next state: %w", id, err)
	}
	err = s.writeGrouped(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.StmtContext(ctx, s.stmts.observe).ExecContext(ctx, b, kind, nanos(at), id)
		if err != nil {
			return classify(err)
		}
		return s.requireChanged(ctx, tx, res, id, store.Generated)
	})
	if err != nil {
		return fmt.Errorf("observe turn %s: %w", id, err)
	}
	return nil
}

// requireChanged turns a guarded UPDATE that matched no row into the reason:
// the turn does not exist (ErrNotFound) or is in another state (ErrConflict).
func (s *Store) requireChanged(ctx context.Context, tx *sql.Tx, res sql.Result, id string, want ...store.TurnState) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	var state string
	err = tx.QueryRowContext(ctx, `SELECT state FROM turns WHERE id = ?`, id).Scan(&state)
	if errors.Is(err, sql.ErrNoRows) {
		return store.ErrNotFound
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("%w: turn is %s, want %v", store.ErrConflict, state, want)
}

// AddFeedback attaches explicit feedback. A turn still waiting for its next
// state (generated, or expired because the session went idle) becomes
// observed with the feedback as its next state; a turn further along keeps
// its state and gains the feedback. Feedback merges: a rating-only and a
// text-only message for the same turn both count.
func (s *Store) AddFeedback(ctx context.Context, id string, f store.Feedback) error {
	if f.Rating < -1 || f.Rating > 1 {
		return fmt.Errorf("feedback for turn %s: rating %d: want -1, 0 or +1", id, f.Rating)
	}
	if f.Rating == 0 && strings.TrimSpace(f.Text) == "" {
		return fmt.Errorf("feedback for turn %s: neither a rating nor text", id)
	}
	if f.CreatedAt.IsZero() {
		f.CreatedAt = time.Now()
	}
	var text any
	if f.Text != "" {
		text = f.Text
	}
	var rating any
	if f.Rating != 0 {
		rating = f.Rating
	}
	err := s.writeGrouped(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var state string
		err := tx.QueryRowContext(ctx, `SELECT state FROM turns WHERE id = ?`, id).Scan(&state)
		if errors.Is(err, sql.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE turns SET
				feedback_rating = COALESCE(?, feedback_rating, 0),
				feedback_text = COALESCE(?, feedback_text),
				feedback_at = ?
			WHERE id = ?`, rating, text, nanos(f.CreatedAt), id); err != nil {
			return classify(err)
		}
		switch store.TurnState(state) {
		case store.Generated, store.Expired:
			_, err := tx.ExecContext(ctx, `UPDATE turns SET state = 'observed', state_changed_at = ?,
					next_state_kind = 'feedback', observed_at = ?
				WHERE id = ? AND state = ?`, nanos(f.CreatedAt), nanos(f.CreatedAt), id, state)
			return classify(err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("feedback for turn %s: %w", id, err)
	}
	return nil
}

// ExpireIdle expires sessions idle since before cutoff and every turn of
// theirs still waiting for a next state, in one transaction.
func (s *Store) ExpireIdle(ctx context.Context, cutoff time.Time) (int, error) {
	var n int64
	now := nanos(time.Now())
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE turns SET state = 'expired', state_changed_at = ?
			WHERE state = 'generated' AND session_id IN (
				SELECT id FROM sessions WHERE expired = 0 AND last_seen < ?)`, now, nanos(cutoff))
		if err != nil {
			return classify(err)
		}
		if n, err = res.RowsAffected(); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE sessions SET expired = 1 WHERE expired = 0 AND last_seen < ?`, nanos(cutoff))
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("expire sessions idle before %s: %w", cutoff.Format(time.RFC3339), err)
	}
	return int(n), nil
}

// ListTurns returns turns matching f in row order (Seq ascending).
func (s *Store) ListTurns(ctx context.Context, f store.TurnFilter) ([]store.Turn, error) {
	q, args := listQuery(f)
	rows, err := s.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list turns: %w", err)
	}
	defer rows.Close()
	var out []store.Turn
	for rows.Next() {
		t, err := scanTurnRow(rows)
		if err != nil {
			return nil, fmt.Errorf("list turns: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list turns: %w", err)
	}
	// The rows are closed before the payload reads, so a page never holds
	// two pool connections at once.
	rows.Close()
	if err := s.fillPayloads(ctx, out); err != nil {
		return nil, fmt.Errorf("list turns: %w", err)
	}
	return out, nil
}

// listQuery selects whole turn rows matching f, in row order (the filter
// clause is turnWhere's, shared with the learning queries).
func listQuery(f store.TurnFilter) (string, []any) {
	where, args := turnWhere(f)
	return "SELECT " + rowColumns + " FROM turns t" + where, args
}

// Transition moves turn id from → to along an arrow of the state machine
// (store.CanTransition; the schema's trigger enforces the same table).
func (s *Store) Transition(ctx context.Context, id string, from, to store.TurnState, dropReason string) error {
	if !store.CanTransition(from, to) {
		return fmt.Errorf("turn %s: %s → %s: %w: not an arrow of the state machine", id, from, to, store.ErrConflict)
	}
	if to != store.Dropped {
		dropReason = ""
	}
	err := s.write(ctx, func(tx *sql.Tx) error { return s.transition(ctx, tx, id, from, to, dropReason) })
	if err != nil {
		return fmt.Errorf("turn %s: %s → %s: %w", id, from, to, err)
	}
	return nil
}

// transition is Transition inside the caller's transaction, for code that
// changes a turn's state together with rows of its own (a judgment, a sample).
func (s *Store) transition(ctx context.Context, tx *sql.Tx, id string, from, to store.TurnState, dropReason string) error {
	res, err := tx.ExecContext(ctx, `UPDATE turns SET state = ?, state_changed_at = ?,
			drop_reason = CASE WHEN ? = 'dropped' THEN ? ELSE drop_reason END
		WHERE id = ? AND state = ?`, string(to), nanos(time.Now()), string(to), dropReason, id, string(from))
	if err != nil {
		return classify(err)
	}
	return s.requireChanged(ctx, tx, res, id, from)
}
