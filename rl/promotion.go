package rl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// Eval-gated promotion: a trained version is served only if it keeps what
// the base model knew. The retention set is a few facts the base model
// answers right (simple capitals, arithmetic). The check is behavioural: the
// candidate weights — the trainer's, before the version is saved or served —
// answer every fact greedily, and a fact is kept when the answer still
// contains an accepted word, in whatever language or phrasing (Fact.Correct,
// the matcher `clawrl bench learn` scores retention with). Style training
// (shorter, plainer, French) passes; a version that drifts into nonsense
// does not, however well it still scores the word after the base model's
// own opening (the log-probability check below, which served a version
// answering "What is the capital of France?" with French-looking gibberish).
//
// A trainer that cannot generate (the torch worker scores sequences only)
// falls back to that log-probability check: one prefill per fact,
// log p(word | question, base answer's prefix) against the base weights'.

// Probe is one retention fact as token ids: the question's rendered prompt,
// the base model's answer up to the accepted word (Prefix), the tokens that
// spell the word (Answer), and the words a candidate's own answer must
// contain (Accept).
type Probe struct {
	Name      string
	PromptIDs []int32
	PrefixIDs []int32
	AnswerIDs []int32
	Accept    []string
}

// Answerer is implemented by trainers that can answer prompts greedily
// under their current weights, without publishing them.
type Answerer interface {
	// Answer returns each prompt's greedy completion, at most maxTokens
	// long, ending before any of stop, or as soon as done (when not nil)
	// says prompt i's answer so far is enough.
	Answer(ctx context.Context, prompts [][]int32, maxTokens int, stop []int32, done func(i int, answer []int32) bool) ([][]int32, error)
}

// Shrinker is implemented by trainers that can shorten their last step:
// the gate's line search (RetentionConfig.Shrinks, `--gate-backtrack`)
// halves a step the gate rejected and checks again, so a batch whose full
// step broke a fact may still teach something. The largest fraction that
// keeps the facts (1/2, 1/4, …) is what is saved, recorded
// (VersionMetrics.StepScale) and served, and the trainer goes on from
// exactly those weights: the next step starts from what is served, as it
// does after a rejection. The optimizer's moments and step count stay the
// full step's (they estimate the gradients' scale, not where the weights
// are), and they are what the version folder holds, so a restart resumes
// the same state. Nothing is saved while the gate backtracks: a kill
// mid-search leaves no version and the batch untrained, to be trained
// once after the restart.
type Shrinker interface {
	// ShrinkStep moves the trainable weights to before + frac·(now − before),
	// where before is the weights before the last Step.
	ShrinkStep(frac float64) error
}

// Repairer is implemented by trainers that can take a repair step: the
// gate (RetentionConfig.Repairs, `--gate-repair`) asks for one when a step
// lost a fact, and checks again. A repair step trains on every rehearsal
// anchor alone — generic questions, disjoint from the retention facts,
// towards the base model's own answers — so it pulls the openings of
// ordinary answers back where the batch pushed them off ("Who wrote Romeo
// and Juliet?" → "I'm sorry, but I can't assist with that."), and is taken
// only when a step needed it: anchors in every step (RehearsalConfig) pull
// every step back, whether it broke something or not. The repair is its own
// update (the first moment reset, so it follows the anchors' gradient, not
// the batch's momentum), and afterwards the optimizer's state is put back as
// the batch's step left it: the repair moves the weights only. The line
// search (Shrinker) after it shrinks the step and its repairs together. As
// with the line search, nothing is saved while the gate repairs.
type Repairer interface {
	// Repair takes one repair step. It returns ErrNoAnchors when there
	// are no anchors to repair with.
	Repair(ctx context.Context) (StepMetrics, error)
}

// Focuser is implemented by trainers whose steps can weigh teacher-written
// tokens by how much the hint makes them likelier (StepConfig.DistillFocus,
// `--distill-focus`). Focus helps a preference said at the end of an answer
// (a sign-off, a length) and can break one said at its start: the opening
// tokens the hint asks for ("TL;DR:") gain the most and weigh the most, and
// a step that moves every answer's first tokens that hard loses facts. So a
// focused step the gate rejects, after its repairs and line search, is
// taken again on the same batch from the same weights (and optimizer state)
// with focus off, and that step is gated as any step is; the version
// records it (VersionMetrics.Unfocused). Focus stays on for the next step.
type Focuser interface {
	DistillFocus() float64
	SetDistillFocus(focus float64)
}

// ErrNoAnchors: a repair step was asked of a trainer with no rehearsal
// anchors (--rehearsal 0, or every question dropped).
var ErrNoAnchors = errors.New("no rehearsal anchors to repair with")

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
	// Decode turns answer tokens into text (the engine's Format.Decode) and
	// Stop ends an answer (Format.StopIDs): the behavioural check needs
	// both; without Decode only the log-probability check runs.
	Decode func(ids []int32) string
	Stop   []int32
	// MaxTokens bounds a candidate's answer (default 48; the base answers
	// that made the probes named the word within 40).
	MaxTokens int
	// Repairs is how many repair steps (Repairer) a rejected step gets,
	// each checked again, before the line search (0: none; needs a
	// Repairer with rehearsal anchors).
	Repairs int
	// Shrinks is how many times a rejected step is halved and checked
	// again before the version is rejected (0: none; needs a Shrinker).
	Shrinks int
	// MaxLost is how many facts a version may lose (default 0). In the
	// log-probability check a fact is lost when its answer's probability
	// falls below half the base model's and below one half.
	MaxLost int
	// MaxMeanDrop bounds, in the log-probability check only, the fall of
	// the mean answer log-probability below the base model's, in nats
	// (default 0.5; negative: no bound).
	MaxMeanDrop float64
	// Open are open questions (how-to questions with answers of a few
	// sentences; Name and PromptIDs only) the behavioural check also asks,
	// each answered to OpenTokens: a version that loops on any of them
	// (Loops: a block of words said three times in a row) is rejected, as
	// one that learned a sign-off without the end of turn after it does
	// ("… enjoy! Hope this helps! Hope this helps! …" to the token limit)
	// while every fact, answered in a sentence, ends cleanly. BuildOpen,
	// when Open is empty, makes them on first use. The log-probability
	// check does not ask them.
	Open      []Probe
	BuildOpen func(ctx context.Context) ([]Probe, error)
	// OpenAnswered also rejects a version that no longer answers the open
	// questions: when at least half of those with topic words (Probe.Accept,
	// the words of its topic in a few languages that the base model's
	// answer named) are answered with none of them. "I'm sorry, but I
	// can't assist with that." to "How do I make a cup of tea?" names no
	// tea; the 1.5B student's first tldr version said it to six of the
	// eight default questions while keeping every fact.
	OpenAnswered bool
	// OpenTokens bounds an open answer (default 64, `clawrl bench learn`'s
	// answer budget).
	OpenTokens int
	// Caught, when set, is told every answer the behavioural check finds
	// a fact lost in: the probe and the candidate's answer tokens (the
	// stop token left out). The loop pushes down the ones that do not
	// answer (--rehearsal-avoid).
	Caught func(p Probe, answer []int32)
	// Passed, when set, is told that a version passed the check (after
	// any repairs and shrinking), before its folder is written. The loop
	// retires the answers pushed down long enough
	// (--rehearsal-avoid-passes).
	Passed func(version int64)
}

func (c RetentionConfig) withDefaults() RetentionConfig {
	if c.MaxMeanDrop == 0 {
		c.MaxMeanDrop = 0.5
	}
	if c.MaxTokens <= 0 {
		c.MaxTokens = 48
	}
	if c.OpenTokens <= 0 {
		c.OpenTokens = 64
	}
	return c
}

// Behavioural reports whether the gate checks answers with tr (when tr is
// an Answerer and the config can decode them) rather than scores.
func (c RetentionConfig) Behavioural(tr any) (Answerer, bool) {
	a, ok := tr.(Answerer)
	return a, ok && c.Decode != nil
}

// RetentionResult is one version's check.
type RetentionResult struct {
	Facts, Lost int
	// Open, Loops: open questions asked and answers that looped (the
	// behavioural check only); Unanswered: answers that named none of
	// their topic's words (counted under OpenAnswered only).
	Open, Loops, Unanswered int
	// Mean, Base: mean answer log-probability under this version and the
	// base weights (the log-probability check only).
	Mean, Base float64
	Pass       bool
	Reason     string
}

// lostAnswerChars bounds each lost fact's answer quoted in the reason.
const lostAnswerChars = 60

// CheckAnswers is the behavioural check: a's current weights answer every
// probe's question greedily, and a probe is lost when its answer contains
// none of its accepted words. The open questions (cfg.Open) are answered in
// the same batch, and the version fails when any of those answers loops.
func CheckAnswers(ctx context.Context, a Answerer, cfg RetentionConfig) (RetentionResult, error) {
	cfg = cfg.withDefaults()
	res := RetentionResult{Facts: len(cfg.Probes), Open: len(cfg.Open), Pass: true}
	if len(cfg.Probes) == 0 {
		res.Reason = "no retention facts: not gated"
		return res, nil
	}
	if cfg.Decode == nil {
		return res, fmt.Errorf("retention: no decoder for the answers")
	}
	nf := len(cfg.Probes)
	prompts := make([][]int32, 0, nf+len(cfg.Open))
	for _, p := range cfg.Probes {
		prompts = append(prompts, p.PromptIDs)
	}
	for _, p := range cfg.Open {
		prompts = append(prompts, p.PromptIDs)
	}
	// An answer that names the fact needs no more tokens: most do within
	// a few, so the check costs far less than MaxTokens decode steps. An
	// open answer is done once it loops.
	done := func(i int, ids []int32) bool {
		if i >= nf {
			return Loops(cfg.Decode(ids))
		}
		return len(ids) >= cfg.MaxTokens || (Fact{Accept: cfg.Probes[i].Accept}).Correct(cfg.Decode(ids))
	}
	maxTokens := cfg.MaxTokens
	if len(cfg.Open) > 0 {
		maxTokens = max(maxTokens, cfg.OpenTokens)
	}
	answers, err := a.Answer(ctx, prompts, maxTokens, cfg.Stop, done)
	if err != nil {
		return res, fmt.Errorf("retention: %w", err)
	}
	if len(answers) != len(prompts) {
		return res, fmt.Errorf("retention: %d answers to %d questions", len(answers), len(prompts))
	}
	var lost, loops, unanswered []string
	topics := 0
	for i, p := range cfg.Probes {
		ids := answers[i][:min(len(answers[i]), cfg.MaxTokens)]
		text := cfg.Decode(ids)
		if (Fact{Question: p.Name, Accept: p.Accept}).Correct(text) {
			continue
		}
		res.Lost++
		if cfg.Caught != nil {
			cfg.Caught(p, ids)
		}
		lost = append(lost, fmt.Sprintf("%s → %q", p.Name, clip(text)))
	}
	for i, p := range cfg.Open {
		text := cfg.Decode(answers[nf+i])
		if Loops(text) {
			res.Loops++
			loops = append(loops, fmt.Sprintf("%s → %q", p.Name, clip(text)))
		}
		if cfg.OpenAnswered && len(p.Accept) > 0 {
			topics++
			if !(Fact{Accept: p.Accept}).Correct(text) {
				res.Unanswered++
				unanswered = append(unanswered, fmt.Sprintf("%s → %q", p.Name, clip(text)))
			}
		}
	}
	res.Reason = fmt.Sprintf("retention: lost %d of %d facts (greedy answers)", res.Lost, res.Facts)
	if res.Open > 0 {
		res.Reason += fmt.Sprintf(", %d of %d open answers loop", res.Loops, res.Open)
	}
	if topics > 0 {
		res.Reason += fmt.Sprintf(", %d of %d do not answer", res.Unanswered, topics)
	}
	if res.Lost > cfg.MaxLost {
		res.Pass = false
		res.Reason += fmt.Sprintf("; more than %d lost: %s", cfg.MaxLost, strings.Join(lost, "; "))
	}
	if res.Loops > 0 {
		res.Pass = false
		res.Reason += "; looping: " + strings.Join(loops, "; ")
	}
	// One answer that misses its topic's words may be a terse right one
	// ("Cross the wide end over and loop it through."); half of them is a
	// version that stopped answering.
	if res.Unanswered > 0 && 2*res.Unanswered >= topics {
		res.Pass = false
		res.Reason += "; not answering: " + strings.Join(unanswered, "; ")
	}
	return res, nil
}

// clip shortens an answer quoted in a reason to lostAnswerChars runes; a
// looping answer is quoted from its end, where the loop is.
func clip(text string) string {
	r := []rune(text)
	switch {
	case len(r) <= lostAnswerChars:
		return text
	case Loops(text):
		return "…" + string(r[len(r)-lostAnswerChars:])
	}
	return string(r[:lostAnswerChars]) + "…"
}

// CheckRetention is the log-probability check: it scores the probes under
// ev's current weights and compares them with base (the base model's
// scores of the same probes). The gate uses it only for trainers that
// cannot answer (see Behavioural).
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
