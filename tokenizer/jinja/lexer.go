package jinja

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

type tokenKind int

const (
	tokEOF tokenKind = iota
	tokData
	tokVarBegin
	tokVarEnd
	tokBlockBegin
	tokBlockEnd
	tokName
	tokString
	tokInt
	tokFloat
	tokOp
)

type token struct {
	kind tokenKind
	val  string // data text, name, decoded string, operator, number text
	line int
}

func (t token) String() string {
	switch t.kind {
	case tokEOF:
		return "end of template"
	case tokData:
		return "template data"
	case tokVarBegin:
		return "'{{'"
	case tokVarEnd:
		return "'}}'"
	case tokBlockBegin:
		return "'{%'"
	case tokBlockEnd:
		return "'%}'"
	case tokString:
		return strconv.Quote(t.val)
	}
	return "'" + t.val + "'"
}

// lexer splits a template into tokens the way jinja2's lexer does, including
// its whitespace control: "-" strips all whitespace on that side of a tag,
// "+" keeps it, TrimBlocks drops the first newline after a block or comment
// tag, and LstripBlocks drops spaces and tabs before a block or comment tag
// that starts a line.
type lexer struct {
	src    string
	pos    int
	line   int
	opts   Options
	toks   []token
	inTag  tokenKind // tokVarBegin or tokBlockBegin while inside a tag
	parens []byte    // open brackets inside the current tag
	// lineStarting is jinja2's flag: the last consumed lexeme ended with a
	// newline, so text before the next tag starts a line.
	lineStarting bool
}

func lex(src string, opts Options) ([]token, error) {
	// jinja2 normalises line endings and drops one trailing newline
	// (keep_trailing_newline=False) before lexing.
	src = strings.ReplaceAll(src, "\r\n", "\n")
	src = strings.ReplaceAll(src, "\r", "\n")
	if !opts.KeepTrailingNewline {
		src = strings.TrimSuffix(src, "\n")
	}
	lx := &lexer{src: src, line: 1, opts: opts, lineStarting: true}
	if err := lx.run(); err != nil {
		return nil, err
	}
	return lx.toks, nil
}

func (lx *lexer) emit(kind tokenKind, val string) {
	lx.toks = append(lx.toks, token{kind: kind, val: val, line: lx.line})
}

func (lx *lexer) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: line %d: %s", ErrSyntax, lx.line, fmt.Sprintf(format, args...))
}

// advance consumes n bytes, counting lines and remembering whether the
// consumed piece ended a line.
func (lx *lexer) advance(n int) {
	piece := lx.src[lx.pos : lx.pos+n]
	lx.line += strings.Count(piece, "\n")
	if n > 0 {
		lx.lineStarting = piece[len(piece)-1] == '\n'
	}
	lx.pos += n
}

func (lx *lexer) run() error {
	for lx.pos < len(lx.src) {
		if err := lx.root(); err != nil {
			return err
		}
	}
	lx.emit(tokEOF, "")
	return nil
}

// root lexes template data up to the next tag and the tag itself.
func (lx *lexer) root() error {
	rest := lx.src[lx.pos:]
	start := -1
	for i := 0; i+1 < len(rest); i++ {
		if rest[i] == '{' && (rest[i+1] == '{' || rest[i+1] == '%' || rest[i+1] == '#') {
			start = i
			break
		}
	}
	if start < 0 {
		lx.emitData(rest)
		lx.advance(len(rest))
		return nil
	}
	text := rest[:start]
	kind := rest[start+1]
	sign := byte(0)
	if start+2 < len(rest) && (rest[start+2] == '-' || rest[start+2] == '+') {
		sign = rest[start+2]
	}
	// A raw block is recognised as a whole, like jinja2's root_raw_re.
	isRaw := false
	rawHeadLen := 0
	if kind == '%' {
		isRaw, rawHeadLen = matchRawBegin(rest[start:])
	}
	switch {
	case sign == '-':
		text = strings.TrimRightFunc(text, unicode.IsSpace)
	case sign != '+' && lx.opts.LstripBlocks && kind != '{':
		lpos := strings.LastIndexByte(text, '\n') + 1
		if (lpos > 0 || lx.lineStarting) && strings.Trim(text[lpos:], " \t") == "" {
			text = text[:lpos]
		}
	}
	lx.emitData(text)
	lx.advance(start)
	if isRaw {
		lx.advance(rawHeadLen)
		return lx.raw()
	}
	head := 2
	if sign != 0 {
		head = 3
	}
	switch kind {
	case '#':
		lx.advance(head)
		return lx.comment()
	case '{':
		lx.emit(tokVarBegin, "{{")
		lx.advance(head)
		lx.inTag = tokVarBegin
	case '%':
		lx.emit(tokBlockBegin, "{%")
		lx.advance(head)
		lx.inTag = tokBlockBegin
	}
	lx.parens = lx.parens[:0]
	return lx.tag()
}

func (lx *lexer) emitData(text string) {
	if text != "" {
		lx.emit(tokData, text)
	}
}

// matchRawBegin reports whether s starts with "{% raw %}" (with optional
// whitespace control) and how long that tag is, including what its end's
// whitespace control consumes.
func matchRawBegin(s string) (bool, int) {
	i := 2
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	for i < len(s) && isSpaceByte(s[i]) {
		i++
	}
	if !strings.HasPrefix(s[i:], "raw") {
		return false, 0
	}
	i += 3
	for i < len(s) && isSpaceByte(s[i]) {
		i++
	}
	switch {
	case strings.HasPrefix(s[i:], "-%}"):
		i += 3
		for i < len(s) && isSpaceByte(s[i]) {
			i++
		}
	case strings.HasPrefix(s[i:], "%}"):
		i += 2
	default:
		return false, 0
	}
	return true, i
}

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// blockEndLen returns how much of s a block or comment end consumes: the end
// marker plus trailing whitespace ("-") or one newline (TrimBlocks).
func (lx *lexer) blockEndLen(s string, marker string) int {
	switch {
	case strings.HasPrefix(s, "-"+marker):
		n := 1 + len(marker)
		for n < len(s) {
			r, size := utf8.DecodeRuneInString(s[n:])
			if !unicode.IsSpace(r) {
				break
			}
			n += size
		}
		return n
	case strings.HasPrefix(s, "+"+marker):
		return 1 + len(marker)
	case strings.HasPrefix(s, marker):
		n := len(marker)
		if lx.opts.TrimBlocks && n < len(s) && s[n] == '\n' {
			n++
		}
		return n
	}
	return 0
}

func (lx *lexer) comment() error {
	for i := lx.pos; i < len(lx.src); i++ {
		if n := lx.blockEndLen(lx.src[i:], "#}"); n > 0 {
			lx.advance(i - lx.pos + n)
			return nil
		}
	}
	return lx.errorf("missing end of comment tag")
}

func (lx *lexer) raw() error {
	for i := lx.pos; i < len(lx.src); i++ {
		if lx.src[i] != '{' || i+1 >= len(lx.src) || lx.src[i+1] != '%' {
			continue
		}
		j := i + 2
		sign := byte(0)
		if j < len(lx.src) && (lx.src[j] == '-' || lx.src[j] == '+') {
			sign = lx.src[j]
			j++
		}
		for j < len(lx.src) && isSpaceByte(lx.src[j]) {
			j++
		}
		if !strings.HasPrefix(lx.src[j:], "endraw") {
			continue
		}
		j += len("endraw")
		for j < len(lx.src) && isSpaceByte(lx.src[j]) {
			j++
		}
		n := lx.blockEndLen(lx.src[j:], "%}")
		if n == 0 {
			continue
		}
		text := lx.src[lx.pos:i]
		switch {
		case sign == '-':
			text = strings.TrimRightFunc(text, unicode.IsSpace)
		case sign != '+' && lx.opts.LstripBlocks:
			lpos := strings.LastIndexByte(text, '\n') + 1
			if (lpos > 0 || lx.lineStarting) && strings.Trim(text[lpos:], " \t") == "" {
				text = text[:lpos]
			}
		}
		lx.emitData(text)
		lx.advance(j + n - lx.pos)
		return nil
	}
	return lx.errorf("missing end of raw directive")
}

// operators, longest first.
var operators = []string{
	"//", "**", "==", "!=", "<=", ">=",
	"+", "-", "*", "/", "%", "~", "<", ">", "=", "(", ")", "[", "]", "{", "}", ",", ".", ":", "|",
}

// tag lexes the inside of a {{ }} or {% %} tag, up to and including its end.
func (lx *lexer) tag() error {
	for {
		// skip whitespace
		for lx.pos < len(lx.src) && isSpaceByte(lx.src[lx.pos]) {
			lx.advance(1)
		}
		if lx.pos >= len(lx.src) {
			return lx.errorf("unexpected end of template inside a tag")
		}
		rest := lx.src[lx.pos:]
		if len(lx.parens) == 0 {
			if lx.inTag == tokBlockBegin {
				if n := lx.blockEndLen(rest, "%}"); n > 0 {
					lx.emit(tokBlockEnd, "%}")
					lx.advance(n)
					return nil
				}
			} else {
				if strings.HasPrefix(rest, "-}}") {
					n := 3
					for n < len(rest) {
						r, size := utf8.DecodeRuneInString(rest[n:])
						if !unicode.IsSpace(r) {
							break
						}
						n += size
					}
					lx.emit(tokVarEnd, "}}")
					lx.advance(n)
					return nil
				}
				if strings.HasPrefix(rest, "}}") {
					lx.emit(tokVarEnd, "}}")
					lx.advance(2)
					return nil
				}
			}
		}
		c := rest[0]
		switch {
		case c == '"' || c == '\'':
			s, n, err := lexString(rest)
			if err != nil {
				return lx.errorf("%v", err)
			}
			lx.emit(tokString, s)
			lx.advance(n)
		case c >= '0' && c <= '9':
			n, isFloat := lexNumber(rest)
			kind := tokInt
			if isFloat {
				kind = tokFloat
			}
			lx.emit(kind, strings.ReplaceAll(rest[:n], "_", ""))
			lx.advance(n)
		case c == '_' || isLetterStart(rest):
			n := 0
			for n < len(rest) {
				r, size := utf8.DecodeRuneInString(rest[n:])
				if r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) {
					n += size
					continue
				}
				break
			}
			lx.emit(tokName, rest[:n])
			lx.advance(n)
		default:
			op := ""
			for _, o := range operators {
				if strings.HasPrefix(rest, o) {
					op = o
					break
				}
			}
			if op == "" {
				r, _ := utf8.DecodeRuneInString(rest)
				return lx.errorf("unexpected char %q", r)
			}
			switch op {
			case "(", "[", "{":
				lx.parens = append(lx.parens, op[0])
			case ")", "]", "}":
				want := map[string]byte{")": '(', "]": '[', "}": '{'}[op]
				if len(lx.parens) == 0 || lx.parens[len(lx.parens)-1] != want {
					return lx.errorf("unexpected %q", op)
				}
				lx.parens = lx.parens[:len(lx.parens)-1]
			}
			lx.emit(tokOp, op)
			lx.advance(len(op))
		}
	}
}

func isLetterStart(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLetter(r)
}

// lexNumber returns the length of the number at the start of s and whether
// it is a float (jinja2: digits with underscores, optional fraction, exponent).
func lexNumber(s string) (int, bool) {
	digits := func(i int) int {
		for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '_' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9') {
			i++
		}
		return i
	}
	n := digits(0)
	isFloat := false
	if n+1 < len(s) && s[n] == '.' && s[n+1] >= '0' && s[n+1] <= '9' {
		n = digits(n + 1)
		isFloat = true
	}
	if n < len(s) && (s[n] == 'e' || s[n] == 'E') {
		j := n + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && s[j] >= '0' && s[j] <= '9' {
			n = digits(j)
			isFloat = true
		}
	}
	return n, isFloat
}

// lexString decodes a quoted string literal with Python's escapes (jinja2
// decodes with "unicode-escape"), returning the value and its source length.
func lexString(s string) (string, int, error) {
	quote := s[0]
	var b strings.Builder
	i := 1
	for i < len(s) {
		c := s[i]
		if c == quote {
			return b.String(), i + 1, nil
		}
		if c != '\\' {
			r, size := utf8.DecodeRuneInString(s[i:])
			b.WriteRune(r)
			i += size
			continue
		}
		if i+1 >= len(s) {
			break
		}
		e := s[i+1]
		i += 2
		switch e {
		case '\n':
		case '\\', '\'', '"':
			b.WriteByte(e)
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'v':
			b.WriteByte('\v')
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i - 1
			for j < len(s) && j < i+2 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(s[i-1:j], 8, 32)
			b.WriteRune(rune(v))
			i = j
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			if i+n > len(s) {
				return "", 0, fmt.Errorf("truncated \\%c escape", e)
			}
			v, err := strconv.ParseUint(s[i:i+n], 16, 32)
			if err != nil || v > unicode.MaxRune {
				return "", 0, fmt.Errorf("bad \\%c escape %q", e, s[i:i+n])
			}
			b.WriteRune(rune(v))
			i += n
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return "", 0, fmt.Errorf("unterminated string")
}
