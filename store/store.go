// Package store defines where clawrl keeps everything it records: sessions,
// turns and the state machine that carries a turn from generated to trained
// (DESIGN.md, "A turn's life"). Every transition is one transaction, so a
// crash at any point resumes where it stopped.
//
// store/sqlite is the embedded default. The gateway, the judge and the trainer
// only see the interfaces here; storetest holds the conformance suite every
// implementation must pass.
package store

import (
	"context"
	"errors"
	"time"

	"github.com/clawrl/clawrl/chat"
)

// ErrNotFound is returned when a session, turn or version does not exist.
var ErrNotFound = errors.New("store: not found")

// ErrConflict is returned when a transition does not apply to the row's
// current state (for example observing a turn that already expired), or when
// a create would duplicate a unique key (a turn id, a session key).
var ErrConflict = errors.New("store: state conflict")

// TurnType says whether a turn is trained (main) or only served (side).
type TurnType string

const (
	Main TurnType = "main"
	Side TurnType = "side"
)

// TurnState is a turn's place in the state machine.
type TurnState string

const (
	Generated TurnState = "generated" // answered, waiting for its next state
	Observed  TurnState = "observed"  // next state known, waiting for the judge
	Expired   TurnState = "expired"   // session went idle with no next state
	Judged    TurnState = "judged"    // score (and maybe a hint) known
	Ready     TurnState = "ready"     // a training sample exists
	Trained   TurnState = "trained"   // used by a trainer step
	Dropped   TurnState = "dropped"   // will never be trained; DropReason says why
)

// TurnStates lists every state in the order of a turn's life.
func TurnStates() []TurnState {
	return []TurnState{Generated, Observed, Expired, Judged, Ready, Trained, Dropped}
}

// CanTransition reports whether the state machine allows from → to. It is the
// one table every implementation enforces (store/sqlite mirrors it in a
// trigger, so no code path can skip it).
//
// Beyond DESIGN.md's arrows: any state before trained may be dropped (a side
// turn, a prompt too long to train, a sample too stale); an expired turn may
// still become observed, but only through explicit feedback (AddFeedback),
// because a thumbs-up that arrives after the idle timeout is still a signal.
func CanTransition(from, to TurnState) bool {
	switch from {
	case Generated:
		return to == Observed || to == Expired || to == Dropped
	case Expired:
		return to == Observed || to == Dropped
	case Observed:
		return to == Judged || to == Dropped
	case Judged:
		return to == Ready || to == Dropped
	case Ready:
		return to == Trained || to == Dropped
	}
	return false
}

// NextState kinds: what followed a turn.
const (
	NextUser     = "user"     // the user's reply
	NextTool     = "tool"     // tool results
	NextFeedback = "feedback" // explicit /v1/feedback
)

// Session is one conversation.
type Session struct {
	ID        string
	Key       string // the identity it was recognised by (header, body field, …)
	KeySource string // which precedence step matched: header, session_id, prompt_cache_key, user, history, new
	Epoch     int    // compaction epoch (OpenClaw's <id>:<n>)
	Client    string // the client software that started it (its User-Agent, shortened)
	CreatedAt time.Time
	LastSeen  time.Time
	Turns     int
	Expired   bool
}

// Feedback is an explicit rating of a turn.
type Feedback struct {
	Rating    int // +1 or -1 (0 = text only)
	Text      string
	CreatedAt time.Time
}

// Turn is one served completion with everything needed to train on it.
type Turn struct {
	ID        string // the completion id returned to the client (chatcmpl-…)
	Seq       int64  // the store's row order, assigned by InsertTurn; TurnFilter.AfterID pages on it
	SessionID string
	Index     int // 0-based position among the session's turns
	Type      TurnType
	Epoch     int
	State     TurnState
	CreatedAt time.Time

	Model      string
	Messages   []chat.Message // the request messages, as received (flattened)
	Tools      []chat.Tool
	PromptText string
	PromptIDs  []int32
	// ForcedText is the end of PromptText that the gateway appended to the
	// rendered template to enforce tool_choice (the opening of a tool call;
	// empty when nothing was forced). Its tokens end PromptIDs: the policy
	// did not sample them, so they are prompt, not response. Response holds
	// the whole call; the model's own text is ForcedText + ResponseText.
	ForcedText        string
	Response          chat.Message // the assistant message returned
	ResponseText      string       // the raw generated text (template markup included)
	ResponseIDs       []int32
	BehaviourLogprobs []float32 // one per response id, from the engine that sampled them
	PolicyVersion     int64
	Engine            string
	FinishReason      string
	PromptTokens      int
	CompletionTokens  int
	// MaxTokens is the token limit the response was generated under: the
	// request's max_tokens (or max_completion_tokens), the server's default
	// when it sent none, capped by the room the prompt left in the context
	// window. It counts response ids, a stop token included, so
	// len(ResponseIDs) <= MaxTokens, and FinishReason is "length" when the
	// limit cut the answer. 0: not known (turns recorded before it was kept).
	MaxTokens                                         int
	QueueNanos, PrefillNanos, DecodeNanos, TotalNanos int64
	// ConversationHash identifies (normalised request messages + response),
	// so a later request whose history extends it can be matched to it.
	ConversationHash string

	NextState     []chat.Message // what followed: the user's reply, tool results
	NextStateKind string
	ObservedAt    time.Time
	Feedback      *Feedback
	DropReason    string

	// Supersedes is only read by InsertTurn: the id of an earlier turn of
	// the same session and type that this one replaces, because this is the
	// same request again with nothing after that turn (a client retrying
	// after the gateway committed the turn and died before answering). In
	// the insert's transaction that turn, if still generated, is dropped
	// with DropReason SupersededBy(t.ID): kept, never trained, and never
	// left to expire as an orphan. A turn that moved on meanwhile (observed,
	// rated, expired) is left as it is.
	Supersedes string
}

// SupersededPrefix starts the drop reason of a turn a retry replaced. Its
// kind, the text before the first colon (LearningStats.DroppedBy, the
// turns_dropped metric's label), is "superseded": the id comes after the
// colon, so retries add no label per turn.
const SupersededPrefix = "superseded: by "

// SupersededBy is the drop reason of a turn that the turn id replaced.
func SupersededBy(id string) string {
	return SupersededPrefix + id + ", the same request again, nothing after it (a retry)"
}

// TurnFilter selects turns for listing and export.
type TurnFilter struct {
	SessionID string
	Type      TurnType // empty: any
	States    []TurnState
	Since     time.Time // CreatedAt at or after
	AfterID   int64     // keyset pagination: only turns with Seq > AfterID, in Seq order
	Limit     int       // 0: no limit
	Newest    bool      // the newest turns first (Seq descending); not with AfterID
}

// Stats is a summary for `clawrl status` and /metrics.
type Stats struct {
	Sessions        int
	ExpiredSessions int
	Turns           int
	TurnsByState    map[TurnState]int
	TurnsByType     map[TurnType]int
	// Queue depths of the learning loop, main turns only (side turns are
	// never judged or trained).
	AwaitingJudge   int   // main turns observed, not yet judged
	AwaitingTrainer int   // main turns ready, not yet trained
	PolicyVersion   int64 // the policy version of the newest recorded turn (versions only grow)
}

// Sessions finds and creates sessions.
type Sessions interface {
	// SessionByKey returns the session recognised by key, or ErrNotFound.
	SessionByKey(ctx context.Context, key string) (Session, error)
	// CreateSession records a new session; s.ID is set if empty.
	CreateSession(ctx context.Context, s *Session) error
	// TouchSession updates last-seen time and epoch.
	TouchSession(ctx context.Context, id string, seen time.Time, epoch int) error
	Session(ctx context.Context, id string) (Session, error)
	// TurnByConversationHash returns the turn whose request+response hash is h.
	TurnByConversationHash(ctx context.Context, h string) (Turn, error)
}

// Turns records turns and moves them through the state machine.
type Turns interface {
	// InsertTurn records a generated turn durably (before its response is
	// fully sent). t.Index is assigned. When t.Supersedes names a generated
	// turn of t's session and type, the same transaction drops it
	// (SupersededBy); anything else it names is left alone.
	InsertTurn(ctx context.Context, t *Turn) error
	Turn(ctx context.Context, id string) (Turn, error)
	// LastTurn returns the session's latest turn of the given type.
	LastTurn(ctx context.Context, sessionID string, typ TurnType) (Turn, error)
	// ObserveTurn attaches the next state: generated → observed.
	ObserveTurn(ctx context.Context, id string, next []chat.Message, kind string, at time.Time) error
	// AddFeedback attaches explicit feedback; a generated turn becomes observed.
	AddFeedback(ctx context.Context, id string, f Feedback) error
	// ExpireIdle marks every session whose last activity is before cutoff as
	// expired, and every turn of those sessions still waiting for its next
	// state (generated) as expired; it returns how many turns changed. A later
	// request with the same key continues the same session (TouchSession or
	// InsertTurn clears Expired); its expired turns stay expired.
	ExpireIdle(ctx context.Context, cutoff time.Time) (int, error)
	ListTurns(ctx context.Context, f TurnFilter) ([]Turn, error)
	Stats(ctx context.Context) (Stats, error)
}

// Transitioner is implemented by stores that move a turn along any arrow of
// the state machine (the judge and trainer use it for judged, ready, trained
// and dropped). from guards the move: a turn not in from gives ErrConflict.
// dropReason is recorded when to is Dropped.
type Transitioner interface {
	Transition(ctx context.Context, id string, from, to TurnState, dropReason string) error
}

// Annotator is an optional capability: a store that keeps more about turns
// than the Turn type (judgments, samples) returns it here, keyed by turn id
// and then by field name, and `clawrl export` adds those fields to each
// turn's record. Missing ids simply have nothing to add.
type Annotator interface {
	AnnotateTurns(ctx context.Context, turnIDs []string) (map[string]map[string]any, error)
}

// Reporter is an optional capability: a store that keeps learning-loop
// state (adapter versions, trainer steps, losses) summarises it for
// `clawrl status`, as named values.
type Reporter interface {
	Report(ctx context.Context) (map[string]any, error)
}

// Store is everything a clawrl process keeps.
type Store interface {
	Sessions
	Turns
	Close() error
}
