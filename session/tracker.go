package session

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"sync"
	"time"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/store"
)

// maxAnchorLookups bounds the store lookups one request makes while looking
// for the turn its history extends (the latest assistant messages first).
const maxAnchorLookups = 16

// Tracker resolves sessions and pairs next states against a store. It is
// safe for concurrent use.
type Tracker struct {
	store store.Store
	log   *slog.Logger
	now   func() time.Time
	// Creating a session for a key is check-then-insert; requests for the
	// same key are serialised on one of these stripes.
	stripes [64]sync.Mutex
	// known caches sessions by key (id and epoch are what requests need),
	// saving a store read per request.
	knownMu sync.Mutex
	known   map[string]store.Session
}

// maxKnown bounds the session cache; it is emptied when full.
const maxKnown = 1 << 16

func (t *Tracker) cached(key string) (store.Session, bool) {
	t.knownMu.Lock()
	defer t.knownMu.Unlock()
	s, ok := t.known[key]
	return s, ok
}

func (t *Tracker) remember(s store.Session) {
	t.knownMu.Lock()
	defer t.knownMu.Unlock()
	if t.known == nil || len(t.known) >= maxKnown {
		t.known = make(map[string]store.Session)
	}
	t.known[s.Key] = s
}

// NewTracker returns a tracker over st.
func NewTracker(st store.Store, log *slog.Logger) *Tracker {
	if log == nil {
		log = slog.Default()
	}
	return &Tracker{store: st, log: log, now: time.Now}
}

// Request is what the tracker needs from a chat completion request.
type Request struct {
	Hints    Hints
	Messages []chat.Message
	Tools    []chat.Tool
}

// Begun is a request placed in its session.
type Begun struct {
	// Session may come from the tracker's cache: its ID, Key and Epoch are
	// current, its counters and times may not be.
	Session    store.Session
	Type       store.TurnType
	TypeReason string
	Epoch      int
	// Observed is the id of the earlier turn this request's history answered
	// (now observed), or "".
	Observed string
	// History is the request's conversation hash state: the recorded turn's
	// ConversationHash is History.TurnHash(response).
	History History
	// Supersedes is the id of the session's latest main turn when this
	// request repeats its request exactly and nothing has followed it yet
	// (a retry: the gateway committed that turn and died before answering,
	// or the client never received the answer); the turn recorded for this
	// request replaces it (store.Turn.Supersedes). "" otherwise.
	Supersedes string
}

// ErrBadHints wraps identity or turn-type values the client got wrong.
var ErrBadHints = errors.New("session: bad hints")

// Begin finds or creates the request's session, classifies its turn, and —
// for main turns — records the next state of the earlier turn the history
// answers.
func (t *Tracker) Begin(ctx context.Context, req Request) (Begun, error) {
	now := t.now()
	typ, reason, err := Classify(req.Hints, req.Messages, req.Tools)
	if err != nil {
		return Begun{}, fmt.Errorf("%w: %w", ErrBadHints, err)
	}
	id, explicit, err := Identify(req.Hints)
	if err != nil {
		return Begun{}, fmt.Errorf("%w: %w", ErrBadHints, err)
	}
	anchors, history := anchorsAndHistory(req.Messages)
	b := Begun{Type: typ, TypeReason: reason, Epoch: id.Epoch, History: history}
	if len(anchors) > maxAnchorLookups {
		anchors = anchors[:maxAnchorLookups]
	}

	var prev *store.Turn // the recorded turn this history extends
	var prevAt int
	if explicit {
		s, err := t.sessionByKey(ctx, id, ClientName(req.Hints.Header), now)
		if err != nil {
			return Begun{}, err
		}
		b.Session = s
		if typ == store.Main {
			last, err := t.lastMain(ctx, s.ID)
			if err != nil {
				return Begun{}, err
			}
			if last != nil && isRetryOf(last, req) {
				// The retry's history cannot extend its own lost answer;
				// the turn it extends is the one before.
				b.Supersedes, last = last.ID, nil
			}
			prev, prevAt, err = t.findPrevious(ctx, anchors, s.ID, last)
			if err != nil {
				return Begun{}, err
			}
		}
	} else {
		prev, prevAt, err = t.findPrevious(ctx, anchors, "", nil)
		if err != nil {
			return Begun{}, err
		}
		if prev != nil {
			s, err := t.store.Session(ctx, prev.SessionID)
			if err != nil {
				return Begun{}, fmt.Errorf("session %s of turn %s: %w", prev.SessionID, prev.ID, err)
			}
			b.Session = s
			b.Epoch = s.Epoch
			if typ == store.Main {
				last, err := t.lastMain(ctx, s.ID)
				if err != nil {
					return Begun{}, err
				}
				if last != nil && last.ID != prev.ID && isRetryOf(last, req) {
					b.Supersedes = last.ID
				}
			}
		} else {
			s := store.Session{Key: "anon:" + rand.Text(), KeySource: SourceNew, Client: ClientName(req.Hints.Header), CreatedAt: now, LastSeen: now}
			if err := t.store.CreateSession(ctx, &s); err != nil {
				return Begun{}, fmt.Errorf("create session: %w", err)
			}
			b.Session = s
		}
	}
	// An identity without an epoch (X-Session-Id, a bare OpenClaw id as on
	// its compaction request) keeps the session's. Inserting the turn marks
	// the session live; a write of its own is only needed when the epoch moved.
	if b.Epoch < 0 {
		b.Epoch = b.Session.Epoch
	}
	if b.Epoch != b.Session.Epoch {
		if err := t.store.TouchSession(ctx, b.Session.ID, now, b.Epoch); err != nil {
			return Begun{}, fmt.Errorf("touch session %s: %w", b.Session.ID, err)
		}
		b.Session.Epoch = b.Epoch
		if explicit {
			t.remember(b.Session)
		}
	}
	if typ == store.Main && prev != nil && prev.Type == store.Main && prev.State == store.Generated {
		next, kind := NextState(req.Messages, prevAt)
		if next != nil {
			err := t.store.ObserveTurn(ctx, prev.ID, next, kind, now)
			switch {
			case err == nil:
				b.Observed = prev.ID
			case errors.Is(err, store.ErrConflict):
				// Another request (a retry) observed it first, or it expired.
			default:
				return Begun{}, fmt.Errorf("observe turn %s: %w", prev.ID, err)
			}
		}
	}
	return b, nil
}

// sessionByKey returns the session named by id, creating it on first use.
func (t *Tracker) sessionByKey(ctx context.Context, id Identity, client string, now time.Time) (store.Session, error) {
	if s, ok := t.cached(id.Key); ok {
		return s, nil
	}
	// Known sessions (every request but a conversation's first) need no lock.
	if s, err := t.store.SessionByKey(ctx, id.Key); err == nil {
		t.remember(s)
		return s, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return store.Session{}, fmt.Errorf("session by key: %w", err)
	}
	h := fnv.New32a()
	h.Write([]byte(id.Key))
	mu := &t.stripes[h.Sum32()%uint32(len(t.stripes))]
	mu.Lock()
	defer mu.Unlock()
	for attempt := 0; ; attempt++ {
		s, err := t.store.SessionByKey(ctx, id.Key)
		if err == nil {
			t.remember(s)
			return s, nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return store.Session{}, fmt.Errorf("session by key: %w", err)
		}
		s = store.Session{Key: id.Key, KeySource: id.Source, Epoch: max(id.Epoch, 0), Client: client, CreatedAt: now, LastSeen: now}
		err = t.store.CreateSession(ctx, &s)
		if err == nil {
			t.remember(s)
			return s, nil
		}
		// Another process sharing the store may have created it meanwhile.
		if !errors.Is(err, store.ErrConflict) || attempt > 0 {
			return store.Session{}, fmt.Errorf("create session: %w", err)
		}
	}
}

// lastMain returns the session's latest main turn, or nil when it has none.
func (t *Tracker) lastMain(ctx context.Context, sessionID string) (*store.Turn, error) {
	last, err := t.store.LastTurn(ctx, sessionID, store.Main)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("last main turn of session %s: %w", sessionID, err)
	}
	return &last, nil
}

// isRetryOf reports whether req is last's request again while nothing has
// followed last (no next request, no feedback): the same messages and tools,
// compared as sent, not normalised as conversation hashes are (OpenClaw's
// system prompt carries the time, so only a resent request repeats it). A
// question asked again after an answer differs (the answer is in its
// history); one asked again after a rating finds last observed.
func isRetryOf(last *store.Turn, req Request) bool {
	return last.State == store.Generated && sameJSON(last.Messages, req.Messages) && sameJSON(last.Tools, req.Tools)
}

// sameJSON compares two lists element by element as their JSON encodings,
// so that a list read back from the store equals the one received (nil and
// empty alike).
func sameJSON[T any](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, err1 := json.Marshal(a[i])
		y, err2 := json.Marshal(b[i])
		if err1 != nil || err2 != nil || !bytes.Equal(x, y) {
			return false
		}
	}
	return true
}

// findPrevious looks for the latest recorded turn whose request and response
// the history repeats; sessionID restricts it to one session ("" = any).
// last is that session's latest main turn, already read (nil: none, or one
// the history cannot extend).
func (t *Tracker) findPrevious(ctx context.Context, anchors []Anchor, sessionID string, last *store.Turn) (*store.Turn, int, error) {
	if len(anchors) == 0 {
		return nil, 0, nil
	}
	if last != nil {
		// The common case, and the one hashes alone cannot decide when two
		// sessions said the same words: the session's own last main turn.
		for _, a := range anchors {
			if a.Hash == last.ConversationHash {
				return last, a.Index, nil
			}
		}
		// After compaction the history before the last answer is a
		// summary, so the prefix differs; the answer itself, as the
		// latest assistant message, still names the turn.
		if anchors[0].Message == ResponseHash(last.Response) {
			return last, anchors[0].Index, nil
		}
	}
	for _, a := range anchors {
		turn, err := t.store.TurnByConversationHash(ctx, a.Hash)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, 0, fmt.Errorf("turn by conversation hash %s: %w", a.Hash, err)
		}
		if sessionID != "" && turn.SessionID != sessionID {
			continue
		}
		return &turn, a.Index, nil
	}
	return nil, 0, nil
}

// Expire marks the last generated turn of every session idle for longer than
// idle as expired, every interval, until ctx ends.
func (t *Tracker) Expire(ctx context.Context, idle, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			n, err := t.store.ExpireIdle(ctx, t.now().Add(-idle))
			if err != nil {
				if ctx.Err() == nil {
					t.log.Error("expire idle sessions", "err", err)
				}
				continue
			}
			if n > 0 {
				t.log.Info("expired idle turns", "turns", n)
			}
		}
	}
}
