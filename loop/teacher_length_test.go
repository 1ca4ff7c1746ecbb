package loop

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/scripted"
	"github.com/clawrl/clawrl/judge"
	"github.com/clawrl/clawrl/rl"
	"github.com/clawrl/clawrl/rl/rltest"
	"github.com/clawrl/clawrl/store"
)

// cannedAnswer is one answer the cannedTeacher writes: its text, whether
// it ends (with the stop token) or is cut at the teacher's token limit,
// and the hint gain per token its scoring passes give it.
type cannedAnswer struct {
	text  string
	ended bool
	gain  float32
}

// cannedTeacher is the scripted engine whose teacher writes (the requests
// of TeacherTokens at a temperature) are the canned answers in turn — a
// seed seen before draws the same answer again, as an engine's seeded
// sampling does — and whose scoring passes give each of them its gain:
// log p = gain − 1 per token with the hint in the prompt, −1 without.
type cannedTeacher struct {
	*scripted.Engine
	hint    string
	answers []cannedAnswer
	mu      sync.Mutex
	next    int
	bySeed  map[int64]int // the answer each seed drew
	limits  []int         // the token limit of each write
}

// cannedTokens is the canned fixture's TeacherTokens: room for every
// canned answer.
const cannedTokens = 100

// Generate writes the next canned answer for a teacher write (a request
// at a temperature, of at most cannedTokens), cut at the request's limit
// as an engine cuts it.
func (c *cannedTeacher) Generate(ctx context.Context, req engine.GenerateRequest, emit func(engine.Token) error) (engine.Generation, error) {
	if req.Sampling.Temperature == 0 || req.MaxTokens > cannedTokens {
		return c.Engine.Generate(ctx, req, emit)
	}
	c.mu.Lock()
	k, seen := 0, false
	if req.Sampling.Seed != nil {
		k, seen = c.bySeed[*req.Sampling.Seed]
	}
	if !seen {
		k = c.next % len(c.answers)
		c.next++
		if req.Sampling.Seed != nil {
			if c.bySeed == nil {
				c.bySeed = map[int64]int{}
			}
			c.bySeed[*req.Sampling.Seed] = k
		}
	}
	a := c.answers[k]
	c.limits = append(c.limits, req.MaxTokens)
	c.mu.Unlock()
	f := c.Format()
	ids := f.Encode(a.text)
	g := engine.Generation{FinishReason: engine.FinishLength}
	if a.ended {
		ids, g.FinishReason = append(ids, f.StopIDs()[0]), engine.FinishStop
	}
	if len(ids) > req.MaxTokens {
		ids, g.FinishReason = ids[:req.MaxTokens], engine.FinishLength
	}
	for _, id := range ids {
		g.Tokens = append(g.Tokens, engine.Token{ID: id, Logprob: -1})
	}
	return g, nil
}

func (c *cannedTeacher) Score(ctx context.Context, req engine.ScoreRequest) (engine.Scored, error) {
	f := c.Format()
	text := strings.TrimSuffix(f.Decode(req.CompletionIDs), "<|im_end|>")
	for _, a := range c.answers {
		if !strings.HasPrefix(a.text, text) { // the answer, or its opening cut at a limit
			continue
		}
		lp := float32(-1)
		if strings.Contains(f.Decode(req.PromptIDs), c.hint) {
			lp += a.gain
		}
		lps := make([]float32, len(req.CompletionIDs))
		for i := range lps {
			lps[i] = lp
		}
		return engine.Scored{Logprobs: lps}, nil
	}
	return c.Engine.Score(ctx, req)
}

// TestTeacherSelectLength: with --teacher-select-length fit the loop keeps
// the best-gaining answer among those above the threshold that end within
// the rated turn's budget, and none (the turn stores no sample) when none
// does; with off, the best gain. The budget is the turn's recorded limit
// (its stop token counted: an answer that ends on the limit's last token
// fits), whether the rated answer ended or not; for a turn recorded
// without it, the length of a rated answer cut off at it, and a rated
// answer that ended (a user who asks for more) leaves the pick alone.
func TestTeacherSelectLength(t *testing.T) {
	// A cut answer: no stop token, so it does not fit the budget of a
	// cut rated answer. The answers have 3 or more words of their own
	// beside the feedback's (judge.Refuse).
	long := "one two three four five six seven eight"
	cutReason := "none of the teacher's answers does what the feedback asks (by the hint gain): no answer of 4 above the threshold ended within the rated answer's 256 tokens"
	for _, c := range []struct {
		name, cue, feedback string
		maxTokens           int     // the rated turn's recorded limit (0: generated under 256, not recorded)
		share               float64 // --teacher-fit-share (0: the whole budget)
		answers             []cannedAnswer
		off, fit            int    // the answer kept (judge.NoPick: none)
		other, none         int    // the counters after one turn
		reason              string // the drop reason when fit keeps none
		// capped: the budget is under the teacher's cannedTokens, so under
		// fit the teacher writes at most the budget (Runner.fitLimit): the
		// same pick, but an answer cut there is never the best, so no
		// "other" is counted.
		capped bool
	}{
		{
			name: "cut rated answer", cue: "[[long]]", feedback: "Too long, please be brief.",
			answers: []cannedAnswer{
				{text: long, gain: 0.8}, // cut: it does not fit
				{text: "A short plain answer.", ended: true, gain: 0.5},
				{text: "Another short reply here.", ended: true, gain: 0.3},
				{text: "Brief answer number three.", ended: true, gain: 0.1},
			},
			off: 0, fit: 1, other: 1,
		},
		{
			name: "none fits", cue: "[[long]]", feedback: "Too long, please be brief.",
			answers: []cannedAnswer{
				{text: long, gain: 0.8},
				{text: long + " nine", gain: 0.5},
				{text: "A short plain answer.", ended: true, gain: -0.2}, // fits, below the threshold
				{text: "Another short reply here.", ended: true, gain: 0},
			},
			off: 0, fit: judge.NoPick, none: 1, reason: cutReason,
		},
		{
			name: "ended rated answer", cue: "[[say:Hi there, my good friend.]]", feedback: "Too short, explain more.",
			answers: []cannedAnswer{
				{text: "Hi to you, pal.", ended: true, gain: 0.8},                                 // shorter
				{text: "Hello there, friend, and here is more about it.", ended: true, gain: 0.6}, // longer, within half
				{text: "Hello there, friend, and here is much more of it.", ended: true, gain: 0.2},
				{text: "Hello there, friend, with a longer explanation.", ended: true, gain: 0.5},
			},
			off: 0, fit: 0,
		},
		{
			name: "the best fits", cue: "[[long]]", feedback: "Too long, please be brief.",
			answers: []cannedAnswer{
				{text: "A short plain answer.", ended: true, gain: 0.8},
				{text: long, gain: 0.7},
				{text: "Another short reply here.", ended: true, gain: 0.6},
				{text: long + "x", gain: 0.5},
			},
			off: 0, fit: 0,
		},
		{
			name: "cut rated answer, its limit recorded", cue: "[[long]]", feedback: "Too long, please be brief.", maxTokens: 256,
			answers: []cannedAnswer{
				{text: long, gain: 0.8},
				{text: "A short plain answer.", ended: true, gain: 0.5},
				{text: "Another short reply here.", ended: true, gain: 0.3},
				{text: "Brief answer number three.", ended: true, gain: 0.1},
			},
			off: 0, fit: 1, other: 1,
		},
		{
			// "Hi there." and its stop token: 10 of 19 tokens. "Hi to you,
			// my pal." and its stop token: 19, the limit's last.
			name: "ended rated answer, its limit recorded", cue: "[[say:Hi there.]]", feedback: "Too short, explain more.", maxTokens: 19,
			answers: []cannedAnswer{
				{text: "Hello there, friend, and here is more about it.", ended: true, gain: 0.8}, // 48 tokens
				{text: "Hi to you, my pal.", ended: true, gain: 0.6},                              // 19: fits
				{text: "Hello there, friend, and here is much more of it.", ended: true, gain: 0.2},
				{text: "Hi there, a good pal.", ended: true, gain: 0.7}, // 22
			},
			off: 0, fit: 1, other: 1,
			capped: true,
		},
		{
			name: "none fits the recorded limit", cue: "[[say:Hi there.]]", feedback: "Too short, explain more.", maxTokens: 12,
			answers: []cannedAnswer{
				{text: "Hello there, friend, and here is more about it.", ended: true, gain: 0.8},
				{text: "Hi to you, my pal.", ended: true, gain: 0.6},
				{text: "Hi there, a good pal.", ended: true, gain: 0.7},
				{text: "Hey, hi, yo.", gain: 0.5}, // cut at the teacher's limit: it did not end
			},
			off: 0, fit: judge.NoPick, none: 1,
			reason: "none of the teacher's answers does what the feedback asks (by the hint gain): no answer of 4 above the threshold ended within the turn's limit of 12 tokens",
			capped: true,
		},
		{
			// A share of 0.5 of 40: 20 tokens. The best (48 tokens) and
			// "Hi there, a good pal." (22, fits the whole 40) do not.
			name: "a share of the recorded limit", cue: "[[say:Hi there.]]", feedback: "Too short, explain more.", maxTokens: 40, share: 0.5,
			answers: []cannedAnswer{
				{text: "Hello there, friend, and here is more about it.", ended: true, gain: 0.8},
				{text: "Hi to you, my pal.", ended: true, gain: 0.6}, // 19
				{text: "Hello there, friend, and here is much more of it.", ended: true, gain: 0.2},
				{text: "Hi there, a good pal.", ended: true, gain: 0.7}, // 22
			},
			off: 0, fit: 1, other: 1,
			capped: true,
		},
		{
			name: "none fits the share", cue: "[[say:Hi there.]]", feedback: "Too short, explain more.", maxTokens: 40, share: 0.25,
			answers: []cannedAnswer{
				{text: "Hello there, friend, and here is more about it.", ended: true, gain: 0.8},
				{text: "Hi to you, my pal.", ended: true, gain: 0.6},
				{text: "Hi there, a good pal.", ended: true, gain: 0.7},
				{text: "Hello there, friend, and here is much more of it.", ended: true, gain: 0.2},
			},
			off: 0, fit: judge.NoPick, none: 1,
			reason: "none of the teacher's answers does what the feedback asks (by the hint gain): no answer of 4 above the threshold ended within 10 tokens (0.25 of the turn's limit of 40 tokens)",
			capped: true,
		},
	} {
		for _, rule := range []string{LengthOff, LengthFit} {
			ctx := context.Background()
			f := cannedFixture(t, c.feedback, c.answers, func(cfg *Config) {
				cfg.TeacherSelectLength, cfg.TeacherFitShare = rule, c.share
			})
			r := f.runner
			msgs := []chat.Message{{Role: chat.RoleUser, Content: "tell me " + c.cue}}
			var tr store.Turn
			if c.maxTokens > 0 {
				tr = f.serveUnder(t, "s", msgs, c.maxTokens, c.maxTokens)
			} else {
				tr = f.serve(t, "s", msgs)
			}
			if err := f.store.AddFeedback(ctx, tr.ID, store.Feedback{Rating: -1, Text: c.feedback, CreatedAt: time.Now()}); err != nil {
				t.Fatal(err)
			}
			if _, err := r.judgeRound(ctx); err != nil {
				t.Fatal(err)
			}
			ss, err := f.store.ListSamples(ctx, store.TurnFilter{SessionID: tr.SessionID})
			if err != nil {
				t.Fatal(err)
			}
			k := r.Counters()
			other, none, kept := 0, 0, c.off
			limit := cannedTokens
			if rule == LengthFit {
				other, none, kept = c.other, c.none, c.fit
				if c.capped {
					other, limit = 0, judge.Share(c.maxTokens, c.share)
				}
			}
			teacher := r.teacher.Engine.(*cannedTeacher)
			if len(teacher.limits) != len(c.answers) || slices.ContainsFunc(teacher.limits, func(n int) bool { return n != limit }) {
				t.Errorf("%s, %s: the teacher wrote under limits %v, want %d of %d", c.name, rule, teacher.limits, len(c.answers), limit)
			}
			if k.TeacherFitOther != other || k.TeacherFitNone != none || k.TeacherPicked+k.TeacherNoPick != 1 {
				t.Errorf("%s, %s: counters fit other %d, none %d, picked %d, no pick %d; want %d, %d", c.name, rule, k.TeacherFitOther, k.TeacherFitNone, k.TeacherPicked, k.TeacherNoPick, other, none)
			}
			if kept == judge.NoPick {
				if len(ss) != 0 || k.TeacherNoPick != 1 {
					t.Errorf("%s, %s: samples %+v, no pick %d; want none, 1", c.name, rule, ss, k.TeacherNoPick)
				}
				if got, _ := f.turn(t, tr.ID); got.State != store.Dropped || got.DropReason != c.reason {
					t.Errorf("%s, %s: turn %s (%q), want dropped for its budget", c.name, rule, got.State, got.DropReason)
				}
				continue
			}
			if len(ss) != 1 || len(ss[0].TeacherResponseIDs) == 0 {
				t.Fatalf("%s, %s: samples %+v, want one teacher-written", c.name, rule, ss)
			}
			want := c.answers[kept]
			if got := f.engine.Format().Decode(ss[0].TeacherResponseIDs); !strings.HasPrefix(got, want.text) || len(got) > len(want.text)+len("<|im_end|>") {
				t.Errorf("%s, %s: kept %q, want %q", c.name, rule, got, want.text)
			}
		}
	}
	if err := (TeacherSampleSettings{Length: "shortest"}).check(""); err == nil {
		t.Error(`--teacher-select-length shortest: no error`)
	}
	for _, share := range []float64{-0.5, 0.05, 1.5} {
		if err := (TeacherSampleSettings{Length: LengthFit, FitShare: share}).check(""); err == nil {
			t.Errorf("--teacher-fit-share %g: no error", share)
		}
	}
	if DefaultSelectLength != LengthOff && DefaultSelectLength != LengthFit {
		t.Errorf("DefaultSelectLength %q", DefaultSelectLength)
	}
}

// cannedFixture is a loop whose teacher writes answers in turn (best of
// len(answers), picked by the hint gain above 0) and whose judge runs on
// the scripted engine; set adjusts the config.
func cannedFixture(t *testing.T, feedback string, answers []cannedAnswer, set func(*Config)) *fixture {
	t.Helper()
	dir := t.TempDir()
	f := &fixture{dir: dir, store: openStore(t, dir), engine: scripted.New(scripted.Options{}), trainer: &rltest.Trainer{}}
	t.Cleanup(func() { f.store.Close() })
	teacher := &cannedTeacher{Engine: f.engine, hint: feedback, answers: answers}
	j := judge.New(&judge.EngineBackend{Engine: f.engine}, judge.Config{Verdict: judge.VerdictVotes,
		EvalVotes: 1, Retries: judge.NoRetries, MaxTokens: 512, HintTokens: 256}, quiet())
	cfg := Config{Method: rl.MethodCombine, SessionTimeout: -1, TeacherWrites: true,
		TeacherTokens: cannedTokens, TeacherSamples: len(answers), TeacherTemperature: 0.7, TeacherSelect: SelectGain,
		Train: rl.SchedulerConfig{BatchSize: 100, VersionsDir: filepath.Join(dir, "versions")}}
	set(&cfg)
	r, err := New(Options{Store: f.store, Judge: j, Teacher: &judge.Teacher{Engine: teacher}, Trainer: f.trainer,
		Publisher: f.engine, Log: quiet(), Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	f.runner = r
	return f
}
