package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/clawrl/clawrl/store"
)

// Asking a running server (`clawrl status --addr`): its GET /metrics carries
// the store's counts (the gateway's collector) and the learning loop's
// (clawrl_loop_*), so status can show them without the data directory —
// for a server on another machine, or one whose --data you do not know.

// promSample is one line of the Prometheus text format.
type promSample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// parsePromText reads the Prometheus text exposition format: comments and
// blank lines skipped, `name{label="value",…} value [timestamp]` parsed.
func parsePromText(r io.Reader) ([]promSample, error) {
	var out []promSample
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		s, err := parsePromLine(line)
		if err != nil {
			return nil, fmt.Errorf("metrics line %d %q: %w", n, line, err)
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

func parsePromLine(line string) (promSample, error) {
	s := promSample{Labels: map[string]string{}}
	i := strings.IndexAny(line, "{ \t")
	if i <= 0 {
		return s, fmt.Errorf("no value")
	}
	s.Name, line = line[:i], line[i:]
	if line[0] == '{' {
		rest, err := parsePromLabels(line[1:], s.Labels)
		if err != nil {
			return s, err
		}
		line = rest
	}
	fields := strings.Fields(line)
	if len(fields) == 0 || len(fields) > 2 {
		return s, fmt.Errorf("want a value and an optional timestamp")
	}
	v, err := parsePromValue(fields[0])
	if err != nil {
		return s, err
	}
	s.Value = v
	return s, nil
}

// parsePromLabels reads `a="x",b="y"}` into labels and returns what follows
// the closing brace. Values may hold \\, \" and \n escapes.
func parsePromLabels(in string, labels map[string]string) (string, error) {
	for {
		in = strings.TrimLeft(in, " \t")
		if strings.HasPrefix(in, "}") {
			return in[1:], nil
		}
		eq := strings.IndexByte(in, '=')
		if eq <= 0 || len(in) < eq+2 || in[eq+1] != '"' {
			return "", fmt.Errorf("bad label")
		}
		name := strings.TrimSpace(in[:eq])
		in = in[eq+2:]
		var val strings.Builder
		closed := false
		for i := 0; i < len(in); i++ {
			c := in[i]
			if c == '\\' && i+1 < len(in) {
				i++
				switch in[i] {
				case 'n':
					val.WriteByte('\n')
				default:
					val.WriteByte(in[i])
				}
				continue
			}
			if c == '"' {
				in, closed = in[i+1:], true
				break
			}
			val.WriteByte(c)
		}
		if !closed {
			return "", fmt.Errorf("label %s: unterminated value", name)
		}
		labels[name] = val.String()
		in = strings.TrimPrefix(strings.TrimLeft(in, " \t"), ",")
	}
}

func parsePromValue(s string) (float64, error) {
	switch s {
	case "+Inf":
		return math.Inf(1), nil
	case "-Inf":
		return math.Inf(-1), nil
	case "NaN":
		return math.NaN(), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("value %q: %w", s, err)
	}
	return v, nil
}

// statusFromMetrics fills a status report from a server's metrics.
func statusFromMetrics(addr string, samples []promSample) statusReport {
	rep := statusReport{
		Server:       addr,
		TurnsByState: map[store.TurnState]int{},
		TurnsByType:  map[store.TurnType]int{},
		Loop:         map[string]any{},
	}
	for _, s := range samples {
		n := int(s.Value)
		switch s.Name {
		case "clawrl_sessions":
			rep.Sessions = n
		case "clawrl_turns":
			if n != 0 { // the server lists every state; the store view only those it holds
				rep.TurnsByState[store.TurnState(s.Labels["state"])] += n
			}
			rep.Turns += n
			if s.Labels["state"] == string(store.Observed) {
				rep.AwaitingJudge += n // the server counts all types; side turns are rarely observed
			}
		case "clawrl_turns_by_type":
			if n != 0 {
				rep.TurnsByType[store.TurnType(s.Labels["type"])] += n
			}
		case "clawrl_store_policy_version":
			rep.PolicyVersion = max(rep.PolicyVersion, int64(s.Value))
		case "clawrl_loop_samples_ready":
			rep.AwaitingTrainer = n
		}
		if name, ok := strings.CutPrefix(s.Name, "clawrl_loop_"); ok {
			rep.Loop[name+promLabelSuffix(s.Labels)] = s.Value
		}
	}
	if len(rep.Loop) == 0 {
		rep.Loop = nil
	}
	return rep
}

func promLabelSuffix(labels map[string]string) string {
	if len(labels) == 0 {
		return ""
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + labels[k]
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// fetchRemoteStatus asks the server at addr (host:port or a URL) for its
// metrics.
func fetchRemoteStatus(ctx context.Context, addr, apiKey string) (statusReport, error) {
	base := addr
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	url := strings.TrimRight(base, "/") + "/metrics"
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return statusReport{}, fmt.Errorf("status --addr %s: %w", addr, err)
	}
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return statusReport{}, fmt.Errorf("status --addr %s: %w", addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return statusReport{}, fmt.Errorf("status --addr %s: GET %s: %s (pass --api-key if the server needs one)", addr, url, resp.Status)
	}
	samples, err := parsePromText(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return statusReport{}, fmt.Errorf("status --addr %s: %w", addr, err)
	}
	return statusFromMetrics(addr, samples), nil
}
