package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawrl/clawrl/api"
	"github.com/clawrl/clawrl/engine/scripted"
	"github.com/clawrl/clawrl/store"
	"github.com/clawrl/clawrl/store/learningtest"
	"github.com/clawrl/clawrl/store/sqlite"
	"github.com/clawrl/clawrl/ui"
)

const key = "ui-test-key"

type fixture struct {
	url   string
	store *sqlite.Store
	bench string
}

// newFixture serves the gateway with the dashboard mounted, behind a key,
// on the real SQLite store.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "clawrl.db"), sqlite.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	bench := t.TempDir()
	eng := scripted.New(scripted.Options{})
	dash, err := ui.New(ui.Config{Store: st, Logger: quiet, Model: "scripted", Decode: eng.Format().Decode, BenchDir: bench})
	if err != nil {
		t.Fatal(err)
	}
	gw, err := api.New(api.Config{Engine: eng, Store: st, Logger: quiet, APIKey: key, UI: dash})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(gw.Handler())
	t.Cleanup(hs.Close)
	return &fixture{url: hs.URL, store: st, bench: bench}
}

// get fetches path (with the key unless bare) without following redirects.
func (f *fixture) get(t *testing.T, path string, bare bool) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, f.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bare {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func (f *fixture) getJSON(t *testing.T, path string, v any) {
	t.Helper()
	resp, body := f.get(t, path, false)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: %v\n%s", path, err, body)
	}
}

// TestKey checks what needs the key: the static page does not (it holds no
// data), every piece of data does, and a path that only looks like an asset
// gets no data.
func TestKey(t *testing.T) {
	f := newFixture(t)
	learningtest.Seed(t, f.store, "alice", 1, true)
	for _, c := range []struct {
		path string
		want int
	}{
		{"/", http.StatusOK},
		{"/ui/assets/app.js", http.StatusOK},
		{"/ui/assets/app.css", http.StatusOK},
		{"/ui/assets/favicon.svg", http.StatusOK},
		{"/ui/api/overview", http.StatusUnauthorized},
		{"/ui/api/sessions", http.StatusUnauthorized},
		{"/ui/api/learning", http.StatusUnauthorized},
		{"/ui/api/turns/chatcmpl-alice-0", http.StatusUnauthorized},
		{"/ui/assets/../api/sessions", http.StatusUnauthorized},
		{"/ui/assets/%2e%2e/api/sessions", http.StatusUnauthorized},
		{"/v1/models", http.StatusUnauthorized},
		{"/healthz", http.StatusOK},
	} {
		resp, body := f.get(t, c.path, true)
		if resp.StatusCode != c.want {
			t.Errorf("GET %s without the key: %d, want %d\n%s", c.path, resp.StatusCode, c.want, body)
		}
		if strings.Contains(string(body), "question 0") {
			t.Errorf("GET %s without the key returned conversation text", c.path)
		}
	}
	resp, body := f.get(t, "/", true)
	csp := resp.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") || !strings.Contains(string(body), `src="/ui/assets/app.js"`) {
		t.Errorf("index: CSP %q\n%s", csp, body)
	}
	resp, _ = f.get(t, "/ui/api/sessions", false)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("data with the key: %d, Cache-Control %q", resp.StatusCode, resp.Header.Get("Cache-Control"))
	}
	// Unknown dashboard routes answer in the API's error shape.
	resp, body = f.get(t, "/ui/api/nothing", false)
	var e struct {
		Error struct{ Message, Type, Code string }
	}
	if resp.StatusCode != http.StatusNotFound || json.Unmarshal(body, &e) != nil || e.Error.Code != "not_found" {
		t.Errorf("unknown route: %d %s", resp.StatusCode, body)
	}
}

type sessionsPage struct {
	Sessions []struct {
		ID, Name   string
		ClientID   string `json:"client_id"`
		Main, Side int
	}
	Next *string
}

// TestSessionsPages pages through the session list and checks that the
// pages join into the whole list, and that bad cursors and limits are 400s.
func TestSessionsPages(t *testing.T) {
	f := newFixture(t)
	for i := range 7 {
		learningtest.Seed(t, f.store, fmt.Sprintf("conv-%d", i), i%3, false)
	}
	var all sessionsPage
	f.getJSON(t, "/ui/api/sessions?limit=200", &all)
	if len(all.Sessions) != 7 || all.Next != nil {
		t.Fatalf("all sessions: %d, next %v", len(all.Sessions), all.Next)
	}
	var ids []string
	cursor := ""
	for range 10 {
		var page sessionsPage
		f.getJSON(t, "/ui/api/sessions?limit=3"+cursor, &page)
		for _, s := range page.Sessions {
			ids = append(ids, s.ID)
		}
		if page.Next == nil {
			break
		}
		cursor = "&before=" + *page.Next
	}
	var want []string
	for _, s := range all.Sessions {
		want = append(want, s.ID)
	}
	if fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Errorf("pages %v, want %v", ids, want)
	}
	var found sessionsPage
	f.getJSON(t, "/ui/api/sessions?q=CONV-4", &found)
	if len(found.Sessions) != 1 || found.Sessions[0].Name != "conv-4" || found.Sessions[0].Main != 1 {
		t.Errorf("search conv-4: %+v", found.Sessions)
	}
	for _, bad := range []string{"?before=nope", "?before=12.", "?limit=-1", "?limit=x", "?q=" + strings.Repeat("a", 600)} {
		if resp, body := f.get(t, "/ui/api/sessions"+bad, false); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("sessions%s: %d %s", bad[:min(len(bad), 20)], resp.StatusCode, body)
		}
	}
}

// TestTurnPage checks a judged and trained turn's page and a session's turn
// list, and 404s for what does not exist.
func TestTurnPage(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	turns := learningtest.Seed(t, f.store, "bob", 3, true)
	j := store.Judgment{TurnID: turns[0].ID, SessionID: turns[0].SessionID, Score: 1, Keep: true, Why: "score +1: RL term",
		Votes: []store.Vote{{Kind: store.VoteEval, Source: "judge", Score: 1, Valid: true, Raw: `fine \boxed{1}`}},
		Hint:  "answer in metric units", HintAccepted: true, Judge: "engine:base", Reason: "majority"}
	if err := f.store.RecordJudgment(ctx, j); err != nil {
		t.Fatal(err)
	}
	if err := f.store.AddSample(ctx, store.Sample{TurnID: turns[0].ID, Method: "rl", UseRL: true, Reward: 1, Why: "score +1"}); err != nil {
		t.Fatal(err)
	}
	if err := f.store.CommitVersion(ctx, store.Version{Version: 1, Dir: t.TempDir(), Method: "rl",
		Metrics: store.VersionMetrics{Samples: 1, Loss: 0.25, MeanReward: 1}}, []string{turns[0].ID}, nil, ""); err != nil {
		t.Fatal(err)
	}
	var page struct {
		Turn struct {
			ID, State string
			Messages  []struct{ Role, Content string }
			NextState []struct{ Content string } `json:"next_state"`
		}
		Judgment *struct {
			Score        int
			Hint         string
			HintAccepted bool `json:"hint_accepted"`
			Votes        []struct{ Raw string }
		}
		Sample *struct {
			Reward         float64
			TrainedVersion int64 `json:"trained_version"`
		}
		Session struct{ Name string }
	}
	f.getJSON(t, "/ui/api/turns/"+turns[0].ID, &page)
	if page.Turn.State != "trained" || page.Turn.Messages[0].Content != "question 0" || page.Turn.NextState[0].Content != "next" || page.Session.Name != "bob" {
		t.Errorf("turn page: %+v", page.Turn)
	}
	if page.Judgment == nil || page.Judgment.Score != 1 || !page.Judgment.HintAccepted || page.Judgment.Votes[0].Raw != `fine \boxed{1}` {
		t.Errorf("judgment: %+v", page.Judgment)
	}
	if page.Sample == nil || page.Sample.TrainedVersion != 1 || page.Sample.Reward != 1 {
		t.Errorf("sample: %+v", page.Sample)
	}
	var other struct {
		Judgment, Sample any
	}
	f.getJSON(t, "/ui/api/turns/"+turns[1].ID, &other)
	if other.Judgment != nil || other.Sample != nil {
		t.Errorf("unjudged turn: %+v", other)
	}
	var session struct {
		Turns []struct {
			ID             string
			TrainedVersion int64 `json:"trained_version"`
			Judged         bool
		}
		Next     *int64
		LastMain string `json:"last_main"`
	}
	f.getJSON(t, "/ui/api/sessions/"+turns[0].SessionID+"?limit=2", &session)
	if len(session.Turns) != 2 || session.Next == nil || session.Turns[0].TrainedVersion != 1 || !session.Turns[0].Judged || session.Turns[1].Judged {
		t.Fatalf("session page: %+v next %v", session.Turns, session.Next)
	}
	if session.LastMain != turns[2].ID {
		t.Errorf("last main turn %q, want %q", session.LastMain, turns[2].ID)
	}
	var rest struct{ Turns []struct{ ID string } }
	f.getJSON(t, fmt.Sprintf("/ui/api/sessions/%s?limit=2&after=%d", turns[0].SessionID, *session.Next), &rest)
	if len(rest.Turns) != 1 || rest.Turns[0].ID != turns[2].ID {
		t.Errorf("second page: %+v", rest.Turns)
	}
	for _, path := range []string{"/ui/api/turns/chatcmpl-none", "/ui/api/sessions/sess-none"} {
		if resp, body := f.get(t, path, false); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d %s", path, resp.StatusCode, body)
		}
	}
	if resp, _ := f.get(t, "/ui/api/sessions/"+turns[0].SessionID+"?after=x", false); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("bad after: %d", resp.StatusCode)
	}

	// The learning page: the version, its numbers and the throughput.
	var learning struct {
		LatestVersion int64 `json:"latest_version"`
		Versions      []struct {
			Version int64
			Metrics store.VersionMetrics
			Status  string
		}
		Activity []struct {
			Judged  int
			Trained int
			Minutes float64
		}
		Queues struct {
			AwaitingJudge int `json:"awaiting_judge"`
		}
	}
	f.getJSON(t, "/ui/api/learning", &learning)
	if learning.LatestVersion != 1 || len(learning.Versions) != 1 || learning.Versions[0].Metrics.Loss != 0.25 ||
		learning.Versions[0].Status != store.VersionPromoted ||
		learning.Activity[0].Judged != 1 || learning.Activity[0].Trained != 1 || learning.Queues.AwaitingJudge != 2 {
		t.Errorf("learning: %+v", learning)
	}

	// A 👎 that trains on the teacher's answer: the page shows that answer.
	wrote := scripted.New(scripted.Options{}).Format().Encode("Paris. Hope this helps!")
	if err := f.store.RecordJudgment(ctx, store.Judgment{TurnID: turns[2].ID, SessionID: turns[2].SessionID, Score: -1, Keep: true,
		Hint: "End with \"Hope this helps!\"", HintAccepted: true, Judge: "feedback", Why: "score -1"}); err != nil {
		t.Fatal(err)
	}
	if err := f.store.AddSample(ctx, store.Sample{TurnID: turns[2].ID, Method: "combine", TeacherLogprobs: make([]float32, len(wrote)),
		TeacherResponseIDs: wrote, Why: "score -1 and an accepted hint: RL and OPD terms; trained on the teacher's response"}); err != nil {
		t.Fatal(err)
	}
	var taught struct {
		Sample *struct {
			TeacherWrote    bool   `json:"teacher_wrote"`
			TeacherResponse string `json:"teacher_response"`
			Tokens          int    `json:"teacher_response_tokens"`
		}
	}
	f.getJSON(t, "/ui/api/turns/"+turns[2].ID, &taught)
	if s := taught.Sample; s == nil || !s.TeacherWrote || s.TeacherResponse != "Paris. Hope this helps!" || s.Tokens != len(wrote) {
		t.Errorf("teacher-written sample: %+v", s)
	}
	var own struct {
		Sample map[string]any
	}
	f.getJSON(t, "/ui/api/turns/"+turns[0].ID, &own)
	if own.Sample["teacher_wrote"] != false || own.Sample["teacher_response"] != nil {
		t.Errorf("a sample on the turn's own answer: %v", own.Sample)
	}
}

// TestBenchResults checks the learning page's `clawrl bench learn` curves:
// good files load newest first, a bad one is reported without hiding them.
func TestBenchResults(t *testing.T) {
	f := newFixture(t)
	good := `{"summary":[{"arm":"combine","cells":[{"round":0,"runs":2,"satisfied":{"k":1,"n":4,"p":0.25,"low":0.05,"high":0.7},"retention":{"k":4,"n":4,"p":1,"low":0.5,"high":1}}]}]}`
	files := map[string]string{
		"old.json":   `[{"arm":"rl","cells":[{"round":0,"satisfied":{"k":1,"n":2,"p":0.5,"low":0.1,"high":0.9}}]}]`,
		"new.json":   good,
		"bad.json":   `{"summary": "nope"}`,
		"notes.txt":  "not a result",
		"empty.json": `{"summary": []}`,
	}
	now := time.Now()
	for name, body := range files {
		p := filepath.Join(f.bench, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		at := now
		if name == "old.json" {
			at = now.Add(-time.Hour)
		}
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	var learning struct {
		Bench []struct {
			File string
			Arms []struct {
				Arm   string
				Cells []struct{ Round int }
			}
		}
		BenchError string `json:"bench_error"`
	}
	f.getJSON(t, "/ui/api/learning", &learning)
	if len(learning.Bench) != 2 || learning.Bench[0].File != "new.json" || learning.Bench[1].Arms[0].Arm != "rl" {
		t.Errorf("bench runs: %+v", learning.Bench)
	}
	if !strings.Contains(learning.BenchError, "bad.json") || !strings.Contains(learning.BenchError, "empty.json") {
		t.Errorf("bench error %q: want bad.json and empty.json named", learning.BenchError)
	}
}
