package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/spf13/cobra"

	"github.com/clawrl/clawrl/agent"
	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/env"
	"github.com/clawrl/clawrl/env/terminal"
	"github.com/clawrl/clawrl/env/toolcall"
)

// demoLine is one line of `agent demos` output: the pre-tokenised record
// `clawrl train sft` reads, with where it came from.
type demoLine struct {
	PromptIDs     []int32 `json:"prompt_ids"`
	CompletionIDs []int32 `json:"completion_ids"`
	Task          string  `json:"task"`
	Step          int     `json:"step"`
}

// demonstration returns the reference actions of a task, per environment.
func demonstration(t env.Task) ([]chat.Message, error) {
	switch t.Env {
	case toolcall.Name:
		return toolcall.Demonstration(t)
	case terminal.Name:
		return terminal.Demonstration(t)
	}
	return nil, fmt.Errorf("task %q: no demonstrations for environment %q", t.ID, t.Env)
}

func newAgentDemosCmd() *cobra.Command {
	var f agentFlags
	var out string
	var limit int
	cmd := &cobra.Command{
		Use:   "demos",
		Short: "Write an SFT warm-start set: the training tasks' reference solutions played in the environment, in the model's tool format",
		Long: `Play every training task's reference solution (the task file's "solution")
in the real environment (bubblewrap sandboxes), keep the episodes the
environment scores a success, and write one pre-tokenised record per agent
step to --out: the prompt exactly as 'clawrl agent train' renders it for
--model (the model's chat template, with the tool syntax added where the
template has none) and the action as the model would write it, through its
end-of-turn token. Train on it with 'clawrl train sft --data OUT', then
start RL from the adapter with 'clawrl agent train --init-adapter'.
Only the train split is used: held-out tasks never become demonstrations.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.ef.kindsSet = cmd.Flags().Changed("kinds")
			if out == "" {
				return errors.New("--out is required")
			}
			f.split = env.SplitTrain
			log, err := newLog(f.logLevel)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			tasks, eng, e, cleanup, err := f.setup(log)
			if err != nil {
				return err
			}
			defer cleanup()
			if limit > 0 && limit < len(tasks) {
				tasks = tasks[:limit]
			}
			steps := make([][]agent.DemoStep, len(tasks))
			var mu sync.Mutex
			var wg sync.WaitGroup
			var firstErr error
			failed := 0
			demo := func(i int, t env.Task) error {
				actions, err := demonstration(t)
				if err != nil {
					return err
				}
				d, err := agent.Demonstrate(ctx, e, t, actions)
				if err != nil {
					return err
				}
				if !d.Evaluation.Success {
					mu.Lock()
					failed++
					mu.Unlock()
					log.Warn("reference solution failed; left out", "task", t.ID, "details", d.Evaluation.Details)
					return nil
				}
				steps[i], err = d.Steps(eng.Format())
				return err
			}
			slots := make(chan struct{}, max(f.concurrency, 1))
			for i, t := range tasks {
				slots <- struct{}{}
				wg.Go(func() {
					defer func() { <-slots }()
					if err := demo(i, t); err != nil {
						mu.Lock()
						firstErr = cmp.Or(firstErr, err)
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			if firstErr != nil {
				return firstErr
			}
			fh, err := os.Create(out)
			if err != nil {
				return err
			}
			w := bufio.NewWriter(fh)
			enc := json.NewEncoder(w)
			records, tokens := 0, 0
			for i, ss := range steps {
				for k, s := range ss {
					if err := enc.Encode(demoLine{PromptIDs: s.PromptIDs, CompletionIDs: s.CompletionIDs, Task: tasks[i].ID, Step: k}); err != nil {
						fh.Close()
						return err
					}
					records++
					tokens += len(s.PromptIDs) + len(s.CompletionIDs)
				}
			}
			if err := w.Flush(); err != nil {
				fh.Close()
				return err
			}
			if err := fh.Close(); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d of %d training tasks demonstrated (%d failed and left out): %d records, %d tokens, in %s\n",
				len(tasks)-failed, len(tasks), failed, records, tokens, out)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.env, "env", "", "environment kind: toolcall or terminal (required)")
	fs.StringVar(&f.tasks, "tasks", "", "task file (JSONL) with reference solutions (required)")
	fs.StringVar(&f.model, "model", "", modelFlagHelp)
	addDataFlag(cmd, &f.data)
	fs.IntVar(&f.concurrency, "concurrency", 4, "demonstrations played at once")
	fs.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&out, "out", "", "output JSONL file (required)")
	fs.IntVar(&limit, "limit", 0, "demonstrate only the first N training tasks (0: all)")
	f.localEnv = true
	f.ef.add(cmd)
	fs.Lookup("kinds").DefValue = "the --env kind"
	return cmd
}
