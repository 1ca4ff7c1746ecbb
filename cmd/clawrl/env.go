package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawrl/clawrl/env"
	"github.com/clawrl/clawrl/env/sandbox"
	"github.com/clawrl/clawrl/env/terminal"
	"github.com/clawrl/clawrl/env/toolcall"
)

func init() { subcommands = append(subcommands, newEnvCmd) }

func newEnvCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "env", Short: "Agent environments: serve them, generate task files"}
	cmd.AddCommand(newEnvServeCmd(), newEnvTasksCmd())
	return cmd
}

// envFlags are the sandbox and pool settings shared by `env serve` and the
// in-process pool of `agent train|eval`.
type envFlags struct {
	kinds      string
	limit      int
	lease      time.Duration
	cpu, wall  time.Duration
	memoryMB   int64
	processes  int
	outputKB   int
	sandboxTmp string
	backend    string // --sandbox: bwrap or docker
	image      string // --docker-image
	kindsSet   bool   // --kinds was given (agent commands default it to --env)
}

func (f *envFlags) add(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&f.kinds, "kinds", "toolcall,terminal", "environment kinds to serve")
	fs.IntVar(&f.limit, "env-limit", 32, "episodes open at once at most")
	fs.DurationVar(&f.lease, "lease", 2*time.Minute, "close an episode nobody called (or heartbeated) for this long")
	fs.DurationVar(&f.cpu, "sandbox-cpu", 10*time.Second, "CPU time per sandboxed command")
	fs.DurationVar(&f.wall, "sandbox-wall", 30*time.Second, "wall-clock time per sandboxed command")
	fs.Int64Var(&f.memoryMB, "sandbox-memory-mb", 1024, "address space per sandboxed process, MiB")
	fs.IntVar(&f.processes, "sandbox-processes", 64, "processes per sandbox")
	fs.IntVar(&f.outputKB, "sandbox-output-kb", 64, "output kept per command, KiB (more cuts it off)")
	fs.StringVar(&f.sandboxTmp, "sandbox-dir", "", "where the sandboxes' working folders go (default the system temp folder)")
	fs.StringVar(&f.backend, "sandbox", "bwrap", "sandbox backend: bwrap (bubblewrap) or docker (needs a Docker daemon on this machine)")
	fs.StringVar(&f.image, "docker-image", "", "image of --sandbox docker (default: one built locally from an empty root, the host's /usr bound read-only)")
}

// provider builds the sandbox provider --sandbox names.
func (f *envFlags) provider() (sandbox.Provider, error) {
	if f.cpu <= 0 || f.wall <= 0 || f.memoryMB <= 0 || f.processes <= 0 || f.outputKB <= 0 {
		return nil, fmt.Errorf("--sandbox-cpu %v, --sandbox-wall %v, --sandbox-memory-mb %d, --sandbox-processes %d, --sandbox-output-kb %d: want each > 0",
			f.cpu, f.wall, f.memoryMB, f.processes, f.outputKB)
	}
	l := sandbox.Limits{CPUTime: f.cpu, WallTime: f.wall, Memory: f.memoryMB << 20,
		Processes: f.processes, Output: f.outputKB << 10}
	switch f.backend {
	case "bwrap", "":
		b, err := sandbox.NewBwrap(l)
		if err != nil {
			return nil, err
		}
		b.TempDir = f.sandboxTmp
		return b, nil
	case "docker":
		d, err := sandbox.NewDocker(l, f.image)
		if err != nil {
			return nil, err
		}
		d.TempDir = f.sandboxTmp
		return d, nil
	}
	return nil, fmt.Errorf("--sandbox: unknown backend %q (have bwrap, docker)", f.backend)
}

// pool builds the in-process environment pool.
func (f *envFlags) pool(log *slog.Logger) (*env.Pool, error) {
	if f.limit < 1 || f.lease <= 0 {
		return nil, fmt.Errorf("--env-limit %d, --lease %v: want each > 0", f.limit, f.lease)
	}
	b, err := f.provider()
	if err != nil {
		return nil, err
	}
	var kinds []env.Kind
	for _, k := range strings.Split(f.kinds, ",") {
		switch strings.TrimSpace(k) {
		case toolcall.Name:
			kinds = append(kinds, &toolcall.Kind{Sandbox: b})
		case terminal.Name:
			kinds = append(kinds, &terminal.Kind{Sandbox: b})
		case "":
		default:
			return nil, fmt.Errorf("--kinds: unknown environment kind %q (have toolcall, terminal)", k)
		}
	}
	return env.NewPool(env.PoolConfig{Limit: f.limit, Lease: f.lease, Log: log}, kinds...)
}

func newEnvServeCmd() *cobra.Command {
	var ef envFlags
	var addr, apiKey, logLevel string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve environments over HTTP for `clawrl agent train --env-url` on this or another machine",
		Long: `Serve the environment protocol (package env): POST /v1/episodes creates an
episode of a task, …/step applies an action, …/evaluate scores it, DELETE
closes it, GET /v1/load reports the load. Every episode runs in its own
sandbox (bubblewrap, or a Docker container with --sandbox docker); an episode nobody calls for --lease is closed, so a
crashed trainer leaks nothing. Anything but a loopback address needs
--api-key.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if apiKey == "" {
				apiKey = os.Getenv("CLAWRL_API_KEY")
			}
			log, err := newLog(logLevel)
			if err != nil {
				return err
			}
			if err := checkBind(addr, apiKey); err != nil {
				return err
			}
			pool, err := ef.pool(log)
			if err != nil {
				return err
			}
			defer pool.Shutdown()
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("env serve: %w", err)
			}
			srv := &http.Server{Handler: env.Handler(pool, apiKey, log), ReadHeaderTimeout: 10 * time.Second}
			log.Info("environment server listening", "addr", ln.Addr().String(), "kinds", ef.kinds, "limit", ef.limit, "lease", ef.lease)
			errc := make(chan error, 1)
			go func() { errc <- srv.Serve(ln) }()
			select {
			case <-cmd.Context().Done():
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				return srv.Shutdown(ctx)
			case err := <-errc:
				if errors.Is(err, http.ErrServerClosed) {
					return nil
				}
				return err
			}
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:30100", "listen address")
	cmd.Flags().StringVar(&apiKey, "api-key", "", "require this Bearer key (default $CLAWRL_API_KEY)")
	cmd.Flags().StringVar(&logLevel, "log-level", "info", "debug, info, warn or error")
	ef.add(cmd)
	return cmd
}

// checkBind refuses a non-loopback address without a key: the server runs
// code it is sent.
func checkBind(addr, key string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %q: %w", addr, err)
	}
	ip := net.ParseIP(host)
	if key == "" && host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("--addr %s is not a loopback address: set --api-key (or CLAWRL_API_KEY); the server runs the code it is sent", addr)
	}
	return nil
}

func newLog(level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: %w", level, err)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l})), nil
}

func newEnvTasksCmd() *cobra.Command {
	var kind, out string
	var trainN, heldN int
	var seed uint64
	cmd := &cobra.Command{
		Use:   "tasks",
		Short: "Generate a task file (JSONL, train and held-out splits) for an environment",
		Long: `Generate seeded tasks for an environment as JSONL (the format is documented
in env/tasks.go): --train tasks with split "train" and --heldout tasks with
split "heldout", none of which repeats a training prompt. The same seed
gives the same file; tasks/ in the repository holds the shipped sets.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tasks, err := generateTasks(kind, trainN, heldN, seed)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if out != "" && out != "-" {
				f, err := os.Create(out)
				if err != nil {
					return err
				}
				defer f.Close()
				w = f
			}
			return env.WriteTasks(w, tasks)
		},
	}
	cmd.Flags().StringVar(&kind, "env", toolcall.Name, "toolcall or terminal")
	cmd.Flags().IntVar(&trainN, "train", 400, "training tasks")
	cmd.Flags().IntVar(&heldN, "heldout", 100, "held-out tasks")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "generator seed")
	cmd.Flags().StringVarP(&out, "out", "o", "", "output file (default stdout)")
	return cmd
}

// generateTasks draws train and held-out tasks; held-out ones never repeat
// a training prompt.
func generateTasks(kind string, trainN, heldN int, seed uint64) ([]env.Task, error) {
	var gen func(n int, seed uint64, split, prefix string) []env.Task
	switch kind {
	case toolcall.Name:
		gen = toolcall.Generate
	case terminal.Name:
		gen = terminal.Generate
	default:
		return nil, fmt.Errorf("--env %q: want toolcall or terminal", kind)
	}
	train := gen(trainN, seed, env.SplitTrain, kind+"-train")
	if len(train) < trainN {
		return nil, fmt.Errorf("--train %d: the %s generator has only %d distinct prompts", trainN, kind, len(train))
	}
	seen := map[string]bool{}
	for _, t := range train {
		seen[t.Prompt] = true
	}
	// Draw held-out tasks from another stream, skipping training prompts.
	var held []env.Task
	for _, t := range gen(heldN*4+16, seed+1_000_003, env.SplitHeldOut, kind+"-heldout") {
		if len(held) == heldN {
			break
		}
		if !seen[t.Prompt] {
			t.ID = fmt.Sprintf("%s-heldout-%04d", kind, len(held)+1)
			held = append(held, t)
		}
	}
	if len(held) < heldN {
		return nil, fmt.Errorf("only %d held-out %s tasks differ from the training ones", len(held), kind)
	}
	return append(train, held...), nil
}
