package main

import (
	"os"
	"strings"
	"testing"
	"time"
)

// --sandbox picks the backend; an unknown one is refused by name, and
// docker gives the Docker provider where a daemon runs.
func TestSandboxFlag(t *testing.T) {
	f := envFlags{backend: "chroot", cpu: time.Second, wall: time.Second, memoryMB: 256, processes: 16, outputKB: 4}
	if _, err := f.provider(); err == nil || !strings.Contains(err.Error(), `unknown backend "chroot"`) {
		t.Fatalf("unknown backend: %v", err)
	}
	f.backend = "docker"
	f.sandboxTmp = t.TempDir()
	p, err := f.provider()
	if err != nil {
		if os.Getenv("CLAWRL_REQUIRE_DOCKER") == "1" {
			t.Fatalf("Docker sandbox required (CLAWRL_REQUIRE_DOCKER=1): %v", err)
		}
		t.Skipf("no Docker sandbox here: %v", err)
	}
	if p.Name() != "docker" {
		t.Fatalf("--sandbox docker gave %s", p.Name())
	}
}
