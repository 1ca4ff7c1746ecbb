// Package modelref turns what a user passes as --model into a local path
// the model loader reads: a Hugging Face folder, a GGUF file, an Ollama
// model by name (ollama:NAME[:TAG], read from Ollama's local store), or a
// model clawrl knows by name (smollm2), fetched once into its cache.
package modelref

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
)

// OllamaPrefix starts a --model value that names an Ollama model.
const OllamaPrefix = "ollama:"

// Resolve returns the local path of spec: a folder or file as given, the
// GGUF blob of "ollama:NAME[:TAG]", or the cached GGUF of a known model
// (pulled first when it is not cached yet). A path that exists wins over a
// known name.
func Resolve(ctx context.Context, spec string, log *slog.Logger) (string, error) {
	if name, ok := strings.CutPrefix(spec, OllamaPrefix); ok {
		root, err := OllamaDir()
		if err != nil {
			return "", err
		}
		return OllamaBlob(root, name)
	}
	_, err := os.Stat(spec)
	if err == nil {
		return spec, nil
	}
	if k, ok := KnownModels[spec]; ok {
		return k.Pull(ctx, "", log)
	}
	return "", fmt.Errorf("model %s: %w (want a Hugging Face folder, a .gguf file, ollama:NAME[:TAG] or one of %s)", spec, err, strings.Join(KnownNames(), ", "))
}
