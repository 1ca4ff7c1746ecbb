package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Bwrap is the bubblewrap Provider.
type Bwrap struct {
	Limits Limits
	// TempDir holds the episodes' working folders; default os.TempDir().
	// Run as root, every folder above it must be searchable by others
	// (each sandbox runs as a uid of its own).
	TempDir string
	// Binds are extra host paths bound read-only at the same place inside
	// (a Python installed outside /usr, say).
	Binds []string

	bwrap, prlimit string
}

// NewBwrap finds bwrap and prlimit on PATH and checks that a sandbox starts
// here (user namespaces may be restricted), so a misconfigured machine fails
// at start with the reason, not in the middle of a run.
func NewBwrap(limits Limits) (*Bwrap, error) {
	b := &Bwrap{Limits: limits.WithDefaults()}
	var err error
	if b.bwrap, err = exec.LookPath("bwrap"); err != nil {
		return nil, fmt.Errorf("sandbox: bubblewrap not found (Debian: apt-get install bubblewrap): %w", err)
	}
	if b.prlimit, err = exec.LookPath("prlimit"); err != nil {
		return nil, fmt.Errorf("sandbox: prlimit (util-linux) not found: %w", err)
	}
	sb, err := b.New(context.Background())
	if err != nil {
		return nil, err
	}
	defer sb.Close()
	res, err := sb.Run(context.Background(), Command{Args: []string{"true"}})
	if err != nil {
		return nil, err
	}
	if res.ExitCode != 0 || res.Cut != "" {
		return nil, fmt.Errorf("sandbox: bwrap cannot start a sandbox here (exit %d%s): %s — user namespaces may be restricted; run as root or install bwrap setuid",
			res.ExitCode, cutSuffix(res.Cut), strings.TrimSpace(res.Output))
	}
	return b, nil
}

func cutSuffix(cut string) string {
	if cut == "" {
		return ""
	}
	return ", " + cut
}

// Name implements Provider.
func (b *Bwrap) Name() string { return "bwrap" }

// New implements Provider.
func (b *Bwrap) New(context.Context) (Sandbox, error) {
	dir, err := os.MkdirTemp(b.TempDir, "clawrl-sandbox-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: working folder: %w", err)
	}
	work := dir + "/work"
	// The sandbox's uid must reach work through dir (MkdirTemp's is 0700).
	if err := os.Chmod(dir, 0o711); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("sandbox: working folder: %w", err)
	}
	if err := os.Mkdir(work, 0o755); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("sandbox: working folder: %w", err)
	}
	sb := &bwrapSandbox{p: b, root: dir, work: work, uid: -1}
	if os.Geteuid() == 0 {
		// As root, give each sandbox a host uid of its own: RLIMIT_NPROC
		// never applies to processes whose real uid is root (the uid the
		// sandbox's user namespace maps to when bwrap runs as root), and a
		// uid shared by all sandboxes would share one process count.
		sb.uid = sandboxUIDBase + rand.IntN(sandboxUIDRange)
		if err := os.Chown(work, sb.uid, sb.uid); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("sandbox: working folder: %w", err)
		}
	}
	return sb, nil
}

// Host uids for sandboxes run by root: an unused range above the ones
// distributions hand out (Debian's subordinate ids start at 100000 and
// take 65536 per user).
const (
	sandboxUIDBase  = 3_000_000
	sandboxUIDRange = 1_000_000
)

type bwrapSandbox struct {
	p          *Bwrap
	root, work string
	uid        int // host uid the sandbox runs as; -1: this process's
	mu         sync.Mutex
	closed     bool
}

func (s *bwrapSandbox) WriteFile(rel string, data []byte, mode os.FileMode) error {
	return writeOwned(s.work, rel, data, mode, s.uid)
}

func (s *bwrapSandbox) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	// A command may have left read-only folders behind; make them writable
	// so the folder can go.
	_ = exec.Command("chmod", "-R", "u+rwX", s.root).Run()
	if err := os.RemoveAll(s.root); err != nil {
		return fmt.Errorf("sandbox: remove %s: %w", s.root, err)
	}
	return nil
}

// args is the prlimit + bwrap command line for c.
func (s *bwrapSandbox) args(c Command) []string {
	l := s.p.Limits
	cpu := int(l.CPUTime.Seconds() + 0.999)
	a := []string{s.p.prlimit,
		// Soft CPU limit sends SIGXCPU (so the cut is recognisable); the
		// hard limit a second later is SIGKILL.
		"--cpu=" + strconv.Itoa(cpu) + ":" + strconv.Itoa(cpu+1),
		"--as=" + strconv.FormatInt(l.Memory, 10),
		"--nproc=" + strconv.Itoa(l.Processes),
		"--fsize=" + strconv.FormatInt(l.FileSize, 10),
		"--nofile=" + strconv.Itoa(l.OpenFiles),
		"--core=0",
		"--", s.p.bwrap,
		"--unshare-all", "--unshare-user", "--uid", "1000", "--gid", "1000",
		"--hostname", "sandbox",
		"--die-with-parent", "--new-session",
		"--ro-bind", "/usr", "/usr",
		"--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/sbin", "/sbin",
		"--proc", "/proc", "--dev", "/dev",
		"--size", strconv.FormatInt(l.TmpSize, 10), "--tmpfs", "/tmp",
		"--bind", s.work, "/work", "--remount-ro", "/", "--chdir", "/work",
		"--clearenv", "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin", "--setenv", "HOME", "/work",
		"--setenv", "LANG", "C.UTF-8", "--setenv", "PYTHONDONTWRITEBYTECODE", "1",
	}
	for _, p := range s.p.Binds {
		a = append(a, "--ro-bind", p, p)
	}
	for _, kv := range c.Env {
		k, v, ok := strings.Cut(kv, "=")
		if ok && k != "" {
			a = append(a, "--setenv", k, v)
		}
	}
	a = append(a, "--")
	return append(a, c.Args...)
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

func (s *bwrapSandbox) Run(ctx context.Context, c Command) (Result, error) {
	if len(c.Args) == 0 {
		return Result{}, errors.New("sandbox: empty command")
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return Result{}, errors.New("sandbox: closed")
	}
	l := s.p.Limits
	argv := s.args(c)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = strings.NewReader(c.Stdin)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if s.uid >= 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(s.uid), Gid: uint32(s.uid), NoSetGroups: true}
	}
	// Nothing inside can outlive bwrap, so the pipes close when it dies;
	// WaitDelay is a backstop for a stuck copy.
	cmd.WaitDelay = l.KillGrace + time.Second

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
			if cmd.Process == nil {
				return
			}
			pg := -cmd.Process.Pid
			_ = syscall.Kill(pg, syscall.SIGTERM)
			go func() {
				time.Sleep(l.KillGrace)
				_ = syscall.Kill(pg, syscall.SIGKILL)
			}()
		})
	}
	out := &cappedOutput{max: l.Output, over: func() { stop(CutOutput) }}
	cmd.Stdout, cmd.Stderr = out, out

	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Result{}, fmt.Errorf("sandbox: start bwrap: %w", err)
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
	if res.Cut == "" {
		switch {
		case res.ExitCode == 128+int(syscall.SIGXCPU) || res.ExitCode == 128+int(syscall.SIGKILL) && usedCPU(cmd.ProcessState, l.CPUTime):
			res.Cut = CutCPU
		case res.ExitCode != 0 && (strings.Contains(res.Output, "MemoryError") || strings.Contains(res.Output, "Cannot allocate memory") || strings.Contains(res.Output, "out of memory")):
			res.Cut = CutMemory
		}
	}
	return res, nil
}

// usedCPU: the sandbox (bwrap's rusage includes the processes it reaped, all
// of them as the sandbox's PID 1) spent about its CPU limit, so SIGXCPU or
// SIGKILL came from the kernel's RLIMIT_CPU.
func usedCPU(ps *os.ProcessState, limit time.Duration) bool {
	return ps != nil && ps.UserTime()+ps.SystemTime() >= limit*9/10
}
