package sandbox

import (
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
	if err := runsACommand(context.Background(), b, " — user namespaces may be restricted; run as root or install bwrap setuid"); err != nil {
		return nil, err
	}
	return b, nil
}

// runsACommand starts one sandbox of p and runs `true` in it, so a
// provider that cannot work on this machine is refused when it is made,
// with why (hint says what to try), not at the first episode.
func runsACommand(ctx context.Context, p Provider, hint string) error {
	sb, err := p.New(ctx)
	if err != nil {
		return err
	}
	defer sb.Close()
	res, err := sb.Run(ctx, Command{Args: []string{"true"}})
	if err != nil {
		return err
	}
	if res.ExitCode != 0 || res.Cut != "" {
		return fmt.Errorf("sandbox: %s cannot run a command in a sandbox here (exit %d%s): %s%s",
			p.Name(), res.ExitCode, cutSuffix(res.Cut), strings.TrimSpace(res.Output), hint)
	}
	return nil
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
	dir, work, uid, err := workFolder(b.TempDir)
	if err != nil {
		return nil, err
	}
	return &bwrapSandbox{p: b, root: dir, work: work, uid: uid}, nil
}

// workFolder makes an episode's folder under tempDir: dir, searchable by
// others, holding work, the sandbox's working folder. Run as root, it
// also picks the host uid the sandbox runs as and gives work to it: each
// sandbox needs a uid of its own, since RLIMIT_NPROC never applies to
// processes whose real uid is root (the uid a user namespace maps to when
// bwrap runs as root) and a uid shared by all sandboxes would share one
// process count. Otherwise uid is -1: this process's own.
func workFolder(tempDir string) (dir, work string, uid int, err error) {
	dir, err = os.MkdirTemp(tempDir, "clawrl-sandbox-")
	if err != nil {
		return "", "", 0, fmt.Errorf("sandbox: working folder: %w", err)
	}
	work = dir + "/work"
	uid = -1
	if os.Geteuid() == 0 {
		uid = sandboxUIDBase + rand.IntN(sandboxUIDRange)
	}
	// The sandbox's uid must reach work through dir (MkdirTemp's is 0700).
	err = os.Chmod(dir, 0o711)
	if err == nil {
		err = os.Mkdir(work, 0o755)
	}
	if err == nil && uid >= 0 {
		err = os.Chown(work, uid, uid)
	}
	if err != nil {
		os.RemoveAll(dir)
		return "", "", 0, fmt.Errorf("sandbox: working folder: %w", err)
	}
	return dir, work, uid, nil
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

	res, err := supervise(ctx, cmd, l, "bwrap", func() {
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
	if err != nil {
		return res, err
	}
	exitCut(&res, usedCPU(cmd.ProcessState, l.CPUTime))
	return res, nil
}

// usedCPU: the sandbox (bwrap's rusage includes the processes it reaped, all
// of them as the sandbox's PID 1) spent about its CPU limit, so SIGXCPU or
// SIGKILL came from the kernel's RLIMIT_CPU.
func usedCPU(ps *os.ProcessState, limit time.Duration) bool {
	return ps != nil && ps.UserTime()+ps.SystemTime() >= limit*9/10
}
