package loop

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Collector exposes the learning loop on /metrics: the judge loop's
// counters, the train loop's steps and the last version's numbers (loss,
// mean reward, clip fraction, KL, staleness, importance weights), the queues
// and the drop reasons. Register it on the gateway's registry
// (api.Config.Registry).
func (r *Runner) Collector() prometheus.Collector { return collector{r} }

type collector struct{ r *Runner }

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc("clawrl_loop_"+name, help, labels, nil)
}

var (
	judgedDesc       = desc("judged_total", "Turns judged since start, by score.", "score")
	hintsDesc        = desc("hints_accepted_total", "Hindsight hints accepted since start.")
	samplesDesc      = desc("samples_built_total", "Samples built since start (at_least_one: kept by the at-least-one rule).", "kind")
	droppedNowDesc   = desc("dropped_total", "Turns the judge loop dropped since start.")
	revisedDesc      = desc("revised_total", "Judgments rescored since start because feedback arrived after them.")
	roundErrDesc     = desc("judge_round_errors_total", "Judge rounds that failed since start.")
	stepsDesc        = desc("train_steps_total", "Trainer steps recorded as versions since start.")
	failedStepsDesc  = desc("train_failed_steps_total", "Trainer steps that failed since start.")
	staleDesc        = desc("train_dropped_stale_total", "Samples refused as more than K versions stale since start.")
	publishErrDesc   = desc("publish_errors_total", "Failed attempts to publish a version to the engine.")
	heldDesc         = desc("train_steps_held_total", "Steps not trained since start because their users liked at least --hold-liked of their rated answers (their turns dropped, the served version kept).")
	unfocusedDesc    = desc("train_steps_unfocused_total", "Steps taken again without --distill-focus since start, because the retention check rejected the focused step (rl.Focuser).")
	rolledBackDesc   = desc("train_steps_rolled_back_total", "Steps trained since start from the version before the served one, because the served version's users liked its answers far less often (--rollback-drop).")
	rejectedDesc     = desc("versions_rejected_total", "Versions the retention check refused to serve since start.")
	servedDesc       = desc("served_version", "The policy version the engine serves: the newest promoted one (0: base weights).")
	versionDesc      = desc("policy_version", "The last recorded policy version, served or rejected (0: base weights).")
	versionAgeDesc   = desc("policy_version_age_seconds", "Seconds since the last version was recorded.")
	lastDesc         = desc("last_step", "Numbers of the last recorded version's trainer step.", "metric")
	stepScaleDesc    = desc("version_step_scale", "Fraction of its trainer step the last recorded version holds: 1, or 1/2, 1/4… when the retention gate backtracked, times the 👎s' share of a step for a held step that trained them alone (0: not gated and not thinned).")
	readyDesc        = desc("samples_ready", "Samples waiting for the trainer.")
	pendingDesc      = desc("samples_pending", "Judged turns kept for training whose sample is not built yet (mostly the teacher's work waiting).")
	trainedDesc      = desc("samples_trained", "Samples trained, all time.")
	droppedByDesc    = desc("turns_dropped", "Dropped turns by reason, all time.", "reason")
	servingDesc      = desc("serving_active", "Serving generations running now (training yields to them).")
	learningErrsDesc = desc("store_errors", "1 when the learning tables could not be read for this scrape.")
)

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{judgedDesc, hintsDesc, samplesDesc, droppedNowDesc, revisedDesc, roundErrDesc, stepsDesc,
		failedStepsDesc, staleDesc, publishErrDesc, rejectedDesc, heldDesc, rolledBackDesc, unfocusedDesc, servedDesc, versionDesc, versionAgeDesc, lastDesc, stepScaleDesc, readyDesc, pendingDesc, trainedDesc,
		droppedByDesc, servingDesc, learningErrsDesc} {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	r := c.r
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v int, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	k := r.Counters()
	counter(judgedDesc, k.Positive, "1")
	counter(judgedDesc, k.Negative, "-1")
	counter(judgedDesc, k.Judged-k.Positive-k.Negative, "0")
	counter(hintsDesc, k.HintsAccepted)
	counter(samplesDesc, k.Samples-k.AtLeastOne, "signal")
	counter(samplesDesc, k.AtLeastOne, "at_least_one")
	counter(droppedNowDesc, k.Dropped)
	counter(revisedDesc, k.Revised)
	counter(roundErrDesc, k.RoundErrors)
	gauge(servingDesc, float64(r.gate.Active()))
	if r.scheduler != nil {
		s := r.scheduler.Stats()
		counter(stepsDesc, s.Steps)
		counter(failedStepsDesc, s.FailedSteps)
		counter(staleDesc, s.DroppedStale)
		counter(publishErrDesc, s.PublishErrors)
		counter(rejectedDesc, s.Rejected)
		counter(heldDesc, s.Held)
		counter(rolledBackDesc, s.RolledBack)
		counter(unfocusedDesc, s.Unfocused)
		gauge(servedDesc, float64(r.scheduler.Served().Version))
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := r.store.LearningStats(ctx)
	if err != nil {
		gauge(learningErrsDesc, 1)
		return
	}
	gauge(learningErrsDesc, 0)
	gauge(readyDesc, float64(st.SamplesReady))
	gauge(pendingDesc, float64(st.SamplesPending))
	gauge(trainedDesc, float64(st.Trained))
	for reason, n := range st.DroppedBy {
		gauge(droppedByDesc, float64(n), reason)
	}
	if st.Latest == nil {
		gauge(versionDesc, 0)
		return
	}
	v := st.Latest
	gauge(versionDesc, float64(v.Version))
	gauge(versionAgeDesc, time.Since(v.CreatedAt).Seconds())
	gauge(stepScaleDesc, v.Metrics.StepScale)
	m := v.Metrics
	for name, x := range map[string]float64{
		"loss": m.Loss, "mean_reward": m.MeanReward, "samples": float64(m.Samples), "dropped_stale": float64(m.DroppedStale),
		"rl_samples": float64(m.RLSamples), "opd_samples": float64(m.OPDSamples), "tokens": float64(m.Tokens),
		"clip_fraction": m.ClipFraction, "kl": m.KL, "entropy": m.Entropy,
		"staleness_mean": m.StalenessMean, "staleness_max": float64(m.StalenessMax),
		"importance_weight_mean": m.ImportanceWeightMean, "importance_weight_max": m.ImportanceWeightMax,
		"importance_truncated": m.ImportanceTruncated, "step_seconds": float64(m.StepNanos) / 1e9,
		"retention_lost": float64(m.RetentionLost), "retention_logprob": m.RetentionLogprob, "retention_base": m.RetentionBase,
		"step_scale": m.StepScale,
	} {
		gauge(lastDesc, x, name)
	}
}
