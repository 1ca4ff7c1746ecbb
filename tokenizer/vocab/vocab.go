// Package vocab embeds real Hugging Face tokenizer files (tokenizer.json and
// tokenizer_config.json, gzipped) for the model families clawrl can create,
// so `clawrl model new` writes a real tokenizer into a fresh checkpoint
// without a model hub. See README.md for where the files come from and their
// licences; fetch.sh re-fetches them.
package vocab

import (
	"bytes"
	"compress/gzip"
	"embed"
	"fmt"
	"io"
	"sort"
)

//go:embed qwen3/*.json.gz qwen2/*.json.gz llama3/*.json.gz
var files embed.FS

// families maps a family name to its folder. Aliases point at the same files.
var families = map[string]string{
	"qwen3":  "qwen3",
	"qwen2":  "qwen2", // Qwen2.5's tokenizer and template (Qwen2 shares the tokenizer)
	"llama3": "llama3",
	"llama":  "llama3",
}

// Families lists the family names Files accepts, sorted.
func Families() []string {
	names := make([]string, 0, len(families))
	for name := range families {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// Files returns the uncompressed tokenizer.json and tokenizer_config.json of a
// model family ("qwen3", "qwen2", "llama3" or its alias "llama"). Each call
// returns fresh slices the caller may keep or modify.
func Files(family string) (tokenizerJSON, tokenizerConfigJSON []byte, err error) {
	dir, ok := families[family]
	if !ok {
		return nil, nil, fmt.Errorf("vocab: unknown model family %q (have %v)", family, Families())
	}
	tokenizerJSON, err = gunzip(dir + "/tokenizer.json.gz")
	if err != nil {
		return nil, nil, err
	}
	tokenizerConfigJSON, err = gunzip(dir + "/tokenizer_config.json.gz")
	if err != nil {
		return nil, nil, err
	}
	return tokenizerJSON, tokenizerConfigJSON, nil
}

func gunzip(name string) ([]byte, error) {
	compressed, err := files.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("vocab: read embedded %s: %w", name, err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(compressed))
	if err != nil {
		return nil, fmt.Errorf("vocab: gunzip %s: %w", name, err)
	}
	defer zr.Close()
	out, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("vocab: gunzip %s: %w", name, err)
	}
	return out, nil
}
