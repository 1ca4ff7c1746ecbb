package judge

// Length among best-of-N teacher answers (--teacher-select-length fit).
// The hint gain is a mean per token: it says how much the feedback raises
// an answer's tokens, not whether the answer is as long as the user can
// take. "Be brief" raises few tokens, so among four long answers the
// selector keeps a long one, and a batch of those sends the student back to
// the base's length (BENCHMARKS.md, "The hint gain read by the base
// weights"). The loop knows one thing about length that no persona
// supplies: the rated answer. When it was cut off at its token limit, that
// limit is the request's budget, and a teacher answer that does not end
// within it would have been cut off too: the user could not have read it
// whole, and a student that learns it learns to be cut off. So an answer
// that ends within the rated answer's tokens is preferred to one that does
// not, and when none that passes the selector does, none is picked. In the
// signoff runs the hint gain already preferred a fitting answer whenever
// one passed; the answers that did not fit were picked only when no
// fitting one passed (BENCHMARKS.md, "Teacher answers that fit the rated
// answer's token budget"). A rated answer that ended says nothing of the
// budget, and the rule then leaves the pick alone: a user who asks for
// more is never pushed toward less.

// Length is an answer's length in the policy's tokens (its stop token
// counted), and whether it ended (false: cut off at its token limit).
type Length struct {
	Tokens int
	Ended  bool
}

// Fits says whether a ended within the budget of rated: true when rated
// ended (its budget is not known), or a ended within rated.Tokens tokens.
func (a Length) Fits(rated Length) bool {
	return rated.Ended || (a.Ended && a.Tokens <= rated.Tokens)
}

// PreferFit is the pick of --teacher-select-length fit: best (as PickBest
// chose it, the highest score above threshold) unless it does not fit the
// rated answer's budget (Length.Fits); then the highest-scored answer
// above threshold that fits, or NoPick when none does.
func PreferFit(best int, scores []float64, threshold float64, lengths []Length, rated Length) int {
	if best == NoPick || best >= len(lengths) || lengths[best].Fits(rated) {
		return best
	}
	pick := NoPick
	for i, l := range lengths {
		if i >= len(scores) || !l.Fits(rated) || !(scores[i] > threshold) {
			continue
		}
		if pick == NoPick || scores[i] > scores[pick] {
			pick = i
		}
	}
	return pick
}
