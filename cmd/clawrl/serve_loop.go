package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/loop"
	"github.com/clawrl/clawrl/rl"
	"github.com/clawrl/clawrl/store"
)

// startLearning builds and starts the judge and train loops of `clawrl
// serve` (package loop) for the served engine: the judge and the OPD teacher
// run on its base weights (or --judge-url), the native trainer trains a copy
// of the model in modelDir ("" = no trainer: samples are built and kept),
// and new adapter versions are published to the engine. The loops stop when
// ctx ends; Wait on the returned runner.
func startLearning(ctx context.Context, s loop.Settings, eng engine.Engine, modelDir, data string,
	st store.LearningStore, gate *rl.Gate, reg *prometheus.Registry, log *slog.Logger) (*loop.Runner, error) {
	pub, _ := eng.(engine.Publisher)
	r, err := s.Build(loop.Parts{Engine: eng, Publisher: pub, Store: st, Gate: gate, DataDir: data, ModelDir: modelDir, Log: log})
	if err != nil {
		return nil, fmt.Errorf("learning loop: %w", err)
	}
	if err := reg.Register(r.Collector()); err != nil {
		return nil, fmt.Errorf("learning loop metrics: %w", err)
	}
	if err := r.Start(ctx); err != nil {
		return nil, fmt.Errorf("learning loop: %w", err)
	}
	return r, nil
}
