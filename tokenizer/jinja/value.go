package jinja

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Values a template sees are plain Go values, mirroring the Python objects
// jinja2 would hold:
//
//	nil          None
//	bool         bool
//	int64        int (other Go integer types are converted on the way in)
//	float64      float
//	string       str
//	[]any        list
//	Tuple        tuple (what items() yields)
//	*Map         dict, keeping insertion order as Python 3 does
//	Undefined    jinja2.Undefined
//	*Namespace   namespace()
//	Func         a callable (globals such as raise_exception, macros)

// Undefined is jinja2's default Undefined: falsy, renders as "", iterates as
// empty, and fails on attribute access, calls and arithmetic.
type Undefined struct {
	// Name says what was looked up, for the error message.
	Name string
}

func (u Undefined) err() error {
	if u.Name == "" {
		return fmt.Errorf("%w: value is undefined", ErrUndefined)
	}
	return fmt.Errorf("%w: %s is undefined", ErrUndefined, u.Name)
}

// Tuple is a Python tuple. It behaves like a list but prints with parentheses.
type Tuple []any

// Markup is a string marked safe (the |safe and |escape filters make one).
// As in markupsafe, adding a plain string to it escapes that string.
type Markup string

// Generator is a lazy, single-use iterator: what jinja2's map, select,
// selectattr, reject, rejectattr, unique, items and reverse filters return.
// It is always truthy, has no length, cannot be serialised, and yields
// nothing the second time it is iterated — all as in Python.
type Generator struct {
	produce func() ([]any, error)
	used    bool
}

func newGenerator(produce func() ([]any, error)) *Generator { return &Generator{produce: produce} }

func (g *Generator) drain() ([]any, error) {
	if g.used {
		return nil, nil
	}
	g.used = true
	return g.produce()
}

// htmlEscape is markupsafe.escape.
func htmlEscape(s string) string {
	return htmlEscaper.Replace(s)
}

var htmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;")

// Func is a callable value: a global function, a macro or a bound method.
type Func func(args []any, kwargs *Map) (any, error)

// Namespace is the mutable object namespace() creates; it is the only value
// a template may change after creating it.
type Namespace struct{ attrs *Map }

// Map is an ordered dictionary, like a Python 3 dict: iteration, items() and
// tojson follow insertion order, so a tool schema renders in the client's
// key order.
type Map struct {
	keys  []any
	vals  []any
	index map[any]int
}

// NewMap returns an empty map.
func NewMap() *Map { return &Map{index: map[any]int{}} }

// Set sets key to value, keeping the key's first position.
func (m *Map) Set(key, value any) {
	key = hashKey(key)
	if i, ok := m.index[key]; ok {
		m.vals[i] = value
		return
	}
	m.index[key] = len(m.keys)
	m.keys = append(m.keys, key)
	m.vals = append(m.vals, value)
}

// Get returns the value of key.
func (m *Map) Get(key any) (any, bool) {
	if m == nil {
		return nil, false
	}
	k := hashKey(key)
	if !comparable(k) {
		return nil, false
	}
	i, ok := m.index[k]
	if !ok {
		return nil, false
	}
	return m.vals[i], true
}

// Len is the number of keys.
func (m *Map) Len() int {
	if m == nil {
		return 0
	}
	return len(m.keys)
}

// Keys returns the keys in insertion order.
func (m *Map) Keys() []any { return append([]any(nil), m.keys...) }

// Each calls fn for each entry in order.
func (m *Map) Each(fn func(k, v any)) {
	for i, k := range m.keys {
		fn(k, m.vals[i])
	}
}

// hashKey folds Python-equal keys together (True == 1 == 1.0) as far as Go
// map keys allow.
func hashKey(k any) any {
	switch v := k.(type) {
	case bool:
		if v {
			return int64(1)
		}
		return int64(0)
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			return int64(v)
		}
	case int:
		return int64(v)
	}
	return k
}

func comparable(k any) bool {
	switch k.(type) {
	case nil, bool, int64, float64, string:
		return true
	}
	return false
}

// FromGo converts common Go values (ints of any width, map[string]any,
// []string, …) into template values. Maps without order are sorted by key.
func FromGo(v any) any {
	switch x := v.(type) {
	case nil, bool, int64, float64, string, *Map, Undefined, *Namespace, Func, Tuple, Markup, *Generator:
		return x
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case uint32:
		return int64(x)
	case float32:
		return float64(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = FromGo(e)
		}
		return out
	case []string:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = e
		}
		return out
	case []*Map:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = e
		}
		return out
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		m := NewMap()
		for _, k := range keys {
			m.Set(k, FromGo(x[k]))
		}
		return m
	case func(args []any, kwargs *Map) (any, error):
		return Func(x)
	}
	return fmt.Sprintf("<%T>", v)
}

// truthy is Python's bool(x).
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case int64:
		return x != 0
	case float64:
		return x != 0
	case string:
		return x != ""
	case Markup:
		return x != ""
	case []any:
		return len(x) > 0
	case Tuple:
		return len(x) > 0
	case *Map:
		return x.Len() > 0
	case Undefined:
		return false
	}
	return true
}

// toStr is Python's str(x) as jinja2 renders it ({{ x }}).
func toStr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case string:
		return x
	case Markup:
		return string(x)
	case Undefined:
		return ""
	}
	return repr(v)
}

// repr is Python's repr(x).
func repr(v any) string {
	var b strings.Builder
	writeRepr(&b, v)
	return b.String()
}

func writeRepr(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("None")
	case bool:
		if x {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		b.WriteString(pyFloat(x))
	case string:
		b.WriteString(pyStrRepr(x))
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, e)
		}
		b.WriteByte(']')
	case Tuple:
		b.WriteByte('(')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, e)
		}
		if len(x) == 1 {
			b.WriteByte(',')
		}
		b.WriteByte(')')
	case *Map:
		b.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, k)
			b.WriteString(": ")
			writeRepr(b, x.vals[i])
		}
		b.WriteByte('}')
	case Undefined:
		b.WriteString("Undefined")
	case *Namespace:
		b.WriteString("<Namespace ")
		writeRepr(b, x.attrs)
		b.WriteByte('>')
	case Func:
		b.WriteString("<function>")
	case Markup:
		b.WriteString("Markup(")
		b.WriteString(pyStrRepr(string(x)))
		b.WriteByte(')')
	case *Generator:
		b.WriteString("<generator object>")
	default:
		fmt.Fprintf(b, "%v", x)
	}
}

// pyFloat formats a float the way Python's repr does: the shortest string
// that round-trips, in fixed notation between 1e-4 and 1e16, always with a
// decimal point or exponent.
func pyFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, expStr, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(expStr)
	neg := strings.HasPrefix(mant, "-")
	mant = strings.TrimPrefix(mant, "-")
	digits := strings.Replace(mant, ".", "", 1)
	var out string
	if exp < -4 || exp >= 16 {
		out = digits[:1]
		if len(digits) > 1 {
			out += "." + digits[1:]
		}
		sign := "+"
		if exp < 0 {
			sign = "-"
			exp = -exp
		}
		out += fmt.Sprintf("e%s%02d", sign, exp)
	} else if exp < 0 {
		out = "0." + strings.Repeat("0", -exp-1) + digits
	} else if len(digits) <= exp+1 {
		out = digits + strings.Repeat("0", exp+1-len(digits)) + ".0"
	} else {
		out = digits[:exp+1] + "." + digits[exp+1:]
	}
	if neg {
		out = "-" + out
	}
	return out
}

// pyStrRepr is repr() of a Python str: single quotes unless the string holds
// a single quote and no double quote.
func pyStrRepr(s string) string {
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	var b strings.Builder
	b.WriteByte(quote)
	for _, r := range s {
		switch {
		case r == rune(quote) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r == utf8.RuneError:
			b.WriteRune(r)
		case !isPrintable(r):
			switch {
			case r <= 0xff:
				fmt.Fprintf(&b, `\x%02x`, r)
			case r <= 0xffff:
				fmt.Fprintf(&b, `\u%04x`, r)
			default:
				fmt.Fprintf(&b, `\U%08x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(quote)
	return b.String()
}

// typeName names a value's Python type, for error messages.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case int64:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case []any:
		return "list"
	case Tuple:
		return "tuple"
	case *Map:
		return "dict"
	case Undefined:
		return "Undefined"
	case *Namespace:
		return "Namespace"
	case Func:
		return "function"
	case Markup:
		return "Markup"
	case *Generator:
		return "generator"
	}
	return fmt.Sprintf("%T", v)
}

// isPrintable is Python's str.isprintable for one rune: what repr() leaves
// unescaped.
func isPrintable(r rune) bool {
	if r == ' ' {
		return true
	}
	return unicode.IsPrint(r)
}
