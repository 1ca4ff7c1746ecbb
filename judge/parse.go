package judge

import (
	"strings"
)

// Markers around the hint a hindsight vote writes. Our prompts ask for them;
// the parser takes the last complete pair.
const (
	HintStart = "[HINT]"
	HintEnd   = "[/HINT]"
)

// ParseBoxed returns the value of the last \boxed{…} in text: −1, 0 or +1.
// ok is false when there is no \boxed{} or the last one holds anything else —
// an earlier box does not count, because a judge that changes its mind ends
// with its final answer. Spaces, a leading '+', a Unicode minus and inline
// math dollars are tolerated.
func ParseBoxed(text string) (score int, ok bool) {
	const open = `\boxed{`
	i := strings.LastIndex(text, open)
	if i < 0 {
		return 0, false
	}
	body, closed := balanced(text[i+len(open):])
	if !closed {
		return 0, false
	}
	v := strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '\n', '\r', '$':
			return -1
		case '−', '–': // U+2212 minus, U+2013 en dash
			return '-'
		}
		return r
	}, body)
	switch v {
	case "1", "+1":
		return 1, true
	case "0", "+0", "-0":
		return 0, true
	case "-1":
		return -1, true
	}
	return 0, false
}

// balanced returns the text up to the brace that closes an already opened
// one, allowing nested braces.
func balanced(s string) (string, bool) {
	depth := 1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return s[:i], true
			}
		}
	}
	return "", false
}

// ParseHint returns the text between the last HintStart and the HintEnd after
// it, trimmed; "" when there is no complete pair.
func ParseHint(text string) string {
	i := strings.LastIndex(text, HintStart)
	if i < 0 {
		return ""
	}
	rest := text[i+len(HintStart):]
	j := strings.Index(rest, HintEnd)
	if j < 0 {
		return ""
	}
	return strings.TrimSpace(rest[:j])
}

// MinHintLen is the seed system's threshold: hints of 10 characters or fewer
// are noise.
const MinHintLen = 10

// Majority returns the winning score of the valid votes and how it came about:
// the most frequent value wins; a tie between the most frequent values, or no
// valid vote at all, gives 0.
func Majority(votes []int) (score int, reason string) {
	if len(votes) == 0 {
		return 0, "no valid vote"
	}
	count := map[int]int{}
	for _, v := range votes {
		count[v]++
	}
	best, bestN, tied := 0, -1, false
	for _, v := range []int{-1, 0, 1} {
		switch n := count[v]; {
		case n > bestN:
			best, bestN, tied = v, n, false
		case n == bestN && n > 0:
			tied = true
		}
	}
	if tied {
		return 0, "tie"
	}
	return best, "majority"
}
