// Package learningtest is the conformance suite for store.Learning, the
// learning loop's extension of the Store: every LearningStore implementation
// runs it (store/sqlite does in learning_test.go).
package learningtest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/store"
)

// Opener opens the store kept at dir, creating it when dir is empty.
type Opener func(t *testing.T, dir string) store.LearningStore

// Run runs every case as a subtest.
func Run(t *testing.T, open Opener) {
	cases := []struct {
		name string
		fn   func(t *testing.T, open Opener)
	}{
		{"JudgmentMovesTurn", testJudgment},
		{"SampleAndReady", testSample},
		{"CommitVersionAtomic", testCommitVersion},
		{"DropTurn", testDropTurn},
		{"SettleSessions", testSettle},
		{"Reopen", testReopen},
		{"LargePayloadsReady", testLargePayloads},
		{"ReviseAfterFeedback", testRevise},
		{"PromotionAndServing", testPromotion},
		{"BrowseSessions", testBrowseSessions},
		{"BrowseTurns", testBrowseTurns},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.fn(t, open) })
	}
}

func fresh(t *testing.T, open Opener) (store.LearningStore, string) {
	t.Helper()
	dir := t.TempDir()
	s := open(t, dir)
	t.Cleanup(func() { s.Close() })
	return s, dir
}

// Seed records a session with n main turns, each answered and observed by the
// next user message, and returns the turns. It is exported for the loop's
// tests, which need realistic rows in a real store.
func Seed(t *testing.T, s store.Store, key string, n int, observe bool) []store.Turn {
	t.Helper()
	ctx := context.Background()
	sess := store.Session{Key: key, KeySource: "header", CreatedAt: time.Now(), LastSeen: time.Now()}
	if err := s.CreateSession(ctx, &sess); err != nil {
		t.Fatalf("create session %s: %v", key, err)
	}
	var turns []store.Turn
	for i := range n {
		tr := store.Turn{
			ID: fmt.Sprintf("chatcmpl-%s-%d", key, i), SessionID: sess.ID, Type: store.Main, CreatedAt: time.Now(),
			Messages:          []chat.Message{{Role: chat.RoleUser, Content: fmt.Sprintf("question %d", i)}},
			PromptIDs:         []int32{1, 2, 3, int32(i)},
			Response:          chat.Message{Role: chat.RoleAssistant, Content: "answer"},
			ResponseIDs:       []int32{7, 8, 9},
			BehaviourLogprobs: []float32{-0.1, -0.2, -0.3},
		}
		if err := s.InsertTurn(ctx, &tr); err != nil {
			t.Fatalf("insert turn: %v", err)
		}
		if observe {
			next := []chat.Message{{Role: chat.RoleUser, Content: "next"}}
			if err := s.ObserveTurn(ctx, tr.ID, next, store.NextUser, time.Now()); err != nil {
				t.Fatalf("observe turn: %v", err)
			}
		}
		turns = append(turns, tr)
	}
	return turns
}

func state(t *testing.T, s store.Store, id string) store.TurnState {
	t.Helper()
	tr, err := s.Turn(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return tr.State
}

func judgment(tr store.Turn, score int, keep bool) store.Judgment {
	return store.Judgment{TurnID: tr.ID, SessionID: tr.SessionID, Score: score, Keep: keep, Why: "test",
		Votes: []store.Vote{{Kind: store.VoteEval, Source: "judge", Score: score, Valid: true, Raw: `ok \boxed{1}`}},
		Hint:  "use metric units please", HintAccepted: true, Judge: "test", Reason: "majority"}
}

func testJudgment(t *testing.T, open Opener) {
	ctx := context.Background()
	s, _ := fresh(t, open)
	turns := Seed(t, s, "j", 2, true)
	j := judgment(turns[0], 1, true)
	if err := s.RecordJudgment(ctx, j); err != nil {
		t.Fatal(err)
	}
	if st := state(t, s, turns[0].ID); st != store.Judged {
		t.Fatalf("state %s, want judged", st)
	}
	if err := s.RecordJudgment(ctx, j); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second judgment: %v, want ErrConflict", err)
	}
	got, err := s.Judgment(ctx, turns[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	got.CreatedAt = time.Time{}
	j.CreatedAt = time.Time{}
	if !reflect.DeepEqual(got, j) {
		t.Errorf("judgment round trip:\n got %+v\nwant %+v", got, j)
	}
	if _, err := s.Judgment(ctx, turns[1].ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("missing judgment: %v", err)
	}
	unobserved := Seed(t, s, "j2", 1, false)
	if err := s.RecordJudgment(ctx, judgment(unobserved[0], 0, false)); !errors.Is(err, store.ErrConflict) {
		t.Errorf("judging a generated turn: %v, want ErrConflict", err)
	}
	list, err := s.ListJudgments(ctx, store.TurnFilter{SessionID: turns[0].SessionID})
	if err != nil || len(list) != 1 {
		t.Errorf("ListJudgments: %d, %v", len(list), err)
	}
	todo, err := s.JudgedToSample(ctx, 0)
	if err != nil || len(todo) != 1 || todo[0].TurnID != turns[0].ID {
		t.Errorf("JudgedToSample = %+v, %v", todo, err)
	}
}

func testSample(t *testing.T, open Opener) {
	ctx := context.Background()
	s, _ := fresh(t, open)
	turns := Seed(t, s, "s", 2, true)
	if err := s.AddSample(ctx, store.Sample{TurnID: turns[0].ID, Method: "combine"}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("sample of an observed turn: %v, want ErrConflict", err)
	}
	for _, tr := range turns {
		if err := s.RecordJudgment(ctx, judgment(tr, 1, true)); err != nil {
			t.Fatal(err)
		}
	}
	// Both judged, no sample yet: the newest come first (the teacher's
	// work goes to what the served policy wrote last); a limit keeps them.
	todo, err := s.JudgedToSample(ctx, 0)
	if err != nil || len(todo) != 2 || todo[0].TurnID != turns[1].ID || todo[1].TurnID != turns[0].ID {
		t.Errorf("JudgedToSample = %+v, %v; want the second turn first", todo, err)
	}
	if todo, err := s.JudgedToSample(ctx, 1); err != nil || len(todo) != 1 || todo[0].TurnID != turns[1].ID {
		t.Errorf("JudgedToSample(limit 1) = %+v, %v; want the second turn", todo, err)
	}
	if st, err := s.LearningStats(ctx); err != nil || st.SamplesPending != 2 || st.SamplesReady != 0 {
		t.Errorf("stats before any sample: pending %d, ready %d, %v; want 2, 0", st.SamplesPending, st.SamplesReady, err)
	}
	smp := store.Sample{TurnID: turns[1].ID, SessionID: turns[1].SessionID, Method: "combine", UseRL: true, Reward: 1,
		TeacherLogprobs: []float32{-1, -2, -3}, TeacherAdapter: "", TeacherVersion: 2, Why: "score +1"}
	if err := s.AddSample(ctx, smp); err != nil {
		t.Fatal(err)
	}
	if err := s.AddSample(ctx, smp); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second sample: %v, want ErrConflict", err)
	}
	samples, ts, err := s.ReadySamples(ctx, 0)
	if err != nil || len(samples) != 1 || len(ts) != 1 {
		t.Fatalf("ReadySamples: %d %d %v", len(samples), len(ts), err)
	}
	got := samples[0]
	if got.TurnID != smp.TurnID || !reflect.DeepEqual(got.TeacherLogprobs, smp.TeacherLogprobs) || !got.UseRL ||
		got.Reward != 1 || got.TeacherVersion != 2 || got.Why != smp.Why || got.TrainedVersion != 0 {
		t.Errorf("sample round trip: %+v", got)
	}
	if !reflect.DeepEqual(ts[0].ResponseIDs, turns[1].ResponseIDs) || !reflect.DeepEqual(ts[0].BehaviourLogprobs, turns[1].BehaviourLogprobs) {
		t.Errorf("ready turn lost its tokens: %+v", ts[0])
	}
	todo, _ = s.JudgedToSample(ctx, 0)
	if len(todo) != 1 || todo[0].TurnID != turns[0].ID {
		t.Errorf("JudgedToSample after one sample: %+v", todo)
	}
	if st, err := s.LearningStats(ctx); err != nil || st.SamplesPending != 1 || st.SamplesReady != 1 {
		t.Errorf("stats after one sample: pending %d, ready %d, %v; want 1, 1", st.SamplesPending, st.SamplesReady, err)
	}
	if got.TeacherResponseIDs != nil {
		t.Errorf("sample without a teacher response read back %v", got.TeacherResponseIDs)
	}
	// A sample on a response the teacher wrote keeps its ids.
	tw := store.Sample{TurnID: turns[0].ID, SessionID: turns[0].SessionID, Method: "opd",
		TeacherLogprobs: []float32{-0.5, -0.25}, TeacherResponseIDs: []int32{7, 49152}, Why: "teacher wrote"}
	if err := s.AddSample(ctx, tw); err != nil {
		t.Fatal(err)
	}
	samples, _, err = s.ReadySamples(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, g := range samples {
		if g.TurnID == tw.TurnID {
			found = true
			if !reflect.DeepEqual(g.TeacherResponseIDs, tw.TeacherResponseIDs) || !reflect.DeepEqual(g.TeacherLogprobs, tw.TeacherLogprobs) {
				t.Errorf("teacher-written sample round trip: %+v", g)
			}
		}
	}
	if !found {
		t.Errorf("teacher-written sample not ready: %+v", samples)
	}
}

// ready brings n fresh turns to ready.
func ready(t *testing.T, s store.LearningStore, key string, n int) []store.Turn {
	t.Helper()
	ctx := context.Background()
	turns := Seed(t, s, key, n, true)
	for _, tr := range turns {
		if err := s.RecordJudgment(ctx, judgment(tr, 1, true)); err != nil {
			t.Fatal(err)
		}
		if err := s.AddSample(ctx, store.Sample{TurnID: tr.ID, Method: "rl", UseRL: true, Reward: 1, Why: "score +1"}); err != nil {
			t.Fatal(err)
		}
	}
	return turns
}

func testCommitVersion(t *testing.T, open Opener) {
	ctx := context.Background()
	s, _ := fresh(t, open)
	turns := ready(t, s, "c", 4)
	if _, err := s.LatestVersion(ctx); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("LatestVersion of an empty store: %v", err)
	}
	v1 := store.Version{Version: 1, Dir: "/v/1", Method: "rl", Metrics: store.VersionMetrics{Loss: 0.5, Samples: 2, DroppedStale: 1, ClipFraction: 0.1}}
	if err := s.CommitVersion(ctx, v1, []string{turns[0].ID, turns[1].ID}, []string{turns[2].ID}, "stale: test"); err != nil {
		t.Fatal(err)
	}
	for i, want := range []store.TurnState{store.Trained, store.Trained, store.Dropped, store.Ready} {
		if st := state(t, s, turns[i].ID); st != want {
			t.Errorf("turn %d: %s, want %s", i, st, want)
		}
	}
	// A second commit that includes an already trained turn changes nothing.
	v2 := store.Version{Version: 2, Dir: "/v/2"}
	if err := s.CommitVersion(ctx, v2, []string{turns[3].ID, turns[0].ID}, nil, ""); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("commit with a trained turn: %v, want ErrConflict", err)
	}
	if st := state(t, s, turns[3].ID); st != store.Ready {
		t.Errorf("failed commit moved turn 3 to %s", st)
	}
	if latest, err := s.LatestVersion(ctx); err != nil || latest.Version != 1 {
		t.Errorf("latest after failed commit: %+v %v", latest, err)
	}
	// A version that is not newer is refused.
	if err := s.CommitVersion(ctx, v1, []string{turns[3].ID}, nil, ""); !errors.Is(err, store.ErrConflict) {
		t.Errorf("re-commit of v1: %v, want ErrConflict", err)
	}
	latest, err := s.LatestVersion(ctx)
	if err != nil || latest.Version != 1 || latest.Dir != "/v/1" || latest.Metrics != v1.Metrics {
		t.Errorf("latest %+v, %v", latest, err)
	}
	samples, err := s.ListSamples(ctx, store.TurnFilter{SessionID: turns[0].SessionID})
	if err != nil || len(samples) != 4 || samples[0].TrainedVersion != 1 || samples[3].TrainedVersion != 0 {
		t.Errorf("samples after commit: %+v %v", samples, err)
	}
	tr, _ := s.Turn(ctx, turns[2].ID)
	if tr.DropReason != "stale: test" {
		t.Errorf("stale drop reason %q", tr.DropReason)
	}
	st, err := s.LearningStats(ctx)
	if err != nil || st.Trained != 2 || st.SamplesReady != 1 || st.Versions != 1 || st.DroppedBy["stale"] != 1 || st.Latest == nil {
		t.Errorf("stats %+v %v", st, err)
	}
}

func testDropTurn(t *testing.T, open Opener) {
	ctx := context.Background()
	s, _ := fresh(t, open)
	turns := Seed(t, s, "d", 2, true)
	if err := s.DropTurn(ctx, turns[0].ID, "side turn: never trained"); err != nil {
		t.Fatal(err)
	}
	tr, _ := s.Turn(ctx, turns[0].ID)
	if tr.State != store.Dropped || tr.DropReason != "side turn: never trained" {
		t.Errorf("dropped turn: %s %q", tr.State, tr.DropReason)
	}
	if err := s.DropTurn(ctx, turns[0].ID, "again"); !errors.Is(err, store.ErrConflict) {
		t.Errorf("dropping a dropped turn: %v, want ErrConflict", err)
	}
	if err := s.DropTurn(ctx, "nope", "x"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("dropping a missing turn: %v, want ErrNotFound", err)
	}
}

func testSettle(t *testing.T, open Opener) {
	ctx := context.Background()
	s, _ := fresh(t, open)
	held := Seed(t, s, "held", 2, true)    // judged, not kept → settles
	pending := Seed(t, s, "pend", 2, true) // one still observed → waits
	kept := Seed(t, s, "kept", 1, true)    // kept, sample not built → waits
	for _, tr := range held {
		if err := s.RecordJudgment(ctx, judgment(tr, 0, false)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RecordJudgment(ctx, judgment(pending[0], 0, false)); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordJudgment(ctx, judgment(kept[0], 1, true)); err != nil {
		t.Fatal(err)
	}
	if ids, err := s.SessionsToSettle(ctx, 0); err != nil || len(ids) != 0 {
		t.Fatalf("live sessions settle: %v %v", ids, err)
	}
	if _, err := s.ExpireIdle(ctx, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	ids, err := s.SessionsToSettle(ctx, 0)
	if err != nil || len(ids) != 1 || ids[0] != held[0].SessionID {
		t.Fatalf("SessionsToSettle = %v, %v; want [%s]", ids, err, held[0].SessionID)
	}
}

func testReopen(t *testing.T, open Opener) {
	ctx := context.Background()
	s, dir := fresh(t, open)
	turns := ready(t, s, "r", 1)
	if err := s.CommitVersion(ctx, store.Version{Version: 1, Dir: "/v/1"}, []string{turns[0].ID}, nil, ""); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2 := open(t, dir)
	defer s2.Close()
	if v, err := s2.LatestVersion(ctx); err != nil || v.Version != 1 {
		t.Errorf("after reopen: %+v %v", v, err)
	}
	if j, err := s2.Judgment(ctx, turns[0].ID); err != nil || j.Score != 1 {
		t.Errorf("judgment after reopen: %+v %v", j, err)
	}
}

// testLargePayloads: a ready sample's turn comes back whole however the
// store keeps big prompts (store/sqlite cuts them into shared chunks).
func testLargePayloads(t *testing.T, open Opener) {
	ctx := context.Background()
	s, _ := fresh(t, open)
	sess := store.Session{Key: "big", KeySource: "header", CreatedAt: time.Now(), LastSeen: time.Now()}
	if err := s.CreateSession(ctx, &sess); err != nil {
		t.Fatal(err)
	}
	prompt := make([]int32, 20000)
	for i := range prompt {
		prompt[i] = int32(i * 7 % 151000)
	}
	system := strings.Repeat("You are a careful assistant. ", 2000)
	tr := store.Turn{ID: "chatcmpl-big", SessionID: sess.ID, Type: store.Main, CreatedAt: time.Now(),
		Messages:   []chat.Message{{Role: chat.RoleSystem, Content: system}, {Role: chat.RoleUser, Content: "q"}},
		PromptText: system, PromptIDs: prompt, Response: chat.Message{Role: chat.RoleAssistant, Content: "a"},
		ResponseIDs: []int32{1, 2}, BehaviourLogprobs: []float32{-1, -2}}
	if err := s.InsertTurn(ctx, &tr); err != nil {
		t.Fatal(err)
	}
	if err := s.ObserveTurn(ctx, tr.ID, []chat.Message{{Role: chat.RoleUser, Content: "thanks"}}, store.NextUser, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordJudgment(ctx, judgment(tr, 1, true)); err != nil {
		t.Fatal(err)
	}
	if err := s.AddSample(ctx, store.Sample{TurnID: tr.ID, Method: "rl", UseRL: true, Reward: 1, Why: "score +1"}); err != nil {
		t.Fatal(err)
	}
	_, turns, err := s.ReadySamples(ctx, 0)
	if err != nil || len(turns) != 1 {
		t.Fatalf("ReadySamples: %d turns, %v", len(turns), err)
	}
	got := turns[0]
	if !reflect.DeepEqual(got.PromptIDs, prompt) || got.Messages[0].Content != system || got.PromptText != system ||
		!reflect.DeepEqual(got.ResponseIDs, tr.ResponseIDs) {
		t.Errorf("large ready turn came back changed: %d prompt ids, %d-byte system prompt", len(got.PromptIDs), len(got.Messages[0].Content))
	}
}

func testRevise(t *testing.T, open Opener) {
	ctx := context.Background()
	s, _ := fresh(t, open)
	turns := ready(t, s, "rev", 2)
	if out, err := s.OutdatedByFeedback(ctx, 0); err != nil || len(out) != 0 {
		t.Fatalf("outdated before feedback: %v %v", out, err)
	}
	if err := s.AddFeedback(ctx, turns[0].ID, store.Feedback{Rating: -1, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	out, err := s.OutdatedByFeedback(ctx, 0)
	if err != nil || len(out) != 1 || out[0].TurnID != turns[0].ID {
		t.Fatalf("outdated after feedback: %+v %v", out, err)
	}
	j := out[0]
	j.Score, j.Reason, j.Why = -1, "explicit feedback decides", "score -1: RL term"
	if err := s.ReviseJudgment(ctx, j, true, -1, "revised"); err != nil {
		t.Fatal(err)
	}
	got, err := s.Judgment(ctx, turns[0].ID)
	if err != nil || got.Score != -1 || got.RevisedAt.IsZero() || got.Reason != j.Reason {
		t.Errorf("revised judgment: %+v %v", got, err)
	}
	samples, _, err := s.ReadySamples(ctx, 0)
	if err != nil || len(samples) != 2 || samples[0].Reward != -1 || samples[0].Why != "revised" || samples[1].Reward != 1 {
		t.Errorf("samples after revision: %+v %v", samples, err)
	}
	if out, _ := s.OutdatedByFeedback(ctx, 0); len(out) != 0 {
		t.Errorf("still outdated after revision: %+v", out)
	}
	if err := s.CommitVersion(ctx, store.Version{Version: 1, Dir: "/v1"}, []string{turns[1].ID}, nil, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.ReviseJudgment(ctx, judgment(turns[1], -1, true), true, -1, "late"); !errors.Is(err, store.ErrConflict) {
		t.Errorf("revising a trained turn: %v, want ErrConflict", err)
	}

	// A teacher-written sample trains the teacher's tokens: a rating of
	// the policy's response, revised or not, never becomes its RL term.
	tw := Seed(t, s, "rev-teacher", 1, true)[0]
	if err := s.RecordJudgment(ctx, judgment(tw, -1, true)); err != nil {
		t.Fatal(err)
	}
	if err := s.AddSample(ctx, store.Sample{TurnID: tw.ID, Method: "combine", TeacherLogprobs: []float32{-0.5, -0.25},
		TeacherResponseIDs: []int32{7, 8}, Why: "trained on the teacher's response"}); err != nil {
		t.Fatal(err)
	}
	if err := s.ReviseJudgment(ctx, judgment(tw, 1, true), true, 1, "revised, teacher-written"); err != nil {
		t.Fatal(err)
	}
	samples, _, err = s.ReadySamples(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, smp := range samples {
		if smp.TurnID != tw.ID {
			continue
		}
		found = true
		if smp.UseRL || smp.Reward != 0 || smp.Why != "revised, teacher-written" || len(smp.TeacherResponseIDs) != 2 {
			t.Errorf("teacher-written sample after revision: use_rl %v, reward %g, why %q, %d teacher ids; want OPD only, the new why",
				smp.UseRL, smp.Reward, smp.Why, len(smp.TeacherResponseIDs))
		}
	}
	if !found {
		t.Errorf("teacher-written sample missing after revision: %+v", samples)
	}
}

// testPromotion: a rejected version is recorded but not served; a request to
// serve an earlier version waits until it is carried out by a copy recorded
// as a new version, in one transaction with the request's result.
func testPromotion(t *testing.T, open Opener) {
	ctx := context.Background()
	s, dir := fresh(t, open)
	turns := ready(t, s, "p", 3)
	if _, err := s.ServedVersion(ctx); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("served version of an empty store: %v", err)
	}
	if err := s.CommitVersion(ctx, store.Version{Version: 1, Dir: "/v/1"}, []string{turns[0].ID}, nil, ""); err != nil {
		t.Fatal(err)
	}
	rejected := store.Version{Version: 2, Dir: "/v/2", Status: store.VersionRejected, StatusReason: "lost 2 of 16 facts",
		Metrics: store.VersionMetrics{RetentionFacts: 16, RetentionLost: 2, RetentionLogprob: -3, RetentionBase: -1}}
	if err := s.CommitVersion(ctx, rejected, []string{turns[1].ID}, nil, ""); err != nil {
		t.Fatal(err)
	}
	// The rejected version's samples are trained all the same: never twice.
	if st := state(t, s, turns[1].ID); st != store.Trained {
		t.Errorf("sample of the rejected version is %s", st)
	}
	if err := s.CommitVersion(ctx, store.Version{Version: 3, Status: "maybe"}, nil, nil, ""); err == nil {
		t.Error("unknown status accepted")
	}
	served, err := s.ServedVersion(ctx)
	if err != nil || served.Version != 1 || served.Status != store.VersionPromoted {
		t.Fatalf("served %+v %v, want v1", served, err)
	}
	latest, err := s.LatestVersion(ctx)
	if err != nil || latest.Status != store.VersionRejected || latest.StatusReason != rejected.StatusReason || latest.Metrics != rejected.Metrics {
		t.Errorf("latest %+v %v", latest, err)
	}

	if _, err := s.RequestServing(ctx, 9, "promote"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("request for a missing version: %v", err)
	}
	if _, err := s.RequestServing(ctx, 1, "delete"); err == nil {
		t.Error("unknown action accepted")
	}
	if _, err := s.PendingServing(ctx); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("pending with none: %v", err)
	}
	req, err := s.RequestServing(ctx, 2, "promote")
	if err != nil {
		t.Fatal(err)
	}
	// The request survives a restart.
	s.Close()
	s = open(t, dir)
	t.Cleanup(func() { s.Close() })
	got, err := s.PendingServing(ctx)
	if err != nil || got.ID != req.ID || got.Version != 2 || got.Action != "promote" {
		t.Fatalf("pending %+v %v", got, err)
	}
	cp := store.Version{Version: 3, Dir: "/v/3", SourceVersion: 2, StatusReason: "promote v2 by hand", Metrics: rejected.Metrics}
	if err := s.CommitServing(ctx, req.ID, cp, "served as v3"); err != nil {
		t.Fatal(err)
	}
	if err := s.CommitServing(ctx, req.ID, store.Version{Version: 4}, "again"); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a request carried out twice: %v", err)
	}
	if _, err := s.LatestVersion(ctx); err != nil {
		t.Fatal(err)
	}
	served, err = s.ServedVersion(ctx)
	if err != nil || served.Version != 3 || served.SourceVersion != 2 {
		t.Errorf("served %+v %v, want v3 from v2", served, err)
	}
	if _, err := s.PendingServing(ctx); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("request still pending: %v", err)
	}
	req2, _ := s.RequestServing(ctx, 1, "rollback")
	if err := s.FailServing(ctx, req2.ID, "no folder"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PendingServing(ctx); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("failed request still pending: %v", err)
	}
}
