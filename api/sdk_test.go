package api

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawrl/clawrl/store"
)

// missingRef skips, or fails when CLAWRL_REQUIRE_REFS=1 (scripts/test), when
// a reference client is not installed.
func missingRef(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CLAWRL_REQUIRE_REFS") == "1" {
		t.Fatalf(format+" (CLAWRL_REQUIRE_REFS=1)", args...)
	}
	t.Skipf(format, args...)
}

// sdkExchange is what the SDK scripts print.
type sdkExchange struct {
	ID        string `json:"id"`
	Chunks    int    `json:"chunks"`
	Reasoning string `json:"reasoning"`
	Finish    string `json:"finish"`
	Usage     *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	ToolCalls []struct {
		ID, Name, Arguments string
	} `json:"tool_calls"`
	Answer string `json:"answer"`
}

// checkExchange verifies one streamed tool-call round trip and what the
// store made of it.
func checkExchange(t *testing.T, ts *testServer, out []byte) {
	t.Helper()
	var x sdkExchange
	if err := json.Unmarshal(out, &x); err != nil {
		t.Fatalf("client output %s: %v", out, err)
	}
	if x.Finish != "tool_calls" || x.Reasoning != "need files" || len(x.ToolCalls) != 1 || x.ToolCalls[0].Name != "ls" ||
		x.ToolCalls[0].Arguments != `{"path":"/srv"}` || strings.Trim(x.ToolCalls[0].ID, alnum) != "" || x.ToolCalls[0].ID == "" {
		t.Fatalf("client saw %+v", x)
	}
	if x.Usage == nil || x.Usage.CompletionTokens == 0 || x.Chunks < 5 {
		t.Fatalf("usage %+v over %d chunks", x.Usage, x.Chunks)
	}
	if x.Answer != "tool said: etc var" {
		t.Fatalf("answer after the tool result %q", x.Answer)
	}
	turn, err := ts.store.Turn(context.Background(), x.ID)
	if err != nil {
		t.Fatal(err)
	}
	if turn.State != store.Observed || turn.NextStateKind != store.NextTool || turn.NextState[0].Content != "etc var" ||
		turn.Response.ToolCalls[0].ID != x.ToolCalls[0].ID {
		t.Fatalf("recorded turn: %s %s %+v %+v", turn.State, turn.NextStateKind, turn.NextState, turn.Response)
	}
}

func TestPythonOpenAISDK(t *testing.T) {
	py := os.Getenv("CLAWRL_PYTHON")
	if py == "" {
		py = "python3"
	}
	if out, err := exec.Command(py, "-c", "import openai").CombinedOutput(); err != nil {
		missingRef(t, "python %s with the openai package: %v %s", py, err, out)
	}
	ts := newTestServer(t, serverOptions{apiKey: "py-key"})
	cmd := exec.Command(py, filepath.Join("testdata", "openai_stream_tools.py"), ts.URL+"/v1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python client: %v\n%s", err, stderrOf(err))
	}
	checkExchange(t, ts, out)
}

func TestNpmOpenAISDK(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		missingRef(t, "node is not installed")
	}
	dir := filepath.Join("testdata", "npm")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "openai", "package.json")); err != nil {
		npm, err := exec.LookPath("npm")
		if err != nil {
			missingRef(t, "npm is not installed")
		}
		// The pinned version from package-lock.json.
		if out, err := exec.Command(npm, "ci", "--prefix", dir, "--no-audit", "--no-fund").CombinedOutput(); err != nil {
			missingRef(t, "npm ci in %s: %v\n%s", dir, err, out)
		}
	}
	ts := newTestServer(t, serverOptions{apiKey: "npm-key"})
	out, err := exec.Command(node, filepath.Join(dir, "stream_tools.mjs"), ts.URL+"/v1").Output()
	if err != nil {
		t.Fatalf("node client: %v\n%s", err, stderrOf(err))
	}
	checkExchange(t, ts, out)
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
