// Package torchtrain is a trainer backend that runs torch + PEFT in a
// worker process (worker.py, embedded here), so a team with GPUs trains at
// GPU speed on the same samples with the same losses as the native trainer.
//
// It implements rl.Stepper like *train.Trainer: clawrl keeps the batch, the
// advantages and the loss (rl.PolicyStep and its train.Objective); the
// worker computes the response tokens' log-probabilities and entropies,
// receives d(loss)/d(logp) and d(loss)/d(entropy) for them, back-propagates
// into the LoRA weights and takes the AdamW step. Micro-batches, the
// per-token normalisation, gradient clipping and AdamW's settings are the
// native trainer's, and checkpoints are its layout (PEFT adapter +
// optimizer.safetensors + trainer_state.json), so either backend resumes
// the other's.
//
// The worker needs a Python with torch, transformers, peft and safetensors.
// With Options.NProcPerNode > 1 it runs under torchrun, one process per
// GPU, the model sharded with FSDP2.
package torchtrain

import (
	"bufio"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/clawrl/clawrl/train"
)

//go:embed worker.py
var workerPy []byte

// Options configure Start.
type Options struct {
	// Python is the interpreter that runs the worker.
	Python string
	// ModelDir is the Hugging Face checkpoint folder to train on.
	ModelDir string
	// Config is the training configuration, as for train.New (LoRA mode
	// only); defaults filled in the same way.
	Config train.Config
	// Checkpoint, if set, is a folder written by SaveCheckpoint (by either
	// backend) to start from; its adapter settings win.
	Checkpoint string
	// Device is "cpu" or "cuda" (default: cuda when torch sees one).
	Device string
	// DType of the base weights: "float32" (default) or "bfloat16".
	DType string
	// NProcPerNode > 1 runs the worker under torchrun with that many
	// processes (one per GPU), the model sharded with FSDP2.
	NProcPerNode int
	Logger       *slog.Logger
}

// Trainer is an rl.Stepper in a torch worker process.
type Trainer struct {
	cfg  train.Config
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	dir  string // holds worker.py
	log  *slog.Logger
	done chan struct{}

	mu sync.Mutex // one request at a time
	// steps: optimizer steps the worker has taken (its checkpoint's after
	// init and LoadCheckpoint), which picks each step's rate.
	steps int64
	dead  error
}

// Start launches the worker and loads the model into it.
func Start(ctx context.Context, opts Options) (*Trainer, error) {
	if opts.Python == "" {
		return nil, errors.New("torch trainer: no Python interpreter given")
	}
	if opts.ModelDir == "" {
		return nil, errors.New("torch trainer: no model folder given")
	}
	cfg := opts.Config.WithDefaults()
	if cfg.Mode != train.ModeLoRA {
		return nil, fmt.Errorf("torch trainer: mode %q: only LoRA is supported", cfg.Mode)
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	dir, err := os.MkdirTemp("", "clawrl-torchtrain-")
	if err != nil {
		return nil, fmt.Errorf("torch trainer: %w", err)
	}
	script := filepath.Join(dir, "worker.py")
	if err := os.WriteFile(script, workerPy, 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("torch trainer: %w", err)
	}
	args := []string{"-u", script}
	if opts.NProcPerNode > 1 {
		args = []string{"-m", "torch.distributed.run", "--standalone", "--nproc-per-node", strconv.Itoa(opts.NProcPerNode), script}
	}
	cmd := exec.Command(opts.Python, args...)
	cmd.Stderr = &logWriter{log: opts.Logger.With("part", "torch-worker")}
	in, err := cmd.StdinPipe()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("torch trainer: start %s: %w", opts.Python, err)
	}
	t := &Trainer{cfg: cfg, cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20), dir: dir, log: opts.Logger, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		t.mu.Lock()
		if t.dead == nil {
			t.dead = fmt.Errorf("torch trainer: worker exited: %v", err)
		}
		t.mu.Unlock()
		close(t.done)
	}()
	init := map[string]any{"op": "init", "model": opts.ModelDir, "mode": "lora",
		"lora":  map[string]any{"rank": cfg.LoRA.Rank, "alpha": cfg.LoRA.Alpha, "dropout": cfg.LoRA.Dropout, "targets": cfg.LoRA.TargetModules},
		"adamw": cfg.AdamW, "max_grad_norm": cfg.MaxGradNorm, "seed": cfg.Seed, "device": opts.Device, "dtype": opts.DType,
		"recompute": cfg.Recompute}
	if opts.DType == "" {
		init["dtype"] = "float32"
	}
	if opts.Checkpoint != "" {
		init["adapter"] = opts.Checkpoint
	}
	var resp struct {
		Device    string `json:"device"`
		World     int    `json:"world"`
		Recompute bool   `json:"recompute"`
		Step      int64  `json:"step"`
		LoRA      struct {
			Rank    int      `json:"rank"`
			Alpha   float64  `json:"alpha"`
			Dropout float64  `json:"dropout"`
			Targets []string `json:"targets"`
		} `json:"lora"`
	}
	// Loading a model takes a while; ctx bounds it.
	if err := t.callCtx(ctx, init, &resp); err != nil {
		t.Close()
		return nil, err
	}
	if cfg.Recompute && !resp.Recompute {
		t.Close()
		return nil, errors.New("torch trainer: recompute asked, but the model has no gradient checkpointing")
	}
	t.steps = resp.Step
	t.cfg.LoRA.Rank, t.cfg.LoRA.Alpha, t.cfg.LoRA.Dropout = resp.LoRA.Rank, resp.LoRA.Alpha, resp.LoRA.Dropout
	if len(resp.LoRA.Targets) > 0 {
		t.cfg.LoRA.TargetModules = resp.LoRA.Targets
	}
	opts.Logger.Info("torch trainer ready", "device", resp.Device, "processes", resp.World, "lora_rank", t.cfg.LoRA.Rank)
	return t, nil
}

// logWriter passes the worker's stderr to the log line by line.
type logWriter struct {
	log *slog.Logger
	buf []byte
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		i := strings.IndexByte(string(w.buf), '\n')
		if i < 0 {
			break
		}
		if line := strings.TrimSpace(string(w.buf[:i])); line != "" {
			w.log.Debug(line)
		}
		w.buf = w.buf[i+1:]
	}
	return len(p), nil
}

// Close stops the worker.
func (t *Trainer) Close() error {
	t.mu.Lock()
	t.in.Close() // an empty line (EOF) is the worker's quit
	t.mu.Unlock()
	select {
	case <-t.done:
	case <-time.After(10 * time.Second):
		t.cmd.Process.Kill() //nolint:errcheck // it would not stop
		<-t.done
	}
	return os.RemoveAll(t.dir)
}

// call sends one request and decodes the answer into out.
func (t *Trainer) call(req map[string]any, out any) error {
	return t.callCtx(context.Background(), req, out)
}

func (t *Trainer) callCtx(ctx context.Context, req map[string]any, out any) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dead != nil {
		return t.dead
	}
	raw, err := json.Marshal(req)
	if err != nil {
		return err
	}
	type answer struct {
		line []byte
		err  error
	}
	ch := make(chan answer, 1)
	go func() {
		if _, err := t.in.Write(append(raw, '\n')); err != nil {
			ch <- answer{err: err}
			return
		}
		line, err := t.out.ReadBytes('\n')
		ch <- answer{line, err}
	}()
	var a answer
	select {
	case a = <-ch:
	case <-ctx.Done():
		// The worker is mid-request: it cannot be trusted any more.
		t.cmd.Process.Kill() //nolint:errcheck
		t.dead = fmt.Errorf("torch trainer: %s abandoned: %w", req["op"], ctx.Err())
		return t.dead
	}
	if a.err != nil {
		t.dead = fmt.Errorf("torch trainer: %s: worker gone: %w", req["op"], a.err)
		return t.dead
	}
	var status struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(a.line, &status); err != nil {
		t.dead = fmt.Errorf("torch trainer: %s: malformed answer %.200q: %w", req["op"], a.line, err)
		return t.dead
	}
	if !status.OK {
		return fmt.Errorf("torch trainer: %s: %s", req["op"], status.Error)
	}
	if out != nil {
		if err := json.Unmarshal(a.line, out); err != nil {
			return fmt.Errorf("torch trainer: %s: %w", req["op"], err)
		}
	}
	return nil
}

// Config is the effective configuration.
func (t *Trainer) Config() train.Config { return t.cfg }

type wireSeq struct {
	Prompt   []int32 `json:"prompt"`
	Response []int32 `json:"response"`
}

func wireSeqs(seqs []train.Sequence) ([]wireSeq, error) {
	out := make([]wireSeq, len(seqs))
	for i, s := range seqs {
		if len(s.PromptIDs) == 0 {
			return nil, fmt.Errorf("torch trainer: sequence %d: empty prompt (the first response token needs a context)", i)
		}
		out[i] = wireSeq{s.PromptIDs, s.ResponseIDs}
	}
	return out, nil
}

type tokenValues struct {
	Logprobs [][]float32 `json:"logprobs"`
	Entropy  [][]float32 `json:"entropy"`
}

func (v tokenValues) check(seqs []train.Sequence) error {
	if len(v.Logprobs) != len(seqs) || len(v.Entropy) != len(seqs) {
		return fmt.Errorf("torch trainer: %d/%d token value lists for %d sequences", len(v.Logprobs), len(v.Entropy), len(seqs))
	}
	for i, s := range seqs {
		if len(v.Logprobs[i]) != len(s.ResponseIDs) || len(v.Entropy[i]) != len(s.ResponseIDs) {
			return fmt.Errorf("torch trainer: sequence %d: %d logprobs for %d response tokens", i, len(v.Logprobs[i]), len(s.ResponseIDs))
		}
	}
	return nil
}

func (t *Trainer) score(seqs []train.Sequence, reference bool) ([]train.TokenScores, error) {
	out := make([]train.TokenScores, len(seqs))
	for _, mb := range train.MicroBatches(seqs, t.cfg.MicroBatchTokens) {
		batch := seqs[mb[0]:mb[1]]
		ws, err := wireSeqs(batch)
		if err != nil {
			return nil, err
		}
		var v tokenValues
		if err := t.call(map[string]any{"op": "score", "seqs": ws, "reference": reference}, &v); err != nil {
			return nil, err
		}
		if err := v.check(batch); err != nil {
			return nil, err
		}
		for j := range batch {
			out[mb[0]+j] = train.TokenScores{Logprobs: v.Logprobs[j], Entropy: v.Entropy[j]}
		}
	}
	return out, nil
}

// Score is rl.Stepper's: per-token logprobs and entropies under the
// current weights (eval mode, no dropout).
func (t *Trainer) Score(_ context.Context, seqs []train.Sequence) ([]train.TokenScores, error) {
	return t.score(seqs, false)
}

// ScoreReference is Score with the adapters off.
func (t *Trainer) ScoreReference(_ context.Context, seqs []train.Sequence) ([]train.TokenScores, error) {
	return t.score(seqs, true)
}

// Step is one optimizer step on seqs, as train.Trainer.Step: the loss is
// averaged per response token over the whole step (or over
// train.Normalizer.Tokens), micro-batch gradients accumulate, then the
// norm is clipped and AdamW steps.
func (t *Trainer) Step(ctx context.Context, seqs []train.Sequence, obj train.Objective) (train.Stats, error) {
	start := time.Now()
	st := train.Stats{SequenceCount: len(seqs), LearningRate: t.cfg.AdamW.LR}
	for _, s := range seqs {
		st.Tokens += len(s.ResponseIDs)
		st.TotalTokens += len(s.PromptIDs) + len(s.ResponseIDs)
	}
	denom := st.Tokens
	if n, ok := obj.(train.Normalizer); ok {
		denom = n.Tokens()
	}
	if denom <= 0 {
		return st, errors.New("torch trainer: step with no response tokens to train on")
	}
	if err := t.call(map[string]any{"op": "zero_grad"}, nil); err != nil {
		return st, err
	}
	scale := float32(1 / float64(denom))
	var loss float64
	mbs := train.MicroBatches(seqs, t.cfg.MicroBatchTokens)
	for _, mb := range mbs {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		batch := seqs[mb[0]:mb[1]]
		ws, err := wireSeqs(batch)
		if err != nil {
			return st, err
		}
		var v tokenValues
		if err := t.call(map[string]any{"op": "forward", "seqs": ws}, &v); err != nil {
			return st, err
		}
		if err := v.check(batch); err != nil {
			return st, err
		}
		dl, de := make([][]float32, len(batch)), make([][]float32, len(batch))
		for j := range batch {
			n := len(batch[j].ResponseIDs)
			dl[j], de[j] = make([]float32, n), make([]float32, n)
			loss += obj.TokenLoss(mb[0]+j, v.Logprobs[j], v.Entropy[j], dl[j], de[j])
			for k := range n {
				dl[j][k] *= scale
				de[j][k] *= scale
			}
		}
		if err := t.call(map[string]any{"op": "backward", "dlogp": dl, "dentropy": de}, nil); err != nil {
			return st, err
		}
	}
	var up struct {
		GradNorm float64 `json:"grad_norm"`
		Step     int64   `json:"step"`
	}
	// The step's rate is read here, from the step count the worker holds,
	// so the schedule (train.AdamWConfig.Rate) has one implementation.
	lr := t.cfg.AdamW.Rate(t.steps + 1)
	if err := t.call(map[string]any{"op": "update", "lr": lr}, &up); err != nil {
		return st, err
	}
	t.steps = up.Step
	st.GradNorm, st.Step, st.LearningRate = up.GradNorm, up.Step, lr
	st.Loss = loss / float64(denom)
	st.MicroBatches = len(mbs)
	st.Elapsed = time.Since(start)
	st.TokensPerSec = float64(st.TotalTokens) / st.Elapsed.Seconds()
	return st, nil
}

// StepCount is how many optimizer steps the worker has taken (its
// checkpoint's count after init and LoadCheckpoint), as
// train.Trainer.StepCount: rl.StepConfig.FirstEpochs reads it.
func (t *Trainer) StepCount() int64 { return t.steps }

// ResetMomentum zeroes AdamW's first moment in the worker and restarts its
// bias correction there, as train.Trainer.ResetMomentum does.
func (t *Trainer) ResetMomentum() error {
	return t.call(map[string]any{"op": "reset_momentum"}, nil)
}

// SaveCheckpoint writes the adapter and optimizer state into dir, in the
// native trainer's layout.
func (t *Trainer) SaveCheckpoint(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	return t.call(map[string]any{"op": "save", "dir": abs}, nil)
}

// LoadCheckpoint restores a checkpoint written by either backend.
func (t *Trainer) LoadCheckpoint(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	var resp struct {
		Step int64 `json:"step"`
	}
	if err := t.call(map[string]any{"op": "load", "dir": abs}, &resp); err != nil {
		return err
	}
	t.steps = resp.Step
	return nil
}
