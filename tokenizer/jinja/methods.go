package jinja

import (
	"fmt"
	"strings"
	"unicode"
)

// method returns the bound Python method obj.name when templates may call
// it. Like ImmutableSandboxedEnvironment, it offers no method that mutates a
// list or dict (append, pop, update, …): those are simply absent.
func method(obj any, name string) (Func, bool) {
	switch x := obj.(type) {
	case string:
		return stringMethod(x, name)
	case *Map:
		return mapMethod(x, name)
	case []any:
		return listMethod(x, name)
	case Tuple:
		return listMethod(x, name)
	}
	return nil, false
}

func argErr(name string, want string) error {
	return fmt.Errorf("%w: %s() takes %s", ErrRuntime, name, want)
}

// strArg returns argument i (positional or keyword kw) as a string, or
// ok=false if absent or None.
func strArg(args []any, kwargs *Map, i int, kw string) (string, bool, error) {
	var v any
	found := false
	if i < len(args) {
		v, found = args[i], true
	} else if kwargs != nil && kw != "" {
		v, found = kwargs.Get(kw)
	}
	if !found || v == nil {
		return "", false, nil
	}
	s, ok := v.(string)
	if !ok {
		return "", false, fmt.Errorf("%w: expected a string argument, got %s", ErrRuntime, typeName(v))
	}
	return s, true, nil
}

func intArg(args []any, kwargs *Map, i int, kw string, def int64) (int64, error) {
	var v any
	found := false
	if i < len(args) {
		v, found = args[i], true
	} else if kwargs != nil && kw != "" {
		v, found = kwargs.Get(kw)
	}
	if !found || v == nil {
		return def, nil
	}
	n, ok := toInt(v)
	if !ok {
		return 0, fmt.Errorf("%w: expected an integer argument, got %s", ErrRuntime, typeName(v))
	}
	return n, nil
}

func stringMethod(s string, name string) (Func, bool) {
	var fn Func
	switch name {
	case "startswith", "endswith":
		fn = func(args []any, _ *Map) (any, error) {
			if len(args) < 1 {
				return nil, argErr(name, "at least 1 argument")
			}
			var prefixes []any
			switch p := args[0].(type) {
			case string:
				prefixes = []any{p}
			case Tuple:
				prefixes = p
			default:
				return nil, fmt.Errorf("%w: %s first arg must be str or a tuple of str, not %s", ErrRuntime, name, typeName(args[0]))
			}
			for _, p := range prefixes {
				ps, ok := p.(string)
				if !ok {
					return nil, fmt.Errorf("%w: %s: tuple for %s must only contain str", ErrRuntime, name, name)
				}
				if name == "startswith" && strings.HasPrefix(s, ps) || name == "endswith" && strings.HasSuffix(s, ps) {
					return true, nil
				}
			}
			return false, nil
		}
	case "strip", "lstrip", "rstrip":
		fn = func(args []any, kwargs *Map) (any, error) {
			chars, ok, err := strArg(args, kwargs, 0, "chars")
			if err != nil {
				return nil, err
			}
			return pyStrip(s, name, chars, ok), nil
		}
	case "split", "rsplit":
		fn = func(args []any, kwargs *Map) (any, error) {
			sep, hasSep, err := strArg(args, kwargs, 0, "sep")
			if err != nil {
				return nil, err
			}
			maxsplit, err := intArg(args, kwargs, 1, "maxsplit", -1)
			if err != nil {
				return nil, err
			}
			if hasSep && sep == "" {
				return nil, fmt.Errorf("%w: empty separator", ErrRuntime)
			}
			parts := pySplit(s, sep, hasSep, maxsplit, name == "rsplit")
			out := make([]any, len(parts))
			for i, p := range parts {
				out[i] = p
			}
			return out, nil
		}
	case "splitlines":
		fn = func(args []any, _ *Map) (any, error) {
			keep := len(args) > 0 && truthy(args[0])
			var out []any
			rest := s
			for rest != "" {
				i := strings.IndexAny(rest, "\n\r\v\f\x1c\x1d\x1e\u0085\u2028\u2029")
				if i < 0 {
					out = append(out, rest)
					break
				}
				end := i + 1
				if rest[i] == '\r' && i+1 < len(rest) && rest[i+1] == '\n' {
					end = i + 2
				} else if rest[i] >= 0x80 {
					_, size := decodeRune(rest[i:])
					end = i + size
				}
				if keep {
					out = append(out, rest[:end])
				} else {
					out = append(out, rest[:i])
				}
				rest = rest[end:]
			}
			if out == nil {
				out = []any{}
			}
			return out, nil
		}
	case "replace":
		fn = func(args []any, kwargs *Map) (any, error) {
			if len(args) < 2 {
				return nil, argErr(name, "at least 2 arguments")
			}
			old, ok1 := args[0].(string)
			repl, ok2 := args[1].(string)
			if !ok1 || !ok2 {
				return nil, fmt.Errorf("%w: replace() arguments must be str", ErrRuntime)
			}
			count, err := intArg(args, kwargs, 2, "count", -1)
			if err != nil {
				return nil, err
			}
			return pyReplace(s, old, repl, count), nil
		}
	case "upper":
		fn = func([]any, *Map) (any, error) { return strings.ToUpper(s), nil }
	case "lower":
		fn = func([]any, *Map) (any, error) { return strings.ToLower(s), nil }
	case "title":
		fn = func([]any, *Map) (any, error) { return pyTitle(s), nil }
	case "capitalize":
		fn = func([]any, *Map) (any, error) { return pyCapitalize(s), nil }
	case "find", "rfind", "index", "rindex", "count":
		fn = func(args []any, _ *Map) (any, error) {
			if len(args) < 1 {
				return nil, argErr(name, "at least 1 argument")
			}
			sub, ok := args[0].(string)
			if !ok {
				return nil, fmt.Errorf("%w: %s() argument must be str", ErrRuntime, name)
			}
			if name == "count" {
				if sub == "" {
					return int64(len([]rune(s)) + 1), nil
				}
				return int64(strings.Count(s, sub)), nil
			}
			var i int
			if name == "find" || name == "index" {
				i = strings.Index(s, sub)
			} else {
				i = strings.LastIndex(s, sub)
			}
			if i < 0 {
				if name == "index" || name == "rindex" {
					return nil, fmt.Errorf("%w: substring not found", ErrRuntime)
				}
				return int64(-1), nil
			}
			return int64(len([]rune(s[:i]))), nil
		}
	case "isdigit", "isnumeric", "isdecimal", "isalpha", "isalnum", "isspace", "isupper", "islower":
		fn = func([]any, *Map) (any, error) { return strPredicate(s, name), nil }
	case "join":
		fn = func(args []any, _ *Map) (any, error) {
			if len(args) != 1 {
				return nil, argErr(name, "exactly one argument")
			}
			items, err := iterate(args[0])
			if err != nil {
				return nil, err
			}
			parts := make([]string, len(items))
			for i, it := range items {
				p, ok := it.(string)
				if !ok {
					return nil, fmt.Errorf("%w: sequence item %d: expected str instance, %s found", ErrRuntime, i, typeName(it))
				}
				parts[i] = p
			}
			return strings.Join(parts, s), nil
		}
	case "format":
		fn = func(args []any, kwargs *Map) (any, error) { return pyFormat(s, args, kwargs) }
	default:
		return nil, false
	}
	return fn, true
}

func mapMethod(m *Map, name string) (Func, bool) {
	switch name {
	case "get":
		return func(args []any, _ *Map) (any, error) {
			if len(args) < 1 || len(args) > 2 {
				return nil, argErr("get", "1 or 2 arguments")
			}
			if v, ok := m.Get(args[0]); ok {
				return v, nil
			}
			if len(args) == 2 {
				return args[1], nil
			}
			return nil, nil
		}, true
	case "items":
		return func([]any, *Map) (any, error) {
			out := make([]any, 0, m.Len())
			m.Each(func(k, v any) { out = append(out, Tuple{k, v}) })
			return out, nil
		}, true
	case "keys":
		return func([]any, *Map) (any, error) { return m.Keys(), nil }, true
	case "values":
		return func([]any, *Map) (any, error) { return append([]any(nil), m.vals...), nil }, true
	case "copy":
		return func([]any, *Map) (any, error) {
			c := NewMap()
			m.Each(func(k, v any) { c.Set(k, v) })
			return c, nil
		}, true
	}
	return nil, false
}

func listMethod(l []any, name string) (Func, bool) {
	switch name {
	case "index":
		return func(args []any, _ *Map) (any, error) {
			if len(args) < 1 {
				return nil, argErr("index", "at least 1 argument")
			}
			for i, it := range l {
				if equal(it, args[0]) {
					return int64(i), nil
				}
			}
			return nil, fmt.Errorf("%w: %s is not in list", ErrRuntime, repr(args[0]))
		}, true
	case "count":
		return func(args []any, _ *Map) (any, error) {
			if len(args) != 1 {
				return nil, argErr("count", "exactly one argument")
			}
			n := int64(0)
			for _, it := range l {
				if equal(it, args[0]) {
					n++
				}
			}
			return n, nil
		}, true
	}
	return nil, false
}

// isPySpace is Python's str.isspace for one rune (what split() and strip()
// without arguments remove).
func isPySpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\r', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x1f, 0x85:
		return true
	}
	return r > 0x7f && unicode.IsSpace(r)
}

func pyStrip(s, which, chars string, hasChars bool) string {
	cut := isPySpace
	if hasChars {
		cut = func(r rune) bool { return strings.ContainsRune(chars, r) }
	}
	switch which {
	case "lstrip":
		return strings.TrimLeftFunc(s, cut)
	case "rstrip":
		return strings.TrimRightFunc(s, cut)
	}
	return strings.TrimFunc(s, cut)
}

// pySplit is str.split / str.rsplit.
func pySplit(s, sep string, hasSep bool, maxsplit int64, fromRight bool) []string {
	if !hasSep {
		fields := strings.FieldsFunc(s, isPySpace)
		if maxsplit < 0 || int64(len(fields)) <= maxsplit {
			if fields == nil {
				return []string{}
			}
			return fields
		}
		// With a limit, the remainder keeps its inner whitespace.
		if !fromRight {
			rest := strings.TrimLeftFunc(s, isPySpace)
			var out []string
			for int64(len(out)) < maxsplit {
				i := strings.IndexFunc(rest, isPySpace)
				out = append(out, rest[:i])
				rest = strings.TrimLeftFunc(rest[i:], isPySpace)
			}
			return append(out, rest)
		}
		rest := strings.TrimRightFunc(s, isPySpace)
		var out []string
		for int64(len(out)) < maxsplit {
			i := strings.LastIndexFunc(rest, isPySpace)
			out = append([]string{rest[i+1:]}, out...)
			rest = strings.TrimRightFunc(rest[:i+1], isPySpace)
		}
		return append([]string{rest}, out...)
	}
	if maxsplit < 0 {
		return strings.Split(s, sep)
	}
	if !fromRight {
		return strings.SplitN(s, sep, int(maxsplit)+1)
	}
	var out []string
	rest := s
	for int64(len(out)) < maxsplit {
		i := strings.LastIndex(rest, sep)
		if i < 0 {
			break
		}
		out = append([]string{rest[i+len(sep):]}, out...)
		rest = rest[:i]
	}
	return append([]string{rest}, out...)
}

func pyReplace(s, old, repl string, count int64) string {
	if count < 0 {
		count = -1
	}
	if old == "" {
		// Python inserts repl between every character (and at both ends).
		runes := []rune(s)
		var b strings.Builder
		n := int64(0)
		for i := 0; i <= len(runes); i++ {
			if count < 0 || n < count {
				b.WriteString(repl)
				n++
			}
			if i < len(runes) {
				b.WriteRune(runes[i])
			}
		}
		return b.String()
	}
	return strings.Replace(s, old, repl, int(count))
}

func pyTitle(s string) string {
	var b strings.Builder
	prevCased := false
	for _, r := range s {
		if unicode.IsLetter(r) {
			if prevCased {
				b.WriteRune(unicode.ToLower(r))
			} else {
				b.WriteRune(unicode.ToTitle(r))
			}
			prevCased = true
		} else {
			b.WriteRune(r)
			prevCased = false
		}
	}
	return b.String()
}

func pyCapitalize(s string) string {
	runes := []rune(s)
	for i, r := range runes {
		if i == 0 {
			runes[i] = unicode.ToTitle(r)
		} else {
			runes[i] = unicode.ToLower(r)
		}
	}
	return string(runes)
}

func strPredicate(s, name string) bool {
	if s == "" {
		return false
	}
	hasCased := false
	for _, r := range s {
		switch name {
		case "isdigit", "isnumeric", "isdecimal":
			if !unicode.IsDigit(r) {
				return false
			}
		case "isalpha":
			if !unicode.IsLetter(r) {
				return false
			}
		case "isalnum":
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				return false
			}
		case "isspace":
			if !isPySpace(r) {
				return false
			}
		case "isupper":
			if unicode.IsLower(r) {
				return false
			}
			hasCased = hasCased || unicode.IsUpper(r)
		case "islower":
			if unicode.IsUpper(r) {
				return false
			}
			hasCased = hasCased || unicode.IsLower(r)
		}
	}
	if name == "isupper" || name == "islower" {
		return hasCased
	}
	return true
}

// pyFormat is str.format with {} / {0} / {name} fields and no format specs
// beyond an empty one.
func pyFormat(s string, args []any, kwargs *Map) (any, error) {
	var b strings.Builder
	auto := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '}' {
			if i+1 < len(s) && s[i+1] == '}' {
				i++
			}
			b.WriteByte('}')
			continue
		}
		if c != '{' {
			b.WriteByte(c)
			continue
		}
		if i+1 < len(s) && s[i+1] == '{' {
			b.WriteByte('{')
			i++
			continue
		}
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return nil, fmt.Errorf("%w: single '{' encountered in format string", ErrRuntime)
		}
		field := s[i+1 : i+end]
		i += end
		if k := strings.IndexAny(field, ":!"); k >= 0 {
			if field[k:] != ":" {
				return nil, fmt.Errorf("%w: format spec %q not supported", ErrRuntime, field[k:])
			}
			field = field[:k]
		}
		var v any
		switch {
		case field == "":
			if auto >= len(args) {
				return nil, fmt.Errorf("%w: replacement index %d out of range", ErrRuntime, auto)
			}
			v = args[auto]
			auto++
		case field[0] >= '0' && field[0] <= '9':
			n := 0
			for _, d := range field {
				if d < '0' || d > '9' {
					return nil, fmt.Errorf("%w: bad format field %q", ErrRuntime, field)
				}
				n = n*10 + int(d-'0')
				if n > len(args) {
					break
				}
			}
			if n >= len(args) {
				return nil, fmt.Errorf("%w: replacement index %d out of range", ErrRuntime, n)
			}
			v = args[n]
		default:
			var ok bool
			if v, ok = kwargs.Get(field); !ok {
				return nil, fmt.Errorf("%w: format key %q missing", ErrRuntime, field)
			}
		}
		b.WriteString(toStr(v))
	}
	return b.String(), nil
}
