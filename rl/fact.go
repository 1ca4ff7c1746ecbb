package rl

import (
	"regexp"
	"sync"
	"unicode"

	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// Fact is a retention question with the words that make an answer correct.
// The promotion gate (CheckRetention) and `clawrl bench learn`'s retention
// evaluation judge answers with the same matcher, so a version the gate
// keeps is one the benchmark scores as knowing the fact.
type Fact struct {
	Question string
	// Accept lists the words that count, in any language the answer may
	// come in ("Londres" tells a French reader the fact as well as
	// "London").
	Accept []string
}

// Find returns where the first accepted word appears in answer as a whole
// word (case-insensitive, not inside a longer word or number), or -1, -1.
func (f Fact) Find(answer string) (start, end int) {
	start, end = -1, -1
	for _, a := range f.Accept {
		if m := wordPattern(a).FindStringSubmatchIndex(answer); m != nil && (start < 0 || m[4] < start) {
			start, end = m[4], m[5]
		}
	}
	return start, end
}

// Correct reports whether answer contains one of the accepted words, as
// written, under Unicode compatibility normalisation (NFKC: "H₂O" is "H2O",
// and a full-width "４" is "4"), or with accents set aside on both sides
// ("Pekin" names "Pékin", and "Tokyo" is named by "Tōkyō"): a student that
// writes a language without its accents still tells the reader the fact.
// Find keeps to the text as written, whose offsets its callers use.
func (f Fact) Correct(answer string) bool {
	if start, _ := f.Find(answer); start >= 0 {
		return true
	}
	n := norm.NFKC.String(answer)
	if n != answer {
		if start, _ := f.Find(n); start >= 0 {
			return true
		}
	}
	b := unaccented(n)
	for _, a := range f.Accept {
		// A pair with no accent on either side was matched above.
		if bare := unaccented(a); (bare != a || b != n) && wordPattern(bare).MatchString(b) {
			return true
		}
	}
	return false
}

// unaccented is s with its combining marks removed after canonical
// decomposition ("é" is "e" and an acute accent): "Égypte" is "Egypte".
func unaccented(s string) string {
	for _, r := range s {
		if r >= 0x80 {
			out, _, err := transform.String(transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC), s)
			if err != nil {
				return s
			}
			return out
		}
	}
	return s
}

// wordPatterns holds the compiled whole-word pattern of each accepted word:
// the gate matches after every decode step of every answer.
var wordPatterns sync.Map // string → *regexp.Regexp

func wordPattern(word string) *regexp.Regexp {
	if re, ok := wordPatterns.Load(word); ok {
		return re.(*regexp.Regexp)
	}
	re := regexp.MustCompile(`(?i)(^|[^\pL\pN])(` + regexp.QuoteMeta(word) + `)($|[^\pL\pN])`)
	wordPatterns.Store(word, re)
	return re
}
