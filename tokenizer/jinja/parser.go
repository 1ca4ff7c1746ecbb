package jinja

import (
	"fmt"
	"strconv"
)

// AST node types. Statements render; expressions evaluate to values.
type (
	node interface{}
	expr interface{}

	dataNode   struct{ text string }
	outputNode struct{ e expr }
	ifNode     struct {
		cond     expr
		body     []node
		elseBody []node // an elif becomes a nested ifNode here
	}
	forNode struct {
		target   assignTarget
		iter     expr
		filter   expr // for x in xs if filter
		body     []node
		elseBody []node
	}
	setNode struct {
		target assignTarget
		value  expr
		body   []node // block set: {% set x %}…{% endset %}
	}
	macroNode struct {
		name string
		m    *macro
	}
	callBlockNode struct {
		call   *callExpr
		caller *macro
	}
	filterBlockNode struct {
		filter *filterExpr // its arg is filled with the body's output
		body   []node
	}
	breakNode    struct{}
	continueNode struct{}

	// assignTarget is a name, a tuple of names, or ns.attr.
	assignTarget struct {
		name  string
		names []string // tuple unpacking when len > 0
		attr  string   // namespace attribute when set
	}

	constExpr struct{ v any }
	nameExpr  struct{ name string }
	listExpr  struct{ items []expr }
	tupleExpr struct{ items []expr }
	dictExpr  struct{ keys, vals []expr }
	getattr   struct {
		obj  expr
		attr string
	}
	getitem struct {
		obj, key expr
	}
	sliceExpr struct{ start, stop, step expr }
	unaryExpr struct {
		op string // "-", "+", "not"
		x  expr
	}
	binExpr struct {
		op   string
		l, r expr
	}
	logicExpr struct {
		and  bool
		l, r expr
	}
	compareExpr struct {
		first expr
		ops   []string
		rest  []expr
	}
	concatExpr struct{ items []expr }
	condExpr   struct{ cond, yes, no expr }
	callExpr   struct {
		fn     expr
		args   []expr
		kwargs []kwarg
	}
	filterExpr struct {
		x      expr // nil in a filter block
		name   string
		args   []expr
		kwargs []kwarg
	}
	testExpr struct {
		x      expr
		name   string
		args   []expr
		negate bool
	}
	kwarg struct {
		name string
		v    expr
	}
)

// macro is a parsed macro definition.
type macro struct {
	name     string
	params   []string
	defaults []expr // aligned to the last len(defaults) params
	body     []node
}

type parser struct {
	toks []token
	pos  int
}

func parse(toks []token) ([]node, error) {
	p := &parser{toks: toks}
	body, end, err := p.parseBody(nil)
	if err != nil {
		return nil, err
	}
	if end != "" {
		return nil, p.errorf("unexpected '%s'", end)
	}
	return body, nil
}

func (p *parser) cur() token  { return p.toks[p.pos] }
func (p *parser) next() token { t := p.toks[p.pos]; p.pos++; return t }
func (p *parser) peek(n int) token {
	if p.pos+n < len(p.toks) {
		return p.toks[p.pos+n]
	}
	return p.toks[len(p.toks)-1]
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: line %d: %s", ErrSyntax, p.cur().line, fmt.Sprintf(format, args...))
}

func (p *parser) isOp(op string) bool {
	t := p.cur()
	return t.kind == tokOp && t.val == op
}

func (p *parser) isName(name string) bool {
	t := p.cur()
	return t.kind == tokName && t.val == name
}

func (p *parser) expectOp(op string) error {
	if !p.isOp(op) {
		return p.errorf("expected '%s', got %s", op, p.cur())
	}
	p.pos++
	return nil
}

func (p *parser) expectName() (string, error) {
	if p.cur().kind != tokName {
		return "", p.errorf("expected a name, got %s", p.cur())
	}
	return p.next().val, nil
}

func (p *parser) expectBlockEnd() error {
	if p.cur().kind != tokBlockEnd {
		return p.errorf("expected end of block tag, got %s", p.cur())
	}
	p.pos++
	return nil
}

// parseBody parses nodes until a block tag whose keyword is in ends, and
// returns that keyword (the tag's remainder is left for the caller).
func (p *parser) parseBody(ends []string) ([]node, string, error) {
	var body []node
	for {
		t := p.cur()
		switch t.kind {
		case tokEOF:
			if len(ends) > 0 {
				return nil, "", p.errorf("unexpected end of template, expected '%s'", ends[0])
			}
			return body, "", nil
		case tokData:
			p.pos++
			body = append(body, &dataNode{t.val})
		case tokVarBegin:
			p.pos++
			e, err := p.parseTuple(true)
			if err != nil {
				return nil, "", err
			}
			if p.cur().kind != tokVarEnd {
				return nil, "", p.errorf("expected '}}', got %s", p.cur())
			}
			p.pos++
			body = append(body, &outputNode{e})
		case tokBlockBegin:
			kw := p.peek(1)
			if kw.kind != tokName {
				return nil, "", p.errorf("expected statement name, got %s", kw)
			}
			for _, e := range ends {
				if kw.val == e {
					p.pos += 2
					return body, e, nil
				}
			}
			p.pos += 2
			n, err := p.parseStatement(kw.val)
			if err != nil {
				return nil, "", err
			}
			if n != nil {
				body = append(body, n)
			}
		default:
			return nil, "", p.errorf("unexpected %s", t)
		}
	}
}

func (p *parser) parseStatement(kw string) (node, error) {
	switch kw {
	case "if":
		return p.parseIf()
	case "for":
		return p.parseFor()
	case "set":
		return p.parseSet()
	case "macro":
		return p.parseMacro()
	case "call":
		return p.parseCallBlock()
	case "filter":
		return p.parseFilterBlock()
	case "break", "continue":
		if err := p.expectBlockEnd(); err != nil {
			return nil, err
		}
		if kw == "break" {
			return &breakNode{}, nil
		}
		return &continueNode{}, nil
	case "generation":
		// transformers' AssistantTracker: {% generation %} marks assistant
		// text for masks; rendering just outputs the body.
		if err := p.expectBlockEnd(); err != nil {
			return nil, err
		}
		body, _, err := p.parseBody([]string{"endgeneration"})
		if err != nil {
			return nil, err
		}
		if err := p.expectBlockEnd(); err != nil {
			return nil, err
		}
		return &ifNode{cond: &constExpr{true}, body: body}, nil
	}
	p.pos--
	return nil, p.errorf("unknown tag '%s'", kw)
}

func (p *parser) parseIf() (node, error) {
	cond, err := p.parseExpr(true)
	if err != nil {
		return nil, err
	}
	if err := p.expectBlockEnd(); err != nil {
		return nil, err
	}
	n := &ifNode{cond: cond}
	body, end, err := p.parseBody([]string{"elif", "else", "endif"})
	if err != nil {
		return nil, err
	}
	n.body = body
	switch end {
	case "elif":
		sub, err := p.parseIf()
		if err != nil {
			return nil, err
		}
		n.elseBody = []node{sub}
		return n, nil
	case "else":
		if err := p.expectBlockEnd(); err != nil {
			return nil, err
		}
		n.elseBody, _, err = p.parseBody([]string{"endif"})
		if err != nil {
			return nil, err
		}
	}
	return n, p.expectBlockEnd()
}

func (p *parser) parseAssignTarget(withNamespace bool) (assignTarget, error) {
	name, err := p.expectName()
	if err != nil {
		return assignTarget{}, err
	}
	if withNamespace && p.isOp(".") {
		p.pos++
		attr, err := p.expectName()
		if err != nil {
			return assignTarget{}, err
		}
		return assignTarget{name: name, attr: attr}, nil
	}
	if !p.isOp(",") {
		return assignTarget{name: name}, nil
	}
	names := []string{name}
	for p.isOp(",") {
		p.pos++
		if p.cur().kind != tokName || p.isName("in") {
			break
		}
		n, _ := p.expectName()
		names = append(names, n)
	}
	return assignTarget{names: names}, nil
}

func (p *parser) parseFor() (node, error) {
	var target assignTarget
	var err error
	if p.isOp("(") {
		p.pos++
		target, err = p.parseAssignTarget(false)
		if err == nil {
			err = p.expectOp(")")
		}
	} else {
		target, err = p.parseAssignTarget(false)
	}
	if err != nil {
		return nil, err
	}
	if !p.isName("in") {
		return nil, p.errorf("expected 'in', got %s", p.cur())
	}
	p.pos++
	iter, err := p.parseTuple(false)
	if err != nil {
		return nil, err
	}
	n := &forNode{target: target, iter: iter}
	if p.isName("if") {
		p.pos++
		if n.filter, err = p.parseExpr(true); err != nil {
			return nil, err
		}
	}
	if p.isName("recursive") {
		return nil, p.errorf("recursive loops are not supported")
	}
	if err := p.expectBlockEnd(); err != nil {
		return nil, err
	}
	body, end, err := p.parseBody([]string{"else", "endfor"})
	if err != nil {
		return nil, err
	}
	n.body = body
	if end == "else" {
		if err := p.expectBlockEnd(); err != nil {
			return nil, err
		}
		if n.elseBody, _, err = p.parseBody([]string{"endfor"}); err != nil {
			return nil, err
		}
	}
	return n, p.expectBlockEnd()
}

func (p *parser) parseSet() (node, error) {
	target, err := p.parseAssignTarget(true)
	if err != nil {
		return nil, err
	}
	if p.isOp("=") {
		p.pos++
		v, err := p.parseTuple(true)
		if err != nil {
			return nil, err
		}
		return &setNode{target: target, value: v}, p.expectBlockEnd()
	}
	// block set, optionally filtered: {% set x | trim %}…{% endset %}
	var filters []*filterExpr
	for p.isOp("|") {
		p.pos++
		f, err := p.parseFilter(nil)
		if err != nil {
			return nil, err
		}
		filters = append(filters, f)
	}
	if err := p.expectBlockEnd(); err != nil {
		return nil, err
	}
	body, _, err := p.parseBody([]string{"endset"})
	if err != nil {
		return nil, err
	}
	if err := p.expectBlockEnd(); err != nil {
		return nil, err
	}
	n := &setNode{target: target, body: body}
	for _, f := range filters {
		body = []node{&filterBlockNode{filter: f, body: body}}
	}
	n.body = body
	return n, nil
}

func (p *parser) parseMacroSignature() (*macro, error) {
	m := &macro{}
	if err := p.expectOp("("); err != nil {
		return nil, err
	}
	for !p.isOp(")") {
		if len(m.params) > 0 {
			if err := p.expectOp(","); err != nil {
				return nil, err
			}
			if p.isOp(")") {
				break
			}
		}
		name, err := p.expectName()
		if err != nil {
			return nil, err
		}
		m.params = append(m.params, name)
		if p.isOp("=") {
			p.pos++
			d, err := p.parseExpr(true)
			if err != nil {
				return nil, err
			}
			m.defaults = append(m.defaults, d)
		} else if len(m.defaults) > 0 {
			return nil, p.errorf("non-default argument follows default argument")
		}
	}
	p.pos++
	return m, nil
}

func (p *parser) parseMacro() (node, error) {
	name, err := p.expectName()
	if err != nil {
		return nil, err
	}
	m, err := p.parseMacroSignature()
	if err != nil {
		return nil, err
	}
	m.name = name
	if err := p.expectBlockEnd(); err != nil {
		return nil, err
	}
	if m.body, _, err = p.parseBody([]string{"endmacro"}); err != nil {
		return nil, err
	}
	if p.cur().kind == tokName {
		p.pos++ // {% endmacro name %}
	}
	return &macroNode{name: name, m: m}, p.expectBlockEnd()
}

func (p *parser) parseCallBlock() (node, error) {
	caller := &macro{name: "caller"}
	if p.isOp("(") {
		m, err := p.parseMacroSignature()
		if err != nil {
			return nil, err
		}
		caller.params, caller.defaults = m.params, m.defaults
	}
	e, err := p.parseExpr(true)
	if err != nil {
		return nil, err
	}
	call, ok := e.(*callExpr)
	if !ok {
		return nil, p.errorf("expected a call in call block")
	}
	if err := p.expectBlockEnd(); err != nil {
		return nil, err
	}
	if caller.body, _, err = p.parseBody([]string{"endcall"}); err != nil {
		return nil, err
	}
	return &callBlockNode{call: call, caller: caller}, p.expectBlockEnd()
}

func (p *parser) parseFilterBlock() (node, error) {
	f, err := p.parseFilter(nil)
	if err != nil {
		return nil, err
	}
	if err := p.expectBlockEnd(); err != nil {
		return nil, err
	}
	body, _, err := p.parseBody([]string{"endfilter"})
	if err != nil {
		return nil, err
	}
	return &filterBlockNode{filter: f, body: body}, p.expectBlockEnd()
}

// parseTuple parses an expression, or a tuple when commas follow.
func (p *parser) parseTuple(withCond bool) (expr, error) {
	first, err := p.parseExpr(withCond)
	if err != nil {
		return nil, err
	}
	if !p.isOp(",") {
		return first, nil
	}
	items := []expr{first}
	for p.isOp(",") {
		p.pos++
		if p.tupleEnds() {
			break
		}
		e, err := p.parseExpr(withCond)
		if err != nil {
			return nil, err
		}
		items = append(items, e)
	}
	return &tupleExpr{items}, nil
}

func (p *parser) tupleEnds() bool {
	t := p.cur()
	switch t.kind {
	case tokVarEnd, tokBlockEnd, tokEOF:
		return true
	case tokOp:
		return t.val == ")" || t.val == "]" || t.val == "}" || t.val == "="
	case tokName:
		return t.val == "if" || t.val == "in"
	}
	return false
}

func (p *parser) parseExpr(withCond bool) (expr, error) {
	if !withCond {
		return p.parseOr()
	}
	e, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	for p.isName("if") {
		p.pos++
		cond, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		var no expr
		if p.isName("else") {
			p.pos++
			if no, err = p.parseExpr(true); err != nil {
				return nil, err
			}
		}
		e = &condExpr{cond: cond, yes: e, no: no}
	}
	return e, nil
}

func (p *parser) parseOr() (expr, error) {
	l, err := p.parseAnd()
	for err == nil && p.isName("or") {
		p.pos++
		var r expr
		r, err = p.parseAnd()
		l = &logicExpr{and: false, l: l, r: r}
	}
	return l, err
}

func (p *parser) parseAnd() (expr, error) {
	l, err := p.parseNot()
	for err == nil && p.isName("and") {
		p.pos++
		var r expr
		r, err = p.parseNot()
		l = &logicExpr{and: true, l: l, r: r}
	}
	return l, err
}

func (p *parser) parseNot() (expr, error) {
	if p.isName("not") {
		p.pos++
		x, err := p.parseNot()
		return &unaryExpr{op: "not", x: x}, err
	}
	return p.parseCompare()
}

func (p *parser) parseCompare() (expr, error) {
	first, err := p.parseMath1()
	if err != nil {
		return nil, err
	}
	c := &compareExpr{first: first}
	for {
		t := p.cur()
		var op string
		switch {
		case t.kind == tokOp && (t.val == "==" || t.val == "!=" || t.val == "<" || t.val == "<=" || t.val == ">" || t.val == ">="):
			op = t.val
			p.pos++
		case p.isName("in"):
			op = "in"
			p.pos++
		case p.isName("not") && p.peek(1).kind == tokName && p.peek(1).val == "in":
			op = "notin"
			p.pos += 2
		}
		if op == "" {
			break
		}
		r, err := p.parseMath1()
		if err != nil {
			return nil, err
		}
		c.ops = append(c.ops, op)
		c.rest = append(c.rest, r)
	}
	if len(c.ops) == 0 {
		return first, nil
	}
	return c, nil
}

func (p *parser) parseMath1() (expr, error) {
	l, err := p.parseConcat()
	for err == nil && (p.isOp("+") || p.isOp("-")) {
		op := p.next().val
		var r expr
		r, err = p.parseConcat()
		l = &binExpr{op: op, l: l, r: r}
	}
	return l, err
}

func (p *parser) parseConcat() (expr, error) {
	first, err := p.parseMath2()
	if err != nil || !p.isOp("~") {
		return first, err
	}
	items := []expr{first}
	for p.isOp("~") {
		p.pos++
		e, err := p.parseMath2()
		if err != nil {
			return nil, err
		}
		items = append(items, e)
	}
	return &concatExpr{items}, nil
}

func (p *parser) parseMath2() (expr, error) {
	l, err := p.parsePow()
	for err == nil && (p.isOp("*") || p.isOp("/") || p.isOp("//") || p.isOp("%")) {
		op := p.next().val
		var r expr
		r, err = p.parsePow()
		l = &binExpr{op: op, l: l, r: r}
	}
	return l, err
}

func (p *parser) parsePow() (expr, error) {
	l, err := p.parseUnary(true)
	for err == nil && p.isOp("**") {
		p.pos++
		var r expr
		r, err = p.parseUnary(true)
		l = &binExpr{op: "**", l: l, r: r}
	}
	return l, err
}

func (p *parser) parseUnary(withFilter bool) (expr, error) {
	var e expr
	var err error
	if p.isOp("-") || p.isOp("+") {
		op := p.next().val
		x, err := p.parseUnary(false)
		if err != nil {
			return nil, err
		}
		e = &unaryExpr{op: op, x: x}
	} else if e, err = p.parsePrimary(); err != nil {
		return nil, err
	}
	if e, err = p.parsePostfix(e); err != nil {
		return nil, err
	}
	if withFilter {
		return p.parseFilterExpr(e)
	}
	return e, nil
}

func (p *parser) parsePrimary() (expr, error) {
	t := p.cur()
	switch t.kind {
	case tokName:
		p.pos++
		switch t.val {
		case "true", "True":
			return &constExpr{true}, nil
		case "false", "False":
			return &constExpr{false}, nil
		case "none", "None":
			return &constExpr{nil}, nil
		}
		return &nameExpr{t.val}, nil
	case tokString:
		s := ""
		for p.cur().kind == tokString {
			s += p.next().val
		}
		return &constExpr{s}, nil
	case tokInt:
		p.pos++
		v, err := strconv.ParseInt(t.val, 10, 64)
		if err != nil {
			f, _ := strconv.ParseFloat(t.val, 64)
			return &constExpr{f}, nil
		}
		return &constExpr{v}, nil
	case tokFloat:
		p.pos++
		v, err := strconv.ParseFloat(t.val, 64)
		if err != nil {
			return nil, p.errorf("bad number %q", t.val)
		}
		return &constExpr{v}, nil
	case tokOp:
		switch t.val {
		case "(":
			p.pos++
			if p.isOp(")") {
				p.pos++
				return &tupleExpr{}, nil
			}
			e, err := p.parseExpr(true)
			if err != nil {
				return nil, err
			}
			if p.isOp(",") {
				items := []expr{e}
				for p.isOp(",") {
					p.pos++
					if p.isOp(")") {
						break
					}
					x, err := p.parseExpr(true)
					if err != nil {
						return nil, err
					}
					items = append(items, x)
				}
				e = &tupleExpr{items}
			}
			return e, p.expectOp(")")
		case "[":
			p.pos++
			l := &listExpr{}
			for !p.isOp("]") {
				if len(l.items) > 0 {
					if err := p.expectOp(","); err != nil {
						return nil, err
					}
					if p.isOp("]") {
						break
					}
				}
				x, err := p.parseExpr(true)
				if err != nil {
					return nil, err
				}
				l.items = append(l.items, x)
			}
			p.pos++
			return l, nil
		case "{":
			p.pos++
			d := &dictExpr{}
			for !p.isOp("}") {
				if len(d.keys) > 0 {
					if err := p.expectOp(","); err != nil {
						return nil, err
					}
					if p.isOp("}") {
						break
					}
				}
				k, err := p.parseExpr(true)
				if err != nil {
					return nil, err
				}
				if err := p.expectOp(":"); err != nil {
					return nil, err
				}
				v, err := p.parseExpr(true)
				if err != nil {
					return nil, err
				}
				d.keys = append(d.keys, k)
				d.vals = append(d.vals, v)
			}
			p.pos++
			return d, nil
		}
	}
	return nil, p.errorf("unexpected %s", t)
}

func (p *parser) parsePostfix(e expr) (expr, error) {
	for {
		var err error
		switch {
		case p.isOp("."):
			p.pos++
			t := p.next()
			switch t.kind {
			case tokName:
				e = &getattr{obj: e, attr: t.val}
			case tokInt:
				v, _ := strconv.ParseInt(t.val, 10, 64)
				e = &getitem{obj: e, key: &constExpr{v}}
			default:
				p.pos--
				return nil, p.errorf("expected name or number after '.', got %s", t)
			}
		case p.isOp("["):
			p.pos++
			if e, err = p.parseSubscript(e); err != nil {
				return nil, err
			}
		case p.isOp("("):
			if e, err = p.parseCall(e); err != nil {
				return nil, err
			}
		default:
			return e, nil
		}
	}
}

func (p *parser) parseSubscript(obj expr) (expr, error) {
	var parts [3]expr
	idx := 0
	isSlice := false
	for !p.isOp("]") {
		if p.isOp(":") {
			p.pos++
			isSlice = true
			idx++
			if idx > 2 {
				return nil, p.errorf("too many ':' in slice")
			}
			continue
		}
		if parts[idx] != nil {
			return nil, p.errorf("expected ']' or ':', got %s", p.cur())
		}
		x, err := p.parseExpr(true)
		if err != nil {
			return nil, err
		}
		parts[idx] = x
	}
	p.pos++
	if !isSlice {
		if parts[0] == nil {
			return nil, p.errorf("empty subscript")
		}
		return &getitem{obj: obj, key: parts[0]}, nil
	}
	return &getitem{obj: obj, key: &sliceExpr{parts[0], parts[1], parts[2]}}, nil
}

func (p *parser) parseArgs() ([]expr, []kwarg, error) {
	if err := p.expectOp("("); err != nil {
		return nil, nil, err
	}
	var args []expr
	var kwargs []kwarg
	for !p.isOp(")") {
		if len(args)+len(kwargs) > 0 {
			if err := p.expectOp(","); err != nil {
				return nil, nil, err
			}
			if p.isOp(")") {
				break
			}
		}
		if p.cur().kind == tokName && p.peek(1).kind == tokOp && p.peek(1).val == "=" {
			name := p.next().val
			p.pos++
			v, err := p.parseExpr(true)
			if err != nil {
				return nil, nil, err
			}
			kwargs = append(kwargs, kwarg{name, v})
			continue
		}
		if len(kwargs) > 0 {
			return nil, nil, p.errorf("positional argument after keyword argument")
		}
		v, err := p.parseExpr(true)
		if err != nil {
			return nil, nil, err
		}
		args = append(args, v)
	}
	p.pos++
	return args, kwargs, nil
}

func (p *parser) parseCall(fn expr) (expr, error) {
	args, kwargs, err := p.parseArgs()
	if err != nil {
		return nil, err
	}
	return &callExpr{fn: fn, args: args, kwargs: kwargs}, nil
}

func (p *parser) parseFilter(x expr) (*filterExpr, error) {
	name, err := p.expectName()
	if err != nil {
		return nil, err
	}
	for p.isOp(".") {
		p.pos++
		n, err := p.expectName()
		if err != nil {
			return nil, err
		}
		name += "." + n
	}
	f := &filterExpr{x: x, name: name}
	if p.isOp("(") {
		if f.args, f.kwargs, err = p.parseArgs(); err != nil {
			return nil, err
		}
	}
	return f, nil
}

func (p *parser) parseFilterExpr(e expr) (expr, error) {
	for {
		switch {
		case p.isOp("|"):
			p.pos++
			f, err := p.parseFilter(e)
			if err != nil {
				return nil, err
			}
			e = f
		case p.isName("is"):
			p.pos++
			t := &testExpr{x: e}
			if p.isName("not") {
				p.pos++
				t.negate = true
			}
			name, err := p.expectName()
			if err != nil {
				return nil, err
			}
			t.name = name
			cur := p.cur()
			switch {
			case p.isOp("("):
				args, _, err := p.parseArgs()
				if err != nil {
					return nil, err
				}
				t.args = args
			case (cur.kind == tokName && cur.val != "else" && cur.val != "or" && cur.val != "and" && cur.val != "is") ||
				cur.kind == tokString || cur.kind == tokInt || cur.kind == tokFloat ||
				(cur.kind == tokOp && (cur.val == "[" || cur.val == "{")):
				a, err := p.parsePrimary()
				if err != nil {
					return nil, err
				}
				if a, err = p.parsePostfix(a); err != nil {
					return nil, err
				}
				t.args = []expr{a}
			}
			e = t
		case p.isOp("("):
			var err error
			if e, err = p.parseCall(e); err != nil {
				return nil, err
			}
		default:
			return e, nil
		}
	}
}
