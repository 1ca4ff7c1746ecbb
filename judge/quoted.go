package judge

import (
	"math"
	"strings"
)

// Words a person puts in double quotes in their feedback are the exact
// words they want ('Your last words must be "Hope this helps!"'). Two
// readers use them: the rewrite of --written-hint rewrite must keep them
// (lostQuote), and --teacher-select-quoted prefers teacher answers that say
// them (WantedQuotes, PreferQuoted), unless the feedback's sentence says
// not to (`never say "As an AI"`).

// lostQuote is the first quoted span of the feedback (between straight or
// curly double quotes) that the rewrite does not repeat word for word, ""
// when it keeps them all. Words a person puts in quotes are the exact
// words they want ("Hope this helps!"); a rewrite that paraphrases them
// away asks for something else, and the text as written is the better
// hint.
func lostQuote(feedback, rewrite string) string {
	for _, q := range quoted(feedback) {
		if !strings.Contains(normQuotes(rewrite), q) {
			return `"` + q + `"`
		}
	}
	return ""
}

// quoted returns the non-empty spans between pairs of double quotes.
func quoted(s string) []string {
	parts := strings.Split(normQuotes(s), `"`)
	var out []string
	for i := 1; i < len(parts)-1; i += 2 {
		if q := strings.TrimSpace(parts[i]); q != "" {
			out = append(out, q)
		}
	}
	return out
}

func normQuotes(s string) string {
	return strings.NewReplacer("\u201c", `"`, "\u201d", `"`, "\u201e", `"`).Replace(s)
}

// negations mark a quoted span, in the same sentence before it, as words
// the person does not want.
var negations = []string{"never", "not ", "n't", "no ", "without", "avoid", "stop", "instead of", "rather than", "remove", "drop "}

// WantedQuotes are the feedback's quoted spans that no negation before
// them in their sentence turns into words to avoid.
func WantedQuotes(feedback string) []string {
	parts := strings.Split(normQuotes(feedback), `"`)
	var out []string
	for i := 1; i < len(parts)-1; i += 2 {
		q := strings.TrimSpace(parts[i])
		if q == "" {
			continue
		}
		before := strings.ToLower(parts[i-1])
		if k := strings.LastIndexAny(before, ".!?\n"); k >= 0 {
			before = before[k+1:]
		}
		negated := false
		for _, n := range negations {
			if strings.Contains(before, "forget") { // "don't forget to end with …"
				break
			}
			if strings.Contains(" "+before, n) {
				negated = true
				break
			}
		}
		if !negated {
			out = append(out, q)
		}
	}
	return out
}

// SaysAll reports whether text contains every one of words, as written.
func SaysAll(text string, words []string) bool {
	text = normQuotes(text)
	for _, w := range words {
		if !strings.Contains(text, w) {
			return false
		}
	}
	return true
}

// PreferQuoted is the pick among texts (scored as by PickBest) when the
// feedback wants words said: if any answer above the threshold says all of
// wanted, the answers that do not are scored −Inf (so that a later rule,
// PreferFit, chooses among those that do) and the best-scored of those
// that do is the pick; otherwise best and scores stand.
func PreferQuoted(best int, scores []float64, threshold float64, texts, wanted []string) (int, []float64) {
	if len(wanted) == 0 || best == NoPick {
		return best, scores
	}
	says := make([]bool, len(texts))
	some := false
	for i, t := range texts {
		says[i] = i < len(scores) && scores[i] > threshold && SaysAll(t, wanted)
		some = some || says[i]
	}
	if !some {
		return best, scores
	}
	masked := make([]float64, len(scores))
	pick := NoPick
	for i, sc := range scores {
		masked[i] = math.Inf(-1)
		if i < len(says) && says[i] {
			masked[i] = sc
			if pick == NoPick || sc > masked[pick] {
				pick = i
			}
		}
	}
	return pick, masked
}
