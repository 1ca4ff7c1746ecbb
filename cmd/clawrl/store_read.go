package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/clawrl/clawrl/store"
	"github.com/clawrl/clawrl/store/postgres"
	"github.com/clawrl/clawrl/store/sqlite"
)

// readStore is what `clawrl status` and `clawrl export` read, from either
// backend, opened read-only so they are safe beside running servers.
type readStore interface {
	store.Sessions
	store.Turns
	Stats(ctx context.Context) (store.Stats, error)
	SchemaVersion(ctx context.Context) (int, error)
	// MaxSeq is the newest turn's row order (export's stable end).
	MaxSeq(ctx context.Context) (int64, error)
	Close() error
}

var (
	_ readStore = (*sqlite.Store)(nil)
	_ readStore = (*postgres.Store)(nil)
)

// addReadStoreFlags registers --data and --store on a reading command.
func addReadStoreFlags(cmd *cobra.Command, dataDir, storeURL *string) {
	addDataFlag(cmd, dataDir)
	cmd.Flags().StringVar(storeURL, "store", "", "read this store instead of --data's: sqlite:PATH or postgres://… (the one gateways and the trainer share)")
}

// openReadStore opens the store --store names read-only, else the SQLite
// store of --data.
func openReadStore(ctx context.Context, spec, dataDir string) (readStore, error) {
	switch {
	case spec == "":
		return openStoreReadOnly(ctx, dataDir)
	case strings.HasPrefix(spec, "sqlite:"):
		path := strings.TrimPrefix(spec, "sqlite:")
		if path == "" {
			return nil, errors.New("--store sqlite:PATH: empty path")
		}
		st, err := sqlite.Open(ctx, path, sqlite.Options{ReadOnly: true})
		if err != nil {
			return nil, fmt.Errorf("--store %s: %w", spec, err)
		}
		return st, nil
	case strings.HasPrefix(spec, "postgres://"), strings.HasPrefix(spec, "postgresql://"):
		st, err := postgres.Open(ctx, spec, postgres.Options{ReadOnly: true})
		if err != nil {
			return nil, fmt.Errorf("--store %s: %w", redactURL(spec), err)
		}
		return st, nil
	}
	scheme, _, _ := strings.Cut(spec, ":")
	return nil, fmt.Errorf("--store %q: unknown kind %q: want sqlite:PATH or postgres://…", redactURL(spec), scheme)
}
