package judge

import (
	"math"
	"testing"
)

// TestRelevantRank: an answer the question does not make likelier, or,
// with an opening threshold, whose first tokens it does not make likely
// enough, is never picked; otherwise the rank is the lesser of gain and
// relevance, whatever the opening.
func TestRelevantRank(t *testing.T) {
	for _, c := range []struct {
		r       Reading
		opening float64
		want    float64
	}{
		{Reading{Gain: 1, Relevance: 2, Opening: 3}, 0, 1},
		{Reading{Gain: 3, Relevance: 2, Opening: 0}, 0, 2},
		{Reading{Gain: 3, Relevance: 0, Opening: 3}, 0, math.Inf(-1)},
		{Reading{Gain: 1.2, Relevance: 1.2, Opening: 0.2}, 0.5, math.Inf(-1)}, // "Bien sûr, … sur les oiseaux."
		{Reading{Gain: 1.2, Relevance: 1.2, Opening: 0.2}, 0, 1.2},
		{Reading{Gain: 0.6, Relevance: 0.3, Opening: 0.8}, 0.5, 0.3}, // "TL;DR: AI is a type of …"
	} {
		if got := RelevantRank(c.r, c.opening); got != c.want {
			t.Errorf("RelevantRank(%+v, %v) = %v, want %v", c.r, c.opening, got, c.want)
		}
	}
}
