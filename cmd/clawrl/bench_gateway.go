package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawrl/clawrl/api/apibench"
)

func init() { benchSubcommands = append(benchSubcommands, newBenchGatewayCmd) }

func newBenchGatewayCmd() *cobra.Command {
	var o apibench.Options
	var cpuProfile string
	cmd := &cobra.Command{
		Use:   "gateway",
		Short: "Gateway overhead: requests/s and added p50/p99 latency versus calling the engine in-process",
		Long: `Serve the deterministic test engine (answering instantly) through the
gateway on a loopback port with a real SQLite store, and compare requests/s
and p50/p99 latency with calling the same engine in-process: 1 client
(unloaded latency) and --clients concurrent clients (throughput), for
non-streaming and streaming requests.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cpuProfile != "" {
				f, err := os.Create(cpuProfile)
				if err != nil {
					return fmt.Errorf("cpu profile: %w", err)
				}
				defer f.Close()
				if err := pprof.StartCPUProfile(f); err != nil {
					return fmt.Errorf("cpu profile %s: %w", cpuProfile, err)
				}
				defer pprof.StopCPUProfile()
			}
			return apibench.Run(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	cmd.Flags().IntVar(&o.Clients, "clients", 64, "concurrent clients in the loaded run")
	cmd.Flags().DurationVar(&o.Duration, "duration", 5*time.Second, "length of each measurement")
	cmd.Flags().StringVar(&o.DataDir, "data", "", "directory for the benchmark's store (default: a temporary one)")
	cmd.Flags().StringVar(&o.Synchronous, "synchronous", "", "the store's synchronous pragma: NORMAL (default) or FULL")
	cmd.Flags().StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run (server and load generator) to this file")
	return cmd
}
