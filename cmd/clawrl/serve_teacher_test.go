package main

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// --teacher-serve turns --distill-focus on unless it is given.
func TestTeacherServeDefaults(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want float64
	}{
		{nil, 0},
		{[]string{"--teacher-serve", "qwen2.5-coder-1.5b"}, 1},
		{[]string{"--teacher-serve", "qwen2.5-coder-1.5b", "--distill-focus", "0"}, 0},
		{[]string{"--teacher-serve", "qwen2.5-coder-1.5b", "--distill-focus", "0.5"}, 0.5},
		{[]string{"--distill-focus", "2"}, 2},
	} {
		cmd := newServeCmd()
		if err := cmd.ParseFlags(tt.args); err != nil {
			t.Fatal(err)
		}
		// The options newServeCmd's RunE reads are its flags' targets.
		var o serveOptions
		o.teacherServe, _ = cmd.Flags().GetString("teacher-serve")
		o.learning.DistillFocus, _ = cmd.Flags().GetFloat64("distill-focus")
		teacherServeDefaults(cmd.Flags(), &o)
		if o.learning.DistillFocus != tt.want {
			t.Errorf("%q: --distill-focus %g, want %g", tt.args, o.learning.DistillFocus, tt.want)
		}
	}
}

// TestServeTeacherServe runs `clawrl serve --teacher-serve` behind an API
// key: the second server starts under DATA/teacher, behind the same key, a
// 👎 with written feedback has it write the teacher's answer (the remote
// teacher's "written" counter on /metrics: the loop sends it the key), and
// when the first server is killed outright (kill -9) the teacher server
// goes with it.
func TestServeTeacherServe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the clawrl binary on a tiny model")
	}
	exe := buildClawrl(t)
	data := t.TempDir()
	t.Setenv("CLAWRL_API_KEY", "k-teacher-test")
	auth := map[string]string{"Authorization": "Bearer k-teacher-test"}
	p := startServeModel(t, exe, data, "--teacher-serve", randomTinySpec, "--batch-size", "2", "--judge-max-tokens", "16",
		"--max-tokens", "8", "--lora-rank", "4", "--teacher-max-tokens", "8")
	base := "http://" + p.addr
	var teacherPID int
	for _, line := range strings.Split(p.logText(), "\n") {
		if !strings.Contains(line, "msg=\"server started\" run=teacher") {
			continue
		}
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, "pid="); ok {
				teacherPID, _ = strconv.Atoi(v)
			}
		}
	}
	if teacherPID == 0 {
		t.Fatalf("no teacher server started:\n%s", p.logText())
	}
	if _, err := os.Stat(data + "/teacher/clawrl.db"); err != nil {
		t.Fatalf("the teacher server's store: %v", err)
	}

	out := postJSON(t, base+"/v1/chat/completions", map[string]any{"messages": []any{map[string]any{"role": "user", "content": "How do I boil an egg?"}}},
		map[string]string{"X-Session-Id": "s1", "Authorization": auth["Authorization"]})
	id := between(string(out), `"id":"`, `"`)
	postJSON(t, base+"/v1/feedback", map[string]any{"id": id, "rating": -1, "text": "Too long. Answer in one short sentence."}, auth)
	written := `clawrl_loop_remote_teacher_answers_total{result="written"} `
	deadline := time.Now().Add(2 * time.Minute)
	for {
		body := getMetrics(t, base, auth)
		if n := between(body, written, "\n"); n != "" && n != "0" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the teacher server wrote no answer in 2 minutes:\n%s\n%s", body, p.logText())
		}
		time.Sleep(200 * time.Millisecond)
	}

	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-p.done
	deadline = time.Now().Add(time.Minute)
	for alive(teacherPID) {
		if time.Now().After(deadline) {
			syscall.Kill(teacherPID, syscall.SIGKILL)
			t.Fatalf("teacher server %d still running a minute after its parent was killed", teacherPID)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestTeacherEnv(t *testing.T) {
	environ := []string{"PATH=/bin", "CLAWRL_API_KEY=outer", "HOME=/h"}
	if got := strings.Join(teacherEnv(environ, "k"), " "); got != "PATH=/bin HOME=/h CLAWRL_API_KEY=k" {
		t.Errorf("with a key: %s", got)
	}
	if got := strings.Join(teacherEnv(environ, ""), " "); got != "PATH=/bin HOME=/h" {
		t.Errorf("without one: %s", got)
	}
}

// between is the text of s after the first from and before the next to,
// or "" when s lacks them.
func between(s, from, to string) string {
	_, rest, ok := strings.Cut(s, from)
	if !ok {
		return ""
	}
	v, _, ok := strings.Cut(rest, to)
	if !ok {
		return ""
	}
	return v
}
