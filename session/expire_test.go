package session

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/store"
	"github.com/clawrl/clawrl/store/sqlite"
)

func openStore(t *testing.T) store.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "s.db"), sqlite.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// A session idle past its timeout (50 ms here) has its last generated turn expired by
// the tracker's loop.
func TestExpire(t *testing.T) {
	st := openStore(t)
	tr := NewTracker(st, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx := context.Background()
	b, err := tr.Begin(ctx, Request{Hints: Hints{Header: hdr("X-Session-Id", "idle")}, Messages: []chat.Message{user("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	turn := &store.Turn{ID: "chatcmpl-idle", SessionID: b.Session.ID, Type: store.Main, CreatedAt: time.Now().Add(-time.Hour),
		Messages: []chat.Message{user("hi")}, Response: chat.Message{Role: chat.RoleAssistant, Content: "ok"},
		ConversationHash: TurnHash([]chat.Message{user("hi")}, chat.Message{Content: "ok"})}
	if err := st.InsertTurn(ctx, turn); err != nil {
		t.Fatal(err)
	}
	loop, stop := context.WithCancel(ctx)
	defer stop()
	go tr.Expire(loop, 50*time.Millisecond, 10*time.Millisecond)
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, err := st.Turn(ctx, turn.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State == store.Expired {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("turn idle for an hour still %s", got.State)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The session's next main request extends the expired turn: nothing to
	// observe, no error.
	b2, err := tr.Begin(ctx, Request{Hints: Hints{Header: hdr("X-Session-Id", "idle")},
		Messages: []chat.Message{user("hi"), {Role: chat.RoleAssistant, Content: "ok"}, user("back")}})
	if err != nil || b2.Session.ID != b.Session.ID || b2.Observed != "" {
		t.Fatalf("Begin after expiry: %+v %v", b2, err)
	}
}
