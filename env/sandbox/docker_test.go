package sandbox

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// A container left by a clawrl process that is gone (killed before it
// closed its sandboxes) is removed by the next Docker provider; one of a
// process still running is kept.
func TestDockerRemovesOrphans(t *testing.T) {
	d := newDocker(t, Limits{}).(*Docker)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	start := func(name string, pid int) {
		t.Helper()
		if _, err := d.cmd(ctx, "run", "-d", "--name", name, "--label", dockerLabel+"="+strconv.Itoa(pid),
			"--network", "none", "-v", "/usr:/usr:ro", BaseImage, "sleep", "infinity"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = d.cmd(context.Background(), "rm", "-f", name) })
	}
	orphan, alive := "clawrl-test-orphan-"+strconv.Itoa(os.Getpid()), "clawrl-test-alive-"+strconv.Itoa(os.Getpid())
	start(orphan, dead.Process.Pid)
	start(alive, os.Getpid())
	newDocker(t, Limits{})
	out, err := d.cmd(ctx, "ps", "-a", "--format", "{{.Names}}")
	if err != nil {
		t.Fatal(err)
	}
	names := strings.Fields(out)
	has := func(n string) bool {
		for _, x := range names {
			if x == n {
				return true
			}
		}
		return false
	}
	if has(orphan) || !has(alive) {
		t.Fatalf("containers after cleanup: %v (orphan %s removed, %s kept)", names, orphan, alive)
	}
}
