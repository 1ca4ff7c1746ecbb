package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestCPUModel(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "cpuinfo")
	text := "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\n" +
		"model name\t: Intel(R) Xeon(R)  Platinum 8488C\nflags\t\t: fpu amx_tile\n\nprocessor\t: 1\nmodel name\t: other\n"
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := cpuModel(p), "Intel(R) Xeon(R) Platinum 8488C"; got != want {
		t.Errorf("cpuModel = %q, want %q", got, want)
	}
	if got := cpuModel(filepath.Join(dir, "missing")); got != "" {
		t.Errorf("cpuModel of a missing file = %q", got)
	}
	if err := os.WriteFile(p, []byte("processor\t: 0\nFeatures\t: fp asimd\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := cpuModel(p); got != "" {
		t.Errorf("cpuModel without a model name = %q", got)
	}
}

// TestThisMachine: every kernel is named in one of the forms the packages
// document, and the line a run prints carries them.
func TestThisMachine(t *testing.T) {
	m := thisMachine()
	if !regexp.MustCompile(`^(go|openblas|go/avx2|go/avx512)$`).MatchString(m.Sgemm) {
		t.Errorf("sgemm %q", m.Sgemm)
	}
	if !regexp.MustCompile(`^(go|vdpbf16ps|amx)$`).MatchString(m.BF16) {
		t.Errorf("bf16 %q", m.BF16)
	}
	if !regexp.MustCompile(`^(go|(avx2|avx512)(\+vnni)?(\+amx-int8)?)$`).MatchString(m.Quant) {
		t.Errorf("quant %q", m.Quant)
	}
	if m.Threads < 1 || !strings.Contains(m.String(), m.Kernels()) {
		t.Errorf("%+v: %q", m, m.String())
	}
}
