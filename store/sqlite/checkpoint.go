package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Checkpointing copies committed WAL frames back into the database file. By
// default SQLite does it inside whichever commit crosses 1000 WAL pages, so
// every ~40th realistic InsertTurn would pay for copying and fsyncing the
// previous 40. The store instead checkpoints from a connection of its own in
// the background (PASSIVE: it never blocks the writer or readers), and keeps
// SQLite's inline checkpoint only as a backstop for a WAL that grows past
// walBackstopPages anyway. Durability does not depend on checkpoints: a
// committed frame in the WAL is already the durable copy.

const (
	checkpointEvery  = 250 * time.Millisecond
	walBackstopPages = 16384 // 64 MiB of 4 KiB pages
	walSizeLimit     = 64 << 20
)

type checkpointer struct {
	db     *sql.DB
	writes atomic.Int64 // commits since the last checkpoint
	stop   context.CancelFunc
	done   sync.WaitGroup
}

func (s *Store) startCheckpointer(base string) error {
	db, err := sql.Open("sqlite", base)
	if err != nil {
		return fmt.Errorf("open checkpoint connection: %w", err)
	}
	db.SetMaxOpenConns(1)
	ctx, cancel := context.WithCancel(context.Background())
	c := &checkpointer{db: db, stop: cancel}
	s.ckpt = c
	c.done.Go(func() {
		tick := time.NewTicker(checkpointEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if c.writes.Swap(0) == 0 {
					continue
				}
				if _, err := db.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)"); err != nil && ctx.Err() == nil {
					s.log.Warn("store: background checkpoint", "db", s.path, "err", err)
				}
			}
		}
	})
	return nil
}

func (c *checkpointer) close() error {
	if c == nil {
		return nil
	}
	c.stop()
	c.done.Wait()
	return c.db.Close()
}
