package sandbox

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// BaseImage is the image a Docker provider builds locally when none is
// named: an empty root (no files, only the folders Docker mounts into and
// the /bin, /lib symlinks into /usr); the host's /usr is bound read-only at
// /usr, so a Docker sandbox sees the same programs as a bubblewrap one and
// no registry is needed.
const BaseImage = "clawrl/sandbox-base:1"

// Docker is the Docker Provider: one container per episode, one `docker
// exec` per command. It needs the docker CLI and a daemon on this machine
// (the episode's working folder is a host folder bind-mounted at /work).
//
// Each container runs with no network (--network none), a read-only root,
// a size-capped tmpfs /tmp, all capabilities dropped, no-new-privileges,
// Docker's init (tini) as PID 1 reaping orphans, cgroup limits on memory
// (Limits.Memory + TmpSize, no swap), processes (--pids-limit) and one CPU,
// and per-process rlimits as ulimits: CPU time, data size (Docker has no
// address-space ulimit; RLIMIT_DATA also counts anonymous mmaps, so a large
// allocation fails the same way), file size, open files, processes, no core
// dumps. Commands run as a uid of their own (as root: a random one from
// the range bubblewrap sandboxes use; otherwise this process's), while PID
// 1 runs as nobody, so a command's `kill -9 -1` cannot stop the container.
//
// A command that finishes takes its leftover background processes with it
// (as a bubblewrap command's PID namespace does). A command cut off (wall
// clock, output, context) gets SIGTERM, then after KillGrace the container
// is killed (SIGKILL to its PID 1 takes every process inside, even under a
// fork bomb where no new process can start) and started again, keeping the
// working folder.
type Docker struct {
	Limits Limits
	// Image runs the sandboxes; "" builds and uses BaseImage with the
	// host's /usr bound read-only. A named image must have sh, sleep and
	// kill on its PATH.
	Image string
	// TempDir holds the episodes' working folders; default os.TempDir().
	TempDir string
	// Binds are extra host paths bound read-only at the same place inside.
	Binds []string

	docker string
}

// dockerLabel marks the containers clawrl starts; its value is the
// starting process's pid, so a later provider can remove what a crashed
// one left behind.
const dockerLabel = "clawrl.sandbox.pid"

// NewDocker finds the docker CLI, checks that a daemon answers, builds the
// base image if it is missing and checks that a sandbox starts, so a
// machine without Docker fails at start with the reason.
func NewDocker(limits Limits, image string) (*Docker, error) {
	d := &Docker{Limits: limits.WithDefaults(), Image: image}
	var err error
	if d.docker, err = exec.LookPath("docker"); err != nil {
		return nil, fmt.Errorf("sandbox: docker CLI not found (Debian: apt-get install docker.io): %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if out, err := d.cmd(ctx, "version", "--format", "{{.Server.Version}}"); err != nil {
		return nil, fmt.Errorf("sandbox: no Docker daemon answers: %w", err)
	} else if strings.TrimSpace(out) == "" {
		return nil, errors.New("sandbox: no Docker daemon answers")
	}
	d.removeOrphans(ctx)
	if d.Image == "" {
		if err := d.buildBase(ctx); err != nil {
			return nil, err
		}
	}
	if err := runsACommand(ctx, d, ""); err != nil {
		return nil, err
	}
	return d, nil
}

// Name implements Provider.
func (d *Docker) Name() string { return "docker" }

// cmd runs the docker CLI and returns its stdout; the error carries stderr.
func (d *Docker) cmd(ctx context.Context, args ...string) (string, error) {
	var out, errb bytes.Buffer
	c := exec.CommandContext(ctx, d.docker, args...)
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Run(); err != nil {
		return out.String(), fmt.Errorf("docker %s: %w: %s", args[0], err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// buildBase imports BaseImage from a tar stream made here, unless the
// daemon has it already.
func (d *Docker) buildBase(ctx context.Context) error {
	if _, err := d.cmd(ctx, "image", "inspect", BaseImage); err == nil {
		return nil
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	now := time.Now()
	// /sbin is a folder, not a symlink into the read-only /usr: Docker
	// mounts its init at /sbin/docker-init.
	for _, dir := range []string{"usr", "sbin", "work", "tmp", "proc", "dev", "sys", "etc"} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir + "/", Mode: 0o755, ModTime: now}); err != nil {
			return fmt.Errorf("sandbox: base image: %w", err)
		}
	}
	for _, l := range []string{"bin", "lib", "lib64"} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: l, Linkname: "usr/" + l, Mode: 0o777, ModTime: now}); err != nil {
			return fmt.Errorf("sandbox: base image: %w", err)
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("sandbox: base image: %w", err)
	}
	c := exec.CommandContext(ctx, d.docker, "import", "-", BaseImage)
	c.Stdin = &buf
	if out, err := c.CombinedOutput(); err != nil {
		return fmt.Errorf("sandbox: docker import %s: %w: %s", BaseImage, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// removeOrphans removes containers a clawrl process that no longer runs
// left behind (killed before it closed its sandboxes). The pid in the label
// is a pid of this machine: the working folders are host folders, so the
// daemon is always local.
func (d *Docker) removeOrphans(ctx context.Context) {
	out, err := d.cmd(ctx, "ps", "-a", "--filter", "label="+dockerLabel, "--format", `{{.ID}} {{.Label "`+dockerLabel+`"}}`)
	if err != nil {
		return
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		id, pidStr, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		pid, err := strconv.Atoi(pidStr)
		if err != nil || pid <= 0 {
			continue
		}
		if err := syscall.Kill(pid, 0); err == nil || errors.Is(err, syscall.EPERM) {
			continue // that clawrl still runs
		}
		_, _ = d.cmd(ctx, "rm", "-f", id)
	}
}

// New implements Provider.
func (d *Docker) New(ctx context.Context) (Sandbox, error) {
	dir, work, uid, err := workFolder(d.TempDir)
	if err != nil {
		return nil, err
	}
	// Never run commands as root (workFolder gives root's sandboxes a uid
	// of their own); otherwise they run as this process's uid.
	if uid < 0 {
		uid = os.Getuid()
	}
	s := &dockerSandbox{p: d, root: dir, work: work, uid: uid}
	var id [6]byte
	_, _ = rand.Read(id[:])
	s.name = "clawrl-sandbox-" + hex.EncodeToString(id[:])
	if _, err := d.cmd(ctx, d.runArgs(s)...); err != nil {
		_, _ = d.cmd(context.Background(), "rm", "-f", s.name)
		os.RemoveAll(dir)
		return nil, fmt.Errorf("sandbox: start container: %w", err)
	}
	return s, nil
}

// runArgs is the `docker run` command line of s's container.
func (d *Docker) runArgs(s *dockerSandbox) []string {
	l := d.Limits
	cpu := int(l.CPUTime.Seconds() + 0.999)
	a := []string{"run", "-d", "--name", s.name, "--label", dockerLabel + "=" + strconv.Itoa(os.Getpid()),
		"--init", "--network", "none", "--hostname", "sandbox",
		"--user", "65534:65534",
		"--memory", strconv.FormatInt(l.Memory+l.TmpSize, 10), "--memory-swap", strconv.FormatInt(l.Memory+l.TmpSize, 10),
		"--pids-limit", strconv.Itoa(l.Processes), "--cpus", "1",
		"--read-only", "--tmpfs", "/tmp:rw,nosuid,nodev,size=" + strconv.FormatInt(l.TmpSize, 10) + ",mode=1777",
		// Soft CPU limit sends SIGXCPU (so the cut is recognisable); the
		// hard limit a second later is SIGKILL.
		"--ulimit", "cpu=" + strconv.Itoa(cpu) + ":" + strconv.Itoa(cpu+1),
		"--ulimit", "data=" + strconv.FormatInt(l.Memory, 10),
		"--ulimit", "fsize=" + strconv.FormatInt(l.FileSize, 10),
		"--ulimit", "nofile=" + strconv.Itoa(l.OpenFiles),
		"--ulimit", "core=0",
		"--cap-drop", "ALL", "--security-opt", "no-new-privileges",
		"-v", s.work + ":/work", "-w", "/work",
	}
	if os.Getuid() == 0 {
		// The uid is the sandbox's own (New), so the count is its own.
		a = append(a, "--ulimit", "nproc="+strconv.Itoa(l.Processes))
	}
	image := d.Image
	if image == "" {
		image = BaseImage
		a = append(a, "-v", "/usr:/usr:ro")
	}
	for _, p := range d.Binds {
		a = append(a, "-v", p+":"+p+":ro")
	}
	return append(a, image, "sleep", "infinity")
}

type dockerSandbox struct {
	p          *Docker
	root, work string
	name       string
	uid        int
	runMu      sync.Mutex // held by Run
	mu         sync.Mutex // guards closed
	closed     bool
}

func (s *dockerSandbox) WriteFile(rel string, data []byte, mode os.FileMode) error {
	owner := -1
	if os.Getuid() == 0 {
		owner = s.uid
	}
	return writeOwned(s.work, rel, data, mode, owner)
}

func (s *dockerSandbox) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, rmErr := s.p.cmd(ctx, "rm", "-f", s.name)
	_ = exec.Command("chmod", "-R", "u+rwX", s.root).Run()
	if err := os.RemoveAll(s.root); err != nil {
		return fmt.Errorf("sandbox: remove %s: %w", s.root, err)
	}
	if rmErr != nil {
		return fmt.Errorf("sandbox: remove container %s: %w", s.name, rmErr)
	}
	return nil
}

// execArgs is the `docker exec` command line for c. A small sh wrapper
// sends stderr into stdout (one stream, in order, as bwrap's), runs the
// command, then kills every process of the sandbox's uid left behind
// (kill -1 spares the caller and PID 1), so nothing outlives a command.
func (s *dockerSandbox) execArgs(c Command) []string {
	u := strconv.Itoa(s.uid)
	a := []string{"exec", "-i", "-u", u + ":" + u, "-w", "/work",
		"-e", "PATH=/usr/local/bin:/usr/bin:/bin", "-e", "HOME=/work",
		"-e", "LANG=C.UTF-8", "-e", "PYTHONDONTWRITEBYTECODE=1",
	}
	for _, kv := range c.Env {
		k, _, ok := strings.Cut(kv, "=")
		if ok && k != "" {
			a = append(a, "-e", kv)
		}
	}
	a = append(a, s.name, "sh", "-c", `exec 2>&1; "$@"; s=$?; kill -9 -1 2>/dev/null; exit $s`, "clawrl-run")
	return append(a, c.Args...)
}

func (s *dockerSandbox) Run(ctx context.Context, c Command) (Result, error) {
	if len(c.Args) == 0 {
		return Result{}, errors.New("sandbox: empty command")
	}
	// One command at a time: the wrapper's kill -9 -1 and a cut-off's
	// container kill would take a concurrent command with them. Close
	// does not wait: removing the container ends a running command.
	s.runMu.Lock()
	defer s.runMu.Unlock()
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return Result{}, errors.New("sandbox: closed")
	}
	l := s.p.Limits
	cmd := exec.Command(s.p.docker, s.execArgs(c)...)
	cmd.Stdin = strings.NewReader(c.Stdin)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// The container's kill closes the streams; WaitDelay is a backstop.
	cmd.WaitDelay = l.KillGrace + 10*time.Second

	var (
		stopped = make(chan struct{})
		killed  bool
	)
	res, err := supervise(ctx, cmd, l, "docker exec", func() {
		go func() {
			defer close(stopped)
			// SIGTERM to every process of the command's uid (the
			// shell's own kill: procps's kill -1 hangs here), not
			// waited for: it may fail when a fork bomb has taken every
			// pid, and its docker exec can take seconds to return when
			// the command's shell dies before its children. Then the
			// container.
			u := strconv.Itoa(s.uid)
			tctx, cancel := context.WithTimeout(context.Background(), l.KillGrace+5*time.Second)
			defer cancel()
			go func() { _, _ = s.p.cmd(tctx, "exec", "-u", u+":"+u, s.name, "sh", "-c", "kill -TERM -1") }()
			time.Sleep(l.KillGrace)
			kctx, kcancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer kcancel()
			_, _ = s.p.cmd(kctx, "kill", s.name)
			killed = true
		}()
	})
	if res.Cut != "" {
		// Nothing of the command may outlive Run: wait for the kill, then
		// start the container again for the episode's next command.
		t := time.Now()
		<-stopped
		if killed {
			sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			_, rerr := s.p.cmd(sctx, "start", s.name)
			cancel()
			if rerr != nil {
				return res, fmt.Errorf("sandbox: restart container after %s: %w", res.Cut, rerr)
			}
		}
		res.Elapsed += time.Since(t)
	}
	if err != nil {
		return res, err
	}
	// docker exec reports a signal N as 128+N itself; a SIGKILL is the
	// cgroup's, not RLIMIT_CPU's.
	exitCut(&res, false)
	return res, nil
}
