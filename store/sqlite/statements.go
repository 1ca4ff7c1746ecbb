package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// statements are prepared once at Open: the hot paths (InsertTurn,
// ObserveTurn, the lookups the gateway makes per request) then skip SQL
// parsing. Writer statements are bound to transactions with tx.StmtContext,
// which reuses the preparation on the single writer connection.
type statements struct {
	all []*sql.Stmt

	claimIndex, insertTurn, insertPayload, chunkByHash, insertChunk, observe, createSession, touchSession *sql.Stmt // writer

	savepoint, rollbackToSavepoint, releaseSavepoint *sql.Stmt // writer, group.go

	turnByID, lastTurn, turnByHash, payloadBySeq, chunkByID, sessionByKey, sessionByID *sql.Stmt // reader
}

func (s *Store) prepare(ctx context.Context) error {
	st := &s.stmts
	prep := func(db *sql.DB, dst **sql.Stmt, q string) error {
		if db == nil {
			return nil
		}
		p, err := db.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("prepare %q: %w", q, err)
		}
		st.all = append(st.all, p)
		*dst = p
		return nil
	}
	w, r := s.writer, s.reader
	return errors.Join(
		// The index is the session's turn count before this turn; the same
		// statement bumps it, so two inserts can never share an index.
		prep(w, &st.claimIndex, `UPDATE sessions SET turns = turns + 1, last_seen = MAX(last_seen, ?1), expired = 0
			WHERE id = ?2 RETURNING turns - 1`),
		prep(w, &st.insertTurn, `INSERT INTO turns (id, session_id, idx, type, epoch, created_at, state_changed_at,
			model, policy_version, engine, finish_reason, prompt_tokens, completion_tokens,
			queue_ns, prefill_ns, decode_ns, total_ns, conversation_hash, next_state, next_state_kind, max_tokens)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		prep(w, &st.insertPayload, `INSERT INTO turn_payloads (turn_seq, messages, tools, prompt_text, prompt_ids,
			response, response_text, response_ids, behaviour_logprobs,
			messages_chunks, tools_chunks, prompt_text_chunks, prompt_ids_chunks, forced_text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		prep(w, &st.chunkByHash, `SELECT id FROM chunks WHERE hash = ?`),
		prep(w, &st.insertChunk, `INSERT INTO chunks (hash, data) VALUES (?, ?)`),
		prep(w, &st.observe, `UPDATE turns SET state = 'observed', next_state = ?1, next_state_kind = ?2,
			observed_at = ?3, state_changed_at = ?3 WHERE id = ?4 AND state = 'generated'`),
		prep(w, &st.createSession, `INSERT INTO sessions (id, key, key_source, epoch, client, created_at, last_seen, expired)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`),
		prep(w, &st.savepoint, `SAVEPOINT grouped`),
		prep(w, &st.rollbackToSavepoint, `ROLLBACK TO grouped`),
		prep(w, &st.releaseSavepoint, `RELEASE grouped`),
		prep(w, &st.touchSession, `UPDATE sessions SET last_seen = MAX(last_seen, ?1), epoch = ?2, expired = 0 WHERE id = ?3`),

		prep(r, &st.turnByID, `SELECT `+rowColumns+` FROM turns t WHERE t.id = ?`),
		prep(r, &st.lastTurn, `SELECT `+rowColumns+` FROM turns t WHERE t.session_id = ? AND t.type = ? ORDER BY t.idx DESC LIMIT 1`),
		// The repeated "<> ''" lets SQLite use the partial indexes.
		prep(r, &st.turnByHash, `SELECT `+rowColumns+` FROM turns t WHERE t.conversation_hash = ? AND t.conversation_hash <> ''
			ORDER BY t.seq DESC LIMIT 1`),
		prep(r, &st.payloadBySeq, `SELECT `+payloadColumns+` FROM turn_payloads WHERE turn_seq = ?`),
		prep(r, &st.chunkByID, `SELECT data FROM chunks WHERE id = ?`),
		prep(r, &st.sessionByKey, `SELECT `+sessionColumns+` FROM sessions WHERE key = ? AND key <> ''`),
		prep(r, &st.sessionByID, `SELECT `+sessionColumns+` FROM sessions WHERE id = ?`),
	)
}

func (st *statements) close() error {
	var err error
	for _, p := range st.all {
		err = errors.Join(err, p.Close())
	}
	st.all = nil
	return err
}
