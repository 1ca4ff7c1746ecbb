package openclaw

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	buildTimeout      = 10 * time.Minute
	serveReadyTimeout = 3 * time.Minute
	exportTimeout     = 2 * time.Minute
)

// buildClawrl builds the clawrl binary from this checkout, with the build
// tags this test was built with (so the cgo/OpenBLAS run tests that engine).
func buildClawrl(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "clawrl")
	args := []string{"build", "-o", bin}
	if clawrlBuildTags != "" {
		args = append(args, "-tags", clawrlBuildTags)
	}
	args = append(args, "github.com/clawrl/clawrl/cmd/clawrl")
	if _, _, err := run(t, buildTimeout, os.Environ(), "", "go", args...); err != nil {
		t.Fatalf("build clawrl: %v", err)
	}
	return bin
}

// clawrl runs a clawrl subcommand to completion and returns its stdout.
func clawrl(t *testing.T, bin string, timeout time.Duration, args ...string) string {
	t.Helper()
	out, _, err := run(t, timeout, os.Environ(), "", bin, args...)
	if err != nil {
		t.Fatalf("clawrl %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// server is a running `clawrl serve`.
type server struct {
	*daemon
	BaseURL string // http://127.0.0.1:PORT
	DataDir string
}

// startServe starts `clawrl serve` on a free loopback port and waits for
// /healthz.
func startServe(t *testing.T, bin, modelDir, dataDir string, extra ...string) *server {
	t.Helper()
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	args := append([]string{"serve", "--model", modelDir, "--addr", addr, "--data", dataDir}, extra...)
	s := &server{BaseURL: "http://" + addr, DataDir: dataDir}
	s.daemon = startDaemon(t, os.Environ(), "", bin, args...)
	waitFor(t, serveReadyTimeout, "clawrl serve /healthz", s.daemon, func() error {
		_, err := s.health()
		return err
	})
	return s
}

type health struct {
	Status        string `json:"status"`
	Model         string `json:"model"`
	Engine        string `json:"engine"`
	PolicyVersion int64  `json:"policy_version"`
}

func (s *server) health() (health, error) {
	var h health
	err := s.call(http.MethodGet, "/healthz", nil, nil, &h)
	if err == nil && h.Status != "ok" {
		err = fmt.Errorf("healthz status %q", h.Status)
	}
	return h, err
}

// call does one JSON request against the server (10 s bound).
func (s *server) call(method, path string, header http.Header, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.BaseURL+path, rd)
	if err != nil {
		return err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	c := &http.Client{Timeout: 2 * time.Minute}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, tail(string(data), 2000))
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("%s %s: response: %w", method, path, err)
		}
	}
	return nil
}

// exportedTurn is the part of a `clawrl export` record the test checks.
type exportedTurn struct {
	SessionID         string            `json:"session_id"`
	Turn              int               `json:"turn"`
	Messages          []exportedMsg     `json:"messages"`
	ResponseText      string            `json:"response_text"`
	ToolCalls         []exportedCall    `json:"tool_calls"`
	NextState         []exportedMsg     `json:"next_state"`
	ID                string            `json:"id"`
	InternalSessionID string            `json:"internal_session_id"`
	SessionKey        string            `json:"session_key"`
	SessionKeySource  string            `json:"session_key_source"`
	Type              string            `json:"type"`
	Epoch             int               `json:"epoch"`
	State             string            `json:"state"`
	Tools             []json.RawMessage `json:"tools"`
	Response          exportedMsg       `json:"response"`
	PromptIDs         []int32           `json:"prompt_ids"`
	ResponseIDs       []int32           `json:"response_ids"`
	BehaviourLogprobs []*float64        `json:"behaviour_logprobs"`
	PolicyVersion     int64             `json:"policy_version"`
	FinishReason      string            `json:"finish_reason"`
	NextStateKind     string            `json:"next_state_kind"`
	Feedback          *struct {
		Rating int    `json:"rating"`
		Text   string `json:"text"`
	} `json:"feedback"`
	DropReason string `json:"drop_reason"`
	// Raw keeps the whole record (the learning loop adds judgment and
	// sample fields) for failure messages and loop checks.
	Raw map[string]json.RawMessage `json:"-"`
}

type exportedMsg struct {
	Role       string         `json:"role"`
	Content    string         `json:"content"`
	ToolCalls  []exportedCall `json:"tool_calls"`
	ToolCallID string         `json:"tool_call_id"`
}

type exportedCall struct {
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// export runs `clawrl export` on a data folder (safe while serve runs) and
// parses its JSONL.
func export(t *testing.T, bin, dataDir string) []exportedTurn {
	t.Helper()
	out := clawrl(t, bin, exportTimeout, "export", "--data", dataDir)
	var turns []exportedTurn
	for i, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var tr exportedTurn
		if err := json.Unmarshal([]byte(line), &tr); err != nil {
			t.Fatalf("export line %d: %v\n%s", i+1, err, tail(line, 2000))
		}
		if err := json.Unmarshal([]byte(line), &tr.Raw); err != nil {
			t.Fatal(err)
		}
		turns = append(turns, tr)
	}
	return turns
}

// summary is a one-line description of a turn for failure messages.
func (tr exportedTurn) summary() string {
	calls := make([]string, 0, len(tr.ToolCalls))
	for _, c := range tr.ToolCalls {
		calls = append(calls, c.Function.Name+c.Function.Arguments)
	}
	first := tr.ResponseIDs
	if len(first) > 4 {
		first = first[:4]
	}
	return fmt.Sprintf("#%d %s epoch=%d state=%s calls=%v text=%.60q raw=%.60q ids=%v… next=%s(%d)", tr.Turn, tr.Type, tr.Epoch, tr.State,
		calls, tr.Response.Content, tr.ResponseText, first, tr.NextStateKind, len(tr.NextState))
}
