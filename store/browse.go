package store

import (
	"context"
	"strings"
	"time"
)

// This file is the read-only view the dashboard pages through (ui/). It is
// its own small interface so the loops' Store stays what they use; a store
// that keeps the learning loop's rows implements it too. Every listing pages
// by keyset (a cursor from the last row of the previous page), so a page of
// a store with 100k turns costs what a page of an empty one does.

// Client-given names. A session's Key is the identity it was recognised by;
// ClientID is that identity as the client spelled it.
const (
	userKeyPrefix = "user:" // session.Identify keeps a body `user` apart from conversation ids
	anonKeyPrefix = "anon:" // sessions the client named nowhere
)

// ClientID is the id the client gave the conversation (its X-Session-Id,
// OpenClaw's session id, the body's session_id or prompt_cache_key, or its
// `user`), or "" when it gave none and the session is only known by the
// history its requests repeat.
func (s Session) ClientID() string {
	switch {
	case s.Key == "", strings.HasPrefix(s.Key, anonKeyPrefix):
		return ""
	case s.KeySource == "user":
		return strings.TrimPrefix(s.Key, userKeyPrefix)
	}
	return s.Key
}

// Name is how people and exports refer to the session: the client's id, or
// the internal ID when the client gave none.
func (s Session) Name() string {
	if id := s.ClientID(); id != "" {
		return id
	}
	return s.ID
}

// SessionFilter selects sessions for the dashboard, most recently active
// first.
type SessionFilter struct {
	// Query keeps sessions whose key, client or internal id contains it
	// (case-insensitive for ASCII); empty keeps all.
	Query string
	// BeforeSeen and BeforeID continue after the last row of the previous
	// page: only sessions older in (LastSeen, ID) order. Zero: from the top.
	BeforeSeen time.Time
	BeforeID   string
	Limit      int // 0: no limit
}

// SessionSummary is a session with its turn counts.
type SessionSummary struct {
	Session
	MainTurns, SideTurns int
}

// TurnSummary is a turn's row without its payload (messages, token ids):
// what a listing of turns shows, with its judgment and sample at a glance.
type TurnSummary struct {
	ID               string
	Seq              int64
	SessionID        string
	Index            int
	Type             TurnType
	State            TurnState
	CreatedAt        time.Time
	PolicyVersion    int64
	FinishReason     string
	PromptTokens     int
	CompletionTokens int
	TotalNanos       int64
	Feedback         *Feedback
	DropReason       string
	// Preview is the start of the generated text (at most PreviewRunes).
	Preview string
	// Judged is true once a judgment exists; Score and HintAccepted are
	// its verdict.
	Judged       bool
	Score        int
	HintAccepted bool
	// TrainedVersion is the version that trained the turn's sample (0: none).
	TrainedVersion int64
}

// PreviewRunes bounds TurnSummary.Preview.
const PreviewRunes = 160

// Activity counts what the learning loop did since a time, for throughput.
type Activity struct {
	Since    time.Time
	Judged   int // judgments made
	Sampled  int // samples built
	Trained  int // samples trained, over the versions published
	Versions int // versions published
}

// Browser is the dashboard's read-only view of a store.
type Browser interface {
	// ListSessions returns sessions matching f, most recently active first.
	ListSessions(ctx context.Context, f SessionFilter) ([]SessionSummary, error)
	// ListTurnSummaries returns turns matching f in row order, as
	// ListTurns does, without their payloads.
	ListTurnSummaries(ctx context.Context, f TurnFilter) ([]TurnSummary, error)
	// Sample returns the turn's training sample, or ErrNotFound.
	Sample(ctx context.Context, turnID string) (Sample, error)
	// Activity counts judgments, samples and trained samples since a time.
	Activity(ctx context.Context, since time.Time) (Activity, error)
}
