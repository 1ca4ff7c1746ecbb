package modelref

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeOllamaStore lays out an Ollama store the way `ollama pull` does
// (manifests/<registry>/<namespace>/<model>/<tag> + blobs/sha256-<hex>)
// with blob as the model layer, and returns its root.
func writeOllamaStore(t *testing.T, blob []byte, registry, namespace, model, tag string) string {
	t.Helper()
	root := t.TempDir()
	sum := sha256.Sum256(blob)
	digest := "sha256:" + hex.EncodeToString(sum[:])
	if err := os.MkdirAll(filepath.Join(root, "blobs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "blobs", "sha256-"+hex.EncodeToString(sum[:])), blob, 0o644); err != nil {
		t.Fatal(err)
	}
	manifest := map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.docker.distribution.manifest.v2+json",
		"config":        map[string]any{"mediaType": "application/vnd.docker.container.image.v1+json", "digest": digest, "size": 10},
		"layers": []map[string]any{
			{"mediaType": "application/vnd.ollama.image.template", "digest": "sha256:" + strings.Repeat("0", 64), "size": 3},
			{"mediaType": OllamaModelMediaType, "digest": digest, "size": len(blob)},
		},
	}
	raw, _ := json.Marshal(manifest)
	dir := filepath.Join(root, "manifests", registry, namespace, model)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, tag), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestOllamaBlob(t *testing.T) {
	blob := []byte("GGUF\x03\x00\x00\x00 not really a model")
	root := writeOllamaStore(t, blob, "registry.example", "library", "smollm2", "135m")
	got, err := OllamaBlob(root, "smollm2:135m")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(got); string(b) != string(blob) {
		t.Fatalf("blob %s", got)
	}
	for _, name := range []string{"library/smollm2:135m", "registry.example/library/smollm2:135m"} {
		if p, err := OllamaBlob(root, name); err != nil || p != got {
			t.Errorf("%s: %s, %v", name, p, err)
		}
	}
	// Namespaced models and the default tag.
	ns := writeOllamaStore(t, blob, "hub.example", "someone", "tiny", "latest")
	if _, err := OllamaBlob(ns, "someone/tiny"); err != nil {
		t.Error(err)
	}
	for name, want := range map[string]string{
		"smollm2":                            "no manifest",
		"smollm2:7b":                         "no manifest",
		"../etc:passwd":                      "bad name part",
		"a/b/c/d":                            "want NAME",
		"smollm2:../../x":                    "want NAME",
		"other.example/library/smollm2:135m": "no manifest",
	} {
		if _, err := OllamaBlob(root, name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}
}

func TestOllamaBlobBadManifest(t *testing.T) {
	root := writeOllamaStore(t, []byte("GGUF"), "r.example", "library", "m", "latest")
	path := filepath.Join(root, "manifests", "r.example", "library", "m", "latest")
	for content, want := range map[string]string{
		`{`:             "manifest",
		`{"layers":[]}`: "no layer",
		`{"layers":[{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:../x"}]}`:                            "digest",
		`{"layers":[{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:` + strings.Repeat("a", 64) + `"}]}`: "model blob",
	} {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := OllamaBlob(root, "m"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", content, err, want)
		}
	}
}

func TestResolve(t *testing.T) {
	root := writeOllamaStore(t, []byte("GGUF...."), "r.example", "library", "m", "q4")
	t.Setenv("OLLAMA_MODELS", root)
	ctx, log := context.Background(), slog.New(slog.DiscardHandler)
	p, err := Resolve(ctx, "ollama:m:q4", log)
	if err != nil || !strings.HasPrefix(filepath.Base(p), "sha256-") {
		t.Fatalf("%s, %v", p, err)
	}
	dir := t.TempDir()
	if p, err := Resolve(ctx, dir, log); err != nil || p != dir {
		t.Errorf("folder: %s, %v", p, err)
	}
	if _, err := Resolve(ctx, filepath.Join(dir, "missing.gguf"), log); err == nil || !strings.Contains(err.Error(), "ollama:NAME") {
		t.Errorf("missing: %v", err)
	}
}

// FuzzOllamaBlob: any model name and any manifest bytes give an error or a
// blob that is a file under the store's blobs/, never a path outside it.
func FuzzOllamaBlob(f *testing.F) {
	blob := []byte("GGUF")
	sum := sha256.Sum256(blob)
	digest := "sha256:" + hex.EncodeToString(sum[:])
	good, _ := json.Marshal(map[string]any{"layers": []map[string]any{{"mediaType": OllamaModelMediaType, "digest": digest, "size": len(blob)}}})
	f.Add("m", good)
	f.Add("library/m:latest", good)
	f.Add("r.example/library/m", []byte(`{"layers":[{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:../../x"}]}`))
	f.Add("../m", []byte(`{"layers":null}`))
	f.Add("m:latest", []byte(`[]`))
	f.Fuzz(func(t *testing.T, name string, manifest []byte) {
		root := writeOllamaStore(t, blob, "r.example", "library", "m", "latest")
		if err := os.WriteFile(filepath.Join(root, "manifests", "r.example", "library", "m", "latest"), manifest, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := OllamaBlob(root, name)
		if err != nil {
			return
		}
		rel, rerr := filepath.Rel(filepath.Join(root, "blobs"), got)
		if rerr != nil || rel != filepath.Base(got) || !strings.HasPrefix(rel, "sha256-") {
			t.Fatalf("OllamaBlob(%q) = %s, outside %s/blobs", name, got, root)
		}
		if st, err := os.Stat(got); err != nil || !st.Mode().IsRegular() {
			t.Fatalf("OllamaBlob(%q) = %s, not a file: %v", name, got, err)
		}
	})
}
