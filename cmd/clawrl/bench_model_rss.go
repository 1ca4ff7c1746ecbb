package main

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// peakRSSMiB is this process's peak resident set (VmHWM) in MiB, or 0
// where /proc is missing. bench model reads it after its own measurements
// and before the bandwidth probe, whose buffer would dominate it.
func peakRSSMiB() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				return 0
			}
			return kb / 1024
		}
	}
	return 0
}
