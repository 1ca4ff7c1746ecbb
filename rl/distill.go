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

// distillLoss writes the gradient of −coef·Σ log p into dlogp and returns
// the summed loss and its stats.
func distillLoss(coef float64, logp, dlogp, dentropy []float32) (float64, TokenStats) {
	st := TokenStats{Tokens: len(logp)}
	var sum float64
	for t, lp := range logp {
		sum -= coef * float64(lp)
		dlogp[t] = float32(-coef)
		dentropy[t] = 0
	}
	st.PolicyLoss = sum
	return sum, st
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
