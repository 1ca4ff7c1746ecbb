package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/native"
	"github.com/clawrl/clawrl/model"
	"github.com/clawrl/clawrl/rl"
	"github.com/clawrl/clawrl/safetensors"
	"github.com/clawrl/clawrl/tokenizer/vocab"
	"github.com/clawrl/clawrl/train"
)

//go:embed bench_grpo_trl.py
var benchGRPOTRLScript string

func init() { benchSubcommands = append(benchSubcommands, newBenchGRPOCmd) }

// grpoBenchSpec is the work of one GRPO step, shared with the reference
// script as JSON so both sides run the same prompts and settings.
type grpoBenchSpec struct {
	Model     string    `json:"model"`
	Threads   int       `json:"threads"`
	Prompts   []string  `json:"prompts"`
	PromptIDs [][]int32 `json:"prompt_ids"`
	Group     int       `json:"group"`
	MaxTokens int       `json:"max_tokens"`
	Steps     int       `json:"steps"`
	Warmup    int       `json:"warmup"`
	Mode      string    `json:"mode"`
	Rank      int       `json:"rank"`
	Alpha     float64   `json:"alpha"`
	LR        float64   `json:"lr"`
	Seed      int64     `json:"seed"`
	Impl      string    `json:"impl"` // the reference's: "trl" or "plain"
}

// grpoBenchResult is one side's timed steps; the reference prints the same
// fields as JSON.
type grpoBenchResult struct {
	Engine           string    `json:"engine"`
	StepSeconds      []float64 `json:"step_s"`
	CompletionTokens []int     `json:"completion_tokens"`
	// Phases, seconds per step: rollout (generation, reward, advantages),
	// policy step (loss, backward, optimizer), adapter publish (ours only).
	Rollout []float64 `json:"rollout_s"`
	Train   []float64 `json:"train_s"`
	Publish []float64 `json:"publish_s"`
}

func (r grpoBenchResult) meanStep() float64 { return mean(r.StepSeconds) }

func (r grpoBenchResult) completionTokS() float64 {
	n := 0
	for _, t := range r.CompletionTokens {
		n += t
	}
	s := 0.0
	for _, t := range r.StepSeconds {
		s += t
	}
	if s == 0 {
		return 0
	}
	return float64(n) / s
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func newBenchGRPOCmd() *cobra.Command {
	var spec grpoBenchSpec
	var python, dir string
	var nPrompts, promptTokens int
	var reference bool
	cmd := &cobra.Command{
		Use:   "grpo",
		Short: "Time GRPO steps (generate a group, reward, advantages, PPO-clip step), beside TRL's GRPOTrainer and plain torch",
		Long: `Times GRPO steps on a checkpoint (by default a random tiny Qwen3, seed 7).
One step: --group completions of each of --prompts prompts (--prompt-tokens
tokens, up to --max-tokens new tokens, temperature 1) generated together by
the native engine, a fixed reward (the fraction of even completion token
ids), group-normalised advantages, one PPO-clip optimizer step (ε 0.2,
ε_high 0.28, no KL, per-token mean over the step, AdamW β2 0.98, weight
decay 0.1, gradient clipping at 1) on the LoRA adapter, and publishing the
new adapter to the engine so the next rollout samples from it.

With --reference it runs the same steps twice more on torch CPU
(bench_grpo_trl.py, embedded; python from --python or $CLAWRL_PYTHON): by
hand on transformers + PEFT (a lean torch floor), and with TRL's
GRPOTrainer; it prints both ratios. A reference whose modules are missing
(TRL: pip install trl) is skipped with a message.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			runtime.GOMAXPROCS(spec.Threads)
			if spec.Mode != string(train.ModeLoRA) {
				// A full fine-tune trains a private copy of the weights, and
				// the engine only takes new policies as adapters.
				return fmt.Errorf("--mode %q: only lora (the engine publishes adapters, not full weights)", spec.Mode)
			}
			tmp, err := os.MkdirTemp("", "clawrl-bench-grpo-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(tmp)
			if dir == "" {
				dir = filepath.Join(tmp, "model")
				cfg, err := model.NewConfig(model.Qwen3, model.SizeTiny)
				if err != nil {
					return err
				}
				if err := model.WriteRandom(dir, cfg, 7, safetensors.F32); err != nil {
					return err
				}
				if err := vocab.Write(string(model.Qwen3), dir); err != nil {
					return err
				}
			}
			spec.Model = dir
			// The prefix cache would let the group's completions and later
			// steps skip the prompt's prefill; TRL has none, so both sides
			// prefill every completion.
			eng, err := native.Open(dir, native.Options{MaxBatch: nPrompts * spec.Group, PrefixCacheBytes: -1})
			if err != nil {
				return err
			}
			defer eng.Close()
			spec.Prompts, spec.PromptIDs = benchGRPOPrompts(eng.Format(), nPrompts, promptTokens, uint64(spec.Seed))
			c := eng.Model().Config
			fmt.Fprintf(out, "model %s: hidden %d, %d layers, vocab %d; %d prompts × %d tokens, group %d, ≤ %d new tokens; LoRA r%d α%g; on %s\n",
				c.ModelType, c.HiddenSize, c.NumHiddenLayers, c.VocabSize, nPrompts, len(spec.PromptIDs[0]), spec.Group,
				spec.MaxTokens, spec.Rank, spec.Alpha, thisMachine())
			ours, err := benchGRPOOurs(cmd.Context(), eng, spec, tmp)
			if err != nil {
				return err
			}
			results := []grpoBenchResult{ours}
			if reference {
				// The lean hand-written torch step first, then TRL's.
				for _, impl := range []string{"plain", "trl"} {
					spec.Impl = impl
					ref, err := benchGRPOReference(python, spec)
					if err != nil {
						fmt.Fprintf(out, "reference %s skipped: %v\n", impl, err)
						continue
					}
					results = append(results, ref)
				}
			}
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintf(tw, "engine\ts/step\tsteps/s\tcompletion tok/s\trollout s\tpolicy step s\tpublish s\t\n")
			for _, r := range results {
				phase := func(xs []float64) string {
					if xs == nil {
						return "—"
					}
					return fmt.Sprintf("%.3f", mean(xs))
				}
				fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.1f\t%s\t%s\t%s\t\n", r.Engine, r.meanStep(), 1/r.meanStep(), r.completionTokS(),
					phase(r.Rollout), phase(r.Train), phase(r.Publish))
			}
			tw.Flush()
			for _, r := range results[1:] {
				fmt.Fprintf(out, "ratio %s s/step ÷ clawrl s/step: %.2fx\n", strings.SplitN(r.Engine, " (", 2)[0], r.meanStep()/ours.meanStep())
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&dir, "model", "", "checkpoint folder (default: a random tiny Qwen3, seed 7, with the real tokenizer)")
	f.IntVar(&nPrompts, "prompts", 4, "prompts per step")
	f.IntVar(&promptTokens, "prompt-tokens", 96, "tokens per prompt")
	f.IntVar(&spec.Group, "group", 4, "completions per prompt")
	f.IntVar(&spec.MaxTokens, "max-tokens", 32, "new tokens per completion")
	f.IntVar(&spec.Steps, "steps", 2, "timed steps")
	f.IntVar(&spec.Warmup, "warmup", 1, "untimed steps first")
	f.StringVar(&spec.Mode, "mode", "lora", "training mode (lora)")
	f.IntVar(&spec.Rank, "rank", 16, "LoRA rank")
	f.Float64Var(&spec.Alpha, "alpha", 32, "LoRA alpha")
	f.Float64Var(&spec.LR, "lr", 1e-4, "learning rate (constant)")
	f.Int64Var(&spec.Seed, "seed", 1, "seed for prompts, sampling and LoRA initialisation")
	f.IntVar(&spec.Threads, "threads", 2, "threads (GOMAXPROCS here, torch.set_num_threads in the reference)")
	f.BoolVar(&reference, "reference", false, "also run TRL's GRPOTrainer and print the ratio")
	f.StringVar(&python, "python", envOr("CLAWRL_PYTHON", "python3"), "python with torch, transformers, peft and trl for --reference")
	return cmd
}

// benchGRPOWords are single-token words in Qwen's vocabulary (with their
// leading space), so prompts hit an exact token count.
var benchGRPOWords = strings.Fields("the a of to and in is it that for on with as was at by an be this from or are have not but one all we can")

// benchGRPOPrompts makes n prompts of exactly tokens tokens from seeded
// words (fewer only if the words stop being single tokens), as text for the
// reference and ids for us.
func benchGRPOPrompts(f engine.Format, n, tokens int, seed uint64) ([]string, [][]int32) {
	r := rand.New(rand.NewPCG(seed, 17))
	texts := make([]string, n)
	ids := make([][]int32, n)
	for i := range n {
		var b strings.Builder
		fmt.Fprintf(&b, "Prompt %d:", i)
		for len(f.Encode(b.String())) < tokens {
			b.WriteString(" " + benchGRPOWords[r.IntN(len(benchGRPOWords))])
		}
		texts[i], ids[i] = b.String(), f.Encode(b.String())
	}
	return texts, ids
}

func benchGRPOOurs(ctx context.Context, eng *native.Engine, spec grpoBenchSpec, tmp string) (grpoBenchResult, error) {
	res := grpoBenchResult{Engine: "clawrl"}
	tc := train.Config{Mode: train.ModeLoRA, LoRA: train.LoRAConfig{Rank: spec.Rank, Alpha: spec.Alpha},
		AdamW: train.DefaultAdamW(spec.LR), MaxGradNorm: 1, Seed: uint64(spec.Seed)}
	w, err := train.FromModel(eng.Model(), false)
	if err != nil {
		return res, err
	}
	tr, err := train.New(w, tc)
	if err != nil {
		return res, err
	}
	// TRL's GRPO loss: PPO clip, no KL, no importance weight towards the
	// behaviour policy (it samples with the weights it trains).
	step := rl.StepConfig{
		Loss:      rl.LossConfig{Kind: rl.LossPPO, ClipLow: 0.2, ClipHigh: 0.28},
		Advantage: rl.AdvantageConfig{Method: rl.MethodRL},
	}
	seed := spec.Seed
	rc := rl.RolloutConfig{Group: spec.Group, MaxTokens: spec.MaxTokens, Sampling: engine.Sampling{Temperature: 1, Seed: &seed}}
	for s := range spec.Warmup + spec.Steps {
		start := time.Now()
		samples, st, err := rl.Rollout(ctx, eng, spec.PromptIDs, rc, rl.EvenTokenReward)
		if err != nil {
			return res, err
		}
		rolled := time.Now()
		if _, err := rl.PolicyStep(ctx, tr, step, samples); err != nil {
			return res, err
		}
		trained := time.Now()
		v := int64(s + 1)
		adir := filepath.Join(tmp, fmt.Sprintf("adapter-%d", v))
		if err := tr.SaveAdapter(adir); err != nil {
			return res, err
		}
		if err := eng.Publish(ctx, v, adir); err != nil {
			return res, err
		}
		end := time.Now()
		seed += int64(len(samples)) // fresh samples next step
		if s < spec.Warmup {
			continue
		}
		res.StepSeconds = append(res.StepSeconds, end.Sub(start).Seconds())
		res.CompletionTokens = append(res.CompletionTokens, st.CompletionTokens)
		res.Rollout = append(res.Rollout, rolled.Sub(start).Seconds())
		res.Train = append(res.Train, trained.Sub(rolled).Seconds())
		res.Publish = append(res.Publish, end.Sub(trained).Seconds())
	}
	return res, nil
}

// benchGRPOReference runs bench_grpo_trl.py; a missing interpreter or
// module comes back as an error the caller prints as a skip.
func benchGRPOReference(python string, spec grpoBenchSpec) (grpoBenchResult, error) {
	mods := "torch, transformers, peft"
	if spec.Impl == "trl" {
		mods += ", trl, datasets"
	}
	check := exec.Command(python, "-c", "import "+mods)
	if msg, err := check.CombinedOutput(); err != nil {
		lines := strings.Split(strings.TrimSpace(string(msg)), "\n")
		return grpoBenchResult{}, fmt.Errorf("%s cannot import %s: %s", python, mods, lines[len(lines)-1])
	}
	in, err := json.Marshal(spec)
	if err != nil {
		return grpoBenchResult{}, err
	}
	cmd := exec.Command(python, "-c", benchGRPOTRLScript)
	cmd.Env = benchGRPORefEnv(os.Environ())
	cmd.Stdin = strings.NewReader(string(in))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	outb, err := cmd.Output()
	if err != nil {
		return grpoBenchResult{}, fmt.Errorf("%s bench_grpo_trl.py: %w: %s", python, err, lastLines(stderr.String(), 5))
	}
	lines := strings.Split(strings.TrimSpace(string(outb)), "\n")
	var r grpoBenchResult
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil {
		return r, fmt.Errorf("reading the reference's output %q: %w", lines[len(lines)-1], err)
	}
	if len(r.StepSeconds) == 0 {
		return r, fmt.Errorf("reference timed no steps: %q", lines[len(lines)-1])
	}
	return r, nil
}

// benchGRPORefEnv is the reference's environment: OMP_WAIT_POLICY=PASSIVE
// unless env sets it. torch's OpenMP threads spin at every barrier by
// default; on a shared box that makes 2-thread torch about 4× slower at
// this shape (measured 2026-11-21: HF generate 16–20 s active, 4 s
// passive), so passive is torch's best case there. OMP_WAIT_POLICY=ACTIVE
// in the environment restores the default.
func benchGRPORefEnv(env []string) []string {
	for _, kv := range env {
		if strings.HasPrefix(kv, "OMP_WAIT_POLICY=") {
			return env
		}
	}
	return append(env, "OMP_WAIT_POLICY=PASSIVE")
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
