package main

import (
	"log/slog"
	"path/filepath"

	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/ui"
)

// newDashboard builds the dashboard and browser chat that `clawrl serve`
// mounts at "/" beside the API (package ui). It reads `clawrl bench learn`
// results from benchResultsDir.
func newDashboard(o serveOptions, eng engine.Engine, st ui.Store, log *slog.Logger) (*ui.Handler, error) {
	return ui.New(ui.Config{Store: st, Logger: log, Model: eng.Info().ID, Decode: eng.Format().Decode, BenchDir: benchResultsDir(o.data)})
}

// benchResultsDir is where the dashboard looks for `clawrl bench learn`
// result files (*.json): DATA/bench/learn.
func benchResultsDir(data string) string { return filepath.Join(data, "bench", "learn") }
