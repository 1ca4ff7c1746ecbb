package rl

import (
	"fmt"
	"math"
)

// Advantages: how much better than expected each response token was. The
// three training signals of the design (Binary RL, OPD, Combined) differ only
// here; the loss is the same PPO-clip for all of them.

// Method is a training signal.
type Method string

const (
	MethodRL      Method = "rl"      // Binary RL: A_t = r for every token
	MethodOPD     Method = "opd"     // on-policy distillation: A_t = log π_teacher − log π_old
	MethodCombine Method = "combine" // A_t = w_opd·(teacher − old) + w_rl·r
)

// AdvantageConfig weighs the Combined method's two terms.
type AdvantageConfig struct {
	Method Method
	WOPD   float64 // default 1
	WRL    float64 // default 1
	// Baseline is what the rewards of a step's ungrouped samples are
	// compared with (one sample per prompt has no group to normalise in).
	Baseline Baseline
	// OPDClip clips the per-token teacher − old gap to ±OPDClip (the seed's
	// newer recipe uses 1); 0 leaves it unclipped.
	OPDClip float64
}

// Baseline says how single-sample rewards are centred.
type Baseline string

const (
	// BaselineNone uses the reward as it is: A = r. A batch of -1s then
	// says "less of everything".
	BaselineNone Baseline = "none"
	// BaselineBatch normalises the rewards over the step's batch,
	// (r − mean)/(std + 1e-6), as rLLM's PRPO does for continual learning.
	BaselineBatch Baseline = "batch"
	// BaselineCenter subtracts the batch mean only: the scale of the reward
	// is kept, so a step of mixed rewards moves as far as the judge said.
	BaselineCenter Baseline = "center"
	// BaselineRunning subtracts the running mean of the ratings of the
	// turns trained lately (RatingMean), the ones whose samples train a
	// teacher-written response included. The scheduler applies it before
	// the step (SchedulerConfig.RunningBaseline), so the step itself
	// leaves the rewards as they are. A step whose 👎s all went to the
	// teacher still trains its 👍s (by 1 − mean), and a run of 👎s with no
	// written feedback moves the mean to −1 instead of saying "less of
	// everything".
	BaselineRunning Baseline = "running"
)

// ParseBaseline checks a --baseline value.
func ParseBaseline(s string) (Baseline, error) {
	switch b := Baseline(s); b {
	case BaselineNone, BaselineBatch, BaselineCenter, BaselineRunning:
		return b, nil
	case "":
		return BaselineNone, nil
	}
	return "", fmt.Errorf("reward baseline %q: want none, batch, center or running", s)
}

// BatchBaseline applies b to the rewards whose use[i] is set (the samples
// that carry the reward term and belong to no group); the others are left
// as they are. Fewer than two such rewards are left as they are too: there
// is nothing to compare a lone reward with. BaselineRunning was applied
// before the step (RatingMean), so it leaves them too.
func BatchBaseline(b Baseline, rewards []float64, use []bool) []float64 {
	out := append([]float64(nil), rewards...)
	if b == BaselineNone || b == BaselineRunning || b == "" {
		return out
	}
	var n int
	var sum float64
	for i, r := range rewards {
		if use[i] {
			n++
			sum += r
		}
	}
	if n < 2 {
		return out
	}
	mean := sum / float64(n)
	var sq float64
	for i, r := range rewards {
		if use[i] {
			sq += (r - mean) * (r - mean)
		}
	}
	std := math.Sqrt(sq / float64(n-1))
	for i, r := range rewards {
		if !use[i] {
			continue
		}
		out[i] = r - mean
		if b == BaselineBatch {
			out[i] /= std + 1e-6
		}
	}
	return out
}

// DefaultRatingWindow is how many recent ratings the running baseline
// mostly reflects: each older rating weighs 1 − 1/window less.
const DefaultRatingWindow = 32

// RatingMean is the running mean of a user's ratings (BaselineRunning): an
// exponentially weighted mean in which each newer rating multiplies the
// weight of every older one by 1 − 1/window. Sum and Weight are what a
// version records (store.VersionMetrics) so that a restart goes on from
// them. The mean is pandas' Series.ewm(alpha=1/window, adjust=True).mean()
// at the last rating: the first ratings are not pulled towards 0.
type RatingMean struct {
	Sum, Weight float64
}

// Add returns m with ratings added in order.
func (m RatingMean) Add(ratings []float64, window int) RatingMean {
	if window < 1 {
		window = DefaultRatingWindow
	}
	keep := 1 - 1/float64(window)
	for _, r := range ratings {
		m.Sum = keep*m.Sum + r
		m.Weight = keep*m.Weight + 1
	}
	return m
}

// Mean is the running mean; 0 before any rating.
func (m RatingMean) Mean() float64 {
	if m.Weight == 0 {
		return 0
	}
	return m.Sum / m.Weight
}

// gap is the OPD term of one token, clipped to ±OPDClip when set.
func (c AdvantageConfig) gap(teacher, old float32) float64 {
	g := float64(teacher - old)
	if c.OPDClip > 0 {
		g = max(-c.OPDClip, min(c.OPDClip, g))
	}
	return g
}

// DefaultAdvantage is Combined with both weights 1.
func DefaultAdvantage() AdvantageConfig {
	return AdvantageConfig{Method: MethodCombine, WOPD: 1, WRL: 1}
}

// TokenAdvantages returns one advantage per response token. teacher is nil
// when no hint was accepted; in Combined mode the OPD term is then absent
// (and with reward 0 the RL term is, so a hint with r = 0 is OPD only).
func (c AdvantageConfig) TokenAdvantages(reward float64, teacher, old []float32) ([]float32, error) {
	n := len(old)
	if teacher != nil && len(teacher) != n {
		return nil, fmt.Errorf("advantages: %d teacher logprobs for %d response tokens", len(teacher), n)
	}
	out := make([]float32, n)
	switch c.Method {
	case MethodRL:
		for i := range out {
			out[i] = float32(reward)
		}
	case MethodOPD:
		if teacher == nil {
			return nil, fmt.Errorf("advantages: method opd needs teacher logprobs")
		}
		for i := range out {
			out[i] = float32(c.gap(teacher[i], old[i]))
		}
	case MethodCombine:
		for i := range out {
			a := c.WRL * reward
			if teacher != nil {
				a += c.WOPD * c.gap(teacher[i], old[i])
			}
			out[i] = float32(a)
		}
	default:
		return nil, fmt.Errorf("advantages: unknown method %q", c.Method)
	}
	return out, nil
}

// GroupNormalize replaces each reward by (r − mean)/(std + 1e-6) over the
// samples of its group (n samples of one prompt, as in GRPO), with the
// unbiased standard deviation torch.std uses. Group 0 means "alone": the
// reward is left as it is. A group of one is centred to 0.
func GroupNormalize(rewards []float64, groups []int) ([]float64, error) {
	return groupAdvantages(rewards, groups, true)
}

// GroupCentre is GroupNormalize without the division by the standard
// deviation: r − mean over the group (Dr. GRPO's choice).
func GroupCentre(rewards []float64, groups []int) ([]float64, error) {
	return groupAdvantages(rewards, groups, false)
}

// groupAdvantages centres each reward on its group's mean and, with scale,
// divides by the group's standard deviation.
func groupAdvantages(rewards []float64, groups []int, scale bool) ([]float64, error) {
	if len(groups) != len(rewards) {
		return nil, fmt.Errorf("group normalise: %d groups for %d rewards", len(groups), len(rewards))
	}
	type acc struct {
		n       int
		sum, sq float64
	}
	stats := map[int]*acc{}
	for i, g := range groups {
		if g == 0 {
			continue
		}
		a := stats[g]
		if a == nil {
			a = &acc{}
			stats[g] = a
		}
		a.n++
		a.sum += rewards[i]
	}
	for i, g := range groups {
		if g == 0 {
			continue
		}
		a := stats[g]
		d := rewards[i] - a.sum/float64(a.n)
		a.sq += d * d
	}
	out := make([]float64, len(rewards))
	for i, g := range groups {
		if g == 0 {
			out[i] = rewards[i]
			continue
		}
		a := stats[g]
		mean := a.sum / float64(a.n)
		if a.n < 2 {
			out[i] = 0
			continue
		}
		out[i] = rewards[i] - mean
		if scale {
			out[i] /= math.Sqrt(a.sq/float64(a.n-1)) + 1e-6
		}
	}
	return out, nil
}
