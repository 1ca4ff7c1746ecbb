package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startServeModel runs `clawrl serve` on the random tiny Qwen3 (--model
// random:tiny, written under the data directory) with extra flags.
func startServeModel(t *testing.T, exe, dataDir string, args ...string) *serveProcess {
	t.Helper()
	return startServeWith(t, exe, dataDir, "", 2*time.Minute, append([]string{"--model", randomTinySpec}, args...)...)
}

func postJSON(t *testing.T, url string, body any, header map[string]string) []byte {
	t.Helper()
	raw, _ := json.Marshal(body)
	status, data := send(t, http.MethodPost, url, bytes.NewReader(raw), header)
	if status != http.StatusOK {
		t.Fatalf("POST %s: HTTP %d: %s", url, status, data)
	}
	return data
}

// getMetrics returns the text of base's /metrics, asked with header.
func getMetrics(t *testing.T, base string, header map[string]string) string {
	t.Helper()
	_, data := send(t, http.MethodGet, base+"/metrics", nil, header)
	return string(data)
}

// send makes one request (a JSON body when body is set) with header and
// returns the status and the whole body.
func send(t *testing.T, method, url string, body io.Reader, header map[string]string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, url, body)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}

// TestServeLearnsInBackground is the whole product on a tiny model: talk to
// `clawrl serve`, rate the answers through /v1/feedback, and a trained
// adapter version appears in the background — on /metrics, in `clawrl
// status`, and serving the next request — while the API keeps answering.
func TestServeLearnsInBackground(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the clawrl binary on a tiny model")
	}
	exe := buildClawrl(t)
	data := t.TempDir()
	p := startServeModel(t, exe, data, "--batch-size", "2", "--judge-max-tokens", "16", "--max-tokens", "8", "--lora-rank", "4")
	base := "http://" + p.addr
	chatOnce := func(session, text string) string {
		var c struct {
			ID string `json:"id"`
		}
		out := postJSON(t, base+"/v1/chat/completions", map[string]any{"messages": []any{map[string]any{"role": "user", "content": text}}},
			map[string]string{"X-Session-Id": session})
		if err := json.Unmarshal(out, &c); err != nil || c.ID == "" {
			t.Fatalf("completion %s: %v", out, err)
		}
		return c.ID
	}
	for i, rating := range []int{1, -1} {
		id := chatOnce(fmt.Sprintf("s%d", i), fmt.Sprintf("question %d", i))
		postJSON(t, base+"/v1/feedback", map[string]any{"id": id, "rating": rating}, nil)
	}
	rated := time.Now()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		body := getMetrics(t, base, nil)
		if strings.Contains(body, "\nclawrl_loop_policy_version 1\n") {
			break
		}
		if time.Now().After(deadline) {
			// The server's goroutines say where the loop waits: SIGQUIT makes
			// the Go runtime print every stack to stderr, which logText holds.
			p.cmd.Process.Signal(syscall.SIGQUIT)
			time.Sleep(2 * time.Second)
			t.Fatalf("no trained version on /metrics after 3 minutes:\n%s\n%s", body, p.logText())
		}
		chatOnce("traffic", "are you still there?") // serving keeps answering meanwhile
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("last feedback → version 1 serving: %s", time.Since(rated).Round(time.Millisecond))

	out, err := exec.Command(exe, "status", "--data", data, "--json").Output()
	if err != nil {
		t.Fatalf("clawrl status: %v", err)
	}
	var rep struct {
		Loop map[string]any `json:"loop"`
	}
	if err := json.Unmarshal(out, &rep); err != nil || rep.Loop["latest_version"] != 1.0 {
		t.Errorf("clawrl status: %s (%v)", out, err)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-p.done; err != nil {
		t.Fatalf("clawrl serve after SIGTERM: %v\n%s", err, p.logText())
	}
}
