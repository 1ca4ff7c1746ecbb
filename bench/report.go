package bench

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/clawrl/clawrl/internal/stats"
)

// Proportion is k successes of n trials with its Wilson score 95 % interval.
// The interval treats every answer as independent; answers of one run share
// a server, so it is somewhat narrower than a seed-level interval would be.
type Proportion struct {
	K    int     `json:"k"`
	N    int     `json:"n"`
	P    float64 `json:"p"`
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

// Wilson returns k/n with its Wilson score interval at 95 %.
func Wilson(k, n int) Proportion {
	if n == 0 {
		return Proportion{}
	}
	const z = 1.959963984540054
	p := float64(k) / float64(n)
	nf := float64(n)
	den := 1 + z*z/nf
	centre := (p + z*z/(2*nf)) / den
	half := z * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf)) / den
	return Proportion{K: k, N: n, P: p, Low: max(0, centre-half), High: min(1, centre+half)}
}

func (p Proportion) String() string {
	if p.N == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f [%.2f, %.2f]", p.P, p.Low, p.High)
}

// Cell pools one arm's evaluations at one round over personas and seeds.
type Cell struct {
	Round     int        `json:"round"`
	Runs      int        `json:"runs"` // runs that reached this round
	Satisfied Proportion `json:"satisfied"`
	Retention Proportion `json:"retention"`
	MeanWords float64    `json:"mean_words"`
}

// ArmSummary is one arm's cells, round by round.
type ArmSummary struct {
	Arm     string `json:"arm"`
	Method  string `json:"method"`
	Cells   []Cell `json:"cells"`
	Stalled int    `json:"stalled"` // runs that stopped before the last round
	// Rejected counts rounds whose version the loop's retention gate
	// refused (the round evaluates the version still served).
	Rejected int `json:"rejected"`
	// Held counts rounds whose step the loop held (--hold-liked: its
	// users liked enough of its answers; the round evaluates the version
	// still served).
	Held int `json:"held,omitempty"`
	// Short counts rounds that ended with too few samples for a step
	// (Eval.Short; the round evaluates the version still served).
	Short int `json:"short,omitempty"`
	// RolledBack counts rounds whose version was trained from the one
	// before the served version (--rollback-drop).
	RolledBack int `json:"rolled_back,omitempty"`
	// Unfocused counts rounds whose focused step the gate rejected, so the
	// round's version is the step without --distill-focus.
	Unfocused int `json:"unfocused,omitempty"`
	Failed    int `json:"failed"`
	// PVsControl is the one-sided Fisher exact p-value that the arm's last
	// round satisfies more often than the control's last round (1 for the
	// control itself, or when there is none).
	PVsControl float64 `json:"p_vs_control"`
}

// Summarise pools runs by arm and round (arms in first-seen order). For the
// control, whose greedy answers cannot change, its last measured round
// stands for the rounds it skipped.
func Summarise(runs []Run) []ArmSummary {
	var arms []string
	method := map[string]string{}
	for _, r := range runs {
		if !slices.Contains(arms, r.Arm) {
			arms = append(arms, r.Arm)
			method[r.Arm] = r.Method
		}
	}
	var out []ArmSummary
	for _, arm := range arms {
		s := ArmSummary{Arm: arm, Method: method[arm]}
		type acc struct {
			sk, sn, rk, rn, runs int
			words                float64
		}
		var rounds []acc
		for _, r := range runs {
			if r.Arm != arm {
				continue
			}
			if r.Err != "" {
				s.Failed++
			}
			if r.Stalled != "" {
				s.Stalled++
			}
			for _, e := range r.Evals {
				if e.Rejected {
					s.Rejected++
				}
				if e.Held {
					s.Held++
				}
				if e.Short {
					s.Short++
				}
				if e.RolledBack {
					s.RolledBack++
				}
				if e.Unfocused {
					s.Unfocused++
				}
				for len(rounds) <= e.Round {
					rounds = append(rounds, acc{})
				}
				a := &rounds[e.Round]
				a.sk += e.Satisfied
				a.sn += e.Asked
				a.rk += e.RetentionRight
				a.rn += e.RetentionAsked
				a.words += e.MeanWords
				a.runs++
			}
		}
		for i, a := range rounds {
			if a.runs == 0 {
				continue
			}
			s.Cells = append(s.Cells, Cell{Round: i, Runs: a.runs, Satisfied: Wilson(a.sk, a.sn),
				Retention: Wilson(a.rk, a.rn), MeanWords: a.words / float64(a.runs)})
		}
		out = append(out, s)
	}
	var control *ArmSummary
	for i := range out {
		if out[i].Method == ArmControl && control == nil {
			control = &out[i]
		}
	}
	for i := range out {
		out[i].PVsControl = 1
		if control != nil && out[i].Method != ArmControl {
			out[i].PVsControl = FisherGreater(out[i].Last().Satisfied, control.Last().Satisfied)
		}
	}
	return out
}

// Last returns the arm's last cell (the furthest round any run reached).
func (s ArmSummary) Last() Cell {
	if len(s.Cells) == 0 {
		return Cell{}
	}
	return s.Cells[len(s.Cells)-1]
}

// Markdown renders the satisfaction and retention tables: arms × rounds.
func Markdown(sums []ArmSummary) string {
	rounds := 0
	for _, s := range sums {
		for _, c := range s.Cells {
			rounds = max(rounds, c.Round+1)
		}
	}
	var b strings.Builder
	for _, what := range []string{"satisfaction (held-out prompts)", "retention (facts)"} {
		fmt.Fprintf(&b, "| arm — %s |", what)
		for r := range rounds {
			fmt.Fprintf(&b, " v%d |", r)
		}
		b.WriteString(" runs stalled | versions rejected (steps held, rolled back, retaken unfocused) | p > control |\n|---|")
		b.WriteString(strings.Repeat("---|", rounds+3))
		b.WriteString("\n")
		for _, s := range sums {
			fmt.Fprintf(&b, "| %s |", s.Arm)
			for r := range rounds {
				cell := "·"
				for _, c := range s.Cells {
					if c.Round == r {
						p := c.Satisfied
						if what != "satisfaction (held-out prompts)" {
							p = c.Retention
						}
						cell = p.String()
						if what == "satisfaction (held-out prompts)" {
							cell += fmt.Sprintf(" (%.0fw)", c.MeanWords)
						}
					}
				}
				fmt.Fprintf(&b, " %s |", cell)
			}
			pv := "–"
			if s.Method != ArmControl && what == "satisfaction (held-out prompts)" {
				pv = fmt.Sprintf("%.3g", s.PVsControl)
			}
			rejected := strconv.Itoa(s.Rejected)
			var also []string
			for _, n := range []struct {
				count int
				what  string
			}{{s.Held, "held"}, {s.Short, "short of samples"}, {s.RolledBack, "rolled back"}, {s.Unfocused, "retaken unfocused"}} {
				if n.count > 0 {
					also = append(also, fmt.Sprintf("%d %s", n.count, n.what))
				}
			}
			if len(also) > 0 {
				rejected += " (" + strings.Join(also, ", ") + ")"
			}
			fmt.Fprintf(&b, " %d | %s | %s |\n", s.Stalled, rejected, pv)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// SVG plots satisfaction by round for each arm with its 95 % intervals.
func SVG(sums []ArmSummary, title string) string {
	const w, h, left, right, top, bottom = 640, 400, 60, 130, 40, 50
	rounds := 1
	for _, s := range sums {
		for _, c := range s.Cells {
			rounds = max(rounds, c.Round)
		}
	}
	x := func(r int) float64 { return left + float64(r)/float64(rounds)*float64(w-left-right) }
	y := func(p float64) float64 { return top + (1-p)*float64(h-top-bottom) }
	colors := []string{"#777777", "#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e"}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, h)
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="14">%s</text>`+"\n", left, xmlEscape(title))
	for i := 0; i <= 10; i += 2 {
		p := float64(i) / 10
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#e0e0e0"/><text x="%d" y="%.1f" text-anchor="end">%.1f</text>`+"\n",
			left, w-right, y(p), y(p), left-6, y(p)+4, p)
	}
	for r := 0; r <= rounds; r++ {
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">v%d</text>`+"\n", x(r), h-bottom+18, r)
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">policy version (training rounds)</text>`+"\n", (left+w-right)/2, h-10)
	fmt.Fprintf(&b, `<text x="16" y="%d" transform="rotate(-90 16 %d)" text-anchor="middle">satisfaction, 95%% Wilson CI</text>`+"\n", (top+h-bottom)/2, (top+h-bottom)/2)
	for i, s := range sums {
		col := colors[i%len(colors)]
		var pts []string
		for _, c := range s.Cells {
			cx := x(c.Round) + float64(i-len(sums)/2)*3 // small offsets keep bars apart
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", cx, y(c.Satisfied.P)))
			fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s"/>`+"\n", cx, cx, y(c.Satisfied.Low), y(c.Satisfied.High), col)
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", cx, y(c.Satisfied.P), col)
		}
		dash := ""
		if s.Method == ArmControl {
			dash = ` stroke-dasharray="5,4"`
		}
		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`+"\n", strings.Join(pts, " "), col, dash)
		ly := top + 20*i
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2"%s/><text x="%d" y="%d">%s</text>`+"\n",
			w-right+10, w-right+30, ly, ly, col, dash, w-right+36, ly+4, xmlEscape(armLabel(s)))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func armLabel(s ArmSummary) string {
	if s.Method == ArmControl && s.Arm == ArmControl {
		return "control (off)"
	}
	return s.Arm
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

// FisherGreater is the one-sided p-value of Fisher's exact test that
// proportion a is greater than proportion b: the chance, with the margins
// fixed, of a's successes being at least a.K if both came from one rate.
func FisherGreater(a, b Proportion) float64 {
	return stats.FisherGreater(a.K, a.N, b.K, b.N)
}

// PersonaMarkdown renders one row per persona and arm, pooled over seeds:
// held-out satisfaction before training and at the run's last round, the
// retention facts the same way, and the teacher's ceiling (the base model
// with the persona's written feedback in context, measured on the control).
func PersonaMarkdown(runs []Run) string {
	type key struct{ persona, arm string }
	type acc struct {
		s0, n0, sl, nl, r0, rn0, rl, rnl int
		last                             int
	}
	var keys []key
	accs := map[key]*acc{}
	ceil := map[string][2]int{}
	for _, r := range runs {
		k := key{r.Persona, r.Arm}
		a := accs[k]
		if a == nil {
			a = &acc{}
			accs[k] = a
			keys = append(keys, k)
		}
		if len(r.Evals) == 0 {
			continue
		}
		first, last := r.Evals[0], r.Evals[len(r.Evals)-1]
		a.s0, a.n0, a.r0, a.rn0 = a.s0+first.Satisfied, a.n0+first.Asked, a.r0+first.RetentionRight, a.rn0+first.RetentionAsked
		a.sl, a.nl, a.rl, a.rnl = a.sl+last.Satisfied, a.nl+last.Asked, a.rl+last.RetentionRight, a.rnl+last.RetentionAsked
		a.last = max(a.last, last.Round)
		c := ceil[r.Persona]
		ceil[r.Persona] = [2]int{c[0] + first.HintSatisfied, c[1] + first.HintAsked}
	}
	var b strings.Builder
	b.WriteString("| persona | arm | satisfaction v0 | satisfaction last (round) | retention v0 → last | teacher ceiling (base + hint) |\n|---|---|---|---|---|---|\n")
	for _, k := range keys {
		a := accs[k]
		c := ceil[k.persona]
		cs := "–"
		if c[1] > 0 {
			cs = Wilson(c[0], c[1]).String()
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s (v%d) | %d/%d → %d/%d | %s |\n", k.persona, k.arm, Wilson(a.s0, a.n0), Wilson(a.sl, a.nl), a.last,
			a.r0, a.rn0, a.rl, a.rnl, cs)
	}
	return b.String()
}

// TeacherMarkdown renders the loop's teacher measured after every round
// (Config.TeacherEachRound): per run, the held-out prompts the served policy
// satisfies with the persona's written feedback in context, round by round,
// beside the base model's (round 0, the control's ceiling). Empty when no
// run measured it.
func TeacherMarkdown(runs []Run) string {
	base := map[string]string{}
	for _, r := range runs {
		if len(r.Evals) > 0 && r.Evals[0].HintAsked > 0 {
			base[r.Persona] = fmt.Sprintf("%d/%d", r.Evals[0].HintSatisfied, r.Evals[0].HintAsked)
		}
	}
	var b strings.Builder
	for _, r := range runs {
		var cells []string
		for _, ev := range r.Evals {
			if ev.TeacherAsked > 0 {
				cells = append(cells, fmt.Sprintf("v%d %d/%d", ev.Round, ev.TeacherSatisfied, ev.TeacherAsked))
			}
		}
		if len(cells) == 0 {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("\nThe loop's teacher (served policy + written feedback), held-out prompts satisfied after each round:\n\n| persona | arm | seed | base + hint | policy + hint, by round |\n|---|---|---|---|---|\n")
		}
		bs := base[r.Persona]
		if bs == "" {
			bs = "–"
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %s |\n", r.Persona, r.Arm, r.Seed, bs, strings.Join(cells, ", "))
	}
	return b.String()
}

// VerdictMarkdown renders, per arm (pooled over personas and seeds), what
// the users meant beside what the loop's judge read: the rated training
// turns, how many satisfied the persona and how many got a neutral
// follow-up, then the judgments made meanwhile by first score, the hints
// accepted (the OPD teacher's signal) and the judgments revised by later
// feedback. The control judges nothing and has no row.
func VerdictMarkdown(runs []Run) string {
	type acc struct {
		rated, sat, neutral int
		v                   Verdicts
	}
	var arms []string
	accs := map[string]*acc{}
	for _, r := range runs {
		if r.Method == ArmControl {
			continue
		}
		a := accs[r.Arm]
		if a == nil {
			a = &acc{}
			accs[r.Arm] = a
			arms = append(arms, r.Arm)
		}
		for _, e := range r.Evals {
			a.rated, a.sat, a.neutral = a.rated+e.TrainRated, a.sat+e.TrainSatisfied, a.neutral+e.TrainNeutral
			a.v = a.v.Add(e.TrainVerdicts)
		}
	}
	if len(arms) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nTraining turns: what the users meant and what the judge read (main turns judged during the rounds, by first score; " +
		"a session's last turn, which no message follows, expires unjudged):\n\n" +
		"| arm | rated turns | satisfied the user | neutral follow-ups sent | judged | −1 | 0 | +1 | hints accepted | revised by later feedback |\n" +
		"|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, arm := range arms {
		a := accs[arm]
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d | %d | %d | %d |\n", arm, a.rated, a.sat, a.neutral,
			a.v.Judged(), a.v.Negative, a.v.Neutral, a.v.Positive, a.v.Hints, a.v.Revised)
	}
	return b.String()
}
