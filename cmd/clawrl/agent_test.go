package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawrl/clawrl/agent"
	"github.com/clawrl/clawrl/env"
	"github.com/clawrl/clawrl/env/sandbox"
	"github.com/clawrl/clawrl/store"
	"github.com/clawrl/clawrl/store/sqlite"
)

// More tasks than a generator has prompts is an error naming how many it
// has, not a hang; a held-out set that fits the rest of the prompts works.
func TestGenerateTasksBeyondThePrompts(t *testing.T) {
	if _, err := generateTasks("terminal", 5000, 10, 1); err == nil || !strings.Contains(err.Error(), "distinct prompts") {
		t.Fatalf("5000 terminal training tasks: err %v", err)
	}
	tasks, err := generateTasks("terminal", 200, 250, 1)
	if err != nil {
		t.Fatal(err)
	}
	if held := env.FilterSplit(tasks, env.SplitHeldOut); len(held) != 250 {
		t.Fatalf("%d held-out tasks, want 250", len(held))
	}
}

// The shipped task files are what `clawrl env tasks` generates.
func TestShippedTaskFiles(t *testing.T) {
	for _, tc := range []struct {
		kind           string
		train, heldout int
	}{{"toolcall", 400, 100}, {"terminal", 200, 50}} {
		tasks, err := generateTasks(tc.kind, tc.train, tc.heldout, 1)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := env.WriteTasks(&buf, tasks); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join("..", "..", "tasks", tc.kind+".jsonl")
		shipped, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(shipped, buf.Bytes()) {
			t.Errorf("%s differs from `clawrl env tasks --env %s --train %d --heldout %d --seed 1`", file, tc.kind, tc.train, tc.heldout)
		}
		parsed, err := env.ReadTasks(file)
		if err != nil {
			t.Fatal(err)
		}
		train, held := env.FilterSplit(parsed, env.SplitTrain), env.FilterSplit(parsed, env.SplitHeldOut)
		if len(train) != tc.train || len(held) != tc.heldout {
			t.Fatalf("%s: %d train, %d held out", file, len(train), len(held))
		}
		seen := map[string]bool{}
		for _, x := range train {
			seen[x.Prompt] = true
		}
		for _, x := range held {
			if seen[x.Prompt] {
				t.Errorf("held-out task %s repeats a training prompt", x.ID)
			}
		}
	}
}

func needBwrap(t *testing.T) {
	t.Helper()
	if _, err := sandbox.NewBwrap(sandbox.Limits{}); err != nil {
		if os.Getenv("CLAWRL_REQUIRE_REFS") == "1" {
			t.Fatalf("bubblewrap required: %v", err)
		}
		t.Skipf("no bubblewrap sandbox: %v", err)
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

type proc struct {
	cmd *exec.Cmd
	out *bytes.Buffer
}

func start(t *testing.T, exe string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(exe, args...), out: &bytes.Buffer{}}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			p.cmd.Wait()
		}
	})
	return p
}

func (p *proc) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.cmd.Wait()
}

// startEnvServer runs `clawrl env serve` and waits for it to answer.
func startEnvServer(t *testing.T, exe, addr string) *proc {
	t.Helper()
	p := start(t, exe, "env", "serve", "--addr", addr, "--kinds", "toolcall", "--lease", "20s")
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("env serve never answered: %s", p.out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func envLoad(t *testing.T, addr string) env.Load {
	t.Helper()
	c, _ := env.NewClient("http://"+addr, "")
	l, err := c.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func trainArgs(data, envAddr string, versions int) []string {
	return []string{"agent", "train", "--env", "toolcall", "--tasks", filepath.Join("..", "..", "tasks", "toolcall.jsonl"),
		"--model", randomTinySpec, "--data", data, "--samples", "2", "--batch-size", "4", "--versions", fmt.Sprint(versions), "--max-tokens", "12",
		"--max-steps", "2", "--concurrency", "4", "--lora-rank", "4", "--env-url", "http://" + envAddr, "--log-level", "warn"}
}

// A quick `clawrl agent train` on the tiny model completes a version, with
// an environment server on another port taking part, and `clawrl status`
// shows the run.
func TestAgentTrainCompletesAVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model")
	}
	needBwrap(t)
	exe := buildClawrl(t)
	envAddr := freeAddr(t)
	startEnvServer(t, exe, envAddr)
	data := t.TempDir()
	out, err := exec.Command(exe, trainArgs(data, envAddr, 1)...).CombinedOutput()
	if err != nil {
		t.Fatalf("agent train: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "policy version 1") {
		t.Fatalf("agent train output: %s", out)
	}
	if l := envLoad(t, envAddr); l.Created == 0 || l.Running != 0 {
		t.Errorf("the environment server ran %d episodes, %d still open", l.Created, l.Running)
	}
	status, err := exec.Command(exe, "status", "--data", data).CombinedOutput()
	if err != nil || !strings.Contains(string(status), "agent") || !strings.Contains(string(status), "success rate") {
		t.Fatalf("status: %v\n%s", err, status)
	}
	eval, err := exec.Command(exe, "agent", "eval", "--env", "toolcall", "--tasks", filepath.Join("..", "..", "tasks", "toolcall.jsonl"),
		"--model", randomTinySpec, "--data", data, "--adapter", filepath.Join(data, "versions", "v000001"), "--max-tokens", "8", "--max-steps", "1", "--json", "--log-level", "warn").Output()
	if err != nil {
		t.Fatalf("agent eval: %v\n%s", err, eval)
	}
	var res agent.EvalResult
	if err := json.Unmarshal(eval, &res); err != nil || res.Episodes != 100 {
		t.Fatalf("eval %+v %v: %s", res, err, eval)
	}
}

// The warm start: `agent demos` writes the training tasks' solutions as a
// pre-tokenised SFT set, `train sft` trains an adapter on it, and `agent
// train --init-adapter` starts RL from that adapter.
func TestAgentWarmStart(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model")
	}
	needBwrap(t)
	exe := buildClawrl(t)
	dir := t.TempDir()
	data, demos, sft := filepath.Join(dir, "data"), filepath.Join(dir, "demos.jsonl"), filepath.Join(dir, "sft")
	tasks := filepath.Join("..", "..", "tasks", "toolcall.jsonl")
	out, err := exec.Command(exe, "agent", "demos", "--env", "toolcall", "--tasks", tasks, "--model", randomTinySpec,
		"--data", data, "--out", demos, "--limit", "4", "--log-level", "warn").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "4 of 4 training tasks demonstrated") {
		t.Fatalf("agent demos: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(demos)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(lines) != 8 {
		t.Fatalf("%d demonstration records, want 2 per task", len(lines))
	}
	for _, l := range lines {
		var rec demoLine
		if err := json.Unmarshal([]byte(l), &rec); err != nil || len(rec.PromptIDs) == 0 || len(rec.CompletionIDs) == 0 {
			t.Fatalf("record %s: %v", l, err)
		}
		if !strings.Contains(rec.Task, "-train-") {
			t.Errorf("a demonstration of %s, not a training task", rec.Task)
		}
	}
	out, err = exec.Command(exe, "train", "sft", "--model", filepath.Join(data, "models", "tiny-qwen3"), "--data", demos,
		"--out", sft, "--rank", "4", "--alpha", "8", "--batch", "8").CombinedOutput()
	if err != nil {
		t.Fatalf("train sft: %v\n%s", err, out)
	}
	args := []string{"agent", "train", "--env", "toolcall", "--tasks", tasks, "--model", randomTinySpec, "--data", data,
		"--samples", "2", "--batch-size", "4", "--versions", "1", "--max-tokens", "12", "--max-steps", "2", "--concurrency", "4",
		"--init-adapter", sft, "--log-level", "warn"}
	out, err = exec.Command(exe, args...).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "policy version 1") {
		t.Fatalf("agent train --init-adapter: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(data, "versions", "v000001", "adapter_model.safetensors")); err != nil {
		t.Fatal(err)
	}
	bad := slices.Clone(args)
	bad[slices.Index(bad, sft)] = filepath.Join(dir, "missing")
	if out, err := exec.Command(exe, bad...).CombinedOutput(); err == nil || !strings.Contains(string(out), "--init-adapter") {
		t.Errorf("a missing --init-adapter: %v\n%s", err, out)
	}
}

// `agent demos --env terminal` plays the terminal tasks' reference shell
// commands in the sandbox and writes the shell call and the closing reply
// of each as a record.
func TestAgentDemosTerminal(t *testing.T) {
	needBwrap(t)
	exe := buildClawrl(t)
	dir := t.TempDir()
	demos := filepath.Join(dir, "demos.jsonl")
	out, err := exec.Command(exe, "agent", "demos", "--env", "terminal", "--tasks", filepath.Join("..", "..", "tasks", "terminal.jsonl"),
		"--model", randomTinySpec, "--data", filepath.Join(dir, "data"), "--out", demos, "--limit", "7", "--log-level", "warn").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "7 of 7 training tasks demonstrated (0 failed") {
		t.Fatalf("agent demos: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(demos)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(lines) != 14 {
		t.Fatalf("%d demonstration records, want 2 per task", len(lines))
	}
	steps := map[int]int{}
	for _, l := range lines {
		var rec demoLine
		if err := json.Unmarshal([]byte(l), &rec); err != nil || len(rec.PromptIDs) == 0 || len(rec.CompletionIDs) == 0 {
			t.Fatalf("record %s: %v", l, err)
		}
		steps[rec.Step]++
	}
	if steps[0] != 7 || steps[1] != 7 {
		t.Errorf("records per step %v, want 7 shell calls and 7 replies", steps)
	}
}

// kill -9 of the trainer and of the environment server mid-run: every step
// recorded before the kill is still there afterwards, trained or dropped
// with its reason, and no sample is trained twice.
func TestAgentTrainSurvivesKills(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model")
	}
	needBwrap(t)
	exe := buildClawrl(t)
	envAddr := freeAddr(t)
	server := startEnvServer(t, exe, envAddr)
	data := t.TempDir()
	trainer := start(t, exe, trainArgs(data, envAddr, 50)...)

	// Wait for the first version, kill the environment server, bring a new
	// one up, let the trainer record more, then kill it.
	waitFor(t, "a first version", func() bool { return latestVersion(t, data) >= 1 }, trainer)
	server.kill(t)
	time.Sleep(300 * time.Millisecond)
	startEnvServer(t, exe, envAddr)
	before := turnCount(t, data)
	waitFor(t, "more steps", func() bool { return turnCount(t, data) > before+4 }, trainer)
	trainer.kill(t)

	st, err := sqlite.OpenDir(context.Background(), data, sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	recorded, err := st.ListTurns(context.Background(), store.TurnFilter{})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	v := latestVersion(t, data)

	// Resume to one more version.
	out, err := exec.Command(exe, trainArgs(data, envAddr, int(v)+1)...).CombinedOutput()
	if err != nil {
		t.Fatalf("resumed agent train: %v\n%s", err, out)
	}
	ctx := context.Background()
	st2, err := sqlite.OpenDir(ctx, data, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	// What the last run left between states is dropped at the next start.
	if _, err := agent.Recover(ctx, st2); err != nil {
		t.Fatal(err)
	}
	for _, tu := range recorded {
		now, err := st2.Turn(ctx, tu.ID)
		if err != nil {
			t.Fatalf("turn %s recorded before the kill is gone: %v", tu.ID, err)
		}
		switch now.State {
		case store.Trained, store.Ready:
		case store.Dropped:
			if now.DropReason == "" {
				t.Errorf("turn %s dropped without a reason", tu.ID)
			}
		default:
			t.Errorf("turn %s is %s after the restart", tu.ID, now.State)
		}
	}
	turns, _ := st2.ListTurns(ctx, store.TurnFilter{})
	trained, dropped := 0, map[string]int{}
	for _, tu := range turns {
		switch tu.State {
		case store.Trained:
			trained++
		case store.Dropped:
			dropped[strings.SplitN(tu.DropReason, ":", 3)[1]]++
		case store.Generated, store.Observed, store.Judged:
			t.Errorf("turn %s left %s", tu.ID, tu.State)
		}
	}
	versions, _ := st2.Versions(ctx, 0)
	inVersions := 0
	for i, ver := range versions {
		inVersions += ver.Metrics.Samples
		if ver.Version != int64(len(versions)-i) {
			t.Errorf("versions %v are not 1..n", versions)
		}
	}
	if inVersions != trained || trained == 0 {
		t.Fatalf("%d turns trained, the versions trained on %d samples", trained, inVersions)
	}
	t.Logf("%d turns, %d trained in %d versions, dropped by reason %v", len(turns), trained, len(versions), dropped)
}

func waitFor(t *testing.T, what string, cond func() bool, p *proc) {
	t.Helper()
	deadline := time.Now().Add(4 * time.Minute)
	for !cond() {
		if p.cmd.ProcessState != nil || time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %s", what, p.out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func latestVersion(t *testing.T, data string) int64 {
	t.Helper()
	st, err := sqlite.OpenDir(context.Background(), data, sqlite.Options{ReadOnly: true})
	if err != nil {
		return 0
	}
	defer st.Close()
	v, err := st.LatestVersion(context.Background())
	if err != nil {
		return 0
	}
	return v.Version
}

func turnCount(t *testing.T, data string) int {
	t.Helper()
	st, err := sqlite.OpenDir(context.Background(), data, sqlite.Options{ReadOnly: true})
	if err != nil {
		return 0
	}
	defer st.Close()
	s, err := st.Stats(context.Background())
	if err != nil {
		return 0
	}
	return s.Turns
}
