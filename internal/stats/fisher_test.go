package stats

import (
	"math"
	"testing"
)

// TestFisherGreater checks the test against scipy.stats.fisher_exact
// (scipy 1.x: fisher_exact([[a, n-a], [b, m-b]], alternative="less") for
// the smaller share, read here as FisherGreater(b, m, a, n)), on the tables
// the loop's rollback was chosen on (rl.SchedulerConfig.RollbackDrop).
func TestFisherGreater(t *testing.T) {
	for _, c := range []struct {
		a, n, b, m int // a of n the smaller share
		want       float64
	}{
		{0, 16, 11, 16, 3.38540407215747e-05}, // the 1.5B's tldr seed 3: v6's users after v5's
		{5, 16, 36, 48, 0.0023807401132223357},
		{1, 16, 9, 16, 0.0029614225145491776},
		{0, 4, 5, 8, 0.0707070707070707},
		{3, 10, 3, 10, 0.6857585139318886},
		{0, 8, 8, 12, 0.003929507025482257},
		{7, 20, 19, 20, 6.847782153677595e-05},
		{12, 16, 3, 16, 0.9998777917210042},
	} {
		if got := FisherGreater(c.b, c.m, c.a, c.n); math.Abs(got-c.want) > 1e-9*math.Max(c.want, 1e-3) {
			t.Errorf("%d of %d below %d of %d: p = %.12g, want %.12g", c.a, c.n, c.b, c.m, got, c.want)
		}
	}
	if p := FisherGreater(3, 4, 0, 0); p != 1 {
		t.Errorf("an empty group: p = %g, want 1", p)
	}
}

func TestSignTest(t *testing.T) {
	for _, c := range []struct {
		ahead, behind int
		want          float64
	}{{0, 0, 1}, {3, 1, 0.625}, {1, 3, 0.625}, {10, 0, 2.0 / 1024}, {5, 5, 1}, {6, 0, 2.0 / 64}} {
		if got := SignTest(c.ahead, c.behind); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("SignTest(%d, %d) = %v, want %v", c.ahead, c.behind, got, c.want)
		}
	}
}
