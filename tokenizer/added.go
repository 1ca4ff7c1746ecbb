package tokenizer

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// addedToken is an entry of tokenizer.json's added_tokens, as matched in text.
type addedToken struct {
	id         int32
	content    string // normalized already when the token is matched after normalization
	singleWord bool   // only match when not inside a word
	lstrip     bool   // swallow the whitespace on the left
	rstrip     bool   // swallow the whitespace on the right
	special    bool
}

// addedMatcher finds added tokens in text the way tokenizers'
// AddedVocabulary does: non-overlapping leftmost-longest matches (its
// Aho-Corasick automaton's MatchKind::LeftmostLongest), then single_word,
// lstrip and rstrip applied to each match.
type addedMatcher struct {
	tokens  []addedToken
	byFirst [256][]int32 // indexes into tokens by first byte, longest first
	// When every token starts with the same byte (all of Qwen's and Llama's
	// start with '<'), scanning uses strings.IndexByte.
	oneFirst  bool
	firstByte byte
}

// segment is a piece of text, or an added token when id >= 0.
type segment struct {
	id         int32
	start, end int
}

func newAddedMatcher(tokens []addedToken) *addedMatcher {
	if len(tokens) == 0 {
		return nil
	}
	m := &addedMatcher{tokens: tokens}
	firsts := map[byte]bool{}
	for i, tok := range tokens {
		c := tok.content[0]
		m.byFirst[c] = append(m.byFirst[c], int32(i))
		firsts[c] = true
		m.firstByte = c
	}
	m.oneFirst = len(firsts) == 1
	for c := range m.byFirst {
		list := m.byFirst[c]
		sort.SliceStable(list, func(a, b int) bool {
			return len(tokens[list[a]].content) > len(tokens[list[b]].content)
		})
	}
	return m
}

// next returns the leftmost-longest match at or after from.
func (m *addedMatcher) next(s string, from int) (start, end int, tok *addedToken) {
	for i := from; i < len(s); i++ {
		if m.oneFirst {
			k := strings.IndexByte(s[i:], m.firstByte)
			if k < 0 {
				return -1, -1, nil
			}
			i += k
		}
		for _, idx := range m.byFirst[s[i]] {
			t := &m.tokens[idx]
			if strings.HasPrefix(s[i:], t.content) {
				return i, i + len(t.content), t
			}
		}
	}
	return -1, -1, nil
}

// split cuts s into text and added-token segments (AddedVocabulary's
// find_matches). Empty text segments are left out.
func (m *addedMatcher) split(dst []segment, s string) []segment {
	if m == nil {
		if s != "" {
			dst = append(dst, segment{-1, 0, len(s)})
		}
		return dst
	}
	offset := 0 // end of the last segment emitted
	for pos := 0; ; {
		start, end, tok := m.next(s, pos)
		if tok == nil {
			break
		}
		pos = end // matches never overlap, even the ones discarded below
		if tok.singleWord {
			startOK := start == 0 || !endsWithWordRune(s[:start])
			endOK := end == len(s) || !startsWithWordRune(s[end:])
			if !startOK || !endOK {
				continue
			}
		}
		if tok.lstrip {
			start = max(len(strings.TrimRightFunc(s[:start], unicode.IsSpace)), offset)
		}
		if tok.rstrip {
			end += len(s[end:]) - len(strings.TrimLeftFunc(s[end:], unicode.IsSpace))
		}
		if offset < start {
			dst = append(dst, segment{-1, offset, start})
		}
		dst = append(dst, segment{tok.id, start, end})
		offset = end
	}
	if offset < len(s) {
		dst = append(dst, segment{-1, offset, len(s)})
	}
	return dst
}

// isWordRune is Rust regex's Unicode \w: Alphabetic, marks, decimal digits,
// connector punctuation and joiners.
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsMark(r) || unicode.Is(unicode.Nd, r) ||
		unicode.Is(unicode.Nl, r) || unicode.Is(unicode.Pc, r) ||
		unicode.Is(unicode.Other_Alphabetic, r) || unicode.Is(unicode.Join_Control, r)
}

func endsWithWordRune(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return r != utf8.RuneError && isWordRune(r)
}

func startsWithWordRune(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return r != utf8.RuneError && isWordRune(r)
}
