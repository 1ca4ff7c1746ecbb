package bench

import (
	"strings"
	"testing"
)

func TestRerate(t *testing.T) {
	french := PersonaNamed("french")
	fr := Answer{Text: "Les chiens mangent de la viande et des croquettes.", Finished: true}
	es := Answer{Text: "Los perros comen carne y pienso, y también algunas verduras.", Finished: true}
	en := Answer{Text: "Dogs eat meat and kibble.", Finished: true}
	crit := french.Critique
	turns := []RatedTurn{
		{Question: "q1", Answer: en, Rating: -1, Text: crit}, // round 1
		{Question: "q2", Answer: fr, Rating: 1},
		{Question: "q3", Answer: fr, Rating: 1},                       // round 2
		{Question: "q4", Answer: es, Rating: 1},                       // liked as French once; today's user wants French
		{Question: "q5", Answer: en, Rating: -1, Text: "Plus court."}, // another critique than today's
	}
	run := Run{Evals: []Eval{{Round: 0}, {Round: 1, TrainRated: 2}, {Round: 2, TrainRated: 3}}}
	got, err := Rerate(french, Config{Feedback: FeedbackText}, run, turns)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d reratings, want 2: %+v", len(got), got)
	}
	if g := got[0]; g.Turn != 3 || g.Round != 2 || g.Question != "q4" || g.RatedTurn.Rating != 1 || g.Rating != -1 || g.Text != crit {
		t.Errorf("first %+v: want the Spanish answer (turn 3, round 2) rated -1 with the critique", g)
	}
	if g := got[1]; g.Turn != 4 || g.Round != 2 || g.Rating != -1 || g.Text != crit || g.RatedTurn.Text != "Plus court." {
		t.Errorf("second %+v: want the other critique", g)
	}

	// Rounds that do not account for the turns place none.
	short := Run{Evals: []Eval{{Round: 0}, {Round: 1, TrainRated: 2}}}
	got, err = Rerate(french, Config{Feedback: FeedbackText}, short, turns)
	if err != nil || len(got) != 2 || got[0].Round != 0 || got[0].Turn != 3 {
		t.Errorf("unplaced: %+v, %v", got, err)
	}

	// Ratings alone: a -1 carries no text, so only the ratings count.
	rated := []RatedTurn{{Answer: en, Rating: -1}, {Answer: es, Rating: 1}, {Answer: fr, Rating: -1}}
	got, err = Rerate(french, Config{Feedback: FeedbackRating}, Run{}, rated)
	if err != nil || len(got) != 2 || got[0].Turn != 1 || got[1].Turn != 2 || got[1].Rating != 1 || got[1].Text != "" {
		t.Errorf("ratings: %+v, %v", got, err)
	}

	if _, err := Rerate(french, Config{Feedback: FeedbackImplicit}, run, turns); err == nil || !strings.Contains(err.Error(), "implicit") {
		t.Errorf("implicit feedback: %v, want an error naming it", err)
	}
}

// TestRateSpecific: with Specific, the critique is the first miss the answer
// makes (the tldr user's too-long summary), as interact sends it.
func TestRateSpecific(t *testing.T) {
	tldr := PersonaNamed("tldr")
	long := "TL;DR: the summary line here runs on and on, past the twenty-five words the user allows, because it keeps adding one more clause about markets, prices, banks, firms, workers and the many goods they trade.\n\nMore."
	want, _ := tldr.Complaint(long)
	if want == tldr.Critique {
		t.Fatal("the answer makes no miss of its own; pick one that does")
	}
	if r, text := tldr.rate(false, long, Config{Feedback: FeedbackText, Specific: true}); r != -1 || text != want {
		t.Errorf("specific: %d %q, want -1 %q", r, text, want)
	}
	if r, text := tldr.rate(false, long, Config{Feedback: FeedbackText}); r != -1 || text != tldr.Critique {
		t.Errorf("general: %d %q", r, text)
	}
	if r, text := tldr.rate(true, long, Config{Feedback: FeedbackText, Specific: true}); r != 1 || text != "" {
		t.Errorf("liked: %d %q", r, text)
	}
}
