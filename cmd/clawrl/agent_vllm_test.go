package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawrl/clawrl/agent"
	"github.com/clawrl/clawrl/engine/vllm/vllmtest"
	"github.com/clawrl/clawrl/env"
	"github.com/clawrl/clawrl/store"
	"github.com/clawrl/clawrl/store/sqlite"
)

// `clawrl agent train|eval --engine vllm:…` play their episodes on a real
// vLLM server (a tiny checkpoint): the recorded steps are vLLM's, a version
// is trained and published to vLLM, and eval plays that version there.
func TestAgentOnVLLM(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real vLLM")
	}
	needBwrap(t)
	python := vllmtest.Python(t)
	ckpt := filepath.Join(t.TempDir(), "ckpt")
	vllmtest.WriteCheckpoint(t, ckpt)
	srv := vllmtest.Start(t, python, ckpt)
	exe := buildClawrl(t)
	data := t.TempDir()
	// Four training and four held-out tasks keep vLLM's part short.
	all, err := env.ReadTasks(filepath.Join("..", "..", "tasks", "toolcall.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	few := append(env.FilterSplit(all, env.SplitTrain)[:4:4], env.FilterSplit(all, env.SplitHeldOut)[:4]...)
	tasks := filepath.Join(t.TempDir(), "tasks.jsonl")
	var buf bytes.Buffer
	if err := env.WriteTasks(&buf, few); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tasks, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(exe, "agent", "train", "--env", "toolcall", "--tasks", tasks, "--engine", "vllm:"+srv.URL,
		"--model", ckpt, "--data", data, "--samples", "2", "--batch-size", "4", "--versions", "1", "--max-tokens", "8",
		"--max-steps", "2", "--concurrency", "4", "--lora-rank", "4", "--log-level", "warn").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "policy version 1") {
		t.Fatalf("agent train on vLLM: %v\n%s\n%s", err, out, srv.Log())
	}
	st, err := sqlite.OpenDir(context.Background(), data, sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	turns, err := st.ListTurns(context.Background(), store.TurnFilter{})
	st.Close()
	if err != nil || len(turns) == 0 {
		t.Fatalf("%d turns: %v", len(turns), err)
	}
	for _, tu := range turns {
		if tu.Engine != "vllm" || len(tu.BehaviourLogprobs) != len(tu.ResponseIDs) {
			t.Fatalf("turn %s: engine %q, %d ids, %d logprobs", tu.ID, tu.Engine, len(tu.ResponseIDs), len(tu.BehaviourLogprobs))
		}
	}
	cmd := exec.Command(exe, "agent", "eval", "--env", "toolcall", "--tasks", tasks, "--engine", "vllm:"+srv.URL,
		"--model", ckpt, "--data", data, "--adapter", filepath.Join(data, "versions", "v000001"), "--max-tokens", "8",
		"--max-steps", "1", "--concurrency", "4", "--json", "--log-level", "warn")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	eval, err := cmd.Output()
	if err != nil {
		t.Fatalf("agent eval on vLLM: %v\n%s\n%s\nvLLM:\n%s", err, eval, stderr.String(), srv.Log())
	}
	var res agent.EvalResult
	if err := json.Unmarshal(eval, &res); err != nil || res.Episodes != 4 || res.Failed != 0 {
		t.Fatalf("eval %+v %v: %s", res, err, eval)
	}
}
