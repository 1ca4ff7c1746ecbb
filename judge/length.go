package judge

// Length among best-of-N teacher answers (--teacher-select-length fit).
// The hint gain is a mean per token: it says how much the feedback raises
// an answer's tokens, not whether the answer is as long as the user can
// take. "Be brief" raises few tokens, so among four long answers the
// selector keeps a long one, and a batch of those sends the student back to
// the base's length (BENCHMARKS.md, "The hint gain read by the base
// weights"). The loop knows one thing about length that no persona
// supplies: the token budget the rated answer was generated under, the
// request's max_tokens (store.Turn.MaxTokens: the server's default when the
// client set none, capped by the context window). A teacher answer that
// does not end within it would have been cut off: the user could not have
// read it whole, and a student that learns it learns to be cut off. So an
// answer that ends within the budget is preferred to one that does not,
// and when none that passes the selector does, none is picked. In the
// signoff runs the hint gain already preferred a fitting answer whenever
// one passed; the answers that did not fit were picked only when no
// fitting one passed (BENCHMARKS.md, "Teacher answers that fit the rated
// answer's token budget").
//
// The stop token counts against the budget, as the engines count a limit:
// it is a sampled token like any other, and one sampled as the limit's last
// token still ends the answer (engine/native checks for it before the
// limit). So an answer of n tokens, its stop token the nth, is delivered
// whole under a limit of n and cut under n−1: it fits a budget exactly when
// it ended and n ≤ the budget, which is every answer the user would have
// received whole.
//
// Turns recorded before the limit was kept (MaxTokens 0) know it only when
// the rated answer was cut off at it: then its length is the budget. A
// rated answer that ended there says nothing of the budget, and the rule
// leaves the pick alone.

// Length is an answer's length in the policy's tokens (its stop token
// counted), and whether it ended (false: cut off at its token limit).
type Length struct {
	Tokens int
	Ended  bool
}

// NoBudget is the Budget of a rated answer whose budget is not known:
// every answer fits it.
const NoBudget = -1

// Budget is the token budget of the rated answer, generated under a limit
// of maxTokens (store.Turn.MaxTokens; 0 when not recorded): maxTokens, or
// the rated answer's length when it was cut off sooner (an engine that cut
// it at a context window shorter than the gateway knew of) or when the
// limit was not recorded; NoBudget when the limit was not recorded and the
// rated answer ended.
func Budget(rated Length, maxTokens int) int {
	switch {
	case !rated.Ended && (maxTokens <= 0 || rated.Tokens < maxTokens):
		return max(rated.Tokens, 0)
	case maxTokens > 0:
		return maxTokens
	}
	return NoBudget
}

// Share is budget shrunk to share of itself (0 < share ≤ 1, rounded
// down), the margin of --teacher-fit-share, for a student that learns
// answers near the budget's full length and spreads past it. Measured at
// 0.6 on signoff it changed nothing: the answers cut off were the base's
// lists, not the teacher's length (BENCHMARKS.md, "The length reading
// tested"). NoBudget and share ≥ 1 leave the budget as it is.
func Share(budget int, share float64) int {
	if budget < 0 || share <= 0 || share >= 1 {
		return budget
	}
	return int(float64(budget) * share)
}

// Fits says whether a ended within budget tokens (a Budget; its stop token
// counted): always for NoBudget (any negative budget), and never for an
// answer cut off at its own limit.
func (a Length) Fits(budget int) bool {
	return budget < 0 || (a.Ended && a.Tokens <= budget)
}

// PreferFit is the pick of --teacher-select-length fit: best (as PickBest
// chose it, the highest score above threshold) unless it does not fit the
// rated answer's budget (Length.Fits, a Budget); then the highest-scored
// answer above threshold that fits, or NoPick when none does.
func PreferFit(best int, scores []float64, threshold float64, lengths []Length, budget int) int {
	if best == NoPick || best >= len(lengths) || lengths[best].Fits(budget) {
		return best
	}
	pick := NoPick
	for i, l := range lengths {
		if i >= len(scores) || !l.Fits(budget) || !(scores[i] > threshold) {
			continue
		}
		if pick == NoPick || scores[i] > scores[pick] {
			pick = i
		}
	}
	return pick
}
