package chatfmt

import "fmt"

// jsonScanner validates one JSON value a byte at a time, so a tool call can
// be streamed while the model writes it: it says where each top-level key
// and value of the outer object starts and ends, and fails on the first byte
// that cannot continue valid JSON.
type jsonScanner struct {
	state   scanState
	stack   []byte // open containers: '{' or '['
	literal string // rest of true/false/null being matched
	hex     int    // \u digits left
	isKey   bool   // the current string is an object key
	num     numState
	pos     int // bytes consumed
	err     error

	// Events of the outermost object (depth 1), as byte offsets.
	keyStart, keyEnd     int // the last top-level key string, quotes included
	valueStart, valueEnd int // the last top-level value
	onKey                func(start, end int)
	onValueStart         func(start int)
	onValueEnd           func(start, end int)
}

type scanState int

const (
	scanValue           scanState = iota // expecting a value
	scanString                           // inside a string
	scanStringEscape                     // after a backslash
	scanStringHex                        // inside \uXXXX
	scanNumber                           // inside a number
	scanLiteral                          // inside true/false/null
	scanObjectKeyOrEnd                   // after '{'
	scanObjectKey                        // after ',' in an object
	scanColon                            // after a key
	scanObjectNext                       // after a value in an object
	scanArrayValueOrEnd                  // after '['
	scanArrayNext                        // after a value in an array
	scanDone                             // the value is complete
)

type numState int

const (
	numSign numState = iota // after '-'
	numZero                 // a leading 0
	numInt
	numDot
	numFrac
	numE
	numESign
	numExp
)

const maxJSONDepth = 512

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (s *jsonScanner) fail(c byte) error {
	s.err = fmt.Errorf("invalid character %q at offset %d of tool call JSON", c, s.pos)
	return s.err
}

// depth is the number of open containers.
func (s *jsonScanner) depth() int { return len(s.stack) }

// done reports whether a complete value has been read.
func (s *jsonScanner) done() bool { return s.state == scanDone }

// step consumes one byte.
func (s *jsonScanner) step(c byte) error {
	if s.err != nil {
		return s.err
	}
	if err := s.stepState(c); err != nil {
		return err
	}
	s.pos++
	return nil
}

// valueBegins is called when a value starts at the current byte.
func (s *jsonScanner) valueBegins() {
	if s.depth() == 1 && s.stack[0] == '{' {
		s.valueStart = s.pos
		if s.onValueStart != nil {
			s.onValueStart(s.pos)
		}
	}
}

// valueEnds is called after a value ended; end is the offset just past it.
func (s *jsonScanner) valueEnds(end int) {
	switch {
	case s.depth() == 0:
		s.state = scanDone
		return
	case s.stack[len(s.stack)-1] == '{':
		s.state = scanObjectNext
	default:
		s.state = scanArrayNext
	}
	if s.depth() == 1 && s.stack[0] == '{' {
		s.valueEnd = end
		if s.onValueEnd != nil {
			s.onValueEnd(s.valueStart, end)
		}
	}
}

func (s *jsonScanner) stepState(c byte) error {
	switch s.state {
	case scanValue, scanArrayValueOrEnd:
		if isJSONSpace(c) {
			return nil
		}
		if s.state == scanArrayValueOrEnd && c == ']' {
			s.stack = s.stack[:len(s.stack)-1]
			s.valueEnds(s.pos + 1)
			return nil
		}
		s.valueBegins()
		switch {
		case c == '{' || c == '[':
			if len(s.stack) >= maxJSONDepth {
				return s.fail(c)
			}
			s.stack = append(s.stack, c)
			if c == '{' {
				s.state = scanObjectKeyOrEnd
			} else {
				s.state = scanArrayValueOrEnd
			}
		case c == '"':
			s.state, s.isKey = scanString, false
		case c == '-':
			s.state, s.num = scanNumber, numSign
		case c == '0':
			s.state, s.num = scanNumber, numZero
		case c >= '1' && c <= '9':
			s.state, s.num = scanNumber, numInt
		case c == 't':
			s.state, s.literal = scanLiteral, "rue"
		case c == 'f':
			s.state, s.literal = scanLiteral, "alse"
		case c == 'n':
			s.state, s.literal = scanLiteral, "ull"
		default:
			return s.fail(c)
		}
	case scanString:
		switch {
		case c == '"':
			if s.isKey {
				s.state = scanColon
				if s.depth() == 1 {
					s.keyEnd = s.pos + 1
					if s.onKey != nil {
						s.onKey(s.keyStart, s.keyEnd)
					}
				}
				return nil
			}
			s.valueEnds(s.pos + 1)
		case c == '\\':
			s.state = scanStringEscape
		case c < 0x20:
			return s.fail(c)
		}
	case scanStringEscape:
		switch c {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			s.state = scanString
		case 'u':
			s.state, s.hex = scanStringHex, 4
		default:
			return s.fail(c)
		}
	case scanStringHex:
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return s.fail(c)
		}
		s.hex--
		if s.hex == 0 {
			s.state = scanString
		}
	case scanNumber:
		digit := c >= '0' && c <= '9'
		switch {
		case s.num == numSign && c == '0':
			s.num = numZero
		case s.num == numSign && digit:
			s.num = numInt
		case s.num == numInt && digit, s.num == numFrac && digit, s.num == numExp && digit:
		case (s.num == numZero || s.num == numInt) && c == '.':
			s.num = numDot
		case s.num == numDot && digit:
			s.num = numFrac
		case (s.num == numZero || s.num == numInt || s.num == numFrac) && (c == 'e' || c == 'E'):
			s.num = numE
		case s.num == numE && (c == '+' || c == '-'):
			s.num = numESign
		case (s.num == numE || s.num == numESign) && digit:
			s.num = numExp
		case s.num == numZero || s.num == numInt || s.num == numFrac || s.num == numExp:
			// The number ended before c; c belongs to what follows.
			s.valueEnds(s.pos)
			if s.state == scanDone {
				if isJSONSpace(c) {
					return nil
				}
				return s.fail(c)
			}
			return s.stepState(c)
		default:
			return s.fail(c)
		}
	case scanLiteral:
		if c != s.literal[0] {
			return s.fail(c)
		}
		s.literal = s.literal[1:]
		if s.literal == "" {
			s.valueEnds(s.pos + 1)
		}
	case scanObjectKeyOrEnd, scanObjectKey:
		if isJSONSpace(c) {
			return nil
		}
		if c == '}' && s.state == scanObjectKeyOrEnd {
			s.stack = s.stack[:len(s.stack)-1]
			s.valueEnds(s.pos + 1)
			return nil
		}
		if c != '"' {
			return s.fail(c)
		}
		s.state, s.isKey = scanString, true
		if s.depth() == 1 {
			s.keyStart = s.pos
		}
	case scanColon:
		if isJSONSpace(c) {
			return nil
		}
		if c != ':' {
			return s.fail(c)
		}
		s.state = scanValue
	case scanObjectNext, scanArrayNext:
		if isJSONSpace(c) {
			return nil
		}
		closer := byte('}')
		if s.state == scanArrayNext {
			closer = ']'
		}
		switch c {
		case ',':
			if s.state == scanObjectNext {
				s.state = scanObjectKey
			} else {
				s.state = scanValue
			}
		case closer:
			s.stack = s.stack[:len(s.stack)-1]
			s.valueEnds(s.pos + 1)
		default:
			return s.fail(c)
		}
	case scanDone:
		if isJSONSpace(c) {
			return nil
		}
		return s.fail(c)
	}
	return nil
}
