// Package jinja is a Jinja2 interpreter for the subset of the language that
// Hugging Face chat templates use, with the semantics of jinja2 3.1 inside
// transformers' ImmutableSandboxedEnvironment: trim_blocks and lstrip_blocks,
// jinja2's default Undefined, Python's str/dict/list methods (none that
// mutate), transformers' tojson (json.dumps with ensure_ascii=False) and its
// globals raise_exception, strftime_now, namespace and dict.
//
// Values are plain Go values (see value.go); dicts are ordered (*Map) so JSON
// schemas render in their original key order.
package jinja

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Errors a template can fail with. Every error returned by Parse or Render
// wraps one of these.
var (
	ErrSyntax    = errors.New("jinja: syntax error")
	ErrUndefined = errors.New("jinja: undefined")
	ErrRuntime   = errors.New("jinja: runtime error")
	ErrSecurity  = errors.New("jinja: security error")
	// ErrRaised wraps the message of a template's raise_exception(msg).
	ErrRaised = errors.New("jinja: template raised")
)

// Options are the environment settings that change how a template lexes.
type Options struct {
	TrimBlocks          bool
	LstripBlocks        bool
	KeepTrailingNewline bool
}

// HFOptions are the settings transformers compiles chat templates with.
func HFOptions() Options { return Options{TrimBlocks: true, LstripBlocks: true} }

// Template is a parsed template. It is immutable and safe for concurrent
// Render calls.
type Template struct {
	body []node
	now  func() time.Time
}

// Parse parses a template. Parse never panics, whatever the input.
func Parse(source string, opts Options) (t *Template, err error) {
	defer func() {
		if p := recover(); p != nil {
			t, err = nil, fmt.Errorf("%w: internal parser failure: %v", ErrSyntax, p)
		}
	}()
	return parseTemplate(source, opts)
}

// parseTemplate is Parse without the panic guard, so fuzzing sees panics.
func parseTemplate(source string, opts Options) (*Template, error) {
	toks, err := lex(source, opts)
	if err != nil {
		return nil, err
	}
	body, err := parse(toks)
	if err != nil {
		return nil, err
	}
	return &Template{body: body, now: time.Now}, nil
}

// WithClock returns a copy of t whose strftime_now reads now instead of the
// wall clock (for reproducible renders).
func (t *Template) WithClock(now func() time.Time) *Template {
	c := *t
	c.now = now
	return &c
}

// Render renders the template with vars as its context. Values in vars are
// converted with FromGo; a var named like a builtin global replaces it.
func (t *Template) Render(vars map[string]any) (out string, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = "", fmt.Errorf("%w: internal failure: %v", ErrRuntime, p)
		}
	}()
	return t.render(vars)
}

// render is Render without the panic guard, so fuzzing sees panics.
func (t *Template) render(vars map[string]any) (string, error) {
	root := &frame{vars: make(map[string]any, len(vars)+4)}
	for k, v := range vars {
		root.vars[k] = FromGo(v)
	}
	r := &renderer{tmpl: t}
	var b strings.Builder
	top := root.child() // template-level assignments
	if err := r.renderNodes(&b, t.body, top); err != nil {
		if errors.Is(err, errBreak) || errors.Is(err, errContinue) {
			return "", fmt.Errorf("%w: %v", ErrSyntax, err)
		}
		return "", err
	}
	return b.String(), nil
}

// builtin returns the global functions every chat template can call.
func (t *Template) builtin(name string) (any, bool) {
	switch name {
	case "raise_exception":
		return Func(func(args []any, _ *Map) (any, error) {
			msg := ""
			if len(args) > 0 {
				msg = toStr(args[0])
			}
			return nil, fmt.Errorf("%w: %s", ErrRaised, msg)
		}), true
	case "strftime_now":
		return Func(func(args []any, _ *Map) (any, error) {
			if len(args) != 1 {
				return nil, fmt.Errorf("%w: strftime_now takes one format argument", ErrRuntime)
			}
			return Strftime(t.now(), toStr(args[0])), nil
		}), true
	case "namespace":
		return Func(func(args []any, kwargs *Map) (any, error) {
			ns := &Namespace{attrs: NewMap()}
			for _, a := range args {
				m, ok := a.(*Map)
				if !ok {
					return nil, fmt.Errorf("%w: namespace() positional argument must be a dict", ErrRuntime)
				}
				m.Each(func(k, v any) { ns.attrs.Set(k, v) })
			}
			var bad error
			if kwargs != nil {
				kwargs.Each(func(k, v any) {
					if s, _ := k.(string); strings.HasPrefix(s, "_") {
						bad = fmt.Errorf("%w: cannot store underscore-prefixed attribute %q on a namespace", ErrSecurity, s)
					}
					ns.attrs.Set(k, v)
				})
			}
			return ns, bad
		}), true
	case "dict":
		return Func(func(args []any, kwargs *Map) (any, error) {
			m := NewMap()
			if len(args) > 0 {
				src, ok := args[0].(*Map)
				if !ok {
					return nil, fmt.Errorf("%w: dict() argument must be a mapping", ErrRuntime)
				}
				src.Each(func(k, v any) { m.Set(k, v) })
			}
			if kwargs != nil {
				kwargs.Each(func(k, v any) { m.Set(k, v) })
			}
			return m, nil
		}), true
	case "range":
		return Func(rangeFunc), true
	}
	return nil, false
}

func rangeFunc(args []any, _ *Map) (any, error) {
	var start, stop, step int64 = 0, 0, 1
	ints := make([]int64, len(args))
	for i, a := range args {
		n, ok := toInt(a)
		if !ok {
			return nil, fmt.Errorf("%w: range() arguments must be integers", ErrRuntime)
		}
		ints[i] = n
	}
	switch len(ints) {
	case 1:
		stop = ints[0]
	case 2:
		start, stop = ints[0], ints[1]
	case 3:
		start, stop, step = ints[0], ints[1], ints[2]
	default:
		return nil, fmt.Errorf("%w: range expected 1 to 3 arguments", ErrRuntime)
	}
	if step == 0 {
		return nil, fmt.Errorf("%w: range() arg 3 must not be zero", ErrRuntime)
	}
	out := []any{}
	for i := start; (step > 0 && i < stop) || (step < 0 && i > stop); i += step {
		if len(out) >= maxRange {
			return nil, fmt.Errorf("%w: range too big, maximum size is %d", ErrSecurity, maxRange)
		}
		out = append(out, i)
	}
	return out, nil
}
