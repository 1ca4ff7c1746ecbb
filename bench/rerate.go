package bench

import "errors"

// RatedTurn is a training turn as a run's store kept it: the question, the
// answer, and the rating and written feedback the simulated user sent.
type RatedTurn struct {
	Question string
	Answer   Answer
	Rating   int
	Text     string
}

// Rerating is a recorded rating that the persona as it is now would not
// send: a rerun of the run under today's simulated users trains on other
// signals from that turn on, so it parts from the recorded run there.
type Rerating struct {
	// Turn is the turn's place among the run's rated turns, from 0; Round
	// the round that sent it, from 1 (0 when the rounds' counts do not
	// place the turns).
	Turn, Round int
	RatedTurn
	// Rating and Text are what the persona sends now.
	Rating int
	Text   string
}

// rate is the rating and written feedback a user who rates answers
// (FeedbackText, FeedbackRating) sends about an answer that did (ok) or
// did not satisfy them: +1, or −1 with the critique when the feedback is
// written (what the answer missed, with cfg.Specific).
func (p *Persona) rate(ok bool, answer string, cfg Config) (int, string) {
	switch {
	case ok:
		return 1, ""
	case cfg.Feedback != FeedbackText:
		return -1, ""
	case cfg.Specific:
		critique, _ := p.Complaint(answer)
		return -1, critique
	}
	return -1, p.Critique
}

// Rerate reads a run's rated training turns (in the order the store kept
// them) again with p as it is now, under the run's feedback settings (cfg's
// Feedback and Specific), and returns those whose rating or written
// feedback p would send otherwise. run's rounds (their TrainRated counts)
// place each turn in the round that sent it. Implicit feedback, a next
// message the user's session seeded, is not read again.
func Rerate(p *Persona, cfg Config, run Run, turns []RatedTurn) ([]Rerating, error) {
	if cfg.Feedback != FeedbackText && cfg.Feedback != FeedbackRating {
		return nil, errors.New("bench: only ratings are read again (the run's feedback is " + cfg.Feedback + ")")
	}
	var ends []int // the rated turns sent by the end of each round from 1
	n := 0
	for _, e := range run.Evals[min(1, len(run.Evals)):] {
		n += e.TrainRated
		ends = append(ends, n)
	}
	placed := n == len(turns)
	var out []Rerating
	round := 0
	for i, t := range turns {
		for placed && round < len(ends) && i >= ends[round] {
			round++
		}
		rating, text := p.rate(p.Satisfied(t.Answer), t.Answer.Text, cfg)
		if rating == t.Rating && text == t.Text {
			continue
		}
		r := Rerating{Turn: i, RatedTurn: t, Rating: rating, Text: text}
		if placed {
			r.Round = round + 1
		}
		out = append(out, r)
	}
	return out, nil
}
