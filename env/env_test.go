package env

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clawrl/clawrl/chat"
)

// countKind is a small real environment for the contract tests: the answer
// is the number of tool calls the agent made before answering.
type countKind struct{ open atomic.Int64 }

func (k *countKind) Name() string { return "count" }

func (k *countKind) Start(_ context.Context, t Task) (Episode, Observation, error) {
	if t.Prompt == "fail" {
		return nil, Observation{}, errors.New("refused on purpose")
	}
	k.open.Add(1)
	return &countEpisode{k: k, want: t.Answer}, Observation{Messages: []chat.Message{{Role: "user", Content: t.Prompt}},
		Tools: []chat.Tool{{Type: "function", Function: chat.FunctionDef{Name: "tick"}}}}, nil
}

type countEpisode struct {
	k      *countKind
	calls  int
	answer string
	want   string
	closed bool
}

func (e *countEpisode) Step(_ context.Context, a Action) (Observation, error) {
	if len(a.Message.ToolCalls) == 0 {
		e.answer = a.Message.Content
		return Observation{Done: true, Info: "answered"}, nil
	}
	var obs Observation
	for _, c := range a.Message.ToolCalls {
		e.calls++
		obs.Messages = append(obs.Messages, chat.Message{Role: "tool", ToolCallID: c.ID, Content: fmt.Sprint(e.calls)})
	}
	return obs, nil
}

func (e *countEpisode) Evaluate(context.Context) (Evaluation, error) {
	ok := e.answer == e.want
	r := -1.0
	if ok {
		r = 1
	}
	return Evaluation{Reward: r, Success: ok, Details: map[string]any{"calls": e.calls}}, nil
}

func (e *countEpisode) Close() error {
	if e.closed {
		return errors.New("closed twice")
	}
	e.closed = true
	e.k.open.Add(-1)
	return nil
}

func newTestPool(t *testing.T, cfg PoolConfig) (*Pool, *countKind) {
	t.Helper()
	k := &countKind{}
	p, err := NewPool(cfg, k)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown() })
	return p, k
}

func serve(t *testing.T, e Env, key string) *Client {
	t.Helper()
	srv := httptest.NewServer(Handler(e, key, nil))
	t.Cleanup(srv.Close)
	c, err := NewClient(srv.URL, key)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// runContract is the conformance suite every Env passes.
func runContract(t *testing.T, e Env) {
	ctx := context.Background()
	c, err := e.Create(ctx, Task{ID: "t1", Env: "count", Prompt: "tick twice", Answer: "2"})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Observation.Messages) != 1 || c.Observation.Messages[0].Content != "tick twice" || len(c.Observation.Tools) != 1 {
		t.Fatalf("first observation %+v", c.Observation)
	}
	if c.Lease <= 0 {
		t.Fatalf("lease %v", c.Lease)
	}
	obs, err := e.Step(ctx, c.EpisodeID, Action{Message: chat.Message{Role: "assistant", ToolCalls: []chat.ToolCall{{ID: "a"}, {ID: "b"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(obs.Messages) != 2 || obs.Messages[1].Content != "2" || obs.Messages[1].ToolCallID != "b" || obs.Done {
		t.Fatalf("step observation %+v", obs)
	}
	if err := e.Heartbeat(ctx, c.EpisodeID); err != nil {
		t.Fatal(err)
	}
	obs, err = e.Step(ctx, c.EpisodeID, Action{Message: chat.Message{Role: "assistant", Content: "2"}})
	if err != nil || !obs.Done {
		t.Fatalf("final step %+v %v", obs, err)
	}
	ev, err := e.Evaluate(ctx, c.EpisodeID)
	if err != nil {
		t.Fatal(err)
	}
	if !ev.Success || ev.Reward != 1 || fmt.Sprint(ev.Details["calls"]) != "2" {
		t.Fatalf("evaluation %+v", ev)
	}
	l, err := e.Load(ctx)
	if err != nil || l.Running != 1 || l.Limit < 1 {
		t.Fatalf("load %+v %v", l, err)
	}
	if err := e.Close(ctx, c.EpisodeID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Step(ctx, c.EpisodeID, Action{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("step after close: %v, want ErrNotFound", err)
	}
	if err := e.Close(ctx, c.EpisodeID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("close twice: %v, want ErrNotFound", err)
	}
	if _, err := e.Create(ctx, Task{ID: "t2", Env: "nope", Prompt: "x"}); !errors.Is(err, ErrBadRequest) {
		t.Fatalf("unknown kind: %v, want ErrBadRequest", err)
	}
	if _, err := e.Create(ctx, Task{ID: "t3", Env: "count", Prompt: "fail"}); err == nil || !strings.Contains(err.Error(), "refused on purpose") {
		t.Fatalf("failing start: %v", err)
	}
	if l, _ := e.Load(ctx); l.Running != 0 {
		t.Fatalf("a failed start holds a slot: %+v", l)
	}
}

func TestContract(t *testing.T) {
	t.Run("pool", func(t *testing.T) {
		p, k := newTestPool(t, PoolConfig{Limit: 4})
		runContract(t, p)
		if k.open.Load() != 0 {
			t.Fatalf("%d episodes left open", k.open.Load())
		}
	})
	t.Run("http", func(t *testing.T) {
		p, k := newTestPool(t, PoolConfig{Limit: 4})
		runContract(t, serve(t, p, "sekret"))
		if k.open.Load() != 0 {
			t.Fatalf("%d episodes left open", k.open.Load())
		}
	})
	t.Run("balance", func(t *testing.T) {
		p1, _ := newTestPool(t, PoolConfig{Limit: 4})
		b, err := NewBalance(p1)
		if err != nil {
			t.Fatal(err)
		}
		runContract(t, b)
	})
}

func TestHTTPAuthAndErrors(t *testing.T) {
	p, _ := newTestPool(t, PoolConfig{Limit: 2})
	srv := httptest.NewServer(Handler(p, "key", nil))
	defer srv.Close()
	bad, _ := NewClient(srv.URL, "wrong")
	if _, err := bad.Load(context.Background()); err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("wrong key: %v", err)
	}
	for _, tc := range []struct {
		method, path, body string
		status             int
		code               string
	}{
		{"POST", "/v1/episodes", `{`, 400, "invalid_request"},
		{"POST", "/v1/episodes", `{"task":{"id":"x","env":"count"}}`, 400, "invalid_request"},
		{"POST", "/v1/episodes", `{"task":{"id":"x","env":"count","prompt":"p","files":{"../etc/passwd":"x"}}}`, 400, "invalid_request"},
		{"POST", "/v1/episodes", `{}`, 400, "invalid_request"},
		{"POST", "/v1/episodes", `{"task":{"id":"x","env":"count","prompt":"p"}} trailing`, 400, "invalid_request"},
		{"POST", "/v1/episodes/nope/step", `{"action":{"message":{"role":"assistant"}}}`, 404, "episode_not_found"},
		{"POST", "/v1/episodes/nope/step", `{}`, 400, "invalid_request"},
		{"POST", "/v1/episodes/nope/evaluate", `{}`, 404, "episode_not_found"},
		{"DELETE", "/v1/episodes/nope", ``, 404, "episode_not_found"},
		{"POST", "/v1/episodes", `{"task":{"id":"x","env":"count","prompt":"` + strings.Repeat("a", MaxBodyBytes) + `"}}`, 413, "too_large"},
	} {
		req, _ := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
		req.Header.Set("Authorization", "Bearer key")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.Contains(buf.String(), `"code":"`+tc.code+`"`) || !strings.Contains(buf.String(), `"message"`) {
			t.Errorf("%s %s %.40q: %d %s, want %d %s", tc.method, tc.path, tc.body, resp.StatusCode, buf.String(), tc.status, tc.code)
		}
	}
}

// A crashed agent stops calling; its episodes are closed once their lease
// runs out, and the slots come back.
func TestLeaseReapsIdleEpisodes(t *testing.T) {
	p, k := newTestPool(t, PoolConfig{Limit: 2, Lease: 200 * time.Millisecond})
	c := serve(t, p, "")
	ctx := context.Background()
	a, err := c.Create(ctx, Task{ID: "a", Env: "count", Prompt: "p"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Create(ctx, Task{ID: "b", Env: "count", Prompt: "p"})
	if err != nil {
		t.Fatal(err)
	}
	// b's agent keeps its lease alive; a's "crashed".
	hb, stop := context.WithCancel(ctx)
	defer stop()
	go KeepAlive(hb, c, b.EpisodeID, 50*time.Millisecond)
	deadline := time.Now().Add(5 * time.Second)
	for k.open.Load() != 1 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := c.Step(ctx, a.EpisodeID, Action{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("reaped episode: %v, want ErrNotFound", err)
	}
	if _, err := c.Step(ctx, b.EpisodeID, Action{Message: chat.Message{ToolCalls: []chat.ToolCall{{ID: "x"}}}}); err != nil {
		t.Fatalf("kept-alive episode: %v", err)
	}
	l, _ := c.Load(ctx)
	if l.Reaped != 1 || l.Running != 1 {
		t.Fatalf("load %+v, want 1 reaped, 1 running", l)
	}
	stop()
	for k.open.Load() != 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if k.open.Load() != 0 {
		t.Fatal("episode without heartbeats never reaped")
	}
}

func TestPoolLimitWaits(t *testing.T) {
	p, _ := newTestPool(t, PoolConfig{Limit: 1})
	ctx := context.Background()
	a, err := p.Create(ctx, Task{ID: "a", Env: "count", Prompt: "p"})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		_, err := p.Create(ctx, Task{ID: "b", Env: "count", Prompt: "p"})
		got <- err
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		l, _ := p.Load(ctx)
		if l.Waiting == 1 {
			if l.Free() != -1 {
				t.Fatalf("free %d with one running and one waiting at limit 1", l.Free())
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("second create never waited")
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case err := <-got:
		t.Fatalf("create past the limit returned %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	if err := p.Close(ctx, a.EpisodeID); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := p.Create(short, Task{ID: "c", Env: "count", Prompt: "p"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("create at the limit with a deadline: %v", err)
	}
}

func TestBalanceSpreadsByLoad(t *testing.T) {
	p1, _ := newTestPool(t, PoolConfig{Limit: 2})
	p2, _ := newTestPool(t, PoolConfig{Limit: 2})
	b, err := NewBalance(p1, serve(t, p2, ""))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 4 {
		if _, err := b.Create(ctx, Task{ID: fmt.Sprint(i), Env: "count", Prompt: "p"}); err != nil {
			t.Fatal(err)
		}
	}
	l1, _ := p1.Load(ctx)
	l2, _ := p2.Load(ctx)
	if l1.Running != 2 || l2.Running != 2 {
		t.Fatalf("running %d and %d, want 2 and 2", l1.Running, l2.Running)
	}
	if l, _ := b.Load(ctx); l.Running != 4 || l.Limit != 4 {
		t.Fatalf("balance load %+v", l)
	}
}

func TestParseTasks(t *testing.T) {
	in := "# comment\n\n" + `{"id":"a","env":"toolcall","prompt":"p","answer":"3","unknown":1}` + "\n" +
		`{"id":"b","env":"terminal","split":"heldout","prompt":"q","files":{"x/y.txt":"hi"},"test":"echo ok"}` + "\n"
	ts, err := ParseTasks(strings.NewReader(in), "in")
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 || ts[0].Split != SplitTrain || ts[1].Files["x/y.txt"] != "hi" || len(FilterSplit(ts, SplitHeldOut)) != 1 {
		t.Fatalf("%+v", ts)
	}
	var buf bytes.Buffer
	if err := WriteTasks(&buf, ts); err != nil {
		t.Fatal(err)
	}
	back, err := ParseTasks(&buf, "out")
	if err != nil || len(back) != 2 || back[1].Test != "echo ok" {
		t.Fatalf("round trip: %+v %v", back, err)
	}
	for _, bad := range []string{
		`{"id":"a","env":"x","prompt":"p"}` + "\n" + `{"id":"a","env":"x","prompt":"p"}`,
		`{"id":"a","env":"x"}`,
		`{"id":"a","env":"x","prompt":"p","files":{"/etc/x":""}}`,
		`{"id":"a","env":"x","prompt":"p","files":{"a/../../x":""}}`,
		`not json`,
	} {
		if _, err := ParseTasks(strings.NewReader(bad), "bad"); err == nil || !strings.Contains(err.Error(), "line") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// Time the pool itself did not run (a starved process) is added back to
// every lease (extendLeases), so only time the pool saw counts.
func TestStallDoesNotReap(t *testing.T) {
	p, k := newTestPool(t, PoolConfig{Limit: 2, Lease: time.Hour})
	if _, err := p.Create(context.Background(), Task{ID: "a", Env: "count", Prompt: "p"}); err != nil {
		t.Fatal(err)
	}
	p.extendLeases(-3 * time.Hour)               // three hours without a call…
	p.extendLeases(2*time.Hour + 30*time.Minute) // …of which the pool was stalled for two and a half
	if n := p.ReapIdle(); n != 0 || k.open.Load() != 1 {
		t.Fatalf("reaped %d after a stall", n)
	}
	p.extendLeases(-time.Hour)
	if n := p.ReapIdle(); n != 1 {
		t.Fatalf("reaped %d once the lease really ran out", n)
	}
}

func TestToolArgument(t *testing.T) {
	call := func(name, args string) chat.ToolCall {
		return chat.ToolCall{Function: chat.FunctionCall{Name: name, Arguments: args}}
	}
	if v, err := ToolArgument(call("python", `{"code": "print(1)", "other": 2}`), "python", "code", "python code"); err != nil || v != "print(1)" {
		t.Errorf("got %q, %v", v, err)
	}
	for _, c := range []chat.ToolCall{
		call("shell", `{"code": "x"}`), call("python", `{"code": 3}`), call("python", `{"code": "  "}`),
		call("python", `{"cmd": "x"}`), call("python", `[1]`), call("python", `not json`), call("python", ``),
	} {
		if v, err := ToolArgument(c, "python", "code", "python code"); err == nil || !strings.HasPrefix(err.Error(), "error: ") {
			t.Errorf("%+v: got %q, %v", c.Function, v, err)
		}
	}
}
