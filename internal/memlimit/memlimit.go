// Package memlimit gives the Go runtime a soft memory limit drawn from the
// memory the process may use, so that a training step's garbage is
// collected before the heap doubles past what the machine holds.
//
// Without a limit the collector lets the heap grow to twice the live set
// at its last collection (GOGC=100): serving and training the 1.5B coder
// under the protocol, the server reached 21.4 GiB resident at a
// LoRA step on a 24 GiB machine and the kernel killed it (BENCHMARKS.md,
// "The avoid trio by default").
package memlimit

import (
	"bufio"
	"bytes"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// Fraction is the share of the memory the process may use (the machine's,
// or its cgroup's where lower) that the runtime keeps its own memory under
// before its collector works harder: the rest is for the page cache of
// mapped weights, memory outside the Go heap (OpenBLAS) and a neighbour
// such as a teacher server.
const Fraction = 0.75

// Set sets the runtime's soft memory limit to Fraction of the memory this
// process may use, unless GOMEMLIMIT is set (which then stands). It returns
// the limit in bytes, or 0 where it left the runtime's as it was.
func Set() int64 {
	if os.Getenv("GOMEMLIMIT") != "" {
		return 0
	}
	total := Available()
	if total <= 0 {
		return 0
	}
	limit := int64(float64(total) * Fraction)
	debug.SetMemoryLimit(limit)
	return limit
}

// Available is the memory this process may use: the lower of the machine's
// memory and its cgroup's limit (0: unknown).
func Available() int64 {
	var total int64
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		total = memTotal(b)
	}
	for _, path := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if b, err := os.ReadFile(path); err == nil {
			if c := cgroupLimit(b); c > 0 && (total == 0 || c < total) {
				total = c
			}
			break
		}
	}
	return total
}

// memTotal reads MemTotal from /proc/meminfo's text, in bytes (0: absent
// or malformed).
func memTotal(b []byte) int64 {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || kb <= 0 || kb > 1<<53 {
			return 0
		}
		return kb << 10
	}
	return 0
}

// cgroupLimit reads a cgroup memory limit file's text (v2 memory.max or v1
// memory.limit_in_bytes), in bytes (0: "max", unlimited, or malformed).
func cgroupLimit(b []byte) int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n <= 0 || n >= 1<<62 { // v1 writes "no limit" as a page-rounded 2^63 − 1
		return 0
	}
	return n
}
