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
		ctx := context.Background()
		f := cannedFixture(t, c.feedback, signed, func(cfg *Config) {
			cfg.TeacherSelectLength, cfg.TeacherSelectQuoted = c.length, c.quoted
		})
		r := f.runner
		tr := f.serveUnder(t, "s", []chat.Message{{Role: chat.RoleUser, Content: "how do I boil an egg? [[say:Boil it.]]"}}, 60, 60)
		if err := f.store.AddFeedback(ctx, tr.ID, store.Feedback{Rating: -1, Text: c.feedback, CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		if _, err := r.judgeRound(ctx); err != nil {
			t.Fatal(err)
		}
		ss, err := f.store.ListSamples(ctx, store.TurnFilter{SessionID: tr.SessionID})
		if err != nil || len(ss) != 1 || len(ss[0].TeacherResponseIDs) == 0 {
			t.Fatalf("%s: samples %+v (%v), want one teacher-written", c.name, ss, err)
		}
		if got := f.engine.Format().Decode(ss[0].TeacherResponseIDs); !strings.HasPrefix(got, signed[c.want].text) {
			t.Errorf("%s: trained %q, want %q", c.name, got, signed[c.want].text)
		}
		// Fit alone, the teacher writes at most the turn's 60 tokens
		// (Runner.fitLimit); with quoted words wanted, its whole limit:
		// an answer that says them past the budget decides the pick.
		limit := cannedTokens
		if c.length == LengthFit && !c.quoted {
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
