package api

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/clawrl/clawrl/store"
)

// metrics are the gateway's Prometheus series, on a registry of their own
// (no process-global state).
type metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec   // route, code
	latency  *prometheus.HistogramVec // route, stream
	ttft     prometheus.Histogram
	inflight prometheus.Gauge
	tokens   *prometheus.CounterVec // kind: prompt, completion
	// promptTokens and completionTokens are tokens' two series, resolved
	// once rather than looked up by label on every request.
	promptTokens, completionTokens prometheus.Counter
	turns                          *prometheus.CounterVec // type, finish
	cancelled                      prometheus.Counter
	forcedFailed                   prometheus.Counter
}

func newMetrics(reg *prometheus.Registry, st store.Store) *metrics {
	m := &metrics{
		registry: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "clawrl_http_requests_total", Help: "HTTP requests by route and status code.",
		}, []string{"route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "clawrl_http_request_duration_seconds", Help: "Time from request to last byte, by route and streaming.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120},
		}, []string{"route", "stream"}),
		ttft: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "clawrl_time_to_first_token_seconds", Help: "Time from request to the first generated token.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}),
		inflight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "clawrl_inflight_requests", Help: "Chat completion requests being served.",
		}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "clawrl_tokens_total", Help: "Prompt and completion tokens of served turns.",
		}, []string{"kind"}),
		turns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "clawrl_turns_served_total", Help: "Turns served and recorded, by type and finish reason.",
		}, []string{"type", "finish"}),
		cancelled: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "clawrl_generations_cancelled_total", Help: "Generations cancelled because the client went away (not recorded).",
		}),
		forcedFailed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "clawrl_forced_tool_calls_failed_total", Help: "Generations under tool_choice required or a named function where the model broke the call (answered 500 tool_call_failed, not recorded).",
		}),
	}
	m.promptTokens, m.completionTokens = m.tokens.WithLabelValues("prompt"), m.tokens.WithLabelValues("completion")
	reg.MustRegister(m.requests, m.latency, m.ttft, m.inflight, m.tokens, m.turns, m.cancelled, m.forcedFailed,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		&storeCollector{store: st})
	return m
}

// storeCollector reports the store's counts at scrape time, so the figures
// include turns other loops (judge, trainer) moved.
type storeCollector struct{ store store.Store }

var (
	turnsByStateDesc = prometheus.NewDesc("clawrl_turns", "Recorded turns by state.", []string{"state"}, nil)
	turnsByTypeDesc  = prometheus.NewDesc("clawrl_turns_by_type", "Recorded turns by type.", []string{"type"}, nil)
	sessionsDesc     = prometheus.NewDesc("clawrl_sessions", "Recorded sessions.", nil, nil)
	policyDesc       = prometheus.NewDesc("clawrl_store_policy_version", "Newest policy version the store knows.", nil, nil)
)

func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- turnsByStateDesc
	ch <- turnsByTypeDesc
	ch <- sessionsDesc
	ch <- policyDesc
}

func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := c.store.Stats(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(turnsByStateDesc, err)
		return
	}
	for _, s := range []store.TurnState{store.Generated, store.Observed, store.Expired, store.Judged, store.Ready, store.Trained, store.Dropped} {
		ch <- prometheus.MustNewConstMetric(turnsByStateDesc, prometheus.GaugeValue, float64(st.TurnsByState[s]), string(s))
	}
	for _, t := range []store.TurnType{store.Main, store.Side} {
		ch <- prometheus.MustNewConstMetric(turnsByTypeDesc, prometheus.GaugeValue, float64(st.TurnsByType[t]), string(t))
	}
	ch <- prometheus.MustNewConstMetric(sessionsDesc, prometheus.GaugeValue, float64(st.Sessions))
	ch <- prometheus.MustNewConstMetric(policyDesc, prometheus.GaugeValue, float64(st.PolicyVersion))
}
