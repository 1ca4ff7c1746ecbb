package jinja

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// FromJSON decodes JSON into template values the way Python's json.loads
// does: objects become *Map in document order, integers int64, other numbers
// float64.
func FromJSON(data []byte) (any, error) {
	d := jsonDecoder{data: data}
	v, err := d.value(0)
	if err != nil {
		return nil, fmt.Errorf("decode JSON: %w", err)
	}
	d.skipSpace()
	if d.pos != len(d.data) {
		return nil, fmt.Errorf("decode JSON: trailing data at offset %d", d.pos)
	}
	return v, nil
}

// jsonDecoder is a small recursive-descent JSON parser: it keeps object key
// order, which encoding/json's map decoding loses, and is several times
// faster than walking json.Decoder tokens.
type jsonDecoder struct {
	data []byte
	pos  int
}

func (d *jsonDecoder) skipSpace() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *jsonDecoder) errorf(format string, args ...any) error {
	return fmt.Errorf("offset %d: %s", d.pos, fmt.Sprintf(format, args...))
}

func (d *jsonDecoder) value(depth int) (any, error) {
	if depth > 10000 {
		return nil, d.errorf("nesting too deep")
	}
	d.skipSpace()
	if d.pos >= len(d.data) {
		return nil, d.errorf("unexpected end of input")
	}
	switch c := d.data[d.pos]; {
	case c == '{':
		d.pos++
		m := NewMap()
		d.skipSpace()
		if d.pos < len(d.data) && d.data[d.pos] == '}' {
			d.pos++
			return m, nil
		}
		for {
			d.skipSpace()
			if d.pos >= len(d.data) || d.data[d.pos] != '"' {
				return nil, d.errorf("expected object key")
			}
			k, err := d.str()
			if err != nil {
				return nil, err
			}
			d.skipSpace()
			if d.pos >= len(d.data) || d.data[d.pos] != ':' {
				return nil, d.errorf("expected ':'")
			}
			d.pos++
			v, err := d.value(depth + 1)
			if err != nil {
				return nil, err
			}
			m.Set(k, v)
			d.skipSpace()
			if d.pos < len(d.data) && d.data[d.pos] == ',' {
				d.pos++
				continue
			}
			if d.pos < len(d.data) && d.data[d.pos] == '}' {
				d.pos++
				return m, nil
			}
			return nil, d.errorf("expected ',' or '}'")
		}
	case c == '[':
		d.pos++
		out := []any{}
		d.skipSpace()
		if d.pos < len(d.data) && d.data[d.pos] == ']' {
			d.pos++
			return out, nil
		}
		for {
			v, err := d.value(depth + 1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
			d.skipSpace()
			if d.pos < len(d.data) && d.data[d.pos] == ',' {
				d.pos++
				continue
			}
			if d.pos < len(d.data) && d.data[d.pos] == ']' {
				d.pos++
				return out, nil
			}
			return nil, d.errorf("expected ',' or ']'")
		}
	case c == '"':
		return d.str()
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range []struct {
			text string
			v    any
		}{{"true", true}, {"false", false}, {"null", nil}} {
			if bytes.HasPrefix(d.data[d.pos:], []byte(lit.text)) {
				d.pos += len(lit.text)
				return lit.v, nil
			}
		}
		return nil, d.errorf("invalid literal")
	case c == '-' || c >= '0' && c <= '9':
		start := d.pos
		isFloat := false
		for d.pos < len(d.data) {
			c := d.data[d.pos]
			if c >= '0' && c <= '9' || c == '-' || c == '+' {
				d.pos++
			} else if c == '.' || c == 'e' || c == 'E' {
				isFloat = true
				d.pos++
			} else {
				break
			}
		}
		text := string(d.data[start:d.pos])
		if !json.Valid(d.data[start:d.pos]) {
			return nil, d.errorf("invalid number %q", text)
		}
		if !isFloat {
			if n, err := strconv.ParseInt(text, 10, 64); err == nil {
				return n, nil
			}
		}
		f, err := strconv.ParseFloat(text, 64)
		if err != nil && !isRangeErr(err) {
			return nil, d.errorf("invalid number %q", text)
		}
		return f, nil
	}
	return nil, d.errorf("unexpected character %q", d.data[d.pos])
}

// str decodes the string starting at d.pos.
func (d *jsonDecoder) str() (string, error) {
	start := d.pos
	d.pos++
	plain := true
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		switch {
		case c == '"':
			d.pos++
			if plain {
				return string(d.data[start+1 : d.pos-1]), nil
			}
			var s string
			if err := json.Unmarshal(d.data[start:d.pos], &s); err != nil {
				return "", d.errorf("invalid string: %v", err)
			}
			return s, nil
		case c == '\\':
			plain = false
			d.pos += 2
		case c < 0x20:
			return "", d.errorf("control character in string")
		default:
			if c >= utf8.RuneSelf {
				plain = false // let encoding/json replace invalid UTF-8 as Python would reject it
			}
			d.pos++
		}
	}
	return "", d.errorf("unterminated string")
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// jsonOptions are the arguments of transformers' tojson filter, which is
// json.dumps(x, ensure_ascii=False, indent=indent, separators=separators,
// sort_keys=sort_keys).
type jsonOptions struct {
	ensureASCII bool
	indent      string
	hasIndent   bool
	itemSep     string
	keySep      string
	sortKeys    bool
}

// ToJSON serialises v exactly like Python's json.dumps(v, ensure_ascii=False)
// with the default separators (", " and ": ").
func ToJSON(v any) (string, error) {
	var b strings.Builder
	err := writeJSON(&b, v, jsonOptions{itemSep: ", ", keySep: ": "}, 0)
	return b.String(), err
}

func writeJSON(b *strings.Builder, v any, o jsonOptions, level int) error {
	newline := func(level int) {
		if o.hasIndent {
			b.WriteByte('\n')
			for i := 0; i < level; i++ {
				b.WriteString(o.indent)
			}
		}
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		switch {
		case math.IsNaN(x):
			b.WriteString("NaN")
		case math.IsInf(x, 1):
			b.WriteString("Infinity")
		case math.IsInf(x, -1):
			b.WriteString("-Infinity")
		default:
			b.WriteString(pyFloat(x))
		}
	case string:
		writeJSONString(b, x, o.ensureASCII)
	case Markup:
		writeJSONString(b, string(x), o.ensureASCII)
	case []any, Tuple:
		items, _ := iterate(x)
		if len(items) == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteByte('[')
		for i, it := range items {
			if i > 0 {
				b.WriteString(o.itemSep)
			}
			newline(level + 1)
			if err := writeJSON(b, it, o, level+1); err != nil {
				return err
			}
		}
		newline(level)
		b.WriteByte(']')
	case *Map:
		if x.Len() == 0 {
			b.WriteString("{}")
			return nil
		}
		keys := x.Keys()
		if o.sortKeys {
			if err := sortValues(keys); err != nil {
				return err
			}
		}
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString(o.itemSep)
			}
			newline(level + 1)
			var ks string
			switch kk := k.(type) {
			case string:
				ks = kk
			case nil:
				ks = "null"
			case bool:
				ks = map[bool]string{true: "true", false: "false"}[kk]
			case int64:
				ks = strconv.FormatInt(kk, 10)
			case float64:
				ks = pyFloat(kk)
			default:
				return fmt.Errorf("%w: keys must be str, int, float, bool or None, not %s", ErrRuntime, typeName(k))
			}
			writeJSONString(b, ks, o.ensureASCII)
			b.WriteString(o.keySep)
			val, _ := x.Get(k)
			if err := writeJSON(b, val, o, level+1); err != nil {
				return err
			}
		}
		newline(level)
		b.WriteByte('}')
	case *Namespace:
		return fmt.Errorf("%w: Object of type Namespace is not JSON serializable", ErrRuntime)
	default:
		return fmt.Errorf("%w: Object of type %s is not JSON serializable", ErrRuntime, typeName(v))
	}
	return nil
}

// writeJSONString escapes like Python's json: only '"', '\\' and control
// characters (and everything non-ASCII when ensureASCII is set).
func writeJSONString(b *strings.Builder, s string, ensureASCII bool) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '"':
				b.WriteString(`\"`)
			case '\\':
				b.WriteString(`\\`)
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			case '\t':
				b.WriteString(`\t`)
			case '\b':
				b.WriteString(`\b`)
			case '\f':
				b.WriteString(`\f`)
			default:
				if c < 0x20 {
					fmt.Fprintf(b, `\u%04x`, c)
				} else {
					b.WriteByte(c)
				}
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if ensureASCII {
			if r >= 0x10000 {
				r -= 0x10000
				fmt.Fprintf(b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			} else {
				fmt.Fprintf(b, `\u%04x`, r)
			}
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('"')
}
