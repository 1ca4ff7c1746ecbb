package loop

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/store"
)

// TestTeacherSelectQuoted: with --teacher-select-quoted the best-gaining
// teacher answer that does not say the feedback's quoted words loses to
// one that does, and --teacher-select-length fit then chooses among those
// that do; a feedback that quotes words to avoid, or none that say them,
// leaves the gain's pick. Counted on /metrics.
func TestTeacherSelectQuoted(t *testing.T) {
	signed := []cannedAnswer{
		{text: "Boil it for nine minutes, then cool it. Good luck!", ended: true, gain: 0.9},
		{text: "Boil the egg for nine minutes, then cool it in cold water and peel it slowly. Hope this helps!", ended: true, gain: 0.7},
		{text: "Boil it for nine minutes. Hope this helps!", ended: true, gain: 0.5},
		{text: "Put it in boiling water for nine minutes.", ended: true, gain: 0.3},
	}
	for _, c := range []struct {
		name, feedback string
		quoted         bool
		length         string
		want, moved    int
	}{
		{"off", `Be brief. Your last words must be "Hope this helps!"`, false, LengthOff, 0, 0},
		{"on", `Be brief. Your last words must be "Hope this helps!"`, true, LengthOff, 1, 1},
		{"on, then fit", `Be brief. Your last words must be "Hope this helps!"`, true, LengthFit, 2, 1},
		{"fit alone", `Be brief. Your last words must be "Hope this helps!"`, false, LengthFit, 0, 0},
		{"words to avoid", `Be brief, and never write "Hope this helps!"`, true, LengthOff, 0, 0},
		{"nobody says them", `Be brief. Your last words must be "Cheers, Bot"`, true, LengthOff, 0, 0},
	} {
		f := cannedFixture(t, c.feedback, signed, func(cfg *Config) {
			cfg.TeacherSelectLength, cfg.TeacherSelectQuoted = c.length, c.quoted
		})
		r := f.runner
		if got := f.teacherTrains(t, "Boil it.", c.feedback); !strings.HasPrefix(got, signed[c.want].text) {
			t.Errorf("%s: trained %q, want %q", c.name, got, signed[c.want].text)
		}
		// Under fit the teacher writes at most the turn's 60 tokens
		// (Runner.fitLimit); here an answer that fits says the quoted
		// words, so none cut at the budget is written whole
		// (TestTeacherQuotedCapped).
		limit := cannedTokens
		if c.length == LengthFit {
			limit = 60
		}
		if got := r.teacher.Engine.(*cannedTeacher).limits; len(got) != len(signed) || slices.ContainsFunc(got, func(n int) bool { return n != limit }) {
			t.Errorf("%s: the teacher wrote under limits %v, want %d of %d", c.name, got, len(signed), limit)
		}
		if k := r.Counters(); k.TeacherQuotedOther != c.moved {
			t.Errorf("%s: %d picks moved, want %d", c.name, k.TeacherQuotedOther, c.moved)
		}
		want := float64(c.moved)
		if !c.quoted {
			want = -1 // not exported
		}
		if got := counterValue(t, r, "clawrl_loop_teacher_quoted_preferred_total"); got != want {
			t.Errorf("%s: metric %v, want %v", c.name, got, want)
		}
	}
}

// TestTeacherQuotedCapped: under --teacher-select-quoted and fit the
// teacher writes its answers to the rated turn's budget (60 tokens here),
// and writes those cut there whole (the same seeded draws, at its whole
// limit) only when an answer that fits passes the threshold and none that
// does says the quoted words: then whether a cut answer says them decides
// the pick (judge.PreferQuoted drops the fitting ones that do not). The
// pick is the one whole answers give.
func TestTeacherQuotedCapped(t *testing.T) {
	const feedback = `Be brief. Your last words must be "Hope this helps!"`
	// Over 60 tokens, under the teacher's 100 (a scripted token is about
	// a character).
	longSigned := "Boil the egg for nine minutes, then cool it in cold water and peel it. Hope this helps!"
	longPlain := "Boil the egg for nine minutes, then cool it in cold water and peel it before you eat."
	const none = -1
	for _, c := range []struct {
		name    string
		answers []cannedAnswer
		want    int   // the answer trained (none: the turn is dropped)
		limits  []int // of the teacher's writes, in order
		reason  string
	}{
		{
			// Whole, the cut answer is the best and says the words: the
			// fitting ones, which do not, are dropped, and it does not fit.
			name: "a cut answer says them",
			answers: []cannedAnswer{
				{text: "Put it in boiling water for nine minutes.", ended: true, gain: 0.6},
				{text: longSigned, ended: true, gain: 0.8},
				{text: "Boil it for nine minutes, then peel it.", ended: true, gain: 0.4},
			},
			want: none, limits: []int{60, 60, 60, cannedTokens},
			reason: "none of the teacher's answers does what the feedback asks (by the hint gain): no answer of 3 above the threshold ended within the turn's limit of 60 tokens",
		},
		{
			name: "a cut answer does not say them",
			answers: []cannedAnswer{
				{text: "Put it in boiling water for nine minutes.", ended: true, gain: 0.6},
				{text: longPlain, ended: true, gain: 0.8},
				{text: "Boil it for nine minutes, then peel it.", ended: true, gain: 0.4},
			},
			want: 0, limits: []int{60, 60, 60, cannedTokens},
		},
		{
			name: "a fitting answer says them",
			answers: []cannedAnswer{
				{text: "Boil it for nine minutes. Hope this helps!", ended: true, gain: 0.5},
				{text: longSigned, ended: true, gain: 0.8},
				{text: "Put it in boiling water for nine minutes.", ended: true, gain: 0.6},
			},
			want: 0, limits: []int{60, 60, 60},
		},
		{
			name: "no fitting answer passes",
			answers: []cannedAnswer{
				{text: "Put it in boiling water for nine minutes.", ended: true, gain: -0.2},
				{text: longSigned, ended: true, gain: 0.8},
			},
			want: none, limits: []int{60, 60},
			reason: "none of the teacher's answers does what the feedback asks (by the hint gain): no answer of 2 above the threshold ended within the turn's limit of 60 tokens",
		},
	} {
		ctx := context.Background()
		f := cannedFixture(t, feedback, c.answers, func(cfg *Config) {
			cfg.TeacherSelectLength, cfg.TeacherSelectQuoted = LengthFit, true
		})
		r := f.runner
		tr := f.serveUnder(t, "s", []chat.Message{{Role: chat.RoleUser, Content: "how do I boil an egg? [[say:Boil it.]]"}}, 60, 60)
		if err := f.store.AddFeedback(ctx, tr.ID, store.Feedback{Rating: -1, Text: feedback, CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		if _, err := r.judgeRound(ctx); err != nil {
			t.Fatal(err)
		}
		if got := r.teacher.Engine.(*cannedTeacher).limits; !slices.Equal(got, c.limits) {
			t.Errorf("%s: the teacher wrote under limits %v, want %v", c.name, got, c.limits)
		}
		ss, err := f.store.ListSamples(ctx, store.TurnFilter{SessionID: tr.SessionID})
		if err != nil {
			t.Fatal(err)
		}
		if c.want == none {
			if got, _ := f.turn(t, tr.ID); len(ss) != 0 || got.State != store.Dropped || got.DropReason != c.reason {
				t.Errorf("%s: %d samples, turn %s (%q); want none, dropped (%q)", c.name, len(ss), got.State, got.DropReason, c.reason)
			}
			continue
		}
		if len(ss) != 1 || len(ss[0].TeacherResponseIDs) == 0 {
			t.Fatalf("%s: samples %+v, want one teacher-written", c.name, ss)
		}
		want := c.answers[c.want].text
		if got := f.engine.Format().Decode(ss[0].TeacherResponseIDs); !strings.HasPrefix(got, want) || len(got) > len(want)+len("<|im_end|>") {
			t.Errorf("%s: trained %q, want %q", c.name, got, want)
		}
	}
}

// TestTeacherQuotedRetry: with one teacher answer per turn and
// --teacher-quoted-retry 4, a turn whose lone (greedy) answer does not say
// the feedback's quoted words is written again as best of 4, and the
// best-gaining answer that says them is trained; a lone answer that says
// them, a feedback that quotes nothing, and the flag off train the lone
// answer and write nothing more. Counted on /metrics.
func TestTeacherQuotedRetry(t *testing.T) {
	drawn := []cannedAnswer{
		{text: "Boil it for nine minutes, then cool it. Good luck!", ended: true, gain: 0.9},
		{text: "Boil the egg for nine minutes, then cool it in cold water and peel it slowly. Hope this helps!", ended: true, gain: 0.7},
		{text: "Boil it for nine minutes. Hope this helps!", ended: true, gain: 0.5},
		{text: "Put it in boiling water for nine minutes.", ended: true, gain: 0.3},
	}
	const (
		signs   = `Be brief. Your last words must be "Hope this helps!"`
		unquote = "Be brief and end with a friendly sign-off."
		plain   = "Boil the egg in water for nine minutes, then cool it down."
		signed  = "Boil the egg in water for nine minutes, then cool it. Hope this helps!"
	)
	for _, c := range []struct {
		name, feedback, lone string
		retry                int
		want                 string
		draws, retried       int
	}{
		{"lone answer without the words", signs, plain, 4, drawn[1].text, 4, 1},
		{"lone answer says them", signs, signed, 4, signed, 0, 0},
		{"nothing quoted", unquote, plain, 4, plain, 0, 0},
		{"off", signs, plain, 0, plain, 0, 0},
	} {
		f := cannedFixture(t, c.feedback, drawn, func(cfg *Config) {
			cfg.TeacherSamples, cfg.TeacherQuotedRetry = 1, c.retry
		})
		r := f.runner
		if got := f.teacherTrains(t, c.lone, c.feedback); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: trained %q, want %q", c.name, got, c.want)
		}
		if got := len(r.teacher.Engine.(*cannedTeacher).limits); got != c.draws {
			t.Errorf("%s: the teacher drew %d answers, want %d", c.name, got, c.draws)
		}
		if k := r.Counters(); k.TeacherQuotedRetried != c.retried {
			t.Errorf("%s: %d turns written again, want %d", c.name, k.TeacherQuotedRetried, c.retried)
		}
		want := float64(c.retried)
		if c.retry == 0 {
			want = -1 // not exported
		}
		if got := counterValue(t, r, "clawrl_loop_teacher_quoted_retries_total"); got != want {
			t.Errorf("%s: metric %v, want %v", c.name, got, want)
		}
	}
}

// teacherTrains serves "how do I boil an egg?" (the scripted policy
// answering say), rates the answer 👎 with feedback, runs one judging
// round and returns the one teacher-written sample's answer, decoded.
func (f *fixture) teacherTrains(t *testing.T, say, feedback string) string {
	t.Helper()
	ctx := context.Background()
	tr := f.serveUnder(t, "s", []chat.Message{{Role: chat.RoleUser, Content: "how do I boil an egg? [[say:" + say + "]]"}}, 60, 60)
	if err := f.store.AddFeedback(ctx, tr.ID, store.Feedback{Rating: -1, Text: feedback, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.runner.judgeRound(ctx); err != nil {
		t.Fatal(err)
	}
	ss, err := f.store.ListSamples(ctx, store.TurnFilter{SessionID: tr.SessionID})
	if err != nil || len(ss) != 1 || len(ss[0].TeacherResponseIDs) == 0 {
		t.Fatalf("feedback %q: samples %+v (%v), want one teacher-written", feedback, ss, err)
	}
	return f.engine.Format().Decode(ss[0].TeacherResponseIDs)
}
