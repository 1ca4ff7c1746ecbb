package rl

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
)

// Eval-gated promotion: a trained version is served only if it keeps what
// the base model knew. The check is cheap enough for a CPU: a few facts the
// base model answers right (simple capitals, arithmetic), each held as the
// base model's own answer up to the accepted word, and scored by the
// log-probability of that word under the new weights and under the base
// weights — one prefill per fact, no generation. Style training (shorter,
// plainer answers) hardly moves "The capital of France is → Paris"; losing
// the fact does.

// Probe is one retention fact as token ids: the question's rendered prompt,
// the base model's answer up to the accepted word (Prefix), and the tokens
// that spell the word (Answer).
type Probe struct {
	Name      string
	PromptIDs []int32
	PrefixIDs []int32
	AnswerIDs []int32
}

// Evaluator is implemented by trainers that can score probes under their
// current weights and under the base weights (adapters off).
type Evaluator interface {
	// ProbeLogprobs returns log p(Answer | Prompt, Prefix) of each probe.
	ProbeLogprobs(ctx context.Context, probes []Probe, base bool) ([]float64, error)
}

// RetentionConfig is the promotion gate.
type RetentionConfig struct {
	Probes []Probe
	// Build, when Probes is empty, makes them on first use (it asks the
	// engine for the base model's answers, which is best not done while
	// the server starts).
	Build func(ctx context.Context) ([]Probe, error)
	// MaxLost is how many facts a version may lose (default 0). A fact is
	// lost when its answer's probability falls below half the base model's
	// and below one half.
	MaxLost int
	// MaxMeanDrop bounds the fall of the mean answer log-probability below
	// the base model's, in nats (default 0.5; negative: no bound).
	MaxMeanDrop float64
}

func (c RetentionConfig) withDefaults() RetentionConfig {
	if c.MaxMeanDrop == 0 {
		c.MaxMeanDrop = 0.5
	}
	return c
}

// RetentionResult is one version's check.
type RetentionResult struct {
	Facts, Lost int
	Mean, Base  float64 // mean answer log-probability: this version, base
	Pass        bool
	Reason      string
}

// CheckRetention scores the probes under ev's current weights and compares
// them with base (the base model's scores of the same probes).
func CheckRetention(ctx context.Context, ev Evaluator, cfg RetentionConfig, base []float64) (RetentionResult, error) {
	cfg = cfg.withDefaults()
	res := RetentionResult{Facts: len(cfg.Probes), Pass: true}
	if len(cfg.Probes) == 0 {
		res.Reason = "no retention facts: not gated"
		return res, nil
	}
	if len(base) != len(cfg.Probes) {
		return res, fmt.Errorf("retention: %d base scores for %d probes", len(base), len(cfg.Probes))
	}
	cur, err := ev.ProbeLogprobs(ctx, cfg.Probes, false)
	if err != nil {
		return res, fmt.Errorf("retention: %w", err)
	}
	var lost []string
	for i := range cur {
		res.Mean += cur[i]
		res.Base += base[i]
		if cur[i] < base[i]-math.Ln2 && cur[i] < -math.Ln2 {
			res.Lost++
			lost = append(lost, cfg.Probes[i].Name)
		}
	}
	res.Mean /= float64(len(cur))
	res.Base /= float64(len(cur))
	res.Reason = fmt.Sprintf("retention: lost %d of %d facts, answer log-prob %.3f (base %.3f)", res.Lost, res.Facts, res.Mean, res.Base)
	switch {
	case res.Lost > cfg.MaxLost:
		res.Pass = false
		res.Reason += fmt.Sprintf("; more than %d lost: %q", cfg.MaxLost, lost)
	case cfg.MaxMeanDrop >= 0 && res.Mean < res.Base-cfg.MaxMeanDrop:
		res.Pass = false
		res.Reason += fmt.Sprintf("; mean fell more than %.2f nats", cfg.MaxMeanDrop)
	}
	return res, nil
}

// copyDir copies the files of version folder src into dst (which exists).
func copyDir(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("copy %s: not a regular file", p)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return fmt.Errorf("copy %s: %w", p, err)
		}
		return out.Close()
	})
}
