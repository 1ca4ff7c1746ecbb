package loop

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"

	"github.com/clawrl/clawrl/judge"
)

// RemoteTeacherSettings are the flags of an external teacher: another
// model behind an OpenAI-compatible server writes the hint-conditioned
// answers of --opd-response teacher|both (judge.RemoteTeacher).
type RemoteTeacherSettings struct {
	URL, Model, Key string
	Timeout         time.Duration
}

func (s *RemoteTeacherSettings) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&s.URL, "teacher-url", "", "OpenAI-compatible endpoint (e.g. http://127.0.0.1:31000/v1) of a model that writes the teacher's answers for --opd-response teacher|both; the policy tokenizes and scores them, and writes itself when the endpoint fails (default: the policy writes)")
	fs.StringVar(&s.Model, "teacher-model", "", "model name at --teacher-url")
	fs.StringVar(&s.Key, "teacher-key", "", "API key for --teacher-url (default $CLAWRL_TEACHER_KEY)")
	fs.DurationVar(&s.Timeout, "teacher-timeout", 2*time.Minute, "timeout of one --teacher-url answer (then the policy's own teacher writes it)")
}

// build returns the remote teacher, or nil when --teacher-url is not set.
// It needs a teacher-written response to be of use.
func (s *RemoteTeacherSettings) build(opdResponse string, log *slog.Logger) (*judge.RemoteTeacher, error) {
	if s.URL == "" {
		return nil, nil
	}
	u, err := url.Parse(s.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--teacher-url %q: want http(s)://host:port/v1", s.URL)
	}
	if s.Model == "" {
		return nil, errors.New("--teacher-url needs --teacher-model")
	}
	if opdResponse != "teacher" && opdResponse != "both" {
		return nil, fmt.Errorf("--teacher-url writes answers: it needs --opd-response teacher or both, not %q", opdResponse)
	}
	key := s.Key
	if key == "" {
		key = os.Getenv("CLAWRL_TEACHER_KEY") // keeps the key off the command line
	}
	return &judge.RemoteTeacher{URL: s.URL, Model: s.Model, Key: key, Timeout: s.Timeout, Client: &http.Client{}, Log: log}, nil
}

var remoteTeacherDesc = desc("remote_teacher_answers_total",
	"Teacher answers asked of --teacher-url since start, by result: written (used) or fallback (the policy's own teacher wrote it instead).", "result")

// TeacherCollector exposes the remote teacher's counters and the best-of-N
// selections (teacher_samples.go) on /metrics (nothing when the loop has
// neither).
func (r *Runner) TeacherCollector() prometheus.Collector { return teacherCollector{r} }

type teacherCollector struct{ r *Runner }

func (c teacherCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- remoteTeacherDesc
	ch <- teacherSelectDesc
	ch <- teacherRefusedDesc
	ch <- teacherLoopsCutDesc
	ch <- teacherFitDesc
	ch <- teacherIrrelevantDesc
	ch <- teacherQuotedDesc
	ch <- teacherQuotedRetryDesc
	ch <- teacherMixedDesc
}

func (c teacherCollector) Collect(ch chan<- prometheus.Metric) {
	c.r.collectSelections(ch)
	if c.r.teacher == nil || c.r.teacher.Remote == nil {
		return
	}
	st := c.r.teacher.Remote.Stats()
	ch <- prometheus.MustNewConstMetric(remoteTeacherDesc, prometheus.CounterValue, float64(st.Written), "written")
	ch <- prometheus.MustNewConstMetric(remoteTeacherDesc, prometheus.CounterValue, float64(st.FellBack), "fallback")
}
