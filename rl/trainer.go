package rl

import "context"

// Trainer is what the scheduler needs from a trainer (the native trainer of
// model/, later a remote one). It is defined here, where it is used; the
// trainer implements it.
type Trainer interface {
	// Step runs one optimizer step on batch: recompute π_old under the
	// current weights, correct behaviour → old with the truncated importance
	// weight, and apply the loss. Every sample has passed Validate and is at
	// most the configured number of versions stale.
	Step(ctx context.Context, batch []Sample) (StepMetrics, error)
	// Save writes the trained weights (a PEFT adapter: adapter_config.json
	// and adapter_model.safetensors) and the optimizer state into dir, so a
	// restart resumes exactly. dir exists and is empty.
	Save(dir string) error
	// Load restores weights and optimizer state written by Save.
	Load(dir string) error
}

// StepMetrics is what one trainer step reports.
type StepMetrics struct {
	Loss         float64
	ClipFraction float64 // fraction of tokens whose ratio was clipped
	KL           float64 // mean KL(π_θ‖π_ref) estimate per token
	Entropy      float64
	Tokens       int // response tokens trained on
	// Truncated importance weights behaviour → old, per token.
	ImportanceWeightMean float64
	ImportanceWeightMax  float64
	ImportanceTruncated  float64 // fraction of tokens whose weight hit the cap
	// MomentumReset: the optimizer's first moment was zeroed before the
	// step (StepConfig.MomentumReset).
	MomentumReset bool
	// AvoidSatOut counts pushed-down answers the step left out, already
	// their bound below the base model (RehearsalConfig.AvoidBound).
	AvoidSatOut int
	// AvoidShift is the pushed-down answers' mean summed log-probability
	// from the base model's under the weights before the step (0: none).
	AvoidShift float64
	// AnchorScale multiplied the step's rehearsal anchors' advantages
	// (StepConfig.AnchorScale); 0 from a trainer that does not say.
	AnchorScale float64
	// Lean: the native trainer remade activations it did not keep
	// (train.Config.ActivationBudget).
	Lean bool
}

// Yielder is implemented by trainers that can pause inside a step (the
// native trainer: between micro-batches and every few milliseconds inside
// one). The scheduler hands them a function that waits while
// serving generations run (bounded by SchedulerConfig.IdleWait), so a long
// step on a small machine gives the cores back to serving as soon as a
// request arrives instead of only between steps.
type Yielder interface {
	SetYield(yield func(ctx context.Context) error)
}
