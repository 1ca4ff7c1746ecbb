package rl

import "testing"

// FuzzFactCorrect: the gate's matcher never panics on any answer, and a
// correct answer stays correct with words added before and after it.
func FuzzFactCorrect(f *testing.F) {
	for _, s := range []string{"H₂O", "The chemical symbol for water is H₂O.", "２ plus ２ is ４.", "", "H2O₂", "ﬁve", "\xff"} {
		f.Add(s)
	}
	facts := []Fact{{Accept: []string{"H2O"}}, {Accept: []string{"4", "four"}}, {Accept: []string{"Le Caire", "Cairo"}}}
	f.Fuzz(func(t *testing.T, answer string) {
		for _, fact := range facts {
			if fact.Correct(answer) && !fact.Correct("So: "+answer+" Right.") {
				t.Errorf("%v: %q correct, but not with words around it", fact.Accept, answer)
			}
		}
	})
}
