package rl

import "testing"

// FuzzFactCorrect: the gate's matcher never panics on any answer, and a
// correct answer stays correct with words added before and after it.
func FuzzFactCorrect(f *testing.F) {
	for _, s := range []string{"H₂O", "The chemical symbol for water is H₂O.", "２ plus ２ is ４.", "", "H2O₂", "ﬁve", "\xff", "Le capital de l'Egypte est Caire.", "C'est Pekin.", "Tōkyō", "e\u0301", "Pe\u0301kin"} {
		f.Add(s)
	}
	facts := []Fact{{Accept: []string{"H2O"}}, {Accept: []string{"4", "four"}}, {Accept: []string{"Le Caire", "Cairo"}}, {Accept: []string{"Pékin", "Tokyo"}}}
	f.Fuzz(func(t *testing.T, answer string) {
		for _, fact := range facts {
			if fact.Correct(answer) && !fact.Correct("So: "+answer+" Right.") {
				t.Errorf("%v: %q correct, but not with words around it", fact.Accept, answer)
			}
		}
	})
}

// Accents count on neither side: an answer without them names an accented
// word, an accented answer names a plain one, and a word that differs by a
// letter still does not.
func TestFactCorrectAccents(t *testing.T) {
	for _, tc := range []struct {
		accept []string
		answer string
		want   bool
	}{
		{[]string{"Pékin"}, "C'est Pekin.", true},
		{[]string{"Pékin"}, "C'est Pe\u0301kin.", true}, // decomposed
		{[]string{"Tokyo"}, "Tōkyō is the capital.", true},
		{[]string{"Pacífico"}, "el oceano Pacifico", true},
		{[]string{"Caire"}, "L'Égypte a pour capitale Caire.", true},
		{[]string{"Pékin"}, "C'est Pekinois.", false},
		{[]string{"Pékin"}, "C'est Pakin.", false},
		{[]string{"sept"}, "septembre", false},
		{[]string{"H2O"}, "H₂O", true},
	} {
		if got := (Fact{Accept: tc.accept}).Correct(tc.answer); got != tc.want {
			t.Errorf("%v in %q: %v, want %v", tc.accept, tc.answer, got, tc.want)
		}
	}
}
