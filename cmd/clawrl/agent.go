package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"

	"github.com/clawrl/clawrl/agent"
	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/native"
	"github.com/clawrl/clawrl/env"
	"github.com/clawrl/clawrl/judge"
	"github.com/clawrl/clawrl/model"
	"github.com/clawrl/clawrl/rl"
	"github.com/clawrl/clawrl/store/sqlite"
	"github.com/clawrl/clawrl/train"
)

func init() {
	subcommands = append(subcommands, newAgentCmd)
	statusSections = append(statusSections, agentStatusSection)
}

func newAgentCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "agent", Short: "Train and evaluate agents in tool-call and terminal environments"}
	cmd.AddCommand(newAgentTrainCmd(), newAgentEvalCmd(), newAgentDemosCmd())
	return cmd
}

// agentFlags are shared by `agent train` and `agent eval`.
type agentFlags struct {
	env, tasks, split string
	model, data       string
	engineURL         string
	envURLs           []string
	envKey            string
	localEnv          bool
	samples           int
	maxSteps          int
	maxTokens         int
	concurrency       int
	temperature       float64
	seed              int64
	logLevel          string
	ef                envFlags
}

func (f *agentFlags) add(cmd *cobra.Command, split string, samples int, temperature float64) {
	fs := cmd.Flags()
	fs.StringVar(&f.env, "env", "", "environment kind: toolcall or terminal (required)")
	fs.StringVar(&f.tasks, "tasks", "", "task file (JSONL; see clawrl env tasks --help) (required)")
	fs.StringVar(&f.split, "split", split, "use the tasks of this split (\"\" for all)")
	fs.StringVar(&f.model, "model", "", modelFlagHelp)
	fs.StringVar(&f.engineURL, "engine", "", engineFlagHelp)
	addDataFlag(cmd, &f.data)
	fs.StringSliceVar(&f.envURLs, "env-url", nil, "an environment server (clawrl env serve) to run episodes on as well; repeatable")
	fs.StringVar(&f.envKey, "env-key", os.Getenv("CLAWRL_ENV_KEY"), "Bearer key of the --env-url servers (default $CLAWRL_ENV_KEY)")
	fs.BoolVar(&f.localEnv, "local-env", true, "also run episodes in this process (false: only on --env-url servers)")
	fs.IntVar(&f.samples, "samples", samples, "episodes per task")
	fs.IntVar(&f.maxSteps, "max-steps", 8, "agent messages per episode at most")
	fs.IntVar(&f.maxTokens, "max-tokens", 256, "new tokens per agent message")
	fs.IntVar(&f.concurrency, "concurrency", 32, "episodes in flight at once")
	fs.Float64Var(&f.temperature, "temperature", temperature, "sampling temperature (0: greedy)")
	fs.Int64Var(&f.seed, "seed", 1, "sampling and task-order seed")
	fs.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	f.ef.add(cmd)
	fs.Lookup("kinds").DefValue = "the --env kind"
}

// checkEpisodes refuses episode settings of zero (agent train and eval; the
// root command refuses negatives).
func (f *agentFlags) checkEpisodes() error {
	for _, c := range []struct {
		flag string
		v    int
	}{{"--samples", f.samples}, {"--max-steps", f.maxSteps}, {"--max-tokens", f.maxTokens}, {"--concurrency", f.concurrency}} {
		if c.v < 1 {
			return fmt.Errorf("%s %d: want ≥ 1", c.flag, c.v)
		}
	}
	return nil
}

// setup loads the tasks, the engine and the environments.
func (f *agentFlags) setup(log *slog.Logger) (tasks []env.Task, eng engine.Engine, e env.Env, cleanup func(), err error) {
	if f.env == "" || f.tasks == "" {
		return nil, nil, nil, nil, errors.New("--env and --tasks are required")
	}
	all, err := env.ReadTasks(f.tasks)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	for _, t := range env.FilterSplit(all, f.split) {
		if t.Env == f.env {
			tasks = append(tasks, t)
		}
	}
	if len(tasks) == 0 {
		return nil, nil, nil, nil, fmt.Errorf("%s has no %s tasks of split %q", f.tasks, f.env, f.split)
	}
	eng, err = openEngine(serveOptions{model: f.model, data: f.data, engineURL: f.engineURL}, log)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	var cleanups []func()
	cleanup = func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
	}
	if c, ok := eng.(io.Closer); ok {
		cleanups = append(cleanups, func() { c.Close() })
	}
	var envs []env.Env
	if f.localEnv {
		if !f.ef.kindsSet {
			f.ef.kinds = f.env
		}
		pool, err := f.ef.pool(log)
		if err != nil {
			cleanup()
			return nil, nil, nil, nil, err
		}
		cleanups = append(cleanups, func() { pool.Shutdown() })
		envs = append(envs, pool)
	}
	for _, u := range f.envURLs {
		c, err := env.NewClient(u, f.envKey)
		if err != nil {
			cleanup()
			return nil, nil, nil, nil, err
		}
		if _, err := c.Load(context.Background()); err != nil {
			cleanup()
			return nil, nil, nil, nil, fmt.Errorf("environment server %s: %w", u, err)
		}
		envs = append(envs, c)
	}
	if len(envs) == 0 {
		cleanup()
		return nil, nil, nil, nil, errors.New("no environments: --local-env=false needs --env-url")
	}
	if len(envs) == 1 {
		return tasks, eng, envs[0], cleanup, nil
	}
	b, err := env.NewBalance(envs...)
	if err != nil {
		cleanup()
		return nil, nil, nil, nil, err
	}
	return tasks, eng, b, cleanup, nil
}

func (f *agentFlags) config() agent.Config {
	seed := f.seed
	return agent.Config{Samples: f.samples, MaxSteps: f.maxSteps, MaxTokens: f.maxTokens, Concurrency: f.concurrency,
		Sampling: engine.Sampling{Temperature: f.temperature, Seed: &seed}}
}

func newAgentTrainCmd() *cobra.Command {
	var f agentFlags
	var batch, rank, microTokens, maxQueued int
	var advNorm string
	var lr, prmCoef float64
	var staleness, versions int64
	var duration time.Duration
	var metricsAddr, run, initAdapter string
	var dropUniform bool
	cmd := &cobra.Command{
		Use:   "train",
		Short: "Train the policy on a task file: n episodes per task, one sample per agent step",
		Long: `Run episodes of the tasks (--samples per task, in the model's own tool-call
format, in bubblewrap sandboxes here and/or on --env-url servers), record
every agent step in the store under --data, and train LoRA versions on them
with advantages normalised per (task, step). Stops after --versions versions
or --duration, or on Ctrl-C; a restart on the same --data resumes from the
last version (unfinished episodes are dropped with the reason, nothing is
trained twice). Progress: clawrl status --data DIR, or /metrics at
--metrics-addr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.ef.kindsSet = cmd.Flags().Changed("kinds")
			log, err := newLog(f.logLevel)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if batch < 1 || rank < 1 || lr <= 0 {
				return fmt.Errorf("--batch-size %d, --lora-rank %d, --lr %g: want each > 0", batch, rank, lr)
			}
			if err := f.checkEpisodes(); err != nil {
				return err
			}
			tasks, eng, e, cleanup, err := f.setup(log)
			if err != nil {
				return err
			}
			defer cleanup()
			st, err := sqlite.OpenDir(ctx, f.data, sqlite.Options{})
			if err != nil {
				return err
			}
			defer st.Close()
			tc := train.Config{Mode: train.ModeLoRA, LoRA: train.DefaultLoRA(), MicroBatchTokens: microTokens, AdamW: train.DefaultAdamW(lr)}
			tc.LoRA.Rank, tc.LoRA.Alpha = rank, 2*float64(rank)
			// The trainer shares the native engine's weights; a remote
			// engine's trainer loads its own copy of --model.
			local, _ := eng.(*native.Engine)
			var m *model.Model
			if local != nil {
				m = local.Model()
			} else {
				path, _, err := trainedModel(serveOptions{model: f.model, data: f.data}, log)
				if err != nil {
					return err
				}
				if m, err = model.Load(path); err != nil {
					return err
				}
			}
			pub, ok := eng.(engine.Publisher)
			if !ok {
				return fmt.Errorf("agent train: engine %s takes no adapter versions", eng.Info().Engine)
			}
			w, err := train.FromModel(m, false)
			if err != nil {
				return err
			}
			if initAdapter != "" {
				if local == nil {
					return errors.New("--init-adapter needs the native engine (version 0 plays the adapter)")
				}
				// The policy starts from the adapter (its rank and alpha
				// win over --lora-rank) with a fresh optimizer; version 0
				// of the engine plays it, so rollouts and their behaviour
				// logprobs come from the policy being trained.
				if _, err := train.LoadAdapter(w, initAdapter); err != nil {
					return fmt.Errorf("--init-adapter: %w", err)
				}
				if err := local.SetStartAdapter(initAdapter); err != nil {
					return fmt.Errorf("--init-adapter: %w", err)
				}
			}
			ttr, err := train.New(w, tc)
			if err != nil {
				return err
			}
			tr := rl.NewNativeTrainer(ttr, rl.DefaultStepConfig())
			sched := rl.NewScheduler(st, tr, pub, nil, rl.SchedulerConfig{Method: rl.MethodRL, BatchSize: batch, MaxStaleness: staleness,
				VersionsDir: filepath.Join(f.data, "versions"), Poll: 500 * time.Millisecond}, log)
			if err := sched.Recover(ctx); err != nil {
				return err
			}
			dropped, err := agent.Recover(ctx, st)
			if err != nil {
				return err
			}
			if dropped > 0 {
				log.Info("dropped the steps of episodes a previous run left unfinished", "turns", dropped)
			}
			cfg := f.config()
			cfg.PRMCoef, cfg.DropUniform, cfg.Run, cfg.AdvantageNorm = prmCoef, dropUniform, run, advNorm
			var prm agent.StepScorer
			if prmCoef != 0 {
				prm = agent.JudgeScorer{Judge: judge.New(&judge.EngineBackend{Engine: eng}, judge.Config{EvalVotes: 1}, log)}
			}
			runner, err := agent.New(agent.Options{Engine: eng, Env: e, Store: st, PRM: prm, Config: cfg, Log: log})
			if err != nil {
				return err
			}
			if metricsAddr != "" {
				stop, err := serveAgentMetrics(metricsAddr, runner, f.env, log)
				if err != nil {
					return err
				}
				defer stop()
			}
			log.Info("agent training", "env", f.env, "tasks", len(tasks), "samples", cfg.Samples, "concurrency", cfg.Concurrency,
				"batch", batch, "from_version", sched.Current().Version, "until_version", versions)
			err = runner.Train(ctx, agent.TrainOptions{Tasks: tasks, Scheduler: sched, Versions: versions, Duration: duration,
				Seed: uint64(f.seed), StatusDir: f.data, MaxQueued: maxQueued, BatchSize: batch})
			snap := runner.Stats().Snapshot()
			snap.Env = f.env
			_ = agent.WriteStatus(f.data, snap)
			fmt.Fprintf(cmd.OutOrStdout(), "episodes %d, success rate %.3f, mean reward %+.3f, policy version %d\n",
				snap.Done, snap.SuccessRate, snap.MeanReward, sched.Current().Version)
			if err != nil && ctx.Err() == nil {
				return err
			}
			return nil
		},
	}
	f.add(cmd, env.SplitTrain, 8, 1)
	fs := cmd.Flags()
	fs.IntVar(&batch, "batch-size", 16, "samples (agent steps) per trainer step")
	fs.Int64Var(&staleness, "max-staleness", rl.DefaultMaxStaleness, "refuse steps more than this many versions stale")
	fs.IntVar(&rank, "lora-rank", 16, "LoRA rank (alpha = 2·rank)")
	fs.Float64Var(&lr, "lr", 1e-4, "learning rate")
	fs.IntVar(&microTokens, "micro-batch-tokens", 0, "tokens per trainer micro-batch (0: the trainer's default)")
	fs.Int64Var(&versions, "versions", 0, "stop once the policy reaches this version (0: no bound)")
	fs.DurationVar(&duration, "duration", 0, "stop after this long (0: no bound)")
	fs.Float64Var(&prmCoef, "prm-coef", 0, "add coef · mean PRM step score (the judge on the base weights) to each episode's outcome")
	fs.BoolVar(&dropUniform, "drop-uniform", false, "drop steps whose advantage is 0 (every episode of the task scored the same) instead of training on them")
	fs.IntVar(&maxQueued, "max-queued", 0, "pause new task groups while this many samples wait for the trainer (0: --batch-size; -1: no bound)")
	fs.StringVar(&advNorm, "adv-norm", agent.NormStd, "advantage normalisation per (task, step): std ((r − mean)/std, GRPO) or mean (r − mean only)")
	fs.StringVar(&metricsAddr, "metrics-addr", "", "serve Prometheus /metrics here (host:port)")
	fs.StringVar(&run, "run", "run", "name of this run in the recorded session keys")
	fs.StringVar(&initAdapter, "init-adapter", "", "start the policy from this PEFT adapter (a clawrl train sft --out folder: a warm start) instead of a fresh LoRA")
	return cmd
}

func serveAgentMetrics(addr string, r *agent.Runner, envName string, log *slog.Logger) (func(), error) {
	reg := prometheus.NewRegistry()
	if err := reg.Register(r.Collector(envName)); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("metrics server", "err", err)
		}
	}()
	log.Info("agent metrics", "url", "http://"+ln.Addr().String()+"/metrics")
	return func() { srv.Close() }, nil
}

func newAgentEvalCmd() *cobra.Command {
	var f agentFlags
	var adapter string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Evaluate the policy (base weights, or a trained adapter) on a task file's held-out tasks",
		Long: `Run --samples episodes of every task of --split (heldout by default) and
report the success rate with its Wilson 95 % interval and the mean reward.
Nothing is recorded. --adapter DIR evaluates a trained version folder
(DATA/versions/v000N, a PEFT adapter); without it the base weights play.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.ef.kindsSet = cmd.Flags().Changed("kinds")
			log, err := newLog(f.logLevel)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if err := f.checkEpisodes(); err != nil {
				return err
			}
			tasks, eng, e, cleanup, err := f.setup(log)
			if err != nil {
				return err
			}
			defer cleanup()
			cfg := f.config()
			cfg.Adapter = engine.AdapterBase
			if adapter != "" {
				pub, ok := eng.(engine.Publisher)
				if !ok {
					return fmt.Errorf("--adapter: engine %s takes no adapters", eng.Info().Engine)
				}
				if err := pub.Publish(ctx, 1, adapter); err != nil {
					return fmt.Errorf("--adapter %s: %w", adapter, err)
				}
				cfg.Adapter = engine.AdapterCurrent
			}
			runner, err := agent.New(agent.Options{Engine: eng, Env: e, Config: cfg, Log: log})
			if err != nil {
				return err
			}
			start := time.Now()
			res, err := runner.Evaluate(ctx, tasks, f.samples)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(res)
			}
			name := "base weights"
			if adapter != "" {
				name = adapter
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s on %d %s tasks (%s) × %d: success %d/%d = %.3f (95%% CI %.3f–%.3f), mean reward %+.3f, %d failed, %s\n",
				name, len(tasks), f.env, f.split, f.samples, res.Successes, res.Episodes, res.SuccessRate, res.CILow, res.CIHigh,
				res.MeanReward, res.Failed, time.Since(start).Round(time.Second))
			return nil
		},
	}
	f.add(cmd, env.SplitHeldOut, 1, 0)
	cmd.Flags().StringVar(&adapter, "adapter", "", "a trained version folder (PEFT adapter) to evaluate")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// agentStatusSection adds a running (or finished) agent training's
// progress to `clawrl status`.
func agentStatusSection(dataDir string) (string, any, string, error) {
	snap, ok, err := agent.ReadStatus(dataDir)
	if err != nil || !ok {
		return "", nil, "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "episodes running %d, done %d (failed %d), success rate %.3f, mean reward %+.3f, groups %d, updated %s",
		snap.Running, snap.Done, snap.Failed, snap.SuccessRate, snap.MeanReward, snap.Groups, snap.Updated.Format(time.RFC3339))
	for _, v := range slices.Sorted(maps.Keys(snap.ByVersion)) {
		vs := snap.ByVersion[v]
		fmt.Fprintf(&b, "\n  %s: %d episodes, success %.3f, reward %+.3f", v, vs.Episodes, vs.SuccessRate, vs.MeanReward)
	}
	return "agent", snap, b.String(), nil
}
