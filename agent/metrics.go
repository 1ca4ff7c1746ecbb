package agent

import (
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// Collector exposes the runner's progress to Prometheus (/metrics).
func (r *Runner) Collector(env string) prometheus.Collector { return collector{r, env} }

type collector struct {
	r   *Runner
	env string
}

func agentDesc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc("clawrl_agent_"+name, help, append([]string{"env"}, labels...), nil)
}

var (
	descRunning  = agentDesc("episodes_running", "Episodes in flight.")
	descDone     = agentDesc("episodes_total", "Episodes evaluated.")
	descFailed   = agentDesc("episodes_failed_total", "Episodes the environment failed (run again).")
	descGroups   = agentDesc("groups_total", "Task groups (n episodes each) recorded.")
	descSuccess  = agentDesc("success_rate", "Success rate of all episodes so far.")
	descVEp      = agentDesc("version_episodes", "Episodes played by a policy version.", "version")
	descVSuccess = agentDesc("version_success_rate", "Success rate of the episodes a policy version played.", "version")
	descVReward  = agentDesc("version_mean_reward", "Mean reward of the episodes a policy version played.", "version")
)

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRunning, descDone, descFailed, descGroups, descSuccess, descVEp, descVSuccess, descVReward} {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	s := c.r.stats.Snapshot()
	ch <- prometheus.MustNewConstMetric(descRunning, prometheus.GaugeValue, float64(s.Running), c.env)
	ch <- prometheus.MustNewConstMetric(descDone, prometheus.CounterValue, float64(s.Done), c.env)
	ch <- prometheus.MustNewConstMetric(descFailed, prometheus.CounterValue, float64(s.Failed), c.env)
	ch <- prometheus.MustNewConstMetric(descGroups, prometheus.CounterValue, float64(s.Groups), c.env)
	ch <- prometheus.MustNewConstMetric(descSuccess, prometheus.GaugeValue, s.SuccessRate, c.env)
	for v, vs := range s.ByVersion {
		n := strings.TrimPrefix(v, "v")
		if _, err := strconv.Atoi(n); err != nil {
			continue
		}
		ch <- prometheus.MustNewConstMetric(descVEp, prometheus.CounterValue, float64(vs.Episodes), c.env, n)
		ch <- prometheus.MustNewConstMetric(descVSuccess, prometheus.GaugeValue, vs.SuccessRate, c.env, n)
		ch <- prometheus.MustNewConstMetric(descVReward, prometheus.GaugeValue, vs.MeanReward, c.env, n)
	}
}
