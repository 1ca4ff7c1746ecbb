package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
)

// Group commit. A commit is the expensive part of a small write (the WAL
// frames' pwrite and the WAL index update), and SQLite serialises writers
// anyway, so the hot writes (InsertTurn, ObserveTurn, AddFeedback,
// CreateSession, TouchSession) go through writeGrouped: callers hand their
// change to one committer goroutine, which runs every change waiting at that
// moment in one IMMEDIATE transaction, each inside a SAVEPOINT of its own,
// commits once and only then wakes the callers. Durability is unchanged: a
// caller returns after the transaction holding its change has committed to
// the WAL. A change that fails is rolled back to its savepoint and reports
// its own error; the others commit. If the transaction itself fails (BEGIN,
// a savepoint or COMMIT), every change of the group is retried in a
// transaction of its own, so each caller still gets its own answer.
//
// Under no load a group is one change, which runs exactly as s.write does
// (no savepoint); under load the cost of a commit is shared by everyone
// who queued behind the previous one.

// maxGroup bounds one transaction, so that a caller at the end of a group
// does not wait behind an unbounded amount of other work.
const maxGroup = 256

// groupFunc is one change of a group. It must use the ctx it is given (not
// the caller's): an interrupted statement inside an explicit transaction can
// make SQLite roll back the whole transaction, the other callers' changes
// included, so a group runs without the callers' cancellation. It may run
// twice (see the retry above) and must not keep state from a failed run.
type groupFunc func(ctx context.Context, tx *sql.Tx) error

type groupJob struct {
	ctx  context.Context
	fn   groupFunc
	err  error
	done chan struct{}
}

type groupCommitter struct {
	jobs    chan *groupJob // unbuffered: a send is a hand-over to the committer
	stop    chan struct{}
	stopped chan struct{}
	once    sync.Once
	// commits and changes count group commits and the changes they held.
	commits, changes atomic.Int64
}

// GroupCommits reports how many write transactions the group committer ran
// and how many changes they held: changes ÷ commits is the average group.
func (s *Store) GroupCommits() (commits, changes int64) {
	if s.group == nil {
		return 0, 0
	}
	return s.group.commits.Load(), s.group.changes.Load()
}

var errClosed = errors.New("store closed")

func (s *Store) startGroupCommit() {
	g := &groupCommitter{jobs: make(chan *groupJob), stop: make(chan struct{}), stopped: make(chan struct{})}
	s.group = g
	go s.runGroups(g)
}

// close waits for the group being committed, then stops the
// committer; later writes fail with errClosed.
func (g *groupCommitter) close() {
	if g == nil {
		return
	}
	g.once.Do(func() { close(g.stop) })
	<-g.stopped
}

// collect adds to batch every writer waiting to hand over its change.
func (s *Store) collect(g *groupCommitter, batch *[]*groupJob) {
	for len(*batch) < maxGroup {
		select {
		case j := <-g.jobs:
			*batch = append(*batch, j)
		default:
			return
		}
	}
}

func (s *Store) runGroups(g *groupCommitter) {
	defer close(g.stopped)
	batch := make([]*groupJob, 0, maxGroup)
	for {
		select {
		case j := <-g.jobs:
			batch = append(batch[:0], j)
		case <-g.stop:
			return
		}
		// Everyone blocked in writeGrouped right now joins this group.
		// Alone, the committer first lets the goroutines that are ready to
		// run go ahead once: under load some of them are about to write,
		// and joining this group saves them a commit; idle, Gosched returns
		// at once.
		for yielded := false; ; yielded = true {
			s.collect(g, &batch)
			if len(batch) > 1 || yielded {
				break
			}
			runtime.Gosched()
		}
		s.commitGroup(batch)
		g.commits.Add(1)
		g.changes.Add(int64(len(batch)))
		for i, j := range batch {
			close(j.done)
			batch[i] = nil
		}
	}
}

// writeGrouped runs fn in a transaction shared with other concurrent
// writers and returns once that transaction has committed (or fn's change
// has been rolled back, with fn's error).
func (s *Store) writeGrouped(ctx context.Context, fn groupFunc) error {
	if s.writer == nil {
		return errReadOnly
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	j := &groupJob{ctx: ctx, fn: fn, done: make(chan struct{})}
	select {
	case s.group.jobs <- j:
	case <-ctx.Done():
		return ctx.Err()
	case <-s.group.stop:
		return errClosed
	}
	// Once handed over the change is committed or not regardless of ctx, so
	// the caller waits for the answer rather than guess it.
	<-j.done
	return j.err
}

func (s *Store) commitGroup(batch []*groupJob) {
	live := make([]*groupJob, 0, len(batch))
	for _, j := range batch {
		// A caller that gave up while queued gets its ctx error, and its
		// change is not made.
		if err := j.ctx.Err(); err != nil {
			j.err = err
			continue
		}
		live = append(live, j)
	}
	switch len(live) {
	case 0:
		return
	case 1:
		live[0].err = s.writeAlone(live[0])
		return
	}
	if !s.commitShared(live) {
		for _, j := range live {
			j.err = s.writeAlone(j)
		}
	}
}

// writeAlone runs one job in a transaction of its own. Like a shared one it
// runs without the caller's cancellation, which the caller stopped
// watching when it handed the job over; it also spares the driver a
// goroutine per statement watching a context that never ends in time.
func (s *Store) writeAlone(j *groupJob) error {
	ctx := context.WithoutCancel(j.ctx)
	return s.write(ctx, func(tx *sql.Tx) error { return j.fn(ctx, tx) })
}

// commitShared runs every job in one transaction, each in a savepoint. It
// reports false when the transaction could not be committed; then nothing
// of it was kept and the jobs' errors are meaningless.
func (s *Store) commitShared(jobs []*groupJob) bool {
	ctx := context.Background()
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		s.log.Warn("store: group commit: begin", "db", s.path, "err", err)
		return false
	}
	exec := func(stmt *sql.Stmt) error {
		_, err := tx.StmtContext(ctx, stmt).ExecContext(ctx)
		return err
	}
	for _, j := range jobs {
		if err := exec(s.stmts.savepoint); err != nil {
			s.log.Warn("store: group commit: savepoint", "db", s.path, "err", err)
			_ = tx.Rollback()
			return false
		}
		j.err = j.fn(context.WithoutCancel(j.ctx), tx)
		if j.err != nil {
			// ROLLBACK TO fails when SQLite already rolled the whole
			// transaction back (a full disk, an I/O error): start over.
			if err := exec(s.stmts.rollbackToSavepoint); err != nil {
				_ = tx.Rollback()
				return false
			}
		}
		if err := exec(s.stmts.releaseSavepoint); err != nil {
			_ = tx.Rollback()
			return false
		}
	}
	if err := tx.Commit(); err != nil {
		s.log.Warn("store: group commit: commit", "db", s.path, "err", err)
		return false
	}
	if s.ckpt != nil {
		s.ckpt.writes.Add(1)
	}
	return true
}
