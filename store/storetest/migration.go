package storetest

import (
	"context"
	"testing"

	"github.com/clawrl/clawrl/store"
)

// Downgrade turns the store back into the schema before one migration
// (drops its column, forgets the migration's row).
type Downgrade func(t *testing.T, s store.Store)

// RunMigrationAddsMaxTokens: a database written before turns.max_tokens
// existed (downgrade makes one) is upgraded on open to schema version
// (at least) version: its turns read back with MaxTokens 0 (not known),
// the rest unchanged, and new turns keep their limit across a reopen.
func RunMigrationAddsMaxTokens(t *testing.T, open Opener, downgrade Downgrade, version int) {
	dir := t.TempDir()
	s := open(t, dir)
	ctx := t.Context()
	sess := store.Session{Key: "old", KeySource: "header"}
	if err := s.CreateSession(ctx, &sess); err != nil {
		t.Fatal(err)
	}
	old := store.Turn{ID: "chatcmpl-old", SessionID: sess.ID, Type: store.Main, PromptText: "p", PromptIDs: []int32{1, 2},
		ResponseText: "r", ResponseIDs: []int32{3}, BehaviourLogprobs: []float32{-1}, FinishReason: "length", CompletionTokens: 1}
	if err := s.InsertTurn(ctx, &old); err != nil {
		t.Fatal(err)
	}
	downgrade(t, s)
	s.Close()

	s = open(t, dir)
	if sv, ok := s.(interface {
		SchemaVersion(context.Context) (int, error)
	}); !ok {
		t.Fatalf("%T reports no schema version", s)
	} else if v, err := sv.SchemaVersion(ctx); err != nil || v < version {
		t.Fatalf("SchemaVersion after reopen = %d, %v; want %d applied", v, err, version)
	}
	got, err := s.Turn(ctx, old.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.MaxTokens != 0 || got.FinishReason != "length" || got.CompletionTokens != 1 || got.ResponseText != "r" || len(got.ResponseIDs) != 1 {
		t.Fatalf("old turn after the upgrade: %+v", got)
	}
	limited := store.Turn{ID: "chatcmpl-new", SessionID: sess.ID, Type: store.Main, PromptText: "p", ResponseIDs: []int32{3},
		BehaviourLogprobs: []float32{-1}, MaxTokens: 512}
	if err := s.InsertTurn(ctx, &limited); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = open(t, dir) // past any cache
	defer s.Close()
	if got, err := s.Turn(ctx, limited.ID); err != nil || got.MaxTokens != 512 {
		t.Fatalf("new turn after reopen: MaxTokens %d, %v; want 512", got.MaxTokens, err)
	}
	ts, err := s.ListTurns(ctx, store.TurnFilter{SessionID: sess.ID})
	if err != nil || len(ts) != 2 || ts[0].MaxTokens != 0 || ts[1].MaxTokens != 512 {
		t.Fatalf("ListTurns after the upgrade: %+v, %v", ts, err)
	}
}
