package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/clawrl/clawrl/store/sqlite"
)

// defaultDataDir is where serve, export and status keep and find the store
// when --data is not given: $XDG_DATA_HOME/clawrl, else
// ~/.local/share/clawrl (the XDG default), else ./clawrl-data when there is
// no home directory at all (a bare container).
func defaultDataDir() string {
	return dataDirFrom(os.Getenv("XDG_DATA_HOME"), os.UserHomeDir)
}

func dataDirFrom(xdgDataHome string, home func() (string, error)) string {
	// The XDG spec says a relative value is invalid and must be ignored.
	if xdgDataHome != "" && filepath.IsAbs(xdgDataHome) {
		return filepath.Join(xdgDataHome, "clawrl")
	}
	if h, err := home(); err == nil && h != "" {
		return filepath.Join(h, ".local", "share", "clawrl")
	}
	return "clawrl-data"
}

// addDataFlag registers --data on cmd, defaulting to defaultDataDir.
func addDataFlag(cmd *cobra.Command, dir *string) {
	cmd.Flags().StringVar(dir, "data", defaultDataDir(), "data directory (the store is DIR/"+sqlite.FileName+")")
}

// openStoreReadOnly opens the store of data directory dir for reading next
// to a running server, with a message that says where it looked.
func openStoreReadOnly(ctx context.Context, dir string) (*sqlite.Store, error) {
	st, err := sqlite.OpenDir(ctx, dir, sqlite.Options{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("no clawrl store in %s (run clawrl serve --data %s first, or pass --data): %w", dir, dir, err)
	}
	return st, nil
}
