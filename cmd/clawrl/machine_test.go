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
// document (blas.SgemmKernel, blas.BF16Kernel, quant.Kernels), and the line
// a run prints carries them.
func TestThisMachine(t *testing.T) {
	m := thisMachine()
	if !regexp.MustCompile(`^(go|openblas|go/avx2|go/avx512)$`).MatchString(m.Sgemm) {
		t.Errorf("sgemm %q", m.Sgemm)
	}
	if !regexp.MustCompile(`^(go|vdpbf16ps|amx|avx2)$`).MatchString(m.BF16) {
		t.Errorf("bf16 %q", m.BF16)
	}
	if !regexp.MustCompile(`^(go|(avx2|avx512)(\+vnni|\+avx-vnni)?(\+amx-int8)?)$`).MatchString(m.Quant) {
		t.Errorf("quant %q", m.Quant)
	}
	if m.Threads < 1 || !strings.Contains(m.String(), m.Kernels()) {
		t.Errorf("%+v: %q", m, m.String())
	}
}

// FuzzCPUModel: any cpuinfo text gives a one-line model name without
// surrounding or doubled spaces, and the first model name line's when the
// text has one.
func FuzzCPUModel(f *testing.F) {
	f.Add("processor\t: 0\nmodel name\t: Intel(R) Xeon(R) CPU\n")
	f.Add("model name:\nmodel name: second\n")
	f.Add("model name\t:  AMD  EPYC\t9R14 \r\nflags: x")
	f.Add(":::\n\x00model name : \xff\n")
	p := filepath.Join(f.TempDir(), "cpuinfo")
	f.Fuzz(func(t *testing.T, text string) {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		got := cpuModel(p)
		if strings.ContainsAny(got, "\n\t\r") || got != strings.TrimSpace(got) || strings.Contains(got, "  ") {
			t.Fatalf("cpuModel(%q) = %q", text, got)
		}
	})
}
