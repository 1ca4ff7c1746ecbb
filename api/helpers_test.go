package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/clawrl/clawrl/engine/scripted"
	"github.com/clawrl/clawrl/store"
)

type testServer struct {
	*httptest.Server
	api    *Server
	store  store.Store
	engine *scripted.Engine
	key    string
}

type serverOptions struct {
	apiKey  string
	maxBody int64
	store   store.Store
}

func newTestServer(t testing.TB, o serverOptions) *testServer {
	t.Helper()
	st := o.store
	if st == nil {
		st = openTestStore(t)
	}
	eng := scripted.New(scripted.Options{})
	srv, err := New(Config{Engine: eng, Store: st, APIKey: o.apiKey, MaxBodyBytes: o.maxBody,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return &testServer{Server: hs, api: srv, store: st, engine: eng, key: o.apiKey}
}

// post sends a JSON body (a string is sent verbatim) and returns the
// response; the caller closes its body.
func (ts *testServer) post(t testing.TB, path string, body any, header ...string) *http.Response {
	t.Helper()
	var raw []byte
	switch b := body.(type) {
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			t.Fatal(err)
		}
	}
	req, err := http.NewRequest(http.MethodPost, ts.URL+path, bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if ts.key != "" {
		req.Header.Set("Authorization", "Bearer "+ts.key)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// complete runs a non-streaming completion and decodes it.
func (ts *testServer) complete(t testing.TB, body map[string]any, header ...string) completion {
	t.Helper()
	resp := ts.post(t, "/v1/chat/completions", body, header...)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, raw)
	}
	var c completion
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return c
}

// readSSE returns the data payloads of an event stream.
func readSSE(t *testing.T, r io.Reader) []string {
	t.Helper()
	var events []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			events = append(events, data)
		} else if line != "" {
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return events
}

func msgs(kv ...string) []map[string]any {
	var out []map[string]any
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, map[string]any{"role": kv[i], "content": kv[i+1]})
	}
	return out
}

var lsTool = map[string]any{"type": "function", "function": map[string]any{
	"name": "ls", "description": "list files",
	"parameters": map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}},
}}

func newRequest(ctx context.Context, url, body string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err == nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, err
}

// doComplete is complete for goroutines other than the test's (errors, no
// t.Fatal).
func (ts *testServer) doComplete(body []byte, header ...string) (completion, error) {
	req, err := newRequest(context.Background(), ts.URL+"/v1/chat/completions", string(body))
	if err != nil {
		return completion{}, err
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		return completion{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return completion{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return completion{}, fmt.Errorf("status %d: %s", resp.StatusCode, raw)
	}
	var c completion
	return c, json.Unmarshal(raw, &c)
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
