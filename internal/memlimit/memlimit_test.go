package memlimit

import (
	"os"
	"runtime/debug"
	"testing"
)

func TestMemTotal(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
	}{
		{"MemTotal:       24563412 kB\nMemFree:         1234 kB\n", 24563412 << 10},
		{"MemFree:         1234 kB\nMemTotal:  16 kB\n", 16 << 10},
		{"MemFree:         1234 kB\n", 0},
		{"MemTotal: 12 MB\n", 0},
		{"MemTotal: -5 kB\n", 0},
		{"MemTotal: x kB\n", 0},
		{"", 0},
	} {
		if got := memTotal([]byte(tt.in)); got != tt.want {
			t.Errorf("memTotal(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestCgroupLimit(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
	}{
		{"max\n", 0},
		{"8589934592\n", 8 << 30},
		{"9223372036854771712\n", 0}, // cgroup v1's "no limit"
		{"0\n", 0},
		{"", 0},
	} {
		if got := cgroupLimit([]byte(tt.in)); got != tt.want {
			t.Errorf("cgroupLimit(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

// TestSet: the limit is Fraction of this machine's memory, and GOMEMLIMIT,
// when set, stands.
func TestSet(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
	if os.Getenv("GOMEMLIMIT") == "" {
		total := Available()
		if total == 0 {
			t.Skip("no /proc/meminfo here")
		}
		got := Set()
		if want := int64(float64(total) * Fraction); got != want || debug.SetMemoryLimit(-1) != want {
			t.Fatalf("Set() = %d (runtime %d), want %d of %d", got, debug.SetMemoryLimit(-1), want, total)
		}
		debug.SetMemoryLimit(old)
	}
	t.Setenv("GOMEMLIMIT", "1GiB")
	if got := Set(); got != 0 || debug.SetMemoryLimit(-1) != old {
		t.Fatalf("with GOMEMLIMIT set: Set() = %d, runtime limit %d, want 0 and %d untouched", got, debug.SetMemoryLimit(-1), old)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("MemTotal:       24563412 kB\n"))
	f.Add([]byte("max\n"))
	f.Add([]byte("8589934592"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if n := memTotal(b); n < 0 {
			t.Fatalf("memTotal %d", n)
		}
		if n := cgroupLimit(b); n < 0 {
			t.Fatalf("cgroupLimit %d", n)
		}
	})
}
