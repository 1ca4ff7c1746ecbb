package main

import "github.com/spf13/cobra"

func init() { subcommands = append(subcommands, newBenchCmd) }

// benchSubcommands is filled by the init functions of bench_*.go files, so
// each part of clawrl adds its benchmark in a file of its own.
var benchSubcommands []func() *cobra.Command

func newBenchCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Benchmarks that print clawrl's figures next to a reference run",
	}
	for _, mk := range benchSubcommands {
		cmd.AddCommand(mk())
	}
	return cmd
}
