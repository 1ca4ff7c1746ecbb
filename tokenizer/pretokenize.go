package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// A preTokenizer cuts a normalized piece of text into words; BPE then runs on
// each word alone. Words are byte ranges of the piece, so invalid UTF-8
// survives untouched (Go strings may hold it; Rust's cannot).
type preTokenizer interface {
	// split appends the [start, end) ranges of the words of s to dst.
	split(dst []span, s string) []span
}

type span struct{ start, end int }

// byteLevelConfig records the ByteLevel pre-tokenizer's settings that are
// not a split.
type byteLevelConfig struct {
	present        bool
	addPrefixSpace bool // prepend a space to each piece that lacks one
}

// parsePreTokenizer appends the pre-tokenizer chain to steps. ByteLevel's
// byte-to-rune mapping is not a step here: BPE works on raw bytes directly,
// which is the same thing without the detour through runes.
func parsePreTokenizer(raw json.RawMessage, steps []preTokenizer, bl *byteLevelConfig) ([]preTokenizer, error) {
	if isNull(raw) {
		return steps, nil
	}
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, fmt.Errorf("pre_tokenizer: %w", err)
	}
	switch head.Type {
	case "Sequence":
		var seq struct {
			PreTokenizers []json.RawMessage `json:"pretokenizers"`
		}
		if err := json.Unmarshal(raw, &seq); err != nil {
			return nil, fmt.Errorf("pre_tokenizer Sequence: %w", err)
		}
		for i, p := range seq.PreTokenizers {
			var err error
			if steps, err = parsePreTokenizer(p, steps, bl); err != nil {
				return nil, fmt.Errorf("pre_tokenizer Sequence[%d]: %w", i, err)
			}
		}
		return steps, nil
	case "Split":
		var sp struct {
			Pattern  patternJSON `json:"pattern"`
			Behavior string      `json:"behavior"`
			Invert   bool        `json:"invert"`
		}
		if err := json.Unmarshal(raw, &sp); err != nil {
			return nil, fmt.Errorf("pre_tokenizer Split: %w", err)
		}
		m, err := sp.Pattern.matcher()
		if err != nil {
			return nil, fmt.Errorf("pre_tokenizer Split: %w", err)
		}
		b, ok := behaviors[sp.Behavior]
		if !ok {
			return nil, fmt.Errorf("pre_tokenizer Split: unknown behavior %q", sp.Behavior)
		}
		return append(steps, &splitPre{match: m, behavior: b, invert: sp.Invert}), nil
	case "ByteLevel":
		cfg := struct {
			AddPrefixSpace bool  `json:"add_prefix_space"`
			UseRegex       *bool `json:"use_regex"`
		}{}
		if err := json.Unmarshal(raw, &cfg); err != nil {
			return nil, fmt.Errorf("pre_tokenizer ByteLevel: %w", err)
		}
		if bl.present {
			return nil, fmt.Errorf("pre_tokenizer: more than one ByteLevel")
		}
		bl.present = true
		if cfg.AddPrefixSpace {
			// Hugging Face prepends the space to each word the earlier steps
			// made; only the whole-piece case (ByteLevel first) is supported.
			if len(steps) > 0 {
				return nil, fmt.Errorf("pre_tokenizer: ByteLevel with add_prefix_space after another step is not supported")
			}
			bl.addPrefixSpace = true
		}
		if cfg.UseRegex == nil || *cfg.UseRegex {
			m, err := newMatcher(gpt2Pattern)
			if err != nil {
				return nil, err
			}
			steps = append(steps, &splitPre{match: m, behavior: isolated})
		}
		return steps, nil
	default:
		return nil, fmt.Errorf("pre_tokenizer: unsupported type %q", head.Type)
	}
}

// gpt2Pattern is the split ByteLevel does itself when use_regex is true.
const gpt2Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

type patternJSON struct {
	String *string `json:"String"`
	Regex  *string `json:"Regex"`
}

// matcher finds the non-overlapping matches of a Split pattern.
type matcher interface {
	find(dst []span, s string) []span
}

func (p patternJSON) matcher() (matcher, error) {
	switch {
	case p.Regex != nil:
		return newMatcher(*p.Regex)
	case p.String != nil:
		return literalMatcher(*p.String), nil
	default:
		return nil, fmt.Errorf("pattern has neither String nor Regex")
	}
}

// newMatcher returns a hand-written scanner for the patterns of the Qwen2,
// Qwen3 and Llama 3 tokenizers (they run on every prompt, and a backtracking
// regex engine is several times slower), and regexp2 for any other pattern.
// FuzzScannerMatchesRegexp checks that each scanner finds exactly what
// regexp2 finds.
func newMatcher(pattern string) (matcher, error) {
	switch pattern {
	case qwenPattern:
		return &wordScanner{maxDigits: 1}, nil
	case llama3Pattern:
		return &wordScanner{maxDigits: 3}, nil
	}
	re, err := compileRegexp(pattern)
	if err != nil {
		return nil, err
	}
	return &regexpMatcher{re: re}, nil
}

func compileRegexp(pattern string) (*regexp2.Regexp, error) {
	re, err := regexp2.Compile(pattern, regexp2.None)
	if err != nil {
		return nil, fmt.Errorf("compile pattern %q: %w", pattern, err)
	}
	return re, nil
}

const (
	qwenPattern   = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	llama3Pattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

type literalMatcher string

func (l literalMatcher) find(dst []span, s string) []span {
	if l == "" {
		return dst
	}
	for off := 0; ; {
		i := strings.Index(s[off:], string(l))
		if i < 0 {
			return dst
		}
		dst = append(dst, span{off + i, off + i + len(l)})
		off += i + len(l)
	}
}

type regexpMatcher struct{ re *regexp2.Regexp }

// find runs regexp2, which works on runes, and maps rune indices back to
// byte offsets. Invalid UTF-8 bytes are one rune (U+FFFD) each, as in
// []rune(s), so the mapping stays exact.
func (m *regexpMatcher) find(dst []span, s string) []span {
	runes := make([]rune, 0, len(s))
	offsets := make([]int, 0, len(s)+1)
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		runes = append(runes, r)
		offsets = append(offsets, i)
		i += w
	}
	offsets = append(offsets, len(s))
	match, err := m.re.FindRunesMatch(runes)
	for err == nil && match != nil {
		dst = append(dst, span{offsets[match.Index], offsets[match.Index+match.Length]})
		match, err = m.re.FindNextMatch(match)
	}
	// err is only ever a match timeout, and none is set.
	return dst
}

type behavior int

const (
	removed behavior = iota
	isolated
	mergedWithPrevious
	mergedWithNext
	contiguous
)

var behaviors = map[string]behavior{
	"Removed":            removed,
	"Isolated":           isolated,
	"MergedWithPrevious": mergedWithPrevious,
	"MergedWithNext":     mergedWithNext,
	"Contiguous":         contiguous,
}

type splitPre struct {
	match    matcher
	behavior behavior
	invert   bool
}

// split follows tokenizers' NormalizedString::split: the pattern's matches
// and the gaps between them cover s; behavior decides what is kept and what
// is glued together.
func (p *splitPre) split(dst []span, s string) []span {
	if p.behavior == isolated && !p.invert {
		// The common case: every match and every gap is a word.
		if w, ok := p.match.(*wordScanner); ok {
			return w.find(dst, s) // the scanner leaves no gaps
		}
	}
	type piece struct {
		span
		isMatch bool
	}
	var pieces []piece
	prev := 0
	for _, m := range p.match.find(nil, s) {
		if m.start != prev {
			pieces = append(pieces, piece{span{prev, m.start}, false})
		}
		pieces = append(pieces, piece{m, true})
		prev = m.end
	}
	if prev != len(s) {
		pieces = append(pieces, piece{span{prev, len(s)}, false})
	}
	if p.invert {
		for i := range pieces {
			pieces[i].isMatch = !pieces[i].isMatch
		}
	}
	var out []span
	switch p.behavior {
	case isolated:
		for _, pc := range pieces {
			out = append(out, pc.span)
		}
	case removed:
		for _, pc := range pieces {
			if !pc.isMatch {
				out = append(out, pc.span)
			}
		}
	case contiguous:
		previous := false
		for _, pc := range pieces {
			if pc.isMatch == previous && len(out) > 0 {
				out[len(out)-1].end = pc.end
			} else {
				out = append(out, pc.span)
			}
			previous = pc.isMatch
		}
	case mergedWithPrevious:
		previous := false
		for _, pc := range pieces {
			if pc.isMatch && !previous && len(out) > 0 {
				out[len(out)-1].end = pc.end
			} else {
				out = append(out, pc.span)
			}
			previous = pc.isMatch
		}
	case mergedWithNext:
		previous := false
		for i := len(pieces) - 1; i >= 0; i-- {
			pc := pieces[i]
			if pc.isMatch && !previous && len(out) > 0 {
				out[len(out)-1].start = pc.start
			} else {
				out = append(out, pc.span)
			}
			previous = pc.isMatch
		}
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	for _, sp := range out {
		if sp.end > sp.start {
			dst = append(dst, sp)
		}
	}
	return dst
}

// wordScanner matches the Qwen2/Qwen3 (maxDigits 1) and Llama 3
// (maxDigits 3) pattern
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,maxDigits}|
//	 ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// by hand, with regexp2's character classes (Go's unicode tables:
// \s = unicode.IsSpace, \p{L} = unicode.IsLetter, \p{N} = unicode.IsNumber)
// plus the letters and numbers Unicode 16.0 added (unicode16.go), which
// Hugging Face's regex engine has and Go's tables lack.
// Every rune starts some alternative, so the matches tile the input.
type wordScanner struct{ maxDigits int }

type runeClass uint8

const (
	classOther runeClass = iota
	classLetter
	classNumber
	classSpace   // whitespace other than \r and \n
	classNewline // \r or \n
)

var asciiClass = func() (t [utf8.RuneSelf]runeClass) {
	for c := 0; c < utf8.RuneSelf; c++ {
		r := rune(c)
		switch {
		case r == '\r' || r == '\n':
			t[c] = classNewline
		case unicode.IsSpace(r):
			t[c] = classSpace
		case unicode.IsLetter(r):
			t[c] = classLetter
		case unicode.IsNumber(r):
			t[c] = classNumber
		}
	}
	return t
}()

// classAt returns the class of the rune at s[i] and its width; i must be < len(s).
func classAt(s string, i int) (runeClass, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return asciiClass[c], 1
	}
	r, w := utf8.DecodeRuneInString(s[i:])
	switch {
	case unicode.IsLetter(r):
		return classLetter, w
	case unicode.IsNumber(r):
		return classNumber, w
	case unicode.IsSpace(r):
		return classSpace, w
	// Hugging Face's regex engine knows Unicode 16.0; Go's tables stop at 15.0.
	case unicode.Is(unicode16Letters, r):
		return classLetter, w
	case unicode.Is(unicode16Numbers, r):
		return classNumber, w
	}
	return classOther, w
}

func (ws *wordScanner) find(dst []span, s string) []span {
	for i := 0; i < len(s); {
		end := ws.matchAt(s, i)
		dst = append(dst, span{i, end})
		i = end
	}
	return dst
}

// matchAt returns the end of the match that starts at i.
func (ws *wordScanner) matchAt(s string, i int) int {
	c, w := classAt(s, i)
	// (?i:'s|'t|'re|'ve|'m|'ll|'d)
	if s[i] == '\'' {
		if n := contraction(s[i+1:]); n > 0 {
			return i + 1 + n
		}
	}
	switch c {
	case classLetter:
		return scanClass(s, i+w, classLetter)
	case classNumber:
		j := i + w
		for k := 1; k < ws.maxDigits && j < len(s); k++ {
			c2, w2 := classAt(s, j)
			if c2 != classNumber {
				break
			}
			j += w2
		}
		return j
	case classOther, classSpace:
		// [^\r\n\p{L}\p{N}]?\p{L}+
		if i+w < len(s) {
			if c2, _ := classAt(s, i+w); c2 == classLetter {
				return scanClass(s, i+w, classLetter)
			}
		}
	}
	// " ?[^\s\p{L}\p{N}]+[\r\n]*"
	start := -1
	if c == classOther {
		start = i
	} else if s[i] == ' ' && i+1 < len(s) {
		if c2, _ := classAt(s, i+1); c2 == classOther {
			start = i + 1
		}
	}
	if start >= 0 {
		j := scanClass(s, start, classOther)
		for j < len(s) && (s[j] == '\r' || s[j] == '\n') {
			j++
		}
		return j
	}
	// c is whitespace here: \s*[\r\n]+ | \s+(?!\S) | \s+
	end, lastNewline, lastStart := i, -1, i
	for end < len(s) {
		c2, w2 := classAt(s, end)
		if c2 != classSpace && c2 != classNewline {
			break
		}
		if c2 == classNewline {
			lastNewline = end
		}
		lastStart = end
		end += w2
	}
	switch {
	case lastNewline >= 0:
		return lastNewline + 1
	case end == len(s):
		return end
	case lastStart > i:
		return lastStart // leave the last space to prefix the next word
	default:
		return end
	}
}

// scanClass returns the end of the run of runes of class c starting at j.
func scanClass(s string, j int, c runeClass) int {
	for j < len(s) {
		c2, w := classAt(s, j)
		if c2 != c {
			break
		}
		j += w
	}
	return j
}

// contraction returns the length of the contraction suffix ('s, 't, 're,
// 've, 'm, 'll, 'd; ASCII case-insensitive) at the start of s, or 0.
func contraction(s string) int {
	if len(s) == 0 {
		return 0
	}
	switch s[0] | 0x20 {
	case 's', 't', 'm', 'd':
		return 1
	case 'r', 'v':
		if len(s) > 1 && s[1]|0x20 == 'e' {
			return 2
		}
	case 'l':
		if len(s) > 1 && s[1]|0x20 == 'l' {
			return 2
		}
	}
	return 0
}
