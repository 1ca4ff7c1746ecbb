package modelref

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Ollama keeps pulled models in a content-addressed store:
//
//	manifests/<registry>/<namespace>/<model>/<tag>   JSON manifest
//	blobs/sha256-<hex>                              layers (the model is a GGUF)
//
// The registry is a host name chosen at pull time; it is read from the
// directory tree here, never assumed.

// OllamaModelMediaType marks the manifest layer that is the model's GGUF.
const OllamaModelMediaType = "application/vnd.ollama.image.model"

// OllamaDir is Ollama's store: $OLLAMA_MODELS, else ~/.ollama/models.
func OllamaDir() (string, error) {
	if d := os.Getenv("OLLAMA_MODELS"); d != "" {
		return d, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("ollama store: %w", err)
	}
	return filepath.Join(home, ".ollama", "models"), nil
}

type ollamaManifest struct {
	Layers []struct {
		MediaType string `json:"mediaType"`
		Digest    string `json:"digest"`
		Size      int64  `json:"size"`
	} `json:"layers"`
}

var (
	ollamaNamePart = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	sha256Digest   = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
)

// OllamaBlob returns the GGUF blob of the model name ("NAME[:TAG]",
// "NAMESPACE/NAME[:TAG]" or "REGISTRY/NAMESPACE/NAME[:TAG]"; namespace
// library and tag latest by default) in the store at root.
func OllamaBlob(root, name string) (string, error) {
	model, tag, hasTag := strings.Cut(name, ":")
	if !hasTag || tag == "" {
		tag = "latest"
	}
	parts := strings.Split(model, "/")
	if len(parts) > 3 || !ollamaNamePart.MatchString(tag) {
		return "", fmt.Errorf("ollama model %q: want NAME[:TAG], NAMESPACE/NAME[:TAG] or REGISTRY/NAMESPACE/NAME[:TAG]", name)
	}
	for _, p := range parts {
		if !ollamaNamePart.MatchString(p) {
			return "", fmt.Errorf("ollama model %q: bad name part %q", name, p)
		}
	}
	if len(parts) == 1 {
		parts = []string{"library", parts[0]}
	}
	manifests := filepath.Join(root, "manifests")
	var candidates []string
	if len(parts) == 3 {
		candidates = []string{filepath.Join(append([]string{manifests}, append(parts, tag)...)...)}
	} else {
		registries, err := os.ReadDir(manifests)
		if err != nil {
			return "", fmt.Errorf("ollama model %q: no Ollama store at %s (set OLLAMA_MODELS): %w", name, root, err)
		}
		for _, r := range registries {
			if r.IsDir() {
				candidates = append(candidates, filepath.Join(manifests, r.Name(), parts[0], parts[1], tag))
			}
		}
	}
	var manifestPath string
	for _, c := range candidates {
		if st, err := os.Stat(c); err == nil && st.Mode().IsRegular() {
			if manifestPath != "" {
				return "", fmt.Errorf("ollama model %q: found in more than one registry (%s, %s); name the registry", name, manifestPath, c)
			}
			manifestPath = c
		}
	}
	if manifestPath == "" {
		return "", fmt.Errorf("ollama model %q: no manifest for %s/%s tag %s under %s (is it pulled? `ollama list` shows what is)", name, parts[len(parts)-2], parts[len(parts)-1], tag, manifests)
	}
	raw, err := os.ReadFile(manifestPath)
	if err != nil {
		return "", fmt.Errorf("ollama model %q: %w", name, err)
	}
	var m ollamaManifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", fmt.Errorf("ollama model %q: manifest %s: %w", name, manifestPath, err)
	}
	for _, l := range m.Layers {
		if l.MediaType != OllamaModelMediaType {
			continue
		}
		if !sha256Digest.MatchString(l.Digest) {
			return "", fmt.Errorf("ollama model %q: manifest %s: model layer digest %q: want sha256:<64 hex>", name, manifestPath, l.Digest)
		}
		blob := filepath.Join(root, "blobs", strings.Replace(l.Digest, ":", "-", 1))
		st, err := os.Stat(blob)
		if err != nil {
			return "", fmt.Errorf("ollama model %q: model blob: %w", name, err)
		}
		if l.Size > 0 && st.Size() != l.Size {
			return "", fmt.Errorf("ollama model %q: blob %s has %d bytes, the manifest says %d", name, blob, st.Size(), l.Size)
		}
		return blob, nil
	}
	return "", fmt.Errorf("ollama model %q: manifest %s has no layer of type %s", name, manifestPath, OllamaModelMediaType)
}
