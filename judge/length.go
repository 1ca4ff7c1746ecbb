package judge

import "math"

// Length among best-of-N teacher answers (--teacher-select-length
// student). The hint gain is a mean per token: it says how much the
// feedback raises an answer's tokens, not whether the answer is as long as
// the feedback wants. "Be brief" raises few tokens, so among four long
// answers the selector keeps a long one, and a batch of those sends the
// student back to the base's length (BENCHMARKS.md, "The hint gain read by
// the base weights"). The loop knows one more thing that no persona
// supplies: the rated answer the feedback was about. When most of the
// teacher's answers, written with the feedback in context, come out
// shorter than that answer, length is part of what the feedback changes,
// and an answer that also comes out shorter is preferred; when most come
// out longer ("too short, explain more"), a longer one is. The rule reads
// only token counts and whether an answer ended, so it holds for any
// feedback in any language.

// Length is an answer's length in the policy's tokens, and whether it
// ended (false: cut off at its token limit, so it is at least that long).
type Length struct {
	Tokens int
	Ended  bool
}

// LengthDelta is the relative difference below which two lengths count as
// the same: 10 %, a few tokens of a short answer.
const LengthDelta = 0.1

// LengthMargin is how near the best score an answer on the feedback's side
// must be to be picked instead: its score at least the best's less
// (1 − LengthMargin) × |best| (half the best hint gain). On the recorded
// best-of-4 answers of the four personas (bench/results/2026-11-28-length-lever)
// a half changes no satisfied pick; with no margin the 1.5B's signoff
// answers lose one, a 64-token answer that signs off (gain 0.17) given up
// for a 34-token one that does not (0.04).
const LengthMargin = 0.5

// Side is where a lies against ref: −1 shorter, +1 longer, 0 neither
// (within LengthDelta, or not known: a cut-off length is a lower bound, so
// nothing is longer than a cut-off ref and a cut-off a is shorter than
// nothing).
func (a Length) Side(ref Length) int {
	switch {
	case a.Ended && float64(a.Tokens) < (1-LengthDelta)*float64(ref.Tokens):
		return -1
	case ref.Ended && float64(a.Tokens) > (1+LengthDelta)*float64(ref.Tokens):
		return +1
	}
	return 0
}

// LengthDirection is where the feedback moves the teacher's length from
// rated's: −1 shorter, +1 longer, 0 no way (as many answers on each side,
// or none known). Answers scored −Inf (refused, or their scoring failed)
// do not count: an echo of "too long" says nothing about how long an
// answer should be.
func LengthDirection(scores []float64, lengths []Length, rated Length) int {
	sum := 0
	for i, l := range lengths {
		if i < len(scores) && !math.IsInf(scores[i], -1) {
			sum += l.Side(rated)
		}
	}
	switch {
	case sum < 0:
		return -1
	case sum > 0:
		return +1
	}
	return 0
}

// PreferLength is the pick of --teacher-select-length student: best (as
// PickBest chose it, the highest score above threshold) unless the
// feedback moves the teacher's length one way from rated's
// (LengthDirection) and best's does not move that way; then the highest
// scored answer above threshold that does, if its score is within
// LengthMargin of best's. It returns the pick and the direction.
func PreferLength(best int, scores []float64, threshold float64, lengths []Length, rated Length) (int, int) {
	if best == NoPick || best >= len(lengths) {
		return best, 0
	}
	dir := LengthDirection(scores, lengths, rated)
	if dir == 0 || lengths[best].Side(rated) == dir {
		return best, dir
	}
	floor := scores[best] - (1-LengthMargin)*math.Abs(scores[best])
	pick := best
	for i, l := range lengths {
		if i >= len(scores) || l.Side(rated) != dir || scores[i] <= threshold || scores[i] < floor {
			continue
		}
		if pick == best || scores[i] > scores[pick] {
			pick = i
		}
	}
	return pick, dir
}
