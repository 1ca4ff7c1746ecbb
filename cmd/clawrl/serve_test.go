package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/clawrl/clawrl/store/sqlite"
)

func TestServeRefusesBadSetups(t *testing.T) {
	t.Setenv(testEngineEnv, "")
	base := serveOptions{addr: "127.0.0.1:0", method: "combine", sessionIdle: time.Minute, data: t.TempDir(), logLevel: "error"}
	tests := []struct {
		name string
		edit func(*serveOptions)
		want string
	}{
		{"public address without a key", func(o *serveOptions) { o.addr = "0.0.0.0:30000" }, "API key"},
		{"unknown method", func(o *serveOptions) { o.method = "sft" }, "--method"},
		{"missing model folder", func(o *serveOptions) { o.model = filepath.Join(o.data, "nope") }, "want a Hugging Face folder"},
		{"bad idle", func(o *serveOptions) { o.sessionIdle = 0 }, "--session-idle"},
		{"negative max tokens", func(o *serveOptions) { o.maxTokens = -5 }, "--max-tokens"},
		{"--teacher-serve beside --teacher-url", func(o *serveOptions) {
			o.teacherServe, o.learning.RemoteTeacher.URL = randomTinySpec, "http://127.0.0.1:1/v1"
		}, "give one"},
		{"--teacher-serve under binary RL", func(o *serveOptions) { o.teacherServe, o.method = randomTinySpec, "rl" }, "--method combine or opd, not rl"},
		{"--teacher-serve without training", func(o *serveOptions) { o.teacherServe, o.method = randomTinySpec, "off" }, "--method combine or opd, not off"},
		{"--teacher-serve on a gateway", func(o *serveOptions) { o.teacherServe, o.noLearn = randomTinySpec, true }, "--no-learn"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := base
			tt.edit(&o)
			err := runServe(context.Background(), o)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("runServe = %v, want an error about %q", err, tt.want)
			}
		})
	}
}

// With --model random:tiny, serve writes a tiny Qwen3 with the real
// tokenizer under --data once and serves it; later starts reuse it.
func TestDefaultModel(t *testing.T) {
	data := t.TempDir()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	dir, err := defaultModel(data, log)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Fatalf("default model lacks %s: %v", name, err)
		}
	}
	eng, err := openEngine(serveOptions{data: data, model: randomTinySpec}, log)
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := eng.(interface{ Close() error }); ok {
		defer c.Close()
	}
	if info := eng.Info(); info.Engine != "native" || info.Family != "qwen3" {
		t.Fatalf("default engine %+v, want native qwen3", info)
	}
	again, err := defaultModel(data, log)
	if err != nil || again != dir {
		t.Fatalf("second defaultModel = %q, %v; want %q reused", again, err, dir)
	}
}

// buildClawrl builds this command into a temporary directory.
func buildClawrl(t *testing.T) string {
	t.Helper()
	exe := filepath.Join(t.TempDir(), "clawrl")
	out, err := exec.Command("go", "build", "-o", exe, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return exe
}

type serveProcess struct {
	cmd  *exec.Cmd
	addr string
	mu   sync.Mutex
	log  bytes.Buffer
	done chan error
}

// startServe runs `clawrl serve` on the scripted test engine and waits for
// it to listen.
func startServe(t *testing.T, exe, dataDir string) *serveProcess {
	t.Helper()
	return startServeWith(t, exe, dataDir, "scripted", 60*time.Second)
}

// startServeWith runs `clawrl serve` with testEngineEnv set to engine ("" =
// the native engine) and waits up to wait for it to listen.
func startServeWith(t *testing.T, exe, dataDir, engine string, wait time.Duration, args ...string) *serveProcess {
	t.Helper()
	p := &serveProcess{done: make(chan error, 1)}
	p.cmd = exec.Command(exe, append([]string{"serve", "--addr", "127.0.0.1:0", "--data", dataDir}, args...)...)
	p.cmd.Env = append(os.Environ(), testEngineEnv+"="+engine)
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.log.WriteString(line + "\n")
			p.mu.Unlock()
			if strings.Contains(line, "msg=listening") {
				for _, f := range strings.Fields(line) {
					if a, ok := strings.CutPrefix(f, "addr="); ok {
						addr <- a
					}
				}
			}
		}
		p.done <- p.cmd.Wait()
	}()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	select {
	case p.addr = <-addr:
		return p
	case err := <-p.done:
		t.Fatalf("clawrl serve exited before listening: %v\n%s", err, p.logText())
	case <-time.After(wait):
		t.Fatalf("clawrl serve did not listen within %v\n%s", wait, p.logText())
	}
	return nil
}

func (p *serveProcess) logText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// completeOnce runs one completion and returns its id once the whole
// response has arrived ([DONE] when streaming).
func completeOnce(ctx context.Context, client *http.Client, addr string, body map[string]any, sessionID string) (string, error) {
	raw, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/v1/chat/completions", bytes.NewReader(raw))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Session-Id", sessionID)
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("status %d: %s", resp.StatusCode, data)
	}
	if body["stream"] == true {
		if !bytes.HasSuffix(data, []byte("data: [DONE]\n\n")) {
			return "", fmt.Errorf("stream ended without [DONE]")
		}
		var c struct {
			ID string `json:"id"`
		}
		first, _, _ := bytes.Cut(bytes.TrimPrefix(data, []byte("data: ")), []byte("\n"))
		if err := json.Unmarshal(first, &c); err != nil {
			return "", err
		}
		return c.ID, nil
	}
	var c struct {
		ID string `json:"id"`
	}
	return c.ID, json.Unmarshal(data, &c)
}

// kill -9 during a load run, then restart: every turn whose response
// completed is in the store, and the store opens cleanly.
func TestServeKill9DuringLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the clawrl binary")
	}
	exe := buildClawrl(t)
	data := t.TempDir()
	p := startServe(t, exe, data)

	ctx, stopLoad := context.WithCancel(context.Background())
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	var mu sync.Mutex
	var completed []string
	var wg sync.WaitGroup
	for w := range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var history []any
			for r := 0; ctx.Err() == nil; r++ {
				history = append(history, map[string]any{"role": "user", "content": fmt.Sprintf("[[slow:1]] worker %d request %d", w, r)})
				body := map[string]any{"messages": history, "stream": r%2 == 0}
				id, err := completeOnce(ctx, client, p.addr, body, fmt.Sprintf("kill-%d", w))
				if err != nil {
					return // the server is gone
				}
				mu.Lock()
				completed = append(completed, id)
				mu.Unlock()
				history = append(history, map[string]any{"role": "assistant", "content": fmt.Sprintf("ok: worker %d request %d", w, r)})
			}
		}()
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		time.Sleep(50 * time.Millisecond)
		mu.Lock()
		n := len(completed)
		mu.Unlock()
		if n >= 200 || time.Now().After(deadline) {
			break
		}
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.done
	stopLoad()
	wg.Wait()
	mu.Lock()
	ids := append([]string(nil), completed...)
	mu.Unlock()
	if len(ids) < 20 {
		t.Fatalf("only %d requests completed before the kill\n%s", len(ids), p.logText())
	}

	// Restart on the same data directory: it must open and serve.
	p2 := startServe(t, exe, data)
	if _, err := completeOnce(context.Background(), client, p2.addr, map[string]any{"messages": []any{map[string]any{"role": "user", "content": "after restart"}}}, "after"); err != nil {
		t.Fatalf("request after restart: %v\n%s", err, p2.logText())
	}
	if err := p2.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-p2.done; err != nil {
		t.Fatalf("clawrl serve after SIGTERM: %v\n%s", err, p2.logText())
	}

	st, err := sqlite.OpenDir(context.Background(), data, sqlite.Options{})
	if err != nil {
		t.Fatalf("reopen the store: %v", err)
	}
	defer st.Close()
	if err := st.IntegrityCheck(context.Background()); err != nil {
		t.Fatal(err)
	}
	missing := 0
	for _, id := range ids {
		if _, err := st.Turn(context.Background(), id); err != nil {
			missing++
			t.Errorf("completed turn %s is not in the store: %v", id, err)
		}
	}
	t.Logf("%d completed responses before kill -9, %d missing from the store", len(ids), missing)
}
