// Package sandbox runs untrusted commands (the model's code and shell
// commands) on existing tools, so an episode can never touch the host:
// bubblewrap (Debian's bubblewrap package) by default, with rlimits set by
// util-linux's prlimit, or Docker.
//
// What a bubblewrap sandbox gives each episode:
//   - its own user, PID, network, IPC, UTS and cgroup namespaces
//     (--unshare-all --unshare-user): no network at all (only a loopback
//     that is down), the host's processes invisible;
//   - a private working folder, /work, a fresh host temp folder per episode
//     bound read-write and removed on Close, plus a size-capped tmpfs /tmp;
//     /usr (and the /bin, /lib symlinks into it) read-only; nothing else of
//     the host's filesystem exists inside;
//   - per command: CPU time (RLIMIT_CPU; SIGXCPU at the limit), address
//     space (RLIMIT_AS), processes (RLIMIT_NPROC, counted in the sandbox's
//     host uid: as root, clawrl runs each sandbox as a host uid of its own,
//     since the kernel never applies RLIMIT_NPROC to uid 0, which is what a
//     sandbox's uid maps to when bwrap itself runs as root), file size (RLIMIT_FSIZE), open files, no core dumps; an
//     output cap and a wall-clock timeout, after which the whole sandbox is
//     sent SIGTERM, then SIGKILL after a grace period. bubblewrap runs with
//     --die-with-parent and as PID 1 of the sandbox's PID namespace, so
//     killing it takes every process inside with it.
//
// Each cut-off is recorded in Result.Cut with its reason.
//
// As root in a container (this repo's CI), bwrap needs no setuid bit and no
// sysctl: it creates the user namespace itself. Where unprivileged user
// namespaces are disabled (kernel.unprivileged_userns_clone=0, AppArmor's
// restrict_unprivileged_userns), run clawrl as root or install bwrap setuid.
//
// Docker (docker.go) is the other Provider, where a Docker daemon runs on
// this machine: a container per episode with the same limits, the same
// private /work and the same cut-offs (--sandbox docker).
package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Limits bound one command. Zero fields take the defaults.
type Limits struct {
	CPUTime   time.Duration // default 10s
	Memory    int64         // address space in bytes; default 1 GiB
	Processes int           // default 64
	FileSize  int64         // largest file a command may write; default 16 MiB
	OpenFiles int           // default 256
	Output    int           // bytes of output kept; more cuts the command off; default 64 KiB
	WallTime  time.Duration // default 30s
	KillGrace time.Duration // SIGTERM → SIGKILL; default 1s
	TmpSize   int64         // size of the tmpfs at /tmp; default 64 MiB
}

// WithDefaults fills zero fields.
func (l Limits) WithDefaults() Limits {
	if l.CPUTime <= 0 {
		l.CPUTime = 10 * time.Second
	}
	if l.Memory <= 0 {
		l.Memory = 1 << 30
	}
	if l.Processes <= 0 {
		l.Processes = 64
	}
	if l.FileSize <= 0 {
		l.FileSize = 16 << 20
	}
	if l.OpenFiles <= 0 {
		l.OpenFiles = 256
	}
	if l.Output <= 0 {
		l.Output = 64 << 10
	}
	if l.WallTime <= 0 {
		l.WallTime = 30 * time.Second
	}
	if l.KillGrace <= 0 {
		l.KillGrace = time.Second
	}
	if l.TmpSize <= 0 {
		l.TmpSize = 64 << 20
	}
	return l
}

// Reasons a command was cut off (Result.Cut).
const (
	CutWallTime = "wall-clock timeout"
	CutOutput   = "output limit"
	CutCPU      = "cpu time limit"
	CutMemory   = "memory limit"
	CutKilled   = "killed"
)

// Result is a finished command.
type Result struct {
	// Output is stdout and stderr interleaved, at most Limits.Output bytes.
	Output string
	// ExitCode is the command's exit status (128+N when signal N ended it,
	// as shells report).
	ExitCode int
	// Cut says why the sandbox cut the command off ("" when it ended by
	// itself within its limits).
	Cut     string
	Elapsed time.Duration
}

// Command is one command to run in a sandbox's working folder.
type Command struct {
	Args  []string // argv; Args[0] is looked up on the sandbox's PATH (/usr/bin:/bin)
	Stdin string
	Env   []string // extra KEY=VALUE pairs
}

// Sandbox is one episode's sandbox.
type Sandbox interface {
	// Run runs a command in the working folder, within the limits.
	Run(ctx context.Context, c Command) (Result, error)
	// WriteFile puts a file into the working folder from the host side
	// (starting files, test scripts); rel must stay inside it.
	WriteFile(rel string, data []byte, mode os.FileMode) error
	// Close kills anything left and removes the working folder.
	Close() error
}

// Provider makes sandboxes.
type Provider interface {
	Name() string
	New(ctx context.Context) (Sandbox, error)
}

// writeInside writes rel under root, refusing paths that leave it.
func writeInside(root, rel string, data []byte, mode os.FileMode) error {
	if !filepath.IsLocal(rel) {
		return fmt.Errorf("sandbox file %q: not a local path", rel)
	}
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("sandbox file %q: %w", rel, err)
	}
	// Refuse to follow a symlink a command left in place of the file or a
	// parent folder.
	if real, err := filepath.EvalSymlinks(filepath.Dir(p)); err != nil || !within(root, real) {
		return fmt.Errorf("sandbox file %q: its folder leaves the sandbox", rel)
	}
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		if err := os.Remove(p); err != nil {
			return fmt.Errorf("sandbox file %q: %w", rel, err)
		}
	}
	if err := os.WriteFile(p, data, mode); err != nil {
		return fmt.Errorf("sandbox file %q: %w", rel, err)
	}
	return nil
}

// writeOwned is writeInside, then hands the file and the folders made for
// it to uid (the sandbox's own, when clawrl runs as root); uid < 0 leaves
// them to this process's.
func writeOwned(root, rel string, data []byte, mode os.FileMode, uid int) error {
	if err := writeInside(root, rel, data, mode); err != nil {
		return err
	}
	if uid < 0 {
		return nil
	}
	for p := rel; p != "."; p = filepath.Dir(p) {
		if err := os.Lchown(filepath.Join(root, p), uid, uid); err != nil {
			return fmt.Errorf("sandbox file %q: %w", rel, err)
		}
	}
	return nil
}

func within(root, p string) bool {
	r, err := filepath.EvalSymlinks(root)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(r, p)
	return err == nil && filepath.IsLocal(rel) || rel == "."
}

// Observation is what a model sees of a command's result: the output cut
// to max bytes, then why the sandbox stopped the command or its non-zero
// exit status; empty stands in for a command that printed nothing.
func (r Result) Observation(max int, empty string) string {
	out := r.Output
	if len(out) > max {
		out = out[:max] + "\n…(output truncated)"
	}
	switch {
	case r.Cut != "":
		out += fmt.Sprintf("\n[stopped: %s]", r.Cut)
	case r.ExitCode != 0:
		out += fmt.Sprintf("\n[exit status %d]", r.ExitCode)
	}
	if strings.TrimSpace(out) == "" {
		out = empty
	}
	return out
}
