package rl

// Context distillation of teacher-written responses.
//
// A response the teacher wrote with the hint in context (--opd-response
// teacher|both, or an external teacher) is text the student did not sample.
// Through the policy-gradient objective each of its tokens gets the advantage
// clip(log π_teacher − log π_old, ±OPDClip): where the student already gives
// a token more probability than the teacher does, the step pushes the
// teacher's own token *down*, and no token weighs more than one negative
// log-likelihood term; from the second PPO epoch on the ratio clip also caps
// how far a token moves. DistillLoss trains those tokens by their plain
// cross-entropy instead: −coef · log π_θ(a_t | prompt without the hint, a_<t),
// summed over the response and averaged with the step's other tokens. Its
// gradient is the same in every epoch (no ratio, no clip). With greedy
// teacher text a_t is the teacher's top-1 token, so this is the top-1 case of
// the forward KL from the hint-conditioned teacher to the student; it needs no
// teacher log-probabilities, so any teacher's token ids will do.

// distillLoss writes the gradient of −coef·Σ w_t·log p_t into dlogp and
// returns the summed loss and its stats. w_t is focusWeight's (1 for every
// token when focus is 0 or the sample has no teacher log-probabilities).
func distillLoss(coef, focus float64, teacher, logp, dlogp, dentropy []float32) (float64, TokenStats) {
	st := TokenStats{Tokens: len(logp)}
	var sum float64
	for t, lp := range logp {
		c := coef
		if focus != 0 && teacher != nil {
			c *= focusWeight(focus, teacher[t], lp)
		}
		sum -= c * float64(lp)
		dlogp[t] = float32(-c)
		dentropy[t] = 0
	}
	st.PolicyLoss = sum
	return sum, st
}

// FocusCap bounds the gap focusWeight reads, in nats: a token the hint
// makes 4 nats likelier or more weighs 1 + 4·focus.
const FocusCap = 4.0

// focusWeight is a teacher-written token's cross-entropy weight under
// StepConfig.DistillFocus: 1 + focus·clamp(teacher − logp, 0, FocusCap),
// where teacher is the policy's own log-probability of the token with the
// hint in context (the sample's TeacherLogprobs) and logp the current
// policy's without it, read as a constant (no gradient flows through the
// weight). The tokens the hint explains, the ones that carry what the user
// asked for, weigh more than the rest of the teacher's text; as the
// student learns them the gap closes and the weight returns to 1.
func focusWeight(focus float64, teacher, logp float32) float64 {
	return 1 + focus*min(max(float64(teacher)-float64(logp), 0), FocusCap)
}

// distillCoef is the cross-entropy weight a sample is trained with, or 0
// when it goes through the policy-gradient objective: a teacher-written
// sample with cfg.DistillCoef set, or one with no teacher log-probabilities
// (an outside teacher that reports none), which has no advantage to use and
// falls back to weight 1.
func distillCoef(cfg StepConfig, s TrainSample) float64 {
	switch {
	case !s.TeacherWrote || s.Anchor != 0:
		return 0
	case cfg.DistillCoef > 0:
		return cfg.DistillCoef
	case s.TeacherLogprobs == nil:
		return 1
	}
	return 0
}
