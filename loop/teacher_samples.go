package loop

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"

	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/judge"
	"github.com/clawrl/clawrl/rl"
	"github.com/clawrl/clawrl/store"
)

// Best-of-N teacher answers (--teacher-samples N): the teacher (the
// policy's own, or --teacher-url's) writes N answers at a temperature and a
// selector keeps the one that does what the written feedback asks: by
// default the hint gain (judge.HintGain: how much more likely the feedback
// makes the answer, read by the base weights, --teacher-select-gain-by), or a judge
// (judge.Selector: the local judge or --judge-url's, "does this answer do
// what the feedback asks?" from one prefill per answer). With the judges
// this box has (SmolLM2-135M, Qwen2.5-Coder-0.5B) the judge picks no better
// than chance, the hint gain clearly better (BENCHMARKS.md, "Best-of-N
// teacher answers"). When no answer passes the threshold the turn yields
// no teacher sample: better no sample than a bad one. The selection
// happens before the sample is stored, and a turn stores at most one
// sample, so a crash mid-selection redoes the turn and never trains it
// twice. A lone answer (--teacher-samples 1) is not selected, but the
// refusal (judge.Refuse) holds for it too.

// TeacherSampleSettings are the flags of best-of-N teacher answers.
type TeacherSampleSettings struct {
	Samples     int
	Temperature float64
	Threshold   float64
	// Select is how the answer is chosen: SelectJudge or SelectGain.
	Select string
	// GainBy is the weights that read the hint gain: GainByBase,
	// GainByPolicy or GainByTeacher (--teacher's).
	GainBy string
	// Length is LengthOff or LengthFit (judge.PreferFit).
	Length string
	// FitShare is the share of the turn's budget an answer must end
	// within under LengthFit (judge.Share); 0 or 1: all of it.
	FitShare float64
	// Relevance keeps, under SelectGain, only answers likelier after the
	// rated turn's question than without it, and ranks them by the lesser
	// of that relevance and the gain (judge.HintGain.ScoreRelevant).
	Relevance bool
	// Opening, with Relevance, also refuses an answer whose first
	// judge.OpeningTokens tokens the question makes less than Opening nats
	// a token likelier (judge.Reading.Opening): a reply to the feedback that
	// names the topic only at its end. 0: off.
	Opening float64
	// Quoted prefers the answers that say the words the feedback puts in
	// quotes (judge.WantedQuotes, judge.PreferQuoted).
	Quoted bool
	// Loops is what becomes of a teacher answer that repeats itself
	// (rl.Loops), lone or among best-of-N: LoopsTrain, LoopsRefuse or
	// LoopsCut.
	Loops string
	// refuseLoops is --teacher-refuse-loops, the deprecated spelling of
	// --teacher-loops refuse; loopsByDefault: --teacher-loops not given.
	refuseLoops, loopsByDefault bool
	// QuotedRetry > 1: with one answer per turn, a turn whose feedback
	// quotes words the answer does not say is written again as best of
	// QuotedRetry, preferring the answers that say them (as Quoted); 0:
	// off.
	QuotedRetry int
	// FitRetry > 1: with one answer per turn, a turn whose lone answer
	// does not end within the rated turn's token budget is written again
	// as best of FitRetry, and the best one that fits is kept (as Length
	// LengthFit would; none: the lone answer), and a turn QuotedRetry
	// writes again prefers, of the answers it would keep, one that fits;
	// 0: off. Under FitScope FitScopeQuoted (the default) only where the
	// budget cuts off the words the feedback quotes.
	FitRetry int
	// FitScope is FitScopeQuoted or FitScopeAny ("" is FitScopeQuoted).
	FitScope string
	// retryByDefault, fitRetryByDefault: QuotedRetry, FitRetry hold
	// AddFlags' default, which steps aside where it cannot apply (best of
	// N on every turn, the judge's choice, no teacher answers); a value
	// given there is an error.
	retryByDefault, fitRetryByDefault bool
}

// The length rules of --teacher-select-length.
const (
	// LengthOff: the selector's score alone picks.
	LengthOff = "off"
	// LengthFit: keep only an answer that ends within the rated turn's
	// token budget, its recorded limit (store.Turn.MaxTokens), or for a
	// turn recorded without one, the length of a rated answer cut off at
	// it (judge.Budget, judge.PreferFit).
	LengthFit = "fit"
)

// The scopes of --teacher-fit-retry.
const (
	// FitScopeQuoted: an answer is written again for its length only
	// where the feedback quotes words and the answer says them past the
	// budget, so that a student that learned its length would be cut off
	// before them (a sign-off), and a quoted retry's pick moves only
	// then; where the answer says them within it ("TL;DR:" first) or
	// nothing is quoted, the cut hides nothing the feedback asked for.
	FitScopeQuoted = "quoted"
	// FitScopeAny: every answer that does not end within the budget.
	FitScopeAny = "any"
)

// DefaultSelectLength: see BENCHMARKS.md, "Teacher answers that fit the
// rated answer's token budget".
const DefaultSelectLength = LengthOff

// DefaultFitShare is --teacher-fit-share's default: the whole budget.
const DefaultFitShare = 1.0

// The weights that read the hint gain (--teacher-select-gain-by).
const (
	// GainByTeacher: the OPD teacher's (--teacher policy or base).
	GainByTeacher = "teacher"
	// GainByBase: the frozen base weights, whatever the OPD teacher is.
	// The student's progress does not cancel the gain: read by the
	// policy, an answer that signs off stops gaining from a feedback that
	// asks for the sign-off once the student signs off by itself, and the
	// disliked turns after that are dropped (BENCHMARKS.md, "Refusing
	// teacher answers made of the feedback's words").
	GainByBase = "base"
	// GainByPolicy: the current policy, whatever the OPD teacher is.
	GainByPolicy = "policy"
)

// DefaultGainBy: see BENCHMARKS.md, "The hint gain read by the base
// weights" (signoff: no collapse to 0 and no stall after the peak in any
// seed measured, where the policy's reading dropped most disliked turns;
// concise unchanged).
const DefaultGainBy = GainByBase

// The selectors of --teacher-select.
const (
	// SelectJudge: the judge reads "does this answer do what the feedback
	// asks?" from one prefill per answer (judge.Selector).
	SelectJudge = "judge"
	// SelectGain: the teacher's own model scores how much more likely the
	// feedback makes the answer (judge.HintGain), two scoring passes per
	// answer and no judge prompt.
	SelectGain = "gain"
)

// DefaultSelectThreshold is the score the picked answer must exceed: a
// hint gain above 0 means the feedback made the answer more likely; a
// judge score above 0 that the judge finds Yes more likely than No (the
// SmolLM2 judge scores nearly every answer below 0: give it a lower one).
const DefaultSelectThreshold = 0.0

// DefaultTeacherSelect: see BENCHMARKS.md, "Best-of-N teacher answers".
const DefaultTeacherSelect = SelectGain

// DefaultSelectRelevance: see BENCHMARKS.md, "Teacher answers that answer
// the question".
const DefaultSelectRelevance = false

// DefaultQuotedRetry: see BENCHMARKS.md, "The issue's protocol on serve's
// defaults" and "`--teacher-quoted-retry 4` by default". On the 1.5B
// coder's signoff persona the lone teacher answer ended with the quoted
// sign-off in 43 of 102 trained turns; written again as best of 4 where it
// did not, signoff rose from 8 and 8 to 13 and 13 of 20 at v8; tldr's runs
// (its teacher always said "TL;DR:") and turns whose feedback quotes
// nothing were unchanged and cost nothing more.
const DefaultQuotedRetry = 4

// DefaultFitRetry: see BENCHMARKS.md, "Teacher answers that fit, written
// again", "The fit retry on signoff over six seeds" and "The fit retry
// where the cut hides the quoted words". On the 1.5B coder's signoff
// persona at the 8 × 16, a third of the lone teacher answers ran
// past the 64-token budget its users' answers were cut at, and the
// student learned their length (the sign-off lost to the cut). With 4,
// signoff ended ahead at v8 in all six seeds (89 against 60 of 120; 383
// against 311 over rounds 4–8); under DefaultFitScope it acts on no
// other persona's turns.
const DefaultFitRetry = 4

// DefaultFitScope: see BENCHMARKS.md, "The fit retry where the cut hides
// the quoted words". With FitScopeAny, tldr (whose "TL;DR:" comes first)
// and french (which quotes nothing) fell at seeds 1 and 2 (tldr 14 and 15
// against 19 and 19 at v8, french 14 against 16) while signoff, whose
// sign-off the cut takes, gained at all six seeds; FitScopeQuoted
// writes again only the turns of that kind.
const DefaultFitScope = FitScopeQuoted

func (s *TeacherSampleSettings) addFlags(fs *pflag.FlagSet) {
	fs.IntVar(&s.Samples, "teacher-samples", 1, "answers the teacher writes per turn for --opd-response teacher|both; with more than 1 they are sampled at --teacher-temperature and --teacher-select keeps the one that best does what the feedback asks (none above --teacher-select-threshold: no teacher sample); whatever the number, an answer that repeats the feedback or has fewer than "+strconv.Itoa(judge.MinOwnWords)+" words of its own beside the feedback's is never kept")
	fs.Float64Var(&s.Temperature, "teacher-temperature", engine.DefaultTemperature, "sampling temperature of the teacher's answers when --teacher-samples > 1")
	fs.Float64Var(&s.Threshold, "teacher-select-threshold", DefaultSelectThreshold, "score the best of --teacher-samples answers must exceed: the judge's log p(Yes) − log p(No) that it does what the feedback asks, or its mean per-token log-probability gain from the feedback (--teacher-select gain)")
	fs.StringVar(&s.GainBy, "teacher-select-gain-by", DefaultGainBy, "the weights that read the hint gain of --teacher-select gain: teacher (those of --teacher), base (the frozen base weights) or policy (the current policy)")
	fs.StringVar(&s.Length, "teacher-select-length", DefaultSelectLength, "with --teacher-samples > 1: fit keeps the best-scored answer that passes the selector and ends within the rated turn's token budget (its request's max_tokens or the server's --max-tokens; for a turn recorded without it, the length of a rated answer cut off at its limit), so the user could have read it whole, and none when no such answer passes; off: the score alone")
	fs.Float64Var(&s.FitShare, "teacher-fit-share", DefaultFitShare, "with --teacher-select-length fit: the share of the rated turn's token budget a teacher answer must end within (0.75 of a 64-token limit: 48 tokens), a margin so that a student that learns the teacher's length, and spreads around it, is not cut off at the limit; 1: the whole budget")
	fs.StringVar(&s.Loops, "teacher-loops", DefaultTeacherLoops, "what becomes of a teacher answer that repeats itself (the same words three times in a row, as the gate and bench learn's users read a loop), lone or among best-of-N: train (as written), refuse (as an answer that copies the feedback is: a lone one's turn is dropped, or written again by --teacher-quoted-retry) or cut (before its loop begins, and trained as an answer the teacher did not finish; what is left is refused when it has too few words of its own); the teacher loops where it runs on to --teacher-max-tokens (BENCHMARKS.md, \"Teacher answers that loop, refused or cut\")")
	markGiven(fs, "teacher-loops", &s.loopsByDefault)
	fs.BoolVar(&s.refuseLoops, "teacher-refuse-loops", false, "--teacher-loops refuse")
	_ = fs.MarkDeprecated("teacher-refuse-loops", "use --teacher-loops refuse")
	fs.BoolVar(&s.Relevance, "teacher-select-relevance", DefaultSelectRelevance, "with --teacher-select gain: keep only answers the question makes more likely (read by the same weights, the last user message's text left out) and rank them by the lesser of that relevance and the gain, so a reply to the feedback itself (\"Sure, I'll answer in French.\") is never trained")
	fs.Float64Var(&s.Opening, "teacher-select-opening", 0, "with --teacher-select-relevance: also never keep an answer whose first "+strconv.Itoa(judge.OpeningTokens)+" tokens the question makes less than this many nats a token likelier (read as the relevance is), such as \"Bien sûr, je serai heureux de vous aider avec les oiseaux.\", a reply to the feedback that names the topic at its end; 0: off")
	fs.BoolVar(&s.Quoted, "teacher-select-quoted", false, "with --teacher-samples > 1: when the feedback puts words in double quotes ('Your last words must be \"Hope this helps!\"') and some answers above the threshold say them as written, choose among those only (before --teacher-select-length); words a negation before them in their sentence rules out (\"never say \\\"As an AI\\\"\") are not wanted")
	fs.IntVar(&s.QuotedRetry, "teacher-quoted-retry", DefaultQuotedRetry, "with --teacher-samples 1 and --teacher-select gain: when the feedback puts words in double quotes and the teacher's one answer does not say them as written (or is refused), write this many answers at --teacher-temperature and choose among them as --teacher-samples N --teacher-select-quoted would, so only such turns pay for best of N (0: off; by default off where it cannot apply: --teacher-samples > 1, --teacher-select judge, --opd-response student)")
	markGiven(fs, "teacher-quoted-retry", &s.retryByDefault)
	fs.IntVar(&s.FitRetry, "teacher-fit-retry", DefaultFitRetry, "with --teacher-samples 1 and --teacher-select gain: when the teacher's one answer does not end within the rated turn's token budget (its request's max_tokens, × --teacher-fit-share), so that the student would learn a length its users' answers are cut at (with --teacher-fit-retry-scope quoted, the default: only where the feedback quotes words and the answer says them past the budget), write this many answers at --teacher-temperature, at most the budget long, and keep the best-gaining one that ends within it and says the feedback's quoted words where it quotes any; none: the one answer is kept; a turn --teacher-quoted-retry writes again keeps, of the answers it would keep, one that ends within the budget when one does and its own pick runs past it (quoted scope: says the words past it) (0: off; by default off where it cannot apply: --teacher-samples > 1, --teacher-select judge, --opd-response student)")
	markGiven(fs, "teacher-fit-retry", &s.fitRetryByDefault)
	fs.StringVar(&s.FitScope, "teacher-fit-retry-scope", DefaultFitScope, "the answers --teacher-fit-retry writes again: quoted (only where the feedback puts words in double quotes and the answer says them past the budget, where a user's answer cut at its limit loses them; a quoted retry's pick moves to one that fits only then) or any (every answer that does not end within the budget)")
	fs.StringVar(&s.Select, "teacher-select", DefaultTeacherSelect, "how one of --teacher-samples answers is chosen: gain (how much more likely the feedback makes it, per token, read by --teacher-select-gain-by's weights) or judge (the judge, from one prefill per answer: does it do what the feedback asks?)")
}

// What becomes of a teacher answer that loops (--teacher-loops).
const (
	// LoopsTrain: it trains as written.
	LoopsTrain = "train"
	// LoopsRefuse: it is refused (refusedLoops), as judge.Refuse's
	// answers are.
	LoopsRefuse = "refuse"
	// LoopsCut: it is cut before its loop begins (rl.LoopStart) and
	// trains as an answer the teacher did not finish.
	LoopsCut = "cut"
)

// DefaultTeacherLoops: see BENCHMARKS.md, "Teacher answers that loop,
// refused or cut". On the 1.5B coder's french persona at the issue's
// 8 × 16, LoopsRefuse gave 126 against 113 of 160 at v8 over eight
// seeds, and LoopsCut 53 against 47 of 80 over four (ahead at v8 in one
// of them); the other personas' teacher answers barely loop. LoopsRefuse
// is not the default: on the random tiny model every teacher answer
// loops, and with it the default loop would train none of the 👎 turns
// there (no version from 24 rated turns, BenchmarkFirstVersion).
const DefaultTeacherLoops = LoopsTrain

// loops is --teacher-loops, --teacher-refuse-loops read as refuse (both
// are set only through the flags, where --teacher-loops has its default).
func (s TeacherSampleSettings) loops() string {
	switch {
	case s.refuseLoops && s.loopsByDefault:
		return LoopsRefuse
	case s.Loops == "":
		return DefaultTeacherLoops
	}
	return s.Loops
}

// dropInapplicableRetry turns --teacher-quoted-retry's and
// --teacher-fit-retry's defaults off where they cannot apply: every turn
// already best of N, answers chosen by the judge, or no teacher answers at
// all (--opd-response student). A value given stays, and check rejects it
// there.
func (s *TeacherSampleSettings) dropInapplicableRetry(opdResponse string) {
	inapplicable := s.Samples > 1 || s.Select == SelectJudge || opdResponse != "teacher" && opdResponse != "both"
	if s.retryByDefault && inapplicable {
		s.QuotedRetry = 0
	}
	if s.fitRetryByDefault && inapplicable {
		s.FitRetry = 0
	}
}

// checkRetry validates a lone answer's retry, flag given n (byDefault:
// the flag's default, which dropInapplicableRetry turned off where it
// cannot apply); bestOfN says what best of N on every turn does instead.
func checkRetry(flag string, n int, byDefault bool, s TeacherSampleSettings, opdResponse, bestOfN string) error {
	switch {
	case n < 0 || n == 1:
		return fmt.Errorf("%s %d: want 0 (off) or the number of answers to write, ≥ 2", flag, n)
	case n <= 1 || byDefault:
		return nil
	case s.Samples > 1:
		return fmt.Errorf("%s %d: with --teacher-samples %d every turn is best of N already (%s)", flag, n, s.Samples, bestOfN)
	case s.Select == SelectJudge:
		return fmt.Errorf("%s chooses by the hint gain: it needs --teacher-select gain, not judge", flag)
	case opdResponse != "teacher" && opdResponse != "both":
		return fmt.Errorf("%s %d: the teacher writes answers only with --opd-response teacher or both, not %q", flag, n, opdResponse)
	}
	return nil
}

// check validates the flags against --opd-response; --teacher-quoted-retry's
// default is not an error where it cannot apply (dropInapplicableRetry turns
// it off there).
func (s TeacherSampleSettings) check(opdResponse string) error {
	switch {
	case s.Samples < 0:
		return fmt.Errorf("--teacher-samples %d: want ≥ 1", s.Samples)
	case s.Samples > 1 && opdResponse != "teacher" && opdResponse != "both":
		return fmt.Errorf("--teacher-samples %d: the teacher writes answers only with --opd-response teacher or both, not %q", s.Samples, opdResponse)
	case s.Temperature < 0:
		return fmt.Errorf("--teacher-temperature %g: want ≥ 0", s.Temperature)
	case s.Select != "" && s.Select != SelectJudge && s.Select != SelectGain:
		return fmt.Errorf("--teacher-select %q: want judge or gain", s.Select)
	case s.Relevance && s.Select == SelectJudge:
		return fmt.Errorf("--teacher-select-relevance reads answers as the hint gain does: it needs --teacher-select gain, not judge")
	case s.Opening < 0:
		return fmt.Errorf("--teacher-select-opening %g: want ≥ 0 (0: off)", s.Opening)
	case s.Opening > 0 && !s.Relevance:
		return fmt.Errorf("--teacher-select-opening %g reads the answer's opening as --teacher-select-relevance reads the answer: it needs --teacher-select-relevance", s.Opening)
	}
	if err := checkRetry("--teacher-quoted-retry", s.QuotedRetry, s.retryByDefault, s, opdResponse, "--teacher-select-quoted prefers the answers that say the quoted words"); err != nil {
		return err
	}
	if err := checkRetry("--teacher-fit-retry", s.FitRetry, s.fitRetryByDefault, s, opdResponse, "--teacher-select-length fit keeps the answers that fit"); err != nil {
		return err
	}
	switch s.Loops {
	case "", LoopsTrain, LoopsRefuse, LoopsCut:
	default:
		return fmt.Errorf("--teacher-loops %q: want train, refuse or cut", s.Loops)
	}
	if s.refuseLoops && !s.loopsByDefault && s.Loops != LoopsRefuse {
		return fmt.Errorf("--teacher-refuse-loops with --teacher-loops %s: choose one (--teacher-loops refuse)", s.Loops)
	}
	switch s.Length {
	case "", LengthOff, LengthFit:
	default:
		return fmt.Errorf("--teacher-select-length %q: want off or fit", s.Length)
	}
	switch s.FitScope {
	case "", FitScopeQuoted, FitScopeAny:
	default:
		return fmt.Errorf("--teacher-fit-retry-scope %q: want quoted or any", s.FitScope)
	}
	if s.FitShare < 0 || s.FitShare > 1 || (s.FitShare > 0 && s.FitShare < 0.1) {
		return fmt.Errorf("--teacher-fit-share %g: want a share of the budget in [0.1, 1]", s.FitShare)
	}
	switch s.GainBy {
	case "", GainByTeacher, GainByBase, GainByPolicy:
		return nil
	}
	return fmt.Errorf("--teacher-select-gain-by %q: want teacher, base or policy", s.GainBy)
}

// selector builds the judge that picks among answers: the served engine's
// base weights, or --judge-url read through its chat logprobs.
func (s TeacherSampleSettings) selector(backend judge.Backend, timeout time.Duration) (*judge.Selector, error) {
	if s.Samples <= 1 || backend == nil || s.Select != SelectJudge {
		return nil, nil
	}
	sel := &judge.Selector{Threshold: s.Threshold, CallTimeout: timeout}
	switch b := backend.(type) {
	case judge.NextTokenScorer:
		sel.Scorer = b
	case *judge.HTTPBackend:
		sel.Scorer = judge.HTTPScorer{HTTPBackend: b}
	default:
		return nil, fmt.Errorf("--teacher-samples %d: the judge %T cannot score answers", s.Samples, backend)
	}
	return sel, nil
}

// errNoPick: none of the teacher's answers passed the selector. The error
// returned wraps it and names the selector that decided (noPick).
var errNoPick = errors.New("none of the teacher's answers does what the feedback asks")

// The deciders noPick names: the selectors of best-of-N, or the refusal
// alone of a lone answer (nothing to select among).
const (
	byGain  = "by the hint gain"
	byJudge = "by the judge"
	byLone  = "one answer"
)

// noPick is errNoPick naming what decided, the hint gain (--teacher-select
// gain), the judge (--teacher-select judge) or, for a lone answer, the
// refusal (byLone), and after a colon (a drop reason's kind is what comes
// before it) how many of the n answers were refused unscored and why
// (judge.Refuse).
func noPick(by string, n int, refused []judge.Refusal) error {
	var whys []string
	for _, why := range []judge.Refusal{judge.RefuseCopies, judge.RefuseEchoes, refusedLoops} {
		if k := countRefused(refused, why); k > 0 {
			whys = append(whys, fmt.Sprintf("%d %s", k, why))
		}
	}
	answers := "answers"
	if n == 1 {
		answers = "answer"
	}
	if len(whys) == 0 {
		return fmt.Errorf("%w (%s): no answer of %d scored above the threshold", errNoPick, by, n)
	}
	return fmt.Errorf("%w (%s): of %d %s %s", errNoPick, by, n, answers, strings.Join(whys, ", "))
}

// refusedLoops is the refusal of a teacher answer that repeats itself
// (rl.Loops), with --teacher-loops refuse.
const refusedLoops judge.Refusal = "loops"

// refuse applies judge.Refuse to the decoded texts of the teacher's
// answers (in the policy's tokens, a trailing stop token aside), and with
// --teacher-loops refuse refuses the answers that loop: one rule for a
// lone answer and for best-of-N. countRefusals counts what it refused,
// once per answer as finally written.
func (r *Runner) refuse(f engine.Format, answers [][]int32, hint string) ([]string, []judge.Refusal) {
	stop := f.StopIDs()
	texts := make([]string, len(answers))
	refused := make([]judge.Refusal, len(answers))
	for i, ids := range answers {
		texts[i] = answerText(f, stop, ids)
		refused[i] = judge.Refuse(texts[i], hint)
		if refused[i] == "" && r.cfg.TeacherLoops == LoopsRefuse && rl.Loops(texts[i]) {
			refused[i] = refusedLoops
		}
	}
	return texts, refused
}

// cutLoop, with --teacher-loops cut, cuts a teacher answer to turn (ids,
// with their logprobs lps) before its loop begins (rl.LoopStart): to the
// longest prefix whose text ends before it. What is left did not end (no
// stop token) and trains as an answer cut at --teacher-max-tokens does;
// too little of it is refused as any answer is (judge.Refuse).
func (r *Runner) cutLoop(f engine.Format, turn string, ids []int32, lps []float32) ([]int32, []float32) {
	if r.cfg.TeacherLoops != LoopsCut {
		return ids, lps
	}
	text := answerText(f, f.StopIDs(), ids)
	at := rl.LoopStart(text)
	if at < 0 {
		return ids, lps
	}
	n := 0
	for k := 1; k <= len(ids); k++ {
		// A prefix that ends inside a character decodes to U+FFFD, not to
		// a prefix of the text: the next one may complete it.
		if d := f.Decode(ids[:k]); len(d) <= at && strings.HasPrefix(text, d) {
			n = k
		} else if len(d) > at+utf8.UTFMax {
			break
		}
	}
	r.count(func(c *Counters) { c.TeacherLoopsCut++ })
	r.log.Info("the teacher's answer loops: cut before its loop begins", "turn", turn, "tokens", len(ids), "kept", n, "answer", text)
	return ids[:n:n], lps[:min(n, len(lps)):min(n, len(lps))]
}

// answerText is the text of the answer ids, its stop token left out.
func answerText(f engine.Format, stop, ids []int32) string {
	if n := len(ids); n > 0 && slices.Contains(stop, ids[n-1]) {
		ids = ids[:n-1]
	}
	return f.Decode(ids)
}

// countRefusals counts refused (teacher_answers_refused_total).
func (r *Runner) countRefusals(refused []judge.Refusal) {
	r.count(func(c *Counters) {
		c.RefusedCopies += countRefused(refused, judge.RefuseCopies)
		c.RefusedEchoes += countRefused(refused, judge.RefuseEchoes)
		c.RefusedLoops += countRefused(refused, refusedLoops)
	})
}

func countRefused(refused []judge.Refusal, why judge.Refusal) int {
	k := 0
	for _, r := range refused {
		if r == why {
			k++
		}
	}
	return k
}

// TeacherSeed is the sampling seed of the i-th of --teacher-samples
// answers to turn t under hint: a hash of the turn's prompt, its rated
// answer, the feedback and i, so the same rated turn gets the same N
// answers from a seeded engine (the native one, vLLM, or a clawrl behind
// --teacher-url), and a benchmark run repeated on one binary and seed
// repeats its teacher's answers rather than drawing new ones. The rated
// answer is in the hash so that a question asked again, and answered
// otherwise by a later policy, draws afresh.
func TeacherSeed(t store.Turn, hint string, i int) int64 {
	h := fnv.New64a()
	if t.PromptText != "" {
		h.Write([]byte(t.PromptText))
	} else {
		for _, m := range t.Messages {
			h.Write([]byte(m.Role))
			h.Write([]byte{0})
			h.Write([]byte(m.Content))
			h.Write([]byte{0})
		}
	}
	h.Write([]byte{1})
	h.Write([]byte(t.ResponseText))
	h.Write([]byte{1})
	h.Write([]byte(hint))
	h.Write([]byte{1, byte(i), byte(i >> 8)})
	return int64(h.Sum64() >> 1)
}

// writeTeacher is teacher's answer to t's prompt with hint in context:
// judge.Teacher.Write once, or best of Config.TeacherSamples.
func (r *Runner) writeTeacher(ctx context.Context, teacher *judge.Teacher, t store.Turn, hint string) ([]int32, []float32, int64, error) {
	n := r.cfg.TeacherSamples
	gain := r.cfg.TeacherSelect == SelectGain
	quoted := r.cfg.TeacherSelectQuoted
	fit := r.cfg.TeacherSelectLength == LengthFit
	f := teacher.Engine.Format()
	// lone: the lone answer, written again by --teacher-fit-retry; it is
	// trained when none of the answers drawn fits and passes. requoted:
	// the turn is written again by --teacher-quoted-retry.
	var lone *written
	requoted := false
	if n <= 1 || (r.selector == nil && !gain) {
		// A lone answer is not selected, but the refusal holds for it as
		// for best-of-N: "Hope this helps!" for a critique that asks for
		// that sign-off is refused whatever the number of answers.
		ids, lps, v, err := teacher.Write(ctx, t.Messages, t.Tools, t.PromptText, hint, r.cfg.TeacherTokens)
		if err != nil {
			return nil, nil, 0, err
		}
		ids, lps = r.cutLoop(f, t.ID, ids, lps)
		texts, refused := r.refuse(f, [][]int32{ids}, hint)
		if m := r.cfg.TeacherQuotedRetry; m > 1 && gain {
			if wanted := judge.WantedQuotes(hint); len(wanted) > 0 && (refused[0] != "" || !judge.SaysAll(texts[0], wanted)) {
				// The lone answer does not do what the feedback asks in
				// so many words: the turn is written again as best of m,
				// the answers that say them preferred (--teacher-quoted-retry).
				r.count(func(c *Counters) { c.TeacherQuotedRetried++ })
				r.log.Info("the teacher's answer does not say the feedback's quoted words: written again as best of N",
					"turn", t.ID, "words", wanted, "answer", texts[0], "refused", refused[0], "n", m)
				n, quoted, requoted = m, true, true
			}
		}
		if n <= 1 {
			r.countRefusals(refused)
			if refused[0] != "" {
				err := noPick(byLone, 1, refused)
				r.log.Info("the teacher's answer is refused", "turn", t.ID, "answer", texts[0], "reason", err)
				return nil, nil, 0, err
			}
			if m := r.cfg.TeacherFitRetry; m > 1 && gain {
				l := written{ids: ids}.length(f.StopIDs())
				if _, _, budget := r.fitBudget(t); budget >= 1 && !l.Fits(budget) && r.fitRetries(f, ids, hint, budget) {
					// The lone answer runs past the budget the users'
					// answers are cut at: a student that learns it
					// learns their length (--teacher-fit-retry).
					r.count(func(c *Counters) { c.TeacherFitRetried++ })
					r.log.Info("the teacher's answer does not end within the rated turn's token budget: written again as best of N",
						"turn", t.ID, "tokens", l.Tokens, "ended", l.Ended, "budget", budget, "n", m)
					n, quoted, fit = m, true, true
					lone = &written{ids: ids, lps: lps, v: v}
				}
			}
			if n <= 1 {
				return ids, lps, v, nil
			}
		}
	}
	// keepLone trains the lone answer when none drawn for
	// --teacher-fit-retry fits and passes.
	keepLone := func(why string) ([]int32, []float32, int64, error) {
		r.count(func(c *Counters) { c.TeacherFitKept++ })
		r.log.Info("the teacher's answer is kept: "+why, "turn", t.ID, "answers", n)
		return lone.ids, lone.lps, lone.v, nil
	}
	sampled := *teacher
	write := func(i, limit int) (written, error) {
		w := sampled // --hint-placement mixed: the placements in turn
		w.Placement = teacher.Placement.Writing(i)
		seed := TeacherSeed(t, hint, i)
		w.Sampling = engine.Sampling{Temperature: r.cfg.TeacherTemperature, Seed: &seed}
		ids, lps, v, err := w.Write(ctx, t.Messages, t.Tools, t.PromptText, hint, limit)
		if err == nil {
			ids, lps = r.cutLoop(f, t.ID, ids, lps)
		}
		return written{ids, lps, v, w.Placement, i}, err
	}
	// writeAll writes the draws draws at once, so that the engine decodes
	// them in one batch (a seeded draw is the same in any batch), and
	// returns them in the order asked with their errors.
	writeAll := func(draws []int, limit int) ([]written, []error) {
		out, errs := make([]written, len(draws)), make([]error, len(draws))
		var wg sync.WaitGroup
		for k, i := range draws {
			wg.Go(func() { out[k], errs[k] = write(i, limit) })
		}
		wg.Wait()
		return out, errs
	}
	limit, capped := r.fitLimit(t, gain, fit)
	var ws []written
	var errs []string
	draws := make([]int, n)
	for i := range draws {
		draws[i] = i
	}
	all0, errs0 := writeAll(draws, limit)
	for k, w := range all0 {
		if err := errs0[k]; err != nil {
			if ctx.Err() != nil {
				return nil, nil, 0, ctx.Err()
			}
			errs = append(errs, err.Error())
			continue
		}
		ws = append(ws, w)
	}
	if len(ws) == 0 && lone != nil {
		return keepLone("the teacher wrote none of the answers drawn: " + strings.Join(errs, "; "))
	}
	if len(ws) == 0 {
		return nil, nil, 0, fmt.Errorf("teacher wrote none of %d answers: %s", n, strings.Join(errs, "; "))
	}
	// The selectors refuse these unscored (judge.PickBest); the reasons
	// are counted and told here.
	all := make([][]int32, len(ws))
	lengths := make([]judge.Length, len(ws))
	for i, w := range ws {
		all[i], lengths[i] = w.ids, w.length(f.StopIDs())
	}
	texts, refused := r.refuse(f, all, hint)
	var wanted []string
	if quoted {
		wanted = judge.WantedQuotes(hint)
	}
	var best int
	var scores []float64
	var err error
	threshold := r.cfg.TeacherSelectThreshold
	if gain {
		known := map[int]float64{} // answers scored whole, kept when the cut ones are completed
		score := func(i int) (float64, error) {
			if sc, ok := known[i]; ok {
				return sc, nil
			}
			if capped && !lengths[i].Fits(limit) {
				return math.Inf(-1), nil // cut at the budget: never picked, not read
			}
			sc, err := r.gainScore(ctx, teacher, t, hint, ws[i], texts[i])
			if err == nil {
				known[i] = sc
			}
			return sc, err
		}
		best, scores, err = judge.PickBest(ctx, refused, threshold, score)
		if err == nil && capped && lone == nil && completeQuoted(lengths, limit, scores, threshold, texts, wanted) {
			// A fitting answer passes and none of those says the quoted
			// words: whether one cut at the budget says them later
			// decides the pick (judge.PreferQuoted), so the cut ones are
			// written whole (the same seeded draws) and read.
			var cut, redraw []int
			for j := range ws {
				if !lengths[j].Fits(limit) {
					cut, redraw = append(cut, j), append(redraw, ws[j].i)
				}
			}
			whole, werrs := writeAll(redraw, r.cfg.TeacherTokens)
			for k, j := range cut {
				if err := werrs[k]; err != nil {
					if ctx.Err() != nil {
						return nil, nil, 0, ctx.Err()
					}
					// A failed write, as when the teacher writes
					// none (buildSample keeps the RL term or drops).
					return nil, nil, 0, fmt.Errorf("teacher: write an answer cut at the budget whole: %w", err)
				}
				w := whole[k]
				ws[j], all[j], lengths[j] = w, w.ids, w.length(f.StopIDs())
			}
			r.log.Info("teacher answers cut at the budget written whole: a fitting answer passes, none of them says the quoted words",
				"turn", t.ID, "words", wanted, "budget", limit, "completed", cut)
			capped = false
			texts, refused = r.refuse(f, all, hint)
			best, scores, err = judge.PickBest(ctx, refused, threshold, score)
		}
	} else {
		threshold = r.selector.Threshold
		best, scores, err = r.selector.Pick(ctx, t.Messages, hint, texts, refused)
	}
	r.countRefusals(refused)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, 0, ctx.Err()
		}
		if lone != nil {
			return keepLone("the answers drawn could not be read: " + err.Error())
		}
		r.count(func(c *Counters) { c.TeacherNoPick++ })
		return nil, nil, 0, fmt.Errorf("select the teacher's answer: %w", err)
	}
	by := byJudge // what decided, for a drop reason
	if gain {
		by = byGain
	}
	if best == judge.NoPick && lone != nil {
		return keepLone("no answer drawn that ends within the budget passed the selector")
	}
	if best == judge.NoPick {
		r.count(func(c *Counters) { c.TeacherNoPick++ })
		if capped {
			// An answer cut at the budget was not read, so whether it
			// would have passed the selector is not known; it could not
			// have been picked whatever it scored, so the budget is
			// named as the reason (and counted as fit's "none").
			if slices.ContainsFunc(lengths, func(l judge.Length) bool { return !l.Fits(limit) }) {
				return nil, nil, 0, r.noneFits(t, lengths, scores, by)
			}
		}
		err := noPick(by, len(texts), refused)
		r.log.Info("no teacher answer passed the selector", "turn", t.ID, "answers", len(texts), "scores", scores, "threshold", threshold, "reason", err)
		return nil, nil, 0, err // one drop reason kind per selector (the scores are logged)
	}
	if len(wanted) > 0 {
		pick, masked := judge.PreferQuoted(best, scores, threshold, texts, wanted)
		if pick != best {
			r.count(func(c *Counters) { c.TeacherQuotedOther++ })
			r.log.Info("a teacher answer that says the feedback's quoted words is preferred", "turn", t.ID, "words", wanted,
				"scores", scores, "best", best, "pick", pick, "answer", texts[pick])
		}
		best, scores = pick, masked
	}
	if lone != nil {
		// Written again for its length: a drawn answer replaces the lone
		// one only when it fits and says the quoted words, as the lone
		// answer did (--teacher-quoted-retry writes the turn again
		// first when it did not, and then this retry does not).
		_, _, budget := r.fitBudget(t)
		best = judge.PreferFit(best, scores, threshold, lengths, budget)
		switch {
		case best == judge.NoPick:
			return keepLone("no answer drawn that passed the selector ends within the budget")
		case len(wanted) > 0 && !judge.SaysAll(texts[best], wanted):
			return keepLone("no answer drawn that ends within the budget says the feedback's quoted words")
		}
	} else if fit {
		if best, err = r.preferFit(t, lengths, best, scores, threshold, by); err != nil {
			r.count(func(c *Counters) { c.TeacherNoPick++ })
			return nil, nil, 0, err
		}
	} else if requoted && r.cfg.TeacherFitRetry > 1 {
		// Written again for the quoted words, with --teacher-fit-retry
		// on: of the answers the quoted retry would keep (those that say
		// the words when any does), one that ends within the budget is
		// preferred, so that this retry does not train the length the
		// fit retry keeps from the lone answers; when none does, the
		// quoted retry's pick stands, as without the fit retry.
		_, _, budget := r.fitBudget(t)
		// Under the quoted scope a pick that says the words within the
		// budget stays: its length cuts nothing the feedback asked for.
		if r.fitRetries(f, ws[best].ids, hint, budget) {
			if pick := judge.PreferFit(best, scores, threshold, lengths, budget); pick != best && pick != judge.NoPick {
				r.count(func(c *Counters) { c.TeacherFitQuoted++ })
				r.log.Info("a quoted retry's answer that ends within the rated turn's token budget is preferred", "turn", t.ID,
					"budget", budget, "best_tokens", lengths[best].Tokens, "best_ended", lengths[best].Ended, "pick_tokens", lengths[pick].Tokens)
				best = pick
			}
		}
	}
	w := ws[best]
	r.count(func(c *Counters) {
		c.TeacherPicked++
		switch {
		case teacher.Placement != judge.HintMixed:
		case w.at == judge.HintInSystem:
			c.TeacherPickedSystem++
		default:
			c.TeacherPickedUser++
		}
	})
	if teacher.Placement == judge.HintMixed {
		r.log.Info("teacher answer selected", "turn", t.ID, "pick", best, "placement", w.at, "scores", scores, "answer", texts[best])
	} else {
		r.log.Debug("teacher answer selected", "turn", t.ID, "pick", best, "scores", scores, "refused", refused)
	}
	return w.ids, w.lps, w.v, nil
}

// fitRetries reports whether --teacher-fit-retry acts on a teacher answer
// ids that does not end within budget: always under FitScopeAny; under
// FitScopeQuoted only when the feedback hint quotes words and ids' first
// budget tokens do not say them all (a user's answer cut there would lose
// them).
func (r *Runner) fitRetries(f engine.Format, ids []int32, hint string, budget int) bool {
	if r.cfg.TeacherFitScope == FitScopeAny {
		return true
	}
	wanted := judge.WantedQuotes(hint)
	if len(wanted) == 0 {
		return false
	}
	return !judge.SaysAll(answerText(f, f.StopIDs(), ids[:min(len(ids), budget)]), wanted)
}

// preferFit is judge.PreferFit's pick among answers of lengths for the
// rated turn t,
// within the budget judge.Budget reads from t (its recorded MaxTokens, else
// the length of a cut answer), counted (teacher_length_fit_total) and
// logged when it is not best; an error wrapping errNoPick, naming the
// selector by, when no answer fits.
func (r *Runner) preferFit(t store.Turn, lengths []judge.Length, best int, scores []float64, threshold float64, by string) (int, error) {
	rated, _, budget := r.fitBudget(t)
	pick := judge.PreferFit(best, scores, threshold, lengths, budget)
	switch {
	case pick == best:
		return best, nil
	case pick == judge.NoPick:
		return judge.NoPick, r.noneFits(t, lengths, scores, by)
	}
	r.count(func(c *Counters) { c.TeacherFitOther++ })
	r.log.Info("a teacher answer that fits the rated answer's token budget is preferred", "turn", t.ID, "rated_tokens", rated.Tokens,
		"budget", budget, "lengths", lengths, "scores", scores, "best", best, "pick", pick)
	return pick, nil
}

// noneFits counts (teacher_length_fit_total), logs and returns the drop
// reason of a turn t none of whose teacher answers, of lengths, ended
// within its budget above the threshold.
func (r *Runner) noneFits(t store.Turn, lengths []judge.Length, scores []float64, by string) error {
	rated, full, budget := r.fitBudget(t)
	r.count(func(c *Counters) { c.TeacherFitNone++ })
	within := fmt.Sprintf("the rated answer's %d tokens", full)
	if rated.Ended || full != rated.Tokens { // a recorded limit the rated answer did not reach
		within = fmt.Sprintf("the turn's limit of %d tokens", full)
	}
	if budget != full {
		within = fmt.Sprintf("%d tokens (%g of %s)", budget, r.cfg.TeacherFitShare, within)
	}
	err := fmt.Errorf("%w (%s): no answer of %d above the threshold ended within %s", errNoPick, by, len(lengths), within)
	r.log.Info("no teacher answer fits the rated answer's token budget", "turn", t.ID, "rated_tokens", rated.Tokens, "budget", budget,
		"lengths", lengths, "scores", scores, "reason", err)
	return err
}

// fitBudget is the rated turn t's length, its token budget (judge.Budget)
// and the share of it a teacher answer must end within under
// --teacher-select-length fit (judge.Share).
func (r *Runner) fitBudget(t store.Turn) (rated judge.Length, full, budget int) {
	rated = judge.Length{Tokens: len(t.ResponseIDs), Ended: t.FinishReason != engine.FinishLength}
	full = judge.Budget(rated, t.MaxTokens)
	return rated, full, judge.Share(full, r.cfg.TeacherFitShare)
}

// fitLimit is the token limit of each of best-of-N teacher answers to t,
// and whether it is the fit budget rather than Config.TeacherTokens. Under
// --teacher-select-length fit an answer that does not end within the
// budget is never picked (judge.PreferFit), so writing it past the budget
// is work thrown away: with the hint-gain selector the teacher writes at
// most the budget, and an answer cut there is neither read nor picked (the
// pick is the one the whole answers give: PreferFit takes the best-scored
// fitting answer above the threshold whatever the others scored, and a
// seeded draw writes the same tokens up to any limit). Under
// --teacher-select-quoted a cut answer's later words can still decide:
// one that says the feedback's quoted words past the budget makes
// judge.PreferQuoted drop the fitting ones that do not; completeQuoted
// says when that can happen, and then the cut answers are written whole.
// The judge selector reads the answers together, so under it the limit
// stays TeacherTokens. In a 6 × 8 french run (BENCHMARKS.md, "French at
// six seeds", seed 6) 32 of the teacher's 132 answers ran past the
// 64-token budget, and they took 58 % of its writing time.
func (r *Runner) fitLimit(t store.Turn, gain, fit bool) (int, bool) {
	limit := r.cfg.TeacherTokens
	if !fit || !gain {
		return limit, false
	}
	if _, _, budget := r.fitBudget(t); budget >= 1 && budget < limit {
		return budget, true
	}
	return limit, false
}

// completeQuoted says whether best-of-N answers written to the fit budget
// limit (those of lengths, scored as by judge.PickBest, cut ones −Inf)
// must be written whole before the pick, under feedback that wants the
// words wanted said: when some of them were cut, and an answer that fits
// passes the threshold but none that fits and passes says the words.
// Otherwise the pick the whole answers would give is known: a fitting
// answer that passes and says the words is in judge.PreferQuoted's set
// whatever the cut ones say, and PreferFit then picks the best of those
// that fit; with no fitting answer above the threshold there is no pick
// either way.
func completeQuoted(lengths []judge.Length, limit int, scores []float64, threshold float64, texts, wanted []string) bool {
	if len(wanted) == 0 {
		return false
	}
	cut, passes := false, false
	for i, l := range lengths {
		if !l.Fits(limit) {
			cut = true
			continue
		}
		if scores[i] > threshold {
			if judge.SaysAll(texts[i], wanted) {
				return false
			}
			passes = true
		}
	}
	return cut && passes
}

// gainScore is the hint-gain selector's score of the teacher's answer w
// (its text, text) to t under hint: judge.HintGain's, or with
// --teacher-select-relevance judge.RelevantRank's (−Inf for an answer, or
// its opening, no likelier after the question than without it). Each
// answer is read with the feedback where its writer saw it
// (--hint-placement mixed writes under two placements).
func (r *Runner) gainScore(ctx context.Context, teacher *judge.Teacher, t store.Turn, hint string, w written, text string) (float64, error) {
	g := judge.HintGain{Teacher: r.gainReader(teacher, w.at)}
	if !r.cfg.TeacherSelectRelevance {
		return g.Score(ctx, t.Messages, t.Tools, t.PromptText, hint, w.ids)
	}
	rd, err := g.ScoreRelevant(ctx, t.Messages, t.Tools, t.PromptText, hint, w.ids)
	if err != nil {
		return 0, err
	}
	rank := judge.RelevantRank(rd, r.cfg.TeacherSelectOpening)
	if math.IsInf(rank, -1) {
		r.count(func(c *Counters) { c.TeacherIrrelevant++ })
		r.log.Info("a teacher answer, or its opening, is no likelier after the question than without it", "turn", t.ID, "answer", text,
			"gain", rd.Gain, "relevance", rd.Relevance, "opening", rd.Opening)
	} else {
		r.log.Debug("a teacher answer's gain and relevance", "turn", t.ID, "answer", text, "gain", rd.Gain, "relevance", rd.Relevance, "opening", rd.Opening)
	}
	return rank, nil
}

// length is w's length, its stop token counted, and whether it ended
// with one of stop.
func (w written) length(stop []int32) judge.Length {
	n := len(w.ids)
	return judge.Length{Tokens: n, Ended: n > 0 && slices.Contains(stop, w.ids[n-1])}
}

// gainReader is teacher reading with the weights of Config.TeacherGainBy
// and the hint placed at at.
func (r *Runner) gainReader(teacher *judge.Teacher, at judge.HintPlacement) *judge.Teacher {
	c := *teacher
	c.Placement = at
	switch r.cfg.TeacherGainBy {
	case GainByBase:
		c.Adapter = engine.AdapterBase
	case GainByPolicy:
		c.Adapter = engine.AdapterCurrent
	}
	return &c
}

// written is one of the teacher's answers: its ids in the policy's
// tokens, the teacher's logprob of each, the version it ran on, the
// placement it was written under.
type written struct {
	ids []int32
	lps []float32
	v   int64
	at  judge.HintPlacement
	i   int // which of the best-of-N draws (TeacherSeed's i)
}

var (
	teacherSelectDesc = desc("teacher_selections_total",
		"Turns whose teacher answer was chosen among --teacher-samples answers since start, by result: picked, or none (no answer passed the selector, --teacher-select; the turn had no teacher sample).", "result")
	teacherFitDesc = desc("teacher_length_fit_total",
		"Best-of-N teacher picks that --teacher-select-length fit changed since start (the best-scored answer did not end within the rated turn's token budget: its max_tokens, or the length of a rated answer cut off at its limit), by result: another answer (one that passed the selector did), or none (the turn had no teacher sample).", "result")
	teacherRefusedDesc = desc("teacher_answers_refused_total",
		"Teacher answers never trained whatever their score since start (judge.Refuse, a lone answer or one of --teacher-samples), by reason: copies the feedback, or only the feedback's words (fewer than "+strconv.Itoa(judge.MinOwnWords)+" words of its own).", "reason")
	teacherLoopsCutDesc = desc("teacher_loops_cut_total",
		"Teacher answers that repeated themselves cut before the loop began (--teacher-loops cut) since start.")
	teacherMixedDesc = desc("teacher_mixed_picks_total",
		"Best-of-N teacher answers picked under --hint-placement mixed since start, by the placement the answer was written under: user or system.", "placement")
	teacherQuotedDesc = desc("teacher_quoted_preferred_total",
		"Best-of-N teacher picks that --teacher-select-quoted moved to an answer saying the feedback's quoted words since start (the best-scored answer did not say them).")
	teacherQuotedRetryDesc = desc("teacher_quoted_retries_total",
		"Turns --teacher-quoted-retry wrote again as best of N since start: the feedback put words in double quotes and the teacher's one answer did not say them (or was refused).")
	teacherFitRetryDesc = desc("teacher_fit_retries_total",
		"Turns --teacher-fit-retry wrote again as best of N since start (the teacher's one answer did not end within the rated turn's token budget; under --teacher-fit-retry-scope quoted, it said the feedback's quoted words only past it), by result: another answer (one drawn fitted and passed the selector), or kept (none did: the one answer was trained).", "result")
	teacherFitQuotedDesc = desc("teacher_fit_quoted_total",
		"Turns --teacher-quoted-retry wrote again whose pick --teacher-fit-retry moved to an answer that ends within the rated turn's token budget since start (the answer it would have kept did not, and under --teacher-fit-retry-scope quoted said the words past it; another it would keep, one that says the quoted words when any does, did).")
	teacherIrrelevantDesc = desc("teacher_answers_irrelevant_total",
		"Best-of-N teacher answers --teacher-select-relevance kept from the pick since start: no likelier after the rated turn's question than with the feedback alone (or, with --teacher-select-opening, their first tokens not likely enough).")
)

// collectSelections adds the refusals (when the teacher writes answers)
// and the selections (with more than one answer per turn) to
// teacherCollector.
func (r *Runner) collectSelections(ch chan<- prometheus.Metric) {
	if !r.cfg.TeacherWrites && !r.cfg.TeacherAlsoWrites {
		return
	}
	k := r.Counters()
	ch <- prometheus.MustNewConstMetric(teacherRefusedDesc, prometheus.CounterValue, float64(k.RefusedCopies), string(judge.RefuseCopies))
	ch <- prometheus.MustNewConstMetric(teacherRefusedDesc, prometheus.CounterValue, float64(k.RefusedEchoes), string(judge.RefuseEchoes))
	ch <- prometheus.MustNewConstMetric(teacherRefusedDesc, prometheus.CounterValue, float64(k.RefusedLoops), string(refusedLoops))
	ch <- prometheus.MustNewConstMetric(teacherLoopsCutDesc, prometheus.CounterValue, float64(k.TeacherLoopsCut))
	if r.cfg.TeacherQuotedRetry > 1 {
		ch <- prometheus.MustNewConstMetric(teacherQuotedRetryDesc, prometheus.CounterValue, float64(k.TeacherQuotedRetried))
	}
	if r.cfg.TeacherFitRetry > 1 {
		ch <- prometheus.MustNewConstMetric(teacherFitRetryDesc, prometheus.CounterValue, float64(k.TeacherFitRetried-k.TeacherFitKept), "another answer")
		ch <- prometheus.MustNewConstMetric(teacherFitRetryDesc, prometheus.CounterValue, float64(k.TeacherFitKept), "kept")
		if r.cfg.TeacherQuotedRetry > 1 {
			ch <- prometheus.MustNewConstMetric(teacherFitQuotedDesc, prometheus.CounterValue, float64(k.TeacherFitQuoted))
		}
	}
	if r.cfg.TeacherSamples <= 1 {
		return
	}
	ch <- prometheus.MustNewConstMetric(teacherSelectDesc, prometheus.CounterValue, float64(k.TeacherPicked), "picked")
	ch <- prometheus.MustNewConstMetric(teacherSelectDesc, prometheus.CounterValue, float64(k.TeacherNoPick), "none")
	if r.teacher != nil && r.teacher.Placement == judge.HintMixed {
		ch <- prometheus.MustNewConstMetric(teacherMixedDesc, prometheus.CounterValue, float64(k.TeacherPickedUser), string(judge.HintInUser))
		ch <- prometheus.MustNewConstMetric(teacherMixedDesc, prometheus.CounterValue, float64(k.TeacherPickedSystem), string(judge.HintInSystem))
	}
	if r.cfg.TeacherSelectRelevance && r.cfg.TeacherSelect == SelectGain {
		ch <- prometheus.MustNewConstMetric(teacherIrrelevantDesc, prometheus.CounterValue, float64(k.TeacherIrrelevant))
	}
	if r.cfg.TeacherSelectQuoted {
		ch <- prometheus.MustNewConstMetric(teacherQuotedDesc, prometheus.CounterValue, float64(k.TeacherQuotedOther))
	}
	if r.cfg.TeacherSelectLength == LengthFit {
		ch <- prometheus.MustNewConstMetric(teacherFitDesc, prometheus.CounterValue, float64(k.TeacherFitOther), "another answer")
		ch <- prometheus.MustNewConstMetric(teacherFitDesc, prometheus.CounterValue, float64(k.TeacherFitNone), "none")
	}
}
