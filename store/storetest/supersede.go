package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/store"
)

// testInsertTurnSupersedes: a turn that supersedes a generated turn of its
// session (the same request again: a client's retry after the gateway
// committed the first and died before answering) drops it in the same
// insert, keeping all its data; a turn that moved on, belongs to another
// session or is of the other type is left alone, and no turn supersedes
// itself.
func testInsertTurnSupersedes(t *testing.T, open Opener) {
	s := fresh(t, open)
	sess := newSession(t, s, "retry")
	other := newSession(t, s, "retry-other")

	a := insert(t, s, sampleTurn("chatcmpl-a", sess.ID))
	b := sampleTurn("chatcmpl-b", sess.ID)
	b.Supersedes = a.ID
	b = insert(t, s, b)
	gotA, gotB := getTurn(t, s, a.ID), getTurn(t, s, b.ID)
	if gotA.State != store.Dropped || gotA.DropReason != store.SupersededBy(b.ID) {
		t.Fatalf("superseded turn: state %s, drop reason %q", gotA.State, gotA.DropReason)
	}
	// Counted under one kind, whatever the ids: a label per retried turn
	// would grow the metrics without bound.
	if ls, ok := s.(interface {
		LearningStats(context.Context) (store.LearningStats, error)
	}); ok {
		st, err := ls.LearningStats(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		if st.DroppedBy["superseded"] != 1 || len(st.DroppedBy) != 1 {
			t.Fatalf("drops by kind %v, want superseded: 1", st.DroppedBy)
		}
	}
	// Nothing of the superseded turn is lost: it only changed state.
	wantA := a
	wantA.State, wantA.DropReason = store.Dropped, store.SupersededBy(b.ID)
	sameTurn(t, gotA, wantA)
	if gotB.State != store.Generated || gotB.Index != a.Index+1 {
		t.Fatalf("retry: state %s index %d, want generated at %d", gotB.State, gotB.Index, a.Index+1)
	}
	if last, err := s.LastTurn(ctx(t), sess.ID, store.Main); err != nil || last.ID != b.ID {
		t.Fatalf("LastTurn = %s, %v; want the retry %s", last.ID, err, b.ID)
	}

	// A turn that has its next state is an answered turn: a new turn with
	// the same request is recorded beside it and changes nothing.
	if err := s.ObserveTurn(ctx(t), b.ID, []chat.Message{{Role: chat.RoleUser, Content: "thanks"}}, store.NextUser, time.Now()); err != nil {
		t.Fatal(err)
	}
	c := sampleTurn("chatcmpl-c", sess.ID)
	c.Supersedes = b.ID
	insert(t, s, c)
	if got := getTurn(t, s, b.ID); got.State != store.Observed || got.DropReason != "" {
		t.Fatalf("an observed turn was superseded: state %s, drop reason %q", got.State, got.DropReason)
	}

	// Another session's turn, a side turn, and a turn that does not exist.
	o := insert(t, s, sampleTurn("chatcmpl-o", other.ID))
	side := sampleTurn("chatcmpl-side", sess.ID)
	side.Type = store.Side
	side = insert(t, s, side)
	for i, target := range []string{o.ID, side.ID, "chatcmpl-missing"} {
		d := sampleTurn("chatcmpl-d"+string(rune('0'+i)), sess.ID)
		d.Supersedes = target
		insert(t, s, d)
	}
	for _, id := range []string{o.ID, side.ID} {
		if got := getTurn(t, s, id); got.State != store.Generated {
			t.Fatalf("turn %s of another session or type was touched: %s", id, got.State)
		}
	}

	self := sampleTurn("chatcmpl-self", sess.ID)
	self.Supersedes = self.ID
	if err := s.InsertTurn(ctx(t), &self); err == nil {
		t.Fatal("a turn that supersedes itself was recorded")
	}
	st, err := s.Stats(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if st.TurnsByState[store.Dropped] != 1 {
		t.Fatalf("dropped turns %d, want 1 (the superseded one)", st.TurnsByState[store.Dropped])
	}
}
