package rl

import (
	"math"
	"testing"
)

// TestRatingMean checks the running mean against pandas:
//
//	r = [-1]*8 + [-1,1,-1,-1,1,1,-1,1] + [1,1,-1,1,1,1,-1,1]
//	pd.Series(r, dtype=float).ewm(alpha=1/8, adjust=True).mean()[[0, 7, 15, 23]]
//
// added in steps of 8 ratings, as a scheduler adds a batch's.
func TestRatingMean(t *testing.T) {
	steps := [][]float64{
		{-1, -1, -1, -1, -1, -1, -1, -1},
		{-1, 1, -1, -1, 1, 1, -1, 1},
		{1, 1, -1, 1, 1, 1, -1, 1},
	}
	want := []float64{-1, -0.18238049880076043, 0.2648916245800428}
	var m RatingMean
	if m.Mean() != 0 {
		t.Fatalf("mean before any rating: %v", m.Mean())
	}
	if got := m.Add([]float64{-1}, 8).Mean(); got != -1 {
		t.Errorf("first rating: mean %v, want -1 (not pulled towards 0)", got)
	}
	for i, s := range steps {
		m = m.Add(s, 8)
		if math.Abs(m.Mean()-want[i]) > 1e-12 {
			t.Errorf("after step %d: mean %.17g, want %.17g", i+1, m.Mean(), want[i])
		}
	}
	// A state read back from a version goes on the same way.
	back := RatingMean{Sum: m.Sum, Weight: m.Weight}.Add([]float64{1}, 8)
	if got := m.Add([]float64{1}, 8); got != back {
		t.Errorf("restored state diverged: %+v against %+v", back, got)
	}
	if d := (RatingMean{}).Add([]float64{1, -1}, 0); d != (RatingMean{}).Add([]float64{1, -1}, DefaultRatingWindow) {
		t.Errorf("window 0 is not the default window: %+v", d)
	}
}

func TestParseBaselineRunning(t *testing.T) {
	if b, err := ParseBaseline("running"); err != nil || b != BaselineRunning {
		t.Fatalf("running: %v %v", b, err)
	}
	if _, err := ParseBaseline("ewm"); err == nil {
		t.Fatal("an unknown baseline parsed")
	}
	// The scheduler applied the running baseline already: the step leaves
	// the rewards as they are.
	got := BatchBaseline(BaselineRunning, []float64{1, 1, -1}, []bool{true, true, true})
	if got[0] != 1 || got[1] != 1 || got[2] != -1 {
		t.Errorf("running baseline changed the step's rewards: %v", got)
	}
}
