package bench

import (
	"slices"
	"testing"
)

func compareRun(arm string, seed int64, liked []int, texts [][]string, retention []int) Run {
	r := Run{Arm: arm, Method: arm, Persona: "concise", Seed: seed}
	for i, k := range liked {
		e := Eval{Round: i, PolicyVersion: int64(i), Satisfied: k, Asked: 3, RetentionRight: retention[i], RetentionAsked: 4}
		if texts != nil {
			for _, t := range texts[i] {
				e.HeldOut = append(e.HeldOut, Shown{Text: t, Finished: true})
			}
		}
		r.Evals = append(r.Evals, e)
	}
	return r
}

func TestPair(t *testing.T) {
	texts := [][]string{{"a", "b", "c"}, {"d", "e", "f"}, {"g", "h", "i"}}
	other := [][]string{{"a", "b", "c"}, {"d", "e", "x"}, {"y", "z", "i"}}
	a := []Run{
		compareRun("combine", 1, []int{0, 1, 2}, texts, []int{4, 4, 4}),
		compareRun("combine", 2, []int{0, 1, 2}, texts, []int{4, 4, 4}),
		compareRun("combine", 3, []int{0, 1, 2}, texts, []int{4, 4, 4}),
		compareRun("combine", 4, []int{0, 1, 2}, nil, []int{4, 4, 4}),
		compareRun("combine", 5, []int{0, 1, 2}, texts, []int{4, 4, 4}),
		compareRun("off", 1, []int{0, 0}, nil, []int{4, 4}),
	}
	b := []Run{
		compareRun("combine", 5, []int{0, 1}, texts[:2], []int{4, 4}),   // stopped after round 1
		compareRun("combine", 3, []int{0, 1, 2}, texts, []int{4, 3, 4}), // a fact lost at round 1
		compareRun("combine", 2, []int{0, 1, 3}, other, []int{4, 4, 4}), // parts at round 1
		compareRun("combine", 1, []int{0, 1, 2}, texts, []int{4, 4, 4}), // repeats
		compareRun("combine", 4, []int{0, 2, 2}, nil, []int{4, 4, 4}),   // no answers kept
		compareRun("combine", 9, []int{0, 1, 2}, texts, []int{4, 4, 4}), // only in b
	}
	pairs := Pair(a, b)
	if len(pairs) != 5 {
		t.Fatalf("%d pairs, want 5 (a's combine runs; off and seed 9 are on one side only)", len(pairs))
	}
	want := []struct {
		seed    int64
		same    []int
		parted  int
		repeats bool
	}{
		{1, []int{3, 3, 3}, -1, true},
		{2, []int{3, 2, 1}, 1, false},
		{3, []int{3, 3, 3}, 1, false},
		{4, []int{-1, -1, -1}, 1, false},
		{5, []int{3, 3}, -1, false},
	}
	for i, w := range want {
		p := pairs[i]
		if p.Key.Seed != w.seed || !slices.Equal(p.Same, w.same) || p.Parted != w.parted || p.Repeats() != w.repeats {
			t.Errorf("pair %d: seed %d same %v parted %d repeats %v, want seed %d same %v parted %d repeats %v",
				i, p.Key.Seed, p.Same, p.Parted, p.Repeats(), w.seed, w.same, w.parted, w.repeats)
		}
	}
	// A version served again in one run and not the other parts them.
	c := compareRun("combine", 1, []int{0, 1, 2}, texts, []int{4, 4, 4})
	c.Evals[2].PolicyVersion = 1
	if p := Pair(a[:1], []Run{c})[0]; p.Parted != 2 {
		t.Errorf("a held version: parted at %d, want 2", p.Parted)
	}
}

func TestLikedRescore(t *testing.T) {
	concise := PersonaNamed("concise")
	long := "This answer goes on. It has a second sentence. And a third one here. And then a fourth, which is one too many."
	r := compareRun("combine", 1, []int{3, 0}, [][]string{{"Short and plain.", long, "Also short."}, {"Fine."}}, []int{1, 1})
	r.Evals = append(r.Evals, Eval{Round: 2, Satisfied: 2, Asked: 3}) // a round that kept no answers
	if got := Liked(r, nil); !slices.Equal(got, []int{3, 0, 2}) {
		t.Errorf("as recorded %v", got)
	}
	if got := Liked(r, concise); !slices.Equal(got, []int{2, 1, 2}) {
		t.Errorf("re-read %v, want [2 1 2]", got)
	}
}
