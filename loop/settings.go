package loop

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/judge"
	"github.com/clawrl/clawrl/model"
	"github.com/clawrl/clawrl/rl"
	"github.com/clawrl/clawrl/store"
	"github.com/clawrl/clawrl/train"
)

// Settings are the learning loop's command-line flags for `clawrl serve`.
// serve.go registers them with AddFlags and builds the runner with Build, so
// the loop's knobs live next to the code they tune.
type Settings struct {
	Method       string
	JudgeURL     string
	JudgeModel   string
	JudgeKey     string
	JudgeVotes   int
	JudgeTimeout time.Duration
	JudgeRetries int
	JudgeTokens  int
	Feedback     string
	Teacher      string
	BatchSize    int
	MaxStaleness int64
	TrainMode    string
	LoRARank     int
	MicroTokens  int
	// Recompute: the trainer keeps each block's input only and recomputes
	// its activations in the backward (train.Config.Recompute; gradient
	// checkpointing in the torch worker).
	Recompute bool
	// ActivationMiB bounds a native trainer micro-batch's kept activations
	// (train.Config.ActivationBudget via train.BudgetFromMiB).
	ActivationMiB int
	// TrainPrecision is the native trainer's backward precision through
	// frozen weights: fp32, bf16 or auto (train.ParsePrecision).
	TrainPrecision string
	LearningRate   float64
	WRL, WOPD      float64
	// Judging (see package judge).
	JudgeVerdict     string
	JudgeCalibration string
	JudgeThreshold   float64
	HintTokens       int
	NextHint         string
	NoWrittenHints   bool
	NoGeneratedHints bool
	// WrittenHint: as-is or rewrite (judge.WrittenHintMode).
	WrittenHint string
	// Advantages and loss (see rl.AdvantageConfig, rl.LossConfig).
	Baseline string
	// BaselineWindow: ratings the running baseline mostly reflects
	// (--baseline running, rl.RatingMean).
	BaselineWindow int
	// BaselineClip: with --baseline running, each centred reward is
	// bounded to ±this (0: unbounded; rl.SchedulerConfig.RunningClip).
	BaselineClip float64
	// HoldLiked: a step whose users liked at least this share of its
	// rated answers is not trained (rl.SchedulerConfig.HoldLiked; 0: off).
	HoldLiked float64
	// HoldMinRated: with HoldLiked, the fewest rated answers a step needs
	// before it can hold (rl.SchedulerConfig.HoldMinRated).
	HoldMinRated int
	// HoldKeepsDisliked: with HoldLiked, a held step's 👎s stay ready for
	// the next step that trains (rl.SchedulerConfig.HoldKeepsDisliked).
	HoldKeepsDisliked bool
	// HoldTrainsDisliked: with HoldLiked, a held step trains its 👎s
	// alone at once (rl.SchedulerConfig.HoldTrainsDisliked).
	HoldTrainsDisliked bool
	// RollbackDrop, RollbackAlpha: a step whose users liked the served
	// version's answers this share less often than the users of the
	// version it was trained from (significant at RollbackAlpha) trains
	// from that earlier version (rl.SchedulerConfig.RollbackDrop; 0: off).
	RollbackDrop, RollbackAlpha float64
	OPDClip                     float64
	KLCoef                      float64
	// Epochs: optimizer steps per batch (PPO epochs, rl.StepConfig.Epochs).
	Epochs int
	// FirstEpochs: optimizer steps for the batch of the optimizer's first
	// step (rl.StepConfig.FirstEpochs); 0: Epochs.
	FirstEpochs int
	// LRWarmup: optimizer steps over which the learning rate rises
	// linearly to --lr (train.AdamWConfig.Warmup); 0: none.
	LRWarmup int
	// FirstLR: the learning rate of the first batch's optimizer steps
	// (train.AdamWConfig.FirstLR); 0: --lr.
	FirstLR float64
	// MomentumReset: when a step zeroes AdamW's first moment
	// (rl.StepConfig.MomentumReset): keep, no-signal or every-step.
	MomentumReset string
	// LossMean: how a step averages token losses (rl.StepConfig.LossMean):
	// token or sample.
	LossMean string
	// RehearsalScale: how rehearsal anchors weigh against a step's rated
	// samples (rl.StepConfig.AnchorScale): fixed or signal.
	RehearsalScale string
	// OPDResponse: "student" (the teacher re-scores the policy's sampled
	// response) or "teacher" (the teacher writes the response; context
	// distillation). TeacherTokens bounds a teacher-written response.
	OPDResponse   string
	TeacherTokens int
	// TeacherConcurrency: teacher samples built at once
	// (Config.TeacherConcurrency).
	TeacherConcurrency int
	// DistillCoef: cross-entropy weight of teacher-written responses
	// (rl.StepConfig.DistillCoef); 0 trains them through the PPO objective.
	DistillCoef float64
	// DistillFocus weighs the cross-entropy of a teacher-written token by
	// how much the hint makes it likelier to the policy
	// (rl.StepConfig.DistillFocus); 0, the default, weighs them alike.
	DistillFocus float64
	// Promotion: the retention gate (see rl.RetentionConfig).
	NoRetentionGate  bool
	RetentionMaxLost int
	RetentionShrinks int
	GateRepairs      int
	RetentionMaxDrop float64
	// Rehearsal: anchors per step (rl.Rehearsal; 0: none), their
	// advantage and answer length.
	Rehearsal       int
	RehearsalWeight float64
	RehearsalTokens int
	// RehearsalFollowHint rehearses the anchors under the hint the loop
	// last trained on (FollowAnchor).
	RehearsalFollowHint bool
	// RehearsalAvoid pushes down, beside the anchors, the answers the
	// retention gate caught that do not answer their question (Answers).
	RehearsalAvoid bool
	// RehearsalAvoidWrong: with RehearsalAvoid, the caught answers about
	// their question are pushed down too (a fact said wrongly).
	RehearsalAvoidWrong bool
	// RehearsalAvoidPasses retires a pushed-down answer once this many
	// versions have passed the gate since it was caught (0: never).
	RehearsalAvoidPasses int
	// RehearsalAvoidBound: how many nats below the base model an avoided
	// answer is pushed (rl.RehearsalConfig.AvoidBound; 0: no bound).
	RehearsalAvoidBound float64
	// RehearsalAvoidRelative reads RehearsalAvoidBound against where each
	// answer's pushes began as well (rl.RehearsalConfig.AvoidRelative).
	RehearsalAvoidRelative bool
	// avoidByDefault records which of the avoid trio's flags hold
	// AddFlags' defaults: a default that cannot apply (no anchors, no
	// gate, full training) is dropped silently, where a value given, on
	// the command line or in a Settings literal, is an error.
	avoidByDefault struct{ avoid, wrong, bound, passes bool }
	// RetentionTokens bounds a candidate's answer in the behavioural gate
	// (rl.RetentionConfig.MaxTokens).
	RetentionTokens int
	// GateLoops: open questions (DefaultOpen) the behavioural gate also
	// asks, rejecting a version that loops on any (0: none).
	GateLoops int
	// GateAnswers: the gate also rejects a version that no longer answers
	// half of those open questions (rl.RetentionConfig.OpenAnswered).
	GateAnswers bool
	// LoRATargets: the projections that get adapters (empty: all seven).
	LoRATargets []string
	// TrainBackend is native (the Go trainer) or torch:PYTHON (see
	// torchTrainer).
	TrainBackend string
	// HintPlacement: where the teacher's prompt carries the hint
	// (judge.HintPlacement).
	HintPlacement string
	// RemoteTeacher: another model writes the teacher's answers
	// (remote_teacher.go).
	RemoteTeacher RemoteTeacherSettings
	// TeacherSamples: best-of-N teacher answers (teacher_samples.go).
	TeacherSamples TeacherSampleSettings
}

// AddFlags registers the flags on fs.
func (s *Settings) AddFlags(fs *pflag.FlagSet) {
	// serve may own --method already; then it copies the value into Method.
	if fs.Lookup("method") == nil {
		fs.StringVar(&s.Method, "method", "combine", "training signal: combine, rl, opd or off")
	}
	fs.StringVar(&s.JudgeURL, "judge-url", "", "OpenAI-compatible endpoint for the judge (default: the served model's base weights)")
	fs.StringVar(&s.JudgeModel, "judge-model", "", "model name at --judge-url")
	fs.StringVar(&s.JudgeKey, "judge-key", "", "API key for --judge-url (default $CLAWRL_JUDGE_KEY)")
	fs.IntVar(&s.JudgeVotes, "judge-votes", 0, "judge votes per turn (default 3 for rl, 1 for opd and combine)")
	fs.DurationVar(&s.JudgeTimeout, "judge-timeout", 2*time.Minute, "timeout of one judge call")
	fs.IntVar(&s.JudgeRetries, "judge-retries", 2, "retries of a failed judge call, with exponential backoff")
	fs.IntVar(&s.JudgeTokens, "judge-max-tokens", 2048, "most tokens one judge vote may generate")
	fs.StringVar(&s.Feedback, "feedback", "decide", "how /v1/feedback ratings count: decide (alone) or vote (adds votes)")
	fs.StringVar(&s.Teacher, "teacher", "policy", "OPD teacher: policy (current adapter) or base (frozen base weights)")
	fs.IntVar(&s.BatchSize, "batch-size", 16, "samples per trainer step (0: 16)")
	fs.Int64Var(&s.MaxStaleness, "max-staleness", rl.DefaultMaxStaleness, "refuse samples more than this many versions stale")
	fs.StringVar(&s.TrainMode, "train-mode", "lora", "lora or full")
	fs.IntVar(&s.LoRARank, "lora-rank", 16, "LoRA rank (alpha = 2·rank)")
	fs.IntVar(&s.MicroTokens, "micro-batch-tokens", 0, "tokens per trainer micro-batch (0: the trainer's default); smaller ones let a trainer that yields pause sooner for serving")
	fs.BoolVar(&s.Recompute, "recompute", false, "trainer keeps only each block's input and recomputes its activations in the backward: a step's activation memory falls to about one block's, for about a third more compute (gradient checkpointing under --train-backend torch)")
	fs.IntVar(&s.ActivationMiB, "activation-budget-mib", 0, train.ActivationBudgetFlag)
	fs.StringVar(&s.TrainPrecision, "train-precision", "auto", "native trainer's backward products through frozen weights: auto (bf16 where the CPU has AVX512_BF16 or AVX2 and FMA, the same sums on either; on AMX tiles where it has AMX-BF16; else fp32), bf16 (dy and W rounded to bf16, float32 sums; the forward stays the serving forward) or fp32")
	fs.Float64Var(&s.LearningRate, "lr", 0, "learning rate (default 1e-3 LoRA, chosen with clawrl bench learn; 1e-5 full)")
	fs.Float64Var(&s.WRL, "w-rl", 1, "weight of the RL term in combined advantages")
	fs.Float64Var(&s.WOPD, "w-opd", 1, "weight of the OPD term in combined advantages")
	fs.StringVar(&s.JudgeVerdict, "judge-verdict", "fewshot", "how the judge scores: fewshot (a user's next message from one prefill of a few-shot prompt; other next states as prefill), prefill (probabilities of \\boxed{1|0|-1} from one prefill; --judge-url always samples) or votes (sampled answers)")
	fs.StringVar(&s.JudgeCalibration, "judge-calibration", "neutral", "prefill verdict calibration: neutral (against the same prompt with no next state), running (against recent margins) or none")
	fs.Float64Var(&s.JudgeThreshold, "judge-threshold", judge.DefaultThreshold, "calibrated margin (nats) a prefill verdict must pass to score ±1 (negative: any margin)")
	fs.IntVar(&s.HintTokens, "hint-tokens", 64, "most tokens a generated hint may take (it stops at its end marker)")
	fs.StringVar(&s.NextHint, "next-hint", "correction", "when the user's next message is the OPD hint: correction (after a -1 score), always, or off")
	fs.BoolVar(&s.NoWrittenHints, "no-written-hints", false, "do not use /v1/feedback text as the OPD hint")
	fs.BoolVar(&s.NoGeneratedHints, "no-generated-hints", false, "never ask the judge model to write a hint")
	fs.StringVar(&s.WrittenHint, "written-hint", string(judge.WrittenAsIs), "how written feedback (or a correcting next message) becomes the OPD hint: as-is, or rewrite (the judge, seeing the answer, first rewrites it as an instruction that stands without that answer, which the teacher never sees: \"too long\" becomes what the answer must do; one greedy generation of at most --hint-tokens)")
	fs.StringVar(&s.Baseline, "baseline", string(DefaultBaseline), "reward baseline for single samples: batch (normalise over the step, PRPO), center (subtract the step's mean), running (subtract the running mean of recent ratings, the 👎s trained on the teacher's answer included) or none")
	fs.IntVar(&s.BaselineWindow, "baseline-window", rl.DefaultRatingWindow, "with --baseline running: each newer rating weighs an older one 1 − 1/this less")
	fs.Float64Var(&s.BaselineClip, "baseline-clip", 0, "with --baseline running: bound each reward after the baseline to ±this, so a 👍 given while the mean is still low trains no more than this (0: unbounded)")
	fs.Float64Var(&s.HoldLiked, "hold-liked", DefaultHoldLiked, "hold the policy while its users are satisfied: a step whose users liked at least this share of its rated answers (at least --hold-min-rated of them) is not trained (its turns are dropped, \"held\"; a 👎 among them is not trained either, unless --hold-keep-disliked or --hold-train-disliked) and the served version stays (0: every step trains)")
	fs.IntVar(&s.HoldMinRated, "hold-min-rated", DefaultHoldMinRated, "with --hold-liked: a step holds only if at least this many of its answers were rated (fewer say little about the users' satisfaction; a step of one 👍 at --batch-size 1 trains)")
	fs.BoolVar(&s.HoldKeepsDisliked, "hold-keep-disliked", false, "with --hold-liked: a held step's 👎s are not dropped but wait, ready, for the next step that trains")
	fs.Float64Var(&s.RollbackDrop, "rollback-drop", DefaultRollbackDrop, "roll back on the users' verdict: when the served version's users liked its answers at least this share less often than the users of the version it was trained from (a one-sided Fisher exact test below --rollback-alpha), the next step trains from that earlier version, dropping the served one's update (0: off)")
	fs.Float64Var(&s.RollbackAlpha, "rollback-alpha", rl.DefaultRollbackAlpha, "with --rollback-drop: the significance the fall in the liked share must reach")
	fs.BoolVar(&s.HoldTrainsDisliked, "hold-train-disliked", false, "with --hold-liked: a held step's 👎s are trained at once, alone, in a step shrunk to their share of a full one (its liked answers dropped as held); a held step with no 👎 holds")
	fs.Float64Var(&s.OPDClip, "opd-clip", DefaultOPDClip, "clip the per-token teacher − old gap to ±this (0: no clip)")
	fs.StringVar(&s.OPDResponse, "opd-response", DefaultOPDResponse, "which response OPD trains on: student (the teacher re-scores the policy's sampled answer), teacher (the teacher, shown the hint, writes the answer: context distillation) or both (one turn trains on the two)")
	fs.IntVar(&s.TeacherConcurrency, "teacher-concurrency", DefaultTeacherConcurrency, "teacher samples built at once (each with its answers, best-of-N's included, written together), so that the engine writing them decodes them in one batch; a round of the judge loop builds at most this many before it takes turns rated meanwhile")
	fs.IntVar(&s.TeacherTokens, "teacher-max-tokens", 128, "most tokens of a teacher-written response (--opd-response teacher or both)")
	fs.Float64Var(&s.DistillFocus, "distill-focus", 0, "weigh each token of a teacher-written response trained by cross-entropy by 1 + this × the nats (at most 4) by which the hint makes it likelier to the policy, so the words that do what the feedback asks weigh more than the rest of the teacher's text, as when the teacher is a larger model whose style the student does not share; a focused step the retention check rejects is taken again without focus (0: every token weighs the same)")
	fs.Float64Var(&s.DistillCoef, "distill-coef", DefaultDistillCoef, "train teacher-written responses (--opd-response teacher or both) by this weight × their tokens' cross-entropy, unclipped (0: through the PPO objective with the clipped teacher − old advantage)")
	fs.IntVar(&s.Epochs, "ppo-epochs", DefaultEpochs, "optimizer steps per batch (PPO epochs: π_old is fixed by the first, the clip bounds the others)")
	fs.IntVar(&s.FirstEpochs, "first-epochs", DefaultFirstEpochs, "optimizer steps for the first batch the optimizer sees, when AdamW's first update moves every parameter with a gradient by about the learning rate whatever the gradient's size (0: as --ppo-epochs)")
	fs.Float64Var(&s.FirstLR, "first-lr", 0, "learning rate of the first batch's optimizer steps (--first-epochs of them, or --ppo-epochs), --lr after: a rate that falls once the first version is trained (0: --lr throughout)")
	fs.IntVar(&s.LRWarmup, "lr-warmup", 0, "optimizer steps over which the learning rate rises linearly to --lr (step t of them takes lr·t/N), when AdamW's early updates move every parameter with a gradient by about the rate (0: --lr from the first step)")
	fs.StringVar(&s.LossMean, "loss-mean", string(rl.MeanToken), "how a step averages its answers' token losses: token (over every token of the step, so the longest answers weigh most) or sample (each answer's mean, then the answers', so every answer weighs the same)")
	fs.StringVar(&s.MomentumReset, "momentum-reset", string(rl.MomentumKeep), "when a version's step zeroes AdamW's first moment: keep (never), no-signal (before a batch with nothing to learn: every answer liked, no teacher sample; kept, the step repeats the last update at ~0.9 of its size) or every-step")
	fs.Float64Var(&s.KLCoef, "kl", 0, "β of a KL(π‖base) term in the loss (costs a reference forward per sample)")
	fs.BoolVar(&s.NoRetentionGate, "no-retention-gate", false, "serve every trained version, without checking it keeps the base model's answers to the retention facts")
	fs.IntVar(&s.RetentionMaxLost, "retention-max-lost", 0, "retention facts a version may lose and still be served")
	fs.IntVar(&s.RetentionShrinks, "gate-backtrack", DefaultGateBacktrack, "a version the retention gate rejects is tried again at 1/2, 1/4, … of its step (this many tries; 0: reject at once) and the largest that keeps the facts is served (native LoRA trainer)")
	fs.IntVar(&s.GateRepairs, "gate-repair", DefaultGateRepairs, "a version the retention gate rejects gets this many repair steps, each on all the rehearsal anchors alone (generic questions the base model answered) and checked again, before --gate-backtrack (0: none; native trainer)")
	// The older name of --gate-backtrack, kept working for scripts that
	// pass it; one setting, one name in the help.
	fs.IntVar(&s.RetentionShrinks, "retention-shrinks", DefaultGateBacktrack, "")
	_ = fs.MarkDeprecated("retention-shrinks", "use --gate-backtrack")
	fs.Float64Var(&s.RetentionMaxDrop, "retention-max-drop", 0.5, "how far (nats) the mean log-probability of the retention answers may fall below the base model's (only where the trainer cannot answer, e.g. the torch backend: the native trainer's gate checks its greedy answers)")
	fs.IntVar(&s.Rehearsal, "rehearsal", DefaultRehearsalPerBatch, "rehearsal anchors per step: generic questions (not the retention facts) answered once by the base model, trained beside each batch towards those answers (0: none)")
	fs.Float64Var(&s.RehearsalWeight, "rehearsal-weight", rl.DefaultRehearsalWeight, "advantage of each rehearsal anchor token")
	fs.StringVar(&s.RehearsalScale, "rehearsal-scale", string(rl.AnchorFixed), "how the rehearsal anchors weigh against a step's rated answers: fixed (each anchor token at --rehearsal-weight, whatever the step) or signal (--rehearsal-weight times the step's signal: the mean over its rated answers of 1 for one with a teacher's answer or hint, else its reward's advantage after the baseline, capped at 1; a step of answers the user already likes then pulls little towards the base model's)")
	fs.IntVar(&s.RehearsalTokens, "rehearsal-tokens", DefaultRehearsalTokens, "tokens of the base model's answer each rehearsal anchor keeps")
	fs.Float64Var(&s.RehearsalAvoidBound, "rehearsal-avoid-bound", DefaultRehearsalAvoidBound, "with --rehearsal-avoid: push an avoided answer down on an anchor's prompt only until its log-probability is this many nats below the base model's (0: no bound, every step pushes it further); LoRA mode (by default 0 without it)")
	fs.BoolVar(&s.RehearsalAvoid, "rehearsal-avoid", DefaultRehearsalAvoid, "push down, on the rehearsal anchors' questions, every answer the retention gate caught that says none of its question's words (a stock refusal such as \"I'm sorry, but I can't assist with that.\"), from the step after it was caught; needs --rehearsal > 0 and the gate (by default on with them in LoRA training, off otherwise; --rehearsal-avoid=false: off)")
	fs.BoolVar(&s.RehearsalAvoidWrong, "rehearsal-avoid-wrong", DefaultRehearsalAvoidWrong, "with --rehearsal-avoid: also push down the caught answers that are about their question but wrong (\"Le capital de la France est Paris.\" to Germany's capital), any caught sentence of 5 words or more")
	markGiven(fs, "rehearsal-avoid", &s.avoidByDefault.avoid)
	markGiven(fs, "rehearsal-avoid-wrong", &s.avoidByDefault.wrong)
	markGiven(fs, "rehearsal-avoid-bound", &s.avoidByDefault.bound)
	fs.BoolVar(&s.RehearsalAvoidRelative, "rehearsal-avoid-relative", false, "with --rehearsal-avoid-bound: stop pushing an answer down also once it is the bound below where its first push found it (its log-probability from the base model's, as the step reads it), and push it again only when it climbs back; an answer in the user's language, far above the base model under a student that speaks it, is then pushed down a little instead of on every step")
	fs.IntVar(&s.RehearsalAvoidPasses, "rehearsal-avoid-passes", DefaultRehearsalAvoidPasses, "with --rehearsal-avoid: push an answer the gate caught down only until this many versions have passed the gate since it was caught (caught again, it is pushed down again); 0: on every step from then on. A caught answer in the user's language is far below any --rehearsal-avoid-bound under the base model, so only this stops it")
	markGiven(fs, "rehearsal-avoid-passes", &s.avoidByDefault.passes)
	fs.BoolVar(&s.RehearsalFollowHint, "rehearsal-follow-hint", false, "rehearse the anchors as the teacher answers them with the hint the loop last trained on in context (an answer that keeps none of the base answer's words is skipped), instead of as the base model answered them: one user's preference, such as a language, is then not pulled back on every step; off: the base model's answers")
	fs.IntVar(&s.RetentionTokens, "retention-tokens", DefaultRetentionTokens, "most tokens of a candidate's greedy answer to a retention fact in the promotion gate")
	fs.IntVar(&s.GateLoops, "gate-loops", DefaultGateLoops, fmt.Sprintf("the promotion gate also answers this many open how-to questions (at most %d; those the base model answers without looping) to %d tokens and rejects a version that loops on any, e.g. one that learned a sign-off but not to stop after it (native trainer; 0: off)", len(DefaultOpen), gateOpenTokens))
	fs.BoolVar(&s.GateAnswers, "gate-answers", false, "the promotion gate also rejects a version that no longer answers the --gate-loops questions: half of them answered with none of their topic's words (a refusal, an \"As an AI\"), in English or the retention facts' languages (native trainer)")
	fs.StringSliceVar(&s.LoRATargets, "lora-targets", nil, "projections that get LoRA adapters (default all: q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj)")
	fs.StringVar(&s.TrainBackend, "train-backend", "native", trainBackendHelp)
	fs.StringVar(&s.HintPlacement, "hint-placement", DefaultHintPlacement, "where the OPD teacher sees the hint: user (appended to the last user message), user-first (at the start of the last user message, before the question), system (in the system message only: the question as asked), system+user (in both), revise (the student's answer as the assistant's turn, then the hint as the user's next message), continue (as user, and the teacher continues the student's answer from before its end-of-turn token) or mixed (best of --teacher-samples answers written under user and system in turn, each read where its writer saw the hint)")
	s.RemoteTeacher.addFlags(fs)
	s.TeacherSamples.addFlags(fs)
}

// Defaults of the learning signal, chosen with `clawrl bench learn` (see
// BENCHMARKS.md, "Learning loop").
const (
	// DefaultBaseline: see BENCHMARKS.md, "A running reward baseline".
	// On the signoff student it held 225 of 320 held-out answers over
	// versions 3–6 against batch's 123 (4 seeds of 4 ahead); on the demo
	// model's concise persona it is level (91 against 87 of 120).
	DefaultBaseline = rl.BaselineRunning
	DefaultOPDClip  = 1.0
	// DefaultOPDResponse: the teacher, shown the hint, writes the response
	// the student is trained on (context distillation), by cross-entropy
	// (DefaultDistillCoef). See BENCHMARKS.md, "Context distillation by
	// cross-entropy": the default grid's concise persona learned in one
	// version instead of three, with retention kept.
	DefaultOPDResponse = "teacher"

	// DefaultTeacherConcurrency: see BENCHMARKS.md, "Teacher answers
	// written eight at a time". The quantized kernels take four tokens at
	// once (quant.MatMul): on these 2 cores the 1.5B decodes 8 sequences
	// at 3.5× one's tokens a second, 4 at 2.9×, 2 at 1.4×; a burst of 16
	// rated turns on the demo model with the 1.5B as its teacher got its
	// first version 101 s after the 16th rating at 8 (16: 104 s; 4: 116 s;
	// 2: 140 s), and 87–92 s once a best of N's prompt was prefilled once
	// (engine/native's prefix cache).
	DefaultTeacherConcurrency = 8
	// DefaultHintPlacement: see BENCHMARKS.md, "Learning a person's
	// preferences, round 2".
	DefaultHintPlacement = string(judge.HintInUser)
	// DefaultEpochs: one optimizer step per batch. Four (--ppo-epochs 4)
	// learned the concise persona in one version instead of three, but on
	// a preference the student cannot express (french, 8 versions of 16)
	// it ended in a served version answering in French-looking noise with
	// 7 of 8 facts lost, where one step stayed at 0 with the facts kept
	// (BENCHMARKS.md, "Learning a person's preferences, round 2").
	DefaultEpochs = 1
	// DefaultFirstEpochs: 0, the first batch gets --ppo-epochs steps like
	// every other.
	DefaultFirstEpochs = 0
	// DefaultDistillCoef: see BENCHMARKS.md, "Context distillation by
	// cross-entropy".
	DefaultDistillCoef = 1.0
	// DefaultLoRALearningRate: the seed's 1e-4 moved nothing on SmolLM2 in
	// three versions of 8 samples; 1e-3 moved it in one and forgot facts
	// in the next (rejected by the retention gate); 5e-4 went 0 → 0.2 →
	// 0.5 satisfaction with retention kept — until the gate read answers,
	// when nearly every step at 5e-4 lost "Paris" or "blue". With
	// rehearsal anchors (DefaultRehearsalPerBatch) the steps keep the facts,
	// and 1e-3 learns the concise persona 0 → 0.9 in three versions of 8
	// with every version served (BENCHMARKS.md, "Rehearsal anchors").
	DefaultLoRALearningRate = 1e-3
	// DefaultRehearsalPerBatch: rehearsal anchors per step. Four beside a
	// batch of 8 turned the gate's 21-of-24 rejections into ~all versions
	// served; eight kept the facts too but learned more slowly.
	DefaultRehearsalPerBatch = 4
	// DefaultGateBacktrack: halvings of a rejected step the gate tries
	// (--gate-backtrack). On the 1.5B student a step that taught the
	// sign-off without the stop after it was served at half its length,
	// and signoff held at 69 and 62 of 80 over v3–v6 where it collapsed
	// to 28 and 31 (BENCHMARKS.md, "A gate that refuses loops"); french's
	// refused step was served at a quarter of its length (8 × 16, "The
	// issue's protocol"). A step the gate passes whole is untouched.
	DefaultGateBacktrack = 2
	// DefaultHoldLiked: the liked share of a step's rated answers that
	// holds it (--hold-liked). On the 1.5B student it ended the fall back
	// after the peak in every run where it fired (four personas, two
	// seeds: 0.58 → 0.73 at v6; BENCHMARKS.md, "Holding the policy while
	// its users are satisfied") and is part of the best setting; on the
	// demo model's default grid it is level (one concise step held
	// instead of rejected; BENCHMARKS.md, "`--hold-liked 0.75` by
	// default").
	DefaultHoldLiked = 0.75
	// DefaultHoldMinRated: rated answers a step needs before --hold-liked
	// can hold it: the protocols' steps of 8 and 16 hold as measured
	// (BENCHMARKS.md, "Holding the policy while its users are
	// satisfied"), and a step of one or a few 👍s trains.
	DefaultHoldMinRated = 8
	// DefaultRollbackDrop: the fall in the users' liked share that rolls
	// a step back to the version before the served one (--rollback-drop).
	// On the 1.5B student's tldr, 0.3 fired in three seeds of three:
	// after a collapse late in the run (17 of 20 held-out at v5, 0 at v6,
	// its users 11 of 16 liked, then 0 of 16) it gave 19 at v8 against
	// 3, and after two falls early in their runs (users 36 of 48 → 5 of
	// 16, 9 of 16 → 1 of 16), which the next step had mended without it,
	// 19 against 19 and 15 against 19, lower in the rounds between.
	// 0.6 keeps the first alone; it was chosen on those three runs
	// (BENCHMARKS.md, "Rolling back on the users' verdict").
	DefaultRollbackDrop = 0.6
	// DefaultRehearsalAvoid, DefaultRehearsalAvoidWrong and
	// DefaultRehearsalAvoidBound: the avoid trio, on wherever there are
	// rehearsal anchors, the gate and LoRA training (for the bound). On the
	// 1.5B student's french seed 2 under the protocol the gate
	// refused every step from v3 on for "What is the capital of
	// Germany?" → "La capitale de la France est Paris." (v2's 8 of 20
	// held-out answers at v8); with the trio the caught answers were
	// pushed down, v4 was served and the run gave 17 (the best setting's
	// 18; BENCHMARKS.md, "The avoid trio by default"). It acts only on
	// what the gate caught: a run with nothing caught is unchanged.
	DefaultRehearsalAvoid      = true
	DefaultRehearsalAvoidWrong = true
	DefaultRehearsalAvoidBound = 2.0
	// DefaultRehearsalAvoidPasses: 0, push a caught answer down on every
	// step (see BENCHMARKS.md, "Pushed down until the gate passes").
	DefaultRehearsalAvoidPasses = 0
	// DefaultGateRepairs: repair steps a rejected version gets
	// (--gate-repair; 0 until `clawrl bench learn` says otherwise).
	DefaultGateRepairs = 0
	// DefaultRetentionTokens: a candidate's answer to a retention fact in
	// the gate (the base answers that made the probes named the word within
	// retentionAnswerTokens).
	DefaultRetentionTokens = 48
	// DefaultGateLoops: open questions the gate asks (`--gate-loops`).
	// With --gate-backtrack, a step that made the 1.5B student loop its
	// sign-off was served at half its length instead, and signoff held
	// where it had collapsed (BENCHMARKS.md, "A gate that refuses loops").
	DefaultGateLoops = 4
	// gateOpenTokens bounds an answer to an open question in the gate
	// (`--gate-loops`): `clawrl bench learn`'s answer budget, within
	// which a looping sign-off says itself three times.
	gateOpenTokens = 64
)

// Parts are what Build joins: the served engine (its base weights judge and
// teach by default), the store, the data directory and the model folder the
// native trainer loads.
type Parts struct {
	Engine    engine.Engine
	Publisher engine.Publisher // nil: versions are recorded but not served
	Store     store.LearningStore
	Gate      *rl.Gate
	DataDir   string // versions go to DataDir/versions
	ModelDir  string // the Hugging Face folder to train; "" = no trainer
	// Model, when set, is the served in-process model: the trainer shares
	// its base weights (LoRA) instead of loading a second copy from ModelDir.
	Model   *model.Model
	Trainer rl.Trainer
	Log     *slog.Logger
}

// Build checks the settings and returns a runner ready to Start.
func (s Settings) Build(p Parts) (*Runner, error) {
	method, err := rl.ParseMethod(s.Method)
	if err != nil {
		return nil, err
	}
	if p.Log == nil {
		p.Log = slog.Default()
	}
	jcfg := judge.Config{EvalVotes: s.JudgeVotes, CallTimeout: s.JudgeTimeout, Retries: s.JudgeRetries, MaxTokens: s.JudgeTokens}
	if jcfg.EvalVotes <= 0 {
		jcfg.EvalVotes = method.DefaultVotes()
	}
	if s.JudgeRetries == 0 {
		jcfg.Retries = judge.NoRetries
	}
	jcfg.Verdict, jcfg.Calibration, jcfg.Threshold = judge.VerdictMode(s.JudgeVerdict), judge.Calibration(s.JudgeCalibration), s.JudgeThreshold
	switch jcfg.Verdict {
	case "", judge.VerdictPrefill, judge.VerdictVotes, judge.VerdictFewShot:
	default:
		return nil, fmt.Errorf("--judge-verdict %q: want fewshot, prefill or votes", s.JudgeVerdict)
	}
	switch jcfg.Calibration {
	case "", judge.CalibrateNeutral, judge.CalibrateRunning, judge.CalibrateNone:
	default:
		return nil, fmt.Errorf("--judge-calibration %q: want neutral, running or none", s.JudgeCalibration)
	}
	jcfg.HintTokens, jcfg.NoWrittenHints, jcfg.NoGeneratedHints = s.HintTokens, s.NoWrittenHints, s.NoGeneratedHints
	if jcfg.Written, err = judge.ParseWrittenHintMode(s.WrittenHint); err != nil {
		return nil, err
	}
	switch jcfg.NextHint = judge.NextHintMode(s.NextHint); jcfg.NextHint {
	case "", judge.NextHintCorrection, judge.NextHintAlways, judge.NextHintOff:
	default:
		return nil, fmt.Errorf("--next-hint %q: want correction, always or off", s.NextHint)
	}
	if _, err := rl.ParseBaseline(s.Baseline); err != nil {
		return nil, err
	}
	if s.BaselineClip < 0 || math.IsNaN(s.BaselineClip) {
		return nil, fmt.Errorf("--baseline-clip %g: want ≥ 0 (0: unbounded)", s.BaselineClip)
	}
	if !(s.HoldLiked >= 0 && s.HoldLiked <= 1) {
		return nil, fmt.Errorf("--hold-liked %g: want a share in [0, 1] (0: off)", s.HoldLiked)
	}
	if s.HoldMinRated < 0 {
		return nil, fmt.Errorf("--hold-min-rated %d: want ≥ 0", s.HoldMinRated)
	}
	if s.HoldKeepsDisliked && s.HoldLiked == 0 {
		return nil, fmt.Errorf("--hold-keep-disliked: keeps a held step's 👎s, so it needs --hold-liked")
	}
	if !(s.RollbackDrop >= 0 && s.RollbackDrop <= 1) {
		return nil, fmt.Errorf("--rollback-drop %g: want a share in [0, 1] (0: off)", s.RollbackDrop)
	}
	if !(s.RollbackAlpha >= 0 && s.RollbackAlpha <= 1) {
		return nil, fmt.Errorf("--rollback-alpha %g: want a probability in (0, 1] (0: the default, 0.01)", s.RollbackAlpha)
	}
	if s.HoldTrainsDisliked && s.HoldLiked == 0 {
		return nil, fmt.Errorf("--hold-train-disliked: trains a held step's 👎s, so it needs --hold-liked")
	}
	if s.HoldTrainsDisliked && s.HoldKeepsDisliked {
		return nil, fmt.Errorf("--hold-train-disliked and --hold-keep-disliked: a held step's 👎s either train now or wait; choose one")
	}
	if s.BaselineWindow < 0 {
		return nil, fmt.Errorf("--baseline-window %d: want ≥ 1 (0: %d)", s.BaselineWindow, rl.DefaultRatingWindow)
	}
	switch s.OPDResponse {
	case "", "student", "teacher", "both":
	default:
		return nil, fmt.Errorf("--opd-response %q: want student, teacher or both", s.OPDResponse)
	}
	if s.Epochs < 0 {
		return nil, fmt.Errorf("--ppo-epochs %d: want ≥ 1", s.Epochs)
	}
	if s.TeacherConcurrency < 0 {
		return nil, fmt.Errorf("--teacher-concurrency %d: want ≥ 1 (0: the default, %d)", s.TeacherConcurrency, DefaultTeacherConcurrency)
	}
	if s.FirstEpochs < 0 {
		return nil, fmt.Errorf("--first-epochs %d: want ≥ 1 (0: as --ppo-epochs)", s.FirstEpochs)
	}
	if s.LRWarmup < 0 {
		return nil, fmt.Errorf("--lr-warmup %d: want ≥ 0", s.LRWarmup)
	}
	if s.FirstLR < 0 {
		return nil, fmt.Errorf("--first-lr %g: want > 0 (0: --lr)", s.FirstLR)
	}
	if s.DistillCoef < 0 {
		return nil, fmt.Errorf("--distill-coef %g: want ≥ 0", s.DistillCoef)
	}
	if s.DistillFocus < 0 || math.IsNaN(s.DistillFocus) {
		return nil, fmt.Errorf("--distill-focus %g: want ≥ 0", s.DistillFocus)
	}
	if s.MomentumReset != "" {
		if _, err := rl.ParseMomentumReset(s.MomentumReset); err != nil {
			return nil, fmt.Errorf("--momentum-reset: %w", err)
		}
	}
	if s.LossMean != "" {
		if _, err := rl.ParseLossMean(s.LossMean); err != nil {
			return nil, fmt.Errorf("--loss-mean: %w", err)
		}
	}
	if s.RehearsalScale != "" {
		if _, err := rl.ParseAnchorScale(s.RehearsalScale); err != nil {
			return nil, fmt.Errorf("--rehearsal-scale: %w", err)
		}
	}
	if s.RehearsalFollowHint && (s.Rehearsal == 0 && s.GateRepairs == 0 || !method.WantsHint()) {
		return nil, fmt.Errorf("--rehearsal-follow-hint rehearses anchors under the hint: it needs --rehearsal > 0 (or --gate-repair) and a method that uses hints, not --rehearsal %d --method %s", s.Rehearsal, method)
	}
	s.dropInapplicableAvoid()
	if s.RehearsalAvoid && (s.Rehearsal == 0 || s.NoRetentionGate) {
		return nil, errors.New("--rehearsal-avoid pushes down answers the retention gate caught beside the rehearsal anchors: it needs --rehearsal > 0 and the gate")
	}
	if s.RehearsalAvoidWrong && !s.RehearsalAvoid {
		return nil, errors.New("--rehearsal-avoid-wrong widens what --rehearsal-avoid pushes down: it needs --rehearsal-avoid")
	}
	if s.RehearsalAvoidBound < 0 || s.RehearsalAvoidBound > 0 && (!s.RehearsalAvoid || train.Mode(s.TrainMode) == train.ModeFull) {
		return nil, fmt.Errorf("--rehearsal-avoid-bound %g: want ≥ 0, with --rehearsal-avoid and LoRA training (the bound is read against the base weights)", s.RehearsalAvoidBound)
	}
	if s.RehearsalAvoidRelative && s.RehearsalAvoidBound == 0 {
		return nil, errors.New("--rehearsal-avoid-relative reads --rehearsal-avoid-bound against where an answer's pushes began: it needs --rehearsal-avoid-bound > 0 (and with it --rehearsal-avoid and LoRA training)")
	}
	if s.RehearsalAvoidPasses < 0 || s.RehearsalAvoidPasses > 0 && !s.RehearsalAvoid {
		return nil, fmt.Errorf("--rehearsal-avoid-passes %d: want ≥ 0, with --rehearsal-avoid", s.RehearsalAvoidPasses)
	}
	if s.GateAnswers && s.GateLoops == 0 {
		return nil, fmt.Errorf("--gate-answers asks the --gate-loops questions: want --gate-loops ≥ 1")
	}
	if s.GateLoops < 0 {
		return nil, fmt.Errorf("--gate-loops %d: want ≥ 0", s.GateLoops)
	}
	if s.Rehearsal < 0 {
		return nil, fmt.Errorf("--rehearsal %d: want ≥ 0", s.Rehearsal)
	}
	switch judge.FeedbackMode(s.Feedback) {
	case judge.FeedbackDecides, judge.FeedbackVotes, "":
		jcfg.Feedback = judge.FeedbackMode(s.Feedback)
	default:
		return nil, fmt.Errorf("--feedback %q: want decide or vote", s.Feedback)
	}
	var backend judge.Backend
	switch {
	case s.JudgeURL != "":
		if s.JudgeModel == "" {
			return nil, errors.New("--judge-url needs --judge-model")
		}
		key := s.JudgeKey
		if key == "" {
			key = os.Getenv("CLAWRL_JUDGE_KEY") // keeps the key off the command line
		}
		backend = &judge.HTTPBackend{URL: s.JudgeURL, Model: s.JudgeModel, Key: key, Client: &http.Client{}}
	case p.Engine != nil:
		backend = &judge.EngineBackend{Engine: p.Engine, Adapter: engine.AdapterBase}
	case method != rl.MethodOff:
		return nil, errors.New("no judge: give --judge-url or an engine")
	}
	var teacher *judge.Teacher
	if method.WantsHint() {
		if p.Engine == nil {
			return nil, fmt.Errorf("method %s needs an engine for the teacher", method)
		}
		switch s.Teacher {
		case "policy", "":
			teacher = &judge.Teacher{Engine: p.Engine, Adapter: engine.AdapterCurrent}
		case "base":
			teacher = &judge.Teacher{Engine: p.Engine, Adapter: engine.AdapterBase}
		default:
			return nil, fmt.Errorf("--teacher %q: want policy or base", s.Teacher)
		}
		if teacher.Placement, err = judge.ParseHintPlacement(s.HintPlacement); err != nil {
			return nil, fmt.Errorf("--hint-placement: %w", err)
		}
		if teacher.Remote, err = s.RemoteTeacher.build(s.OPDResponse, p.Log); err != nil {
			return nil, err
		}
		if teacher.Remote != nil && teacher.Placement == judge.HintAsContinuation {
			return nil, errors.New("--hint-placement continue: a --teacher-url model cannot continue the policy's answer through a chat API")
		}
		if teacher.Placement == judge.HintMixed && s.TeacherSamples.Samples < 2 {
			// (that the teacher writes at all is TeacherSamples.check's rule)
			return nil, fmt.Errorf("--hint-placement mixed writes a turn's answers under two placements and lets the selector pick: it needs --teacher-samples ≥ 2, not %d", s.TeacherSamples.Samples)
		}
	}
	s.TeacherSamples.dropInapplicableRetry(s.OPDResponse)
	if err := s.TeacherSamples.check(s.OPDResponse); err != nil {
		return nil, err
	}
	selector, err := s.TeacherSamples.selector(backend, s.JudgeTimeout)
	if err != nil {
		return nil, err
	}
	trainer := p.Trainer
	if trainer == nil && (p.Model != nil || p.ModelDir != "") && method != rl.MethodOff {
		if trainer, err = s.trainer(p.Model, p.ModelDir, p.Log); err != nil {
			return nil, err
		}
	}
	o := Options{Store: p.Store, Teacher: teacher, Trainer: trainer, Publisher: p.Publisher, Gate: p.Gate, Log: p.Log,
		Config: Config{Method: method, TeacherWrites: s.OPDResponse == "teacher", TeacherAlsoWrites: s.OPDResponse == "both", TeacherTokens: s.TeacherTokens, TeacherConcurrency: s.TeacherConcurrency, Train: rl.SchedulerConfig{BatchSize: s.BatchSize, MaxStaleness: s.MaxStaleness,
			VersionsDir: filepath.Join(p.DataDir, "versions"), HoldLiked: s.HoldLiked, HoldMinRated: s.HoldMinRated, HoldKeepsDisliked: s.HoldKeepsDisliked, HoldTrainsDisliked: s.HoldTrainsDisliked,
			RollbackDrop: s.RollbackDrop, RollbackAlpha: s.RollbackAlpha}}}
	if rl.Baseline(s.Baseline) == rl.BaselineRunning {
		o.Config.Train.RunningBaseline = cmp.Or(s.BaselineWindow, rl.DefaultRatingWindow)
		o.Config.Train.RunningClip = s.BaselineClip
	}
	o.Selector, o.Config.TeacherSamples, o.Config.TeacherTemperature = selector, s.TeacherSamples.Samples, s.TeacherSamples.Temperature
	o.Config.TeacherSelect, o.Config.TeacherSelectThreshold = s.TeacherSamples.Select, s.TeacherSamples.Threshold
	o.Config.TeacherGainBy, o.Config.TeacherSelectLength = s.TeacherSamples.GainBy, s.TeacherSamples.Length
	o.Config.TeacherFitShare = s.TeacherSamples.FitShare
	o.Config.TeacherSelectRelevance, o.Config.TeacherSelectQuoted = s.TeacherSamples.Relevance, s.TeacherSamples.Quoted
	o.Config.TeacherSelectOpening, o.Config.TeacherQuotedRetry = s.TeacherSamples.Opening, s.TeacherSamples.QuotedRetry
	o.Config.TeacherFitRetry = s.TeacherSamples.FitRetry
	o.Config.TeacherFitScope = s.TeacherSamples.FitScope
	o.Config.TeacherLoops = s.TeacherSamples.loops()
	_, answers := trainer.(rl.Answerer)
	_, scores := trainer.(rl.Evaluator)
	if (answers || scores) && !s.NoRetentionGate && p.Engine != nil {
		eng := p.Engine
		f := eng.Format()
		o.Config.Train.Retention = &rl.RetentionConfig{MaxLost: s.RetentionMaxLost, MaxMeanDrop: s.RetentionMaxDrop, Shrinks: s.RetentionShrinks, Repairs: s.GateRepairs,
			Decode: f.Decode, Stop: f.StopIDs(), MaxTokens: s.RetentionTokens,
			Build: func(ctx context.Context) ([]rl.Probe, error) { return RetentionProbes(ctx, eng, DefaultFacts) }}
		if n := min(s.GateLoops, len(DefaultOpen)); n > 0 {
			r := o.Config.Train.Retention
			r.OpenTokens = gateOpenTokens
			r.OpenAnswered = s.GateAnswers
			r.BuildOpen = func(ctx context.Context) ([]rl.Probe, error) {
				return OpenProbes(ctx, eng, DefaultOpen[:n], OpenTopics, gateOpenTokens)
			}
		}
	}
	if r, ok := trainer.(interface{ SetRehearsal(*rl.Rehearsal) }); ok && (s.Rehearsal > 0 || s.GateRepairs > 0) && p.Engine != nil {
		eng, tokens, log := p.Engine, s.RehearsalTokens, p.Log
		var follow func(context.Context, string, rl.Anchor) (rl.Anchor, bool, error)
		if s.RehearsalFollowHint {
			ask, f := FollowAnchor(teacher, tokens, DefaultFacts), eng.Format()
			follow = func(ctx context.Context, hint string, a rl.Anchor) (rl.Anchor, bool, error) {
				b, ok, err := ask(ctx, hint, a)
				switch {
				case err != nil:
					log.Warn("rehearsal anchor under the hint: the teacher failed", "question", a.Name, "err", err)
				case ok:
					log.Info("rehearsal anchor under the hint", "question", a.Name, "base", f.Decode(a.AnswerIDs), "answer", f.Decode(b.AnswerIDs))
				default:
					log.Info("rehearsal anchor sits the hint out", "question", a.Name, "base", f.Decode(a.AnswerIDs), "answer", f.Decode(b.AnswerIDs))
				}
				return b, ok, err
			}
		}
		reh := rl.NewRehearsal(rl.RehearsalConfig{PerBatch: s.Rehearsal, Repair: s.GateRepairs > 0, Weight: s.RehearsalWeight, Follow: follow, AvoidBound: s.RehearsalAvoidBound, AvoidRelative: s.RehearsalAvoidRelative, Avoids: s.RehearsalAvoid, AvoidPasses: s.RehearsalAvoidPasses,
			Build: func(ctx context.Context) ([]rl.Anchor, error) {
				a, err := RehearsalAnchors(ctx, eng, DefaultRehearsal, tokens, DefaultFacts)
				switch {
				case err == nil && len(a) == 0:
					log.Warn("no rehearsal anchors: every answer named a retention fact; training without them", "questions", len(DefaultRehearsal))
				case err == nil:
					log.Info("rehearsal anchors ready", "anchors", len(a), "questions", len(DefaultRehearsal), "per_step", s.Rehearsal)
				}
				return a, err
			}})
		r.SetRehearsal(reh)
		if s.RehearsalAvoid && o.Config.Train.Retention != nil {
			f := eng.Format()
			o.Config.Train.Retention.Caught = func(p rl.Probe, answer []int32) {
				answer = answer[:min(len(answer), tokens)]
				text := f.Decode(answer)
				if avoidable(p.Name, text, s.RehearsalAvoidWrong) && reh.Avoided() < maxAvoided && reh.Avoid(answer) {
					log.Info("rehearsal: an answer the gate caught is pushed down from now on", "question", p.Name, "answer", text)
				}
			}
			o.Config.Train.Retention.Passed = func(version int64) {
				if n := reh.Passed(); n > 0 {
					log.Info("rehearsal: answers the gate caught are pushed down no more", "version", version, "retired", n, "left", reh.Avoided())
				}
			}
		}
	}
	if backend != nil {
		o.Judge = judge.New(backend, jcfg, p.Log.With("part", "judge"))
	}
	return New(o)
}

// nativeTrainer builds the Go trainer over the served model m (sharing its
// base weights in LoRA mode; full mode trains a private copy), or over the
// checkpoint in modelDir when the engine runs elsewhere.
func (s Settings) nativeTrainer(m *model.Model, modelDir string) (rl.Trainer, error) {
	var w *train.Weights
	var err error
	if m != nil {
		w, err = train.FromModel(m, train.Mode(s.TrainMode) == train.ModeFull)
	} else {
		w, err = train.LoadWeights(modelDir)
	}
	if err != nil {
		return nil, fmt.Errorf("trainer: %w", err)
	}
	cfg := s.trainConfig()
	if cfg.Precision, err = train.ParsePrecision(s.TrainPrecision); err != nil {
		return nil, fmt.Errorf("--train-precision: %w", err)
	}
	tr, err := train.New(w, cfg)
	if err != nil {
		return nil, fmt.Errorf("trainer: %w", err)
	}
	step, err := s.stepConfig()
	if err != nil {
		return nil, err
	}
	return rl.NewNativeTrainer(tr, step), nil
}

// trainConfig is the trainer configuration the flags ask for (either
// backend).
func (s Settings) trainConfig() train.Config {
	cfg := train.Config{Mode: train.Mode(s.TrainMode), MicroBatchTokens: s.MicroTokens, Recompute: s.Recompute,
		ActivationBudget: train.BudgetFromMiB(s.ActivationMiB)}
	if cfg.Mode == train.ModeLoRA || cfg.Mode == "" {
		cfg.LoRA = train.DefaultLoRA()
		if s.LoRARank > 0 {
			cfg.LoRA.Rank, cfg.LoRA.Alpha = s.LoRARank, 2*float64(s.LoRARank)
		}
		if len(s.LoRATargets) > 0 {
			cfg.LoRA.TargetModules = s.LoRATargets
		}
	}
	lr := s.LearningRate
	if lr <= 0 && cfg.Mode != train.ModeFull {
		lr = DefaultLoRALearningRate
	}
	if lr > 0 {
		cfg.AdamW = train.DefaultAdamW(lr)
	}
	cfg.AdamW.Warmup = s.LRWarmup
	if s.FirstLR > 0 {
		cfg.AdamW.FirstLR, cfg.AdamW.FirstSteps = s.FirstLR, s.FirstEpochs
		if cfg.AdamW.FirstSteps <= 0 {
			cfg.AdamW.FirstSteps = max(s.Epochs, 1)
		}
	}
	return cfg
}

// stepConfig is the advantage and loss configuration the flags ask for.
func (s Settings) stepConfig() (rl.StepConfig, error) {
	step := rl.DefaultStepConfig()
	step.Advantage.WRL, step.Advantage.WOPD = s.WRL, s.WOPD
	var err error
	if step.Advantage.Baseline, err = rl.ParseBaseline(s.Baseline); err != nil {
		return step, err
	}
	step.Advantage.OPDClip = s.OPDClip
	step.Loss.KLCoef = s.KLCoef
	step.Epochs, step.FirstEpochs = s.Epochs, s.FirstEpochs
	if s.MomentumReset != "" { // unset: the default (rl.DefaultStepConfig)
		if step.MomentumReset, err = rl.ParseMomentumReset(s.MomentumReset); err != nil {
			return step, fmt.Errorf("--momentum-reset: %w", err)
		}
	}
	if s.LossMean != "" { // unset: the token mean
		if step.LossMean, err = rl.ParseLossMean(s.LossMean); err != nil {
			return step, fmt.Errorf("--loss-mean: %w", err)
		}
	}
	if s.RehearsalScale != "" { // unset: fixed
		if step.AnchorScale, err = rl.ParseAnchorScale(s.RehearsalScale); err != nil {
			return step, fmt.Errorf("--rehearsal-scale: %w", err)
		}
	}
	if s.DistillCoef < 0 {
		return step, fmt.Errorf("--distill-coef %g: want ≥ 0", s.DistillCoef)
	}
	step.DistillCoef = s.DistillCoef
	if s.DistillFocus < 0 || math.IsNaN(s.DistillFocus) {
		return step, fmt.Errorf("--distill-focus %g: want ≥ 0", s.DistillFocus)
	}
	step.DistillFocus = s.DistillFocus
	return step, nil
}

// dropInapplicableAvoid turns off the avoid trio's defaults where they
// cannot apply: pushing down the gate's catches beside the rehearsal
// anchors needs both, and the bound is read against the base weights
// (LoRA); in full training, where no bound can be read, the push-down is
// not on by default either (unbounded, it taught the 0.5B student "The
// sky on a clear day is white.", BENCHMARKS.md, "The caught refusal
// pushed down under `main`"). A value given stays, and Build rejects it
// where it cannot apply.
func (s *Settings) dropInapplicableAvoid() {
	full := train.Mode(s.TrainMode) == train.ModeFull
	if s.avoidByDefault.avoid && (s.Rehearsal == 0 || s.NoRetentionGate || full && s.avoidByDefault.bound) {
		s.RehearsalAvoid = false
	}
	if s.avoidByDefault.wrong && !s.RehearsalAvoid {
		s.RehearsalAvoidWrong = false
	}
	if s.avoidByDefault.bound && (!s.RehearsalAvoid || full) {
		s.RehearsalAvoidBound = 0
	}
	if s.avoidByDefault.passes && !s.RehearsalAvoid {
		s.RehearsalAvoidPasses = 0
	}
}

// markGiven wraps fs's flag name so that setting it clears *byDefault,
// set here: Build can then tell a default from a value given.
func markGiven(fs *pflag.FlagSet, name string, byDefault *bool) {
	*byDefault = true
	f := fs.Lookup(name)
	f.Value = givenValue{f.Value, byDefault}
}

type givenValue struct {
	pflag.Value
	byDefault *bool
}

func (g givenValue) Set(v string) error {
	*g.byDefault = false
	return g.Value.Set(v)
}
