package loop

import (
	"strings"
	"testing"
)

// TestTeacherFitRetry: with one teacher answer per turn and
// --teacher-fit-retry 4, a turn whose lone (greedy) answer runs past the
// rated turn's 60-token limit is written again as best of 4, each at most
// 60 tokens long, and the best-gaining answer that ends within the limit
// (and says the feedback's quoted words, as the lone answer did) is
// trained; with none such, the lone answer is. A lone answer that fits,
// and the flag off, write nothing more; a lone answer without the quoted
// words is --teacher-quoted-retry's (written again once, as before), and
// of its answers that say the words one that ends within the limit is
// preferred while --teacher-fit-retry is on; when none does, or the fit
// retry is off, the quoted retry's pick stands. Counted on /metrics.
func TestTeacherFitRetry(t *testing.T) {
	signedFits := cannedAnswer{text: "Boil it for nine minutes. Hope this helps!", ended: true, gain: 0.5}
	drawn := []cannedAnswer{
		{text: "Boil it for nine minutes, then cool it. Good luck!", ended: true, gain: 0.9},
		{text: "Boil the egg for nine minutes, then cool it in cold water and peel it slowly. Hope this helps!", ended: true, gain: 0.7},
		signedFits,
		{text: "Put it in boiling water for nine minutes.", ended: true, gain: 0.3},
	}
	// None of these fits and says the words: the one that says them runs
	// past the limit (cut there, so never picked).
	unsigned := []cannedAnswer{drawn[0], drawn[1], drawn[3], {text: "Nine minutes in boiling water, then cold water.", ended: true, gain: 0.2}}
	// The quoted retry's best pick says the words within the limit, and
	// runs past it.
	signedFirst := cannedAnswer{text: "Hope this helps! Boil the egg for nine minutes, then cool it in cold water.", ended: true, gain: 0.9}
	early := []cannedAnswer{signedFirst, drawn[1], signedFits, drawn[3]}
	const (
		tldr     = `Start with "TL;DR:" and a one-line summary, then explain.`
		tldrLong = "TL;DR: Boil it nine minutes. Boil the egg in plenty of water for nine minutes, then cool it."
		signs    = `Be brief. Your last words must be "Hope this helps!"`
		unquote  = "Be brief and end with a friendly sign-off."
		// 99 bytes: past the rated turn's 60 tokens, within the teacher's 100.
		long      = "Boil the egg in plenty of water for nine minutes, then cool it under the cold tap. Hope this helps!"
		longPlain = "Boil the egg in plenty of water for nine minutes, then cool it under the cold tap and peel it well."
		short     = "Boil it nine minutes. Hope this helps!"
	)
	for _, c := range []struct {
		name, feedback, lone string
		answers              []cannedAnswer
		fitRetry, quoted     int
		any                  bool // --teacher-fit-retry-scope any (else quoted)
		want                 string
		draws                int // answers drawn after the lone one
		retried, kept        int
		quotedRetried        int
		quotedFits           int // quoted retries' picks moved to one that fits
	}{
		{"lone answer past the limit", signs, long, drawn, 4, 4, false, signedFits.text, 4, 1, 0, 0, 0},
		{"lone answer past the limit, scope any", signs, long, drawn, 4, 4, true, signedFits.text, 4, 1, 0, 0, 0},
		{"none drawn fits and says the words", signs, long, unsigned, 4, 4, false, long, 4, 1, 1, 0, 0},
		{"nothing quoted: nothing the cut hides", unquote, longPlain, drawn, 4, 4, false, longPlain, 0, 0, 0, 0, 0},
		{"nothing quoted, scope any: the best-gaining that fits", unquote, longPlain, drawn, 4, 4, true, drawn[0].text, 4, 1, 0, 0, 0},
		{"the quoted words within the limit", tldr, tldrLong, drawn, 4, 4, false, tldrLong, 0, 0, 0, 0, 0},
		{"the quoted words within the limit, scope any", tldr, tldrLong, drawn, 4, 4, true, tldrLong, 4, 1, 1, 0, 0},
		{"lone answer fits", signs, short, drawn, 4, 4, false, short, 0, 0, 0, 0, 0},
		{"off", signs, long, drawn, 0, 4, false, long, 0, 0, 0, 0, 0},
		{"lone answer without the words: the quoted retry's that fits", signs, longPlain, drawn, 4, 4, false, signedFits.text, 4, 0, 0, 1, 1},
		{"quoted retry, none that says the words fits", signs, longPlain, unsigned, 4, 4, false, drawn[1].text, 4, 0, 0, 1, 0},
		{"quoted retry, the fit retry off", signs, longPlain, drawn, 0, 4, false, drawn[1].text, 4, 0, 0, 1, 0},
		{"quoted retry's pick says the words within the limit", signs, longPlain, early, 4, 4, false, signedFirst.text, 4, 0, 0, 1, 0},
		{"quoted retry's pick says the words within the limit, scope any", signs, longPlain, early, 4, 4, true, signedFits.text, 4, 0, 0, 1, 1},
	} {
		f := cannedFixture(t, c.feedback, c.answers, func(cfg *Config) {
			cfg.TeacherSamples, cfg.TeacherFitRetry, cfg.TeacherQuotedRetry = 1, c.fitRetry, c.quoted
			if c.any {
				cfg.TeacherFitScope = FitScopeAny
			}
		})
		r := f.runner
		got := f.teacherTrains(t, c.lone, c.feedback)
		if !strings.HasPrefix(got, c.want) || len(got) > len(c.want)+len("<|im_end|>") {
			t.Errorf("%s: trained %q, want %q", c.name, got, c.want)
		}
		limits := r.teacher.Engine.(*cannedTeacher).limits
		if len(limits) != c.draws {
			t.Errorf("%s: the teacher drew %d answers, want %d", c.name, len(limits), c.draws)
		}
		for _, l := range limits {
			if want := 60; c.retried > 0 && l != want || c.quotedRetried > 0 && l == want {
				t.Errorf("%s: an answer drawn under a limit of %d tokens, want the rated turn's %d", c.name, l, want)
			}
		}
		k := r.Counters()
		if k.TeacherFitRetried != c.retried || k.TeacherFitKept != c.kept || k.TeacherQuotedRetried != c.quotedRetried || k.TeacherFitQuoted != c.quotedFits {
			t.Errorf("%s: %d turns written again for their length (%d kept), %d for the quoted words (%d moved to one that fits); want %d (%d), %d (%d)",
				c.name, k.TeacherFitRetried, k.TeacherFitKept, k.TeacherQuotedRetried, k.TeacherFitQuoted, c.retried, c.kept, c.quotedRetried, c.quotedFits)
		}
		other, kept := float64(c.retried-c.kept), float64(c.kept)
		if c.fitRetry == 0 {
			other, kept = -1, -1 // not exported
		}
		if got := metricLabel(t, r, "result", "another answer"); got != other {
			t.Errorf("%s: metric (another answer) %v, want %v", c.name, got, other)
		}
		if got := metricLabel(t, r, "result", "kept"); got != kept {
			t.Errorf("%s: metric (kept) %v, want %v", c.name, got, kept)
		}
		quotedFits := float64(c.quotedFits)
		if c.fitRetry == 0 {
			quotedFits = -1
		}
		if got := counterValue(t, r, "clawrl_loop_teacher_fit_quoted_total"); got != quotedFits {
			t.Errorf("%s: metric (quoted retries' picks that fit) %v, want %v", c.name, got, quotedFits)
		}
	}
}
