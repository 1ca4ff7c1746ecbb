package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/clawrl/clawrl/bench"
	"github.com/clawrl/clawrl/judge"
)

func init() { benchSubcommands = append(benchSubcommands, newBenchLearnCmd) }

type benchLearnOptions struct {
	model, addr, out, feedback             string
	arms, personas, serveArgs              []string
	seeds, firstSeed, versions, perVersion int
	evalPrompts, retention                 int
	maxTokens, retentionTokens             int
	concurrency                            int
	temperature                            float64
	versionTimeout                         time.Duration
	quick                                  bool
	target                                 string
	teacherEachRound                       bool
	keepData                               bool
	hintPlacement                          string
	teacherServe                           string
	neutral                                bench.NeutralShare
	specific                               bool
}

func newBenchLearnCmd() *cobra.Command {
	var o benchLearnOptions
	cmd := &cobra.Command{
		Use:   "learn",
		Short: "Does clawrl learn a person's preferences? Simulated users against a no-training control",
		Long: `Simulated users with hidden, checkable preferences (personas) talk to clawrl
through its HTTP API: each training round sends --per-version prompts as main
turns and reacts as a person would (👍, 👎 with written feedback, or only a
next message), waits for the next policy version, then asks held-out prompts
and a retention set of facts as side turns at temperature 0 (never trained).

Every arm × persona × seed gets a fresh 'clawrl serve' (this binary) with its
own data folder; the arm is its --method, and "off" is the no-training
control. Results go to --out as learn.json, learn.md and learn.svg.
Satisfaction and retention are pooled over personas and seeds per round with
Wilson 95 % intervals. A last table sets, per learning arm, what the users
meant (training turns that satisfied them, neutral follow-ups) beside what
the loop's judge read (judgments by score −1/0/+1, hints accepted), from
each server's /metrics.

--quick is the CI scenario: the concise persona, the control against the
combined method at --lr=1e-3, 3 rounds of 8 rated turns, 20 held-out
prompts, answers of at most 64 tokens.

--target is issue 11's protocol (BENCHMARKS.md, "The issue's protocol"):
Qwen2.5-Coder-1.5B-Instruct as the student and, through one --teacher-serve
server of the same model, its own teacher; four personas, two seeds, 8
versions of 16 rated turns, the control against one learning arm. It takes
about three to four hours on two cores and 18 GB of memory at its peak.
--target (or --target=best) runs it with the best setting measured:
combine with best-of-4 teacher answers picked by the hint gain (relevance,
fit, quoted words, an opening that answers), lr 5e-4, the gate's
backtrack, --hold-liked 0.75 and the caught answers pushed down; it gave
the 0.81 [0.74, 0.87] at v8 recorded there (runs from four builds of one
setting; one of them, run again through --target, repeated its recorded
answers exactly). Its learning arm is ` + targetArm + `
and every server also gets ` + strings.Join(targetServeArgs, " ") + `.
--target=defaults runs it on serve's defaults: the arm is
` + targetDefaultsArm + `,
the teacher URL its only flag (BENCHMARKS.md, "The issue's protocol on
serve's defaults").`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			target := cmd.Flags().Changed("target")
			if o.quick && target {
				return fmt.Errorf("--quick and --target are two scenarios: give one")
			}
			if o.quick {
				o.applyQuick(cmd)
			}
			if target {
				if err := o.applyTarget(cmd); err != nil {
					return err
				}
			}
			return runBenchLearn(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	o.addFlags(cmd.Flags())
	return cmd
}

// addFlags defines bench learn's flags on f.
func (o *benchLearnOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.model, "model", "", "model for each server (passed to serve --model; a known name is fetched first; default: serve's default model)")
	f.StringVar(&o.addr, "addr", "", "use this running clawrl instead of starting servers (one arm, persona and seed; the arm names its --method)")
	f.StringVar(&o.out, "out", "bench-learn", "folder for learn.json, learn.md, learn.svg and the servers' logs")
	f.StringVar(&o.feedback, "feedback", bench.FeedbackText, "how users react: text (👍, or 👎 with written feedback), rating (👍/👎 only) or implicit (next message only)")
	// The default grid (control and the loop's default method, four
	// personas, three versions of 8) is what fits in about 30 minutes on
	// two cores; --arms off,rl,opd,combine puts the methods side by side.
	f.StringSliceVar(&o.arms, "arms", []string{"off", "combine"}, "arms to compare: a method (off = the control, rl, opd, combine) or name:method:--flag=value:... for other serve flags")
	f.StringSliceVar(&o.personas, "personas", []string{"concise", "signoff", "tldr", "french"}, "simulated users")
	f.StringArrayVar(&o.serveArgs, "serve-arg", nil, "extra flag for every server, e.g. --serve-arg=--lr=2e-4 (repeatable)")
	f.IntVar(&o.seeds, "seeds", 1, "seeds per arm and persona")
	f.IntVar(&o.firstSeed, "first-seed", 1, "first seed: the runs use seeds --first-seed … --first-seed+--seeds−1 (a replicate of a recorded run takes a seed it did not use)")
	f.IntVar(&o.versions, "versions", 3, "training rounds (one policy version each) per learning arm")
	f.IntVar(&o.perVersion, "per-version", 8, "rated interactions per round (the servers' --batch-size)")
	f.IntVar(&o.evalPrompts, "eval-prompts", 20, "held-out prompts per persona and evaluation (at most 20; 10 asks the first ten, the held-out set of earlier runs)")
	f.IntVar(&o.retention, "retention", 8, "retention facts per evaluation")
	f.IntVar(&o.maxTokens, "max-tokens", 64, "most tokens per answer")
	f.IntVar(&o.retentionTokens, "retention-tokens", 24, "most tokens per retention answer")
	f.IntVar(&o.concurrency, "concurrency", 16, "requests in flight at once (the engine batches them)")
	f.Float64Var(&o.temperature, "temperature", 1, "sampling temperature of training turns")
	f.DurationVar(&o.versionTimeout, "version-timeout", 10*time.Minute, "longest wait for a new version after a round (then the run is recorded as stalled)")
	f.StringVar(&o.hintPlacement, "hint-placement", "user", "where the loop's teacher sees the written feedback (passed to every server as --hint-placement; the teacher ceiling asks the same way, mixed as user): user, user-first, system, system+user, revise or mixed")
	f.StringVar(&o.teacherServe, "teacher-serve", "", "start one 'clawrl serve --method off' of this model (what --model takes: a known name such as qwen2.5-coder-1.5b is fetched first) for the whole run as an external teacher; arms and --serve-arg flags name its URL as "+teacherURLMark+" (e.g. --teacher-url="+teacherURLMark+")")
	f.BoolVar(&o.keepData, "keep-data", false, "keep each server's data folder (its store: turns, judgments, samples, versions) as data-ARM-PERSONA-SEED in --out instead of a temporary folder removed at the end")
	f.BoolVar(&o.teacherEachRound, "teacher-each-round", false, "also measure the loop's teacher (the served policy with the written feedback in context) after every learning round")
	f.BoolVar(&o.specific, "specific-feedback", false, "an unhappy user says what the answer missed where the persona knows it (the tldr user: \"Your TL;DR: line was too long…\" when the summary is there but over 25 words), instead of repeating one critique; with --feedback implicit, its correction likewise")
	f.Float64Var(&o.neutral.Satisfied, "neutral", 0.3, "implicit feedback: share of satisfied users who just move on with a neutral follow-up question instead of thanks")
	f.Float64Var(&o.neutral.Unsatisfied, "neutral-unsatisfied", 0.1, "implicit feedback: share of unsatisfied users who move on with a neutral follow-up instead of a correction")
	f.BoolVar(&o.quick, "quick", false, "the CI scenario (≤ 5 minutes on the demo model): flags given explicitly still win")
	f.StringVar(&o.target, "target", "", "issue 11's protocol on the 1.5B coder (3–4 hours on two cores), with a setting: best (the best setting measured; what --target alone means) or defaults (serve's defaults): flags given explicitly still win, and --serve-arg adds to the setting's own")
	f.Lookup("target").NoOptDefVal = targetBest
}

// unlessGiven returns a scenario's setter: set(name, apply) applies a
// value for the flag name unless it was given on the command line.
func unlessGiven(cmd *cobra.Command) func(name string, apply func()) {
	return func(name string, apply func()) {
		if !cmd.Flags().Changed(name) {
			apply()
		}
	}
}

// applyQuick sets the --quick scenario's values for every flag not given.
func (o *benchLearnOptions) applyQuick(cmd *cobra.Command) {
	set := unlessGiven(cmd)
	set("arms", func() { o.arms = []string{"off", "combine:combine:--lr=1e-3"} })
	set("personas", func() { o.personas = []string{"concise"} })
	set("versions", func() { o.versions = 3 })
	set("per-version", func() { o.perVersion = 8 })
	set("eval-prompts", func() { o.evalPrompts = 20 })
	set("retention", func() { o.retention = 8 })
	set("max-tokens", func() { o.maxTokens = 64 })
	set("retention-tokens", func() { o.retentionTokens = 16 })
	set("version-timeout", func() { o.versionTimeout = 10 * time.Minute })
}

// The --target scenario: the setting of BENCHMARKS.md, "The issue's
// protocol, round 3" (bench/results/2026-12-01-protocol-816/s9.sh), whose
// runs, one persona and seed per invocation, were pooled there.
const (
	targetModel = "qwen2.5-coder-1.5b"
	// targetArm is the learning arm: combine with the teacher server's
	// answers, best of 4 by the hint gain.
	targetArm = "combine-best:combine:--teacher-url=" + teacherURLMark + ":--teacher-model=clawrl:--teacher-samples=4" +
		":--teacher-select-relevance:--teacher-select-length=fit:--teacher-select-quoted:--teacher-select-opening=0.5"
	// targetDefaultsArm is --target=defaults' learning arm: combine on
	// serve's defaults, the teacher server named (the runs of
	// bench/results/2026-12-02-avoid-default, t10.sh).
	targetDefaultsArm = "combine:combine:--teacher-url=" + teacherURLMark + ":--teacher-model=clawrl"

	targetBest     = "best"
	targetDefaults = "defaults"
)

// targetServeArgs are the flags every --target server gets besides its arm's.
var targetServeArgs = []string{"--lr=5e-4", "--gate-backtrack=2", "--hold-liked=0.75",
	"--rehearsal-avoid", "--rehearsal-avoid-wrong", "--rehearsal-avoid-bound=2"}

// applyTarget sets the --target scenario's values for every flag not
// given; its setting's serve flags come before any --serve-arg given,
// which so win.
func (o *benchLearnOptions) applyTarget(cmd *cobra.Command) error {
	arm, serveArgs := targetArm, targetServeArgs
	switch o.target {
	case targetBest:
	case targetDefaults:
		arm, serveArgs = targetDefaultsArm, nil
	default:
		return fmt.Errorf("--target=%s: the settings are %s (the best measured; --target alone) and %s (serve's defaults)", o.target, targetBest, targetDefaults)
	}
	set := unlessGiven(cmd)
	set("model", func() { o.model = targetModel })
	set("teacher-serve", func() { o.teacherServe = targetModel })
	set("arms", func() { o.arms = []string{"off", arm} })
	set("personas", func() { o.personas = []string{"concise", "signoff", "tldr", "french"} })
	set("seeds", func() { o.seeds = 2 })
	set("versions", func() { o.versions = 8 })
	set("per-version", func() { o.perVersion = 16 })
	set("eval-prompts", func() { o.evalPrompts = 20 })
	set("version-timeout", func() { o.versionTimeout = 20 * time.Minute })
	o.serveArgs = append(slices.Clone(serveArgs), o.serveArgs...)
	return nil
}

func runBenchLearn(ctx context.Context, o benchLearnOptions, stdout interface{ Write([]byte) (int, error) }) error {
	if ctx == nil {
		ctx = context.Background()
	}
	// Ctrl-C stops the server in hand and still writes the runs so far.
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	var personas []*bench.Persona
	for _, name := range o.personas {
		p := bench.PersonaNamed(name)
		if p == nil {
			return fmt.Errorf("--personas: unknown persona %q", name)
		}
		personas = append(personas, p)
	}
	var arms []bench.Arm
	for _, spec := range o.arms {
		a, err := bench.ParseArm(spec)
		if err != nil {
			return fmt.Errorf("--arms: %w", err)
		}
		arms = append(arms, a)
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil { // the teacher server logs into it
		return err
	}
	if o.addr == "" {
		if err := pullKnownModel(ctx, "--model", o.model, log); err != nil {
			return err
		}
	}
	stopTeacher, err := startBenchTeacher(ctx, &o, arms, log)
	if err != nil {
		return err
	}
	defer stopTeacher()
	placement, err := judge.ParseHintPlacement(o.hintPlacement)
	if err != nil {
		return fmt.Errorf("--hint-placement: %w", err)
	}
	if placement != judge.HintInUser {
		o.serveArgs = append(o.serveArgs, "--hint-placement="+string(placement))
	}
	if o.seeds < 1 {
		return fmt.Errorf("--seeds %d: want ≥ 1", o.seeds)
	}
	cfg := bench.Config{Arms: arms, Personas: personas, Versions: o.versions, PerVersion: o.perVersion,
		EvalPrompts: o.evalPrompts, Retention: o.retention, Feedback: o.feedback, MaxTokens: o.maxTokens,
		RetentionTokens: o.retentionTokens, Temperature: o.temperature, Concurrency: o.concurrency, VersionTimeout: o.versionTimeout, TeacherEachRound: o.teacherEachRound, HintPlacement: placement}
	cfg.Neutral = o.neutral
	cfg.Specific = o.specific
	for s := range o.seeds {
		cfg.Seeds = append(cfg.Seeds, int64(o.firstSeed+s))
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	var launch bench.Launch
	if o.addr != "" {
		if len(o.arms) != 1 || len(personas) != 1 || o.seeds != 1 {
			return fmt.Errorf("--addr: a running server is one run: give one --arms, one --personas and --seeds 1")
		}
		launch = func(context.Context, bench.Arm, *bench.Persona, int64) (*bench.Client, func() error, error) {
			return &bench.Client{BaseURL: "http://" + o.addr, APIKey: os.Getenv("CLAWRL_API_KEY")}, func() error { return nil }, nil
		}
	} else {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		launch = serverLauncher(exe, o, log)
	}
	start := time.Now()
	runs, err := bench.Experiment(ctx, cfg, launch, log)
	elapsed := time.Since(start)
	if err != nil && len(runs) == 0 {
		return err
	}
	sums := bench.Summarise(runs)
	report := learnReport{Command: "clawrl bench learn " + strings.Join(os.Args[min(3, len(os.Args)):], " "),
		Date: time.Now().UTC().Format(time.RFC3339), Model: o.model, CPUs: runtime.NumCPU(), Seconds: elapsed.Seconds(),
		Config: cfg, Summary: sums, Runs: runs}
	where := ""
	if o.addr == "" { // the servers ran here, on this binary's kernels
		m := thisMachine()
		report.Machine = &m
		where = "; on " + m.String()
	}
	if report.Model == "" {
		report.Model = "serve's default"
	}
	js, jerr := json.MarshalIndent(report, "", "  ")
	if jerr != nil {
		return jerr
	}
	md := fmt.Sprintf("model %s, feedback %s, %d persona(s) × %d seed(s), %d rated turns per version, %d held-out prompts per persona; %.0f s wall%s\n\n%s",
		report.Model, o.feedback, len(personas), o.seeds, o.perVersion, o.evalPrompts, elapsed.Seconds(), where, learnTables(sums, runs))
	svg := bench.SVG(sums, fmt.Sprintf("clawrl bench learn: %s, %s", strings.Join(o.personas, "+"), filepath.Base(report.Model)))
	for name, data := range map[string]string{"learn.json": string(js), "learn.md": md, "learn.svg": svg} {
		if werr := os.WriteFile(filepath.Join(o.out, name), []byte(data), 0o644); werr != nil {
			return werr
		}
	}
	fmt.Fprint(stdout, md)
	return err
}

// learnTables is learn.md's body: the arms by round, the personas, the
// loop's teacher and the verdicts on the training turns.
func learnTables(sums []bench.ArmSummary, runs []bench.Run) string {
	return bench.Markdown(sums) + bench.PersonaMarkdown(runs) + bench.TeacherMarkdown(runs) + bench.VerdictMarkdown(runs)
}

// learnReport is learn.json.
type learnReport struct {
	Command string `json:"command"`
	Date    string `json:"date"`
	Model   string `json:"model"`
	CPUs    int    `json:"cpus"`
	// Machine is the CPU and kernels the servers ran on (those of this
	// binary here); absent with --addr, whose server may run elsewhere.
	Machine *machineInfo       `json:"machine,omitempty"`
	Seconds float64            `json:"seconds"`
	Config  bench.Config       `json:"config"`
	Summary []bench.ArmSummary `json:"summary"`
	Runs    []bench.Run        `json:"runs"`
}

// serveArgs is the command line of arm's server (after the binary's name),
// its store in data, listening on addr: the run's flags, then --serve-arg's
// (the teacher server's URL is put in for teacherURLMark beforehand), then
// the arm's own.
func serveArgs(o benchLearnOptions, arm bench.Arm, data, addr string) []string {
	args := []string{"serve", "--data", data, "--addr", addr, "--method", arm.Method,
		"--batch-size", strconv.Itoa(o.perVersion), "--log-level", "info"}
	if o.model != "" {
		args = append(args, "--model", o.model)
	}
	if o.feedback == bench.FeedbackImplicit {
		// The reply to a user's last message gets no next state;
		// expiring it soon lets the loop settle those turns.
		args = append(args, "--session-idle", "30s")
	}
	return append(append(args, o.serveArgs...), arm.Args...)
}

// serverLauncher starts `exe serve` per run with a fresh data folder and a
// free loopback port, its log in the output folder.
func serverLauncher(exe string, o benchLearnOptions, log *slog.Logger) bench.Launch {
	return func(ctx context.Context, arm bench.Arm, p *bench.Persona, seed int64) (*bench.Client, func() error, error) {
		name := fmt.Sprintf("%s-%s-%d", arm.Name, p.Name, seed)
		var data string
		var err error
		if o.keepData {
			data = filepath.Join(o.out, "data-"+name)
			if err = os.RemoveAll(data); err == nil {
				err = os.MkdirAll(data, 0o755)
			}
		} else {
			data, err = os.MkdirTemp("", "clawrl-bench-"+name+"-")
		}
		if err != nil {
			return nil, nil, err
		}
		addr, err := freeLoopbackAddr()
		if err != nil {
			return nil, nil, err
		}
		cl, stop, err := startChildServer(ctx, exe, name, addr, filepath.Join(o.out, "serve-"+name+".log"), serveArgs(o, arm, data, addr), nil, log)
		switch {
		case err != nil:
			if !o.keepData {
				os.RemoveAll(data)
			}
			return nil, nil, err
		case o.keepData:
			return cl, stop, nil
		}
		return cl, func() error {
			defer os.RemoveAll(data)
			return stop()
		}, nil
	}
}
