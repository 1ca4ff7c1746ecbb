package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// A normalizer rewrites a piece of text before it is split into words.
type normalizer interface {
	normalize(s string) string
}

func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

func parseNormalizer(raw json.RawMessage) (normalizer, error) {
	if isNull(raw) {
		return nil, nil
	}
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, fmt.Errorf("normalizer: %w", err)
	}
	switch head.Type {
	case "NFC":
		return unicodeForm{norm.NFC}, nil
	case "NFD":
		return unicodeForm{norm.NFD}, nil
	case "NFKC":
		return unicodeForm{norm.NFKC}, nil
	case "NFKD":
		return unicodeForm{norm.NFKD}, nil
	case "Sequence":
		var seq struct {
			Normalizers []json.RawMessage `json:"normalizers"`
		}
		if err := json.Unmarshal(raw, &seq); err != nil {
			return nil, fmt.Errorf("normalizer Sequence: %w", err)
		}
		var out sequenceNormalizer
		for i, n := range seq.Normalizers {
			step, err := parseNormalizer(n)
			if err != nil {
				return nil, fmt.Errorf("normalizer Sequence[%d]: %w", i, err)
			}
			if step != nil {
				out = append(out, step)
			}
		}
		return out, nil
	case "Prepend":
		var p struct {
			Prepend string `json:"prepend"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, fmt.Errorf("normalizer Prepend: %w", err)
		}
		return prependNormalizer(p.Prepend), nil
	case "Replace":
		var r struct {
			Pattern patternJSON `json:"pattern"`
			Content string      `json:"content"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, fmt.Errorf("normalizer Replace: %w", err)
		}
		if r.Pattern.String == nil {
			return nil, fmt.Errorf("normalizer Replace: only String patterns are supported")
		}
		return replaceNormalizer{old: *r.Pattern.String, new: r.Content}, nil
	default:
		return nil, fmt.Errorf("normalizer: unsupported type %q", head.Type)
	}
}

type unicodeForm struct{ form norm.Form }

func (u unicodeForm) normalize(s string) string {
	// Most text is already in the form; checking is cheaper than rewriting.
	if u.form.IsNormalString(s) {
		return s
	}
	return u.form.String(s)
}

type sequenceNormalizer []normalizer

func (seq sequenceNormalizer) normalize(s string) string {
	for _, n := range seq {
		s = n.normalize(s)
	}
	return s
}

type prependNormalizer string

func (p prependNormalizer) normalize(s string) string {
	if s == "" {
		return s
	}
	return string(p) + s
}

type replaceNormalizer struct{ old, new string }

func (r replaceNormalizer) normalize(s string) string {
	if r.old == "" {
		return s
	}
	return strings.ReplaceAll(s, r.old, r.new)
}
