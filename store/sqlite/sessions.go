package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/clawrl/clawrl/store"
)

const sessionColumns = `id, key, key_source, epoch, client, created_at, last_seen, turns, expired`

func scanSession(r rowScanner) (store.Session, error) {
	var s store.Session
	var created, seen int64
	var expired int
	if err := r.Scan(&s.ID, &s.Key, &s.KeySource, &s.Epoch, &s.Client, &created, &seen, &s.Turns, &expired); err != nil {
		return store.Session{}, err
	}
	s.CreatedAt, s.LastSeen, s.Expired = fromNanos(created), fromNanos(seen), expired != 0
	return s, nil
}

// SessionByKey returns the session recognised by key. An expired session is
// still returned: the same key continues the same conversation.
func (s *Store) SessionByKey(ctx context.Context, key string) (store.Session, error) {
	if key == "" {
		return store.Session{}, fmt.Errorf("session by empty key: %w", store.ErrNotFound)
	}
	sess, err := scanSession(s.stmts.sessionByKey.QueryRowContext(ctx, key))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Session{}, fmt.Errorf("session with key %q: %w", key, store.ErrNotFound)
	}
	if err != nil {
		return store.Session{}, fmt.Errorf("read session with key %q: %w", key, err)
	}
	return sess, nil
}

// Session returns a session by id.
func (s *Store) Session(ctx context.Context, id string) (store.Session, error) {
	sess, err := scanSession(s.stmts.sessionByID.QueryRowContext(ctx, id))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Session{}, fmt.Errorf("session %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.Session{}, fmt.Errorf("read session %s: %w", id, err)
	}
	return sess, nil
}

// CreateSession records a new session, assigning an id when s.ID is empty.
// A key already taken (two requests racing to create the same conversation)
// returns ErrConflict: the loser should look the key up again.
func (s *Store) CreateSession(ctx context.Context, sess *store.Session) error {
	if sess.ID == "" {
		sess.ID = newID("sess-")
	}
	now := time.Now()
	if sess.CreatedAt.IsZero() {
		sess.CreatedAt = now
	}
	if sess.LastSeen.IsZero() {
		sess.LastSeen = sess.CreatedAt
	}
	expired := 0
	if sess.Expired {
		expired = 1
	}
	err := s.writeGrouped(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.StmtContext(ctx, s.stmts.createSession).ExecContext(ctx,
			sess.ID, sess.Key, sess.KeySource, sess.Epoch, sess.Client, nanos(sess.CreatedAt), nanos(sess.LastSeen), expired)
		return classify(err)
	})
	if err != nil {
		return fmt.Errorf("create session %s (key %q): %w", sess.ID, sess.Key, err)
	}
	sess.CreatedAt, sess.LastSeen, sess.Turns = fromNanos(nanos(sess.CreatedAt)), fromNanos(nanos(sess.LastSeen)), 0
	return nil
}

// TouchSession records activity: last-seen moves forward (never back, so
// out-of-order requests cannot make a live session look idle), the epoch is
// set, and an expired session becomes live again.
func (s *Store) TouchSession(ctx context.Context, id string, seen time.Time, epoch int) error {
	if seen.IsZero() {
		seen = time.Now()
	}
	err := s.writeGrouped(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.StmtContext(ctx, s.stmts.touchSession).ExecContext(ctx, nanos(seen), epoch, id)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if n == 0 {
			return store.ErrNotFound
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("touch session %s: %w", id, err)
	}
	return nil
}
