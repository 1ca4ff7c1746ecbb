package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawrl/clawrl/bench"
)

func init() { benchSubcommands = append(benchSubcommands, newBenchReportCmd) }

func newBenchReportCmd() *cobra.Command {
	var (
		rescore bool
		arms    []string
		out     string
	)
	cmd := &cobra.Command{
		Use:   "report PATH...",
		Short: "Pool 'bench learn' runs made apart (one persona and seed at a time, or on several machines) into one table",
		Long: `Reads the runs of every PATH — a learn.json file, or a folder: its learn.json,
or every learn.json below it — and prints the tables 'clawrl bench learn' prints,
over all of them: each arm's held-out satisfaction and retention by round with
95 % intervals and the one-sided Fisher test against the control, the personas'
rows, and the verdicts on the training turns. A run (arm, persona, seed) found
twice is an error: name the files that hold each run once.

The issue's protocol runs one persona and seed at a time ('bench learn --target
--personas P --seeds 1 --first-seed S'); this is how their table is put back
together. --arms keeps only the named arms (e.g. combine,off). With --rescore the
held-out answers are read again with the personas' checks as this binary has
them. With --out the pooled learn.json, learn.md and learn.svg are written there.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			side, err := readLearnSides(args...)
			if err != nil {
				return err
			}
			return reportLearn(cmd.OutOrStdout(), side, arms, rescore, out, "clawrl bench report "+strings.Join(os.Args[min(3, len(os.Args)):], " "))
		},
	}
	cmd.Flags().BoolVar(&rescore, "rescore", false, "read the held-out answers again with today's personas")
	cmd.Flags().StringSliceVar(&arms, "arms", nil, "keep only these arms (default: all)")
	cmd.Flags().StringVar(&out, "out", "", "also write the pooled learn.json, learn.md and learn.svg into this folder")
	return cmd
}

// reportLearn prints (and with out, writes) the tables of side's runs
// pooled, keeping the arms named (all without).
func reportLearn(w io.Writer, side learnSide, arms []string, rescore bool, out, command string) error {
	personas := rescorers(rescore)
	var runs []bench.Run
	for _, r := range side.runs {
		if len(arms) > 0 && !slices.Contains(arms, r.Arm) {
			continue
		}
		if p := personas[r.Persona]; p != nil {
			liked := bench.Liked(r, p)
			r.Evals = slices.Clone(r.Evals)
			for i := range r.Evals {
				r.Evals[i].Satisfied = liked[i]
			}
		}
		runs = append(runs, r)
	}
	if len(runs) == 0 {
		return errors.New("no run of the arms named")
	}
	sums := bench.Summarise(runs)
	var ps []string
	for _, r := range runs {
		if !slices.Contains(ps, r.Persona) {
			ps = append(ps, r.Persona)
		}
	}
	head := fmt.Sprintf("%d run(s) from %d file(s); personas %s", len(runs), side.files, strings.Join(ps, ", "))
	if rescore {
		head += "; held-out answers read again with this binary's personas"
		if kept, otherwise := side.ratedOtherwise(runs, personas); kept > 0 {
			head += fmt.Sprintf("; of the %d runs whose kept store was read, %d were trained on ratings today's users would send otherwise", kept, len(otherwise))
			if len(otherwise) > 0 {
				head += " (" + strings.Join(otherwise, ", ") + ")"
			}
		}
	}
	md := fmt.Sprintf("%s; model %s; %s\n\n%s", head, strings.Join(side.models, ", "), side.machineList(), learnTables(sums, runs))
	fmt.Fprint(w, md)
	if out == "" {
		return nil
	}
	rep := learnReport{Command: command, Date: time.Now().UTC().Format(time.RFC3339), Model: strings.Join(side.models, ", "), Summary: sums, Runs: runs}
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for name, data := range map[string]string{"learn.json": string(js), "learn.md": md,
		"learn.svg": bench.SVG(sums, "clawrl bench report: "+strings.Join(ps, "+"))} {
		if err := os.WriteFile(filepath.Join(out, name), []byte(data), 0o644); err != nil {
			return err
		}
	}
	return nil
}
