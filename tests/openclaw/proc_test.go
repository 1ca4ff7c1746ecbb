package openclaw

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Every process the test starts runs in its own process group, so stopping it
// also stops what it spawned (OpenClaw forks helpers), and every wait has a
// deadline.

const stopGrace = 10 * time.Second

// syncBuffer is a bytes.Buffer safe for a process writing while the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// tail returns the last n bytes of s, for failure messages.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// killGroup signals the process group led by pid.
func killGroup(pid int, sig syscall.Signal) {
	if pid > 0 {
		_ = syscall.Kill(-pid, sig)
	}
}

// command prepares a command in its own process group whose context
// cancellation kills the whole group.
func command(ctx context.Context, env []string, dir, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		killGroup(cmd.Process.Pid, syscall.SIGKILL)
		return nil
	}
	cmd.WaitDelay = stopGrace
	return cmd
}

// run runs a command to completion within timeout and returns its stdout and
// stderr. A timeout or a non-zero exit is an error that carries both tails.
func run(t *testing.T, timeout time.Duration, env []string, dir, name string, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var stdout, stderr syncBuffer
	cmd := command(ctx, env, dir, name, args...)
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	// Helpers a command leaves behind in its group go with it.
	if cmd.Process != nil {
		killGroup(cmd.Process.Pid, syscall.SIGKILL)
	}
	t.Logf("%s %s: %.1fs", shortName(name), strings.Join(firstArgs(args, 4), " "), time.Since(start).Seconds())
	if ctx.Err() != nil {
		err = fmt.Errorf("timed out after %s: %w", timeout, ctx.Err())
	}
	if err != nil {
		return stdout.String(), stderr.String(), fmt.Errorf("%s %s: %w\nstdout: %s\nstderr: %s", name, strings.Join(args, " "), err,
			tail(stdout.String(), 3000), tail(stderr.String(), 3000))
	}
	return stdout.String(), stderr.String(), nil
}

func shortName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

func firstArgs(args []string, n int) []string {
	if len(args) <= n {
		return args
	}
	return args[:n]
}

// daemon is a long-running process (clawrl serve, openclaw gateway run).
type daemon struct {
	name string
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
	err  error
}

// startDaemon starts a process that the test stops in its cleanup: SIGTERM to
// the group, then SIGKILL after a grace period.
func startDaemon(t *testing.T, env []string, dir, name string, args ...string) *daemon {
	t.Helper()
	d := &daemon{name: shortName(name), out: &syncBuffer{}, done: make(chan struct{})}
	d.cmd = command(context.Background(), env, dir, name, args...)
	d.cmd.Stdout = d.out
	d.cmd.Stderr = d.out
	if err := d.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		d.err = d.cmd.Wait()
		close(d.done)
	}()
	t.Cleanup(func() { d.stop(t) })
	return d
}

func (d *daemon) exited() bool {
	select {
	case <-d.done:
		return true
	default:
		return false
	}
}

func (d *daemon) stop(t *testing.T) {
	t.Helper()
	pid := d.cmd.Process.Pid
	if !d.exited() {
		killGroup(pid, syscall.SIGTERM)
		select {
		case <-d.done:
		case <-time.After(stopGrace):
			t.Logf("%s did not stop within %s of SIGTERM; killing it", d.name, stopGrace)
		}
	}
	// Children that outlived the leader are still in its group.
	killGroup(pid, syscall.SIGKILL)
	<-d.done
	if t.Failed() {
		t.Logf("%s output (tail):\n%s", d.name, tail(d.out.String(), 6000))
	}
}

// waitFor polls cond until it succeeds, the daemon dies, or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, d *daemon, cond func() error) {
	t.Helper()
	waitForEvery(t, timeout, 250*time.Millisecond, what, d, cond)
}

// waitForEvery is waitFor with a chosen polling interval.
func waitForEvery(t *testing.T, timeout, every time.Duration, what string, d *daemon, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last error
	for {
		if last = cond(); last == nil {
			return
		}
		if d != nil && d.exited() {
			t.Fatalf("waiting for %s: %s exited (%v):\n%s", what, d.name, d.err, tail(d.out.String(), 6000))
		}
		if time.Now().After(deadline) {
			out := ""
			if d != nil {
				out = tail(d.out.String(), 6000)
			}
			t.Fatalf("waiting for %s: not after %s: %v\n%s", what, timeout, last, out)
		}
		time.Sleep(every)
	}
}

// freePort asks the kernel for a free loopback port.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// withEnv returns os.Environ() with the given KEY=VALUE pairs set.
func withEnv(kv ...string) []string {
	env := os.Environ()
	for _, p := range kv {
		key := p[:strings.IndexByte(p, '=')+1]
		out := env[:0:0]
		for _, e := range env {
			if !strings.HasPrefix(e, key) {
				out = append(out, e)
			}
		}
		env = append(out, p)
	}
	return env
}

var errNotYet = errors.New("not yet")
