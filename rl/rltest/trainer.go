// Package rltest holds test doubles for the learning loop's neighbours. Its
// Trainer stands in for the native trainer in scheduler and crash tests: it
// does no arithmetic on weights, but it keeps the state a real trainer must
// keep across crashes — the optimizer step count and every turn it has
// trained on — in the folder Save writes, so tests can check that a kill -9
// at any point neither loses a step nor trains a sample twice.
package rltest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/clawrl/clawrl/rl"
)

// State is what the double saves.
type State struct {
	Steps   int64    `json:"steps"`   // optimizer steps taken
	Trained []string `json:"trained"` // turn ids, in training order
}

// Trainer is a test double of rl.Trainer.
type Trainer struct {
	mu    sync.Mutex
	state State
	// StepHook, when set, runs inside Step (to block, fail or observe).
	StepHook func(ctx context.Context, batch []rl.Sample) error
	// Batches records every batch Step received, for assertions.
	Batches [][]rl.Sample
}

var _ rl.Trainer = (*Trainer)(nil)

// StateFile is the double's "optimizer state" inside a version folder.
const StateFile = "trainer_state.json"

// Step implements rl.Trainer.
func (t *Trainer) Step(ctx context.Context, batch []rl.Sample) (rl.StepMetrics, error) {
	if t.StepHook != nil {
		if err := t.StepHook(ctx, batch); err != nil {
			return rl.StepMetrics{}, err
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.Batches = append(t.Batches, batch)
	t.state.Steps++
	tokens := 0
	for _, s := range batch {
		if err := s.Validate(); err != nil {
			return rl.StepMetrics{}, err
		}
		t.state.Trained = append(t.state.Trained, s.TurnID)
		tokens += len(s.ResponseIDs)
	}
	return rl.StepMetrics{Loss: 1 / float64(t.state.Steps), Tokens: tokens, ImportanceWeightMean: 1, ImportanceWeightMax: 1}, nil
}

// Save implements rl.Trainer: a PEFT-shaped adapter_config.json and the state.
func (t *Trainer) Save(dir string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	cfg := `{"peft_type":"LORA","r":16,"lora_alpha":32,"target_modules":["q_proj","v_proj"]}`
	if err := os.WriteFile(filepath.Join(dir, "adapter_config.json"), []byte(cfg), 0o644); err != nil {
		return err
	}
	b, err := json.Marshal(t.state)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, StateFile), b, 0o644)
}

// Load implements rl.Trainer.
func (t *Trainer) Load(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, StateFile))
	if err != nil {
		return fmt.Errorf("load trainer state: %w", err)
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		return fmt.Errorf("load trainer state %s: %w", dir, err)
	}
	t.mu.Lock()
	t.state = st
	t.mu.Unlock()
	return nil
}

// State returns a copy of the in-memory state.
func (t *Trainer) State() State {
	t.mu.Lock()
	defer t.mu.Unlock()
	return State{Steps: t.state.Steps, Trained: append([]string(nil), t.state.Trained...)}
}

// ReadState reads the state saved in a version folder.
func ReadState(dir string) (State, error) {
	var st State
	b, err := os.ReadFile(filepath.Join(dir, StateFile))
	if err != nil {
		return st, err
	}
	return st, json.Unmarshal(b, &st)
}
