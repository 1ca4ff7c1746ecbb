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

// lostQuote is the first quoted span of the feedback that the rewrite
// does not repeat word for word ("" when it keeps them all): a rewrite
// that paraphrases exact words away asks for something else, and the text
// as written is the better hint. Negated spans count too: the rewrite must
// keep what is to be avoided as well.
func lostQuote(feedback, rewrite string) string {
	rewrite = normQuotes(rewrite)
	for _, q := range quotes(feedback) {
		if !strings.Contains(rewrite, q.text) {
			return `"` + q.text + `"`
		}
	}
	return ""
}

// quote is a non-empty span between a pair of double quotes (straight or
// curly) and the text of its sentence before it, lowercased.
type quote struct{ text, before string }

func quotes(s string) []quote {
	parts := strings.Split(normQuotes(s), `"`)
	var out []quote
	for i := 1; i < len(parts)-1; i += 2 {
		q := quote{text: strings.TrimSpace(parts[i]), before: strings.ToLower(parts[i-1])}
		if q.text == "" {
			continue
		}
		if k := strings.LastIndexAny(q.before, ".!?\n"); k >= 0 {
			q.before = q.before[k+1:]
		}
		out = append(out, q)
	}
	return out
}

// curlyQuotes turns curly double quotes into straight ones.
var curlyQuotes = strings.NewReplacer("\u201c", `"`, "\u201d", `"`, "\u201e", `"`)

func normQuotes(s string) string { return curlyQuotes.Replace(s) }

// negations mark a quoted span, in the same sentence before it, as words
// the person does not want ("don't forget to end with …" is no negation).
var negations = []string{"never", "not ", "n't", "no ", "without", "avoid", "stop", "instead of", "rather than", "remove", "drop "}

// WantedQuotes are the feedback's quoted spans that no negation before
// them in their sentence turns into words to avoid.
func WantedQuotes(feedback string) []string {
	var out []string
	for _, q := range quotes(feedback) {
		negated := false
		if !strings.Contains(q.before, "forget") {
			for _, n := range negations {
				if strings.Contains(" "+q.before, n) {
					negated = true
					break
				}
			}
		}
		if !negated {
			out = append(out, q.text)
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
