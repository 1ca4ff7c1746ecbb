// Package modelref turns what a user passes as --model into a local path
// the model loader reads: a Hugging Face folder, a GGUF file, or an Ollama
// model by name (ollama:NAME[:TAG], read from Ollama's local store).
package modelref

import (
	"fmt"
	"os"
	"strings"
)

// OllamaPrefix starts a --model value that names an Ollama model.
const OllamaPrefix = "ollama:"

// Resolve returns the local path of spec: a folder or file as given, or the
// GGUF blob of "ollama:NAME[:TAG]".
func Resolve(spec string) (string, error) {
	if name, ok := strings.CutPrefix(spec, OllamaPrefix); ok {
		root, err := OllamaDir()
		if err != nil {
			return "", err
		}
		return OllamaBlob(root, name)
	}
	if _, err := os.Stat(spec); err != nil {
		return "", fmt.Errorf("model %s: %w (want a Hugging Face folder, a .gguf file or ollama:NAME[:TAG])", spec, err)
	}
	return spec, nil
}
