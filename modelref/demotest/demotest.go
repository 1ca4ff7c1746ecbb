// Package demotest finds the demo model (SmolLM2-135M-Instruct's Q4_1 GGUF,
// which `clawrl model pull smollm2` puts in clawrl's model cache) for tests
// and benchmarks, in one place.
package demotest

import (
	"os"
	"testing"

	"github.com/clawrl/clawrl/modelref"
)

// Path is the demo GGUF's path ($CLAWRL_DEMO_GGUF overrides the cache), or
// "" when it is not there.
func Path() string {
	path := os.Getenv("CLAWRL_DEMO_GGUF")
	if path == "" {
		p, ok, err := modelref.KnownModels[modelref.DefaultModel].Cached()
		if err != nil || !ok {
			return ""
		}
		return p
	}
	if _, err := os.Stat(path); err != nil {
		return ""
	}
	return path
}

// GGUF returns Path, or skips tb when the file is not there — and fails it
// under CLAWRL_REQUIRE_REFS=1, so CI really runs the tests that need it.
func GGUF(tb testing.TB) string {
	tb.Helper()
	path := Path()
	if path == "" {
		msg := "demo GGUF not found (run `go run ./cmd/clawrl model pull smollm2`, or set CLAWRL_DEMO_GGUF)"
		if os.Getenv("CLAWRL_REQUIRE_REFS") == "1" {
			tb.Fatal(msg + " (CLAWRL_REQUIRE_REFS=1)")
		}
		tb.Skip(msg)
	}
	return path
}
