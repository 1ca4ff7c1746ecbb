package api

import (
	"context"
	"sync"
	"time"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/store"
)

// memStore is a small in-memory test double of store.Store, used until the
// tests run on store/sqlite (the store engineer's package).
type memStore struct {
	mu       sync.Mutex
	sessions map[string]*store.Session
	byKey    map[string]string
	turns    map[string]*store.Turn
	order    []string
	byHash   map[string]string
	inserts  map[string]int
}

func newMemStore() *memStore {
	return &memStore{sessions: map[string]*store.Session{}, byKey: map[string]string{}, turns: map[string]*store.Turn{},
		byHash: map[string]string{}, inserts: map[string]int{}}
}

func (m *memStore) SessionByKey(_ context.Context, key string) (store.Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	id, ok := m.byKey[key]
	if !ok {
		return store.Session{}, store.ErrNotFound
	}
	return *m.sessions[id], nil
}

func (m *memStore) CreateSession(_ context.Context, s *store.Session) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.byKey[s.Key]; ok {
		return store.ErrConflict
	}
	if s.ID == "" {
		s.ID = "sess-" + randomAlnum(16)
	}
	c := *s
	m.sessions[s.ID] = &c
	m.byKey[s.Key] = s.ID
	return nil
}

func (m *memStore) TouchSession(_ context.Context, id string, seen time.Time, epoch int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok {
		return store.ErrNotFound
	}
	s.LastSeen, s.Epoch = seen, epoch
	return nil
}

func (m *memStore) Session(_ context.Context, id string) (store.Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok {
		return store.Session{}, store.ErrNotFound
	}
	return *s, nil
}

func (m *memStore) TurnByConversationHash(_ context.Context, h string) (store.Turn, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	id, ok := m.byHash[h]
	if !ok {
		return store.Turn{}, store.ErrNotFound
	}
	return *m.turns[id], nil
}

func (m *memStore) InsertTurn(_ context.Context, t *store.Turn) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[t.SessionID]
	if !ok {
		return store.ErrNotFound
	}
	m.inserts[t.ID]++
	t.Index = s.Turns
	s.Turns++
	c := *t
	m.turns[t.ID] = &c
	m.order = append(m.order, t.ID)
	m.byHash[t.ConversationHash] = t.ID
	return nil
}

func (m *memStore) Turn(_ context.Context, id string) (store.Turn, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.turns[id]
	if !ok {
		return store.Turn{}, store.ErrNotFound
	}
	return *t, nil
}

func (m *memStore) LastTurn(_ context.Context, sessionID string, typ store.TurnType) (store.Turn, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := len(m.order) - 1; i >= 0; i-- {
		t := m.turns[m.order[i]]
		if t.SessionID == sessionID && t.Type == typ {
			return *t, nil
		}
	}
	return store.Turn{}, store.ErrNotFound
}

func (m *memStore) ObserveTurn(_ context.Context, id string, next []chat.Message, kind string, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.turns[id]
	if !ok {
		return store.ErrNotFound
	}
	if t.State != store.Generated {
		return store.ErrConflict
	}
	t.State, t.NextState, t.NextStateKind, t.ObservedAt = store.Observed, next, kind, at
	return nil
}

func (m *memStore) AddFeedback(_ context.Context, id string, f store.Feedback) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.turns[id]
	if !ok {
		return store.ErrNotFound
	}
	if t.State != store.Generated && t.State != store.Observed {
		return store.ErrConflict
	}
	t.Feedback = &f
	if t.State == store.Generated {
		t.State, t.NextStateKind = store.Observed, store.NextFeedback
	}
	return nil
}

func (m *memStore) ExpireIdle(context.Context, time.Time) (int, error) { return 0, nil }

func (m *memStore) ListTurns(_ context.Context, f store.TurnFilter) ([]store.Turn, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []store.Turn
	for _, id := range m.order {
		if t := m.turns[id]; f.SessionID == "" || t.SessionID == f.SessionID {
			out = append(out, *t)
		}
	}
	return out, nil
}

func (m *memStore) Stats(context.Context) (store.Stats, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := store.Stats{Sessions: len(m.sessions), TurnsByState: map[store.TurnState]int{}, TurnsByType: map[store.TurnType]int{}}
	for _, t := range m.turns {
		st.TurnsByState[t.State]++
		st.TurnsByType[t.Type]++
	}
	return st, nil
}

func (m *memStore) Close() error { return nil }
