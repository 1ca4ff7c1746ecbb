package main

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawrl/clawrl/engine/vllm/vllmtest"
	"github.com/clawrl/clawrl/store/sqlite"
)

// TestServeWithTorchTrainer: `clawrl serve --train-backend torch:PYTHON`
// trains a rated turn into version 1 in the torch + PEFT worker, and the
// native engine serves that adapter (the worker writes clawrl's checkpoint
// layout). CLAWRL_TORCH_PYTHON names the interpreter (scripts/torch-venv).
func TestServeWithTorchTrainer(t *testing.T) {
	py := os.Getenv("CLAWRL_TORCH_PYTHON")
	if py == "" || exec.Command(py, "-c", "import torch, transformers, peft").Run() != nil {
		if os.Getenv("CLAWRL_REQUIRE_REFS") == "1" {
			t.Fatalf("CLAWRL_TORCH_PYTHON %q cannot import torch, transformers, peft (scripts/torch-venv makes one)", py)
		}
		t.Skipf("CLAWRL_TORCH_PYTHON %q cannot import torch, transformers, peft (scripts/torch-venv makes one)", py)
	}
	ckpt := filepath.Join(t.TempDir(), "ckpt")
	vllmtest.WriteCheckpoint(t, ckpt)
	exe := buildClawrl(t)
	data := t.TempDir()
	p := startServeWith(t, exe, data, "", 2*time.Minute, "--model", ckpt, "--train-backend", "torch:"+py,
		"--method", "rl", "--batch-size", "1", "--lora-rank", "4", "--judge-votes", "1", "--judge-max-tokens", "4",
		"--max-tokens", "8", "--no-retention-gate")
	id, err := completeOnce(context.Background(), http.DefaultClient, p.addr,
		map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hello"}}, "temperature": 0}, "torch-1")
	if err != nil {
		t.Fatalf("chat: %v\n%s", err, p.logText())
	}
	postJSON(t, "http://"+p.addr+"/v1/feedback", map[string]any{"id": id, "rating": 1}, nil)
	st, err := sqlite.OpenDir(context.Background(), data, sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rated := time.Now()
	for {
		v, err := st.LatestVersion(context.Background())
		if err == nil && v.Version >= 1 {
			if _, err := os.Stat(filepath.Join(v.Dir, "optimizer.safetensors")); err != nil {
				t.Errorf("version %d folder: %v", v.Version, err)
			}
			break
		}
		if time.Since(rated) > 4*time.Minute {
			t.Fatalf("no version four minutes after the rating\n%s", p.logText())
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("rating → version 1 trained by torch: %s", time.Since(rated).Round(time.Millisecond))
	if !strings.Contains(p.logText(), "torch trainer ready") {
		t.Errorf("the torch worker did not start:\n%s", p.logText())
	}
	deadline := time.Now().Add(time.Minute)
	for {
		id, err := completeOnce(context.Background(), http.DefaultClient, p.addr,
			map[string]any{"messages": []any{map[string]any{"role": "user", "content": "and now?"}}}, "torch-2")
		if err != nil {
			t.Fatal(err)
		}
		turn, err := st.Turn(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if turn.PolicyVersion == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the native engine does not serve the torch-trained version 1\n%s", p.logText())
		}
		time.Sleep(200 * time.Millisecond)
	}
}
