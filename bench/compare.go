package bench

import "fmt"

// RunKey names a run within a learn.json: its arm, persona and seed.
type RunKey struct {
	Arm, Persona string
	Seed         int64
}

func (k RunKey) String() string { return fmt.Sprintf("%s %s seed %d", k.Arm, k.Persona, k.Seed) }

// Key is r's RunKey.
func (r Run) Key() RunKey { return RunKey{r.Arm, r.Persona, r.Seed} }

// RunPair is one run recorded twice (the same arm, persona and seed in two
// learn.json files), to say whether the second repeated the first and, if
// not, where they parted.
type RunPair struct {
	Key  RunKey
	A, B Run
	// Same holds, for each round both evaluated, how many held-out answers
	// read the same in both (the text and whether it ended); -1 where
	// either kept no answers (files from before they were kept).
	Same []int
	// Parted is the first round whose held-out answers, retention count or
	// served version differ (without kept answers, whose liked count
	// differs); -1 when none differ in the rounds both evaluated.
	Parted int
}

// Repeats reports whether B repeated A answer for answer: the same rounds,
// each with every held-out answer and the retention count the same.
func (p RunPair) Repeats() bool {
	return p.Parted < 0 && len(p.A.Evals) == len(p.B.Evals) && len(p.Same) > 0 && p.Same[0] >= 0
}

// Pair pairs the runs of a and b by key, in a's order; runs only one side
// has are left out.
func Pair(a, b []Run) []RunPair {
	bs := make(map[RunKey]Run, len(b))
	for _, r := range b {
		bs[r.Key()] = r
	}
	var out []RunPair
	for _, ra := range a {
		rb, ok := bs[ra.Key()]
		if !ok {
			continue
		}
		p := RunPair{Key: ra.Key(), A: ra, B: rb, Parted: -1}
		for i := range min(len(ra.Evals), len(rb.Evals)) {
			ea, eb := ra.Evals[i], rb.Evals[i]
			same := -1
			if len(ea.HeldOut) > 0 && len(eb.HeldOut) > 0 {
				same = 0
				for j := range min(len(ea.HeldOut), len(eb.HeldOut)) {
					if ea.HeldOut[j] == eb.HeldOut[j] {
						same++
					}
				}
			}
			p.Same = append(p.Same, same)
			differ := ea.RetentionRight != eb.RetentionRight || ea.PolicyVersion != eb.PolicyVersion
			if same >= 0 {
				differ = differ || same != len(ea.HeldOut) || len(ea.HeldOut) != len(eb.HeldOut)
			} else { // no answers to read: the counts are all there is
				differ = differ || ea.Satisfied != eb.Satisfied
			}
			if p.Parted < 0 && differ {
				p.Parted = i
			}
		}
		out = append(out, p)
	}
	return out
}

// Liked returns how many of each round's held-out answers the persona
// likes: as the run recorded it (Eval.Satisfied) when p is nil, else read
// again with p's checks as they are now (a round that kept no answers
// keeps its recorded count).
func Liked(r Run, p *Persona) []int {
	out := make([]int, len(r.Evals))
	for i, e := range r.Evals {
		out[i] = e.Satisfied
		if p == nil || len(e.HeldOut) == 0 {
			continue
		}
		k := 0
		for _, a := range e.HeldOut {
			if p.Satisfied(Answer{Text: a.Text, Finished: a.Finished}) {
				k++
			}
		}
		out[i] = k
	}
	return out
}
