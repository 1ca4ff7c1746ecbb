package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/clawrl/clawrl/model"
	"github.com/clawrl/clawrl/safetensors"
	"github.com/clawrl/clawrl/tokenizer/vocab"
)

func init() { subcommands = append(subcommands, newModelCmd) }

// modelSubcommands are the `clawrl model …` commands, each in its own file.
var modelSubcommands = []func() *cobra.Command{newModelNewCmd}

func newModelCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "model", Short: "Create and benchmark model checkpoints"}
	for _, mk := range modelSubcommands {
		cmd.AddCommand(mk())
	}
	return cmd
}

func newModelNewCmd() *cobra.Command {
	var arch, size, out, dtype, tokDir string
	var seed uint64
	var weightsOnly bool
	cmd := &cobra.Command{
		Use:   "new",
		Short: "Write a randomly initialised checkpoint in the Hugging Face layout",
		Long: `Writes config.json, generation_config.json, model.safetensors (Hugging Face
tensor names) and the family's tokenizer.json and tokenizer_config.json (with
its real chat template) to --out. The same --seed always gives the same
weights. --size tiny is for tests; --size 0.6b has Qwen3-0.6B's shape.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := model.NewConfig(model.Family(arch), size)
			if err != nil {
				return err
			}
			dt := safetensors.F32
			switch dtype {
			case "f32", "float32":
			case "bf16", "bfloat16":
				dt = safetensors.BF16
			default:
				return fmt.Errorf("--dtype %q: want f32 or bf16", dtype)
			}
			if err := model.WriteRandom(out, cfg, seed, dt); err != nil {
				return err
			}
			if weightsOnly {
				fmt.Fprintf(cmd.OutOrStdout(), "wrote %s %s weights (%s, seed %d) to %s\n", arch, size, dt, seed, out)
				return nil
			}
			if err := writeTokenizer(out, model.Family(arch), tokDir); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s %s (%s, seed %d) to %s\n", arch, size, dt, seed, out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&arch, "arch", "qwen3", "architecture: qwen3, qwen2 or llama")
	f.StringVar(&size, "size", model.SizeTiny, "size: tiny or 0.6b")
	f.StringVar(&out, "out", "", "output folder (created)")
	f.StringVar(&dtype, "dtype", "f32", "weight dtype: f32 or bf16")
	f.Uint64Var(&seed, "seed", 0, "random seed")
	f.StringVar(&tokDir, "tokenizer", "", "folder with tokenizer.json and tokenizer_config.json to copy (default: the family's real tokenizer, embedded)")
	f.BoolVar(&weightsOnly, "weights-only", false, "write config and weights only, no tokenizer files (test fixtures)")
	_ = cmd.MarkFlagRequired("out")
	return cmd
}

// writeTokenizer writes the family's real tokenizer files (embedded in the
// binary by package tokenizer/vocab) into dir, or copies them from tokDir.
func writeTokenizer(dir string, family model.Family, tokDir string) error {
	if tokDir == "" {
		// The embedded real files; "llama" gets Llama 3.1's tool template.
		if err := vocab.Write(string(family), dir); err != nil {
			return fmt.Errorf("model new: %w", err)
		}
		return nil
	}
	for _, name := range []string{"tokenizer.json", "tokenizer_config.json"} {
		if err := copyFile(filepath.Join(tokDir, name), filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("model new: %w", err)
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
