package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawrl/clawrl/bench"
	"github.com/clawrl/clawrl/judge"
)

func init() { benchSubcommands = append(benchSubcommands, newBenchTeacherCmd) }

type benchTeacherOptions struct {
	url, model, key, out string
	personas             []string
	prompts, maxTokens   int
	concurrency          int
	placement            string
	plain                bool
	timeout              time.Duration
	sel                  benchSelectOptions

	// --student-url: whose answers a revise teacher revises.
	studentURL, studentModel string
}

func newBenchTeacherCmd() *cobra.Command {
	var o benchTeacherOptions
	cmd := &cobra.Command{
		Use:   "teacher",
		Short: "How well a model teaches the personas: held-out answers with the written feedback in context",
		Long: `Asks the personas' held-out prompts (those of 'clawrl bench learn') at
temperature 0 from the OpenAI-compatible server at --url (a clawrl, a
llama.cpp server, vLLM), with each persona's written feedback placed as the
loop's teacher sees it, and scores the answers with the persona's own
checker: the ceiling of what OPD can distil from that model as a teacher.
With --plain it also asks without the feedback.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBenchTeacher(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.url, "url", "http://127.0.0.1:30000", "the teacher's server (its /v1/chat/completions is asked)")
	f.StringVar(&o.model, "model", "", "the request's model name (a name the server knows; default \"clawrl\")")
	f.StringVar(&o.key, "api-key", "", "bearer key for the server (default: $CLAWRL_TEACHER_KEY)")
	f.StringVar(&o.out, "out", "", "also write the rows as JSON to this file")
	f.StringSliceVar(&o.personas, "personas", []string{"concise", "signoff", "tldr", "french"}, "simulated users")
	f.IntVar(&o.prompts, "eval-prompts", 20, "held-out prompts per persona (at most 20)")
	f.IntVar(&o.maxTokens, "max-tokens", 64, "most tokens per answer (bench learn's default)")
	f.IntVar(&o.concurrency, "concurrency", 4, "requests in flight at once")
	f.StringVar(&o.placement, "hint-placement", "user", "where the feedback goes: user, user-first (before the question in the user's message), system (the system message only), system+user, revise (after the model's own greedy answer, as the user's next message) or mixed (with --samples, the draws under user and system in turn, as the loop's teacher writes them; the greedy ceiling under user); continue cannot be asked over a chat API")
	f.BoolVar(&o.plain, "plain", true, "also ask without the feedback")
	f.StringVar(&o.studentURL, "student-url", "", "with --hint-placement revise: the server whose greedy answers the teacher revises (the policy, when the teacher is another model); its answers are then the \"without\" column (default: --url's own)")
	f.StringVar(&o.studentModel, "student-model", "", "the model name at --student-url")
	f.DurationVar(&o.timeout, "timeout", 10*time.Minute, "longest wait for one answer")
	o.sel.addFlags(f)
	return cmd
}

func runBenchTeacher(ctx context.Context, o benchTeacherOptions, stdout io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	at, err := judge.ParseHintPlacement(o.placement)
	if err != nil {
		return fmt.Errorf("--hint-placement: %w", err)
	}
	key := o.key
	if key == "" {
		key = os.Getenv("CLAWRL_TEACHER_KEY")
	}
	cl := &bench.Client{BaseURL: o.url, APIKey: key, Model: o.model, HTTP: &http.Client{Timeout: o.timeout}}
	all := map[string]*bench.Persona{}
	for _, p := range bench.Personas() {
		all[p.Name] = p
	}
	if o.sel.rescore != "" {
		// Only the earlier answers, scored again.
		return runBenchSelected(ctx, o, cl, at, all, stdout)
	}
	var rows []bench.TeacherCeiling
	for _, name := range o.personas {
		p, ok := all[name]
		if !ok {
			return fmt.Errorf("--personas: unknown persona %q", name)
		}
		cfg := bench.CeilingConfig{Prompts: o.prompts, MaxTokens: o.maxTokens, Concurrency: o.concurrency, Placement: at, Plain: o.plain}
		if o.studentURL != "" {
			cfg.Student = &bench.Client{BaseURL: o.studentURL, APIKey: os.Getenv("CLAWRL_API_KEY"), Model: o.studentModel, HTTP: &http.Client{Timeout: o.timeout}}
		}
		r, err := bench.MeasureTeacher(ctx, cl, p, cfg)
		if err != nil {
			return err
		}
		rows = append(rows, r)
	}
	name := o.model
	if name == "" {
		name = o.url
	}
	fmt.Fprint(stdout, bench.TeacherTable(name, rows))
	if o.sel.samples > 1 {
		if err := runBenchSelected(ctx, o, cl, at, all, stdout); err != nil {
			return err
		}
	}
	if o.out != "" {
		b, err := json.MarshalIndent(rows, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(o.out, b, 0o644); err != nil {
			return fmt.Errorf("--out %s: %w", o.out, err)
		}
	}
	return nil
}
