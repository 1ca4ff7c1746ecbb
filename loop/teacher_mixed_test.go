package loop

import (
	"context"
	"slices"
	"testing"

	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/judge"
	"github.com/clawrl/clawrl/store"
)

// TestTeacherMixedPlacement: under --hint-placement mixed the teacher
// writes half of a turn's answers with the hint in the user's message and
// half with it in the system message (draw i under HintMixed.Writing(i),
// checked in package judge), and the hint gain reads each answer
// with the feedback where its writer saw it, so that neither placement's
// answers are read under the other's prompt. The
// scripted engine reads cues from user messages only, so the answers
// written under the system placement lack the feedback's words; the turn
// still stores one sample, one of the answers written.
func TestTeacherMixedPlacement(t *testing.T) {
	ctx := context.Background()
	f, log := gainFixture(t, "", func(*Config) {})
	f.runner.teacher.Placement = judge.HintMixed
	tr := critiqueTurns(t, f, 1)[0]
	if _, err := f.runner.judgeRound(ctx); err != nil {
		t.Fatal(err)
	}
	format := f.engine.Format()
	hint := "[[say:Short 0.]] Be brief."
	render := func(at judge.HintPlacement) []int32 {
		msgs, err := judge.TeacherPromptAt(tr.Messages, hint, at)
		if err != nil {
			t.Fatal(err)
		}
		text, err := format.Render(msgs, nil, engine.RenderOptions{AddGenerationPrompt: true})
		if err != nil {
			t.Fatal(err)
		}
		return format.Encode(text)
	}
	user, system := render(judge.HintInUser), render(judge.HintInSystem)
	if slices.Equal(user, system) {
		t.Fatal("the two placements render the same prompt; the test shows nothing")
	}
	if len(log.generatePrompts) != selectSamples {
		t.Fatalf("%d answers written, want %d", len(log.generatePrompts), selectSamples)
	}
	// The answers are written at once (one batch), so in any order: half
	// under each placement.
	var users, systems int
	for i, p := range log.generatePrompts {
		switch {
		case slices.Equal(p, user):
			users++
		case slices.Equal(p, system):
			systems++
		default:
			t.Errorf("answer %d was written under neither placement:\n%q", i, format.Decode(p))
		}
	}
	if users != selectSamples/2 || systems != selectSamples/2 {
		t.Errorf("%d answers written under the user placement and %d under the system one, want %d each", users, systems, selectSamples/2)
	}
	// The hint gain reads each answer with the feedback (where it was
	// written) and without it (the turn's own prompt).
	var withUser, withSystem, without int
	for i, p := range log.scorePrompts {
		switch {
		case slices.Equal(p, user):
			withUser++
		case slices.Equal(p, system):
			withSystem++
		case slices.Equal(p, tr.PromptIDs):
			without++
		default:
			t.Errorf("scoring pass %d read under neither placement nor the turn's prompt:\n%q", i, format.Decode(p))
		}
	}
	if half := selectSamples / 2; withUser != half || withSystem != half || without != selectSamples {
		t.Errorf("scoring passes: %d under user, %d under system, %d without the feedback; want %d, %d, %d",
			withUser, withSystem, without, half, half, selectSamples)
	}
	ss, err := f.store.ListSamples(ctx, store.TurnFilter{SessionID: tr.SessionID})
	if err != nil || len(ss) != 1 {
		t.Fatalf("%d samples (%v), want 1", len(ss), err)
	}
	got := format.Decode(ss[0].TeacherResponseIDs)
	if got != "Roses are red. Short 0.<|im_end|>" && got != "Roses are red. <|im_end|>" {
		t.Errorf("stored teacher answer %q is neither placement's", got)
	}
	// The pick is counted by the placement it was written under.
	wantSystem := 0.0
	if got == "Roses are red. <|im_end|>" {
		wantSystem = 1
	}
	if u, s := metricLabel(t, f.runner, "placement", "user"), metricLabel(t, f.runner, "placement", "system"); u != 1-wantSystem || s != wantSystem {
		t.Errorf("teacher_mixed_picks_total: user %v, system %v; want %v, %v", u, s, 1-wantSystem, wantSystem)
	}
}
