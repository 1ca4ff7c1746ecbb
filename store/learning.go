package store

import (
	"context"
	"time"
)

// This file extends the Store with what the learning loop keeps: judgments,
// training samples and published policy versions. Each state change of a
// turn happens in the same transaction as the row that justifies it, so a
// crash never leaves a turn judged without its judgment, or trained without
// the version that trained it.

// Vote is one judge vote, raw text included.
type Vote struct {
	Kind   string // VoteEval (score) or VoteHint (hindsight)
	Source string // "judge" or "feedback"
	Score  int    // −1, 0 or +1; 0 when invalid
	Valid  bool   // a \boxed{} value was found
	Hint   string // the hint the vote wrote, if any
	Raw    string // the judge's whole answer
	Err    string // why the vote failed (timeout, HTTP status, …)
}

// Vote kinds.
const (
	VoteEval = "eval" // did the answer serve the user? \boxed{-1|0|1}
	VoteHint = "hint" // does the next state reveal a better answer? \boxed{1} + hint
)

// Judgment is the judge's verdict on one turn.
type Judgment struct {
	TurnID       string
	SessionID    string
	Score        int // majority of the valid eval votes; tie or none → 0
	Votes        []Vote
	Hint         string // the longest hint of the positive hint votes
	HintAccepted bool
	Judge        string // which backend judged (engine:base, http:model, feedback, …)
	Reason       string // how the score came about (majority, tie, feedback, judge unavailable: …)
	// Keep says whether the turn becomes a sample under the training method;
	// Why says why or why not. A turn that is not kept stays judged until its
	// session ends, when the at-least-one rule may still keep it.
	Keep      bool
	Why       string
	CreatedAt time.Time
	RevisedAt time.Time // zero unless explicit feedback revised it
}

// Sample is a training sample recorded for a turn. The token ids and
// behaviour logprobs stay on the turn; the sample adds the training terms.
type Sample struct {
	TurnID          string
	SessionID       string
	Method          string
	UseRL           bool
	Reward          float64
	TeacherLogprobs []float32 // nil without the OPD term
	TeacherAdapter  string    // the adapter the teacher ran on
	TeacherVersion  int64
	// TeacherResponseIDs, when set, is the response the teacher wrote with
	// the hint in context; the sample trains on it (with TeacherLogprobs,
	// one per id) instead of the turn's own response. nil = the turn's.
	// With both (loop's --opd-response both) TeacherLogprobs holds the
	// teacher's logprobs of the turn's own response followed by those of
	// TeacherResponseIDs, and the sample trains on the two (rl.FromStore).
	TeacherResponseIDs []int32
	PolicyVersion      int64  // the version that generated the turn
	Why                string // why the turn became a sample
	CreatedAt          time.Time
	TrainedVersion     int64 // 0 until a version trained on it
}

// VersionMetrics are a trainer step's numbers, kept with the version.
type VersionMetrics struct {
	Loss                 float64 `json:"loss"`
	MeanReward           float64 `json:"mean_reward"`
	Samples              int     `json:"samples"`       // trained on
	DroppedStale         int     `json:"dropped_stale"` // refused as too stale
	RLSamples            int     `json:"rl_samples"`
	OPDSamples           int     `json:"opd_samples"`
	Tokens               int     `json:"tokens"`
	ClipFraction         float64 `json:"clip_fraction"`
	KL                   float64 `json:"kl"`
	Entropy              float64 `json:"entropy"`
	StalenessMean        float64 `json:"staleness_mean"`
	StalenessMax         int64   `json:"staleness_max"`
	ImportanceWeightMean float64 `json:"importance_weight_mean"`
	ImportanceWeightMax  float64 `json:"importance_weight_max"`
	ImportanceTruncated  float64 `json:"importance_truncated"`
	StepNanos            int64   `json:"step_nanos"`
	// The retention check (eval-gated promotion): the mean log-probability
	// of the retention answers under this version and under the base
	// weights, and how many of the checked facts it lost.
	RetentionFacts   int     `json:"retention_facts,omitempty"`
	RetentionLost    int     `json:"retention_lost,omitempty"`
	RetentionLogprob float64 `json:"retention_logprob,omitempty"`
	RetentionBase    float64 `json:"retention_base,omitempty"`
	// StepScale is the fraction of the trainer's step the version holds:
	// 1 for the full step, 1/2, 1/4… when the gate backtracked (a shrunk
	// step passed where the full one lost facts), times the 👎s' share of
	// a full step for a held step that trained them alone
	// (--hold-train-disliked). 0: not gated and not thinned.
	StepScale float64 `json:"step_scale,omitempty"`
	// Repairs is how many repair steps on the rehearsal anchors the gate
	// took after the trainer's step lost a fact (--gate-repair); the saved
	// weights hold them, shrunk with the step when it backtracked too.
	Repairs int `json:"repairs,omitempty"`
	// Unfocused: the gate rejected the step with --distill-focus, and the
	// version holds the same batch's step without it (rl.Focuser).
	Unfocused bool `json:"unfocused,omitempty"`
	// The running reward baseline (--baseline running, rl.RatingMean):
	// the mean subtracted from this step's rewards, and the running sum
	// and weight of the ratings with this step's added, from which the
	// next step (after a restart too) goes on.
	RewardBaseline float64 `json:"reward_baseline,omitempty"`
	RatingSum      float64 `json:"rating_sum,omitempty"`
	RatingWeight   float64 `json:"rating_weight,omitempty"`
	// The users' verdict on the weights this version was trained from
	// (--rollback-drop): TrainedFrom is that version (the one served when
	// its step began, or the earlier one a rollback went back to; 0: the
	// base), and its users liked ParentLiked of the ParentRated answers
	// they rated (0 rated: not counted). RolledBack, when set, is the
	// served version whose update the step dropped: it was trained from
	// the version before that one.
	TrainedFrom int64 `json:"trained_from,omitempty"`
	ParentLiked int   `json:"parent_liked,omitempty"`
	ParentRated int   `json:"parent_rated,omitempty"`
	RolledBack  int64 `json:"rolled_back,omitempty"`
}

// Version statuses.
const (
	VersionPromoted = "promoted" // passed the retention check; served
	VersionRejected = "rejected" // regressed; recorded, never served
)

// Version is a trained policy version.
type Version struct {
	Version   int64
	Dir       string // the adapter directory (PEFT layout + optimizer state)
	Method    string
	Metrics   VersionMetrics
	CreatedAt time.Time
	// Status is VersionPromoted or VersionRejected ("" reads as promoted);
	// StatusReason says why (the retention numbers, or who asked).
	Status       string
	StatusReason string
	// SourceVersion, when set, says this version is a copy of an earlier
	// one, recorded to serve it again (promote or rollback by hand).
	SourceVersion int64
}

// ServingRequest is a person's request to serve an earlier version
// (`clawrl versions promote|rollback N`), carried out by the train loop.
type ServingRequest struct {
	ID          int64
	Version     int64
	Action      string // "promote" or "rollback"
	RequestedAt time.Time
	DoneAt      time.Time // zero while pending
	Result      string
}

// LearningStats summarises the learning loop for `clawrl status` and /metrics.
type LearningStats struct {
	Judgments     int
	HintsAccepted int
	SamplesReady  int
	// SamplesPending counts judged turns kept for training whose sample is
	// not built yet: mostly the teacher's work waiting.
	SamplesPending int
	SamplesTotal   int
	Trained        int
	DroppedBy      map[string]int // drop reason → turns
	Versions       int
	Latest         *Version
}

// Learning is the learning loop's part of the Store.
type Learning interface {
	// RecordJudgment stores j and moves its turn observed → judged, in one
	// transaction. ErrConflict if the turn is in another state (already
	// judged: a restarted judge redoes nothing).
	RecordJudgment(ctx context.Context, j Judgment) error
	// Judgment returns a turn's judgment, or ErrNotFound.
	Judgment(ctx context.Context, turnID string) (Judgment, error)
	ListJudgments(ctx context.Context, f TurnFilter) ([]Judgment, error)

	// OutdatedByFeedback returns judgments of main turns, not yet trained
	// (judged or ready), whose explicit feedback rating arrived after the
	// judgment was made or last revised.
	OutdatedByFeedback(ctx context.Context, limit int) ([]Judgment, error)
	// ReviseJudgment rewrites a judgment in light of later feedback (score,
	// votes, reason, keep, why; RevisedAt set to now) and, when the turn is
	// ready, its sample's RL term and why — in one transaction. A
	// teacher-written sample (TeacherResponseIDs set) keeps its RL term
	// off: the rating is of the policy's response, not of the teacher's
	// tokens it trains on. ErrConflict if the turn is no longer judged or
	// ready.
	ReviseJudgment(ctx context.Context, j Judgment, useRL bool, reward float64, sampleWhy string) error

	// JudgedToSample returns judgments of turns still judged whose judgment
	// says Keep: the sample is not built yet (teacher pending, or a crash).
	// The newest come first: a teacher slower than the ratings then works
	// on the turns the served policy wrote last, and the older ones go
	// stale (rl.Scheduler.RefuseStale) instead of being taught first.
	JudgedToSample(ctx context.Context, limit int) ([]Judgment, error)

	// AddSample stores s and moves its turn judged → ready in one
	// transaction. ErrConflict if the turn is not judged.
	AddSample(ctx context.Context, s Sample) error
	// DropTurn moves a turn that is not yet trained to dropped with reason.
	DropTurn(ctx context.Context, turnID, reason string) error
	// ReadySamples returns up to limit samples whose turns are ready, oldest
	// first, together with their turns.
	ReadySamples(ctx context.Context, limit int) ([]Sample, []Turn, error)
	ListSamples(ctx context.Context, f TurnFilter) ([]Sample, error)

	// CommitVersion, in one transaction, records v, marks the turns trained
	// (ready → trained, sample.TrainedVersion = v) and the stale ones dropped.
	// It fails with ErrConflict, changing nothing, if any trained turn is no
	// longer ready or v is not newer than the latest version.
	CommitVersion(ctx context.Context, v Version, trained []string, stale []string, staleReason string) error
	// LatestVersion returns the newest version, or ErrNotFound.
	LatestVersion(ctx context.Context) (Version, error)
	// ServedVersion returns the newest promoted version (the one the engine
	// serves), or ErrNotFound when none was promoted.
	ServedVersion(ctx context.Context) (Version, error)
	Versions(ctx context.Context, limit int) ([]Version, error)

	// RequestServing queues a request to serve version v again; ErrNotFound
	// if v was never recorded.
	RequestServing(ctx context.Context, v int64, action string) (ServingRequest, error)
	// PendingServing returns the oldest request not carried out yet, or
	// ErrNotFound.
	PendingServing(ctx context.Context) (ServingRequest, error)
	// CommitServing, in one transaction, records v (a copy of an earlier
	// version; no samples) and marks request id done with result.
	CommitServing(ctx context.Context, id int64, v Version, result string) error
	// FailServing marks request id done without a version.
	FailServing(ctx context.Context, id int64, result string) error

	// SessionsToSettle returns expired sessions with no main turn waiting for
	// the judge (observed) and at least one judged main turn that was not
	// kept: the at-least-one rule decides what becomes of those.
	SessionsToSettle(ctx context.Context, limit int) ([]string, error)

	LearningStats(ctx context.Context) (LearningStats, error)
}

// LearningStore is a Store with the learning loop's extension.
type LearningStore interface {
	Store
	Learning
}
