package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
	"golang.org/x/text/unicode/rangetable"
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

// unicode9 is the set of code points assigned in Unicode 9.0. Hugging Face
// tokenizers normalizes with Unicode 9.0 data (its
// unicode-normalization-alignments crate), so a code point assigned later is,
// to it, a starter that neither decomposes nor composes nor reorders. Go's
// norm package has Unicode 15.0 data.
var unicode9 = rangetable.Assigned("9.0.0")

func (u unicodeForm) normalize(s string) string {
	// Most text is already in the form; checking is cheaper than rewriting.
	// When Go finds s normal, so would Unicode 9.0 (a newer code point only
	// ever splits a run of marks, and a sorted run stays sorted when split).
	if u.form.IsNormalString(s) {
		return s
	}
	// Normalization stability makes Unicode 9.0 and 15.0 agree on every
	// code point 9.0 has, and a newer one is a barrier nothing crosses: so
	// normalize the stretches between newer code points and copy those as
	// they are.
	var out []byte
	start := 0
	for i, r := range s {
		if r < utf8.RuneSelf || r == utf8.RuneError || unicode.Is(unicode9, r) {
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(s)+len(s)/4)
		}
		// Not AppendString: it would normalize across the barrier.
		out = append(out, u.form.String(s[start:i])...)
		out = utf8.AppendRune(out, r)
		start = i + utf8.RuneLen(r)
	}
	if out == nil {
		return u.form.String(s)
	}
	return string(append(out, u.form.String(s[start:])...))
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
