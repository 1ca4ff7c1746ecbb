package judge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/scripted"
	"github.com/clawrl/clawrl/store"
)

// scriptBackend answers each prompt kind from a list, in order, cycling.
type scriptBackend struct {
	mu    sync.Mutex
	eval  []string
	hint  []string
	calls map[string]int
	err   error
}

func (s *scriptBackend) Name() string { return "script" }

func (s *scriptBackend) Complete(ctx context.Context, msgs []chat.Message, p Params) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.calls == nil {
		s.calls = map[string]int{}
	}
	if s.err != nil {
		return "", s.err
	}
	kind, list := "eval", s.eval
	if strings.Contains(msgs[0].Content, "hindsight") {
		kind, list = "hint", s.hint
	}
	n := s.calls[kind]
	s.calls[kind]++
	if len(list) == 0 {
		return "", errors.New("no scripted answer")
	}
	return list[n%len(list)], nil
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func testInput() Input {
	return Input{
		TurnID: "t1", SessionID: "s1",
		Messages: []chat.Message{
			{Role: chat.RoleSystem, Content: "You are helpful."},
			{Role: chat.RoleUser, Content: "Convert 3 miles to km."},
		},
		Response: chat.Message{Role: chat.RoleAssistant, Content: "About 4.8 km."},
		Next:     []chat.Message{{Role: chat.RoleUser, Content: "Thanks!"}},
		NextKind: store.NextUser,
	}
}

func TestJudgeVoting(t *testing.T) {
	hint := "[HINT] Give the exact value 4.828 km and show the factor. [/HINT] \\boxed{1}"
	tests := []struct {
		name      string
		cfg       Config
		eval      []string
		hints     []string
		want      Request
		rating    int
		score     int
		reason    string
		hint      string
		evalCalls int
	}{
		{name: "majority good", eval: []string{`\boxed{1}`, `\boxed{1}`, `\boxed{-1}`}, want: Request{Score: true}, score: 1, reason: "majority", evalCalls: 3},
		{name: "tie is zero", cfg: Config{EvalVotes: 2}, eval: []string{`\boxed{1}`, `\boxed{-1}`}, want: Request{Score: true}, score: 0, reason: "tie", evalCalls: 2},
		{name: "garbage is retried then ignored", cfg: Config{EvalVotes: 1, Retries: 1, Backoff: time.Millisecond}, eval: []string{`no idea`}, want: Request{Score: true}, score: 0, reason: "no valid vote: attempt 1: no valid \\boxed{} in answer; attempt 2: no valid \\boxed{} in answer", evalCalls: 2},
		{name: "feedback decides", eval: []string{`\boxed{-1}`}, rating: 1, want: Request{Score: true}, score: 1, reason: "explicit feedback decides", evalCalls: 0},
		{name: "feedback votes outweigh one vote", cfg: Config{EvalVotes: 1, Feedback: FeedbackVotes, FeedbackWeight: 2}, eval: []string{`\boxed{-1}`}, rating: 1, want: Request{Score: true}, score: 1, reason: "majority with explicit feedback", evalCalls: 1},
		{name: "feedback votes can tie", cfg: Config{EvalVotes: 2, Feedback: FeedbackVotes, FeedbackWeight: 2}, eval: []string{`\boxed{-1}`}, rating: 1, want: Request{Score: true}, score: 0, reason: "tie with explicit feedback", evalCalls: 2},
		{name: "hint longest positive", cfg: Config{EvalVotes: 1, HintVotes: 3}, eval: []string{`\boxed{1}`}, hints: []string{hint, `[HINT]short[/HINT] \boxed{1}`, `[HINT] A much longer hint that is negative anyway, so it is ignored. [/HINT] \boxed{-1}`}, want: Request{Score: true, Hint: true}, score: 1, reason: "majority", hint: "Give the exact value 4.828 km and show the factor.", evalCalls: 1},
		{name: "hint too short", cfg: Config{HintVotes: 1}, hints: []string{`[HINT]use km[/HINT] \boxed{1}`}, want: Request{Hint: true}, reason: "score not asked for", evalCalls: 0},
		{name: "hint only, an explicit rating is recorded as the score", cfg: Config{HintVotes: 1}, hints: []string{hint}, rating: 1, want: Request{Hint: true}, score: 1, reason: "explicit feedback decides", hint: "Give the exact value 4.828 km and show the factor.", evalCalls: 0},
		{name: "hint only, feedback decides the score anyway", cfg: Config{HintVotes: 1}, hints: []string{hint}, rating: -1, want: Request{Score: true, Hint: true}, score: -1, reason: "explicit feedback decides", hint: "Give the exact value 4.828 km and show the factor.", evalCalls: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &scriptBackend{eval: tt.eval, hint: tt.hints}
			j := New(b, tt.cfg, quietLog())
			in := testInput()
			in.FeedbackRating = tt.rating
			got, err := j.Judge(context.Background(), in, tt.want)
			if err != nil {
				t.Fatal(err)
			}
			if got.Score != tt.score || got.Reason != tt.reason {
				t.Errorf("score %d (%s), want %d (%s); votes %+v", got.Score, got.Reason, tt.score, tt.reason, got.Votes)
			}
			if got.Hint != tt.hint || got.HintAccepted != (tt.hint != "") {
				t.Errorf("hint %q accepted=%v, want %q", got.Hint, got.HintAccepted, tt.hint)
			}
			if b.calls["eval"] != tt.evalCalls {
				t.Errorf("%d eval calls, want %d", b.calls["eval"], tt.evalCalls)
			}
			for _, v := range got.Votes {
				if v.Source == "judge" && v.Raw == "" && v.Err == "" {
					t.Errorf("vote without raw text or error: %+v", v)
				}
			}
		})
	}
}

func TestPromptsConveyTaskOutputAndNextState(t *testing.T) {
	in := testInput()
	in.Messages = append([]chat.Message{}, in.Messages...)
	in.Messages[0].Content = strings.Repeat("system rules ", 5000) // OpenClaw-sized
	in.Response.ToolCalls = []chat.ToolCall{{ID: "c1", Type: "function", Function: chat.FunctionCall{Name: "convert", Arguments: `{"miles":3}`}}}
	in.Next = []chat.Message{{Role: chat.RoleTool, Content: "4.828", ToolCallID: "c1"}}
	in.NextKind = store.NextTool
	in.FeedbackText = "use two decimals"
	for name, msgs := range map[string][]chat.Message{"eval": EvalPrompt(in), "hint": HintPrompt(in)} {
		text := msgs[1].Content
		for _, want := range []string{"Convert 3 miles to km.", "About 4.8 km.", `convert({"miles":3})`, "Tool result:\n4.828", "They wrote: use two decimals", `\boxed{`} {
			if !strings.Contains(text, want) {
				t.Errorf("%s prompt lacks %q:\n%s", name, want, text)
			}
		}
		if len(text) > 12000 {
			t.Errorf("%s prompt is %d bytes: the context view is not compact", name, len(text))
		}
	}
}

func TestTeacherPrompt(t *testing.T) {
	msgs := []chat.Message{{Role: chat.RoleUser, Content: "a"}, {Role: chat.RoleAssistant, Content: "b"}, {Role: chat.RoleUser, Content: "c"}, {Role: chat.RoleTool, Content: "d"}}
	got, err := TeacherPrompt(msgs, "be brief")
	if err != nil {
		t.Fatal(err)
	}
	if got[2].Content != "c\n\n[user's hint / instruction]\nbe brief" || got[0].Content != "a" || msgs[2].Content != "c" {
		t.Errorf("hint appended wrongly: %+v (original %+v)", got, msgs)
	}
	if _, err := TeacherPrompt(msgs[1:2], "x"); err == nil {
		t.Error("no user message: want an error")
	}
}

// faultServer is an OpenAI-compatible judge endpoint that misbehaves.
func faultServer(t *testing.T, mode string, hits *atomic.Int32) *httptest.Server {
	t.Helper()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := hits.Add(1)
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer k" {
			http.Error(w, "bad path or key", http.StatusUnauthorized)
			return
		}
		switch mode {
		case "ok":
			fmt.Fprint(w, `{"choices":[{"message":{"role":"assistant","content":"fine \\boxed{1}"}}]}`)
		case "slow":
			select {
			case <-r.Context().Done():
			case <-release:
			}
		case "500":
			http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusInternalServerError)
		case "garbage":
			fmt.Fprint(w, `{"choices":[{"message":{"content":"I refuse to box anything."}}]}`)
		case "notjson":
			fmt.Fprint(w, `<html>proxy error</html>`)
		case "flaky":
			if n < 3 {
				http.Error(w, "try again", http.StatusBadGateway)
				return
			}
			fmt.Fprint(w, `{"choices":[{"message":{"content":"\\boxed{-1}"}}]}`)
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first: frees slow handlers
	return srv
}

func TestHTTPBackendFaults(t *testing.T) {
	tests := []struct {
		mode     string
		score    int
		reason   string
		attempts int32
	}{
		{"ok", 1, "majority", 1},
		{"flaky", -1, "majority", 3},
		{"slow", 0, "judge unavailable: ", 3},
		{"500", 0, "judge unavailable: ", 3},
		{"garbage", 0, "no valid vote", 3},
		{"notjson", 0, "judge unavailable: ", 3},
		{"down", 0, "judge unavailable: ", 0},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			var hits atomic.Int32
			srv := faultServer(t, tt.mode, &hits)
			url := srv.URL + "/v1"
			if tt.mode == "down" {
				srv.Close()
			}
			b := &HTTPBackend{URL: url, Model: "judge-m", Key: "k"}
			j := New(b, Config{EvalVotes: 1, Retries: 2, Backoff: 5 * time.Millisecond, CallTimeout: 100 * time.Millisecond}, quietLog())
			start := time.Now()
			got, err := j.Judge(context.Background(), testInput(), Request{Score: true})
			if err != nil {
				t.Fatal(err)
			}
			if got.Score != tt.score || !strings.HasPrefix(got.Reason, tt.reason) {
				t.Errorf("score %d (%q), want %d (%q…)", got.Score, got.Reason, tt.score, tt.reason)
			}
			if hits.Load() != tt.attempts {
				t.Errorf("%d attempts, want %d", hits.Load(), tt.attempts)
			}
			if got.Judge != "http:judge-m" {
				t.Errorf("judge name %q", got.Judge)
			}
			// Bounded: 3 attempts of at most 100ms each plus backoff.
			if el := time.Since(start); el > 3*time.Second {
				t.Errorf("judging took %s: retries are not bounded", el)
			}
			if tt.score == 0 && tt.mode != "garbage" && got.Votes[0].Err == "" {
				t.Errorf("failure reason not recorded in the vote: %+v", got.Votes[0])
			}
		})
	}
}

func TestJudgeCancelled(t *testing.T) {
	var hits atomic.Int32
	srv := faultServer(t, "slow", &hits)
	j := New(&HTTPBackend{URL: srv.URL + "/v1", Model: "m", Key: "k"}, Config{EvalVotes: 3}, quietLog())
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := j.Judge(ctx, testInput(), Request{Score: true}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want deadline exceeded", err)
	}
}

func TestVotesRunConcurrently(t *testing.T) {
	var inFlight, peak atomic.Int32
	b := backendFunc(func(ctx context.Context) (string, error) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(30 * time.Millisecond)
		return `\boxed{1}`, nil
	})
	j := New(b, Config{EvalVotes: 3, HintVotes: 1}, quietLog())
	if _, err := j.Judge(context.Background(), testInput(), Request{Score: true, Hint: true}); err != nil {
		t.Fatal(err)
	}
	// The three score votes run together; the hint vote follows the
	// verdict, which decides whether the next message is the hint.
	if peak.Load() != 3 {
		t.Errorf("peak concurrency %d, want 3", peak.Load())
	}
}

type backendFunc func(ctx context.Context) (string, error)

func (f backendFunc) Name() string { return "func" }
func (f backendFunc) Complete(ctx context.Context, _ []chat.Message, _ Params) (string, error) {
	return f(ctx)
}

func FuzzParseCompletion(f *testing.F) {
	for _, s := range []string{`{"choices":[{"message":{"content":"\\boxed{1}"}}]}`, `{"choices":[]}`, `{`, `{"choices":[{"message":{"content":null,"reasoning_content":"x"}}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		text, err := ParseCompletion(data)
		if err == nil && text == "" {
			// Content "" is a legal (if useless) answer; nothing more to check.
			return
		}
		if err != nil && text != "" {
			t.Fatalf("error with text %q", text)
		}
	})
}

func TestTeacherPromptFollowsTheOriginalRendering(t *testing.T) {
	eng := scripted.New(scripted.Options{})
	teacher := &Teacher{Engine: eng}
	msgs := []chat.Message{{Role: chat.RoleSystem, Content: "be kind"}, {Role: chat.RoleUser, Content: "how far is 3 miles?"}}
	f := eng.Format()
	orig, err := f.Render(msgs, nil, engine.RenderOptions{AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	withHint, _ := TeacherPrompt(msgs, "answer in km")
	want, _ := f.Render(withHint, nil, engine.RenderOptions{AddGenerationPrompt: true})
	// Same rendering: re-rendered with the hint.
	if got, err := teacher.Prompt(msgs, nil, orig, "answer in km"); err != nil || got != want {
		t.Errorf("re-rendered teacher prompt:\n%q\nwant\n%q (%v)", got, want, err)
	}
	// The client rendered differently (say, thinking switched off): the hint
	// is spliced into the original prompt after the last user text.
	odd := orig + "<think>\n\n</think>\n\n"
	got, err := teacher.Prompt(msgs, nil, odd, "answer in km")
	if err != nil || got != strings.Replace(odd, "3 miles?", "3 miles?"+HintHeader+"answer in km", 1) {
		t.Errorf("spliced teacher prompt: %q (%v)", got, err)
	}
	// Under user-first the hint is spliced in before the question.
	first := &Teacher{Engine: eng, Placement: HintBeforeQuestion}
	got, err = first.Prompt(msgs, nil, odd, "answer in km")
	if err != nil || got != strings.Replace(odd, "how far", "answer in km"+HintBeforeSep+"how far", 1) {
		t.Errorf("spliced user-first teacher prompt: %q (%v)", got, err)
	}
	// A forced tool-call opening (tool_choice) ends the recorded prompt: the
	// teacher keeps it, so it scores the response ids in the context the
	// student sampled them in.
	forced, _ := f.ToolCallPrefix("convert")
	got, err = teacher.Prompt(msgs, nil, orig+forced, "answer in km")
	if err != nil || got != strings.Replace(orig, "3 miles?", "3 miles?"+HintHeader+"answer in km", 1)+forced {
		t.Errorf("teacher prompt of a forced call: %q (%v)", got, err)
	}
	// Teacher logprobs cover exactly the response ids.
	ids := f.Encode("about 4.8 km")
	lp, _, err := teacher.Logprobs(context.Background(), msgs, nil, orig, ids, "answer in km")
	if err != nil || len(lp) != len(ids) {
		t.Errorf("teacher logprobs: %d for %d ids (%v)", len(lp), len(ids), err)
	}
}
