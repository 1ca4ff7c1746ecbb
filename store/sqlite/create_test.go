package sqlite

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCreateWaitsForReader: another process that opens a new store's file
// while the server creates it (a poller waiting for the store to appear,
// `clawrl status`) holds a shared lock; the switch to WAL waits it out
// under the store's busy timeout instead of failing the server's start
// with SQLITE_BUSY (seen in TestAgentTrainSurvivesKills: "create database:
// PRAGMA journal_mode = WAL: database is locked").
func TestCreateWaitsForReader(t *testing.T) {
	for _, tc := range []struct {
		busy string
		ok   bool
	}{
		{"_pragma=busy_timeout(0)", false}, // the old createDatabase: no wait
		{"_pragma=busy_timeout(10000)", true},
	} {
		path := filepath.Join(t.TempDir(), "clawrl.db")
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		reader, err := sql.Open("sqlite", "file:"+escapePath(path))
		if err != nil {
			t.Fatal(err)
		}
		tx, err := reader.Begin()
		if err != nil {
			t.Fatal(err)
		}
		var n int
		if err := tx.QueryRow("SELECT count(*) FROM sqlite_master").Scan(&n); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			time.Sleep(200 * time.Millisecond)
			tx.Rollback()
			close(done)
		}()
		err = initDatabase(context.Background(), path, 0, tc.busy)
		<-done
		reader.Close()
		switch {
		case tc.ok && err != nil:
			t.Errorf("%s: %v", tc.busy, err)
		case !tc.ok && (err == nil || !strings.Contains(err.Error(), "locked")):
			t.Errorf("%s: err %v, want the lock held by the reader (the test no longer holds one)", tc.busy, err)
		}
		if !tc.ok {
			continue
		}
		st, err := Open(context.Background(), path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var mode string
		if err := st.reader.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
			t.Errorf("journal mode %q (%v), want wal", mode, err)
		}
		st.Close()
	}
}
