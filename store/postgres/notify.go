package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Listen delivers the payload of every notification on channel until ctx
// ends, on a connection of its own that it re-opens after a failure. A
// notification only says "look now": a listener that is reconnecting misses
// some, so callers poll as well. The channel is buffered; a slow reader
// loses notifications, never blocks the listener.
func (s *Store) Listen(ctx context.Context, channel string) <-chan string {
	out := make(chan string, 16)
	go func() {
		defer close(out)
		backoff := 100 * time.Millisecond
		for ctx.Err() == nil {
			err := s.listenOnce(ctx, channel, out)
			if ctx.Err() != nil {
				return
			}
			s.log.Warn("store: listen failed; reconnecting", "channel", channel, "err", err, "in", backoff)
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 10*time.Second)
		}
	}()
	return out
}

func (s *Store) listenOnce(ctx context.Context, channel string, out chan<- string) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// The connection leaves the pool for good: LISTEN is session state.
	c := conn.Hijack()
	defer c.Close(context.Background())
	if _, err := c.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		return fmt.Errorf("listen %s: %w", channel, err)
	}
	// Wake the reader once: anything committed before LISTEN took effect
	// would otherwise wait for its poll.
	offer(out, "")
	for {
		n, err := c.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		offer(out, n.Payload)
	}
}

func offer(out chan<- string, v string) {
	select {
	case out <- v:
	default:
	}
}

// ErrNotLeader is returned by Lead when another process holds the role.
var ErrNotLeader = errors.New("store: another process holds this role")

// Lead takes the role named name for as long as ctx lives or until release
// is called, using a session advisory lock on a connection of its own:
// when the holding process dies, Postgres ends its session and frees the
// role. `clawrl trainer` takes "trainer", so a second trainer on the same
// database waits as a standby instead of training the same samples. When
// the role is held elsewhere Lead returns ErrNotLeader at once.
func (s *Store) Lead(ctx context.Context, name string) (release func(), err error) {
	h := fnv.New64a()
	h.Write([]byte("clawrl role " + name))
	key := int64(h.Sum64())
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("take role %s: %w", name, err)
	}
	var ok bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, key).Scan(&ok); err != nil {
		conn.Release()
		return nil, fmt.Errorf("take role %s: %w", name, err)
	}
	if !ok {
		conn.Release()
		return nil, fmt.Errorf("take role %s: %w", name, ErrNotLeader)
	}
	return leaseRelease(conn, key), nil
}

func leaseRelease(conn *pgxpool.Conn, key int64) func() {
	done := false
	return func() {
		if done {
			return
		}
		done = true
		// Unlock before the connection goes back to the pool, where a
		// held session lock would outlive its holder.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := conn.Exec(ctx, `SELECT pg_advisory_unlock($1)`, key); err != nil {
			conn.Conn().Close(ctx) //nolint:errcheck // the lock ends with the session
			conn.Release()
			return
		}
		conn.Release()
	}
}
