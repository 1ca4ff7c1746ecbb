// Package pgtest runs a real, throwaway PostgreSQL server for tests: the
// Debian `postgresql` package's initdb and pg_ctl, a cluster in a temporary
// folder, listening only on a unix socket there. One server serves a whole
// test binary; each test gets databases of its own (Database).
//
// Without Postgres installed the tests that need it skip, or fail when
// CLAWRL_REQUIRE_REFS=1 (scripts/test sets it, so CI really runs them).
// Postgres refuses to run as root, so under root the server runs as the
// `postgres` user the Debian package creates.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Server is a running test cluster.
type Server struct {
	dir      string // the socket folder; the cluster is dir/data
	bin      string
	asUser   string // "" when we are not root
	borrowed bool   // started by a parent test process (socketEnv)
}

// socketEnv passes a running server's socket folder to child processes the
// tests start (crash children, clawrl binaries under test), so they use it
// instead of starting their own.
const socketEnv = "CLAWRL_PGTEST_SOCKET"

var (
	once    sync.Once
	shared  *Server
	initErr error
)

// Main runs the tests of a package and stops the server afterwards (when one
// was started). Use it from TestMain: os.Exit(pgtest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	if shared != nil && !shared.borrowed {
		if err := shared.stop(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest: stop postgres:", err)
		}
	}
	return code
}

// Start returns the package's server, starting it on first use. It skips
// tb when Postgres is not installed (fails it under CLAWRL_REQUIRE_REFS=1).
func Start(tb testing.TB) *Server {
	tb.Helper()
	once.Do(func() {
		shared, initErr = start()
		if initErr == nil && !shared.borrowed {
			os.Setenv(socketEnv, shared.dir) //nolint:errcheck // only child processes read it
		}
	})
	check(tb, initErr)
	return shared
}

// New starts a server of the test's own, stopped when the test ends: for
// packages without a TestMain that calls Main.
func New(tb testing.TB) *Server {
	tb.Helper()
	if _, err := binDir(); err != nil {
		check(tb, err)
	}
	s, err := start()
	check(tb, err)
	if !s.borrowed {
		tb.Cleanup(func() {
			if err := s.stop(); err != nil {
				tb.Errorf("postgres: stop: %v", err)
			}
		})
	}
	return s
}

// check skips (or, under CLAWRL_REQUIRE_REFS=1, fails) tb when Postgres is
// missing, and fails it on any other error.
func check(tb testing.TB, err error) {
	tb.Helper()
	if err == nil {
		return
	}
	if errors.Is(err, errMissing) && os.Getenv("CLAWRL_REQUIRE_REFS") != "1" {
		tb.Skipf("postgres: %v (apt-get install postgresql)", err)
	}
	tb.Fatalf("postgres: %v", err)
}

var errMissing = errors.New("initdb and pg_ctl not found")

// binDir finds the server programs: on PATH, else the newest Debian
// /usr/lib/postgresql/N/bin.
func binDir() (string, error) {
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		if _, err := exec.LookPath("initdb"); err == nil {
			return filepath.Dir(p), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return vi > vj
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "pg_ctl")); err == nil {
			return d, nil
		}
	}
	return "", errMissing
}

func start() (*Server, error) {
	if dir := os.Getenv(socketEnv); dir != "" {
		return &Server{dir: dir, borrowed: true}, nil
	}
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	// A short path: a unix socket's path is limited to ~100 bytes.
	dir, err := os.MkdirTemp("", "clawrl-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, bin: bin}
	if err := s.init(); err != nil {
		os.RemoveAll(dir) //nolint:errcheck // best effort; the error says what failed
		return nil, err
	}
	return s, nil
}

// init makes the cluster under s.dir and starts it.
func (s *Server) init() error {
	dir := s.dir
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return fmt.Errorf("running as root and no postgres user to run the server as: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			return err
		}
		s.asUser = "postgres"
	}
	data := filepath.Join(dir, "data")
	if out, err := s.run("initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync", "--locale=C"); err != nil {
		return fmt.Errorf("initdb: %w\n%s", err, out)
	}
	// No TCP at all; fsync off: a test cluster is thrown away, and the
	// crash tests kill clawrl, not Postgres.
	opts := fmt.Sprintf("-k %s -c listen_addresses='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200", dir)
	if out, err := s.run("pg_ctl", "-D", data, "-l", filepath.Join(dir, "log"), "-o", opts, "-w", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "log"))
		return fmt.Errorf("pg_ctl start: %w\n%s\n%s", err, out, log)
	}
	return nil
}

// run runs a server program, as the postgres user when we are root.
func (s *Server) run(prog string, args ...string) ([]byte, error) {
	path := filepath.Join(s.bin, prog)
	var cmd *exec.Cmd
	if s.asUser != "" {
		cmd = exec.Command("runuser", append([]string{"-u", s.asUser, "--", path}, args...)...)
	} else {
		cmd = exec.Command(path, args...)
	}
	cmd.Dir = s.dir
	return cmd.CombinedOutput()
}

func (s *Server) stop() error {
	out, err := s.run("pg_ctl", "-D", filepath.Join(s.dir, "data"), "-m", "immediate", "-w", "stop")
	if err != nil {
		return fmt.Errorf("%w\n%s", err, out)
	}
	return os.RemoveAll(s.dir)
}

// URL is a postgres:// URL for database name on this server.
func (s *Server) URL(name string) string {
	return fmt.Sprintf("postgres:///%s?host=%s&user=postgres&sslmode=disable", name, s.dir)
}

// Database returns the URL of database name, creating it if it does not
// exist yet (so a test can reopen the same database by name).
func (s *Server) Database(tb testing.TB, name string) string {
	tb.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		tb.Fatalf("postgres: connect: %v", err)
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	var pe *pgconn.PgError
	if err != nil && !(errors.As(err, &pe) && pe.Code == "42P04") { // duplicate_database
		tb.Fatalf("postgres: create database %s: %v", name, err)
	}
	return s.URL(name)
}

// NameFor maps a test's folder to a database name, so openers that take a
// directory (storetest, learningtest) reopen the same database for the same
// folder.
func NameFor(dir string) string {
	h := fnv.New64a()
	h.Write([]byte(dir))
	return "t" + strings.ToLower(strconv.FormatUint(h.Sum64(), 36))
}
