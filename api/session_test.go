package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/session"
	"github.com/clawrl/clawrl/store"
)

// streamTurn runs a streaming request the way OpenClaw does and returns the
// completion id and the assistant message as a client would echo it.
func streamTurn(t *testing.T, ts *testServer, body map[string]any, header ...string) (string, map[string]any) {
	t.Helper()
	body["stream"] = true
	body["stream_options"] = map[string]any{"include_usage": true}
	resp := ts.post(t, "/v1/chat/completions", body, header...)
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		raw, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, raw)
	}
	id, content := "", ""
	type call struct{ id, name, args string }
	var calls []call
	for _, e := range readSSE(t, resp.Body) {
		var c chunk
		if e == "[DONE]" || json.Unmarshal([]byte(e), &c) != nil || len(c.Choices) == 0 {
			continue
		}
		id = c.ID
		d := c.Choices[0].Delta
		if d.Content != nil {
			content += *d.Content
		}
		for _, tc := range d.ToolCalls {
			for len(calls) <= tc.Index {
				calls = append(calls, call{})
			}
			if tc.ID != "" {
				calls[tc.Index].id, calls[tc.Index].name = tc.ID, tc.Function.Name
			}
			calls[tc.Index].args += tc.Function.Arguments
		}
	}
	msg := map[string]any{"role": "assistant", "content": content}
	if len(calls) > 0 {
		// OpenClaw sends null content on tool-call rounds.
		msg["content"] = nil
		var tcs []any
		for _, c := range calls {
			tcs = append(tcs, map[string]any{"id": c.id, "type": "function", "function": map[string]any{"name": c.name, "arguments": c.args}})
		}
		msg["tool_calls"] = tcs
	}
	return id, msg
}

func turnOf(t *testing.T, st store.Store, id string) store.Turn {
	t.Helper()
	turn, err := st.Turn(context.Background(), id)
	if err != nil {
		t.Fatalf("turn %s: %v", id, err)
	}
	return turn
}

func system(s string) map[string]any { return map[string]any{"role": "system", "content": s} }
func user(s string) map[string]any   { return map[string]any{"role": "user", "content": s} }

// An OpenClaw conversation: affinity headers and prompt_cache_key
// "<id>:<n>", a system prompt that changes every request, an internal
// context block that is never kept, tool rounds with null content, a
// compaction side call and a heartbeat.
func TestOpenClawConversation(t *testing.T) {
	ts := newTestServer(t, serverOptions{})
	ctx := context.Background()
	affinity := func(n int) []string {
		v := fmt.Sprintf("oc-7f3a:%d", n)
		return []string{"session_id", v, "x-session-affinity", v, "x-client-request-id", v}
	}
	// OpenClaw sends its compaction request with the bare id (no :n).
	bare := []string{"session_id", "oc-7f3a", "x-session-affinity", "oc-7f3a", "x-client-request-id", "oc-7f3a"}
	internal := func(i int) map[string]any {
		return user(session.OpenClawInternalContext + fmt.Sprintf("\nturn %d metadata\n<<<END_OPENCLAW_INTERNAL_CONTEXT>>>", i))
	}
	sys := func(i int) map[string]any { return system(fmt.Sprintf("You are OpenClaw. Current time: 10:0%d.", i)) }
	history := []map[string]any{user(`Runtime: sessionId=oc-7f3a. List the files. [[tool:ls {"path":"."}]]`)}
	req := func(i int, h []map[string]any) map[string]any {
		m := append([]map[string]any{sys(i)}, h...)
		return map[string]any{"model": "m", "messages": append(m, internal(i)), "tools": []any{lsTool}, "tool_choice": "auto",
			"max_completion_tokens": 512, "prompt_cache_key": "oc-7f3a:0"}
	}

	id1, a1 := streamTurn(t, ts, req(1, history), affinity(0)...)
	calls := a1["tool_calls"].([]any)
	callID := calls[0].(map[string]any)["id"].(string)
	history = append(history, a1, map[string]any{"role": "tool", "tool_call_id": callID, "content": "README.md go.mod"})
	id2, a2 := streamTurn(t, ts, req(2, history), affinity(0)...)
	if a2["content"] != "tool said: README.md go.mod" {
		t.Fatalf("second answer %v", a2)
	}
	t1 := turnOf(t, ts.store, id1)
	if t1.State != store.Observed || t1.NextStateKind != store.NextTool || len(t1.NextState) != 1 || t1.NextState[0].ToolCallID != callID {
		t.Fatalf("turn 1 after the tool round: %s %s %+v", t1.State, t1.NextStateKind, t1.NextState)
	}
	history = append(history, a2, user("Thanks! [[say:You're welcome.]]"))
	id3, a3 := streamTurn(t, ts, req(3, history), affinity(0)...)
	t2 := turnOf(t, ts.store, id2)
	if t2.State != store.Observed || t2.NextStateKind != store.NextUser || len(t2.NextState) != 1 || !strings.HasPrefix(t2.NextState[0].Content, "Thanks!") {
		t.Fatalf("turn 2 after the user's reply: %s %s %+v", t2.State, t2.NextStateKind, t2.NextState)
	}

	// Compaction: a side call under the bare id, recorded in the epoch it
	// compacts; it pairs nothing.
	compact := map[string]any{"model": "m", "max_completion_tokens": 1024, "prompt_cache_key": "oc-7f3a", "messages": []any{
		system("You are a context summarization assistant. Summarize the conversation so far."),
		user("<conversation>…</conversation>"),
	}}
	compactResp := ts.complete(t, compact, bare...)
	ct := turnOf(t, ts.store, compactResp.ID)
	if ct.Type != store.Side || ct.Epoch != 0 || ct.SessionID != t1.SessionID {
		t.Fatalf("compaction turn: type %s epoch %d session %s (want side, 0, %s)", ct.Type, ct.Epoch, ct.SessionID, t1.SessionID)
	}
	if t3 := turnOf(t, ts.store, id3); t3.State != store.Generated {
		t.Fatalf("a side call observed turn 3: %s", t3.State)
	}
	// Heartbeat: side, even with the static headers of the conversation.
	hb := ts.complete(t, map[string]any{"tools": []any{lsTool}, "messages": []any{sys(4),
		user("Read HEARTBEAT.md if it exists (workspace context). Follow it strictly. If nothing needs attention, reply HEARTBEAT_OK.")}}, affinity(1)...)
	if ht := turnOf(t, ts.store, hb.ID); ht.Type != store.Side {
		t.Fatalf("heartbeat turn type %s", ht.Type)
	}
	// After compaction the history restarts from a summary; the next main
	// turn belongs to the same session at epoch 1.
	post := []map[string]any{user("Summary: listed files."), a3, user("and now? [[say:done]]")}
	id4, _ := streamTurn(t, ts, req(5, post), affinity(1)...)
	t4 := turnOf(t, ts.store, id4)
	if t4.SessionID != t1.SessionID || t4.Epoch != 1 || t4.Type != store.Main {
		t.Fatalf("turn after compaction: %+v", t4)
	}
	if t3 := turnOf(t, ts.store, id3); t3.State != store.Observed || t3.NextState[0].Content != "and now? [[say:done]]" {
		t.Fatalf("turn 3 after compaction: %s %+v", t3.State, t3.NextState)
	}
	// A second compaction, again under the bare id, stays in epoch 1: a key
	// without :n never moves the session's epoch.
	ct2 := turnOf(t, ts.store, ts.complete(t, compact, bare...).ID)
	if ct2.Type != store.Side || ct2.Epoch != 1 || ct2.SessionID != t1.SessionID {
		t.Fatalf("second compaction turn: type %s epoch %d session %s (want side, 1, %s)", ct2.Type, ct2.Epoch, ct2.SessionID, t1.SessionID)
	}
	sess, err := ts.store.Session(ctx, t1.SessionID)
	if err != nil || sess.Key != "oc-7f3a" || sess.KeySource != session.SourceAffinity || sess.Epoch != 1 {
		t.Fatalf("session %+v (%v)", sess, err)
	}
}

// Without any identity, a request that extends a recorded turn joins its
// session; a different conversation gets a new one.
func TestHistoryFallback(t *testing.T) {
	ts := newTestServer(t, serverOptions{})
	c1 := ts.complete(t, map[string]any{"messages": []any{system("sys v1"), user("hello A")}})
	c2 := ts.complete(t, map[string]any{"messages": []any{system("sys v2"), user("hello A"),
		map[string]any{"role": "assistant", "content": *c1.Choices[0].Message.Content + "\n", "reasoning_content": "x"}, user("more")}})
	other := ts.complete(t, map[string]any{"messages": []any{user("hello B")}})
	t1, t2, t3 := turnOf(t, ts.store, c1.ID), turnOf(t, ts.store, c2.ID), turnOf(t, ts.store, other.ID)
	if t1.SessionID != t2.SessionID || t1.SessionID == t3.SessionID {
		t.Fatalf("sessions %s %s %s", t1.SessionID, t2.SessionID, t3.SessionID)
	}
	if t1.State != store.Observed || t1.NextState[0].Content != "more" {
		t.Fatalf("turn 1: %s %+v", t1.State, t1.NextState)
	}
	s, _ := ts.store.Session(context.Background(), t1.SessionID)
	if s.KeySource != session.SourceNew {
		t.Fatalf("key source %q", s.KeySource)
	}
}

// Two sessions with identical content stay apart when they name themselves.
func TestExplicitSessionsDoNotMix(t *testing.T) {
	ts := newTestServer(t, serverOptions{})
	var first [2]completion
	for i, sid := range []string{"A", "B"} {
		first[i] = ts.complete(t, map[string]any{"messages": []any{user("same words")}}, "X-Session-Id", sid)
	}
	for i, sid := range []string{"A", "B"} {
		ts.complete(t, map[string]any{"session_id": "ignored", "messages": []any{user("same words"),
			map[string]any{"role": "assistant", "content": *first[i].Choices[0].Message.Content}, user("next " + sid)}}, "X-Session-Id", sid)
	}
	for i, sid := range []string{"A", "B"} {
		turn := turnOf(t, ts.store, first[i].ID)
		s, _ := ts.store.Session(context.Background(), turn.SessionID)
		if s.Key != sid || turn.State != store.Observed || turn.NextState[0].Content != "next "+sid {
			t.Fatalf("session %s: key %q state %s next %+v", sid, s.Key, turn.State, turn.NextState)
		}
	}
}

func TestFeedback(t *testing.T) {
	ts := newTestServer(t, serverOptions{})
	c := ts.complete(t, map[string]any{"messages": []any{user("hi")}}, "session_id", "fb-1:0")
	c2 := ts.complete(t, map[string]any{"messages": []any{user("other")}}, "session_id", "fb-1:0")
	c3 := ts.complete(t, map[string]any{"messages": []any{user("third")}}, "session_id", "fb-2:0")
	for _, tt := range []struct {
		name   string
		body   string
		status int
		turn   string
		rating int
	}{
		{"by id", `{"id":"` + c.ID + `","rating":1,"text":"great"}`, 200, c.ID, 1},
		{"by client session with epoch", `{"session_id":"fb-1:3","rating":-1}`, 200, c2.ID, -1},
		{"unknown id", `{"id":"chatcmpl-nope","rating":1}`, 404, "", 0},
		{"unknown session", `{"session_id":"nope","rating":1}`, 404, "", 0},
		{"bad rating", `{"id":"` + c.ID + `","rating":5}`, 400, "", 0},
		{"nothing named", `{"rating":1}`, 400, "", 0},
		{"no rating or text", `{"id":"` + c.ID + `"}`, 400, "", 0},
		{"rating 0 and no text", `{"id":"` + c.ID + `","rating":0,"text":" "}`, 400, "", 0},
		{"text only", `{"id":"` + c3.ID + `","rating":0,"text":"shorter next time"}`, 200, c3.ID, 0},
		{"malformed", `{"id":`, 400, "", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := ts.post(t, "/v1/feedback", tt.body)
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, raw)
			}
			if tt.turn == "" {
				if !strings.Contains(string(raw), `"error"`) {
					t.Fatalf("error body %s", raw)
				}
				return
			}
			turn := turnOf(t, ts.store, tt.turn)
			if turn.Feedback == nil || turn.Feedback.Rating != tt.rating || turn.State != store.Observed {
				t.Fatalf("turn after feedback: state %s feedback %+v", turn.State, turn.Feedback)
			}
		})
	}
}

// A disconnected client cancels its generation, which is not recorded.
func TestClientDisconnectCancels(t *testing.T) {
	ts := newTestServer(t, serverOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	body := `{"stream":true,"max_tokens":100000,"messages":[{"role":"user","content":"[[slow:5]][[long]]"}]}`
	req, _ := newRequest(ctx, ts.URL+"/v1/chat/completions", body)
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 512)
	if _, err := resp.Body.Read(buf); err != nil {
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	deadline := time.Now().Add(5 * time.Second)
	for testutil.ToFloat64(ts.api.metrics.cancelled) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("generation still running 5 s after the client left")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if st, _ := ts.store.Stats(context.Background()); st.TurnsByType[store.Main] != 0 {
		t.Fatalf("a cancelled generation was recorded: %+v", st)
	}
}

// blockingStore holds InsertTurn until released, to see what the client
// has received while the turn is being made durable.
type blockingStore struct {
	store.Store
	entered chan struct{}
	release chan struct{}
}

func (b *blockingStore) InsertTurn(ctx context.Context, t *store.Turn) error {
	b.entered <- struct{}{}
	<-b.release
	return b.Store.InsertTurn(ctx, t)
}

func TestRecordedBeforeLastByte(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprint("stream=", stream), func(t *testing.T) {
			bs := &blockingStore{Store: openTestStore(t), entered: make(chan struct{}, 1), release: make(chan struct{})}
			ts := newTestServer(t, serverOptions{store: bs})
			got := make(chan string, 100)
			go func() {
				defer close(got)
				resp := ts.post(t, "/v1/chat/completions", map[string]any{"stream": stream, "messages": []any{user("[[say:abc]]")}})
				defer resp.Body.Close()
				buf := make([]byte, 1<<16)
				for {
					n, err := resp.Body.Read(buf)
					if n > 0 {
						got <- string(buf[:n])
					}
					if err != nil {
						return
					}
				}
			}()
			<-bs.entered
			seen := ""
			timeout := time.After(200 * time.Millisecond)
		wait:
			for {
				select {
				case s, ok := <-got:
					if !ok {
						break wait
					}
					seen += s
				case <-timeout:
					break wait
				}
			}
			if strings.Contains(seen, "finish_reason\":\"stop") || strings.Contains(seen, "[DONE]") || strings.Contains(seen, `"chat.completion"`) {
				t.Fatalf("the client got the end of the response before the turn was recorded: %q", seen)
			}
			close(bs.release)
			for s := range got {
				seen += s
			}
			if !strings.Contains(seen, `"finish_reason":"stop"`) {
				t.Fatalf("response never finished: %q", seen)
			}
		})
	}
}

// 200 concurrent sessions × 4 turns: every turn recorded once, each paired
// with its own session's next message, nothing mixed.
func TestConcurrentSessions(t *testing.T) {
	ts := newTestServer(t, serverOptions{})
	const sessions, turns = 200, 4
	ids := make([][]string, sessions)
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	for i := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var header []string
			if i%2 == 0 {
				header = []string{"X-Session-Id", fmt.Sprintf("conc-%d", i)}
			} // odd sessions are found by their history alone
			history := []any{}
			for k := range turns {
				// Turn 1 calls a tool; turn 2 answers its result.
				if k != 2 {
					text := fmt.Sprintf("session %d turn %d", i, k)
					if k == 1 {
						text += fmt.Sprintf(` [[tool:ls {"s":%d}]]`, i)
					}
					history = append(history, user(text))
				}
				body, _ := json.Marshal(map[string]any{"messages": history, "tools": []any{lsTool}})
				c, err := ts.doComplete(body, header...)
				if err != nil {
					errs <- fmt.Errorf("session %d turn %d: %w", i, k, err)
					return
				}
				ids[i] = append(ids[i], c.ID)
				m := c.Choices[0].Message
				echo := map[string]any{"role": "assistant", "content": m.Content}
				if len(m.ToolCalls) > 0 {
					echo["tool_calls"] = m.ToolCalls
					history = append(history, echo, map[string]any{"role": "tool", "tool_call_id": m.ToolCalls[0].ID, "content": fmt.Sprintf("files of %d", i)})
					continue
				}
				history = append(history, echo)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	ctx := context.Background()
	all, err := ts.store.ListTurns(ctx, store.TurnFilter{Limit: 10 * sessions * turns})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != sessions*turns {
		t.Fatalf("%d turns recorded, want %d", len(all), sessions*turns)
	}
	seen := map[string]bool{}
	for _, turn := range all {
		if seen[turn.ID] {
			t.Fatalf("turn %s recorded twice", turn.ID)
		}
		seen[turn.ID] = true
	}
	for i := range sessions {
		want := fmt.Sprintf("session %d ", i)
		var sid string
		for k, id := range ids[i] {
			turn := turnOf(t, ts.store, id)
			if k == 0 {
				sid = turn.SessionID
			}
			if turn.SessionID != sid || turn.Index != k {
				t.Fatalf("session %d turn %d: in session %s index %d, want %s index %d", i, k, turn.SessionID, turn.Index, sid, k)
			}
			for _, m := range turn.Messages {
				if m.Role == chat.RoleUser && !strings.HasPrefix(m.Content, want) {
					t.Fatalf("session %d turn %d carries another session's message %q", i, k, m.Content)
				}
			}
			switch {
			case k == turns-1:
				if turn.State != store.Generated {
					t.Fatalf("session %d last turn %s", i, turn.State)
				}
			case k == 1:
				if turn.State != store.Observed || turn.NextStateKind != store.NextTool || len(turn.NextState) != 1 || turn.NextState[0].Content != fmt.Sprintf("files of %d", i) {
					t.Fatalf("session %d turn 1 next state %s %+v", i, turn.NextStateKind, turn.NextState)
				}
			default:
				if k == 2 && turn.Response.Content != fmt.Sprintf("tool said: files of %d", i) {
					t.Fatalf("session %d turn 2 answered %q", i, turn.Response.Content)
				}
				if turn.State != store.Observed || turn.NextStateKind != store.NextUser || !strings.HasPrefix(turn.NextState[0].Content, fmt.Sprintf("session %d turn %d", i, k+1)) {
					t.Fatalf("session %d turn %d next state %+v", i, k, turn.NextState)
				}
			}
		}
	}
}
