package bench

import (
	"context"
	"fmt"
	"strings"

	"github.com/clawrl/clawrl/judge"
)

// TeacherCeiling is how often one model, shown a persona's written
// feedback as the loop's teacher sees it, answers that persona's held-out
// prompts to its satisfaction: what OPD can at most distil from that
// model. Plain is the same model without the feedback, the baseline the
// hint has to beat.
type TeacherCeiling struct {
	Persona string `json:"persona"`
	Asked   int    `json:"asked"`
	// WithHint and Plain count satisfying answers with and without the
	// written feedback in context.
	WithHint int `json:"with_hint"`
	Plain    int `json:"plain"`
	// PlainAsked is Asked when the prompts were also asked without the
	// feedback, else 0.
	PlainAsked int `json:"plain_asked"`
	// HintWords and PlainWords are the answers' mean lengths in words.
	HintWords  float64 `json:"hint_words"`
	PlainWords float64 `json:"plain_words"`
	// Examples are the first few answers written with the hint.
	Examples []string `json:"examples"`
	// Answers are all the answers written with the hint, and Students
	// the model's own answers they revised (judge.HintAsRevision).
	Answers  []string `json:"answers,omitempty"`
	Students []string `json:"students,omitempty"`
}

// CeilingConfig says how MeasureTeacher asks.
type CeilingConfig struct {
	// Prompts is how many of the persona's held-out prompts to ask (at
	// most len(Eval)); MaxTokens bounds each answer, as in the benchmark.
	Prompts, MaxTokens int
	// Concurrency is how many requests are in flight at once.
	Concurrency int
	// Placement is where the feedback goes (the loop's --hint-placement).
	Placement judge.HintPlacement
	// Plain also asks every prompt without the feedback.
	Plain bool
	// Student, when set, is the server whose greedy answers the teacher
	// revises under judge.HintAsRevision (the policy, when the teacher is
	// another model: --teacher-url); nil asks the teacher's own.
	Student *Client
}

// MeasureTeacher asks the persona's held-out prompts greedily at the
// server behind cl, with the persona's critique placed as the loop's
// teacher gets it (judge.TeacherPromptAt; under judge.HintAsRevision
// after the model's own greedy answer without it), and scores the answers with the
// persona's own checker. Any OpenAI-compatible server works: a clawrl, a
// llama.cpp server, vLLM.
func MeasureTeacher(ctx context.Context, cl *Client, p *Persona, cfg CeilingConfig) (TeacherCeiling, error) {
	n := min(cfg.Prompts, len(p.Eval))
	if n < 1 {
		return TeacherCeiling{}, fmt.Errorf("teacher ceiling for %s: %d prompts", p.Name, cfg.Prompts)
	}
	res := TeacherCeiling{Persona: p.Name, Asked: n}
	hinted := make([]Answer, n)
	plain := make([]Answer, n)
	// Under revise the plain answers are the ones revised: the student's
	// when it is another server, else the teacher's own.
	revising := cfg.Placement == judge.HintAsRevision && (cfg.Plain || cfg.Student != nil)
	student := cl
	if revising && cfg.Student != nil {
		student = cfg.Student
	}
	askPlain := func(i int) error {
		a, err := student.Chat(ctx, ChatRequest{Side: true, Messages: []Message{{Role: "user", Content: p.Eval[i]}}, MaxTokens: cfg.MaxTokens})
		if err != nil {
			return fmt.Errorf("teacher ceiling for %s, prompt %q without the feedback: %w", p.Name, p.Eval[i], err)
		}
		plain[i] = a
		return nil
	}
	askHinted := func(i int) error {
		var own *Answer
		if revising {
			own = &plain[i] // asked in the first pass
		}
		a, err := askTeacher(ctx, cl, p.Eval[i], p.Critique, cfg.Placement, cfg.MaxTokens, own)
		if err != nil {
			return fmt.Errorf("teacher ceiling for %s, prompt %q: %w", p.Name, p.Eval[i], err)
		}
		hinted[i] = a
		return nil
	}
	width := max(cfg.Concurrency, 1)
	var err error
	switch {
	case revising:
		// The revision needs the plain answer first.
		if err = parallel(ctx, n, width, askPlain); err == nil {
			err = parallel(ctx, n, width, askHinted)
		}
	case !cfg.Plain:
		err = parallel(ctx, n, width, askHinted)
	default:
		// Each job writes its own slot of hinted or plain.
		err = parallel(ctx, 2*n, width, func(k int) error {
			if k < n {
				return askHinted(k)
			}
			return askPlain(k - n)
		})
	}
	if err != nil {
		return res, err
	}
	count := func(as []Answer) (int, float64) {
		ok, words := 0, 0
		for _, a := range as {
			words += Words(a.Text)
			if p.Satisfied(a) {
				ok++
			}
		}
		return ok, float64(words) / float64(len(as))
	}
	res.WithHint, res.HintWords = count(hinted)
	if cfg.Plain || revising {
		res.Plain, res.PlainWords = count(plain)
		res.PlainAsked = n
	}
	for i, a := range hinted {
		if i < 3 {
			res.Examples = append(res.Examples, a.Text)
		}
		res.Answers = append(res.Answers, a.Text)
		if revising {
			res.Students = append(res.Students, plain[i].Text)
		}
	}
	return res, nil
}

// TeacherTable is a markdown table of ceilings, one row per persona, and
// the mean over them.
func TeacherTable(model string, rows []TeacherCeiling) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| teacher | persona | with hint | without | words with / without |\n|---|---|---|---|---|\n")
	sum, plain, plainRows := 0.0, 0.0, 0
	for _, r := range rows {
		without, words := "—", fmt.Sprintf("%.0f / —", r.HintWords)
		if r.PlainAsked > 0 {
			without, words = fmt.Sprintf("%d/%d", r.Plain, r.PlainAsked), fmt.Sprintf("%.0f / %.0f", r.HintWords, r.PlainWords)
			plain += float64(r.Plain) / float64(r.PlainAsked)
			plainRows++
		}
		fmt.Fprintf(&b, "| %s | %s | %d/%d | %s | %s |\n", model, r.Persona, r.WithHint, r.Asked, without, words)
		sum += float64(r.WithHint) / float64(r.Asked)
	}
	if len(rows) > 0 {
		without := "—"
		if plainRows == len(rows) {
			without = fmt.Sprintf("%.2f", plain/float64(plainRows))
		}
		fmt.Fprintf(&b, "| %s | **mean** | %.2f | %s | |\n", model, sum/float64(len(rows)), without)
	}
	return b.String()
}
