package judge

import (
	"math"
	"testing"
)

func TestBudget(t *testing.T) {
	for _, c := range []struct {
		name      string
		rated     Length
		maxTokens int
		want      int
	}{
		{"not recorded, cut: its length", Length{64, false}, 0, 64},
		{"not recorded, ended: not known", Length{20, true}, 0, NoBudget},
		{"recorded, ended: the limit", Length{20, true}, 256, 256},
		{"recorded, cut at it: the limit", Length{64, false}, 64, 64},
		{"recorded, cut sooner: where it was cut", Length{40, false}, 64, 40},
		{"recorded, ended with its stop token the limit's last", Length{64, true}, 64, 64},
		{"not recorded, cut with nothing", Length{0, false}, 0, 0},
	} {
		if got := Budget(c.rated, c.maxTokens); got != c.want {
			t.Errorf("%s: Budget(%+v, %d) = %d, want %d", c.name, c.rated, c.maxTokens, got, c.want)
		}
	}
}

func TestShare(t *testing.T) {
	for _, c := range []struct {
		budget int
		share  float64
		want   int
	}{
		{64, 0.75, 48},
		{64, 0.5, 32},
		{63, 0.5, 31}, // rounded down: the margin is never less than asked
		{64, 1, 64},
		{64, 0, 64}, // unset: the whole budget
		{NoBudget, 0.5, NoBudget},
		{0, 0.5, 0},
	} {
		if got := Share(c.budget, c.share); got != c.want {
			t.Errorf("Share(%d, %g) = %d, want %d", c.budget, c.share, got, c.want)
		}
	}
}

func TestLengthFits(t *testing.T) {
	cut := Length{64, false}
	for _, c := range []struct {
		a, rated  Length
		maxTokens int // the rated answer's recorded limit (0: not recorded)
		want      bool
	}{
		{Length{30, true}, cut, 0, true},
		{Length{64, true}, cut, 0, true}, // 63 tokens and the stop token
		{Length{65, true}, cut, 0, false},
		{Length{30, false}, cut, 0, false},              // cut off itself: it did not end
		{Length{128, false}, cut, 0, false},             // cut at the teacher's own limit
		{Length{200, true}, Length{20, true}, 0, true},  // an ended rated answer sets no budget
		{Length{200, false}, Length{20, true}, 0, true}, // whatever the answer
		// A recorded limit is the budget whether the rated answer ended or not.
		{Length{64, true}, Length{20, true}, 64, true}, // its stop token the limit's last: delivered whole
		{Length{65, true}, Length{20, true}, 64, false},
		{Length{64, false}, Length{20, true}, 64, false}, // cut at the limit: the user saw "length"
		{Length{10, false}, Length{20, true}, 64, false}, // cut at the teacher's own, shorter limit
		{Length{64, true}, cut, 64, true},
		{Length{65, true}, cut, 64, false},
	} {
		if got := c.a.Fits(Budget(c.rated, c.maxTokens)); got != c.want {
			t.Errorf("%+v in the budget of %+v under %d: %v, want %v", c.a, c.rated, c.maxTokens, got, c.want)
		}
	}
}

func TestPreferFit(t *testing.T) {
	inf := math.Inf(-1)
	cut := Length{64, false}
	for _, c := range []struct {
		name      string
		scores    []float64
		lengths   []Length
		rated     Length
		maxTokens int // the rated turn's recorded limit (0: not recorded)
		threshold float64
		best      int
		want      int
	}{
		{
			name:   "a best that does not fit gives way to the best that does",
			scores: []float64{0.8, 0.1, 0.3, -0.1}, lengths: []Length{{100, true}, {30, true}, {50, true}, {20, true}},
			rated: cut, best: 0, want: 2,
		},
		{
			name:   "a cut answer does not fit",
			scores: []float64{0.8, 0.5, 0.3}, lengths: []Length{{128, false}, {40, false}, {60, true}},
			rated: cut, best: 0, want: 2,
		},
		{
			name:   "none that fits passes the threshold: no pick",
			scores: []float64{0.8, 0.1, 0.3, -0.1}, lengths: []Length{{100, true}, {30, true}, {50, true}, {20, true}},
			rated: cut, threshold: 0.3, best: 0, want: NoPick,
		},
		{
			name:   "a refused answer is never picked",
			scores: []float64{0.8, inf, inf}, lengths: []Length{{100, true}, {5, true}, {5, true}},
			rated: cut, best: 0, want: NoPick,
		},
		{
			name:   "the best fits",
			scores: []float64{0.8, 0.9, 0.3}, lengths: []Length{{100, true}, {60, true}, {20, true}},
			rated: cut, best: 1, want: 1,
		},
		{
			name:   "too short, explain more: an ended rated answer leaves the pick alone",
			scores: []float64{0.8, 0.5, 0.3}, lengths: []Length{{100, true}, {10, true}, {12, true}},
			rated: Length{20, true}, best: 0, want: 0,
		},
		{
			name:   "a negative threshold",
			scores: []float64{-1, -2, -3}, lengths: []Length{{100, true}, {100, true}, {20, true}},
			rated: cut, threshold: -1000, best: 0, want: 2,
		},
		{
			name:   "no pick stays no pick",
			scores: []float64{-0.1, -0.2}, lengths: []Length{{10, true}, {10, true}},
			rated: cut, best: NoPick, want: NoPick,
		},
		// A recorded limit.
		{
			name:   "an ended rated answer under a known limit: the best that ends within it",
			scores: []float64{0.8, 0.5, 0.3}, lengths: []Length{{100, true}, {64, true}, {30, true}},
			rated: Length{20, true}, maxTokens: 64, best: 0, want: 1,
		},
		{
			name:   "too short, explain more, under a known limit that holds them all",
			scores: []float64{0.8, 0.5, 0.3}, lengths: []Length{{100, true}, {10, true}, {12, true}},
			rated: Length{20, true}, maxTokens: 256, best: 0, want: 0,
		},
		{
			name:   "one token past a known limit: no pick",
			scores: []float64{0.8, 0.5}, lengths: []Length{{65, true}, {70, true}},
			rated: Length{20, true}, maxTokens: 64, best: 0, want: NoPick,
		},
		{
			name:   "an answer cut at the teacher's own limit does not fit a known one",
			scores: []float64{0.8, 0.5}, lengths: []Length{{10, false}, {30, true}},
			rated: Length{20, true}, maxTokens: 64, best: 0, want: 1,
		},
		{
			name:   "a rated answer cut sooner than its limit: where it was cut",
			scores: []float64{0.8, 0.5, 0.3}, lengths: []Length{{64, true}, {50, true}, {40, true}},
			rated: Length{40, false}, maxTokens: 64, best: 0, want: 2,
		},
	} {
		if got := PreferFit(c.best, c.scores, c.threshold, c.lengths, Budget(c.rated, c.maxTokens)); got != c.want {
			t.Errorf("%s: pick %d, want %d", c.name, got, c.want)
		}
	}
}

// FuzzPreferFit: whatever the scores, lengths and recorded limit, the
// budget follows Budget's rule, an answer that ended within a recorded
// limit fits, and the pick is best, or when best does not fit, the
// highest-scored answer above the threshold that fits, or none.
func FuzzPreferFit(f *testing.F) {
	f.Add(0.8, 0.1, 0.3, -0.1, 100, 30, 50, 20, 64, false, 0.0, 0)
	f.Add(0.8, 0.5, 0.3, 0.2, 100, 10, 12, 80, 20, true, 0.0, 0)
	f.Add(0.8, 0.5, 0.3, 0.2, 100, 64, 12, 80, 20, true, 0.0, 64)
	f.Add(0.8, 0.5, 0.3, 0.2, 100, 50, 40, 80, 40, false, 0.0, 64)
	f.Fuzz(func(t *testing.T, s0, s1, s2, s3 float64, l0, l1, l2, l3, rated int, ended bool, threshold float64, maxTokens int) {
		scores := []float64{s0, s1, s2, s3}
		lengths := []Length{{l0, true}, {l1, l0%2 == 0}, {l2, true}, {l3, false}}
		ref := Length{rated, ended}
		budget := Budget(ref, maxTokens)
		switch {
		case !ended && (maxTokens <= 0 || rated < maxTokens):
			if budget != max(rated, 0) {
				t.Fatalf("Budget(%+v, %d) = %d, want the cut answer's length", ref, maxTokens, budget)
			}
		case maxTokens > 0:
			if budget != maxTokens {
				t.Fatalf("Budget(%+v, %d) = %d, want the limit", ref, maxTokens, budget)
			}
			for _, l := range lengths {
				if l.Ended && l.Tokens <= maxTokens && (ended || rated >= maxTokens) && !l.Fits(budget) {
					t.Fatalf("%+v ended within the limit %d and does not fit", l, maxTokens)
				}
			}
		default:
			if budget != NoBudget {
				t.Fatalf("Budget(%+v, %d) = %d, want none", ref, maxTokens, budget)
			}
		}
		for _, l := range lengths {
			if !l.Ended && budget >= 0 && l.Fits(budget) {
				t.Fatalf("%+v was cut off and fits the budget %d", l, budget)
			}
		}
		best := NoPick
		for i, s := range scores {
			if s > threshold && (best == NoPick || s > scores[best]) {
				best = i
			}
		}
		pick := PreferFit(best, scores, threshold, lengths, budget)
		switch {
		case best == NoPick || lengths[best].Fits(budget):
			if pick != best {
				t.Fatalf("best %d fits (or none), pick %d", best, pick)
			}
			return
		case pick == best:
			t.Fatalf("best %d does not fit, kept", best)
		case pick == NoPick:
			for i, l := range lengths {
				if l.Fits(budget) && scores[i] > threshold {
					t.Fatalf("answer %d fits and scores %g > %g, no pick", i, scores[i], threshold)
				}
			}
			return
		}
		if !lengths[pick].Fits(budget) || !(scores[pick] > threshold) {
			t.Fatalf("pick %d: %+v, score %g", pick, lengths[pick], scores[pick])
		}
		for i, l := range lengths {
			if l.Fits(budget) && scores[i] > scores[pick] {
				t.Fatalf("pick %d scores %g, %d fits and scores %g", pick, scores[pick], i, scores[i])
			}
		}
	})
}
