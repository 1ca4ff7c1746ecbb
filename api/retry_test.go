package api

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"testing"

	"github.com/clawrl/clawrl/store"
	"github.com/clawrl/clawrl/store/postgres"
	"github.com/clawrl/clawrl/store/postgres/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// dyingStore commits a turn and then fails the request, as a gateway killed
// (kill -9) after committing a turn and before answering looks to its
// client: the turn is in the store, the client has no answer and retries.
type dyingStore struct{ store.Store }

var errKilled = errors.New("the gateway was killed")

func (d dyingStore) InsertTurn(ctx context.Context, t *store.Turn) error {
	if err := d.Store.InsertTurn(ctx, t); err != nil {
		return err
	}
	return errKilled
}

// retryStores are the stores the retry tests run on: SQLite, and Postgres
// where it is installed (it skips without, fails under CLAWRL_REQUIRE_REFS=1).
// One Postgres serves the package's tests (TestMain stops it).
func retryStores(t *testing.T, run func(t *testing.T, st store.Store)) {
	t.Run("sqlite", func(t *testing.T) { run(t, openTestStore(t)) })
	t.Run("postgres", func(t *testing.T) {
		url := pgtest.Start(t).Database(t, pgtest.NameFor(t.Name()))
		st, err := postgres.Open(context.Background(), url, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		run(t, st)
	})
}

// sessionTurns lists a session's main turns in order.
func sessionTurns(t *testing.T, st store.Store, sessionID string) []store.Turn {
	t.Helper()
	turns, err := st.ListTurns(context.Background(), store.TurnFilter{SessionID: sessionID, Type: store.Main})
	if err != nil {
		t.Fatal(err)
	}
	return turns
}

// A gateway dies after committing a turn and before answering; the client
// sends the same request to the restarted gateway. The retry's turn replaces
// the committed one (dropped as superseded, its data kept, never trained),
// so the session holds one live turn per request the client saw answered,
// and the client's next message is the next state of the answer it got.
// Both the first and a later turn of a conversation are retried.
func TestRetryAfterCrashSupersedes(t *testing.T) {
	retryStores(t, func(t *testing.T, st store.Store) {
		dying := newTestServer(t, serverOptions{store: dyingStore{st}})
		restarted := newTestServer(t, serverOptions{store: st})
		hdr := []string{"X-Session-Id", "retry-1"}
		lost := func(body map[string]any) {
			t.Helper()
			resp := dying.post(t, "/v1/chat/completions", body, hdr...)
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				t.Fatal("the dying gateway answered")
			}
		}
		u1 := user("[[say:first answer]] hi")
		first := map[string]any{"messages": []any{u1}, "temperature": 0.7}
		lost(first)
		c1 := restarted.complete(t, first, hdr...)

		a1 := map[string]any{"role": "assistant", "content": *c1.Choices[0].Message.Content}
		second := map[string]any{"messages": []any{u1, a1, user("[[say:second answer]] more")}}
		lost(second)
		c2 := restarted.complete(t, second, hdr...)
		a2 := map[string]any{"role": "assistant", "content": *c2.Choices[0].Message.Content}
		restarted.complete(t, map[string]any{"messages": []any{u1, a1, user("[[say:second answer]] more"), a2, user("thanks")}}, hdr...)

		turns := sessionTurns(t, st, turnOf(t, st, c1.ID).SessionID)
		if len(turns) != 5 {
			t.Fatalf("%d turns, want 5 (two superseded copies, three answered)", len(turns))
		}
		// Index order: lost first, its retry, lost second, its retry, the third.
		want := []struct {
			id    string
			state store.TurnState
		}{{"", store.Dropped}, {c1.ID, store.Observed}, {"", store.Dropped}, {c2.ID, store.Observed}, {"", store.Generated}}
		for i, w := range want {
			tn := turns[i]
			if tn.Index != i || tn.State != w.state || (w.id != "" && tn.ID != w.id) {
				t.Fatalf("turn %d: %s at %d is %s, want %s %s", i, tn.ID, tn.Index, tn.State, w.id, w.state)
			}
			if w.state == store.Dropped {
				retry := turns[i+1]
				if tn.DropReason != store.SupersededBy(retry.ID) || len(tn.Messages) != len(retry.Messages) || len(tn.ResponseIDs) == 0 {
					t.Fatalf("turn %d: drop reason %q, %d messages (retry %d), %d response ids", i, tn.DropReason, len(tn.Messages), len(retry.Messages), len(tn.ResponseIDs))
				}
			}
		}
		if n := turns[1].NextState; len(n) != 1 || n[0].Content != "[[say:second answer]] more" {
			t.Fatalf("first answer's next state %+v", n)
		}
		if n := turns[3].NextState; len(n) != 1 || n[0].Content != "thanks" {
			t.Fatalf("second answer's next state %+v", n)
		}
	})
}

// A question asked again after its answer was rated, or after the
// conversation moved on, is a new turn: nothing is superseded.
func TestRepeatedQuestionIsRecorded(t *testing.T) {
	retryStores(t, func(t *testing.T, st store.Store) {
		ts := newTestServer(t, serverOptions{store: st})
		hdr := []string{"X-Session-Id", "repeat-1"}
		ask := map[string]any{"messages": []any{user("[[say:four]] 2+2?")}}
		c1 := ts.complete(t, ask, hdr...)
		resp := ts.post(t, "/v1/feedback", map[string]any{"id": c1.ID, "rating": 1})
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("feedback: status %d", resp.StatusCode)
		}
		c2 := ts.complete(t, ask, hdr...) // after a rating
		a2 := map[string]any{"role": "assistant", "content": *c2.Choices[0].Message.Content}
		ts.complete(t, map[string]any{"messages": []any{user("[[say:four]] 2+2?"), a2, user("[[say:ok]] and 3+3?")}}, hdr...)
		c4 := ts.complete(t, ask, hdr...) // a new conversation in the same session, after an answer
		turns := sessionTurns(t, st, turnOf(t, st, c1.ID).SessionID)
		if len(turns) != 4 {
			t.Fatalf("%d turns, want 4", len(turns))
		}
		for _, tn := range turns {
			if tn.State == store.Dropped {
				t.Fatalf("turn %s at %d dropped (%s): a repeated question is not a retry", tn.ID, tn.Index, tn.DropReason)
			}
		}
		if turns[0].ID != c1.ID || turns[1].ID != c2.ID || turns[3].ID != c4.ID || turns[1].State != store.Observed {
			t.Fatalf("turns %s %s %s %s, second %s", turns[0].ID, turns[1].ID, turns[2].ID, turns[3].ID, turns[1].State)
		}
	})
}

// Without a session id the session is the one whose answer the history
// repeats, and a retried later turn is recognised there too. (A retried
// first turn without any identity starts a session of its own: nothing ties
// it to the lost one, which expires as before.)
func TestRetryWithoutSessionID(t *testing.T) {
	retryStores(t, func(t *testing.T, st store.Store) {
		dying := newTestServer(t, serverOptions{store: dyingStore{st}})
		restarted := newTestServer(t, serverOptions{store: st})
		u1 := user("[[say:first answer]] hi")
		c1 := restarted.complete(t, map[string]any{"messages": []any{u1}})
		a1 := map[string]any{"role": "assistant", "content": *c1.Choices[0].Message.Content}
		second := map[string]any{"messages": []any{u1, a1, user("[[say:second answer]] more")}}
		resp := dying.post(t, "/v1/chat/completions", second)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		c2 := restarted.complete(t, second)
		turns := sessionTurns(t, st, turnOf(t, st, c1.ID).SessionID)
		if len(turns) != 3 || turns[0].State != store.Observed || turns[1].State != store.Dropped ||
			turns[1].DropReason != store.SupersededBy(c2.ID) || turns[2].ID != c2.ID || turns[2].State != store.Generated {
			for _, tn := range turns {
				t.Logf("%d %s %s %q", tn.Index, tn.ID, tn.State, tn.DropReason)
			}
			t.Fatalf("want the first turn observed, the lost copy superseded by %s", c2.ID)
		}
	})
}
