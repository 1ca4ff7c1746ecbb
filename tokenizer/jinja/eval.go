package jinja

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

var (
	errBreak    = errors.New("break outside a loop")
	errContinue = errors.New("continue outside a loop")
)

// frame is one variable scope: the template's top level, a loop body or a
// macro call. Lookups walk outwards; assignments stay in the frame.
type frame struct {
	vars   map[string]any
	parent *frame
}

func (f *frame) lookup(name string) (any, bool) {
	for s := f; s != nil; s = s.parent {
		if v, ok := s.vars[name]; ok {
			return v, true
		}
	}
	return nil, false
}

func (f *frame) child() *frame { return &frame{vars: map[string]any{}, parent: f} }

// renderer holds the state of one Render call.
type renderer struct {
	tmpl  *Template
	depth int // macro recursion depth, to fail instead of overflowing the stack
	steps int // output steps, bounded so a hostile template cannot spin forever
}

const (
	maxMacroDepth = 200
	maxSteps      = 50_000_000
	maxRange      = 100_000 // jinja2's sandbox MAX_RANGE
)

func (r *renderer) renderNodes(out *strings.Builder, nodes []node, f *frame) error {
	for _, n := range nodes {
		if err := r.renderNode(out, n, f); err != nil {
			return err
		}
	}
	return nil
}

func (r *renderer) renderNode(out *strings.Builder, n node, f *frame) error {
	r.steps++
	if r.steps > maxSteps {
		return fmt.Errorf("%w: template ran too long", ErrRuntime)
	}
	switch n := n.(type) {
	case *dataNode:
		out.WriteString(n.text)
	case *outputNode:
		v, err := r.eval(n.e, f)
		if err != nil {
			return err
		}
		out.WriteString(toStr(v))
	case *ifNode:
		v, err := r.eval(n.cond, f)
		if err != nil {
			return err
		}
		if truthy(v) {
			return r.renderNodes(out, n.body, f)
		}
		return r.renderNodes(out, n.elseBody, f)
	case *forNode:
		return r.renderFor(out, n, f)
	case *setNode:
		var v any
		if n.body != nil {
			var b strings.Builder
			if err := r.renderNodes(&b, n.body, f); err != nil {
				return err
			}
			v = b.String()
		} else {
			var err error
			if v, err = r.eval(n.value, f); err != nil {
				return err
			}
		}
		return r.assign(n.target, v, f)
	case *macroNode:
		f.vars[n.name] = r.makeMacro(n.m, f, nil)
	case *callBlockNode:
		caller := r.makeMacro(n.caller, f, nil)
		fn, err := r.eval(n.call.fn, f)
		if err != nil {
			return err
		}
		args, kwargs, err := r.evalArgs(n.call.args, n.call.kwargs, f)
		if err != nil {
			return err
		}
		if kwargs == nil {
			kwargs = NewMap()
		}
		kwargs.Set("caller", caller)
		v, err := r.call(fn, args, kwargs)
		if err != nil {
			return err
		}
		out.WriteString(toStr(v))
	case *filterBlockNode:
		var b strings.Builder
		if err := r.renderNodes(&b, n.body, f); err != nil {
			return err
		}
		v, err := r.applyFilter(n.filter, b.String(), f)
		if err != nil {
			return err
		}
		out.WriteString(toStr(v))
	case *breakNode:
		return errBreak
	case *continueNode:
		return errContinue
	default:
		return fmt.Errorf("%w: unknown node %T", ErrRuntime, n)
	}
	return nil
}

func (r *renderer) assign(t assignTarget, v any, f *frame) error {
	switch {
	case t.attr != "":
		obj, ok := f.lookup(t.name)
		ns, isNS := obj.(*Namespace)
		if !ok || !isNS {
			return fmt.Errorf("%w: cannot assign attribute on non-namespace object %s", ErrRuntime, t.name)
		}
		if strings.HasPrefix(t.attr, "_") {
			return fmt.Errorf("%w: cannot store underscore-prefixed attribute %q on a namespace", ErrSecurity, t.attr)
		}
		ns.attrs.Set(t.attr, v)
	case len(t.names) > 0:
		items, err := iterate(v)
		if err != nil {
			return err
		}
		if len(items) != len(t.names) {
			return fmt.Errorf("%w: cannot unpack %d values into %d names", ErrRuntime, len(items), len(t.names))
		}
		for i, name := range t.names {
			f.vars[name] = items[i]
		}
	default:
		f.vars[t.name] = v
	}
	return nil
}

// loopInfo is the `loop` variable of a for loop.
type loopInfo struct {
	items []any
	i     int
}

func (l *loopInfo) attr(name string) (any, bool) {
	n := len(l.items)
	switch name {
	case "index0":
		return int64(l.i), true
	case "index":
		return int64(l.i + 1), true
	case "revindex":
		return int64(n - l.i), true
	case "revindex0":
		return int64(n - l.i - 1), true
	case "first":
		return l.i == 0, true
	case "last":
		return l.i == n-1, true
	case "length":
		return int64(n), true
	case "depth":
		return int64(1), true
	case "depth0":
		return int64(0), true
	case "previtem":
		if l.i == 0 {
			return Undefined{Name: "there is no previous item"}, true
		}
		return l.items[l.i-1], true
	case "nextitem":
		if l.i+1 >= n {
			return Undefined{Name: "there is no next item"}, true
		}
		return l.items[l.i+1], true
	case "cycle":
		return Func(func(args []any, _ *Map) (any, error) {
			if len(args) == 0 {
				return nil, fmt.Errorf("%w: no items for cycling given", ErrRuntime)
			}
			return args[l.i%len(args)], nil
		}), true
	}
	return nil, false
}

func (r *renderer) renderFor(out *strings.Builder, n *forNode, f *frame) error {
	seq, err := r.eval(n.iter, f)
	if err != nil {
		return err
	}
	items, err := iterate(seq)
	if err != nil {
		return err
	}
	body := f.child()
	if n.filter != nil {
		kept := items[:0:0]
		for _, it := range items {
			if err := r.assign(n.target, it, body); err != nil {
				return err
			}
			ok, err := r.eval(n.filter, body)
			if err != nil {
				return err
			}
			if truthy(ok) {
				kept = append(kept, it)
			}
		}
		items = kept
	}
	if len(items) == 0 {
		return r.renderNodes(out, n.elseBody, f)
	}
	for i, it := range items {
		// Each iteration gets a fresh scope: jinja2 does not carry a set
		// from one iteration into the next (that is what namespace is for).
		body := f.child()
		body.vars["loop"] = &loopInfo{items: items, i: i}
		if err := r.assign(n.target, it, body); err != nil {
			return err
		}
		err := r.renderNodes(out, n.body, body)
		if errors.Is(err, errBreak) {
			break
		}
		if err != nil && !errors.Is(err, errContinue) {
			return err
		}
	}
	return nil
}

func (r *renderer) makeMacro(m *macro, defined *frame, _ *Map) Func {
	return func(args []any, kwargs *Map) (any, error) {
		r.depth++
		defer func() { r.depth-- }()
		if r.depth > maxMacroDepth {
			return nil, fmt.Errorf("%w: macro %s: recursion too deep", ErrRuntime, m.name)
		}
		f := defined.child()
		var extra []any
		for i, a := range args {
			if i < len(m.params) {
				f.vars[m.params[i]] = a
			} else {
				extra = append(extra, a)
			}
		}
		firstDefault := len(m.params) - len(m.defaults)
		rest := NewMap()
		if kwargs != nil {
			kwargs.Each(func(k, v any) {
				name, _ := k.(string)
				for _, p := range m.params {
					if p == name {
						f.vars[name] = v
						return
					}
				}
				if name == "caller" {
					f.vars["caller"] = v
					return
				}
				rest.Set(k, v)
			})
		}
		for i, p := range m.params {
			if _, ok := f.vars[p]; ok {
				continue
			}
			if i >= firstDefault {
				v, err := r.eval(m.defaults[i-firstDefault], f)
				if err != nil {
					return nil, err
				}
				f.vars[p] = v
			} else {
				f.vars[p] = Undefined{Name: "parameter " + p}
			}
		}
		f.vars["varargs"] = append([]any{}, extra...)
		f.vars["kwargs"] = rest
		var b strings.Builder
		if err := r.renderNodes(&b, m.body, f); err != nil {
			return nil, err
		}
		return b.String(), nil
	}
}

func (r *renderer) evalArgs(argExprs []expr, kwExprs []kwarg, f *frame) ([]any, *Map, error) {
	args := make([]any, len(argExprs))
	for i, a := range argExprs {
		v, err := r.eval(a, f)
		if err != nil {
			return nil, nil, err
		}
		args[i] = v
	}
	var kwargs *Map
	if len(kwExprs) > 0 {
		kwargs = NewMap()
		for _, kw := range kwExprs {
			v, err := r.eval(kw.v, f)
			if err != nil {
				return nil, nil, err
			}
			kwargs.Set(kw.name, v)
		}
	}
	return args, kwargs, nil
}

func (r *renderer) call(fn any, args []any, kwargs *Map) (any, error) {
	switch fn := fn.(type) {
	case Func:
		return fn(args, kwargs)
	case Undefined:
		return nil, fn.err()
	}
	return nil, fmt.Errorf("%w: '%s' object is not callable", ErrRuntime, typeName(fn))
}

func (r *renderer) eval(e expr, f *frame) (any, error) {
	switch e := e.(type) {
	case *constExpr:
		return e.v, nil
	case *nameExpr:
		if v, ok := f.lookup(e.name); ok {
			return v, nil
		}
		if v, ok := r.tmpl.builtin(e.name); ok {
			return v, nil
		}
		return Undefined{Name: "'" + e.name + "'"}, nil
	case *listExpr:
		out := make([]any, len(e.items))
		for i, it := range e.items {
			v, err := r.eval(it, f)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case *tupleExpr:
		out := make(Tuple, len(e.items))
		for i, it := range e.items {
			v, err := r.eval(it, f)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case *dictExpr:
		m := NewMap()
		for i := range e.keys {
			k, err := r.eval(e.keys[i], f)
			if err != nil {
				return nil, err
			}
			if !comparable(hashKey(k)) {
				return nil, fmt.Errorf("%w: unhashable type: '%s'", ErrRuntime, typeName(k))
			}
			v, err := r.eval(e.vals[i], f)
			if err != nil {
				return nil, err
			}
			m.Set(k, v)
		}
		return m, nil
	case *getattr:
		obj, err := r.eval(e.obj, f)
		if err != nil {
			return nil, err
		}
		return getAttr(obj, e.attr)
	case *getitem:
		obj, err := r.eval(e.obj, f)
		if err != nil {
			return nil, err
		}
		if s, ok := e.key.(*sliceExpr); ok {
			return r.evalSlice(obj, s, f)
		}
		key, err := r.eval(e.key, f)
		if err != nil {
			return nil, err
		}
		return getItem(obj, key)
	case *unaryExpr:
		x, err := r.eval(e.x, f)
		if err != nil {
			return nil, err
		}
		switch e.op {
		case "not":
			return !truthy(x), nil
		case "-":
			switch v := x.(type) {
			case bool:
				return -boolInt(v), nil
			case int64:
				return -v, nil
			case float64:
				return -v, nil
			case Undefined:
				return nil, v.err()
			}
			return nil, fmt.Errorf("%w: bad operand type for unary -: '%s'", ErrRuntime, typeName(x))
		default:
			switch v := x.(type) {
			case bool:
				return boolInt(v), nil
			case int64, float64:
				return v, nil
			case Undefined:
				return nil, v.err()
			}
			return nil, fmt.Errorf("%w: bad operand type for unary +: '%s'", ErrRuntime, typeName(x))
		}
	case *binExpr:
		l, err := r.eval(e.l, f)
		if err != nil {
			return nil, err
		}
		rv, err := r.eval(e.r, f)
		if err != nil {
			return nil, err
		}
		return binaryOp(e.op, l, rv)
	case *logicExpr:
		l, err := r.eval(e.l, f)
		if err != nil {
			return nil, err
		}
		if truthy(l) != e.and {
			return l, nil
		}
		return r.eval(e.r, f)
	case *compareExpr:
		l, err := r.eval(e.first, f)
		if err != nil {
			return nil, err
		}
		for i, op := range e.ops {
			rv, err := r.eval(e.rest[i], f)
			if err != nil {
				return nil, err
			}
			ok, err := compare(op, l, rv)
			if err != nil {
				return nil, err
			}
			if !ok {
				return false, nil
			}
			l = rv
		}
		return true, nil
	case *concatExpr:
		// Without autoescape jinja2 joins with str_join: Markup operands
		// do not escape the others (unlike "+").
		var b strings.Builder
		for _, it := range e.items {
			v, err := r.eval(it, f)
			if err != nil {
				return nil, err
			}
			b.WriteString(toStr(v))
		}
		return b.String(), nil
	case *condExpr:
		c, err := r.eval(e.cond, f)
		if err != nil {
			return nil, err
		}
		if truthy(c) {
			return r.eval(e.yes, f)
		}
		if e.no == nil {
			return Undefined{Name: "the false branch of an inline if"}, nil
		}
		return r.eval(e.no, f)
	case *callExpr:
		fn, err := r.eval(e.fn, f)
		if err != nil {
			return nil, err
		}
		args, kwargs, err := r.evalArgs(e.args, e.kwargs, f)
		if err != nil {
			return nil, err
		}
		return r.call(fn, args, kwargs)
	case *filterExpr:
		x, err := r.eval(e.x, f)
		if err != nil {
			return nil, err
		}
		return r.applyFilter(e, x, f)
	case *testExpr:
		x, err := r.eval(e.x, f)
		if err != nil {
			return nil, err
		}
		args, _, err := r.evalArgs(e.args, nil, f)
		if err != nil {
			return nil, err
		}
		ok, err := r.applyTest(e.name, x, args)
		if err != nil {
			return nil, err
		}
		return ok != e.negate, nil
	case *sliceExpr:
		return nil, fmt.Errorf("%w: slice outside a subscript", ErrRuntime)
	}
	return nil, fmt.Errorf("%w: unknown expression %T", ErrRuntime, e)
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func (r *renderer) evalSlice(obj any, s *sliceExpr, f *frame) (any, error) {
	var bounds [3]*int64
	for i, part := range []expr{s.start, s.stop, s.step} {
		if part == nil {
			continue
		}
		v, err := r.eval(part, f)
		if err != nil {
			return nil, err
		}
		switch x := v.(type) {
		case nil:
		case int64:
			bounds[i] = &x
		case bool:
			b := boolInt(x)
			bounds[i] = &b
		default:
			return nil, fmt.Errorf("%w: slice indices must be integers or None, not %s", ErrRuntime, typeName(v))
		}
	}
	return sliceValue(obj, bounds[0], bounds[1], bounds[2])
}

// sliceIndices is Python's slice.indices: the start, stop and step a slice
// selects from a sequence of length n.
func sliceIndices(n int64, start, stop, step *int64) (int64, int64, int64, error) {
	st := int64(1)
	if step != nil {
		st = *step
	}
	if st == 0 {
		return 0, 0, 0, fmt.Errorf("%w: slice step cannot be zero", ErrRuntime)
	}
	clamp := func(p *int64, def int64) int64 {
		if p == nil {
			return def
		}
		v := *p
		if v < 0 {
			v += n
			if v < 0 {
				if st < 0 {
					return -1
				}
				return 0
			}
		}
		if v >= n {
			if st < 0 {
				return n - 1
			}
			return n
		}
		return v
	}
	if st > 0 {
		return clamp(start, 0), clamp(stop, n), st, nil
	}
	return clamp(start, n-1), clamp(stop, -1), st, nil
}

func sliceValue(obj any, start, stop, step *int64) (any, error) {
	if m, ok := obj.(Markup); ok {
		obj = string(m)
	}
	pick := func(n int) ([]int, error) {
		a, b, st, err := sliceIndices(int64(n), start, stop, step)
		if err != nil {
			return nil, err
		}
		var idx []int
		if stop == nil && st < 0 {
			b = -1
		}
		for i := a; (st > 0 && i < b) || (st < 0 && i > b); i += st {
			idx = append(idx, int(i))
		}
		return idx, nil
	}
	switch x := obj.(type) {
	case string:
		runes := []rune(x)
		idx, err := pick(len(runes))
		if err != nil {
			return nil, err
		}
		out := make([]rune, len(idx))
		for i, j := range idx {
			out[i] = runes[j]
		}
		return string(out), nil
	case []any, Tuple:
		items, _ := iterate(x)
		idx, err := pick(len(items))
		if err != nil {
			return nil, err
		}
		out := make([]any, len(idx))
		for i, j := range idx {
			out[i] = items[j]
		}
		if _, ok := x.(Tuple); ok {
			return Tuple(out), nil
		}
		return out, nil
	case Undefined:
		return nil, x.err()
	}
	return nil, fmt.Errorf("%w: '%s' object is not subscriptable", ErrRuntime, typeName(obj))
}

// iterate lists what a for loop over v visits: list items, string
// characters, dict keys; Undefined iterates as empty.
func iterate(v any) ([]any, error) {
	switch x := v.(type) {
	case []any:
		return x, nil
	case Tuple:
		return x, nil
	case string, Markup:
		s := toStr(x)
		out := make([]any, 0, len(s))
		for _, c := range s {
			out = append(out, string(c))
		}
		return out, nil
	case *Map:
		return x.Keys(), nil
	case *Generator:
		return x.drain()
	case Undefined:
		return nil, nil
	}
	return nil, fmt.Errorf("%w: '%s' object is not iterable", ErrRuntime, typeName(v))
}

// getAttr is jinja2's getattr: the Python attribute first (methods), then
// the item of the same name.
func getAttr(obj any, name string) (any, error) {
	if u, ok := obj.(Undefined); ok {
		return nil, u.err()
	}
	if strings.HasPrefix(name, "_") {
		return Undefined{Name: "attribute " + name}, nil
	}
	switch x := obj.(type) {
	case *loopInfo:
		if v, ok := x.attr(name); ok {
			return v, nil
		}
	case *Namespace:
		if v, ok := x.attrs.Get(name); ok {
			return v, nil
		}
		return Undefined{Name: "namespace attribute " + name}, nil
	}
	if m, ok := obj.(Markup); ok {
		obj = string(m)
	}
	if m, ok := method(obj, name); ok {
		return m, nil
	}
	if v, ok := lookupItem(obj, name); ok {
		return v, nil
	}
	return Undefined{Name: fmt.Sprintf("'%s object' has no attribute '%s'", typeName(obj), name)}, nil
}

// getItem is jinja2's getitem: the item first, then the attribute.
func getItem(obj any, key any) (any, error) {
	if u, ok := obj.(Undefined); ok {
		return nil, u.err()
	}
	if v, ok := lookupItem(obj, key); ok {
		return v, nil
	}
	if name, ok := key.(string); ok {
		return getAttr(obj, name)
	}
	return Undefined{Name: fmt.Sprintf("'%s object' has no item %s", typeName(obj), repr(key))}, nil
}

func lookupItem(obj any, key any) (any, bool) {
	if m, ok := obj.(Markup); ok {
		obj = string(m)
	}
	switch x := obj.(type) {
	case *Map:
		return x.Get(key)
	case []any, Tuple, string:
		var i int64
		switch k := key.(type) {
		case int64:
			i = k
		case bool:
			i = boolInt(k)
		default:
			return nil, false
		}
		if s, ok := x.(string); ok {
			runes := []rune(s)
			if i < 0 {
				i += int64(len(runes))
			}
			if i < 0 || i >= int64(len(runes)) {
				return nil, false
			}
			return string(runes[i]), true
		}
		items, _ := iterate(x)
		if i < 0 {
			i += int64(len(items))
		}
		if i < 0 || i >= int64(len(items)) {
			return nil, false
		}
		return items[i], true
	case *loopInfo:
		if s, ok := key.(string); ok {
			return x.attr(s)
		}
	}
	return nil, false
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case bool:
		return float64(boolInt(x)), true
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

func toInt(v any) (int64, bool) {
	switch x := v.(type) {
	case bool:
		return boolInt(x), true
	case int64:
		return x, true
	}
	return 0, false
}

func binaryOp(op string, l, r any) (any, error) {
	if u, ok := l.(Undefined); ok {
		return nil, u.err()
	}
	if u, ok := r.(Undefined); ok {
		return nil, u.err()
	}
	lm, lMarkup := l.(Markup)
	rm, rMarkup := r.(Markup)
	if lMarkup || rMarkup {
		// markupsafe: Markup + str escapes the str; Markup * n repeats.
		switch op {
		case "+":
			ls, lok := l.(string)
			rs, rok := r.(string)
			switch {
			case lMarkup && rMarkup:
				return lm + rm, nil
			case lMarkup && rok:
				return lm + Markup(htmlEscape(rs)), nil
			case rMarkup && lok:
				return Markup(htmlEscape(ls)) + rm, nil
			}
		case "*":
			if lMarkup {
				v, err := binaryOp(op, string(lm), r)
				if s, ok := v.(string); ok {
					return Markup(s), err
				}
				return v, err
			}
		}
		if lMarkup {
			l = string(lm)
		}
		if rMarkup {
			r = string(rm)
		}
	}
	li, lInt := toInt(l)
	ri, rInt := toInt(r)
	lf, lNum := toFloat(l)
	rf, rNum := toFloat(r)
	switch op {
	case "+":
		switch {
		case lInt && rInt:
			return li + ri, nil
		case lNum && rNum:
			return lf + rf, nil
		}
		if ls, ok := l.(string); ok {
			if rs, ok := r.(string); ok {
				return ls + rs, nil
			}
		}
		if ll, ok := l.([]any); ok {
			if rl, ok := r.([]any); ok {
				return append(append([]any{}, ll...), rl...), nil
			}
		}
		if ll, ok := l.(Tuple); ok {
			if rl, ok := r.(Tuple); ok {
				return append(append(Tuple{}, ll...), rl...), nil
			}
		}
	case "-":
		switch {
		case lInt && rInt:
			return li - ri, nil
		case lNum && rNum:
			return lf - rf, nil
		}
	case "*":
		switch {
		case lInt && rInt:
			return li * ri, nil
		case lNum && rNum:
			return lf * rf, nil
		}
		if s, n, ok := seqTimes(l, r); ok {
			return repeatSeq(s, n)
		}
		if s, n, ok := seqTimes(r, l); ok {
			return repeatSeq(s, n)
		}
	case "/":
		if lNum && rNum {
			if rf == 0 {
				return nil, fmt.Errorf("%w: division by zero", ErrRuntime)
			}
			return lf / rf, nil
		}
	case "//":
		switch {
		case lInt && rInt:
			if ri == 0 {
				return nil, fmt.Errorf("%w: integer division or modulo by zero", ErrRuntime)
			}
			q := li / ri
			if (li%ri != 0) && ((li < 0) != (ri < 0)) {
				q--
			}
			return q, nil
		case lNum && rNum:
			if rf == 0 {
				return nil, fmt.Errorf("%w: float floor division by zero", ErrRuntime)
			}
			return math.Floor(lf / rf), nil
		}
	case "%":
		switch {
		case lInt && rInt:
			if ri == 0 {
				return nil, fmt.Errorf("%w: integer division or modulo by zero", ErrRuntime)
			}
			m := li % ri
			if m != 0 && ((m < 0) != (ri < 0)) {
				m += ri
			}
			return m, nil
		case lNum && rNum:
			if rf == 0 {
				return nil, fmt.Errorf("%w: float modulo", ErrRuntime)
			}
			m := math.Mod(lf, rf)
			if m != 0 && ((m < 0) != (rf < 0)) {
				m += rf
			}
			return m, nil
		}
		if s, ok := l.(string); ok {
			return percentFormat(s, r)
		}
	case "**":
		switch {
		case lInt && rInt && ri >= 0:
			if ri > 4096 {
				return nil, fmt.Errorf("%w: exponent too large", ErrRuntime)
			}
			out := int64(1)
			for i := int64(0); i < ri; i++ {
				out *= li
			}
			return out, nil
		case lNum && rNum:
			return math.Pow(lf, rf), nil
		}
	}
	return nil, fmt.Errorf("%w: unsupported operand type(s) for %s: '%s' and '%s'", ErrRuntime, op, typeName(l), typeName(r))
}

func seqTimes(s, n any) (any, int64, bool) {
	k, ok := toInt(n)
	if !ok {
		return nil, 0, false
	}
	switch s.(type) {
	case string, []any:
		return s, k, true
	}
	return nil, 0, false
}

const maxRepeat = 10_000_000

func repeatSeq(s any, n int64) (any, error) {
	if n < 0 {
		n = 0
	}
	switch x := s.(type) {
	case string:
		if int64(len(x))*n > maxRepeat {
			return nil, fmt.Errorf("%w: repeated string too long", ErrRuntime)
		}
		return strings.Repeat(x, int(n)), nil
	case []any:
		if int64(len(x))*n > maxRepeat {
			return nil, fmt.Errorf("%w: repeated list too long", ErrRuntime)
		}
		out := []any{}
		for i := int64(0); i < n; i++ {
			out = append(out, x...)
		}
		return out, nil
	}
	return nil, nil
}

// percentFormat is a small part of Python's str % args: %s, %d, %r, %%.
func percentFormat(format string, arg any) (any, error) {
	args := []any{arg}
	if t, ok := arg.(Tuple); ok {
		args = t
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 >= len(format) {
			b.WriteByte(c)
			continue
		}
		i++
		verb := format[i]
		if verb == '%' {
			b.WriteByte('%')
			continue
		}
		if n >= len(args) {
			return nil, fmt.Errorf("%w: not enough arguments for format string", ErrRuntime)
		}
		a := args[n]
		n++
		switch verb {
		case 's':
			b.WriteString(toStr(a))
		case 'r':
			b.WriteString(repr(a))
		case 'd', 'i':
			if f, ok := toFloat(a); ok {
				fmt.Fprintf(&b, "%d", int64(f))
			} else {
				return nil, fmt.Errorf("%w: %%d format: a number is required", ErrRuntime)
			}
		default:
			return nil, fmt.Errorf("%w: unsupported format character '%c'", ErrRuntime, verb)
		}
	}
	return b.String(), nil
}

// equal is Python's ==.
func equal(a, b any) bool {
	if m, ok := a.(Markup); ok {
		a = string(m)
	}
	if m, ok := b.(Markup); ok {
		b = string(m)
	}
	if af, ok := toFloat(a); ok {
		if bf, ok := toFloat(b); ok {
			ai, aInt := toInt(a)
			bi, bInt := toInt(b)
			if aInt && bInt {
				return ai == bi
			}
			return af == bf
		}
		return false
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		return ok && equalSeq(x, y)
	case Tuple:
		y, ok := b.(Tuple)
		return ok && equalSeq(x, y)
	case *Map:
		y, ok := b.(*Map)
		if !ok || x.Len() != y.Len() {
			return false
		}
		for i, k := range x.keys {
			v, ok := y.Get(k)
			if !ok || !equal(x.vals[i], v) {
				return false
			}
		}
		return true
	case Undefined:
		_, ok := b.(Undefined)
		return ok
	case *Namespace:
		return a == b
	}
	return false
}

func equalSeq(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// less orders numbers, strings and sequences like Python's <.
func less(a, b any) (bool, error) {
	if m, ok := a.(Markup); ok {
		a = string(m)
	}
	if m, ok := b.(Markup); ok {
		b = string(m)
	}
	if af, ok := toFloat(a); ok {
		if bf, ok := toFloat(b); ok {
			ai, aInt := toInt(a)
			bi, bInt := toInt(b)
			if aInt && bInt {
				return ai < bi, nil
			}
			return af < bf, nil
		}
	}
	if as, ok := a.(string); ok {
		if bs, ok := b.(string); ok {
			return as < bs, nil
		}
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if !aok || !bok {
		at, aok2 := a.(Tuple)
		bt, bok2 := b.(Tuple)
		aok, bok, al, bl = aok2, bok2, at, bt
	}
	if aok && bok {
		for i := 0; i < len(al) && i < len(bl); i++ {
			if !equal(al[i], bl[i]) {
				return less(al[i], bl[i])
			}
		}
		return len(al) < len(bl), nil
	}
	if u, ok := a.(Undefined); ok {
		return false, u.err()
	}
	if u, ok := b.(Undefined); ok {
		return false, u.err()
	}
	return false, fmt.Errorf("%w: '<' not supported between instances of '%s' and '%s'", ErrRuntime, typeName(a), typeName(b))
}

func contains(container, item any) (bool, error) {
	if m, ok := container.(Markup); ok {
		container = string(m)
	}
	if m, ok := item.(Markup); ok {
		item = string(m)
	}
	switch c := container.(type) {
	case string:
		s, ok := item.(string)
		if !ok {
			return false, fmt.Errorf("%w: 'in <string>' requires string as left operand, not %s", ErrRuntime, typeName(item))
		}
		return strings.Contains(c, s), nil
	case []any, Tuple:
		items, _ := iterate(c)
		for _, it := range items {
			if equal(it, item) {
				return true, nil
			}
		}
		return false, nil
	case *Map:
		_, ok := c.Get(item)
		return ok, nil
	case Undefined:
		return false, nil
	case *Generator:
		items, err := c.drain()
		if err != nil {
			return false, err
		}
		for _, it := range items {
			if equal(it, item) {
				return true, nil
			}
		}
		return false, nil
	}
	return false, fmt.Errorf("%w: argument of type '%s' is not iterable", ErrRuntime, typeName(container))
}

func compare(op string, l, r any) (bool, error) {
	switch op {
	case "==":
		return equal(l, r), nil
	case "!=":
		return !equal(l, r), nil
	case "<":
		return less(l, r)
	case ">":
		return less(r, l)
	case "<=":
		lt, err := less(l, r)
		return lt || (err == nil && equal(l, r)), err
	case ">=":
		gt, err := less(r, l)
		return gt || (err == nil && equal(l, r)), err
	case "in":
		return contains(r, l)
	case "notin":
		ok, err := contains(r, l)
		return !ok, err
	}
	return false, fmt.Errorf("%w: unknown operator %s", ErrRuntime, op)
}
