// Package sqlite is the embedded default store.Store: one SQLite file in WAL
// mode, on modernc.org/sqlite (pure Go, no cgo).
//
// # Connections
//
// SQLite allows one writer at a time. Rather than let 200 sessions race for
// the write lock and spin on SQLITE_BUSY, the store owns exactly one writer
// connection (database/sql queues callers for it) and a pool of read-only
// connections; WAL lets the readers run while the writer commits, and lets
// other processes (`clawrl export`, `clawrl status`) read while a server runs.
// Every transition is one IMMEDIATE transaction on the writer. The gateway's
// hot writes (turns, observations, feedback, sessions) are group-committed:
// concurrent ones share one transaction, a savepoint each, and each caller
// returns after that transaction commits (group.go).
//
// # Durability
//
// The default is WAL with synchronous=NORMAL. A commit then writes the
// transaction to the WAL file before InsertTurn returns, so a kill -9 of the
// process loses nothing that was committed: the bytes are in the kernel's page
// cache and the next open replays the WAL. What NORMAL gives up is an fsync
// per commit, so only an OS crash or power cut can lose the last commits (the
// file stays consistent either way). FULL would put an fsync on every turn,
// observation and touch — the single writer would then serve at the disk's
// fsync rate, which is what bounds the gateway. Pass Options.Synchronous =
// "FULL" where power-loss durability is worth that.
//
// # Layout
//
// A turn is a small mutable row in turns (state, next state, feedback, what
// the loops filter on) and a write-once row in turn_payloads (messages,
// tools, prompt and response text and ids). Large payload fields are stored
// as content-defined chunks shared across turns and sessions (chunks.go).
// Reads take the row fresh and the payload from an LRU of decoded payloads
// or from turn_payloads (payload.go); callers always get deep copies.
//
// # Migrations and extending the store
//
// migrations/NNNN_name.sql are embedded and applied in order, each in its
// own transaction that also records it in schema_migrations; a database
// with a step this binary does not know is refused. 0001 (sessions, turns,
// the state machine) and 0003 (chunks) are the store's, 0002 the learning
// loop's; new steps take the next free number, in files of their own.
//
// Code in this package that adds tables (learning.go) changes rows with
// s.write (one IMMEDIATE transaction on the single writer), moves turns with
// s.transition inside it (guarded by the current state, ErrConflict
// otherwise; the schema's trigger refuses anything store.CanTransition does
// not allow), and reads whole turns as SELECT rowColumns FROM turns t …,
// scanTurnRow, then fillPayloads (or fillPayloadsTx inside a read
// transaction).
package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/clawrl/clawrl/store"
)

// defaultChunkCacheBytes bounds the cache of raw chunk data, kept in
// read-only stores too: an export reads the same system-prompt chunks for
// every turn.
const defaultChunkCacheBytes = 32 << 20

// FileName is the database's name inside a data directory.
const FileName = "clawrl.db"

// Options tune Open. The zero value is the recommended configuration.
type Options struct {
	// Synchronous is SQLite's synchronous pragma: "NORMAL" (default) or "FULL".
	// See the package comment for the trade.
	Synchronous string
	// Readers is the size of the read-only connection pool (default: 4, at
	// least GOMAXPROCS).
	Readers int
	// BusyTimeout is how long a connection waits for another process's lock
	// (default 10s). Inside one process the single writer never waits.
	BusyTimeout time.Duration
	// ReadOnly opens an existing database without migrating or writing: for
	// export and status next to a running server. Write methods fail.
	ReadOnly bool
	// PageSize is the SQLite page size of a newly created database (default
	// 4096; ignored for an existing file). See createDatabase.
	PageSize int
	// PayloadCacheBytes bounds the cache of decoded turn payloads (payload.go):
	// 0 means 64 MiB for a read-write store and none for a read-only one
	// (export reads each turn once); negative disables it.
	PayloadCacheBytes int
	// Logger receives migration and maintenance messages (default slog.Default()).
	Logger *slog.Logger
}

// Store is a store.Store backed by one SQLite file.
type Store struct {
	path   string
	writer *sql.DB // exactly one connection; nil when read-only
	reader *sql.DB
	log    *slog.Logger
	stmts  statements
	ckpt   *checkpointer   // nil when read-only
	group  *groupCommitter // nil when read-only (group.go)
	cache  *payloadCache   // nil when disabled
	// chunks caches chunk data for readers (the system prompt's chunks are
	// in every turn); chunkIDs the writer's known chunk ids (chunks.go).
	chunks   *lru[int64, []byte]
	chunkIDs chunkIDs
	// inlineOnly writes every payload field inline (benchmarks compare).
	inlineOnly bool
}

var _ store.Store = (*Store)(nil)

// OpenDir opens (creating if needed) the store in data directory dir.
func OpenDir(ctx context.Context, dir string, opts Options) (*Store, error) {
	if !opts.ReadOnly {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("open store: create data dir %s: %w", dir, err)
		}
	}
	return Open(ctx, filepath.Join(dir, FileName), opts)
}

// Open opens the database file at path, creating and migrating it unless
// opts.ReadOnly.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	sync := strings.ToUpper(opts.Synchronous)
	switch sync {
	case "":
		sync = "NORMAL"
	case "NORMAL", "FULL", "EXTRA":
	default:
		return nil, fmt.Errorf("open store %s: synchronous %q: want NORMAL or FULL", path, opts.Synchronous)
	}
	if opts.Readers <= 0 {
		opts.Readers = max(4, runtime.GOMAXPROCS(0))
	}
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = 10 * time.Second
	}
	if opts.ReadOnly {
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("open store %s read-only: %w", path, err)
		}
	}
	s := &Store{path: path, log: opts.Logger, chunks: newLRU[int64, []byte](defaultChunkCacheBytes)}
	switch {
	case opts.PayloadCacheBytes > 0:
		s.cache = newPayloadCache(opts.PayloadCacheBytes)
	case opts.PayloadCacheBytes == 0 && !opts.ReadOnly:
		s.cache = newPayloadCache(defaultPayloadCacheBytes)
	}
	busy := fmt.Sprintf("_pragma=busy_timeout(%d)", opts.BusyTimeout.Milliseconds())
	base := "file:" + escapePath(path) + "?" + busy + "&_pragma=foreign_keys(1)&_pragma=synchronous(" + sync + ")"

	var err error
	if !opts.ReadOnly {
		if err := createDatabase(ctx, path, opts.PageSize, busy); err != nil {
			return nil, fmt.Errorf("open store %s: %w", path, err)
		}
		// journal_mode is persistent in the file; setting it on the writer is enough.
		s.writer, err = sql.Open("sqlite", base+"&_pragma=journal_mode(WAL)&_txlock=immediate"+
			fmt.Sprintf("&_pragma=wal_autocheckpoint(%d)&_pragma=journal_size_limit(%d)", walBackstopPages, walSizeLimit))
		if err != nil {
			return nil, fmt.Errorf("open store %s: %w", path, err)
		}
		s.writer.SetMaxOpenConns(1)
		s.writer.SetMaxIdleConns(1)
		s.writer.SetConnMaxLifetime(0)
		s.writer.SetConnMaxIdleTime(0)
		if err := s.writer.PingContext(ctx); err != nil {
			s.writer.Close()
			return nil, fmt.Errorf("open store %s: %w", path, err)
		}
		if err := s.migrate(ctx); err != nil {
			s.writer.Close()
			return nil, fmt.Errorf("open store %s: %w", path, err)
		}
		if err := s.startCheckpointer(base); err != nil {
			s.writer.Close()
			return nil, fmt.Errorf("open store %s: %w", path, err)
		}
	}
	s.reader, err = sql.Open("sqlite", base+"&_pragma=query_only(1)")
	if err != nil {
		s.closeWriter()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	s.reader.SetMaxOpenConns(opts.Readers)
	s.reader.SetMaxIdleConns(opts.Readers)
	if opts.ReadOnly {
		if err := s.checkSchemaReadable(ctx); err != nil {
			s.reader.Close()
			return nil, fmt.Errorf("open store %s read-only: %w", path, err)
		}
	}
	if err := s.prepare(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if !opts.ReadOnly {
		s.startGroupCommit()
	}
	return s, nil
}

// defaultPageSize is SQLite's own default. Larger pages mean fewer WAL
// writes for a ~100 KB turn, but every small change (a state transition, a
// session touch) then writes a larger page; measured with realistic turns,
// 8/16/32 KiB pages were no faster to insert and slower to observe
// (BENCHMARKS.md), so 4 KiB stays.
const defaultPageSize = 4096

// createDatabase gives a new database file its page size before anything
// else touches it: SQLite fixes the page size when the first table or the
// switch to WAL writes the header, and cannot change it in WAL mode after.
// busy is the busy_timeout pragma of the store's other connections: another
// process that opens the new file in between (a reader polling for the
// store to appear, `clawrl status`) holds a shared lock that the switch to
// WAL must wait out rather than fail on with SQLITE_BUSY.
func createDatabase(ctx context.Context, path string, pageSize int, busy string) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	return initDatabase(ctx, path, pageSize, busy)
}

// initDatabase sets path's page size and WAL mode (createDatabase, for a
// file that did not exist).
func initDatabase(ctx context.Context, path string, pageSize int, busy string) error {
	if pageSize == 0 {
		pageSize = defaultPageSize
	}
	if pageSize < 512 || pageSize > 65536 || pageSize&(pageSize-1) != 0 {
		return fmt.Errorf("page size %d: want a power of two from 512 to 65536", pageSize)
	}
	db, err := sql.Open("sqlite", "file:"+escapePath(path)+"?"+busy)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, q := range []string{fmt.Sprintf("PRAGMA page_size = %d", pageSize), "PRAGMA journal_mode = WAL"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("create database: %s: %w", q, err)
		}
	}
	return db.Close()
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Close closes every connection. On the writer SQLite checkpoints the WAL
// into the main file when the last connection closes.
func (s *Store) Close() error {
	// The committer finishes the group it is running before the statements
	// and the writer close under it.
	s.group.close()
	err := s.stmts.close()
	if s.reader != nil {
		err = errors.Join(err, s.reader.Close())
	}
	return errors.Join(err, s.closeWriter())
}

func (s *Store) closeWriter() error {
	err := s.ckpt.close()
	if s.writer == nil {
		return err
	}
	return errors.Join(err, s.writer.Close())
}

// IntegrityCheck runs PRAGMA integrity_check and returns nil when SQLite
// answers ok.
func (s *Store) IntegrityCheck(ctx context.Context) error {
	rows, err := s.reader.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return fmt.Errorf("integrity check %s: %w", s.path, err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return fmt.Errorf("integrity check %s: %w", s.path, err)
		}
		if line != "ok" {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("integrity check %s: %w", s.path, err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("integrity check %s: %s", s.path, strings.Join(problems, "; "))
	}
	return nil
}

// errReadOnly is returned by write methods of a store opened ReadOnly.
var errReadOnly = errors.New("store opened read-only")

// write runs fn in one IMMEDIATE transaction on the writer connection.
// Other files of this package (and the learning loop's tables) use it for
// every change, so each transition is atomic and serialised.
func (s *Store) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if s.writer == nil {
		return errReadOnly
	}
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		return errors.Join(err, tx.Rollback())
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if s.ckpt != nil {
		s.ckpt.writes.Add(1)
	}
	return nil
}

// classify maps SQLite constraint failures to the store's sentinel errors:
// a duplicate unique key or an illegal transition is a conflict.
func classify(err error) error {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return err
	}
	switch se.Code() {
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY,
		sqlite3.SQLITE_CONSTRAINT_TRIGGER:
		return fmt.Errorf("%w: %w", store.ErrConflict, err)
	}
	if se.Code()&0xff == sqlite3.SQLITE_CONSTRAINT && strings.Contains(se.Error(), "clawrl:") {
		return fmt.Errorf("%w: %w", store.ErrConflict, err)
	}
	return err
}

// escapePath makes a file path safe inside a SQLite URI: only the
// characters that URIs give meaning to are percent-encoded.
func escapePath(p string) string {
	r := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")
	return r.Replace(p)
}

// newID returns prefix followed by 24 random hex digits.
func newID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return prefix + hex.EncodeToString(b[:])
}

// nanos stores a time as Unix nanoseconds; the zero time is 0.
func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// fromNanos is nanos' inverse, in UTC.
func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}
