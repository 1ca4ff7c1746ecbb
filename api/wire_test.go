package api

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/scripted"
	"github.com/clawrl/clawrl/store"
)

// The exact event sequence of a stream with reasoning, content, a tool call,
// a finish chunk and a usage chunk.
func TestStreamEventSequence(t *testing.T) {
	ts := newTestServer(t, serverOptions{})
	resp := ts.post(t, "/v1/chat/completions", map[string]any{
		"model": "m", "stream": true, "stream_options": map[string]any{"include_usage": true},
		"messages": msgs("user", `[[think:plan]][[say:Sure.]][[tool:ls {"path":"src"}]]`), "tools": []any{lsTool},
	})
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	events := readSSE(t, resp.Body)
	if events[len(events)-1] != "[DONE]" {
		t.Fatalf("last event %q, want [DONE]", events[len(events)-1])
	}
	var chunks []chunk
	for _, e := range events[:len(events)-1] {
		var c chunk
		if err := json.Unmarshal([]byte(e), &c); err != nil {
			t.Fatalf("event %q: %v", e, err)
		}
		if c.Object != "chat.completion.chunk" || c.ID == "" || c.ID != chunksID(chunks, c.ID) {
			t.Fatalf("chunk %+v", c)
		}
		chunks = append(chunks, c)
	}
	first := chunks[0].Choices[0]
	if first.Delta.Role != "assistant" || first.FinishReason != nil {
		t.Fatalf("first chunk %+v, want the role", first)
	}
	usageChunk := chunks[len(chunks)-1]
	if len(usageChunk.Choices) != 0 || usageChunk.Usage == nil || usageChunk.Usage.CompletionTokens == 0 {
		t.Fatalf("last chunk before [DONE] %+v, want usage only", usageChunk)
	}
	fin := chunks[len(chunks)-2].Choices[0]
	if fin.FinishReason == nil || *fin.FinishReason != "tool_calls" {
		t.Fatalf("finish chunk %+v", fin)
	}
	var reasoning, content, args, id, name string
	reasoningDeltas, argDeltas := 0, 0
	for _, c := range chunks[1 : len(chunks)-2] {
		d := c.Choices[0].Delta
		if d.ReasoningContent != "" {
			reasoningDeltas++
		}
		reasoning += d.ReasoningContent
		if d.Content != nil {
			content += *d.Content
		}
		for _, tc := range d.ToolCalls {
			if tc.Index != 0 {
				t.Fatalf("tool call index %d", tc.Index)
			}
			if tc.ID != "" {
				if id != "" || tc.Type != "function" {
					t.Fatalf("second header for one tool call: %+v", tc)
				}
				id, name = tc.ID, tc.Function.Name
			} else {
				argDeltas++
			}
			args += tc.Function.Arguments
		}
	}
	if reasoning != "plan" || content != "Sure." || name != "ls" || args != `{"path":"src"}` {
		t.Fatalf("reasoning %q content %q tool %q(%s)", reasoning, content, name, args)
	}
	if reasoningDeltas < 2 || argDeltas < 2 {
		t.Fatalf("%d reasoning and %d argument deltas: not streamed", reasoningDeltas, argDeltas)
	}
	if strings.Trim(id, alnum) != "" {
		t.Fatalf("tool call id %q is not alphanumeric", id)
	}
	turn, err := ts.store.Turn(context.Background(), chunks[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(turn.Response.ToolCalls) != 1 || turn.Response.ToolCalls[0].ID != id || turn.FinishReason != "tool_calls" {
		t.Fatalf("recorded response %+v finish %q; streamed id %q", turn.Response, turn.FinishReason, id)
	}
}

func chunksID(prev []chunk, id string) string {
	if len(prev) == 0 {
		return id
	}
	return prev[0].ID
}

// gatedEngine holds a generation after its first token until the gate
// opens, so a test can see what the client has received meanwhile.
type gatedEngine struct {
	engine.Engine
	gate chan struct{}
}

func (g gatedEngine) Generate(ctx context.Context, req engine.GenerateRequest, emit func(engine.Token) error) (engine.Generation, error) {
	n := 0
	return g.Engine.Generate(ctx, req, func(tok engine.Token) error {
		if err := emit(tok); err != nil {
			return err
		}
		if n++; n == 1 {
			select {
			case <-g.gate:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	})
}

// Tokens reach the client while the engine is still generating: the first
// content delta arrives while the engine is held after its first token.
func TestStreamingIsIncremental(t *testing.T) {
	st := openTestStore(t)
	gated := gatedEngine{Engine: newTestServer(t, serverOptions{store: st}).engine, gate: make(chan struct{})}
	srv, err := New(Config{Engine: gated, Store: st, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	resp, err := http.Post(hs.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"stream":true,"messages":[{"role":"user","content":"[[say:abcdefgh]]"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	first := make(chan error, 1)
	go func() {
		buf := make([]byte, 4096)
		got := ""
		for !strings.Contains(got, `"content":"a"`) {
			n, err := resp.Body.Read(buf)
			if err != nil {
				first <- err
				return
			}
			got += string(buf[:n])
		}
		first <- nil
	}()
	select {
	case err := <-first:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the first token never reached the client while the engine was still generating")
	}
	close(gated.gate)
	io.Copy(io.Discard, resp.Body)
}

// TestRecordsMaxTokens: each turn keeps the limit its response was
// generated under: the request's max_tokens or max_completion_tokens (the
// newer name wins), the server's default when it sent neither, capped by
// the room the prompt leaves in the context window.
func TestRecordsMaxTokens(t *testing.T) {
	ts := newTestServer(t, serverOptions{})
	small := scripted.New(scripted.Options{ContextLength: 64})
	cramped, err := New(Config{Engine: small, Store: ts.store, DefaultMaxTokens: 1000, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(cramped.Handler())
	defer hs.Close()
	tc := &testServer{Server: hs, api: cramped, store: ts.store, engine: small}
	for _, c := range []struct {
		name   string
		server *testServer
		body   map[string]any
		want   int // 0: 64 less the prompt's tokens
		finish string
	}{
		{"max_tokens", ts, map[string]any{"messages": msgs("user", "[[long]]"), "max_tokens": 7}, 7, "length"},
		{"max_completion_tokens", ts, map[string]any{"messages": msgs("user", "[[say:hi]]"), "max_completion_tokens": 9}, 9, "stop"},
		{"both: the newer name", ts, map[string]any{"messages": msgs("user", "[[say:hi]]"), "max_tokens": 5, "max_completion_tokens": 11}, 11, "stop"},
		{"neither: the server's default", ts, map[string]any{"messages": msgs("user", "[[say:hi]]")}, 4096, "stop"},
		{"streamed", ts, map[string]any{"messages": msgs("user", "[[say:hi]]"), "max_tokens": 13, "stream": true}, 13, "stop"},
		{"the context window's room", tc, map[string]any{"messages": msgs("user", "[[long]]"), "max_tokens": 500}, 0, "length"},
		{"the room, under the default", tc, map[string]any{"messages": msgs("user", "[[say:hi]]")}, 0, "stop"},
	} {
		id := ""
		if c.body["stream"] == true {
			resp := c.server.post(t, "/v1/chat/completions", c.body)
			for _, data := range readSSE(t, resp.Body) {
				var ch chunk
				if json.Unmarshal([]byte(data), &ch) == nil && ch.ID != "" {
					id = ch.ID
				}
			}
			resp.Body.Close()
		} else {
			id = c.server.complete(t, c.body).ID
		}
		turn, err := ts.store.Turn(context.Background(), id)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want := c.want
		if want == 0 {
			want = 64 - turn.PromptTokens
		}
		if turn.MaxTokens != want || turn.FinishReason != c.finish || len(turn.ResponseIDs) > turn.MaxTokens {
			t.Errorf("%s: recorded MaxTokens %d (%d response ids, finish %s), want %d (finish %s)",
				c.name, turn.MaxTokens, len(turn.ResponseIDs), turn.FinishReason, want, c.finish)
		}
	}
}

func TestFinishLengthAndStopStrings(t *testing.T) {
	ts := newTestServer(t, serverOptions{})
	c := ts.complete(t, map[string]any{"messages": msgs("user", "[[long]]"), "max_tokens": 7})
	if c.Choices[0].FinishReason != "length" || *c.Choices[0].Message.Content != "la la l" || c.Usage.CompletionTokens != 7 {
		t.Fatalf("length: %+v %q usage %+v", c.Choices[0], *c.Choices[0].Message.Content, c.Usage)
	}
	c = ts.complete(t, map[string]any{"messages": msgs("user", "[[say:one two STOP three]]"), "stop": []string{"STOP", "zzz"}})
	if c.Choices[0].FinishReason != "stop" || *c.Choices[0].Message.Content != "one two " {
		t.Fatalf("stop: %+v %q", c.Choices[0], *c.Choices[0].Message.Content)
	}
	// The recorded ids end where generation stopped (at the token that
	// completed the stop string), not at the end of the script.
	turn, err := ts.store.Turn(context.Background(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if turn.ResponseText != "one two STOP" || len(turn.BehaviourLogprobs) != len(turn.ResponseIDs) {
		t.Fatalf("recorded %q with %d logprobs for %d ids", turn.ResponseText, len(turn.BehaviourLogprobs), len(turn.ResponseIDs))
	}
	// A streamed stop string is never partially shown.
	resp := ts.post(t, "/v1/chat/completions", map[string]any{"stream": true, "messages": msgs("user", "[[say:abc<END>def]]"), "stop": "<END>"})
	defer resp.Body.Close()
	content := ""
	for _, e := range readSSE(t, resp.Body) {
		var ch chunk
		if json.Unmarshal([]byte(e), &ch) == nil && len(ch.Choices) > 0 && ch.Choices[0].Delta.Content != nil {
			content += *ch.Choices[0].Delta.Content
		}
	}
	if content != "abc" {
		t.Fatalf("streamed content with stop %q", content)
	}
}

func TestContentPartsAndRecordedTurn(t *testing.T) {
	ts := newTestServer(t, serverOptions{})
	c := ts.complete(t, map[string]any{
		"model": "whatever", "temperature": 0.7, "top_p": 0.9, "seed": 3, "max_completion_tokens": 100, "n": 1,
		"user": "u1", "metadata": map[string]string{"k": "v"}, "tool_choice": "auto", "tools": []any{lsTool},
		"some_future_field": []int{1, 2},
		"messages": []any{
			map[string]any{"role": "developer", "content": "dev rules"},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "part one, "}, map[string]any{"type": "text", "text": "part two"}}},
		},
	})
	if *c.Choices[0].Message.Content != "ok: part one, part two" {
		t.Fatalf("content %q", *c.Choices[0].Message.Content)
	}
	turn, err := ts.store.Turn(context.Background(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		what string
		ok   bool
	}{
		{"messages flattened", len(turn.Messages) == 2 && turn.Messages[1].Content == "part one, part two"},
		{"tools", len(turn.Tools) == 1 && turn.Tools[0].Function.Name == "ls"},
		{"prompt text and ids", turn.PromptText != "" && len(turn.PromptIDs) == len(ts.engine.Format().Encode(turn.PromptText))},
		{"response ids and logprobs", len(turn.ResponseIDs) > 0 && len(turn.ResponseIDs) == len(turn.BehaviourLogprobs)},
		{"response text", turn.ResponseText == "ok: part one, part two<|im_end|>"},
		{"engine and model", turn.Engine == "scripted" && turn.Model == "scripted"},
		{"finish", turn.FinishReason == "stop"},
		{"main, generated", turn.Type == store.Main && turn.State == store.Generated},
		{"hash", turn.ConversationHash != ""},
		{"timings", turn.TotalNanos > 0},
		{"token counts", turn.PromptTokens == len(turn.PromptIDs) && turn.CompletionTokens == len(turn.ResponseIDs)},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("recorded turn: %s wrong: %+v", c.what, turn)
		}
	}
	sess, err := ts.store.Session(context.Background(), turn.SessionID)
	if err != nil || sess.Key != "user:u1" || sess.KeySource != "user" {
		t.Fatalf("session %+v (%v)", sess, err)
	}
}

func TestBadInput(t *testing.T) {
	ts := newTestServer(t, serverOptions{maxBody: 4096})
	big := `{"messages":[{"role":"user","content":"` + strings.Repeat("x", 5000) + `"}]}`
	tests := []struct {
		name   string
		body   string
		status int
		param  string
	}{
		{"malformed JSON", `{"messages": [`, 400, ""},
		{"not an object", `[1,2]`, 400, ""},
		{"empty body", ``, 400, ""},
		{"trailing data", `{"messages":[{"role":"user","content":"hi"}]} {}`, 400, ""},
		{"wrong type messages", `{"messages":"hi"}`, 400, "messages"},
		{"wrong type temperature", `{"messages":[{"role":"user","content":"hi"}],"temperature":"hot"}`, 400, "temperature"},
		{"wrong type content", `{"messages":[{"role":"user","content":42}]}`, 400, "messages[0].content"},
		{"empty messages", `{"messages":[]}`, 400, "messages"},
		{"missing messages", `{"model":"x"}`, 400, "messages"},
		{"unknown role", `{"messages":[{"role":"robot","content":"hi"}]}`, 400, "messages[0].role"},
		{"missing role", `{"messages":[{"content":"hi"}]}`, 400, "messages[0].role"},
		{"null user content", `{"messages":[{"role":"user","content":null}]}`, 400, "messages[0].content"},
		{"image part", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}`, 400, "messages[0].content[0].type"},
		{"invalid UTF-8", "{\"messages\":[{\"role\":\"user\",\"content\":\"\xff\xfe\"}]}", 400, ""},
		{"unknown tool call", `{"messages":[{"role":"user","content":"hi"},{"role":"tool","tool_call_id":"nope","content":"x"}]}`, 400, "messages[1].tool_call_id"},
		{"tool result without id", `{"messages":[{"role":"user","content":"hi"},{"role":"tool","content":"x"}]}`, 400, "messages[1].tool_call_id"},
		{"n=2", `{"messages":[{"role":"user","content":"hi"}],"n":2}`, 400, "n"},
		{"temperature range", `{"messages":[{"role":"user","content":"hi"}],"temperature":3}`, 400, "temperature"},
		{"max_tokens 0", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":0}`, 400, "max_tokens"},
		{"top_logprobs without logprobs", `{"messages":[{"role":"user","content":"hi"}],"top_logprobs":3}`, 400, "top_logprobs"},
		{"stop wrong type", `{"messages":[{"role":"user","content":"hi"}],"stop":7}`, 400, "stop"},
		{"tool type", `{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"web"}]}`, 400, "tools[0].type"},
		{"tool_choice unknown function", `{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"a"}}],"tool_choice":{"type":"function","function":{"name":"b"}}}`, 400, "tool_choice"},
		{"tool_choice required without tools", `{"messages":[{"role":"user","content":"hi"}],"tool_choice":"required"}`, 400, "tool_choice"},
		{"tool_choice required with empty tools", `{"messages":[{"role":"user","content":"hi"}],"tools":[],"tool_choice":"required"}`, 400, "tool_choice"},
		{"tool_choice named without tools", `{"messages":[{"role":"user","content":"hi"}],"tool_choice":{"type":"function","function":{"name":"a"}}}`, 400, "tool_choice"},
		{"tool_choice unknown mode", `{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"a"}}],"tool_choice":"always"}`, 400, "tool_choice"},
		{"tool_choice without a name", `{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"a"}}],"tool_choice":{"type":"function"}}`, 400, "tool_choice"},
		{"tool_choice wrong type", `{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"a"}}],"tool_choice":7}`, 400, "tool_choice"},
		{"turn type", `{"messages":[{"role":"user","content":"hi"}],"turn_type":"primary"}`, 400, ""},
		{"oversized body", big, 413, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := ts.post(t, "/v1/chat/completions", tt.body)
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, raw)
			}
			var e struct {
				Error struct {
					Message string  `json:"message"`
					Type    string  `json:"type"`
					Param   *string `json:"param"`
					Code    *string `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal(raw, &e); err != nil || e.Error.Message == "" || e.Error.Type == "" || !utf8.ValidString(e.Error.Message) {
				t.Fatalf("error body %s is not OpenAI's shape (%v)", raw, err)
			}
			if !strings.Contains(string(raw), `"param"`) || !strings.Contains(string(raw), `"code"`) {
				t.Fatalf("error body %s lacks param or code", raw)
			}
			if tt.param != "" && (e.Error.Param == nil || *e.Error.Param != tt.param) {
				t.Fatalf("param %v, want %q (%s)", e.Error.Param, tt.param, raw)
			}
		})
	}
	st, _ := ts.store.Stats(context.Background())
	if n := st.TurnsByType[store.Main] + st.TurnsByType[store.Side]; n != 0 {
		t.Fatalf("%d turns recorded from bad requests", n)
	}
}

func TestAuth(t *testing.T) {
	ts := newTestServer(t, serverOptions{apiKey: "k1"})
	for _, tt := range []struct {
		path, auth string
		status     int
	}{
		{"/v1/models", "", 401},
		{"/v1/models", "Bearer wrong", 401},
		{"/v1/models", "k1", 401},
		{"/v1/models", "Bearer k1", 200},
		{"/metrics", "", 401},
		{"/healthz", "", 200},
	} {
		req, _ := http.NewRequest(http.MethodGet, ts.URL+tt.path, nil)
		if tt.auth != "" {
			req.Header.Set("Authorization", tt.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("%s with %q: %d, want %d", tt.path, tt.auth, resp.StatusCode, tt.status)
		}
		if tt.status == 401 && !strings.Contains(string(raw), `"invalid_api_key"`) {
			t.Errorf("401 body %s", raw)
		}
	}
}

func TestModelsHealthMetrics(t *testing.T) {
	ts := newTestServer(t, serverOptions{})
	ts.complete(t, map[string]any{"messages": msgs("user", "hi")})
	get := func(path string) string {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, raw)
		}
		return string(raw)
	}
	var models modelList
	if err := json.Unmarshal([]byte(get("/v1/models")), &models); err != nil || len(models.Data) != 1 || models.Data[0].ID != "scripted" {
		t.Fatalf("models %+v (%v)", models, err)
	}
	if h := get("/healthz"); !strings.Contains(h, `"status":"ok"`) {
		t.Fatalf("healthz %s", h)
	}
	m := get("/metrics")
	for _, want := range []string{
		`clawrl_http_requests_total{code="200",route="/v1/chat/completions"} 1`,
		`clawrl_turns{state="generated"} 1`,
		`clawrl_turns_served_total{finish="stop",type="main"} 1`,
		`clawrl_http_request_duration_seconds_bucket`,
		`clawrl_tokens_total{kind="completion"}`,
		`clawrl_sessions 1`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	resp, _ := http.Post(ts.URL+"/v1/models", "application/json", nil)
	resp.Body.Close()
	if resp.StatusCode != 405 {
		t.Fatalf("POST /v1/models: %d", resp.StatusCode)
	}
}

func TestCheckAddr(t *testing.T) {
	for _, tt := range []struct {
		addr, key string
		ok        bool
	}{
		{"127.0.0.1:30000", "", true},
		{"localhost:1", "", true},
		{"[::1]:1", "", true},
		{"0.0.0.0:30000", "", false},
		{":30000", "", false},
		{"192.168.1.2:80", "", false},
		{"0.0.0.0:30000", "key", true},
		{"nonsense", "", false},
	} {
		if err := CheckAddr(tt.addr, tt.key); (err == nil) != tt.ok {
			t.Errorf("CheckAddr(%q, %q) = %v, want ok=%v", tt.addr, tt.key, err, tt.ok)
		}
	}
}

func FuzzDecodeChatRequest(f *testing.F) {
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"stop":["a"],"tools":[{"type":"function","function":{"name":"f","parameters":{}}}]}`))
	f.Add([]byte(`{"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":[{"type":"text","text":"x"}]}]}`))
	f.Add([]byte(`{"messages":[{"role":"user","content":"hi"}],"n":1,"logprobs":true,"top_logprobs":2,"tool_choice":{"type":"function","function":{"name":"f"}}}`))
	f.Add([]byte(`{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"required"}`))
	f.Add([]byte(`{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"auto"}}],"tool_choice":{"type":"function","function":{"name":"auto"}}}`))
	f.Add([]byte(`{"messages":[{"role":"user","content":"hi"}],"tool_choice":"none"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, e := decodeChatRequest(body)
		if (req == nil) == (e == nil) {
			t.Fatalf("request %v and error %v", req, e)
		}
		if e != nil {
			if e.Status != 400 || e.Message == "" {
				t.Fatalf("error %+v", e)
			}
			return
		}
		if len(req.Messages) == 0 {
			t.Fatal("accepted a request without messages")
		}
		// A forced call always has something to call.
		switch req.ToolChoice {
		case "auto", "none":
		case "required":
			if len(req.Tools) == 0 {
				t.Fatal("accepted tool_choice required without tools")
			}
		case "function":
			if !slices.ContainsFunc(req.Tools, func(tl chat.Tool) bool { return tl.Function.Name == req.ToolChoiceName }) {
				t.Fatalf("accepted tool_choice naming %q, not among the tools", req.ToolChoiceName)
			}
		default:
			t.Fatalf("tool_choice %q", req.ToolChoice)
		}
		for _, m := range req.Messages {
			if !utf8.ValidString(m.Content) {
				t.Fatalf("accepted invalid UTF-8 %q", m.Content)
			}
		}
	})
}

// A generation that streams for longer than the body read timeout is not
// cut: the deadline covers reading the body only.
func TestLongStreamOutlivesBodyTimeout(t *testing.T) {
	st := openTestStore(t)
	eng := newTestServer(t, serverOptions{store: st}).engine
	srv, err := New(Config{Engine: eng, Store: st, BodyReadTimeout: 100 * time.Millisecond, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := srv.HTTPServer(ln.Addr().String())
	go hs.Serve(ln)
	defer hs.Close()
	resp, err := http.Post("http://"+ln.Addr().String()+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"stream":true,"messages":[{"role":"user","content":"[[slow:40]][[say:0123456789]]"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := readSSE(t, resp.Body)
	if events[len(events)-1] != "[DONE]" {
		t.Fatalf("stream of ~450 ms ended early: %v", events[len(events)-3:])
	}
}

func TestStreamedLogprobs(t *testing.T) {
	ts := newTestServer(t, serverOptions{})
	resp := ts.post(t, "/v1/chat/completions", map[string]any{"stream": true, "logprobs": true, "top_logprobs": 3,
		"messages": msgs("user", "[[think:hm]][[say:héllo]]")})
	defer resp.Body.Close()
	var id string
	var lps []tokenLogprob
	for _, e := range readSSE(t, resp.Body) {
		var c chunk
		if e == "[DONE]" || json.Unmarshal([]byte(e), &c) != nil || len(c.Choices) == 0 {
			continue
		}
		id = c.ID
		if c.Choices[0].Logprobs != nil {
			lps = append(lps, c.Choices[0].Logprobs.Content...)
		}
	}
	turn, err := ts.store.Turn(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	// Every generated token but the stop token, in order, with the
	// behaviour logprob that was recorded.
	if len(lps) != len(turn.ResponseIDs)-1 {
		t.Fatalf("%d streamed logprobs for %d tokens", len(lps), len(turn.ResponseIDs))
	}
	var raw []byte
	for i, lp := range lps {
		if lp.Logprob != turn.BehaviourLogprobs[i] || len(lp.TopLogprobs) != 3 {
			t.Fatalf("logprob %d = %+v, recorded %v", i, lp, turn.BehaviourLogprobs[i])
		}
		for _, b := range lp.Bytes {
			raw = append(raw, byte(b))
		}
	}
	if string(raw) != "<think>\nhm\n</think>\n\nhéllo" {
		t.Fatalf("token bytes spell %q", raw)
	}
}

func TestDecodeToolChoice(t *testing.T) {
	tools := `"tools":[{"type":"function","function":{"name":"auto"}},{"type":"function","function":{"name":"f"}}]`
	tests := []struct{ choice, mode, name string }{
		{``, "auto", ""},
		{`,"tool_choice":null`, "auto", ""},
		{`,"tool_choice":"none"`, "none", ""},
		{`,"tool_choice":"required"`, "required", ""},
		{`,"tool_choice":{"type":"function","function":{"name":"f"}}`, "function", "f"},
		// A function may be called like a mode and is still a function.
		{`,"tool_choice":{"type":"function","function":{"name":"auto"}}`, "function", "auto"},
	}
	for _, tt := range tests {
		req, e := decodeChatRequest([]byte(`{"messages":[{"role":"user","content":"hi"}],` + tools + tt.choice + `}`))
		if e != nil {
			t.Fatalf("%s: %v", tt.choice, e)
		}
		if req.ToolChoice != tt.mode || req.ToolChoiceName != tt.name {
			t.Errorf("%s: decoded %q %q, want %q %q", tt.choice, req.ToolChoice, req.ToolChoiceName, tt.mode, tt.name)
		}
	}
}

func TestToolChoiceNone(t *testing.T) {
	ts := newTestServer(t, serverOptions{})
	c := ts.complete(t, map[string]any{"messages": msgs("user", "hi"), "tools": []any{lsTool}, "tool_choice": "none"})
	turn, err := ts.store.Turn(context.Background(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(turn.PromptText, `"ls"`) || len(turn.Tools) != 1 {
		t.Fatalf("tool_choice none: tools rendered into the prompt %q, recorded %+v", turn.PromptText, turn.Tools)
	}
}
