package bench

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/judge"
)

// Feedback modes: how a simulated user reacts to an answer.
const (
	// FeedbackText: 👍, or 👎 with the persona's written critique
	// (POST /v1/feedback).
	FeedbackText = "text"
	// FeedbackRating: 👍/👎 alone.
	FeedbackRating = "rating"
	// FeedbackImplicit: no rating; only the natural next message in the same
	// session (a correction, or thanks).
	FeedbackImplicit = "implicit"
)

// ArmControl is the no-training control's method (`clawrl serve --method off`).
const ArmControl = "off"

// Arm is one way of running clawrl: its --method and any further serve
// flags, under a name for the reports.
type Arm struct {
	Name   string   `json:"name"`
	Method string   `json:"method"`
	Args   []string `json:"args,omitempty"`
}

// ParseArm reads an arm: a method (off, rl, opd, combine), or
// name:method:--flag=value:... for a method with other serve flags, e.g.
// "opd-lr1e-3:opd:--lr=1e-3".
func ParseArm(spec string) (Arm, error) {
	parts := strings.Split(spec, ":")
	a := Arm{Name: parts[0], Method: parts[0]}
	if len(parts) > 1 {
		a.Method = parts[1]
		for _, f := range parts[2:] {
			// A value may hold colons (--teacher-url=http://h:p/v1): a
			// piece that is no flag continues the one before it.
			if n := len(a.Args); n > 0 && !strings.HasPrefix(f, "--") {
				a.Args[n-1] += ":" + f
				continue
			}
			a.Args = append(a.Args, f)
		}
	}
	switch a.Method {
	case "off", "rl", "opd", "combine":
	default:
		return Arm{}, fmt.Errorf("arm %q: method %q: want off, rl, opd or combine", spec, a.Method)
	}
	if a.Name == "" {
		return Arm{}, fmt.Errorf("arm %q: empty name", spec)
	}
	for _, f := range a.Args {
		if !strings.HasPrefix(f, "--") {
			return Arm{}, fmt.Errorf("arm %q: %q is not a --flag=value", spec, f)
		}
	}
	return a, nil
}

// Config is one experiment.
type Config struct {
	Arms     []Arm      // training methods; one with method off is the control
	Personas []*Persona // one server per arm × persona × seed
	Seeds    []int64
	// Versions is how many training rounds each learning arm runs; each
	// round sends PerVersion rated interactions, waits for the next policy
	// version and evaluates it.
	Versions   int
	PerVersion int
	// EvalPrompts is how many of each persona's held-out prompts are asked
	// per evaluation; Retention how many retention facts (0: none).
	EvalPrompts, Retention int
	Feedback               string
	MaxTokens              int     // answers to persona prompts
	RetentionTokens        int     // answers to retention questions
	Temperature            float64 // training turns (evaluation is greedy)
	Concurrency            int     // requests in flight at once
	// VersionTimeout bounds the wait for a new version after a round; a
	// learning arm that produces none in time is recorded as stalled.
	VersionTimeout time.Duration
	// TeacherEachRound measures the loop's teacher (the served policy with
	// the persona's written feedback in context) after every learning
	// round too, not only the base model's on the control: the teacher is
	// the current policy, so its ceiling can rise as the policy learns.
	TeacherEachRound bool
	// HintPlacement is where the teacher ceiling puts the written feedback;
	// it must be what the servers' loop uses (serve --hint-placement).
	HintPlacement judge.HintPlacement
	// Neutral is how often a simulated user moves on with a neutral
	// follow-up instead of reacting (implicit feedback only).
	Neutral NeutralShare
	// Specific: an unhappy user says what the answer missed where the
	// persona knows the miss (Persona.Complaint: "Your TL;DR: line was too
	// long…"), instead of repeating its one critique.
	Specific bool
}

// Launch starts a fresh clawrl for one run (arm, persona, seed) and returns
// its client and a function that stops it.
type Launch func(ctx context.Context, arm Arm, p *Persona, seed int64) (*Client, func() error, error)

// Eval is one evaluation of one served policy version.
type Eval struct {
	Round         int   `json:"round"`          // 0 = before training
	PolicyVersion int64 `json:"policy_version"` // served when evaluated
	// Rejected: the round's step made a version that the loop's retention
	// gate refused, so the evaluation is of the version still served.
	Rejected bool `json:"rejected,omitempty"`
	// Held: the loop held the round's step (its users liked enough of
	// their answers, --hold-liked), so the evaluation is of the version
	// still served.
	Held bool `json:"held,omitempty"`
	// RolledBack: the round's version was trained from the version before
	// the one served in the round, whose users liked its answers far less
	// often (--rollback-drop).
	RolledBack bool `json:"rolled_back,omitempty"`
	// Short: the loop had too few samples for a step once the round's
	// turns and its top-ups were all judged (OPD builds none from a liked
	// answer, so its users' 👍s leave it short), so the evaluation is of
	// the version still served; the samples it has wait for the next
	// round's.
	Short bool `json:"short,omitempty"`
	// Unfocused: the gate rejected the round's step with --distill-focus,
	// and the round's version is the step without it (or was rejected too).
	Unfocused      bool    `json:"unfocused,omitempty"`
	Satisfied      int     `json:"satisfied"`
	Asked          int     `json:"asked"`
	RetentionRight int     `json:"retention_right"`
	RetentionAsked int     `json:"retention_asked"`
	MeanWords      float64 `json:"mean_words"`
	// TrainSatisfied/TrainRated count the round's rated training turns that
	// led to this version (0/0 for round 0).
	TrainSatisfied int `json:"train_satisfied"`
	// TrainNeutral counts those the user answered with a neutral
	// follow-up (implicit feedback, Config.Neutral).
	TrainNeutral int `json:"train_neutral,omitempty"`
	// TrainVerdicts are the loop's judgments made during the round (from
	// its /metrics counters: from before the round's first turn to the
	// version's evaluation), to set beside what the users meant
	// (TrainSatisfied, TrainNeutral). A session's last turn, which no
	// message follows (the answer to a follow-up), expires unjudged.
	TrainVerdicts Verdicts `json:"train_verdicts"`
	// HintSatisfied/HintAsked are the teacher's ceiling, measured on the
	// control before training: the held-out prompts asked with the
	// persona's written feedback appended to the user turn exactly as the
	// loop's OPD teacher sees it (judge.HintHeader). Distillation from that
	// teacher can hardly do better than the teacher itself.
	HintSatisfied int `json:"hint_satisfied,omitempty"`
	HintAsked     int `json:"hint_asked,omitempty"`
	// TeacherSatisfied/TeacherAsked are the same measurement on this
	// round's served policy (Config.TeacherEachRound; learning arms,
	// rounds ≥ 1): the loop's teacher as it is now.
	TeacherSatisfied int      `json:"teacher_satisfied,omitempty"`
	TeacherAsked     int      `json:"teacher_asked,omitempty"`
	TrainRated       int      `json:"train_rated"`
	Seconds          float64  `json:"seconds"`           // since the run started
	WaitSeconds      float64  `json:"wait_seconds"`      // last rated turn → version served
	Answers          []string `json:"answers,omitempty"` // first answers, for reading
	// TrainAnswers are the round's first rated answers (sampled at the
	// training temperature: what the user saw), for reading.
	TrainAnswers []string `json:"train_answers,omitempty"`
	// HeldOut is every held-out answer with whether it ended, so that a
	// later check can re-score the round (Answers keeps only the first).
	HeldOut []Shown `json:"held_out,omitempty"`
}

// Shown is an answer as the user saw it: its text and whether the model
// ended it (false: cut off at max_tokens).
type Shown struct {
	Text     string `json:"text"`
	Finished bool   `json:"finished"`
}

// Run is one server's history: one arm, persona and seed.
type Run struct {
	Arm     string  `json:"arm"`
	Method  string  `json:"method"`
	Persona string  `json:"persona"`
	Seed    int64   `json:"seed"`
	Evals   []Eval  `json:"evals"`
	Stalled string  `json:"stalled,omitempty"` // why training stopped early
	Seconds float64 `json:"seconds"`
	Err     string  `json:"error,omitempty"`
}

// Experiment runs every arm × persona × seed, one server at a time, and
// returns the runs in order. A run that fails is recorded with its error.
// When ctx ends (Ctrl-C, SIGTERM) it returns ctx's error with the runs so
// far, the one in hand included with the rounds it evaluated.
func Experiment(ctx context.Context, cfg Config, launch Launch, log *slog.Logger) ([]Run, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	var runs []Run
	for _, seed := range cfg.Seeds {
		for _, p := range cfg.Personas {
			for _, arm := range cfg.Arms {
				r := Run{Arm: arm.Name, Method: arm.Method, Persona: p.Name, Seed: seed}
				start := time.Now()
				err := runOne(ctx, cfg, launch, arm, &r, p, log.With("arm", arm.Name, "persona", p.Name, "seed", seed))
				r.Seconds = time.Since(start).Seconds()
				if err != nil {
					if ctx.Err() != nil {
						if len(r.Evals) > 0 {
							r.Err = "interrupted: " + ctx.Err().Error()
							runs = append(runs, r)
						}
						return runs, ctx.Err()
					}
					r.Err = err.Error()
					log.Warn("run failed", "arm", arm.Name, "persona", p.Name, "seed", seed, "err", err)
				}
				runs = append(runs, r)
			}
		}
	}
	return runs, nil
}

func (c Config) check() error {
	switch {
	case len(c.Arms) == 0 || len(c.Personas) == 0 || len(c.Seeds) == 0:
		return fmt.Errorf("bench: need at least one arm, persona and seed")
	case c.Versions < 1 || c.PerVersion < 1:
		return fmt.Errorf("bench: versions %d, per version %d: want ≥ 1", c.Versions, c.PerVersion)
	case c.MaxTokens < 1 || c.Concurrency < 1:
		return fmt.Errorf("bench: max tokens %d, concurrency %d: want ≥ 1", c.MaxTokens, c.Concurrency)
	}
	switch c.Feedback {
	case FeedbackText, FeedbackRating, FeedbackImplicit:
	default:
		return fmt.Errorf("bench: feedback %q: want %s, %s or %s", c.Feedback, FeedbackText, FeedbackRating, FeedbackImplicit)
	}
	for _, p := range c.Personas {
		if c.EvalPrompts > len(p.Eval) {
			return fmt.Errorf("bench: %d eval prompts, persona %s has %d", c.EvalPrompts, p.Name, len(p.Eval))
		}
	}
	if s := c.Neutral; s.Satisfied < 0 || s.Satisfied > 1 || s.Unsatisfied < 0 || s.Unsatisfied > 1 {
		return fmt.Errorf("bench: neutral share %v (satisfied) and %v (unsatisfied): want each in [0, 1]", s.Satisfied, s.Unsatisfied)
	}
	if c.Retention > len(Retention) {
		return fmt.Errorf("bench: %d retention facts, the set has %d", c.Retention, len(Retention))
	}
	return nil
}

func runOne(ctx context.Context, cfg Config, launch Launch, arm Arm, r *Run, p *Persona, log *slog.Logger) error {
	cl, stop, err := launch(ctx, arm, p, r.Seed)
	if err != nil {
		return err
	}
	defer func() {
		if err := stop(); err != nil {
			log.Warn("stop server", "err", err)
		}
	}()
	start := time.Now()
	ev, err := evaluate(ctx, cfg, cl, p, 0)
	if err != nil {
		return err
	}
	if r.Method == ArmControl {
		if ev.HintSatisfied, err = ceiling(ctx, cfg, cl, p); err != nil {
			return err
		}
		ev.HintAsked = cfg.EvalPrompts
		log.Info("teacher ceiling", "satisfied", ev.HintSatisfied, "asked", ev.HintAsked)
	}
	ev.Seconds = time.Since(start).Seconds()
	r.Evals = append(r.Evals, ev)
	log.Info("evaluated", "round", 0, "satisfied", ev.Satisfied, "asked", ev.Asked, "retention", ev.RetentionRight, "words", ev.MeanWords)

	// The control trains nothing: its greedy answers cannot change, so one
	// round of interactions and a second evaluation show it flat without
	// paying for every round.
	rounds := cfg.Versions
	if r.Method == ArmControl {
		rounds = 1
	}
	rng := rand.New(rand.NewPCG(uint64(r.Seed), hashString(p.Name)))
	order := rng.Perm(len(p.Train))
	next := 0
	sent := 0 // rated turns sent in this run
	for round := 1; round <= rounds; round++ {
		before, err := cl.Health(ctx)
		if err != nil {
			return err
		}
		m0, err := cl.Metrics(ctx)
		if err != nil {
			return err
		}
		ratedRound, satRound, neutralRound := 0, 0, 0
		var trainAnswers []string
		var rated time.Time
		send := func(n int) error {
			prompts := make([]string, n)
			for i := range prompts {
				if next == len(order) {
					order, next = rng.Perm(len(p.Train)), 0
				}
				prompts[i] = p.Train[order[next]]
				next++
			}
			sat, neutral, shown, err := interact(ctx, cfg, cl, p, r.Seed, round, ratedRound, prompts)
			if ratedRound == 0 {
				trainAnswers = shown
			}
			ratedRound += n
			satRound += sat
			neutralRound += neutral
			sent += n
			rated = time.Now()
			return err
		}
		if err := send(cfg.PerVersion); err != nil {
			return err
		}
		version, kept := before, keptNone
		if r.Method != ArmControl {
			version, kept, err = awaitVersion(ctx, cfg, cl, before, m0, &sent, send)
			if err != nil {
				return err
			}
			if version == before && kept == keptNone {
				r.Stalled = fmt.Sprintf("round %d: no new version within %v of the last of %d rated turns", round, cfg.VersionTimeout, ratedRound)
				log.Warn("stalled", "round", round, "rated", ratedRound, "timeout", cfg.VersionTimeout)
				return nil
			}
		}
		wait := time.Since(rated).Seconds()
		m1, err := cl.Metrics(ctx)
		if err != nil {
			return err
		}
		ev, err := evaluate(ctx, cfg, cl, p, round)
		if err != nil {
			return err
		}
		ev.TrainSatisfied, ev.TrainRated, ev.TrainNeutral, ev.TrainAnswers = satRound, ratedRound, neutralRound, trainAnswers
		ev.TrainVerdicts = m1.Verdicts.Sub(m0.Verdicts)
		if cfg.TeacherEachRound && r.Method != ArmControl {
			if ev.TeacherSatisfied, err = ceiling(ctx, cfg, cl, p); err != nil {
				return err
			}
			ev.TeacherAsked = cfg.EvalPrompts
			log.Info("teacher now (policy + hint)", "round", round, "satisfied", ev.TeacherSatisfied, "asked", ev.TeacherAsked)
		}
		ev.Rejected, ev.Held, ev.Short = kept == keptRejected, kept == keptHeld, kept == keptShort
		ev.RolledBack = m1.RolledBackSteps > m0.RolledBackSteps
		ev.Unfocused = m1.UnfocusedSteps > m0.UnfocusedSteps
		ev.Seconds, ev.WaitSeconds = time.Since(start).Seconds(), wait
		r.Evals = append(r.Evals, ev)
		log.Info("evaluated", "round", round, "version", ev.PolicyVersion, "satisfied", ev.Satisfied, "asked", ev.Asked,
			"retention", ev.RetentionRight, "words", ev.MeanWords, "held", ev.Held, "short", ev.Short, "rolled_back", ev.RolledBack, "unfocused", ev.Unfocused, "train_satisfied", satRound, "rated", ratedRound, "wait_s", wait)
	}
	return nil
}

// topUpBudget bounds how many rated turns past PerVersion a round's user
// sends while the loop lacks samples for a step: that many times
// PerVersion.
const topUpBudget = 3

// pollEvery is how often awaitVersion polls the server (a variable for tests).
var pollEvery = time.Second

// stuckPolls is how many polls with nothing judged or built make
// a round short even though some of its turns were never judged.
const stuckPolls = 60

// Why a round's served version did not move though the loop took its
// step (awaitVersion).
type kept int

const (
	keptNone     kept = iota // it moved, or nothing happened in time
	keptRejected             // the retention gate rejected the step's version
	keptHeld                 // the loop held the step (--hold-liked)
	keptShort                // too few samples for a step, the round's top-ups spent
)

// awaitVersion waits for the served version to move past before, or for a
// step past m0's whose version the retention gate rejected or that the
// loop held (then it reports which and the version still served). A user
// keeps talking when the loop has judged every rated turn yet holds fewer
// samples than a step takes (OPD keeps only turns with a hint, so satisfied
// turns build none; a teacher answer can be refused), counting those the
// teacher is still writing (a slow teacher is not a lack of turns: topped
// up for it, the 8 × 16 protocol rated 64 turns a round, not 16): then it
// sends as many more rated turns as the step lacks, and no more, at most
// topUpBudget × PerVersion in a round. Sending more made the step take
// whichever of the extra samples were ready first, so two runs of one
// binary and seed parted at the first top-up (BENCHMARKS.md, "Runs that
// repeat"); sending the lack, the step takes the same samples each run.
// With that budget spent and every turn judged, the round ends short
// (keptShort): the served version stays and the samples wait for the next
// round's. (Before, it waited VersionTimeout and the run stalled, which
// ended an OPD run at its first round whose users were mostly satisfied.)
// It gives up VersionTimeout after the last rated turn and returns before.
func awaitVersion(ctx context.Context, cfg Config, cl *Client, before int64, m0 LoopMetrics, sent *int, send func(int) error) (int64, kept, error) {
	deadline := time.Now().Add(cfg.VersionTimeout)
	topUps, short, idle, lastBuilt, lastJudged := 0, 0, 0, -1, -1 // topUps: turns sent past PerVersion
	for {
		v, err := cl.Health(ctx)
		if err != nil {
			return 0, keptNone, err
		}
		if v != before {
			return v, keptNone, nil
		}
		if time.Now().After(deadline) {
			return before, keptNone, nil
		}
		m, err := cl.Metrics(ctx)
		if err != nil {
			return 0, keptNone, err
		}
		if m.HeldSteps > m0.HeldSteps {
			return before, keptHeld, nil
		}
		if m.TrainSteps > m0.TrainSteps {
			// A step was recorded; the served version moves once it is
			// published (seconds), or never (rejected by the gate).
			for range 30 {
				if v, err = cl.Health(ctx); err != nil || v != before {
					return v, keptNone, err
				}
				select {
				case <-ctx.Done():
					return 0, keptNone, ctx.Err()
				case <-time.After(pollEvery):
				}
			}
			return before, keptRejected, nil
		}
		// Short, and no sample built, for five polls in a row: an OPD
		// sample is built seconds after its judgment (the teacher's
		// forward pass), longer on a busy machine. A turn can also never
		// be judged: with implicit feedback, one whose session went idle
		// before the user's next message arrived (an answer slower than
		// the servers' --session-idle on a loaded machine) expires. So
		// after a minute with neither judgments nor samples moving, the
		// loop counts as short whatever it has judged.
		if m.SamplesReady+m.SamplesPending < cfg.PerVersion && m.SamplesBuilt == lastBuilt && m.Judged == lastJudged {
			idle++
		} else {
			idle = 0
		}
		if idle > 0 && (m.Judged >= *sent || idle >= stuckPolls) {
			short++
		} else {
			short = 0
		}
		lastBuilt, lastJudged = m.SamplesBuilt, m.Judged
		if lack := cfg.PerVersion - m.SamplesReady - m.SamplesPending; short >= 5 && lack > 0 {
			if topUps >= topUpBudget*cfg.PerVersion {
				return before, keptShort, nil
			}
			lack = min(lack, topUpBudget*cfg.PerVersion-topUps)
			topUps, short = topUps+lack, 0
			if err := send(lack); err != nil {
				return 0, keptNone, err
			}
			deadline = time.Now().Add(cfg.VersionTimeout)
			continue
		}
		select {
		case <-ctx.Done():
			return 0, keptNone, ctx.Err()
		case <-time.After(pollEvery):
		}
	}
}

// interact sends training prompts of round as main turns, the first the
// round's turn number first (0: its first), each in its own session, and
// reacts to each answer as the persona would. It returns how many answers
// satisfied the persona and how many got a neutral next message.
func interact(ctx context.Context, cfg Config, cl *Client, p *Persona, seed int64, round, first int, prompts []string) (int, int, []string, error) {
	var mu sync.Mutex
	satisfied, neutrals := 0, 0
	shown := make([]string, min(2, len(prompts)))
	err := parallel(ctx, len(prompts), cfg.Concurrency, func(i int) error {
		session := turnSession(p.Name, seed, round, first+i)
		s := int64(hashString(session) >> 1)
		q := []Message{{Role: "user", Content: prompts[i]}}
		answer, err := cl.Chat(ctx, ChatRequest{Session: session, Messages: q, MaxTokens: cfg.MaxTokens, Temperature: cfg.Temperature, Seed: &s})
		if err != nil {
			return err
		}
		ok := p.Satisfied(answer)
		mu.Lock()
		if ok {
			satisfied++
		}
		if i < len(shown) {
			shown[i] = answer.Text
		}
		mu.Unlock()
		switch cfg.Feedback {
		case FeedbackText, FeedbackRating:
			rating, text := p.rate(ok, answer.Text, cfg)
			return cl.Feedback(ctx, answer.ID, rating, text)
		default: // implicit: the next message is the only signal
			reply, neutral := p.NextMessage(ok, cfg.Neutral, hashString(session+"/next"))
			if !ok && !neutral {
				reply = p.Correction
				if cfg.Specific {
					_, reply = p.Complaint(answer.Text)
				}
			}
			if neutral {
				mu.Lock()
				neutrals++
				mu.Unlock()
			}
			msgs := append(q, Message{Role: "assistant", Content: answer.Text}, Message{Role: "user", Content: reply})
			_, err := cl.Chat(ctx, ChatRequest{Session: session, Messages: msgs, MaxTokens: 8, Temperature: cfg.Temperature, Seed: &s})
			return err
		}
	})
	return satisfied, neutrals, shown, err
}

// turnSession is the session of the k-th rated turn (from 0) of round
// for persona at seed; its hash seeds the turn's sampling and the user's
// next message. It names the turn by its place in the round, not by the
// send that asked it, so a round topped up in other chunks (the loop
// reached the same lack at another pace) asks the same turns under the
// same seeds. The 0 before k is where the first send's number stood: the
// round's first PerVersion turns keep the names, and the seeds, of the
// runs recorded before.
func turnSession(persona string, seed int64, round, k int) string {
	return fmt.Sprintf("bench-%s-%d-r%d-0-%d", persona, seed, round, k)
}

// evaluate asks the persona's held-out prompts and the retention facts as
// side turns at temperature 0.
func evaluate(ctx context.Context, cfg Config, cl *Client, p *Persona, round int) (Eval, error) {
	version, err := cl.Health(ctx)
	if err != nil {
		return Eval{}, err
	}
	ev := Eval{Round: round, PolicyVersion: version, Asked: cfg.EvalPrompts, RetentionAsked: cfg.Retention}
	answers := make([]Answer, cfg.EvalPrompts+cfg.Retention)
	err = parallel(ctx, len(answers), cfg.Concurrency, func(i int) error {
		q, max := "", cfg.MaxTokens
		if i < cfg.EvalPrompts {
			q = p.Eval[i]
		} else {
			q, max = Retention[i-cfg.EvalPrompts].Question, cfg.RetentionTokens
		}
		a, err := cl.Chat(ctx, ChatRequest{Side: true, Messages: []Message{{Role: "user", Content: q}}, MaxTokens: max})
		answers[i] = a
		return err
	})
	if err != nil {
		return Eval{}, err
	}
	words := 0
	for i, a := range answers {
		if i < cfg.EvalPrompts {
			ev.HeldOut = append(ev.HeldOut, Shown{a.Text, a.Finished})
			words += Words(a.Text)
			if p.Satisfied(a) {
				ev.Satisfied++
			}
		} else if Retention[i-cfg.EvalPrompts].Correct(a.Text) {
			ev.RetentionRight++
		}
	}
	if cfg.EvalPrompts > 0 {
		ev.MeanWords = float64(words) / float64(cfg.EvalPrompts)
	}
	for _, a := range answers[:min(3, cfg.EvalPrompts)] {
		ev.Answers = append(ev.Answers, a.Text)
	}
	return ev, nil
}

// ceiling asks the held-out prompts greedily with the persona's critique
// placed as the loop's teacher gets it (askTeacher), and counts the
// answers that satisfy the persona.
func ceiling(ctx context.Context, cfg Config, cl *Client, p *Persona) (int, error) {
	var mu sync.Mutex
	n := 0
	err := parallel(ctx, cfg.EvalPrompts, cfg.Concurrency, func(i int) error {
		a, err := askTeacher(ctx, cl, p.Eval[i], p.Critique, cfg.HintPlacement, cfg.MaxTokens, nil)
		if err == nil && p.Satisfied(a) {
			mu.Lock()
			n++
			mu.Unlock()
		}
		return err
	})
	return n, err
}

// errAskContinue: a chat API has no way to make the model continue a given
// answer, so the continue placement's ceiling cannot be asked of a server.
var errAskContinue = errors.New("the teacher ceiling cannot be asked under --hint-placement continue (a chat API cannot continue a given answer); give it to the servers as an arm's flag (name:combine:--hint-placement=continue) and ask the ceiling under user")

// askTeacher asks one question as the loop's teacher sees it, with hint
// placed at at, greedily. Under judge.HintAsRevision the teacher revises
// the student's answer: student, when not nil, is that answer (asked
// greedily without the hint, as the caller already did); else it is asked
// here first.
func askTeacher(ctx context.Context, cl *Client, question, hint string, at judge.HintPlacement, maxTokens int, student *Answer) (Answer, error) {
	if at == judge.HintAsContinuation {
		return Answer{}, errAskContinue
	}
	q := []chat.Message{{Role: chat.RoleUser, Content: question}}
	var tm []chat.Message
	var err error
	if at == judge.HintAsRevision {
		if student == nil {
			a, err := cl.Chat(ctx, ChatRequest{Side: true, Messages: []Message{{Role: "user", Content: question}}, MaxTokens: maxTokens})
			if err != nil {
				return Answer{}, fmt.Errorf("the student's answer to %q: %w", question, err)
			}
			student = &a
		}
		tm, err = judge.TeacherPromptAfter(q, chat.Message{Role: chat.RoleAssistant, Content: student.Text}, hint, at)
	} else {
		tm, err = judge.TeacherPromptAt(q, hint, at)
	}
	if err != nil {
		return Answer{}, err
	}
	return cl.Chat(ctx, ChatRequest{Side: true, Messages: apiMessages(tm), MaxTokens: maxTokens})
}

// apiMessages is a teacher's conversation as API messages.
func apiMessages(tm []chat.Message) []Message {
	msgs := make([]Message, len(tm))
	for i, m := range tm {
		msgs[i] = Message{Role: m.Role, Content: m.Content}
	}
	return msgs
}

// parallel runs f(0..n-1) with at most width calls at once and returns the
// first error.
func parallel(ctx context.Context, n, width int, f func(int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, width)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return ctx.Err()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := f(i); err != nil {
				errs <- err
				cancel()
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func hashString(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}
