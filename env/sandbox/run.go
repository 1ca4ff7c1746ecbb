package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// supervise runs cmd (already built, not started) under l's wall-clock and
// output limits and ctx: the first of them to end the command records its
// reason as the Result's Cut and calls kill once. kill must end everything
// the command started. The Result carries the output (capped), the exit
// code (a signal N as 128+N) and the time until Wait returned; what is a
// CPU or memory cut-off, the backend decides (see exitCut), since each sees
// the kernel's limits differently. Both backends run their commands
// through it, so a cut-off means the same thing on either.
func supervise(ctx context.Context, cmd *exec.Cmd, l Limits, what string, kill func()) (Result, error) {
	var (
		cutMu sync.Mutex
		cut   string
		once  sync.Once
	)
	stop := func(reason string) {
		once.Do(func() {
			cutMu.Lock()
			cut = reason
			cutMu.Unlock()
			kill()
		})
	}
	out := &cappedOutput{max: l.Output, over: func() { stop(CutOutput) }}
	cmd.Stdout, cmd.Stderr = out, out

	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Result{}, fmt.Errorf("sandbox: start %s: %w", what, err)
	}
	timer := time.AfterFunc(l.WallTime, func() { stop(CutWallTime) })
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			stop(CutKilled + ": " + context.Cause(ctx).Error())
		case <-done:
		}
	}()
	werr := cmd.Wait()
	close(done)
	timer.Stop()
	res := Result{Elapsed: time.Since(start)}
	out.mu.Lock()
	res.Output = out.buf.String()
	out.mu.Unlock()
	cutMu.Lock()
	res.Cut = cut
	cutMu.Unlock()
	var exitErr *exec.ExitError
	switch {
	case werr == nil:
	case errors.As(werr, &exitErr):
		res.ExitCode = exitErr.ExitCode()
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.ExitCode = 128 + int(ws.Signal())
		}
	case errors.Is(werr, exec.ErrWaitDelay):
		res.ExitCode = cmd.ProcessState.ExitCode()
	default:
		return res, fmt.Errorf("sandbox: wait: %w", werr)
	}
	return res, nil
}

// exitCut names the cut-off a command that was not cut off by supervise
// met inside the sandbox: SIGXCPU (or a SIGKILL the backend attributes to
// the CPU limit, cpuKill) is the CPU limit; a failure that says it ran out
// of memory is the memory limit.
func exitCut(res *Result, cpuKill bool) {
	if res.Cut != "" {
		return
	}
	switch {
	case res.ExitCode == 128+int(syscall.SIGXCPU) || res.ExitCode == 128+int(syscall.SIGKILL) && cpuKill:
		res.Cut = CutCPU
	case res.ExitCode != 0 && (strings.Contains(res.Output, "MemoryError") || strings.Contains(res.Output, "Cannot allocate memory") || strings.Contains(res.Output, "out of memory")):
		res.Cut = CutMemory
	}
}

// cappedOutput keeps the first max bytes and calls over once when more come.
type cappedOutput struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	max  int
	over func()
	hit  bool
}

func (w *cappedOutput) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	room := w.max - w.buf.Len()
	if len(p) <= room {
		w.buf.Write(p)
		return len(p), nil
	}
	w.buf.Write(p[:room])
	if !w.hit {
		// More output than the cap: cut the command off.
		w.hit = true
		go w.over()
	}
	return len(p), nil
}
