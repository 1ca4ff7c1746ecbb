package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/clawrl/clawrl/bench"
	"github.com/clawrl/clawrl/store"
	"github.com/clawrl/clawrl/store/sqlite"
)

// rerating is a kept run's training ratings read again (learnSide.rerate).
type rerating struct {
	kept  bool // the run kept its store and its persona is known
	turns int  // rated training turns
	diff  []bench.Rerating
	err   error
}

// rerate reads the training ratings of run k again with the simulated
// users as this binary has them (p), from the store kept beside its
// learn.json (bench learn --keep-data's data-ARM-PERSONA-SEED). A run
// recorded under other users cannot be repeated answer for answer past the
// first turn they rate otherwise, whatever the binary.
func (s learnSide) rerate(k bench.RunKey, p *bench.Persona) rerating {
	file, ok := s.from[k]
	if !ok || p == nil {
		return rerating{}
	}
	cfg := s.configs[file]
	if real, err := filepath.EvalSymlinks(file); err == nil {
		file = real // a pool's link: the store lies beside the run's own file
	}
	db := filepath.Join(filepath.Dir(file), fmt.Sprintf("data-%s-%s-%d", k.Arm, k.Persona, k.Seed), sqlite.FileName)
	if _, err := os.Stat(db); err != nil {
		return rerating{}
	}
	turns, err := ratedTurns(context.Background(), db)
	if err != nil {
		return rerating{kept: true, err: fmt.Errorf("%s: %w", db, err)}
	}
	var run bench.Run
	for _, r := range s.runs {
		if r.Key() == k {
			run = r
		}
	}
	diff, err := bench.Rerate(p, cfg, run, turns)
	return rerating{kept: true, turns: len(turns), diff: diff, err: err}
}

// rerated is rerate's finding in words; "" when the run kept no store or
// its persona is unknown.
func (s learnSide) rerated(k bench.RunKey, p *bench.Persona) string {
	r := s.rerate(k, p)
	switch {
	case !r.kept:
		return ""
	case r.err != nil:
		return "not read: " + r.err.Error()
	case len(r.diff) == 0:
		return fmt.Sprintf("all %d as recorded", r.turns)
	}
	d := r.diff[0]
	where := fmt.Sprintf("the %s rated turn", ordinal(d.Turn+1))
	if d.Round > 0 {
		where = fmt.Sprintf("round %d", d.Round)
	}
	return fmt.Sprintf("%d of %d otherwise today, the first in %s (%q: %s, today %s): a rerun on today's users parts there",
		len(r.diff), r.turns, where, d.Question, ratingWords(d.RatedTurn.Rating, d.RatedTurn.Text), ratingWords(d.Rating, d.Text))
}

// ratedOtherwise reads again, as rerate does, the training ratings of
// every run of runs that kept its store: how many were read, and those
// (persona and seed, arm where it is not combine) with a rating today's
// users would send otherwise.
func (s learnSide) ratedOtherwise(runs []bench.Run, personas map[string]*bench.Persona) (int, []string) {
	read := 0
	var otherwise []string
	for _, r := range runs {
		rr := s.rerate(r.Key(), personas[r.Persona])
		if !rr.kept || rr.err != nil {
			continue
		}
		read++
		if len(rr.diff) > 0 {
			name := fmt.Sprintf("%s %d", r.Persona, r.Seed)
			if r.Arm != "combine" {
				name = r.Arm + " " + name
			}
			otherwise = append(otherwise, name)
		}
	}
	return read, otherwise
}

// ratedTurns reads the rated main turns of a kept store in their order.
func ratedTurns(ctx context.Context, db string) ([]bench.RatedTurn, error) {
	st, err := sqlite.Open(ctx, db, sqlite.Options{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	var out []bench.RatedTurn
	f := store.TurnFilter{Type: store.Main, Limit: 500}
	for {
		page, err := st.ListTurns(ctx, f)
		if err != nil {
			return nil, err
		}
		if len(page) == 0 {
			return out, nil
		}
		for _, t := range page {
			if t.Feedback == nil || len(t.Messages) == 0 {
				continue
			}
			q := t.Messages[len(t.Messages)-1].Content
			out = append(out, bench.RatedTurn{
				Question: q,
				Answer:   bench.Answer{Text: t.Response.Content, Finished: t.FinishReason != "length"},
				Rating:   t.Feedback.Rating, Text: t.Feedback.Text,
			})
		}
		f.AfterID = page[len(page)-1].Seq
	}
}

// ratingWords is a rating as a user sent it: "+1", or "−1" with its text.
func ratingWords(rating int, text string) string {
	s := fmt.Sprintf("%+d", rating)
	if text != "" {
		s += fmt.Sprintf(" %q", text)
	}
	return s
}

// ordinal is 1st, 2nd, 3rd, 4th, … 11th, 12th, 13th, 21st.
func ordinal(n int) string {
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return fmt.Sprintf("%d%s", n, suffix)
}
