// Package storetest is the conformance suite every store.Store must pass, in
// the spirit of database/sql's driver tests: the gateway, judge and trainer
// rely on exactly what is checked here, whichever backend keeps the rows.
//
// An implementation's test calls
//
//	storetest.Run(t, func(t *testing.T, dir string) store.Store { … open at dir … })
//
// The opener is called with a fresh directory for each case, and again with
// the same directory to check that a reopened store keeps everything (a
// backend without files can map dir to a database or schema name).
package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/store"
)

// Opener opens the store kept at dir, creating it when dir is empty.
type Opener func(t *testing.T, dir string) store.Store

// Run runs every conformance case as a subtest.
func Run(t *testing.T, open Opener) {
	cases := []struct {
		name string
		fn   func(t *testing.T, open Opener)
	}{
		{"Sessions", testSessions},
		{"SessionKeyConflict", testSessionKeyConflict},
		{"TouchSession", testTouchSession},
		{"InsertTurnRoundTrip", testInsertTurnRoundTrip},
		{"InsertTurnRefuses", testInsertTurnRefuses},
		{"InsertTurnSupersedes", testInsertTurnSupersedes},
		{"ReturnedTurnsAreCopies", testReturnedTurnsAreCopies},
		{"TurnIndexAndLastTurn", testTurnIndexAndLastTurn},
		{"ConversationHash", testConversationHash},
		{"ObserveTurn", testObserveTurn},
		{"Feedback", testFeedback},
		{"ExpireIdle", testExpireIdle},
		{"Transitions", testTransitions},
		{"ListTurnsFilters", testListTurnsFilters},
		{"ListTurnsPagination", testListTurnsPagination},
		{"Stats", testStats},
		{"ConcurrentInserts", testConcurrentInserts},
		{"Reopen", testReopen},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.fn(t, open) })
	}
}

// fresh opens an empty store that is closed when the test ends.
func fresh(t *testing.T, open Opener) store.Store {
	t.Helper()
	s := open(t, t.TempDir())
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func ctx(t *testing.T) context.Context {
	t.Helper()
	return t.Context()
}

func newSession(t *testing.T, s store.Store, key string) store.Session {
	t.Helper()
	sess := store.Session{Key: key, KeySource: "header"}
	if err := s.CreateSession(ctx(t), &sess); err != nil {
		t.Fatalf("CreateSession(%q): %v", key, err)
	}
	if sess.ID == "" {
		t.Fatalf("CreateSession(%q) left ID empty", key)
	}
	return sess
}

// sampleTurn is a realistic turn: a conversation with a tool round, token ids
// and one logprob per response id.
func sampleTurn(id, sessionID string) store.Turn {
	return store.Turn{
		ID:        id,
		SessionID: sessionID,
		Type:      store.Main,
		Epoch:     2,
		CreatedAt: time.Date(2026, 11, 21, 5, 0, 0, 123456789, time.UTC),
		Model:     "qwen3-tiny",
		Messages: []chat.Message{
			{Role: chat.RoleSystem, Content: "You are helpful."},
			{Role: chat.RoleUser, Content: "What's the weather in Zürich? ☀️"},
			{Role: chat.RoleAssistant, ContentNull: true, ToolCalls: []chat.ToolCall{{ID: "call0", Type: "function",
				Function: chat.FunctionCall{Name: "weather", Arguments: `{"city":"Zürich"}`}}}},
			{Role: chat.RoleTool, ToolCallID: "call0", Content: `{"temp":3}`},
		},
		Tools: []chat.Tool{{Type: "function", Function: chat.FunctionDef{Name: "weather", Description: "Weather now",
			Parameters: []byte(`{"type":"object","properties":{"city":{"type":"string"}}}`)}}},
		PromptText:        "<|im_start|>system\nYou are helpful.<|im_end|>\n",
		PromptIDs:         []int32{151644, 8948, 198, -1, 0, 2147483647},
		Response:          chat.Message{Role: chat.RoleAssistant, Content: "3 °C.", ReasoningContent: "cold"},
		ResponseText:      "<think>cold</think>3 °C.<|im_end|>",
		ResponseIDs:       []int32{18, 11, 151645},
		BehaviourLogprobs: []float32{-0.5, -1e-7, -12.25},
		PolicyVersion:     7,
		Engine:            "native",
		FinishReason:      "stop",
		PromptTokens:      6,
		CompletionTokens:  3,
		MaxTokens:         256,
		QueueNanos:        1, PrefillNanos: 2, DecodeNanos: 3, TotalNanos: 6,
		ConversationHash: "hash-" + id,
	}
}

// forcedTurn is a sample turn whose tool call the gateway forced
// (tool_choice naming "weather"): the prompt ends with the call's opening,
// the response ids are only what the model sampled after it.
func forcedTurn(id, sessionID string) store.Turn {
	tr := sampleTurn(id, sessionID)
	tr.ForcedText = "<tool_call>\n{\"name\": \"weather\", \"arguments\":"
	tr.PromptText += "<|im_start|>assistant\n" + tr.ForcedText
	tr.PromptIDs = append(tr.PromptIDs, 151644, 77091, 198, 151657, 198, 4913, 606, 788, 330, 15206, 497, 330, 16370, 788)
	tr.Response = chat.Message{Role: chat.RoleAssistant, ContentNull: true, ToolCalls: []chat.ToolCall{{ID: "call1", Type: "function",
		Function: chat.FunctionCall{Name: "weather", Arguments: `{"city": "Bern"}`}}}}
	tr.ResponseText = " {\"city\": \"Bern\"}}\n</tool_call>"
	tr.FinishReason = "tool_calls"
	return tr
}

func insert(t *testing.T, s store.Store, tr store.Turn) store.Turn {
	t.Helper()
	if err := s.InsertTurn(ctx(t), &tr); err != nil {
		t.Fatalf("InsertTurn(%s): %v", tr.ID, err)
	}
	return tr
}

func getTurn(t *testing.T, s store.Store, id string) store.Turn {
	t.Helper()
	tr, err := s.Turn(ctx(t), id)
	if err != nil {
		t.Fatalf("Turn(%s): %v", id, err)
	}
	return tr
}

func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: got error %v, want %v", what, err, want)
	}
}

// sameTurn compares two turns field by field, times with Equal.
func sameTurn(t *testing.T, got, want store.Turn) {
	t.Helper()
	if !got.CreatedAt.Equal(want.CreatedAt) {
		t.Errorf("turn %s CreatedAt = %v, want %v", want.ID, got.CreatedAt, want.CreatedAt)
	}
	if !got.ObservedAt.Equal(want.ObservedAt) {
		t.Errorf("turn %s ObservedAt = %v, want %v", want.ID, got.ObservedAt, want.ObservedAt)
	}
	if (got.Feedback == nil) != (want.Feedback == nil) {
		t.Errorf("turn %s Feedback = %+v, want %+v", want.ID, got.Feedback, want.Feedback)
	} else if got.Feedback != nil {
		g, w := *got.Feedback, *want.Feedback
		if g.Rating != w.Rating || g.Text != w.Text || !g.CreatedAt.Equal(w.CreatedAt) {
			t.Errorf("turn %s Feedback = %+v, want %+v", want.ID, g, w)
		}
	}
	got.CreatedAt, want.CreatedAt = time.Time{}, time.Time{}
	got.ObservedAt, want.ObservedAt = time.Time{}, time.Time{}
	got.Feedback, want.Feedback = nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("turn %s differs after a round trip:\n got %+v\nwant %+v", want.ID, got, want)
	}
}

func testSessions(t *testing.T, open Opener) {
	s := fresh(t, open)
	a := newSession(t, s, "key-a")
	got, err := s.SessionByKey(ctx(t), "key-a")
	if err != nil {
		t.Fatalf("SessionByKey: %v", err)
	}
	if got.ID != a.ID || got.Key != "key-a" || got.KeySource != "header" || got.Turns != 0 || got.Expired {
		t.Errorf("SessionByKey = %+v, want %+v", got, a)
	}
	if !got.CreatedAt.Equal(a.CreatedAt) || !got.LastSeen.Equal(a.LastSeen) {
		t.Errorf("times: got %v/%v, want %v/%v", got.CreatedAt, got.LastSeen, a.CreatedAt, a.LastSeen)
	}
	byID, err := s.Session(ctx(t), a.ID)
	if err != nil || byID.ID != a.ID {
		t.Fatalf("Session(%s) = %+v, %v", a.ID, byID, err)
	}
	// The client software is kept as it was first seen.
	withClient := store.Session{Key: "key-client", KeySource: "header", Client: "OpenAI/Python 1.40.0"}
	if err := s.CreateSession(ctx(t), &withClient); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Session(ctx(t), withClient.ID); err != nil || got.Client != "OpenAI/Python 1.40.0" {
		t.Errorf("Session with a client = %+v, %v", got, err)
	}
	_, err = s.SessionByKey(ctx(t), "missing")
	wantErr(t, "SessionByKey(missing)", err, store.ErrNotFound)
	_, err = s.Session(ctx(t), "sess-missing")
	wantErr(t, "Session(missing)", err, store.ErrNotFound)
	_, err = s.SessionByKey(ctx(t), "")
	wantErr(t, "SessionByKey(empty)", err, store.ErrNotFound)

	// Sessions found by history or new have no key; many may exist.
	for range 3 {
		sess := store.Session{KeySource: "new"}
		if err := s.CreateSession(ctx(t), &sess); err != nil {
			t.Fatalf("CreateSession without key: %v", err)
		}
	}
	// An explicit id is kept.
	withID := store.Session{ID: "sess-explicit", Key: "k-explicit", KeySource: "user", Epoch: 3}
	if err := s.CreateSession(ctx(t), &withID); err != nil {
		t.Fatalf("CreateSession with id: %v", err)
	}
	got, err = s.Session(ctx(t), "sess-explicit")
	if err != nil || got.Epoch != 3 || got.KeySource != "user" {
		t.Fatalf("Session(sess-explicit) = %+v, %v", got, err)
	}
	dup := store.Session{ID: "sess-explicit", KeySource: "new"}
	wantErr(t, "CreateSession(duplicate id)", s.CreateSession(ctx(t), &dup), store.ErrConflict)
}

func testSessionKeyConflict(t *testing.T, open Opener) {
	s := fresh(t, open)
	newSession(t, s, "same")
	again := store.Session{Key: "same", KeySource: "header"}
	wantErr(t, "CreateSession(duplicate key)", s.CreateSession(ctx(t), &again), store.ErrConflict)

	// Racing creators: exactly one wins, the rest see ErrConflict.
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins, conflicts := 0, 0
	for range 20 {
		wg.Go(func() {
			sess := store.Session{Key: "raced", KeySource: "header"}
			err := s.CreateSession(context.Background(), &sess)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case errors.Is(err, store.ErrConflict):
				conflicts++
			default:
				t.Errorf("CreateSession(raced): %v", err)
			}
		})
	}
	wg.Wait()
	if wins != 1 || conflicts != 19 {
		t.Errorf("racing CreateSession: %d wins, %d conflicts; want 1 and 19", wins, conflicts)
	}
}

func testTouchSession(t *testing.T, open Opener) {
	s := fresh(t, open)
	a := newSession(t, s, "touch")
	later := a.LastSeen.Add(time.Minute)
	if err := s.TouchSession(ctx(t), a.ID, later, 4); err != nil {
		t.Fatalf("TouchSession: %v", err)
	}
	got, _ := s.Session(ctx(t), a.ID)
	if !got.LastSeen.Equal(later) || got.Epoch != 4 {
		t.Errorf("after touch: LastSeen %v epoch %d, want %v and 4", got.LastSeen, got.Epoch, later)
	}
	// An older time (a slow request finishing late) never moves LastSeen back.
	if err := s.TouchSession(ctx(t), a.ID, a.LastSeen.Add(-time.Hour), 4); err != nil {
		t.Fatalf("TouchSession(earlier): %v", err)
	}
	got, _ = s.Session(ctx(t), a.ID)
	if !got.LastSeen.Equal(later) {
		t.Errorf("LastSeen moved back to %v, want %v", got.LastSeen, later)
	}
	wantErr(t, "TouchSession(missing)", s.TouchSession(ctx(t), "sess-missing", later, 0), store.ErrNotFound)
}

func testInsertTurnRoundTrip(t *testing.T, open Opener) {
	s := fresh(t, open)
	sess := newSession(t, s, "rt")
	want := sampleTurn("chatcmpl-rt1", sess.ID)
	in := insert(t, s, want)
	if in.Index != 0 || in.State != store.Generated || in.Seq == 0 {
		t.Fatalf("after insert: index %d state %s seq %d; want 0, generated, nonzero", in.Index, in.State, in.Seq)
	}
	want.Index, want.State, want.Seq = 0, store.Generated, in.Seq
	sameTurn(t, getTurn(t, s, want.ID), want)

	// The zero values survive too: no ids, no logprobs, no tools.
	bare := store.Turn{ID: "chatcmpl-bare", SessionID: sess.ID, Type: store.Side}
	bare = insert(t, s, bare)
	got := getTurn(t, s, bare.ID)
	if got.Index != 1 || got.Type != store.Side || got.CreatedAt.IsZero() ||
		len(got.PromptIDs) != 0 || len(got.ResponseIDs) != 0 || len(got.BehaviourLogprobs) != 0 ||
		len(got.Messages) != 0 || len(got.Tools) != 0 || got.Feedback != nil || got.NextState != nil || got.MaxTokens != 0 {
		t.Errorf("bare turn came back as %+v", got)
	}
	if !got.CreatedAt.Equal(bare.CreatedAt) {
		t.Errorf("bare CreatedAt = %v, InsertTurn set %v", got.CreatedAt, bare.CreatedAt)
	}

	// A large turn: a 30k-character system prompt and 8k prompt ids.
	big := sampleTurn("chatcmpl-big", sess.ID)
	big.Messages[0].Content = string(make([]byte, 30000))
	big.PromptIDs = make([]int32, 8192)
	for i := range big.PromptIDs {
		big.PromptIDs[i] = int32(i * 37)
	}
	big = insert(t, s, big)
	sameTurn(t, getTurn(t, s, big.ID), big)

	// A forced tool call keeps its forced text apart.
	forced := insert(t, s, forcedTurn("chatcmpl-forced", sess.ID))
	sameTurn(t, getTurn(t, s, forced.ID), forced)

	_, err := s.Turn(ctx(t), "chatcmpl-missing")
	wantErr(t, "Turn(missing)", err, store.ErrNotFound)
	if sess2, _ := s.Session(ctx(t), sess.ID); sess2.Turns != 4 {
		t.Errorf("session counts %d turns, want 4", sess2.Turns)
	}
}

// ReturnedTurnsAreCopies: neither the turn passed to InsertTurn nor one a
// read returned shares memory with the store (a store that caches decoded
// turns must hand out copies).
func testReturnedTurnsAreCopies(t *testing.T, open Opener) {
	s := fresh(t, open)
	sess := newSession(t, s, "copies")
	in := sampleTurn("chatcmpl-copy", sess.ID)
	want := sampleTurn("chatcmpl-copy", sess.ID)
	if err := s.InsertTurn(ctx(t), &in); err != nil {
		t.Fatal(err)
	}
	want.Index, want.Seq, want.State = in.Index, in.Seq, store.Generated
	scribble := func(tr *store.Turn) {
		tr.Messages[0].Content = "scribbled"
		tr.Messages[2].ToolCalls[0].Function.Name = "scribbled"
		tr.Tools[0].Function.Parameters[0] = '!'
		tr.PromptIDs[0], tr.ResponseIDs[0], tr.BehaviourLogprobs[0] = -7, -7, -7
		tr.Response.ToolCalls = append(tr.Response.ToolCalls, chat.ToolCall{ID: "scribbled"})
	}
	scribble(&in)
	for range 2 {
		got := getTurn(t, s, want.ID)
		sameTurn(t, got, want)
		scribble(&got)
		last, err := s.LastTurn(ctx(t), sess.ID, store.Main)
		if err != nil {
			t.Fatal(err)
		}
		sameTurn(t, last, want)
		scribble(&last)
		list, err := s.ListTurns(ctx(t), store.TurnFilter{SessionID: sess.ID})
		if err != nil || len(list) != 1 {
			t.Fatalf("ListTurns = %d turns, %v", len(list), err)
		}
		sameTurn(t, list[0], want)
		scribble(&list[0])
	}
}

func testInsertTurnRefuses(t *testing.T, open Opener) {
	s := fresh(t, open)
	sess := newSession(t, s, "refuse")
	insert(t, s, sampleTurn("chatcmpl-dup", sess.ID))

	dup := sampleTurn("chatcmpl-dup", sess.ID)
	wantErr(t, "InsertTurn(duplicate id)", s.InsertTurn(ctx(t), &dup), store.ErrConflict)
	orphan := sampleTurn("chatcmpl-orphan", "sess-missing")
	wantErr(t, "InsertTurn(unknown session)", s.InsertTurn(ctx(t), &orphan), store.ErrNotFound)

	bad := []struct {
		name string
		edit func(*store.Turn)
	}{
		{"empty id", func(tr *store.Turn) { tr.ID = "" }},
		{"empty session", func(tr *store.Turn) { tr.SessionID = "" }},
		{"not generated", func(tr *store.Turn) { tr.State = store.Observed }},
		{"unknown type", func(tr *store.Turn) { tr.Type = "other" }},
		{"logprobs mismatch", func(tr *store.Turn) { tr.BehaviourLogprobs = tr.BehaviourLogprobs[:1] }},
	}
	for _, b := range bad {
		tr := sampleTurn("chatcmpl-bad", sess.ID)
		b.edit(&tr)
		if err := s.InsertTurn(ctx(t), &tr); err == nil {
			t.Errorf("InsertTurn(%s) succeeded, want an error", b.name)
		}
	}
	// Refused inserts took no index: the next turn is index 1.
	next := insert(t, s, sampleTurn("chatcmpl-next", sess.ID))
	if next.Index != 1 {
		t.Errorf("index after refused inserts = %d, want 1", next.Index)
	}
}

func testTurnIndexAndLastTurn(t *testing.T, open Opener) {
	s := fresh(t, open)
	a, b := newSession(t, s, "a"), newSession(t, s, "b")
	types := []store.TurnType{store.Main, store.Side, store.Main, store.Main, store.Side}
	for i, typ := range types {
		for _, sess := range []store.Session{a, b} {
			tr := sampleTurn(fmt.Sprintf("chatcmpl-%s-%d", sess.Key, i), sess.ID)
			tr.Type = typ
			if got := insert(t, s, tr); got.Index != i {
				t.Errorf("turn %d of session %s got index %d", i, sess.Key, got.Index)
			}
		}
	}
	last, err := s.LastTurn(ctx(t), a.ID, store.Main)
	if err != nil || last.ID != "chatcmpl-a-3" {
		t.Errorf("LastTurn(a, main) = %s, %v; want chatcmpl-a-3", last.ID, err)
	}
	last, err = s.LastTurn(ctx(t), b.ID, store.Side)
	if err != nil || last.ID != "chatcmpl-b-4" {
		t.Errorf("LastTurn(b, side) = %s, %v; want chatcmpl-b-4", last.ID, err)
	}
	c := newSession(t, s, "c")
	_, err = s.LastTurn(ctx(t), c.ID, store.Main)
	wantErr(t, "LastTurn(empty session)", err, store.ErrNotFound)
	if got, _ := s.Session(ctx(t), a.ID); got.Turns != len(types) {
		t.Errorf("session a counts %d turns, want %d", got.Turns, len(types))
	}
}

func testConversationHash(t *testing.T, open Opener) {
	s := fresh(t, open)
	a, b := newSession(t, s, "a"), newSession(t, s, "b")
	t1 := sampleTurn("chatcmpl-h1", a.ID)
	t1.ConversationHash = "h-shared"
	insert(t, s, t1)
	t2 := sampleTurn("chatcmpl-h2", b.ID)
	t2.ConversationHash = "h-shared"
	insert(t, s, t2)
	insert(t, s, sampleTurn("chatcmpl-h3", a.ID))

	got, err := s.TurnByConversationHash(ctx(t), "hash-chatcmpl-h3")
	if err != nil || got.ID != "chatcmpl-h3" {
		t.Errorf("TurnByConversationHash = %s, %v; want chatcmpl-h3", got.ID, err)
	}
	// Identical conversations: the newest is the one a continuation extends.
	got, err = s.TurnByConversationHash(ctx(t), "h-shared")
	if err != nil || got.ID != "chatcmpl-h2" {
		t.Errorf("TurnByConversationHash(shared) = %s, %v; want the newest, chatcmpl-h2", got.ID, err)
	}
	_, err = s.TurnByConversationHash(ctx(t), "h-missing")
	wantErr(t, "TurnByConversationHash(missing)", err, store.ErrNotFound)
	_, err = s.TurnByConversationHash(ctx(t), "")
	wantErr(t, "TurnByConversationHash(empty)", err, store.ErrNotFound)
}

func testObserveTurn(t *testing.T, open Opener) {
	s := fresh(t, open)
	sess := newSession(t, s, "obs")
	tr := insert(t, s, sampleTurn("chatcmpl-o1", sess.ID))
	next := []chat.Message{{Role: chat.RoleUser, Content: "thanks, and tomorrow?"}}
	at := time.Date(2026, 11, 21, 6, 0, 0, 42, time.UTC)
	if err := s.ObserveTurn(ctx(t), tr.ID, next, store.NextUser, at); err != nil {
		t.Fatalf("ObserveTurn: %v", err)
	}
	got := getTurn(t, s, tr.ID)
	if got.State != store.Observed || got.NextStateKind != store.NextUser || !got.ObservedAt.Equal(at) ||
		!reflect.DeepEqual(got.NextState, next) {
		t.Errorf("observed turn = state %s kind %q at %v next %+v", got.State, got.NextStateKind, got.ObservedAt, got.NextState)
	}
	// Observing twice is a conflict and changes nothing.
	err := s.ObserveTurn(ctx(t), tr.ID, []chat.Message{{Role: chat.RoleUser, Content: "other"}}, store.NextUser, at)
	wantErr(t, "ObserveTurn(observed)", err, store.ErrConflict)
	if again := getTurn(t, s, tr.ID); !reflect.DeepEqual(again.NextState, next) {
		t.Errorf("refused observe changed next state to %+v", again.NextState)
	}
	wantErr(t, "ObserveTurn(missing)", s.ObserveTurn(ctx(t), "chatcmpl-missing", next, store.NextUser, at), store.ErrNotFound)

	tool := insert(t, s, sampleTurn("chatcmpl-o2", sess.ID))
	results := []chat.Message{{Role: chat.RoleTool, ToolCallID: "a", Content: "1"}, {Role: chat.RoleTool, ToolCallID: "b", Content: "2"}}
	if err := s.ObserveTurn(ctx(t), tool.ID, results, store.NextTool, at); err != nil {
		t.Fatalf("ObserveTurn(tool): %v", err)
	}
	if got := getTurn(t, s, tool.ID); !reflect.DeepEqual(got.NextState, results) || got.NextStateKind != store.NextTool {
		t.Errorf("tool next state = %+v (%s)", got.NextState, got.NextStateKind)
	}
	third := insert(t, s, sampleTurn("chatcmpl-o3", sess.ID))
	if err := s.ObserveTurn(ctx(t), third.ID, next, "telepathy", at); err == nil || errors.Is(err, store.ErrConflict) {
		t.Errorf("ObserveTurn(unknown kind) = %v, want a validation error", err)
	}
	if got := getTurn(t, s, third.ID); got.State != store.Generated {
		t.Errorf("refused observe moved the turn to %s", got.State)
	}
}

func testFeedback(t *testing.T, open Opener) {
	s := fresh(t, open)
	sess := newSession(t, s, "fb")
	tr := insert(t, s, sampleTurn("chatcmpl-f1", sess.ID))
	at := time.Date(2026, 11, 21, 6, 1, 0, 0, time.UTC)
	if err := s.AddFeedback(ctx(t), tr.ID, store.Feedback{Rating: 1, CreatedAt: at}); err != nil {
		t.Fatalf("AddFeedback: %v", err)
	}
	got := getTurn(t, s, tr.ID)
	if got.State != store.Observed || got.NextStateKind != store.NextFeedback || got.Feedback == nil || got.Feedback.Rating != 1 {
		t.Fatalf("after 👍: state %s kind %q feedback %+v", got.State, got.NextStateKind, got.Feedback)
	}
	// Written feedback later merges with the rating; the state stays.
	at2 := at.Add(time.Second)
	if err := s.AddFeedback(ctx(t), tr.ID, store.Feedback{Text: "more concise please", CreatedAt: at2}); err != nil {
		t.Fatalf("AddFeedback(text): %v", err)
	}
	got = getTurn(t, s, tr.ID)
	if got.State != store.Observed || got.Feedback.Rating != 1 || got.Feedback.Text != "more concise please" || !got.Feedback.CreatedAt.Equal(at2) {
		t.Errorf("merged feedback = %+v in state %s", got.Feedback, got.State)
	}
	// Feedback on an observed turn keeps its next state.
	o := insert(t, s, sampleTurn("chatcmpl-f2", sess.ID))
	next := []chat.Message{{Role: chat.RoleUser, Content: "no"}}
	if err := s.ObserveTurn(ctx(t), o.ID, next, store.NextUser, at); err != nil {
		t.Fatal(err)
	}
	if err := s.AddFeedback(ctx(t), o.ID, store.Feedback{Rating: -1, CreatedAt: at}); err != nil {
		t.Fatalf("AddFeedback(observed): %v", err)
	}
	got = getTurn(t, s, o.ID)
	if got.State != store.Observed || got.NextStateKind != store.NextUser || !reflect.DeepEqual(got.NextState, next) || got.Feedback.Rating != -1 {
		t.Errorf("feedback on observed turn: %+v", got)
	}
	bad := []store.Feedback{{Rating: 2}, {Rating: -3}, {}, {Text: "   "}}
	for _, f := range bad {
		if err := s.AddFeedback(ctx(t), o.ID, f); err == nil {
			t.Errorf("AddFeedback(%+v) succeeded, want an error", f)
		}
	}
	wantErr(t, "AddFeedback(missing)", s.AddFeedback(ctx(t), "chatcmpl-missing", store.Feedback{Rating: 1}), store.ErrNotFound)
}

func testExpireIdle(t *testing.T, open Opener) {
	s := fresh(t, open)
	t0 := time.Date(2026, 11, 21, 5, 0, 0, 0, time.UTC)
	idle := store.Session{Key: "idle", KeySource: "header", CreatedAt: t0}
	live := store.Session{Key: "live", KeySource: "header", CreatedAt: t0}
	for _, sess := range []*store.Session{&idle, &live} {
		if err := s.CreateSession(ctx(t), sess); err != nil {
			t.Fatal(err)
		}
	}
	mk := func(id string, sess store.Session, at time.Time) store.Turn {
		tr := sampleTurn(id, sess.ID)
		tr.CreatedAt = at
		return insert(t, s, tr)
	}
	i0 := mk("chatcmpl-i0", idle, t0)
	i1 := mk("chatcmpl-i1", idle, t0.Add(time.Minute))
	if err := s.ObserveTurn(ctx(t), i0.ID, []chat.Message{{Role: chat.RoleUser, Content: "ok"}}, store.NextUser, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	side := sampleTurn("chatcmpl-iside", idle.ID)
	side.Type, side.CreatedAt = store.Side, t0.Add(2*time.Minute)
	insert(t, s, side)
	l0 := mk("chatcmpl-l0", live, t0.Add(time.Hour))

	n, err := s.ExpireIdle(ctx(t), t0.Add(30*time.Minute))
	if err != nil {
		t.Fatalf("ExpireIdle: %v", err)
	}
	if n != 2 {
		t.Errorf("ExpireIdle changed %d turns, want 2 (the idle session's generated main and side turns)", n)
	}
	for id, want := range map[string]store.TurnState{i0.ID: store.Observed, i1.ID: store.Expired, side.ID: store.Expired, l0.ID: store.Generated} {
		if got := getTurn(t, s, id); got.State != want {
			t.Errorf("turn %s is %s after ExpireIdle, want %s", id, got.State, want)
		}
	}
	if got, _ := s.Session(ctx(t), idle.ID); !got.Expired {
		t.Errorf("idle session not marked expired")
	}
	if got, _ := s.Session(ctx(t), live.ID); got.Expired {
		t.Errorf("live session marked expired")
	}
	// Idempotent: nothing left to expire.
	if n, err := s.ExpireIdle(ctx(t), t0.Add(30*time.Minute)); err != nil || n != 0 {
		t.Errorf("second ExpireIdle = %d, %v; want 0", n, err)
	}
	// The reply came too late: observing an expired turn is a conflict…
	err = s.ObserveTurn(ctx(t), i1.ID, []chat.Message{{Role: chat.RoleUser, Content: "late"}}, store.NextUser, time.Now())
	wantErr(t, "ObserveTurn(expired)", err, store.ErrConflict)
	// …but explicit feedback still counts.
	if err := s.AddFeedback(ctx(t), i1.ID, store.Feedback{Rating: 1}); err != nil {
		t.Fatalf("AddFeedback(expired): %v", err)
	}
	if got := getTurn(t, s, i1.ID); got.State != store.Observed || got.NextStateKind != store.NextFeedback {
		t.Errorf("feedback on expired turn left it %s/%q", got.State, got.NextStateKind)
	}
	// The same key continues the same session, live again, at the next index.
	again, err := s.SessionByKey(ctx(t), "idle")
	if err != nil || again.ID != idle.ID || !again.Expired {
		t.Fatalf("SessionByKey(idle) after expiry = %+v, %v", again, err)
	}
	cont := mk("chatcmpl-i3", idle, t0.Add(2*time.Hour))
	if cont.Index != 3 {
		t.Errorf("continued session's turn index = %d, want 3", cont.Index)
	}
	if got, _ := s.Session(ctx(t), idle.ID); got.Expired {
		t.Errorf("session still expired after a new turn")
	}
	if err := s.TouchSession(ctx(t), idle.ID, t0.Add(3*time.Hour), 1); err != nil {
		t.Fatal(err)
	}
}

// Transitions walks every (from, to) pair through the optional Transitioner
// and checks that exactly store.CanTransition's arrows are allowed.
func testTransitions(t *testing.T, open Opener) {
	s := fresh(t, open)
	tr, ok := s.(store.Transitioner)
	if !ok {
		t.Skip("store does not implement store.Transitioner")
	}
	sess := newSession(t, s, "tr")
	// pathTo lists the arrows that bring a generated turn to each state.
	pathTo := map[store.TurnState][]store.TurnState{
		store.Generated: {},
		store.Observed:  {store.Observed},
		store.Expired:   {store.Expired},
		store.Judged:    {store.Observed, store.Judged},
		store.Ready:     {store.Observed, store.Judged, store.Ready},
		store.Trained:   {store.Observed, store.Judged, store.Ready, store.Trained},
		store.Dropped:   {store.Dropped},
	}
	n := 0
	for _, from := range store.TurnStates() {
		for _, to := range store.TurnStates() {
			n++
			id := fmt.Sprintf("chatcmpl-t%d", n)
			insert(t, s, sampleTurn(id, sess.ID))
			cur := store.Generated
			for _, step := range pathTo[from] {
				if err := tr.Transition(ctx(t), id, cur, step, "setup"); err != nil {
					t.Fatalf("setup %s: %s → %s: %v", id, cur, step, err)
				}
				cur = step
			}
			err := tr.Transition(ctx(t), id, from, to, "because")
			got := getTurn(t, s, id)
			if store.CanTransition(from, to) {
				if err != nil || got.State != to {
					t.Errorf("%s → %s refused: %v (state %s)", from, to, err, got.State)
				}
				if to == store.Dropped && got.DropReason != "because" {
					t.Errorf("%s → dropped kept reason %q", from, got.DropReason)
				}
			} else {
				if !errors.Is(err, store.ErrConflict) || got.State != from {
					t.Errorf("%s → %s: err %v, state %s; want ErrConflict and state unchanged", from, to, err, got.State)
				}
			}
		}
	}
	// A guard that does not match the row's state is a conflict too.
	insert(t, s, sampleTurn("chatcmpl-guard", sess.ID))
	wantErr(t, "Transition(wrong from)", tr.Transition(ctx(t), "chatcmpl-guard", store.Observed, store.Judged, ""), store.ErrConflict)
	wantErr(t, "Transition(missing)", tr.Transition(ctx(t), "chatcmpl-missing", store.Generated, store.Observed, ""), store.ErrNotFound)
}

func testListTurnsFilters(t *testing.T, open Opener) {
	s := fresh(t, open)
	a, b := newSession(t, s, "a"), newSession(t, s, "b")
	t0 := time.Date(2026, 11, 21, 5, 0, 0, 0, time.UTC)
	var ids []string
	for i := range 6 {
		sess := a
		if i%2 == 1 {
			sess = b
		}
		tr := sampleTurn(fmt.Sprintf("chatcmpl-l%d", i), sess.ID)
		tr.CreatedAt = t0.Add(time.Duration(i) * time.Minute)
		if i == 4 {
			tr.Type = store.Side
		}
		insert(t, s, tr)
		ids = append(ids, tr.ID)
	}
	if err := s.ObserveTurn(ctx(t), ids[0], nil, store.NextUser, t0); err != nil {
		t.Fatal(err)
	}
	if err := s.ObserveTurn(ctx(t), ids[3], nil, store.NextTool, t0); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		filter store.TurnFilter
		want   []string
	}{
		{"all", store.TurnFilter{}, ids},
		{"session a", store.TurnFilter{SessionID: a.ID}, []string{ids[0], ids[2], ids[4]}},
		{"observed", store.TurnFilter{States: []store.TurnState{store.Observed}}, []string{ids[0], ids[3]}},
		{"generated or observed in b", store.TurnFilter{SessionID: b.ID, States: []store.TurnState{store.Generated, store.Observed}}, []string{ids[1], ids[3], ids[5]}},
		{"side", store.TurnFilter{Type: store.Side}, []string{ids[4]}},
		{"main generated", store.TurnFilter{Type: store.Main, States: []store.TurnState{store.Generated}}, []string{ids[1], ids[2], ids[5]}},
		{"since", store.TurnFilter{Since: t0.Add(3 * time.Minute)}, ids[3:]},
		{"limit", store.TurnFilter{Limit: 2}, ids[:2]},
		{"unknown session", store.TurnFilter{SessionID: "sess-missing"}, nil},
	}
	for _, c := range cases {
		got, err := s.ListTurns(ctx(t), c.filter)
		if err != nil {
			t.Errorf("ListTurns(%s): %v", c.name, err)
			continue
		}
		var gotIDs []string
		for _, tr := range got {
			gotIDs = append(gotIDs, tr.ID)
		}
		if !reflect.DeepEqual(gotIDs, c.want) {
			t.Errorf("ListTurns(%s) = %v, want %v", c.name, gotIDs, c.want)
		}
	}
}

func testListTurnsPagination(t *testing.T, open Opener) {
	s := fresh(t, open)
	sess := newSession(t, s, "page")
	const total = 53
	want := map[string]bool{}
	for i := range total {
		tr := sampleTurn(fmt.Sprintf("chatcmpl-p%02d", i), sess.ID)
		insert(t, s, tr)
		want[tr.ID] = true
	}
	seen := map[string]bool{}
	var after int64
	pages := 0
	for {
		page, err := s.ListTurns(ctx(t), store.TurnFilter{AfterID: after, Limit: 10})
		if err != nil {
			t.Fatalf("ListTurns(after %d): %v", after, err)
		}
		if len(page) == 0 {
			break
		}
		pages++
		for _, tr := range page {
			if tr.Seq <= after {
				t.Fatalf("page after %d returned seq %d", after, tr.Seq)
			}
			if seen[tr.ID] {
				t.Fatalf("turn %s returned twice", tr.ID)
			}
			seen[tr.ID] = true
			after = tr.Seq
		}
		// Rows inserted while paging are picked up by later pages.
		if pages == 2 {
			extra := sampleTurn("chatcmpl-late", sess.ID)
			insert(t, s, extra)
			want[extra.ID] = true
		}
	}
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("pagination saw %d turns, want %d", len(seen), len(want))
	}
	if pages != 6 {
		t.Errorf("%d pages of 10 for %d turns, want 6", pages, total+1)
	}
}

func testStats(t *testing.T, open Opener) {
	s := fresh(t, open)
	st, err := s.Stats(ctx(t))
	if err != nil {
		t.Fatalf("Stats(empty): %v", err)
	}
	if st.Sessions != 0 || st.Turns != 0 || st.PolicyVersion != 0 {
		t.Errorf("empty Stats = %+v", st)
	}
	a, b := newSession(t, s, "a"), newSession(t, s, "b")
	for i, v := range []int64{3, 5, 8} {
		tr := sampleTurn(fmt.Sprintf("chatcmpl-s%d", i), a.ID)
		tr.PolicyVersion = v
		insert(t, s, tr)
	}
	side := sampleTurn("chatcmpl-sside", b.ID)
	side.Type, side.PolicyVersion = store.Side, 9 // the newest turn carries the serving version
	insert(t, s, side)
	if err := s.ObserveTurn(ctx(t), "chatcmpl-s0", nil, store.NextUser, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := s.ObserveTurn(ctx(t), "chatcmpl-sside", nil, store.NextUser, time.Now()); err != nil {
		t.Fatal(err)
	}
	if tr, ok := s.(store.Transitioner); ok {
		for _, step := range [][2]store.TurnState{{store.Generated, store.Observed}, {store.Observed, store.Judged}, {store.Judged, store.Ready}} {
			if err := tr.Transition(ctx(t), "chatcmpl-s1", step[0], step[1], ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := s.ExpireIdle(ctx(t), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	st, err = s.Stats(ctx(t))
	if err != nil {
		t.Fatalf("Stats: %v", err)
	}
	_, transitions := s.(store.Transitioner)
	want := store.Stats{
		Sessions: 2, ExpiredSessions: 2, Turns: 4,
		TurnsByState:  map[store.TurnState]int{store.Observed: 2, store.Expired: 2},
		TurnsByType:   map[store.TurnType]int{store.Main: 3, store.Side: 1},
		AwaitingJudge: 1, PolicyVersion: 9,
	}
	if transitions {
		want.TurnsByState = map[store.TurnState]int{store.Observed: 2, store.Ready: 1, store.Expired: 1}
		want.AwaitingTrainer = 1
	}
	if !reflect.DeepEqual(st, want) {
		t.Errorf("Stats = %+v\nwant    %+v", st, want)
	}
}

// ConcurrentInserts: 200 goroutines, four per session, insert turns at once;
// every turn is recorded once and each session's indexes are 0..n-1.
func testConcurrentInserts(t *testing.T, open Opener) {
	s := fresh(t, open)
	const workers, perSession, turnsEach = 200, 4, 5
	sessions := make([]store.Session, workers/perSession)
	for i := range sessions {
		sessions[i] = newSession(t, s, fmt.Sprintf("c%d", i))
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			sess := sessions[w/perSession]
			for i := range turnsEach {
				tr := sampleTurn(fmt.Sprintf("chatcmpl-w%d-%d", w, i), sess.ID)
				if err := s.InsertTurn(context.Background(), &tr); err != nil {
					t.Errorf("InsertTurn(%s): %v", tr.ID, err)
					return
				}
				// Readers run alongside the writers.
				if _, err := s.Turn(context.Background(), tr.ID); err != nil {
					t.Errorf("Turn(%s) right after insert: %v", tr.ID, err)
				}
			}
		})
	}
	wg.Wait()
	all, err := s.ListTurns(ctx(t), store.TurnFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != workers*turnsEach {
		t.Fatalf("%d turns recorded, want %d", len(all), workers*turnsEach)
	}
	ids := map[string]bool{}
	indexes := map[string]map[int]bool{}
	for _, tr := range all {
		if ids[tr.ID] {
			t.Fatalf("turn %s recorded twice", tr.ID)
		}
		ids[tr.ID] = true
		if indexes[tr.SessionID] == nil {
			indexes[tr.SessionID] = map[int]bool{}
		}
		if indexes[tr.SessionID][tr.Index] {
			t.Fatalf("session %s has two turns with index %d", tr.SessionID, tr.Index)
		}
		indexes[tr.SessionID][tr.Index] = true
	}
	for _, sess := range sessions {
		n := len(indexes[sess.ID])
		for i := range n {
			if !indexes[sess.ID][i] {
				t.Errorf("session %s is missing index %d of %d", sess.ID, i, n)
			}
		}
		if n != perSession*turnsEach {
			t.Errorf("session %s has %d turns, want %d", sess.ID, n, perSession*turnsEach)
		}
		if got, _ := s.Session(ctx(t), sess.ID); got.Turns != n {
			t.Errorf("session %s counts %d turns, holds %d", sess.ID, got.Turns, n)
		}
	}
}

func testReopen(t *testing.T, open Opener) {
	dir := t.TempDir()
	s := open(t, dir)
	sess := newSession(t, s, "persist")
	want := insert(t, s, sampleTurn("chatcmpl-r1", sess.ID))
	o := insert(t, s, sampleTurn("chatcmpl-r2", sess.ID))
	forced := insert(t, s, forcedTurn("chatcmpl-r3", sess.ID))
	next := []chat.Message{{Role: chat.RoleUser, Content: "go on"}}
	at := time.Date(2026, 11, 21, 7, 0, 0, 0, time.UTC)
	if err := s.ObserveTurn(ctx(t), o.ID, next, store.NextUser, at); err != nil {
		t.Fatal(err)
	}
	o.State, o.NextState, o.NextStateKind, o.ObservedAt = store.Observed, next, store.NextUser, at
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	s = open(t, dir)
	defer s.Close()
	sameTurn(t, getTurn(t, s, want.ID), want)
	sameTurn(t, getTurn(t, s, o.ID), o)
	sameTurn(t, getTurn(t, s, forced.ID), forced)
	got, err := s.SessionByKey(ctx(t), "persist")
	if err != nil || got.ID != sess.ID || got.Turns != 3 {
		t.Errorf("session after reopen = %+v, %v", got, err)
	}
	// Indexes continue where they stopped.
	if tr := insert(t, s, sampleTurn("chatcmpl-r4", sess.ID)); tr.Index != 3 {
		t.Errorf("index after reopen = %d, want 3", tr.Index)
	}
}
