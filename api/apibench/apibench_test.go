package apibench

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// TestRun checks the benchmark command works end to end (briefly).
func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := Run(context.Background(), Options{Clients: 4, Duration: 100 * time.Millisecond, DataDir: t.TempDir()}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"non-streaming", "streaming", "added p99"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "  0\n") == false {
		t.Fatalf("errors column not zero:\n%s", out.String())
	}
}

// BenchmarkGateway runs the loaded gateway measurement for profiling:
// go test -run XXX -bench Gateway -cpuprofile cpu.out ./api/apibench
func BenchmarkGateway(b *testing.B) {
	var out bytes.Buffer
	if err := Run(context.Background(), Options{Clients: 64, Duration: time.Duration(b.N) * time.Millisecond, DataDir: b.TempDir()}, &out); err != nil {
		b.Fatal(err)
	}
	b.Log(out.String())
}
