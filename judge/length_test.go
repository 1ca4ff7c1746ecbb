package judge

import (
	"math"
	"testing"
)

func TestLengthFits(t *testing.T) {
	cut := Length{64, false}
	for _, c := range []struct {
		a, rated Length
		want     bool
	}{
		{Length{30, true}, cut, true},
		{Length{64, true}, cut, true}, // 63 tokens and the stop token
		{Length{65, true}, cut, false},
		{Length{30, false}, cut, false},              // cut off itself: it did not end
		{Length{128, false}, cut, false},             // cut at the teacher's own limit
		{Length{200, true}, Length{20, true}, true},  // an ended rated answer sets no budget
		{Length{200, false}, Length{20, true}, true}, // whatever the answer
	} {
		if got := c.a.Fits(c.rated); got != c.want {
			t.Errorf("%+v in the budget of %+v: %v, want %v", c.a, c.rated, got, c.want)
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
	} {
		if got := PreferFit(c.best, c.scores, c.threshold, c.lengths, c.rated); got != c.want {
			t.Errorf("%s: pick %d, want %d", c.name, got, c.want)
		}
	}
}

// FuzzPreferFit: whatever the scores and lengths, the pick is best, or
// when best does not fit, the highest-scored answer above the threshold
// that fits, or none.
func FuzzPreferFit(f *testing.F) {
	f.Add(0.8, 0.1, 0.3, -0.1, 100, 30, 50, 20, 64, false, 0.0)
	f.Add(0.8, 0.5, 0.3, 0.2, 100, 10, 12, 80, 20, true, 0.0)
	f.Fuzz(func(t *testing.T, s0, s1, s2, s3 float64, l0, l1, l2, l3, rated int, ended bool, threshold float64) {
		scores := []float64{s0, s1, s2, s3}
		lengths := []Length{{l0, true}, {l1, l0%2 == 0}, {l2, true}, {l3, false}}
		ref := Length{rated, ended}
		best := NoPick
		for i, s := range scores {
			if s > threshold && (best == NoPick || s > scores[best]) {
				best = i
			}
		}
		pick := PreferFit(best, scores, threshold, lengths, ref)
		switch {
		case best == NoPick || lengths[best].Fits(ref):
			if pick != best {
				t.Fatalf("best %d fits (or none), pick %d", best, pick)
			}
			return
		case pick == best:
			t.Fatalf("best %d does not fit, kept", best)
		case pick == NoPick:
			for i, l := range lengths {
				if l.Fits(ref) && scores[i] > threshold {
					t.Fatalf("answer %d fits and scores %g > %g, no pick", i, scores[i], threshold)
				}
			}
			return
		}
		if !lengths[pick].Fits(ref) || !(scores[pick] > threshold) {
			t.Fatalf("pick %d: %+v, score %g", pick, lengths[pick], scores[pick])
		}
		for i, l := range lengths {
			if l.Fits(ref) && scores[i] > scores[pick] {
				t.Fatalf("pick %d scores %g, %d fits and scores %g", pick, scores[pick], i, scores[i])
			}
		}
	})
}
