package jinja

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

var decodeRune = utf8.DecodeRuneInString

// kw returns keyword argument name or positional argument i.
func kw(args []any, kwargs *Map, i int, name string) (any, bool) {
	if kwargs != nil {
		if v, ok := kwargs.Get(name); ok {
			return v, true
		}
	}
	if i >= 0 && i < len(args) {
		return args[i], true
	}
	return nil, false
}

func (r *renderer) applyFilter(f *filterExpr, x any, fr *frame) (any, error) {
	args, kwargs, err := r.evalArgs(f.args, f.kwargs, fr)
	if err != nil {
		return nil, err
	}
	v, err := r.filter(f.name, x, args, kwargs)
	if err != nil {
		return nil, fmt.Errorf("filter %s: %w", f.name, err)
	}
	return v, nil
}

// filter applies the named jinja2 filter (with transformers' tojson).
func (r *renderer) filter(name string, x any, args []any, kwargs *Map) (any, error) {
	if m, ok := x.(Markup); ok {
		switch name {
		case "safe", "string", "e", "escape":
			return m, nil
		}
		x = string(m) // other filters return plain strings here
	}
	// Filters that accept Undefined without failing.
	switch name {
	case "default", "d":
		def, _ := kw(args, kwargs, 0, "default_value")
		if def == nil && len(args) == 0 && kwargs == nil {
			def = ""
		}
		boolean, _ := kw(args, kwargs, 1, "boolean")
		if _, undef := x.(Undefined); undef || (truthy(boolean) && !truthy(x)) {
			return def, nil
		}
		return x, nil
	case "length", "count":
		switch v := x.(type) {
		case string:
			return int64(utf8.RuneCountInString(v)), nil
		case []any:
			return int64(len(v)), nil
		case Tuple:
			return int64(len(v)), nil
		case *Map:
			return int64(v.Len()), nil
		case Undefined:
			return int64(0), nil
		}
		return nil, fmt.Errorf("%w: object of type '%s' has no len()", ErrRuntime, typeName(x))
	case "string":
		return toStr(x), nil
	case "safe":
		return Markup(toStr(x)), nil
	case "list":
		items, err := iterate(x)
		if err != nil {
			return nil, err
		}
		return append([]any{}, items...), nil
	case "trim":
		chars, hasChars, err := strArg(args, kwargs, 0, "chars")
		if err != nil {
			return nil, err
		}
		return pyStrip(toStr(x), "strip", chars, hasChars), nil
	case "upper":
		return strings.ToUpper(toStr(x)), nil
	case "lower":
		return strings.ToLower(toStr(x)), nil
	case "capitalize":
		return pyCapitalize(toStr(x)), nil
	case "title":
		return pyTitle(toStr(x)), nil
	case "tojson":
		return tojson(x, args, kwargs)
	}
	if u, ok := x.(Undefined); ok && name != "join" && name != "map" && name != "select" && name != "reject" &&
		name != "selectattr" && name != "rejectattr" && name != "unique" && name != "items" {
		return nil, u.err()
	}
	switch name {
	case "replace":
		if len(args) < 2 {
			return nil, fmt.Errorf("%w: replace needs old and new", ErrRuntime)
		}
		count, err := intArg(args, kwargs, 2, "count", -1)
		if err != nil {
			return nil, err
		}
		return pyReplace(toStr(x), toStr(args[0]), toStr(args[1]), count), nil
	case "join":
		items, err := iterate(x)
		if err != nil {
			return nil, err
		}
		sep := ""
		if v, ok := kw(args, kwargs, 0, "d"); ok {
			sep = toStr(v)
		}
		attr, hasAttr := kw(args, kwargs, 1, "attribute")
		parts := make([]string, len(items))
		for i, it := range items {
			if hasAttr {
				v, err := attrPath(it, attr)
				if err != nil {
					return nil, err
				}
				it = v
			}
			parts[i] = toStr(it)
		}
		return strings.Join(parts, sep), nil
	case "first", "last":
		if _, ok := x.(*Generator); ok && name == "last" {
			return nil, fmt.Errorf("%w: 'generator' object is not reversible", ErrRuntime)
		}
		items, err := iterate(x)
		if err != nil {
			return nil, err
		}
		if len(items) == 0 {
			return Undefined{Name: "no " + name + " item, sequence was empty"}, nil
		}
		if name == "first" {
			return items[0], nil
		}
		return items[len(items)-1], nil
	case "reverse":
		if s, ok := x.(string); ok {
			runes := []rune(s)
			for i, j := 0, len(runes)-1; i < j; i, j = i+1, j-1 {
				runes[i], runes[j] = runes[j], runes[i]
			}
			return string(runes), nil
		}
		src := x
		return newGenerator(func() ([]any, error) {
			items, err := iterate(src)
			if err != nil {
				return nil, err
			}
			out := make([]any, len(items))
			for i, it := range items {
				out[len(items)-1-i] = it
			}
			return out, nil
		}), nil
	case "items":
		if _, ok := x.(Undefined); ok {
			return []any{}, nil
		}
		m, ok := x.(*Map)
		if !ok {
			return nil, fmt.Errorf("%w: can only get item pairs from a mapping", ErrRuntime)
		}
		return newGenerator(func() ([]any, error) {
			out := make([]any, 0, m.Len())
			m.Each(func(k, v any) { out = append(out, Tuple{k, v}) })
			return out, nil
		}), nil
	case "dictsort":
		m, ok := x.(*Map)
		if !ok {
			return nil, fmt.Errorf("%w: dictsort needs a mapping", ErrRuntime)
		}
		out := make([]any, 0, m.Len())
		m.Each(func(k, v any) { out = append(out, Tuple{k, v}) })
		var sortErr error
		sort.SliceStable(out, func(i, j int) bool {
			lt, err := less(foldCase(out[i].(Tuple)[0]), foldCase(out[j].(Tuple)[0]))
			if err != nil {
				sortErr = err
			}
			return lt
		})
		return out, sortErr
	case "map":
		return newGenerator(func() ([]any, error) { return r.mapFilter(x, args, kwargs) }), nil
	case "select", "reject", "selectattr", "rejectattr":
		return newGenerator(func() ([]any, error) { return r.selectFilter(name, x, args) }), nil
	case "unique":
		return newGenerator(func() ([]any, error) { return uniqueItems(x) }), nil
	case "sort":
		items, err := iterate(x)
		if err != nil {
			return nil, err
		}
		out := append([]any{}, items...)
		rev, _ := kw(args, kwargs, 0, "reverse")
		caseSens, _ := kw(args, kwargs, 1, "case_sensitive")
		attr, hasAttr := kw(args, kwargs, 2, "attribute")
		key := func(v any) (any, error) {
			if hasAttr {
				var err error
				if v, err = attrPath(v, attr); err != nil {
					return nil, err
				}
			}
			if !truthy(caseSens) {
				v = foldCase(v)
			}
			return v, nil
		}
		var sortErr error
		sort.SliceStable(out, func(i, j int) bool {
			a, err1 := key(out[i])
			b, err2 := key(out[j])
			if err1 != nil || err2 != nil {
				sortErr = fmt.Errorf("%w: sort key", ErrRuntime)
				return false
			}
			var lt bool
			var err error
			if truthy(rev) {
				lt, err = less(b, a)
			} else {
				lt, err = less(a, b)
			}
			if err != nil {
				sortErr = err
			}
			return lt
		})
		return out, sortErr
	case "indent":
		return indentFilter(toStr(x), args, kwargs)
	case "int":
		def := int64(0)
		if v, ok := kw(args, kwargs, 0, "default"); ok {
			if n, ok := toInt(v); ok {
				def = n
			}
		}
		switch v := x.(type) {
		case bool:
			return boolInt(v), nil
		case int64:
			return v, nil
		case float64:
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return def, nil
			}
			return int64(v), nil
		case string:
			s := strings.TrimSpace(strings.ReplaceAll(v, "_", ""))
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return n, nil
			}
			if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
				return int64(f), nil
			}
		}
		return def, nil
	case "float":
		def := 0.0
		if v, ok := kw(args, kwargs, 0, "default"); ok {
			if f, ok := toFloat(v); ok {
				def = f
			}
		}
		if f, ok := toFloat(x); ok {
			return f, nil
		}
		if s, ok := x.(string); ok {
			if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
				return f, nil
			}
		}
		return def, nil
	case "abs":
		switch v := x.(type) {
		case bool:
			return boolInt(v), nil
		case int64:
			if v < 0 {
				return -v, nil
			}
			return v, nil
		case float64:
			return math.Abs(v), nil
		}
		return nil, fmt.Errorf("%w: bad operand type for abs(): '%s'", ErrRuntime, typeName(x))
	case "round":
		f, ok := toFloat(x)
		if !ok {
			return nil, fmt.Errorf("%w: round needs a number", ErrRuntime)
		}
		prec, err := intArg(args, kwargs, 0, "precision", 0)
		if err != nil {
			return nil, err
		}
		method := "common"
		if m, ok := kw(args, kwargs, 1, "method"); ok {
			method = toStr(m)
		}
		p := math.Pow(10, float64(prec))
		switch method {
		case "ceil":
			return math.Ceil(f*p) / p, nil
		case "floor":
			return math.Floor(f*p) / p, nil
		}
		return math.RoundToEven(f*p) / p, nil
	case "sum":
		items, err := iterate(x)
		if err != nil {
			return nil, err
		}
		var total any = int64(0)
		if v, ok := kw(args, kwargs, 1, "start"); ok {
			total = v
		}
		attr, hasAttr := kw(args, kwargs, 0, "attribute")
		for _, it := range items {
			if hasAttr {
				if it, err = attrPath(it, attr); err != nil {
					return nil, err
				}
			}
			if total, err = binaryOp("+", total, it); err != nil {
				return nil, err
			}
		}
		return total, nil
	case "min", "max":
		items, err := iterate(x)
		if err != nil {
			return nil, err
		}
		if len(items) == 0 {
			return Undefined{Name: "no " + name + " item, sequence was empty"}, nil
		}
		best := items[0]
		for _, it := range items[1:] {
			var better bool
			if name == "min" {
				better, err = less(foldCase(it), foldCase(best))
			} else {
				better, err = less(foldCase(best), foldCase(it))
			}
			if err != nil {
				return nil, err
			}
			if better {
				best = it
			}
		}
		return best, nil
	case "e", "escape", "forceescape":
		return Markup(htmlEscape(toStr(x))), nil
	case "center":
		width, err := intArg(args, kwargs, 0, "width", 80)
		if err != nil {
			return nil, err
		}
		s := toStr(x)
		n := int(width) - utf8.RuneCountInString(s)
		if n <= 0 {
			return s, nil
		}
		left := n / 2
		if n%2 == 1 && int(width)%2 == 1 {
			left++
		}
		return strings.Repeat(" ", left) + s + strings.Repeat(" ", n-left), nil
	case "wordcount":
		return int64(len(strings.FieldsFunc(toStr(x), isPySpace))), nil
	case "batch":
		size, err := intArg(args, kwargs, 0, "linecount", 1)
		if err != nil || size <= 0 {
			return nil, fmt.Errorf("%w: batch needs a positive size", ErrRuntime)
		}
		items, err := iterate(x)
		if err != nil {
			return nil, err
		}
		fill, hasFill := kw(args, kwargs, 1, "fill_with")
		out := []any{}
		for i := 0; i < len(items); i += int(size) {
			end := min(i+int(size), len(items))
			chunk := append([]any{}, items[i:end]...)
			for hasFill && fill != nil && len(chunk) < int(size) {
				chunk = append(chunk, fill)
			}
			out = append(out, chunk)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: no filter named '%s'", ErrRuntime, name)
}

// foldCase lowercases strings for jinja2's case-insensitive comparisons.
func foldCase(v any) any {
	if s, ok := v.(string); ok {
		return strings.ToLower(s)
	}
	return v
}

// attrPath follows a dotted attribute path ("function.name"), where integer
// parts index sequences, like jinja2's make_attrgetter.
func attrPath(v any, path any) (any, error) {
	s, ok := path.(string)
	if !ok {
		return getItem(v, path)
	}
	for _, part := range strings.Split(s, ".") {
		var err error
		if n, convErr := strconv.ParseInt(part, 10, 64); convErr == nil {
			v, err = getItem(v, n)
		} else {
			v, err = getItem(v, part)
		}
		if err != nil {
			return nil, err
		}
	}
	return v, nil
}

func tojson(x any, args []any, kwargs *Map) (any, error) {
	o := jsonOptions{}
	// transformers' signature: tojson(x, ensure_ascii=False, indent=None,
	// separators=None, sort_keys=False).
	if v, ok := kw(args, kwargs, 0, "ensure_ascii"); ok {
		o.ensureASCII = truthy(v)
	}
	if v, ok := kw(args, kwargs, 1, "indent"); ok && v != nil {
		o.hasIndent = true
		switch iv := v.(type) {
		case int64:
			o.indent = strings.Repeat(" ", int(max(iv, 0)))
		case string:
			o.indent = iv
		default:
			return nil, fmt.Errorf("%w: indent must be an int or a string", ErrRuntime)
		}
	}
	o.itemSep, o.keySep = ", ", ": "
	if o.hasIndent {
		o.itemSep = ","
	}
	if v, ok := kw(args, kwargs, 2, "separators"); ok && v != nil {
		seps, err := iterate(v)
		if err != nil || len(seps) != 2 {
			return nil, fmt.Errorf("%w: separators must be a pair of strings", ErrRuntime)
		}
		o.itemSep, o.keySep = toStr(seps[0]), toStr(seps[1])
	}
	if v, ok := kw(args, kwargs, 3, "sort_keys"); ok {
		o.sortKeys = truthy(v)
	}
	var b strings.Builder
	if err := writeJSON(&b, x, o, 0); err != nil {
		return nil, err
	}
	return b.String(), nil
}

func sortValues(items []any) error {
	var sortErr error
	sort.SliceStable(items, func(i, j int) bool {
		lt, err := less(items[i], items[j])
		if err != nil {
			sortErr = err
		}
		return lt
	})
	return sortErr
}

// indentFilter is jinja2's indent(width=4, first=False, blank=False).
func indentFilter(s string, args []any, kwargs *Map) (any, error) {
	ind := "    "
	if v, ok := kw(args, kwargs, 0, "width"); ok {
		switch w := v.(type) {
		case int64:
			ind = strings.Repeat(" ", int(max(w, 0)))
		case string:
			ind = w
		}
	}
	first, _ := kw(args, kwargs, 1, "first")
	blank, _ := kw(args, kwargs, 2, "blank")
	// jinja2 appends a newline and then uses splitlines(), so a trailing
	// newline survives and no empty last line is indented.
	lines := strings.Split(s+"\n", "\n")
	lines = lines[:len(lines)-1]
	var rv string
	if truthy(blank) {
		rv = strings.Join(lines, "\n"+ind)
	} else {
		var b strings.Builder
		b.WriteString(lines[0])
		for _, line := range lines[1:] {
			b.WriteString("\n")
			if line != "" {
				b.WriteString(ind)
			}
			b.WriteString(line)
		}
		rv = b.String()
	}
	if truthy(first) {
		rv = ind + rv
	}
	return rv, nil
}

func (r *renderer) mapFilter(x any, args []any, kwargs *Map) ([]any, error) {
	if !truthy(x) {
		return nil, nil // jinja2 checks "if value:" before iterating
	}
	items, err := iterate(x)
	if err != nil {
		return nil, err
	}
	out := make([]any, 0, len(items))
	if attr, ok := kw(args, kwargs, -1, "attribute"); ok {
		def, hasDef := kw(args, kwargs, -1, "default")
		for _, it := range items {
			v, err := attrPath(it, attr)
			if err != nil {
				return nil, err
			}
			if _, undef := v.(Undefined); undef && hasDef {
				v = def
			}
			out = append(out, v)
		}
		return out, nil
	}
	if len(args) == 0 {
		return nil, fmt.Errorf("%w: map requires a filter argument", ErrRuntime)
	}
	name := toStr(args[0])
	for _, it := range items {
		v, err := r.filter(name, it, args[1:], kwargs)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func (r *renderer) selectFilter(name string, x any, args []any) ([]any, error) {
	if !truthy(x) {
		return nil, nil // jinja2 checks "if value:" before iterating
	}
	items, err := iterate(x)
	if err != nil {
		return nil, err
	}
	byAttr := strings.HasSuffix(name, "attr")
	want := strings.HasPrefix(name, "select")
	out := []any{}
	for _, it := range items {
		v := it
		rest := args
		if byAttr {
			if len(args) == 0 {
				return nil, fmt.Errorf("%w: missing parameter for attribute name", ErrRuntime)
			}
			if v, err = attrPath(it, args[0]); err != nil {
				return nil, err
			}
			rest = args[1:]
		}
		var ok bool
		if len(rest) == 0 {
			ok = truthy(v)
		} else {
			if ok, err = r.applyTest(toStr(rest[0]), v, rest[1:]); err != nil {
				return nil, err
			}
		}
		if ok == want {
			out = append(out, it)
		}
	}
	return out, nil
}

// applyTest runs the named jinja2 test.
func (r *renderer) applyTest(name string, x any, args []any) (bool, error) {
	arg := func() (any, error) {
		if len(args) < 1 {
			return nil, fmt.Errorf("%w: test %s needs an argument", ErrRuntime, name)
		}
		return args[0], nil
	}
	switch name {
	case "defined":
		_, undef := x.(Undefined)
		return !undef, nil
	case "undefined":
		_, undef := x.(Undefined)
		return undef, nil
	case "none":
		return x == nil, nil
	case "boolean":
		_, ok := x.(bool)
		return ok, nil
	case "true":
		b, ok := x.(bool)
		return ok && b, nil
	case "false":
		b, ok := x.(bool)
		return ok && !b, nil
	case "string":
		switch x.(type) {
		case string, Markup:
			return true, nil
		}
		return false, nil
	case "number":
		switch x.(type) {
		case int64, float64, bool:
			return true, nil
		}
		return false, nil
	case "integer":
		_, ok := x.(int64)
		return ok, nil
	case "float":
		_, ok := x.(float64)
		return ok, nil
	case "mapping":
		_, ok := x.(*Map)
		return ok, nil
	case "sequence":
		switch x.(type) {
		case string, Markup, []any, Tuple, *Map:
			return true, nil
		}
		return false, nil
	case "iterable":
		switch x.(type) {
		case string, Markup, []any, Tuple, *Map, Undefined, *Generator:
			return true, nil
		}
		return false, nil
	case "callable":
		_, ok := x.(Func)
		return ok, nil
	case "odd", "even":
		n, ok := toInt(x)
		if !ok {
			return false, fmt.Errorf("%w: test %s needs an integer", ErrRuntime, name)
		}
		return (n%2 != 0) == (name == "odd"), nil
	case "divisibleby":
		a, err := arg()
		if err != nil {
			return false, err
		}
		n, ok1 := toInt(x)
		d, ok2 := toInt(a)
		if !ok1 || !ok2 || d == 0 {
			return false, fmt.Errorf("%w: divisibleby needs non-zero integers", ErrRuntime)
		}
		return n%d == 0, nil
	case "lower":
		s := toStr(x)
		return strings.ToLower(s) == s, nil
	case "upper":
		s := toStr(x)
		return strings.ToUpper(s) == s, nil
	case "in":
		a, err := arg()
		if err != nil {
			return false, err
		}
		return contains(a, x)
	case "sameas":
		a, err := arg()
		if err != nil {
			return false, err
		}
		switch x.(type) {
		case nil, bool:
			return x == a, nil
		}
		return equal(x, a) && typeName(x) == typeName(a), nil
	case "eq", "equalto", "==", "ne", "!=", "lt", "<", "le", "<=", "gt", ">", "ge", ">=":
		a, err := arg()
		if err != nil {
			return false, err
		}
		op := map[string]string{"eq": "==", "equalto": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}[name]
		if op == "" {
			op = name
		}
		return compare(op, x, a)
	}
	return false, fmt.Errorf("%w: no test named '%s'", ErrRuntime, name)
}

// uniqueItems is jinja2's unique filter (case-insensitive for strings).
func uniqueItems(x any) ([]any, error) {
	items, err := iterate(x)
	if err != nil {
		return nil, err
	}
	var out []any
	for _, it := range items {
		dup := false
		for _, seen := range out {
			if equal(foldCase(seen), foldCase(it)) {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, it)
		}
	}
	if out == nil {
		out = []any{}
	}
	return out, nil
}
