package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/clawrl/clawrl/rl"
	"github.com/clawrl/clawrl/store/postgres"
)

func init() { subcommands = append(subcommands, newTrainerCmd) }

// leader is a store on which one process at a time can hold a role
// (store/postgres: a session advisory lock, freed when the process dies).
type leader interface {
	Lead(ctx context.Context, role string) (release func(), err error)
}

func newTrainerCmd() *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:   "trainer",
		Short: "Run the judge and train loops as their own process, against a store that gateways share",
		Long: `Run the judge and train loops of clawrl serve as a process of their own:
it judges what the gateways (clawrl serve --no-learn) recorded in --store,
trains adapter versions, and commits each one to the store, where every
gateway picks it up and serves it.

The judge and the OPD teacher run on --engine (default: the native engine on
--model in this process), the native trainer on --model; with --engine
vllm:… each version is also loaded into vLLM from here. Version folders are written under --data/versions and
read by the gateways from there: give them a shared filesystem. On Postgres
one trainer at a time holds the role; a second waits as a standby and takes
over when the first dies.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runTrainer(cmd.Context(), o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.model, "model", "", "Hugging Face model folder the gateways serve (default: the tiny default model under --data)")
	addDataFlag(cmd, &o.data)
	f.StringVar(&o.storeURL, "store", "", storeFlagHelp)
	f.StringVar(&o.engineURL, "engine", "", engineFlagHelp+"; the trainer judges on it and publishes each version to it")
	f.StringVar(&o.method, "method", "combine", "training signal: combine, rl, opd or off")
	f.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	o.learning.AddFlags(f)
	return cmd
}

func runTrainer(ctx context.Context, o serveOptions) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return fmt.Errorf("--log-level %q: %w", o.logLevel, err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	switch o.method {
	case "combine", "rl", "opd":
	default:
		return fmt.Errorf("--method %q: want combine, rl or opd (a trainer with method off has nothing to do)", o.method)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	st, err := openStore(ctx, o.storeURL, o.data, log)
	if err != nil {
		return err
	}
	defer st.Close()
	if l, ok := st.(leader); ok {
		release, err := waitForRole(ctx, l, log)
		if err != nil {
			return err
		}
		defer release()
	}
	eng, err := openEngine(o, log)
	if err != nil {
		return err
	}
	loops, stopLoops := context.WithCancel(context.Background())
	defer stopLoops()
	// Nothing is served here: the gate never holds the loops back.
	r, err := startLearning(loops, o, eng, st, rl.NewGate(), prometheus.NewRegistry(), log)
	if err != nil {
		return err
	}
	if l, ok := st.(listener); ok {
		go func() {
			for range l.Listen(loops, postgres.ChannelObserved) {
				r.Notify()
			}
		}()
	}
	log.Info("trainer started", "model", eng.Info().ID, "data", o.data, "method", o.method)
	<-ctx.Done()
	log.Info("trainer stopping: finishing the step in flight")
	stopLoops()
	r.Wait()
	return nil
}

// waitForRole takes the trainer role, waiting as a standby while another
// trainer holds it.
func waitForRole(ctx context.Context, l leader, log *slog.Logger) (func(), error) {
	logged := false
	for {
		release, err := l.Lead(ctx, "trainer")
		if err == nil {
			return release, nil
		}
		if !errors.Is(err, postgres.ErrNotLeader) {
			return nil, err
		}
		if !logged {
			log.Info("standby: another trainer holds the role on this store; waiting for it to stop")
			logged = true
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}
