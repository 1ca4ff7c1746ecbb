package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/clawrl/clawrl/bench"
	"github.com/clawrl/clawrl/internal/stats"
)

func init() { benchSubcommands = append(benchSubcommands, newBenchCompareCmd) }

func newBenchCompareCmd() *cobra.Command {
	var rescore bool
	cmd := &cobra.Command{
		Use:   "compare A B",
		Short: "Set two sets of 'bench learn' runs side by side: which repeated answer for answer, where the others parted, and how far apart they ended",
		Long: `Pairs the runs of two sets of 'clawrl bench learn' results by arm, persona and
seed. A and B are each a learn.json file, or a folder: its learn.json, or every
learn.json below it (a run found twice on one side is an error). For each pair
it prints the held-out answers liked by round (= marks a version served again),
how many held-out answers read the same in both, round by round, and whether B
repeated A answer for answer or where they parted; then, per arm, the liked
answers summed by round with 95 % intervals at the last round (and the retention
facts kept there, and the liked answers there by persona), and a sign test
of B against A over the pairs, at the last round and over every round after the
first. Each side's machine (learn.json's CPU and kernels) is named: a run
repeats another bit for bit only on the same binary and kernels.

With --rescore the held-out answers are read again with the personas' checks as
this binary has them, so that runs recorded under older simulated users compare
with today's; and where a run kept its store (bench learn --keep-data's
data-ARM-PERSONA-SEED beside its learn.json, or beside the file a link names),
its training turns' ratings are read again too, and the first that today's
users would send otherwise is named: a rerun on today's binary cannot repeat
the recorded run past it.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := readLearnSide(args[0])
			if err != nil {
				return err
			}
			b, err := readLearnSide(args[1])
			if err != nil {
				return err
			}
			return compareLearn(cmd.OutOrStdout(), a, b, rescore)
		},
	}
	cmd.Flags().BoolVar(&rescore, "rescore", false, "read the held-out answers again with today's personas")
	return cmd
}

// learnSide is one side of a comparison: the runs of one or more learn.json
// files and the machines they name.
type learnSide struct {
	path     string
	files    int
	runs     []bench.Run
	machines []string // distinct, "" for a file that records none
	models   []string // distinct, as the files name them
	// from is the file that holds each run, and configs each file's
	// settings (what its users were told to do).
	from    map[bench.RunKey]string
	configs map[string]bench.Config
}

// readLearnReport reads and checks one learn.json.
func readLearnReport(b []byte) (learnReport, error) {
	var rep learnReport
	if err := json.Unmarshal(b, &rep); err != nil {
		return rep, err
	}
	for _, r := range rep.Runs {
		if r.Arm == "" || r.Persona == "" {
			return rep, fmt.Errorf("a run without an arm or persona (%q, %q)", r.Arm, r.Persona)
		}
		for i, e := range r.Evals {
			if e.Round != i {
				return rep, fmt.Errorf("run %s: evaluation %d is round %d", r.Key(), i, e.Round)
			}
			if e.Satisfied < 0 || e.Satisfied > e.Asked || len(e.HeldOut) > e.Asked || e.RetentionRight < 0 || e.RetentionRight > e.RetentionAsked {
				return rep, fmt.Errorf("run %s round %d: counts out of range (liked %d of %d, %d answers kept, retention %d of %d)",
					r.Key(), i, e.Satisfied, e.Asked, len(e.HeldOut), e.RetentionRight, e.RetentionAsked)
			}
		}
	}
	return rep, nil
}

// readLearnSide reads a learn.json, a folder's learn.json, or every
// learn.json below a folder.
func readLearnSide(path string) (learnSide, error) { return readLearnSides(path) }

// readLearnSides reads the runs of every path as readLearnSide does, into
// one side: a run (arm, persona, seed) found twice is an error.
func readLearnSides(paths ...string) (learnSide, error) {
	side := learnSide{path: strings.Join(paths, " "), from: map[bench.RunKey]string{}, configs: map[string]bench.Config{}}
	var files []string
	for _, path := range paths {
		st, err := os.Stat(path)
		switch {
		case err != nil:
			return side, err
		case !st.IsDir():
			files = append(files, path)
			continue
		}
		if _, err := os.Stat(filepath.Join(path, "learn.json")); err == nil {
			files = append(files, filepath.Join(path, "learn.json"))
			continue
		}
		n := len(files)
		err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && d.Name() == "learn.json" {
				files = append(files, p)
			}
			return err
		})
		if err != nil {
			return side, err
		}
		if len(files) == n {
			return side, fmt.Errorf("%s: no learn.json in it or below it", path)
		}
	}
	where := side.from
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return side, err
		}
		rep, err := readLearnReport(b)
		if err != nil {
			return side, fmt.Errorf("%s: %w", f, err)
		}
		m := ""
		if rep.Machine != nil {
			m = rep.Machine.String()
		}
		if !slices.Contains(side.machines, m) {
			side.machines = append(side.machines, m)
		}
		side.configs[f] = rep.Config
		if !slices.Contains(side.models, rep.Model) {
			side.models = append(side.models, rep.Model)
		}
		for _, r := range rep.Runs {
			if prev, ok := where[r.Key()]; ok {
				return side, fmt.Errorf("%s: run %s is in %s and %s: name files that hold it once", side.path, r.Key(), prev, f)
			}
			where[r.Key()] = f
			side.runs = append(side.runs, r)
		}
	}
	side.files = len(files)
	return side, nil
}

func (s learnSide) describe() string {
	return fmt.Sprintf("%s: %d runs in %d file(s); %s", s.path, len(s.runs), s.files, s.machineList())
}

// machineList names the side's machines, "; " between them.
func (s learnSide) machineList() string {
	ms := make([]string, len(s.machines))
	for i, m := range s.machines {
		ms[i] = cmp.Or(m, "machine not recorded")
	}
	return strings.Join(ms, "; ")
}

// rescorers is the personas to read answers again with (bench.Liked's
// checks as this binary has them) by name; empty without rescore, so that
// every run keeps its recorded counts.
func rescorers(rescore bool) map[string]*bench.Persona {
	personas := map[string]*bench.Persona{}
	if rescore {
		for _, p := range bench.Personas() {
			personas[p.Name] = p
		}
	}
	return personas
}

// likedLine is liked counts by round, "=" before a round that served the
// version of the round before.
func likedLine(r bench.Run, liked []int) string {
	parts := make([]string, len(liked))
	for i, k := range liked {
		parts[i] = strconv.Itoa(k)
		if i > 0 && r.Evals[i].PolicyVersion == r.Evals[i-1].PolicyVersion {
			parts[i] = "=" + parts[i]
		}
	}
	return strings.Join(parts, ",")
}

func compareLearn(w io.Writer, a, b learnSide, rescore bool) error {
	pairs := bench.Pair(a.runs, b.runs)
	fmt.Fprintf(w, "A %s\nB %s\n", a.describe(), b.describe())
	if len(pairs) == 0 {
		return errors.New("no run (arm, persona, seed) is on both sides")
	}
	personas := rescorers(rescore)
	// Without --rescore, or for a persona this binary lacks, the counts
	// as recorded.
	liked := func(r bench.Run) []int { return bench.Liked(r, personas[r.Persona]) }
	// tally is one arm's pairs summed.
	type tally struct {
		pairs, repeats int
		byRound        [2][]int           // liked, summed over the runs that reached the round on both sides
		reached        []int              // how many runs reached each round on both sides
		lastK, lastN   [2]int             // liked and asked at each run's last round both reached
		retK, retN     [2]int             // retention facts kept and asked there
		last, over     [3]int             // B ahead, level, behind: at that round; over rounds after the first
		personas       []string           // in the order first paired
		byPersona      map[string]*[4]int // liked by A and B at the last round both reached, asked by A and B
	}
	var order []string
	tallies := map[string]*tally{}
	fmt.Fprintln(w)
	for _, p := range pairs {
		la, lb := liked(p.A), liked(p.B)
		fmt.Fprintf(w, "%s\n  liked by round  A %s\n                  B %s\n", p.Key, likedLine(p.A, la), likedLine(p.B, lb))
		same := make([]string, len(p.Same))
		for i, s := range p.Same {
			same[i] = strconv.Itoa(s)
			if s < 0 {
				same[i] = "·"
			}
		}
		verdict := "repeats answer for answer"
		switch {
		case p.Repeats():
		case p.Parted >= 0:
			verdict = fmt.Sprintf("parts at round %d", p.Parted)
		case len(p.Same) > 0 && p.Same[0] < 0:
			verdict = "no answers kept to compare; the counts agree"
		default:
			verdict = fmt.Sprintf("the same as far as both go (A %d rounds, B %d)", len(p.A.Evals), len(p.B.Evals))
		}
		fmt.Fprintf(w, "  held-out answers the same by round: %s — %s\n", strings.Join(same, " "), verdict)
		if rescore {
			for i, s := range []learnSide{a, b} {
				if line := s.rerated(p.Key, personas[p.Key.Persona]); line != "" {
					fmt.Fprintf(w, "  %s's training ratings, read again: %s\n", "AB"[i:i+1], line)
				}
			}
		}

		t := tallies[p.Key.Arm]
		if t == nil {
			t = &tally{byPersona: map[string]*[4]int{}}
			tallies[p.Key.Arm] = t
			order = append(order, p.Key.Arm)
		}
		t.pairs++
		if p.Repeats() {
			t.repeats++
		}
		n := min(len(la), len(lb))
		if n == 0 {
			continue
		}
		for len(t.reached) < n {
			t.byRound[0] = append(t.byRound[0], 0)
			t.byRound[1] = append(t.byRound[1], 0)
			t.reached = append(t.reached, 0)
		}
		for i := range n {
			t.byRound[0][i] += la[i]
			t.byRound[1][i] += lb[i]
			t.reached[i]++
		}
		pt := t.byPersona[p.Key.Persona]
		if pt == nil {
			pt = &[4]int{}
			t.byPersona[p.Key.Persona] = pt
			t.personas = append(t.personas, p.Key.Persona)
		}
		pt[0] += la[n-1]
		pt[1] += lb[n-1]
		pt[2] += p.A.Evals[n-1].Asked
		pt[3] += p.B.Evals[n-1].Asked
		t.lastK[0] += la[n-1]
		t.lastK[1] += lb[n-1]
		t.lastN[0] += p.A.Evals[n-1].Asked
		t.lastN[1] += p.B.Evals[n-1].Asked
		t.retK[0] += p.A.Evals[n-1].RetentionRight
		t.retK[1] += p.B.Evals[n-1].RetentionRight
		t.retN[0] += p.A.Evals[n-1].RetentionAsked
		t.retN[1] += p.B.Evals[n-1].RetentionAsked
		t.last[cmp3(lb[n-1], la[n-1])]++
		var sa, sb int
		for i := 1; i < n; i++ {
			sa += la[i]
			sb += lb[i]
		}
		if n > 1 {
			t.over[cmp3(sb, sa)]++
		}
	}
	for _, arm := range order {
		t := tallies[arm]
		fmt.Fprintf(w, "\n%s: %d run(s) on both sides, %d repeated answer for answer\n", arm, t.pairs, t.repeats)
		for i, name := range []string{"A", "B"} {
			parts := make([]string, len(t.byRound[i]))
			for r, k := range t.byRound[i] {
				parts[r] = strconv.Itoa(k)
			}
			fmt.Fprintf(w, "  %s liked by round (summed over the runs that reached it: %s): %s\n", name, runsLine(t.reached), strings.Join(parts, " "))
		}
		fmt.Fprintf(w, "  at each run's last round both reached: A %s, B %s (%d and %d of %d and %d); retention A %d of %d, B %d of %d\n",
			bench.Wilson(t.lastK[0], t.lastN[0]), bench.Wilson(t.lastK[1], t.lastN[1]), t.lastK[0], t.lastK[1], t.lastN[0], t.lastN[1],
			t.retK[0], t.retN[0], t.retK[1], t.retN[1])
		if len(t.personas) > 1 {
			parts := make([]string, len(t.personas))
			for i, name := range t.personas {
				pt := t.byPersona[name]
				parts[i] = fmt.Sprintf("%s %d → %d of %d", name, pt[0], pt[1], pt[2])
				if pt[3] != pt[2] {
					parts[i] = fmt.Sprintf("%s %d of %d → %d of %d", name, pt[0], pt[2], pt[1], pt[3])
				}
			}
			fmt.Fprintf(w, "  there, by persona (A → B): %s\n", strings.Join(parts, "; "))
		}
		fmt.Fprintf(w, "  B against A at that round: ahead in %d, level in %d, behind in %d (sign test p = %.2g)\n",
			t.last[0], t.last[1], t.last[2], stats.SignTest(t.last[0], t.last[2]))
		if t.over[0]+t.over[1]+t.over[2] > 0 {
			fmt.Fprintf(w, "  over every round after the first: ahead in %d, level in %d, behind in %d (sign test p = %.2g)\n",
				t.over[0], t.over[1], t.over[2], stats.SignTest(t.over[0], t.over[2]))
		}
	}
	return nil
}

// cmp3 is 0 when b > a, 1 when equal, 2 when b < a.
func cmp3(b, a int) int {
	switch {
	case b > a:
		return 0
	case b == a:
		return 1
	}
	return 2
}

// runsLine is how many runs reached each round: "8" when all did, else the
// counts by round.
func runsLine(rounds []int) string {
	if len(rounds) > 0 && rounds[len(rounds)-1] == rounds[0] {
		return strconv.Itoa(rounds[0])
	}
	parts := make([]string, len(rounds))
	for i, n := range rounds {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, " ")
}
