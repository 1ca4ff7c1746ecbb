package learningtest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/store"
)

// browser returns s's store.Browser: every learning store serves the
// dashboard too.
func browser(t *testing.T, s store.LearningStore) store.Browser {
	t.Helper()
	b, ok := s.(store.Browser)
	if !ok {
		t.Fatalf("%T does not implement store.Browser (the dashboard's queries)", s)
	}
	return b
}

// testBrowseSessions checks the session list: newest activity first, turn
// counts by type, search on key, client and id, and keyset pages that neither
// skip nor repeat a session.
func testBrowseSessions(t *testing.T, open Opener) {
	ctx := context.Background()
	s, _ := fresh(t, open)
	b := browser(t, s)
	base := time.Date(2026, 11, 21, 5, 0, 0, 0, time.UTC)
	var ids []string // newest first
	for i := range 7 {
		sess := store.Session{Key: fmt.Sprintf("conv-%d", i), KeySource: "header", Client: fmt.Sprintf("OpenAI/Python 1.%d", i),
			CreatedAt: base.Add(time.Duration(i) * time.Minute)}
		// Two sessions share a last activity time: the id breaks the tie.
		if i == 4 {
			sess.CreatedAt = base.Add(3 * time.Minute)
		}
		if err := s.CreateSession(ctx, &sess); err != nil {
			t.Fatal(err)
		}
		ids = append([]string{sess.ID}, ids...)
	}
	// Turns: conversation 6 gets two main turns and a side turn.
	sessions, err := b.ListSessions(ctx, store.SessionFilter{Limit: 1})
	if err != nil || len(sessions) != 1 || sessions[0].Key != "conv-6" {
		t.Fatalf("first page: %+v %v", sessions, err)
	}
	newest := sessions[0].Session
	for i, typ := range []store.TurnType{store.Main, store.Side, store.Main} {
		tr := store.Turn{ID: fmt.Sprintf("chatcmpl-b%d", i), SessionID: newest.ID, Type: typ, CreatedAt: newest.CreatedAt,
			Response: chat.Message{Role: chat.RoleAssistant, Content: "hi"}}
		if err := s.InsertTurn(ctx, &tr); err != nil {
			t.Fatal(err)
		}
	}
	all, err := b.ListSessions(ctx, store.SessionFilter{})
	if err != nil || len(all) != 7 {
		t.Fatalf("all sessions: %d %v", len(all), err)
	}
	if all[0].Key != "conv-6" || all[0].MainTurns != 2 || all[0].SideTurns != 1 || all[0].Client != "OpenAI/Python 1.6" || all[0].Turns != 3 {
		t.Errorf("newest session = %+v", all[0])
	}
	for i := 1; i < len(all); i++ {
		p, c := all[i-1], all[i]
		if c.LastSeen.After(p.LastSeen) || (c.LastSeen.Equal(p.LastSeen) && c.ID > p.ID) {
			t.Errorf("sessions %d and %d out of order: %v %s, %v %s", i-1, i, p.LastSeen, p.ID, c.LastSeen, c.ID)
		}
		if c.MainTurns != 0 || c.SideTurns != 0 {
			t.Errorf("session %s has counts %d/%d, want none", c.Key, c.MainTurns, c.SideTurns)
		}
	}
	// Keyset pages of 3 visit every session once, in the same order.
	var paged []string
	f := store.SessionFilter{Limit: 3}
	for range 10 {
		page, err := b.ListSessions(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		for _, p := range page {
			paged = append(paged, p.ID)
		}
		last := page[len(page)-1]
		f.BeforeSeen, f.BeforeID = last.LastSeen, last.ID
	}
	var want []string
	for _, a := range all {
		want = append(want, a.ID)
	}
	if fmt.Sprint(paged) != fmt.Sprint(want) {
		t.Errorf("paged %v, want %v", paged, want)
	}
	// Search: key, client, internal id; case-insensitive; no wildcards.
	for _, c := range []struct {
		query string
		want  int
	}{{"CONV-1", 1}, {"python 1.2", 1}, {"conv", 7}, {"%", 0}, {"_", 0}, {all[3].ID, 1}, {"nobody", 0}} {
		got, err := b.ListSessions(ctx, store.SessionFilter{Query: c.query})
		if err != nil || len(got) != c.want {
			t.Errorf("search %q: %d sessions (%v), want %d", c.query, len(got), err, c.want)
		}
	}
}

// testBrowseTurns checks turn summaries: payload-free rows carrying the
// preview, feedback, verdict and training version, paged like ListTurns.
func testBrowseTurns(t *testing.T, open Opener) {
	ctx := context.Background()
	s, _ := fresh(t, open)
	b := browser(t, s)
	turns := ready(t, s, "browse", 3)
	if err := s.CommitVersion(ctx, store.Version{Version: 1, Dir: "/v/1", Metrics: store.VersionMetrics{Samples: 1}},
		[]string{turns[0].ID}, nil, ""); err != nil {
		t.Fatal(err)
	}
	extra := Seed(t, s, "other", 1, false)
	if err := s.AddFeedback(ctx, extra[0].ID, store.Feedback{Rating: -1, Text: "<b>wrong</b>", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	got, err := b.ListTurnSummaries(ctx, store.TurnFilter{SessionID: turns[0].SessionID})
	if err != nil || len(got) != 3 {
		t.Fatalf("summaries: %d %v", len(got), err)
	}
	first := got[0]
	if first.ID != turns[0].ID || first.Index != 0 || first.Type != store.Main || first.State != store.Trained ||
		first.Preview != "answer" || !first.Judged || first.Score != 1 || !first.HintAccepted || first.TrainedVersion != 1 {
		t.Errorf("first summary = %+v", first)
	}
	if got[1].State != store.Ready || got[1].TrainedVersion != 0 || got[1].Seq <= first.Seq {
		t.Errorf("second summary = %+v", got[1])
	}
	page, err := b.ListTurnSummaries(ctx, store.TurnFilter{AfterID: got[0].Seq, Limit: 1})
	if err != nil || len(page) != 1 || page[0].ID != got[1].ID {
		t.Errorf("page after the first: %+v %v", page, err)
	}
	other, err := b.ListTurnSummaries(ctx, store.TurnFilter{SessionID: extra[0].SessionID})
	if err != nil || len(other) != 1 {
		t.Fatalf("other session: %+v %v", other, err)
	}
	if o := other[0]; o.Judged || o.Feedback == nil || o.Feedback.Rating != -1 || o.Feedback.Text != "<b>wrong</b>" || o.State != store.Observed {
		t.Errorf("feedback summary = %+v (feedback %+v)", o, o.Feedback)
	}

	smp, err := b.Sample(ctx, turns[0].ID)
	if err != nil || smp.TrainedVersion != 1 || smp.Reward != 1 || !smp.UseRL {
		t.Errorf("Sample = %+v %v", smp, err)
	}
	if _, err := b.Sample(ctx, extra[0].ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Sample of an unsampled turn: %v, want ErrNotFound", err)
	}
	act, err := b.Activity(ctx, time.Now().Add(-time.Hour))
	if err != nil || act.Judged != 3 || act.Sampled != 3 || act.Versions != 1 || act.Trained != 1 {
		t.Errorf("Activity = %+v %v", act, err)
	}
	if act, err := b.Activity(ctx, time.Now().Add(time.Hour)); err != nil || act.Judged != 0 || act.Versions != 0 {
		t.Errorf("Activity from the future = %+v %v", act, err)
	}
}
