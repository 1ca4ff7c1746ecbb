package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/native"
	"github.com/clawrl/clawrl/loop"
	"github.com/clawrl/clawrl/modelref"
	"github.com/clawrl/clawrl/rl"
	"github.com/clawrl/clawrl/store"
)

// startLearning builds and starts the judge and train loops of `clawrl
// serve` (package loop) for the served engine: the judge and the OPD teacher
// run on its base weights (or --judge-url), the native trainer trains LoRA
// adapters over the served model's own weights (none for the test engine:
// samples are built and kept), and new adapter versions are published to the engine. The loops
// stop when ctx ends; Wait on the returned runner.
func startLearning(ctx context.Context, o serveOptions, eng engine.Engine,
	st store.LearningStore, gate *rl.Gate, reg *prometheus.Registry, log *slog.Logger) (*loop.Runner, error) {
	modelDir, _, err := trainedModel(o, log)
	if err != nil {
		return nil, err
	}
	pub, _ := eng.(engine.Publisher)
	s := o.learning
	s.Method = o.method
	parts := loop.Parts{Engine: eng, Publisher: pub, Store: st, Gate: gate, DataDir: o.data, ModelDir: modelDir, Log: log}
	if n, ok := eng.(*native.Engine); ok {
		parts.Model = n.Model() // the trainer shares the served weights
	}
	r, err := s.Build(parts)
	if err != nil {
		return nil, fmt.Errorf("learning loop: %w", err)
	}
	if err := reg.Register(r.Collector()); err != nil {
		return nil, fmt.Errorf("learning loop metrics: %w", err)
	}
	if err := reg.Register(r.TeacherCollector()); err != nil {
		return nil, fmt.Errorf("learning loop metrics: %w", err)
	}
	if err := r.Start(ctx); err != nil {
		return nil, fmt.Errorf("learning loop: %w", err)
	}
	return r, nil
}

// trainedModel is the path (folder or GGUF file) of the served model, which
// the trainer loads its own copy of, and its id: --model resolved, or the
// default model, SmolLM2 (pulled by openEngine when missing); "" for the
// test engine, which has no weights.
func trainedModel(o serveOptions, log *slog.Logger) (path, id string, err error) {
	if os.Getenv(testEngineEnv) == "scripted" {
		return "", "", nil
	}
	spec := o.model
	if spec == "" {
		spec = modelref.DefaultModel
	}
	return resolveModel(context.Background(), spec, o.data, log)
}
