package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/clawrl/clawrl/bench"
	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/native"
	"github.com/clawrl/clawrl/judge"
	"github.com/clawrl/clawrl/loop"
)

// benchSelectOptions are `clawrl bench teacher`'s best-of-N flags: what the
// loop's --teacher-samples would pick (bench/teacher_select.go).
type benchSelectOptions struct {
	samples                int
	temperature, threshold float64
	seed                   int64
	judgeURL, judgeModel   string
	judgeKey, out          string
	judgeTimeout           time.Duration
	gainModel              string
	rescore                string
}

func (o *benchSelectOptions) addFlags(f *pflag.FlagSet) {
	f.IntVar(&o.samples, "samples", 1, "also sample this many answers per prompt at --temperature, have the judge at --judge-url pick one as the loop's --teacher-samples does, and report the picked answers' ceiling against a random pick's (best of 1, 2, 4, … up to this)")
	f.Float64Var(&o.temperature, "temperature", engine.DefaultTemperature, "sampling temperature of the --samples answers (the loop's --teacher-temperature)")
	f.Float64Var(&o.threshold, "select-threshold", loop.DefaultSelectThreshold, "judge score log p(Yes) − log p(No) a pick must exceed (the loop's --teacher-select-threshold)")
	f.Int64Var(&o.seed, "seed", 1, "seed of the first sampled answer (each next one adds 1)")
	f.StringVar(&o.judgeURL, "judge-url", "", "OpenAI-compatible endpoint of the selecting judge, e.g. http://127.0.0.1:31800/v1 (default: --url/v1, the teacher judges itself); it must return logprobs with top_logprobs")
	f.StringVar(&o.judgeModel, "judge-model", "", "model name at --judge-url (default: --model, or \"clawrl\")")
	f.StringVar(&o.judgeKey, "judge-key", "", "API key for --judge-url (default $CLAWRL_JUDGE_KEY)")
	f.StringVar(&o.out, "samples-out", "", "write the sampled answers, their judge scores and checker results as JSON to this file")
	f.DurationVar(&o.judgeTimeout, "judge-timeout", 2*time.Minute, "timeout of one judge call")
	f.StringVar(&o.rescore, "rescore", "", "score the answers of an earlier --samples-out file again with this run's judge (and --gain-model) instead of writing new ones (--samples and --eval-prompts must match it)")
	f.StringVar(&o.gainModel, "gain-model", "", "also pick by the hint gain (the loop's --teacher-select gain) read by this model in-process (a GGUF file or a name such as smollm2: the student whose teacher scores the answers)")
}

func runBenchSelected(ctx context.Context, o benchTeacherOptions, cl *bench.Client, at judge.HintPlacement, all map[string]*bench.Persona, stdout io.Writer) error {
	s := o.sel
	url, model, key := s.judgeURL, s.judgeModel, s.judgeKey
	if url == "" {
		url = strings.TrimRight(o.url, "/") + "/v1"
	}
	if model == "" {
		model = o.model
	}
	if model == "" {
		model = "clawrl"
	}
	if key == "" {
		key = os.Getenv("CLAWRL_JUDGE_KEY")
	}
	if s.temperature < 0 {
		return fmt.Errorf("--temperature %g: want ≥ 0", s.temperature)
	}
	sel := &judge.Selector{Scorer: judge.HTTPScorer{HTTPBackend: &judge.HTTPBackend{URL: url, Model: model, Key: key,
		Client: &http.Client{Timeout: o.timeout}}}, Threshold: s.threshold, CallTimeout: s.judgeTimeout}
	var gain func(context.Context, string, string, judge.HintPlacement, bench.Answer) (float64, error)
	if s.gainModel != "" {
		g, closeGain, err := openHintGain(ctx, s.gainModel, at)
		if err != nil {
			return err
		}
		defer closeGain()
		gain = g
	}
	prompts := map[string]int{}
	rows, gainRows := map[string][]bench.SelectedCeiling{}, map[string][]bench.SelectedCeiling{}
	draws := map[string][]bench.Draw{}
	var earlier struct {
		Draws map[string][]bench.Draw `json:"draws"`
	}
	if s.rescore != "" {
		b, err := os.ReadFile(s.rescore)
		if err != nil {
			return fmt.Errorf("--rescore: %w", err)
		}
		if err := json.Unmarshal(b, &earlier); err != nil {
			return fmt.Errorf("--rescore %s: %w", s.rescore, err)
		}
	}
	for _, name := range o.personas {
		p, ok := all[name]
		if !ok {
			return fmt.Errorf("--personas: unknown persona %q", name)
		}
		cfg := bench.SelectConfig{Samples: s.samples, Temperature: s.temperature, Seed: s.seed, Selector: sel, Gain: gain}
		var d []bench.Draw
		var r, gr []bench.SelectedCeiling
		var err error
		if s.rescore != "" {
			d = earlier.Draws[name]
			r, gr, err = bench.RescoreSelected(ctx, p, d, min(o.prompts, len(p.Eval)), o.concurrency, cfg)
		} else {
			d, r, gr, err = bench.MeasureSelected(ctx, cl, p, bench.CeilingConfig{Prompts: o.prompts, MaxTokens: o.maxTokens,
				Concurrency: o.concurrency, Placement: at}, cfg)
		}
		if err != nil {
			return err
		}
		prompts[name], rows[name], gainRows[name], draws[name] = min(o.prompts, len(p.Eval)), r, gr, d
		failed := 0
		for _, x := range d {
			if x.Err != "" {
				failed++
			}
		}
		if failed > 0 {
			fmt.Fprintf(stdout, "warning: %s: the judge could not score %d of %d answers (first: %s)\n", name, failed, len(d), firstErr(d))
		}
	}
	name := o.model
	if name == "" {
		name = o.url
	}
	fmt.Fprintf(stdout, "\nbest of k sampled answers at temperature %g, picked by the judge at %s (threshold %g):\n\n", s.temperature, url, s.threshold)
	fmt.Fprint(stdout, bench.SelectedTable(name, model, prompts, rows, o.personas))
	if gain != nil {
		fmt.Fprintf(stdout, "\nthe same answers picked by the hint gain read by %s:\n\n", s.gainModel)
		fmt.Fprint(stdout, bench.SelectedTable(name, "gain:"+s.gainModel, prompts, gainRows, o.personas))
	}
	if s.out != "" {
		b, err := json.MarshalIndent(map[string]any{"rows": rows, "gain_rows": gainRows, "draws": draws, "temperature": s.temperature,
			"threshold": s.threshold, "judge_url": url, "judge_model": model, "samples": s.samples}, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(s.out, b, 0o644); err != nil {
			return fmt.Errorf("--samples-out %s: %w", s.out, err)
		}
	}
	return nil
}

func firstErr(ds []bench.Draw) string {
	for _, d := range ds {
		if d.Err != "" {
			return d.Err
		}
	}
	return ""
}

// openHintGain opens spec in-process and returns the hint gain of a
// persona's answer as the loop's --teacher-select gain reads it: the
// answer's text in that model's tokens (its stop token after an answer
// that ended in time), scored by its base weights with and without the
// feedback placed where the answer was written (at for a draw that does
// not say).
func openHintGain(ctx context.Context, spec string, at judge.HintPlacement) (func(context.Context, string, string, judge.HintPlacement, bench.Answer) (float64, error), func(), error) {
	path, _, err := resolveModel(ctx, spec, defaultDataDir(), slog.Default())
	if err != nil {
		return nil, nil, fmt.Errorf("--gain-model %s: %w", spec, err)
	}
	eng, err := native.Open(path, native.Options{})
	if err != nil {
		return nil, nil, fmt.Errorf("--gain-model %s: %w", spec, err)
	}
	f := eng.Format()
	score := func(ctx context.Context, question, feedback string, written judge.HintPlacement, a bench.Answer) (float64, error) {
		if written == "" { // a draw kept before its placement was
			written = at
		}
		g := &judge.HintGain{Teacher: &judge.Teacher{Engine: eng, Adapter: engine.AdapterBase, Placement: written}}
		ids := f.Encode(a.Text)
		if stop := f.StopIDs(); a.Finished && len(stop) > 0 {
			ids = append(ids, stop[0])
		}
		return g.Score(ctx, []chat.Message{{Role: chat.RoleUser, Content: question}}, nil, "", feedback, ids)
	}
	return score, func() { eng.Close() }, nil
}
