package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/clawrl/clawrl/store"
	"github.com/clawrl/clawrl/store/sqlite"
)

// syncBuffer is a bytes.Buffer safe to read while the chat writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newTestChat(addr string, out io.Writer) *chatClient {
	c := &chatClient{url: "http://" + addr, maxTokens: 512, out: out, http: &http.Client{Timeout: time.Minute}}
	c.newSession()
	return c
}

// `clawrl chat` against a running `clawrl serve`: answers stream back, the
// conversation carries on as one history, and /good and /bad reach the store
// as feedback on the answers they follow.
func TestChat(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the clawrl binary")
	}
	exe := buildClawrl(t)
	data := t.TempDir()
	p := startServe(t, exe, data)

	var out syncBuffer
	c := newTestChat(p.addr, &out)
	in := strings.Join([]string{
		"/good", // nothing to rate yet
		"[[say:Paris, the capital of France, is a city of about two million people, famous for its museums.]] Where is the Louvre?",
		"/bad Too long. Answer in two or three plain sentences.",
		"[[again]] Shorter, please.",
		"/good",
		"/frobnicate",
		"/quit",
	}, "\n") + "\n"
	if err := c.loop(strings.NewReader(in)); err != nil {
		t.Fatalf("chat: %v\n%s", err, out.String())
	}
	text := out.String()
	for _, want := range []string{
		"error: no answer to rate",
		"Paris, the capital of France, is a city of about two million people, famous for its museums.\n",
		"unknown command /frobnicate",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("chat output lacks %q:\n%s", want, text)
		}
	}
	if n := strings.Count(text, "feedback recorded"); n != 2 {
		t.Errorf("%d feedbacks recorded, want 2:\n%s", n, text)
	}
	// The second answer repeats the first ([[again]]): the history went back
	// to the server with the first answer in it.
	if n := strings.Count(text, "famous for its museums.\n"); n != 2 {
		t.Errorf("the first answer appears %d times, want 2 (the second turn is [[again]] over the history):\n%s", n, text)
	}

	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-p.done; err != nil {
		t.Fatalf("clawrl serve after SIGTERM: %v\n%s", err, p.logText())
	}
	st, err := sqlite.OpenDir(context.Background(), data, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	turns, err := st.ListTurns(context.Background(), store.TurnFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(turns) != 2 || turns[0].SessionID != turns[1].SessionID {
		t.Fatalf("%d turns stored, want the chat's 2 in one session", len(turns))
	}
	first, second := turns[0], turns[1]
	if first.Feedback == nil || first.Feedback.Rating != -1 || first.Feedback.Text != "Too long. Answer in two or three plain sentences." {
		t.Errorf("first turn's feedback %+v, want -1 with the /bad text", first.Feedback)
	}
	if second.Feedback == nil || second.Feedback.Rating != 1 || second.Feedback.Text != "" {
		t.Errorf("second turn's feedback %+v, want +1 with no text", second.Feedback)
	}
	if len(second.Messages) != 3 || second.Messages[1].Content != first.Response.Content {
		t.Errorf("second turn's messages %+v, want the first question, its answer and the second question", second.Messages)
	}
}

// A server that goes away mid-answer: the chat says so, keeps no partial
// answer in its history, and has nothing to rate (a /good must not land on
// the answer before).
func TestChatServerGoneMidAnswer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the clawrl binary")
	}
	exe := buildClawrl(t)
	p := startServe(t, exe, t.TempDir())

	var out syncBuffer
	c := newTestChat(p.addr, &out)
	if err := c.send("[[say:A whole answer.]] hello"); err != nil {
		t.Fatalf("first answer: %v\n%s", err, out.String())
	}
	firstID, history := c.lastID, len(c.history)
	if firstID == "" || history != 2 {
		t.Fatalf("after one answer: id %q, %d messages in history", firstID, history)
	}

	sent := make(chan error, 1)
	go func() { sent <- c.send("[[slow:50]] [[long]] go on") }()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "la la") {
		if time.Now().After(deadline) {
			t.Fatalf("no streamed tokens within 30 s:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.done
	err := <-sent
	if err == nil || !strings.Contains(err.Error(), "dropped from this conversation") {
		t.Fatalf("send after the server died = %v, want the stream reported broken", err)
	}
	if c.lastID != "" || len(c.history) != history {
		t.Errorf("after the broken answer: lastID %q, %d messages in history; want none to rate and %d messages", c.lastID, len(c.history), history)
	}
	if err := c.feedback(1, ""); err == nil || !strings.Contains(err.Error(), "no answer to rate") {
		t.Errorf("/good after the broken answer = %v, want no answer to rate", err)
	}
}

// The gateway's stream shapes: content and reasoning deltas, tool calls, an
// error event after streaming began (api's fail), and no [DONE].
func TestReadChatStream(t *testing.T) {
	tests := []struct {
		name, stream, content, id, printed, err string
	}{
		{"whole", `data: {"id":"chatcmpl-1","choices":[{"delta":{"role":"assistant"}}]}

data: {"id":"chatcmpl-1","choices":[{"delta":{"reasoning_content":"hm"}}]}

data: {"id":"chatcmpl-1","choices":[{"delta":{"content":"Hi"}}]}

data: {"id":"chatcmpl-1","choices":[{"delta":{"content":" there."}}]}

data: {"id":"chatcmpl-1","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}}

data: [DONE]

`, "Hi there.", "chatcmpl-1", "(thinking) hm\nHi there.", ""},
		{"tool call", `data: {"id":"c2","choices":[{"delta":{"tool_calls":[{"function":{"name":"get_time","arguments":""}}]}}]}

data: {"id":"c2","choices":[{"delta":{"tool_calls":[{"function":{"arguments":"{\"tz\":\"UTC\"}"}}]}}]}

data: [DONE]
`, "", "c2", "\n[tool call get_time] {\"tz\":\"UTC\"}", ""},
		{"error event", `data: {"id":"c3","choices":[{"delta":{"content":"Par"}}]}

data: {"error":{"message":"engine: out of memory","type":"server_error","param":null,"code":null}}

`, "", "", "Par", "the server stopped the answer: engine: out of memory (server_error)"},
		{"no done", `data: {"id":"c4","choices":[{"delta":{"content":"Par"}}]}
`, "", "", "Par", "ended before [DONE]"},
		{"bad chunk", "data: {\"id\":\n", "", "", "", "bad stream chunk"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			content, id, err := readChatStream(strings.NewReader(tt.stream), &out)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one saying %q", err, tt.err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if content != tt.content || id != tt.id || out.String() != tt.printed {
				t.Errorf("got content %q id %q printed %q; want %q %q %q", content, id, out.String(), tt.content, tt.id, tt.printed)
			}
		})
	}
}

// FuzzReadChatStream: any bytes from the server give an answer only when a
// [DONE] arrived, and an error keeps nothing.
func FuzzReadChatStream(f *testing.F) {
	f.Add([]byte("data: {\"id\":\"a\",\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\ndata: [DONE]\n\n"))
	f.Add([]byte("data: {\"error\":{\"message\":\"boom\"}}\n\n"))
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{\"name\":\"f\"}}]}}]}\n"))
	f.Add([]byte(": keep-alive\n\ndata: [DONE]\n"))
	f.Add([]byte("data: null\n\ndata: [DONE]\n"))
	f.Fuzz(func(t *testing.T, stream []byte) {
		content, id, err := readChatStream(bytes.NewReader(stream), io.Discard)
		if err != nil {
			if content != "" || id != "" {
				t.Fatalf("error %v with content %q id %q kept", err, content, id)
			}
			return
		}
		if !bytes.Contains(stream, []byte("data: [DONE]")) {
			t.Fatalf("an answer (%q) from a stream with no [DONE]", content)
		}
	})
}
