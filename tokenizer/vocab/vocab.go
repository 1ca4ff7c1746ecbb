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
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
)

//go:embed qwen3/*.json.gz qwen2/*.json.gz llama3/*.json.gz llama3/chat_template_3.1.jinja
var files embed.FS

// families maps a family name to its folder. Aliases point at the same files.
var families = map[string]string{
	"qwen3":    "qwen3",
	"qwen2":    "qwen2", // Qwen2.5's tokenizer and template (Qwen2 shares the tokenizer)
	"llama3":   "llama3",
	"llama3.1": "llama3", // the same tokenizer with Llama 3.1's tool-calling template
	"llama":    "llama3", // alias of llama3.1: what `clawrl model new --arch llama` writes
}

// withTemplate31 names the families whose tokenizer_config.json gets Llama
// 3.1's chat template. The npm Llama 3 files carry the 3.0 template, which
// renders no tools; 3.1 shares the tokenizer and teaches JSON tool calls.
var withTemplate31 = map[string]bool{"llama3.1": true, "llama": true}

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
	if withTemplate31[family] {
		if tokenizerConfigJSON, err = replaceTemplate(tokenizerConfigJSON, "llama3/chat_template_3.1.jinja"); err != nil {
			return nil, nil, err
		}
	}
	return tokenizerJSON, tokenizerConfigJSON, nil
}

// replaceTemplate sets chat_template in a tokenizer_config.json, keeping
// every other field and their order.
func replaceTemplate(config []byte, name string) ([]byte, error) {
	tmpl, err := files.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("vocab: read embedded %s: %w", name, err)
	}
	var fields []struct {
		key string
		raw json.RawMessage
	}
	dec := json.NewDecoder(bytes.NewReader(config))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("vocab: tokenizer_config.json is not a JSON object")
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("vocab: tokenizer_config.json: %w", err)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("vocab: tokenizer_config.json: %w", err)
		}
		fields = append(fields, struct {
			key string
			raw json.RawMessage
		}{k.(string), raw})
	}
	enc, err := json.Marshal(string(tmpl))
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	out.WriteString("{\n")
	found := false
	for i, f := range fields {
		if f.key == "chat_template" {
			f.raw, found = enc, true
		}
		key, _ := json.Marshal(f.key)
		fmt.Fprintf(&out, "  %s: %s", key, f.raw)
		if i < len(fields)-1 || !found {
			out.WriteString(",")
		}
		out.WriteString("\n")
	}
	if !found {
		fmt.Fprintf(&out, "  \"chat_template\": %s\n", enc)
	}
	out.WriteString("}\n")
	return out.Bytes(), nil
}

// Write writes the family's tokenizer.json and tokenizer_config.json into
// dir (which must exist), as a Hugging Face checkpoint folder holds them.
func Write(family, dir string) error {
	tok, cfg, err := Files(family)
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{"tokenizer.json": tok, "tokenizer_config.json": cfg} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return fmt.Errorf("vocab: write %s: %w", path, err)
		}
	}
	return nil
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
