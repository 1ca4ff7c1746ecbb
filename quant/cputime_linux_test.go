package quant

import (
	"syscall"
	"time"
)

// processCPU is the CPU time this process has used (user + system): on a
// shared machine it measures the work done rather than the wait for a core.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
