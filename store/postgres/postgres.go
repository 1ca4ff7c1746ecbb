// Package postgres is a store.Store (and store.LearningStore) on PostgreSQL,
// through pgx: the store several `clawrl serve` gateways and a `clawrl
// trainer` share (`--store postgres://…`).
//
// # Concurrency
//
// Every change is one transaction at READ COMMITTED. A state transition is
// a guarded UPDATE (… WHERE id = $1 AND state = $from): when two processes
// race for the same turn, Postgres makes the second wait on the row lock and
// re-check the guard after the first commits, so exactly one of them moves
// the turn and the other gets store.ErrConflict. A turn is therefore judged
// once, sampled once and trained once however many processes run the loops;
// CommitVersion locks the versions table, so two trainers cannot both
// publish version N. Work that any process may do (expiring idle sessions)
// is taken with SELECT … FOR UPDATE SKIP LOCKED, so gateways share it
// instead of queueing behind each other.
//
// LISTEN/NOTIFY only wakes other processes early (Listen): a committed
// observation notifies ChannelObserved (the judge has work), a committed
// version ChannelVersions (gateways load it). Everything is found again by
// polling, so a lost notification only costs latency.
//
// # Layout
//
// The same tables as store/sqlite (migrations/), with a turn's write-once
// payload in the turns row itself: Postgres stores large values out of line
// and compressed (TOAST), so a state change does not rewrite them, and
// identical system prompts are not deduplicated.
package postgres

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clawrl/clawrl/store"
)

// Notification channels (Listen).
const (
	ChannelObserved = "clawrl_observed" // a turn got its next state or feedback
	ChannelVersions = "clawrl_versions" // a version was committed; the payload is its number
)

// Options tune Open. The zero value is the recommended configuration.
type Options struct {
	// MaxConns bounds the connection pool (default: pgxpool's, 4 or
	// GOMAXPROCS). Each gateway, trainer and listener holds its own.
	MaxConns int32
	// ReadOnly opens an existing database without migrating: for export
	// and status next to running processes.
	ReadOnly bool
	Logger   *slog.Logger
}

// Store is a store.LearningStore on one Postgres database.
type Store struct {
	pool *pgxpool.Pool
	url  string // for messages, password removed
	log  *slog.Logger
	ro   bool
}

var (
	_ store.Store         = (*Store)(nil)
	_ store.LearningStore = (*Store)(nil)
	_ store.Transitioner  = (*Store)(nil)
)

// Open connects to the database at url (a postgres:// URL or a libpq
// key=value string) and applies the migrations it lacks.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx's parse errors may quote the URL, password included.
		return nil, fmt.Errorf("open store: parse postgres URL: %w", errors.New(redactErr(err.Error(), url)))
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	name := fmt.Sprintf("postgres %s@%s:%d/%s", cfg.ConnConfig.User, cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", name, err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open store %s: %w", name, err)
	}
	s := &Store{pool: pool, url: name, log: opts.Logger, ro: opts.ReadOnly}
	if opts.ReadOnly {
		if _, err := s.SchemaVersion(ctx); err != nil {
			pool.Close()
			return nil, fmt.Errorf("open store %s read-only: not a clawrl database (or not migrated yet): %w", name, err)
		}
		return s, nil
	}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open store %s: %w", name, err)
	}
	return s, nil
}

// redactErr removes the password of url from msg.
func redactErr(msg, url string) string {
	if i := strings.Index(url, "://"); i >= 0 {
		rest := url[i+3:]
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			if _, pw, ok := strings.Cut(rest[:at], ":"); ok && pw != "" {
				msg = strings.ReplaceAll(msg, pw, "xxxxx")
			}
		}
	}
	return msg
}

// Name says which database this is (user, host, port, database; no password).
func (s *Store) Name() string { return s.url }

// Close closes the pool.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

var errReadOnly = errors.New("store opened read-only")

// write runs fn in one transaction and commits it.
func (s *Store) write(ctx context.Context, fn func(tx pgx.Tx) error) error {
	if s.ro {
		return errReadOnly
	}
	return pgx.BeginFunc(ctx, s.pool, fn)
}

// classify maps Postgres constraint failures to the store's sentinel
// errors: a duplicate key or a move the state machine refuses is a conflict.
func classify(err error) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return err
	}
	switch pe.Code {
	case "23505": // unique_violation
		return fmt.Errorf("%w: %w", store.ErrConflict, err)
	case "23514": // check_violation: the state machine's trigger
		if strings.HasPrefix(pe.Message, "clawrl:") {
			return fmt.Errorf("%w: %w", store.ErrConflict, err)
		}
	}
	return err
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

//go:embed migrations/*.sql
var migrationFiles embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

func migrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, fmt.Errorf("read embedded migrations: %w", err)
	}
	var ms []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 || !strings.HasSuffix(e.Name(), ".sql") {
			return nil, fmt.Errorf("migration %s: name must be NNNN_what.sql", e.Name())
		}
		body, err := fs.ReadFile(migrationFiles, "migrations/"+e.Name())
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", e.Name(), err)
		}
		ms = append(ms, migration{version: v, name: e.Name(), sql: string(body)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	return ms, nil
}

// migrationLock is the advisory lock key that serialises migrations: several
// gateways starting at once on an empty database must not all create it.
const migrationLock = 0x636c6177726c // "clawrl"

// migrate applies every step the database lacks, each in one transaction
// with its schema_migrations row, under an advisory lock.
func (s *Store) migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	return s.write(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
			return fmt.Errorf("lock for migrations: %w", err)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`); err != nil {
			return fmt.Errorf("create schema_migrations: %w", err)
		}
		applied := map[int]bool{}
		rows, err := tx.Query(ctx, `SELECT version FROM schema_migrations`)
		if err != nil {
			return fmt.Errorf("read schema_migrations: %w", err)
		}
		versions, err := pgx.CollectRows(rows, pgx.RowTo[int32])
		if err != nil {
			return fmt.Errorf("read schema_migrations: %w", err)
		}
		newest := ms[len(ms)-1].version
		for _, v := range versions {
			if int(v) > newest {
				return fmt.Errorf("database schema version %d is newer than this binary knows (%d): upgrade clawrl", v, newest)
			}
			applied[int(v)] = true
		}
		for _, m := range ms {
			if applied[m.version] {
				continue
			}
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("apply migration %s: %w", m.name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
				m.version, m.name, time.Now().UnixNano()); err != nil {
				return fmt.Errorf("record migration %s: %w", m.name, err)
			}
			s.log.Info("store: applied migration", "file", m.name, "db", s.url)
		}
		return nil
	})
}

// SchemaVersion is the highest migration applied.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v *int32
	if err := s.pool.QueryRow(ctx, `SELECT MAX(version) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version of %s: %w", s.url, err)
	}
	if v == nil {
		return 0, nil
	}
	return int(*v), nil
}
