package api

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/clawrl/clawrl/store"
	"github.com/clawrl/clawrl/store/sqlite"
)

// openTestStore returns the store the gateway tests run on: the real
// embedded SQLite store in a temporary directory.
func openTestStore(t testing.TB) store.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "clawrl.db"),
		sqlite.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
