package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func TestParsePromText(t *testing.T) {
	text := `# HELP clawrl_turns Recorded turns by state.
# TYPE clawrl_turns gauge
clawrl_turns{state="observed"} 3
clawrl_turns{state="generated"} 2

clawrl_sessions 4
clawrl_loop_last_step{metric="loss"} -0.25 1700000000000
clawrl_weird{a="x,y",b="q\"uote\\d\n"} +Inf
`
	got, err := parsePromText(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	want := []promSample{
		{"clawrl_turns", map[string]string{"state": "observed"}, 3},
		{"clawrl_turns", map[string]string{"state": "generated"}, 2},
		{"clawrl_sessions", map[string]string{}, 4},
		{"clawrl_loop_last_step", map[string]string{"metric": "loss"}, -0.25},
		{"clawrl_weird", map[string]string{"a": "x,y", "b": "q\"uote\\d\n"}, math.Inf(1)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parsePromText =\n%+v\nwant\n%+v", got, want)
	}
	for _, bad := range []string{"clawrl_x", `clawrl_x{a="b} 1`, `clawrl_x{a=b} 1`, "clawrl_x one", "clawrl_x 1 2 3"} {
		if _, err := parsePromText(strings.NewReader(bad)); err == nil {
			t.Errorf("parsePromText(%q) succeeded", bad)
		}
	}
	rep := statusFromMetrics("h:1", got)
	if rep.Sessions != 4 || rep.Turns != 5 || rep.AwaitingJudge != 3 || rep.Loop["last_step{metric=loss}"] != -0.25 {
		t.Errorf("statusFromMetrics = %+v", rep)
	}
}

// FuzzParsePromText: a server's (or anything's) /metrics body never panics
// the parser, and what it accepts names every sample.
func FuzzParsePromText(f *testing.F) {
	f.Add("clawrl_turns{state=\"observed\"} 3\n# c\nclawrl_sessions 4 17\n")
	f.Add(`x{a="\"",b="\\"} NaN`)
	f.Add("x{")
	f.Fuzz(func(t *testing.T, s string) {
		samples, err := parsePromText(strings.NewReader(s))
		if err != nil {
			return
		}
		for _, smp := range samples {
			if smp.Name == "" || strings.ContainsAny(smp.Name, "{ \t") {
				t.Fatalf("sample with name %q from %q", smp.Name, s)
			}
		}
		statusFromMetrics("x", samples)
	})
}

// TestStatusAddrMatchesData asks a running server (the real binary on the
// scripted engine) for its status over HTTP and reads the same store from
// its data directory next to it: both views agree.
func TestStatusAddrMatchesData(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs clawrl serve")
	}
	exe := buildClawrl(t)
	data := t.TempDir()
	p := startServe(t, exe, data)
	for i := range 3 {
		body := map[string]any{"messages": []any{map[string]any{"role": "user", "content": fmt.Sprintf("hello %d", i)}}}
		if _, err := completeOnce(context.Background(), http.DefaultClient, p.addr, body, fmt.Sprintf("status-%d", i%2)); err != nil {
			t.Fatal(err)
		}
	}
	decode := func(args ...string) statusReport {
		t.Helper()
		out, err := runCLI(t, append([]string{"status", "--json"}, args...)...)
		if err != nil {
			t.Fatalf("status %v: %v", args, err)
		}
		var rep statusReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("status %v: %v\n%s", args, err, out)
		}
		return rep
	}
	remote, local := decode("--addr", p.addr), decode("--data", data)
	if remote.Server != p.addr || local.Database == "" {
		t.Errorf("remote names %q, local %q", remote.Server, local.Database)
	}
	if remote.Sessions != 2 || remote.Turns != 3 || remote.Sessions != local.Sessions || remote.Turns != local.Turns ||
		!reflect.DeepEqual(remote.TurnsByType, local.TurnsByType) || remote.PolicyVersion != local.PolicyVersion {
		t.Errorf("status --addr = %+v\nstatus --data = %+v", remote, local)
	}
	for state, n := range local.TurnsByState {
		if remote.TurnsByState[state] != n {
			t.Errorf("turns %s: --addr %d, --data %d", state, remote.TurnsByState[state], n)
		}
	}
	table, err := runCLI(t, "status", "--addr", p.addr)
	if err != nil || !strings.Contains(table, "server") || !strings.Contains(table, p.addr) {
		t.Errorf("status --addr table: %v\n%s", err, table)
	}
	if _, err := runCLI(t, "status", "--addr", "127.0.0.1:1"); err == nil {
		t.Error("status --addr of a closed port succeeded")
	}
}
