// Command clawrl serves a model behind an OpenAI-compatible API, records every
// conversation, judges each answer by what came next, and trains the policy in
// the background. This package only parses flags and wires packages together;
// each subcommand lives in its own file.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/clawrl/clawrl/internal/memlimit"
)

func main() {
	// A soft memory limit (GOMEMLIMIT, when set, stands): without it a
	// training step's garbage grows the heap to twice its live set.
	memlimit.Set()
	if err := newRootCmd().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "clawrl:", err)
		os.Exit(1)
	}
}

// subcommands is filled by the init functions of the subcommand files.
var subcommands []func() *cobra.Command

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "clawrl",
		Short:         "An OpenAI-compatible server that trains its model on every conversation",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return checkNumberFlags(cmd.Flags())
		},
	}
	for _, mk := range subcommands {
		root.AddCommand(mk())
	}
	return root
}
