package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/spf13/pflag"

	"github.com/clawrl/clawrl/store"
	"github.com/clawrl/clawrl/store/postgres"
	"github.com/clawrl/clawrl/store/sqlite"
)

// storeFlagHelp is --store's help, shared by serve and trainer.
const storeFlagHelp = "where the rows live: sqlite:PATH, or postgres://… shared by several gateways and a trainer (default: SQLite under --data)"

// servedStore is what serve and trainer need of a store: the loops' rows
// and the dashboard's browsing queries. store/sqlite and store/postgres
// are both.
type servedStore interface {
	store.LearningStore
	store.Browser
}

// openStore opens the store --store names: "" is the SQLite file under
// data (the single-process default), sqlite:PATH another SQLite file,
// postgres://… (or postgresql://…) a Postgres database. Adding a store is
// one case here.
func openStore(ctx context.Context, spec, data string, log *slog.Logger) (servedStore, error) {
	switch {
	case spec == "":
		return sqlite.OpenDir(ctx, data, sqlite.Options{Logger: log})
	case strings.HasPrefix(spec, "sqlite:"):
		path := strings.TrimPrefix(spec, "sqlite:")
		if path == "" {
			return nil, errors.New("--store sqlite:PATH: empty path")
		}
		return sqlite.Open(ctx, path, sqlite.Options{Logger: log})
	case strings.HasPrefix(spec, "postgres://"), strings.HasPrefix(spec, "postgresql://"):
		return postgres.Open(ctx, spec, postgres.Options{Logger: log})
	}
	scheme, _, _ := strings.Cut(spec, ":")
	return nil, fmt.Errorf("--store %q: unknown kind %q: want sqlite:PATH or postgres://…", redactURL(spec), scheme)
}

// redactURL hides a password in a store URL for messages.
func redactURL(spec string) string {
	scheme, rest, ok := strings.Cut(spec, "://")
	if !ok {
		return spec
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return spec
	}
	user, _, hasPw := strings.Cut(rest[:at], ":")
	if !hasPw {
		return spec
	}
	return scheme + "://" + user + ":xxxxx" + rest[at:]
}

// addScaleFlags registers serve's scale-out flags: --store, --engine and --no-learn.
func addScaleFlags(f *pflag.FlagSet, o *serveOptions) {
	f.StringVar(&o.storeURL, "store", "", storeFlagHelp)
	f.StringVar(&o.engineURL, "engine", "", engineFlagHelp)
	f.BoolVar(&o.noLearn, "no-learn", false, "run a gateway only: no judge or train loop here (a `clawrl trainer` on the same --store learns); new versions are picked up from the store")
}
