package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clawrl/clawrl/store"
)

const sessionColumns = `id, key, key_source, epoch, client, created_at, last_seen, turns, expired`

func scanSession(r pgx.Row) (store.Session, error) {
	var s store.Session
	var created, seen int64
	if err := r.Scan(&s.ID, &s.Key, &s.KeySource, &s.Epoch, &s.Client, &created, &seen, &s.Turns, &s.Expired); err != nil {
		return store.Session{}, err
	}
	s.CreatedAt, s.LastSeen = fromNanos(created), fromNanos(seen)
	return s, nil
}

// SessionByKey returns the session recognised by key; an expired session is
// still returned (the same key continues the same conversation).
func (s *Store) SessionByKey(ctx context.Context, key string) (store.Session, error) {
	if key == "" {
		return store.Session{}, fmt.Errorf("session by empty key: %w", store.ErrNotFound)
	}
	sess, err := scanSession(s.pool.QueryRow(ctx, `SELECT `+sessionColumns+` FROM sessions WHERE key = $1 AND key <> ''`, key))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Session{}, fmt.Errorf("session with key %q: %w", key, store.ErrNotFound)
	}
	if err != nil {
		return store.Session{}, fmt.Errorf("read session with key %q: %w", key, err)
	}
	return sess, nil
}

// Session returns a session by id.
func (s *Store) Session(ctx context.Context, id string) (store.Session, error) {
	sess, err := scanSession(s.pool.QueryRow(ctx, `SELECT `+sessionColumns+` FROM sessions WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Session{}, fmt.Errorf("session %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.Session{}, fmt.Errorf("read session %s: %w", id, err)
	}
	return sess, nil
}

// CreateSession records a new session. A key already taken (two gateways
// racing to create the same conversation) returns ErrConflict: the loser
// looks the key up again.
func (s *Store) CreateSession(ctx context.Context, sess *store.Session) error {
	if sess.ID == "" {
		sess.ID = newID("sess-")
	}
	if sess.CreatedAt.IsZero() {
		sess.CreatedAt = time.Now()
	}
	if sess.LastSeen.IsZero() {
		sess.LastSeen = sess.CreatedAt
	}
	err := s.write(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO sessions (id, key, key_source, epoch, client, created_at, last_seen, expired)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			sess.ID, sess.Key, sess.KeySource, sess.Epoch, sess.Client, nanos(sess.CreatedAt), nanos(sess.LastSeen), sess.Expired)
		return classify(err)
	})
	if err != nil {
		return fmt.Errorf("create session %s (key %q): %w", sess.ID, sess.Key, err)
	}
	sess.CreatedAt, sess.LastSeen, sess.Turns = fromNanos(nanos(sess.CreatedAt)), fromNanos(nanos(sess.LastSeen)), 0
	return nil
}

// TouchSession moves last-seen forward (never back), sets the epoch and
// makes an expired session live again.
func (s *Store) TouchSession(ctx context.Context, id string, seen time.Time, epoch int) error {
	if seen.IsZero() {
		seen = time.Now()
	}
	err := s.write(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE sessions SET last_seen = GREATEST(last_seen, $1), epoch = $2, expired = FALSE
			WHERE id = $3`, nanos(seen), epoch, id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return store.ErrNotFound
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("touch session %s: %w", id, err)
	}
	return nil
}
