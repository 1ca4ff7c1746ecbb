package bench

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/judge"
)

// Best-of-N teacher ceilings (`clawrl bench teacher --samples N`): the
// loop's --teacher-samples writes N answers with the feedback in context
// at a temperature and keeps the one its judge (judge.Selector) finds does
// what the feedback asks. This measures, per persona, how often that pick
// satisfies the persona's hidden checker (the selected ceiling) against a
// random pick of the same N answers (the selector's precision over
// chance) and against any of them (an oracle's ceiling).

// Draw is one sampled teacher answer: which prompt, the judge's score and
// whether the persona's checker is satisfied.
type Draw struct {
	Prompt    int     `json:"prompt"`
	Score     float64 `json:"score"`
	Satisfied bool    `json:"satisfied"`
	Words     int     `json:"words"`
	Finished  bool    `json:"finished"`
	// Refused: why no selector picks the answer whatever its score
	// (judge.Refuse: it repeats the feedback, or is the feedback's words
	// only).
	Refused judge.Refusal `json:"refused,omitempty"`
	// Placement is where the feedback was when the answer was written
	// (CeilingConfig.Placement; under judge.HintMixed, one of the two);
	// the hint gain reads it there too.
	Placement judge.HintPlacement `json:"placement,omitempty"`
	Text      string              `json:"text,omitempty"`
	// Err is why the judge could not score it (its score is then the
	// lowest float: JSON has no −Inf).
	Err string `json:"err,omitempty"`
	// Gain is the second selector's score (SelectConfig.Gain), when
	// measured; GainErr why it could not be.
	Gain    float64 `json:"gain,omitempty"`
	GainErr string  `json:"gain_err,omitempty"`
}

// SelectedCeiling is the best-of-k figures for one k ≤ N, from the first k
// draws of every prompt.
type SelectedCeiling struct {
	K int `json:"k"`
	// Selected: prompts whose picked answer satisfies the checker (a
	// prompt with no pick counts as not satisfied: it trains nothing).
	Selected int `json:"selected"`
	// Picked: prompts with an answer above the threshold.
	Picked int `json:"picked"`
	// Random: the expected count of a random pick among the k answers.
	Random float64 `json:"random"`
	// Any: prompts with at least one satisfying answer among the k.
	Any int `json:"any"`
}

// SelectConfig says how MeasureSelected samples and judges.
type SelectConfig struct {
	Samples     int
	Temperature float64
	// Seed makes the draws reproducible: draw k of prompt i asks with
	// seed Seed + i·Samples + k.
	Seed     int64
	Selector *judge.Selector
	// Gain, when set, is a second selector's score of an answer (the
	// loop's --teacher-select gain: judge.HintGain) with the feedback
	// placed at at (the draw's Placement; "" for draws kept before it was
	// recorded); it picks the answer with the highest, with no threshold.
	Gain func(ctx context.Context, question, feedback string, at judge.HintPlacement, a Answer) (float64, error)
}

// MeasureSelected asks each of the persona's first n held-out prompts
// cfg.Samples times at cfg.Temperature with the feedback placed as the
// loop's teacher gets it, has cfg.Selector score every answer, and returns
// the draws with the best-of-k figures for k = 1, 2, 4, … up to Samples.
func MeasureSelected(ctx context.Context, cl *Client, p *Persona, cc CeilingConfig, cfg SelectConfig) ([]Draw, []SelectedCeiling, []SelectedCeiling, error) {
	n := min(cc.Prompts, len(p.Eval))
	if n < 1 || cfg.Samples < 1 || cfg.Selector == nil {
		return nil, nil, nil, fmt.Errorf("selected ceiling for %s: %d prompts, %d samples, selector %v", p.Name, cc.Prompts, cfg.Samples, cfg.Selector != nil)
	}
	if cc.Placement == judge.HintAsRevision || cc.Placement == judge.HintAsContinuation {
		// Both need the student's answer per prompt; not measured here.
		return nil, nil, nil, fmt.Errorf("selected ceiling for %s: --samples asks with the user, system, system+user or mixed placement, not %s", p.Name, cc.Placement)
	}
	draws := make([]Draw, n*cfg.Samples)
	err := parallel(ctx, len(draws), max(cc.Concurrency, 1), func(k int) error {
		i := k / cfg.Samples
		at := cc.Placement.Writing(k % cfg.Samples)
		tm, err := judge.TeacherPromptAt([]chat.Message{{Role: chat.RoleUser, Content: p.Eval[i]}}, p.Critique, at)
		if err != nil {
			return err
		}
		seed := cfg.Seed + int64(k)
		a, err := cl.Chat(ctx, ChatRequest{Side: true, Messages: apiMessages(tm), MaxTokens: cc.MaxTokens, Temperature: cfg.Temperature, Seed: &seed})
		if err != nil {
			return fmt.Errorf("selected ceiling for %s, prompt %q: %w", p.Name, p.Eval[i], err)
		}
		draws[k] = Draw{Prompt: i, Satisfied: p.Satisfied(a), Words: Words(a.Text), Text: a.Text, Finished: a.Finished, Placement: at}
		return scoreDraw(ctx, p, &draws[k], cfg)
	})
	if err != nil {
		return nil, nil, nil, err
	}
	rows, gainRows := Ceilings(draws, n, cfg)
	return draws, rows, gainRows, nil
}

// RescoreSelected scores draws written before (by MeasureSelected, as
// --samples-out keeps them) with cfg's selectors again: another judge over
// the same answers, with no answer written again. n is the prompts count.
func RescoreSelected(ctx context.Context, p *Persona, draws []Draw, n, concurrency int, cfg SelectConfig) ([]SelectedCeiling, []SelectedCeiling, error) {
	if n < 1 || cfg.Samples < 1 || len(draws) != n*cfg.Samples || cfg.Selector == nil {
		return nil, nil, fmt.Errorf("rescore %s: %d draws for %d prompts × %d samples", p.Name, len(draws), n, cfg.Samples)
	}
	err := parallel(ctx, len(draws), max(concurrency, 1), func(k int) error {
		if d := draws[k]; d.Prompt != k/cfg.Samples || d.Prompt >= len(p.Eval) {
			return fmt.Errorf("rescore %s: draw %d is of prompt %d, want %d", p.Name, k, d.Prompt, k/cfg.Samples)
		}
		draws[k].Err, draws[k].GainErr = "", ""
		return scoreDraw(ctx, p, &draws[k], cfg)
	})
	if err != nil {
		return nil, nil, err
	}
	rows, gainRows := Ceilings(draws, n, cfg)
	return rows, gainRows, nil
}

// scoreDraw has cfg's selectors score d. A score that fails is the lowest
// float (JSON has no −Inf) with the reason kept.
func scoreDraw(ctx context.Context, p *Persona, d *Draw, cfg SelectConfig) error {
	// The selector reads the task as the user wrote it and the feedback
	// beside it, as the loop's does.
	task := []chat.Message{{Role: chat.RoleUser, Content: p.Eval[d.Prompt]}}
	d.Refused = judge.Refuse(d.Text, p.Critique)
	var err error
	if d.Score, err = cfg.Selector.Score(ctx, task, p.Critique, d.Text); err != nil {
		if ctx.Err() != nil {
			return err
		}
		d.Score, d.Err = -math.MaxFloat64, err.Error()
	}
	if cfg.Gain != nil {
		if d.Gain, err = cfg.Gain(ctx, p.Eval[d.Prompt], p.Critique, d.Placement, Answer{Text: d.Text, Finished: d.Finished}); err != nil {
			if ctx.Err() != nil {
				return err
			}
			d.Gain, d.GainErr = -math.MaxFloat64, err.Error()
		}
	}
	return nil
}

// Ceilings are the best-of-k figures for k = 1, 2, 4, … up to cfg.Samples
// over n prompts' draws, by the judge's score (above its threshold) and,
// when cfg.Gain is set, by the gain.
func Ceilings(draws []Draw, n int, cfg SelectConfig) (rows, gainRows []SelectedCeiling) {
	for k := 1; ; k *= 2 {
		k = min(k, cfg.Samples)
		rows = append(rows, bestOf(draws, n, cfg.Samples, k, cfg.Selector.Threshold, func(d Draw) float64 { return d.Score }))
		if cfg.Gain != nil {
			gainRows = append(gainRows, bestOf(draws, n, cfg.Samples, k, -math.MaxFloat64, func(d Draw) float64 { return d.Gain }))
		}
		if k == cfg.Samples {
			break
		}
	}
	return rows, gainRows
}

// bestOf is the best-of-k figures over the first k of each prompt's
// samples draws, picking by score above threshold.
func bestOf(draws []Draw, prompts, samples, k int, threshold float64, score func(Draw) float64) SelectedCeiling {
	r := SelectedCeiling{K: k}
	for i := range prompts {
		ds := draws[i*samples : i*samples+k]
		best, ok := -1, 0
		for j, d := range ds {
			if d.Satisfied {
				ok++
			}
			if d.Refused == "" && score(d) > threshold && (best < 0 || score(d) > score(ds[best])) {
				best = j
			}
		}
		r.Random += float64(ok) / float64(k)
		if ok > 0 {
			r.Any++
		}
		if best >= 0 {
			r.Picked++
			if ds[best].Satisfied {
				r.Selected++
			}
		}
	}
	return r
}

// SelectedTable is a markdown table of best-of-k ceilings, one row per
// persona and k, with the selector's precision (satisfied picks over
// picks) beside a random pick's.
func SelectedTable(model, judgeName string, prompts map[string]int, rows map[string][]SelectedCeiling, order []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| teacher | judge | persona | k | selected | random pick | any of k | picked | precision (selector / random) |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, name := range order {
		n := prompts[name]
		for _, r := range rows[name] {
			prec := "—"
			if r.Picked > 0 {
				prec = fmt.Sprintf("%.2f / %.2f", float64(r.Selected)/float64(r.Picked), r.Random/float64(n))
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %d | %d/%d | %.1f/%d | %d/%d | %d/%d | %s |\n", model, judgeName, name, r.K, r.Selected, n, r.Random, n, r.Any, n, r.Picked, n, prec)
		}
	}
	return b.String()
}
