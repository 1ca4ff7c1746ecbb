package rl

import (
	"math"
	"testing"
)

// TestFisherLess checks the one-sided test against scipy.stats.fisher_exact
// (alternative="less") on the tables of the runs it was chosen on.
func TestFisherLess(t *testing.T) {
	for _, c := range []struct {
		a, n, b, m int
		want       float64
	}{
		// scipy 1.x: fisher_exact([[a, n-a], [b, m-b]], alternative="less")
		{0, 16, 11, 16, 3.38540407215747e-05}, // tldr seed 3: v6's users after v5's
		{5, 16, 36, 48, 0.0023807401132223357},
		{1, 16, 9, 16, 0.0029614225145491776},
		{0, 4, 5, 8, 0.0707070707070707},
		{3, 10, 3, 10, 0.6857585139318886},
		{0, 8, 8, 12, 0.003929507025482257},
		{7, 20, 19, 20, 6.847782153677595e-05},
		{12, 16, 3, 16, 0.9998777917210042},
	} {
		if got := FisherLess(c.a, c.n, c.b, c.m); math.Abs(got-c.want) > 1e-9*math.Max(c.want, 1e-3) {
			t.Errorf("FisherLess(%d of %d, %d of %d) = %.12g, want %.12g", c.a, c.n, c.b, c.m, got, c.want)
		}
	}
}
