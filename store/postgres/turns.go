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

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/store"
)

// turnColumns is the SELECT list of a whole turn (turns t), in the order
// scanTurn reads it.
const turnColumns = `t.seq, t.id, t.session_id, t.idx, t.type, t.epoch, t.state, t.created_at,
	t.model, t.policy_version, t.engine, t.finish_reason, t.prompt_tokens, t.completion_tokens, t.max_tokens,
	t.queue_ns, t.prefill_ns, t.decode_ns, t.total_ns, t.conversation_hash,
	t.next_state, t.next_state_kind, t.observed_at, t.feedback_rating, t.feedback_text, t.feedback_at, t.drop_reason,
	t.messages, t.tools, t.prompt_text, t.prompt_ids, t.forced_text, t.response, t.response_text,
	t.response_ids, t.behaviour_logprobs`

// scanTurn reads turnColumns. Every returned slice is freshly decoded, so
// callers own what they get.
func scanTurn(r pgx.Row) (store.Turn, error) {
	var t store.Turn
	var typ, state, messages, tools, response string
	var created, observed int64
	var nextState, fbText *string
	var fbRating *int32
	var fbAt *int64
	if err := r.Scan(&t.Seq, &t.ID, &t.SessionID, &t.Index, &typ, &t.Epoch, &state, &created,
		&t.Model, &t.PolicyVersion, &t.Engine, &t.FinishReason, &t.PromptTokens, &t.CompletionTokens, &t.MaxTokens,
		&t.QueueNanos, &t.PrefillNanos, &t.DecodeNanos, &t.TotalNanos, &t.ConversationHash,
		&nextState, &t.NextStateKind, &observed, &fbRating, &fbText, &fbAt, &t.DropReason,
		&messages, &tools, &t.PromptText, &t.PromptIDs, &t.ForcedText, &response, &t.ResponseText,
		&t.ResponseIDs, &t.BehaviourLogprobs); err != nil {
		return store.Turn{}, err
	}
	t.Type, t.State = store.TurnType(typ), store.TurnState(state)
	t.CreatedAt, t.ObservedAt = fromNanos(created), fromNanos(observed)
	if nextState != nil {
		if err := json.Unmarshal([]byte(*nextState), &t.NextState); err != nil {
			return store.Turn{}, fmt.Errorf("turn %s: decode next state: %w", t.ID, err)
		}
	}
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
	if err := json.Unmarshal([]byte(messages), &t.Messages); err != nil {
		return store.Turn{}, fmt.Errorf("turn %s: decode messages: %w", t.ID, err)
	}
	if err := json.Unmarshal([]byte(tools), &t.Tools); err != nil {
		return store.Turn{}, fmt.Errorf("turn %s: decode tools: %w", t.ID, err)
	}
	if err := json.Unmarshal([]byte(response), &t.Response); err != nil {
		return store.Turn{}, fmt.Errorf("turn %s: decode response: %w", t.ID, err)
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

// InsertTurn records a generated turn: it takes the session's next index
// (the session row's lock orders concurrent inserts of one session, from
// any gateway), counts the turn and marks the session live, in one
// transaction.
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
	var next *string
	if t.NextState != nil {
		b, err := json.Marshal(t.NextState)
		if err != nil {
			return fmt.Errorf("insert turn %s: encode next state: %w", t.ID, err)
		}
		n := string(b)
		next = &n
	}
	var index int
	var seq int64
	err = s.write(ctx, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `UPDATE sessions SET turns = turns + 1, last_seen = GREATEST(last_seen, $1), expired = FALSE
			WHERE id = $2 RETURNING turns - 1`, nanos(created), t.SessionID).Scan(&index)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("session %s: %w", t.SessionID, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		err = tx.QueryRow(ctx, `INSERT INTO turns (id, session_id, idx, type, epoch, created_at, state_changed_at,
			model, policy_version, engine, finish_reason, prompt_tokens, completion_tokens,
			queue_ns, prefill_ns, decode_ns, total_ns, conversation_hash, next_state, next_state_kind,
			messages, tools, prompt_text, prompt_ids, forced_text, response, response_text, response_ids, behaviour_logprobs,
			max_tokens)
			VALUES ($1, $2, $3, $4, $5, $6, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19,
			$20, $21, $22, $23, $24, $25, $26, $27, $28, $29) RETURNING seq`,
			t.ID, t.SessionID, index, string(t.Type), t.Epoch, nanos(created),
			t.Model, t.PolicyVersion, t.Engine, t.FinishReason, t.PromptTokens, t.CompletionTokens,
			t.QueueNanos, t.PrefillNanos, t.DecodeNanos, t.TotalNanos, t.ConversationHash, next, t.NextStateKind,
			messages, tools, t.PromptText, t.PromptIDs, t.ForcedText, string(response), t.ResponseText,
			t.ResponseIDs, t.BehaviourLogprobs, t.MaxTokens).Scan(&seq)
		if err != nil {
			return classify(err)
		}
		return supersede(ctx, tx, t)
	})
	if err != nil {
		return fmt.Errorf("insert turn %s: %w", t.ID, err)
	}
	t.Index, t.Seq, t.State, t.CreatedAt = index, seq, store.Generated, fromNanos(nanos(created))
	return nil
}

// supersede drops the turn t replaces (store.Turn.Supersedes) when it is
// still generated; one that moved on is left as it is.
func supersede(ctx context.Context, tx pgx.Tx, t *store.Turn) error {
	if t.Supersedes == "" {
		return nil
	}
	_, err := tx.Exec(ctx, `UPDATE turns SET state = 'dropped', state_changed_at = $1, drop_reason = $2
		WHERE id = $3 AND session_id = $4 AND type = $5 AND state = 'generated'`,
		nanos(time.Now()), store.SupersededBy(t.ID), t.Supersedes, t.SessionID, string(t.Type))
	if err != nil {
		return fmt.Errorf("drop superseded turn %s: %w", t.Supersedes, classify(err))
	}
	return nil
}

func (s *Store) oneTurn(ctx context.Context, what string, q string, args ...any) (store.Turn, error) {
	t, err := scanTurn(s.pool.QueryRow(ctx, `SELECT `+turnColumns+` FROM turns t `+q, args...))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Turn{}, fmt.Errorf("%s: %w", what, store.ErrNotFound)
	}
	if err != nil {
		return store.Turn{}, fmt.Errorf("read %s: %w", what, err)
	}
	return t, nil
}

// Turn returns one turn by id.
func (s *Store) Turn(ctx context.Context, id string) (store.Turn, error) {
	return s.oneTurn(ctx, "turn "+id, `WHERE t.id = $1`, id)
}

// LastTurn returns the session's turn of type typ with the highest index.
func (s *Store) LastTurn(ctx context.Context, sessionID string, typ store.TurnType) (store.Turn, error) {
	return s.oneTurn(ctx, fmt.Sprintf("last %s turn of session %s", typ, sessionID),
		`WHERE t.session_id = $1 AND t.type = $2 ORDER BY t.idx DESC LIMIT 1`, sessionID, string(typ))
}

// TurnByConversationHash returns the newest turn with hash h.
func (s *Store) TurnByConversationHash(ctx context.Context, h string) (store.Turn, error) {
	if h == "" {
		return store.Turn{}, fmt.Errorf("turn by empty conversation hash: %w", store.ErrNotFound)
	}
	return s.oneTurn(ctx, "turn with conversation hash "+h,
		`WHERE t.conversation_hash = $1 AND t.conversation_hash <> '' ORDER BY t.seq DESC LIMIT 1`, h)
}

func validNextKind(kind string) bool {
	return kind == store.NextUser || kind == store.NextTool || kind == store.NextFeedback
}

// notifyObserved wakes judges in other processes when tx commits.
func notifyObserved(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, `SELECT pg_notify($1, '')`, ChannelObserved)
	return err
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
	err = s.write(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE turns SET state = 'observed', next_state = $1, next_state_kind = $2,
			observed_at = $3, state_changed_at = $3 WHERE id = $4 AND state = 'generated'`, b, kind, nanos(at), id)
		if err != nil {
			return classify(err)
		}
		if err := requireChanged(ctx, tx, tag.RowsAffected(), id, store.Generated); err != nil {
			return err
		}
		return notifyObserved(ctx, tx)
	})
	if err != nil {
		return fmt.Errorf("observe turn %s: %w", id, err)
	}
	return nil
}

// requireChanged turns a guarded UPDATE that matched no row into the reason:
// the turn does not exist (ErrNotFound) or is in another state (ErrConflict).
func requireChanged(ctx context.Context, tx pgx.Tx, n int64, id string, want ...store.TurnState) error {
	if n > 0 {
		return nil
	}
	var state string
	err := tx.QueryRow(ctx, `SELECT state FROM turns WHERE id = $1`, id).Scan(&state)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.ErrNotFound
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("%w: turn is %s, want %v", store.ErrConflict, state, want)
}

// lockState reads a turn's state and locks its row until tx ends, so the
// caller's decision on that state cannot be raced by another process.
func lockState(ctx context.Context, tx pgx.Tx, id string) (store.TurnState, error) {
	var state string
	err := tx.QueryRow(ctx, `SELECT state FROM turns WHERE id = $1 FOR UPDATE`, id).Scan(&state)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", store.ErrNotFound
	}
	return store.TurnState(state), err
}

// AddFeedback attaches explicit feedback (merging with earlier feedback); a
// turn still waiting for its next state (generated or expired) becomes
// observed with the feedback as its next state.
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
	var text *string
	if f.Text != "" {
		text = &f.Text
	}
	var rating *int32
	if f.Rating != 0 {
		r := int32(f.Rating)
		rating = &r
	}
	err := s.write(ctx, func(tx pgx.Tx) error {
		state, err := lockState(ctx, tx, id)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE turns SET
				feedback_rating = COALESCE($1, feedback_rating, 0),
				feedback_text = COALESCE($2, feedback_text),
				feedback_at = $3
			WHERE id = $4`, rating, text, nanos(f.CreatedAt), id); err != nil {
			return classify(err)
		}
		if state == store.Generated || state == store.Expired {
			if _, err := tx.Exec(ctx, `UPDATE turns SET state = 'observed', state_changed_at = $1,
					next_state_kind = 'feedback', observed_at = $1 WHERE id = $2`, nanos(f.CreatedAt), id); err != nil {
				return classify(err)
			}
		}
		return notifyObserved(ctx, tx)
	})
	if err != nil {
		return fmt.Errorf("feedback for turn %s: %w", id, err)
	}
	return nil
}

// ExpireIdle expires sessions idle since before cutoff and their turns
// still waiting for a next state. Every gateway runs it; SKIP LOCKED lets
// each take the sessions no other one is expiring right now, instead of
// queueing (or deadlocking) behind it.
func (s *Store) ExpireIdle(ctx context.Context, cutoff time.Time) (int, error) {
	var n int64
	now := nanos(time.Now())
	err := s.write(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id FROM sessions WHERE NOT expired AND last_seen < $1
			ORDER BY seq FOR UPDATE SKIP LOCKED`, nanos(cutoff))
		if err != nil {
			return err
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil || len(ids) == 0 {
			return err
		}
		tag, err := tx.Exec(ctx, `UPDATE turns SET state = 'expired', state_changed_at = $1
			WHERE state = 'generated' AND session_id = ANY($2)`, now, ids)
		if err != nil {
			return classify(err)
		}
		n = tag.RowsAffected()
		_, err = tx.Exec(ctx, `UPDATE sessions SET expired = TRUE WHERE id = ANY($1)`, ids)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("expire sessions idle before %s: %w", cutoff.Format(time.RFC3339), err)
	}
	return int(n), nil
}

// turnWhere turns a TurnFilter into conditions on turns t, numbering its
// placeholders from $1.
func turnWhere(f store.TurnFilter, extra ...string) (string, []any) {
	where := append([]string(nil), extra...)
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if f.AfterID > 0 {
		where = append(where, "t.seq > "+arg(f.AfterID))
	}
	if f.SessionID != "" {
		where = append(where, "t.session_id = "+arg(f.SessionID))
	}
	if f.Type != "" {
		where = append(where, "t.type = "+arg(string(f.Type)))
	}
	if len(f.States) > 0 {
		states := make([]string, len(f.States))
		for i, st := range f.States {
			states[i] = string(st)
		}
		where = append(where, "t.state = ANY("+arg(states)+")")
	}
	if !f.Since.IsZero() {
		where = append(where, "t.created_at >= "+arg(nanos(f.Since)))
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
		q += " LIMIT " + arg(f.Limit)
	}
	return q, args
}

// ListTurns returns turns matching f in row order (Seq ascending).
func (s *Store) ListTurns(ctx context.Context, f store.TurnFilter) ([]store.Turn, error) {
	where, args := turnWhere(f)
	return queryAll(ctx, s, "list turns", `SELECT `+turnColumns+` FROM turns t`+where, args, scanTurn)
}

func queryAll[T any](ctx context.Context, s *Store, what, q string, args []any, scan func(pgx.Row) (T, error)) ([]T, error) {
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (T, error) { return scan(r) })
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// Transition moves turn id from → to along an arrow of the state machine.
func (s *Store) Transition(ctx context.Context, id string, from, to store.TurnState, dropReason string) error {
	if !store.CanTransition(from, to) {
		return fmt.Errorf("turn %s: %s → %s: %w: not an arrow of the state machine", id, from, to, store.ErrConflict)
	}
	if to != store.Dropped {
		dropReason = ""
	}
	err := s.write(ctx, func(tx pgx.Tx) error { return transition(ctx, tx, id, from, to, dropReason) })
	if err != nil {
		return fmt.Errorf("turn %s: %s → %s: %w", id, from, to, err)
	}
	return nil
}

// transition is Transition inside the caller's transaction. The guard on
// the current state is re-checked by Postgres after any concurrent change
// to the row commits, so of two processes racing, exactly one moves it.
func transition(ctx context.Context, tx pgx.Tx, id string, from, to store.TurnState, dropReason string) error {
	tag, err := tx.Exec(ctx, `UPDATE turns SET state = $1, state_changed_at = $2,
			drop_reason = CASE WHEN $1 = 'dropped' THEN $3 ELSE drop_reason END
		WHERE id = $4 AND state = $5`, string(to), nanos(time.Now()), dropReason, id, string(from))
	if err != nil {
		return classify(err)
	}
	return requireChanged(ctx, tx, tag.RowsAffected(), id, from)
}

// Stats counts sessions and turns in one snapshot.
func (s *Store) Stats(ctx context.Context) (store.Stats, error) {
	st := store.Stats{TurnsByState: map[store.TurnState]int{}, TurnsByType: map[store.TurnType]int{}}
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT COUNT(*), COUNT(*) FILTER (WHERE expired) FROM sessions`).
			Scan(&st.Sessions, &st.ExpiredSessions); err != nil {
			return fmt.Errorf("count sessions: %w", err)
		}
		rows, err := tx.Query(ctx, `SELECT state, type, COUNT(*) FROM turns GROUP BY state, type`)
		if err != nil {
			return fmt.Errorf("count turns: %w", err)
		}
		var state, typ string
		var n int
		_, err = pgx.ForEachRow(rows, []any{&state, &typ, &n}, func() error {
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
			return nil
		})
		if err != nil {
			return fmt.Errorf("count turns: %w", err)
		}
		if err := tx.QueryRow(ctx, `SELECT COALESCE((SELECT policy_version FROM turns ORDER BY seq DESC LIMIT 1), 0)`).
			Scan(&st.PolicyVersion); err != nil {
			return fmt.Errorf("policy version: %w", err)
		}
		return nil
	})
	if err != nil {
		return st, fmt.Errorf("stats: %w", err)
	}
	return st, nil
}
