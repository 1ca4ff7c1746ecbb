// Package vllmtest runs real vLLM servers for tests: the CPU build from the
// cached venv scripts/vllm-venv installs (REFERENCE.md §4), on a checkpoint
// the test writes. Without the venv the tests skip, or fail when
// CLAWRL_REQUIRE_REFS=1 (scripts/test), so CI really runs them.
package vllmtest

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/clawrl/clawrl/model"
	"github.com/clawrl/clawrl/safetensors"
	"github.com/clawrl/clawrl/tokenizer/vocab"
)

// Python returns the venv's python, skipping tb (failing it under
// CLAWRL_REQUIRE_REFS=1) when vLLM is not installed.
func Python(tb testing.TB) string {
	tb.Helper()
	if os.Getenv("CLAWRL_VLLM_TESTS") == "0" {
		// scripts/test's second (cgo) pass: the engine is the same HTTP
		// client there, and real vLLM costs minutes.
		tb.Skip("vLLM tests turned off (CLAWRL_VLLM_TESTS=0)")
	}
	venv := os.Getenv("CLAWRL_VLLM_VENV")
	if venv == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			tb.Fatal(err)
		}
		venv = filepath.Join(cache, "clawrl", "vllm-venv")
	}
	if _, err := os.Stat(filepath.Join(venv, ".done")); err != nil {
		msg := fmt.Sprintf("vLLM not installed at %s (run scripts/vllm-venv)", venv)
		if os.Getenv("CLAWRL_REQUIRE_REFS") == "1" {
			tb.Fatal(msg + " (CLAWRL_REQUIRE_REFS=1)")
		}
		tb.Skip(msg)
	}
	return filepath.Join(venv, "bin", "python")
}

// WriteCheckpoint writes a random tiny Qwen3 with the real Qwen3 tokenizer
// to dir, shaped for vLLM's CPU attention (head_dim 32; the native tests'
// tiny head_dim 16 is below what its kernels take).
func WriteCheckpoint(tb testing.TB, dir string) {
	tb.Helper()
	cfg, err := model.NewConfig(model.Qwen3, model.SizeTiny)
	if err != nil {
		tb.Fatal(err)
	}
	cfg.HiddenSize, cfg.IntermediateSize, cfg.NumAttentionHeads, cfg.NumKeyValueHeads, cfg.HeadDim = 128, 256, 4, 2, 32
	if err := model.WriteRandom(dir, cfg, 7, safetensors.F32); err != nil {
		tb.Fatal(err)
	}
	if err := vocab.Write(string(model.Qwen3), dir); err != nil {
		tb.Fatal(err)
	}
}

// Server is a running vLLM OpenAI server.
type Server struct {
	URL    string
	cmd    *exec.Cmd
	mu     sync.Mutex
	log    bytes.Buffer
	done   chan struct{}
	killed bool
}

// Start runs vLLM on modelDir and waits (up to 10 minutes: the CPU build
// compiles kernels on first use) until /v1/models answers. It is killed
// when the test ends.
func Start(tb testing.TB, python, modelDir string) *Server {
	tb.Helper()
	s, err := StartServer(python, modelDir)
	if s != nil {
		tb.Cleanup(s.Kill)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// StartServer is Start for a server that outlives one test (a package's
// TestMain kills it): the caller kills it.
func StartServer(python, modelDir string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &Server{URL: "http://127.0.0.1:" + strconv.Itoa(port), done: make(chan struct{})}
	s.cmd = exec.Command(python, "-m", "vllm.entrypoints.openai.api_server", "--model", modelDir,
		"--dtype", "float32", "--max-model-len", "2048", "--enable-lora", "--max-lora-rank", "16", "--max-loras", "4",
		"--host", "127.0.0.1", "--port", strconv.Itoa(port))
	s.cmd.Env = append(os.Environ(), "VLLM_ALLOW_RUNTIME_LORA_UPDATING=True", "VLLM_CPU_KVCACHE_SPACE=1",
		"VLLM_CPU_OMP_THREADS_BIND=nobind", "VLLM_LOGGING_LEVEL=WARNING")
	// Its own process group, so Kill takes vLLM's engine core child too.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := s.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	s.cmd.Stdout = s.cmd.Stderr
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			s.mu.Lock()
			s.log.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
		}
		s.cmd.Wait() //nolint:errcheck // the log says why
		close(s.done)
	}()
	deadline := time.Now().Add(10 * time.Minute)
	for {
		resp, err := http.Get(s.URL + "/v1/models")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		select {
		case <-s.done:
			return s, fmt.Errorf("vLLM exited before serving:\n%s", s.Log())
		case <-time.After(time.Second):
		}
		if time.Now().After(deadline) {
			return s, fmt.Errorf("vLLM did not serve within 10 minutes:\n%s", s.Log())
		}
	}
}

// Kill ends the server and its children with SIGKILL.
func (s *Server) Kill() {
	if s.cmd.Process == nil || s.killed {
		return
	}
	s.killed = true
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL) //nolint:errcheck // already gone is fine
	<-s.done
}

// Log is what the server printed.
func (s *Server) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
