package tokenizer_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/clawrl/clawrl/tokenizer"
	"github.com/clawrl/clawrl/tokenizer/vocab"
)

// python returns the interpreter that has Hugging Face tokenizers, or skips
// the test (fails it when CLAWRL_REQUIRE_REFS=1, as scripts/test sets).
func python(tb testing.TB) string {
	tb.Helper()
	py := os.Getenv("CLAWRL_PYTHON")
	if py == "" {
		py = "python3"
	}
	out, err := exec.Command(py, "-c", "import tokenizers; print(tokenizers.__version__)").CombinedOutput()
	if err != nil {
		msg := "reference missing: " + py + " cannot import tokenizers (pip install -r scripts/requirements-test.txt): " + string(bytes.TrimSpace(out))
		if os.Getenv("CLAWRL_REQUIRE_REFS") == "1" {
			tb.Fatal(msg)
		}
		tb.Skip(msg)
	}
	return py
}

// runReference runs testdata/hf_ref.py with req and decodes its answer.
func runReference(tb testing.TB, req map[string]any, resp any) {
	tb.Helper()
	py := python(tb)
	reqPath := filepath.Join(tb.TempDir(), "request.json")
	data, err := json.Marshal(req)
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(reqPath, data, 0o644); err != nil {
		tb.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(py, filepath.Join("testdata", "hf_ref.py"), reqPath)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		tb.Fatalf("hf_ref.py: %v\n%s", err, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), resp); err != nil {
		tb.Fatalf("hf_ref.py output: %v", err)
	}
}

// family holds one real tokenizer, loaded once per test binary.
type family struct {
	name string
	path string // tokenizer.json written to a temp dir, for the Python side
	tok  *tokenizer.Tokenizer
}

var (
	familiesOnce sync.Once
	familiesDir  string
	familiesErr  error
	loaded       = map[string]*family{}
)

// realTokenizer loads an embedded family's tokenizer.json.
func realTokenizer(tb testing.TB, name string) *family {
	tb.Helper()
	familiesOnce.Do(func() { familiesDir, familiesErr = os.MkdirTemp("", "clawrl-tokenizer-test") })
	if familiesErr != nil {
		tb.Fatal(familiesErr)
	}
	if f, ok := loaded[name]; ok {
		return f
	}
	data, _, err := vocab.Files(name)
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(familiesDir, name+".json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		tb.Fatal(err)
	}
	tok, err := tokenizer.FromJSON(data)
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	f := &family{name: name, path: path, tok: tok}
	loaded[name] = f
	return f
}

var familyNames = []string{"qwen3", "qwen2", "llama3"}
