package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawrl/clawrl/modelref"
	"github.com/clawrl/clawrl/modelref/demotest"
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
		t.Setenv("XDG_CACHE_HOME", t.TempDir()) // no teacher for auto to find
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

// fakeCached puts a sparse file of known model name's pinned size (all
// zeros: no model) where Known.Cached looks, in the model cache of this
// test's environment, and returns its path.
func fakeCached(t *testing.T, name string) string {
	t.Helper()
	k := modelref.KnownModels[name]
	path, _, err := k.Cached()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, k.FileSize); err != nil {
		t.Fatal(err)
	}
	return path
}

// fakeCachedTeacher puts a fake autoTeacherModel (fakeCached) in a model
// cache under a new XDG_CACHE_HOME and returns the cache folder.
func fakeCachedTeacher(t *testing.T) string {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	return filepath.Dir(fakeCached(t, autoTeacherModel))
}

// --teacher-serve auto (the default) starts the 1.5B as the teacher only
// for the demo model trained on hints with no other teacher, and only
// from the model cache: a server that would have to fetch it says how
// instead.
func TestAutoTeacher(t *testing.T) {
	demo := serveOptions{method: "combine"}
	for _, tt := range []struct {
		name   string
		cached bool
		edit   func(*serveOptions)
		want   string
		why    string
	}{
		{"demo model, cached", true, func(*serveOptions) {}, autoTeacherModel, "teaches the demo model"},
		{"demo model by name, opd", true, func(o *serveOptions) { o.model, o.method = modelref.DefaultModel, "opd" }, autoTeacherModel, "teaches"},
		{"demo model, not cached", false, func(*serveOptions) {}, "", "clawrl model pull " + autoTeacherModel},
		{"another model", true, func(o *serveOptions) { o.model = randomTinySpec }, "", ""},
		{"binary RL", true, func(o *serveOptions) { o.method = "rl" }, "", ""},
		{"no training", true, func(o *serveOptions) { o.method = "off" }, "", ""},
		{"gateway", true, func(o *serveOptions) { o.noLearn = true }, "", ""},
		{"teacher URL", true, func(o *serveOptions) { o.learning.RemoteTeacher.URL = "http://127.0.0.1:1/v1" }, "", ""},
		{"remote engine", true, func(o *serveOptions) { o.engineURL = "vllm:http://127.0.0.1:1" }, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.cached {
				fakeCachedTeacher(t)
			} else {
				t.Setenv("XDG_CACHE_HOME", t.TempDir())
			}
			o := demo
			tt.edit(&o)
			model, why := autoTeacher(o)
			if model != tt.want || !strings.Contains(why, tt.why) || (tt.why == "") != (why == "") {
				t.Errorf("autoTeacher = %q, %q; want %q and a reason with %q", model, why, tt.want, tt.why)
			}
			// Through the flags: auto is the default, and the teacher it
			// picks brings --distill-focus 1 as a named one does.
			cmd := newServeCmd()
			if err := cmd.ParseFlags(nil); err != nil {
				t.Fatal(err)
			}
			o.teacherServe, _ = cmd.Flags().GetString("teacher-serve")
			teacherServeDefaults(cmd.Flags(), &o)
			if o.teacherServe != tt.want || o.teacherAuto != (tt.want != "") || (o.learning.DistillFocus == 1) != (tt.want != "") {
				t.Errorf("defaults: --teacher-serve %q (auto %v), --distill-focus %g; want %q", o.teacherServe, o.teacherAuto, o.learning.DistillFocus, tt.want)
			}
		})
	}
}

// A teacher that --teacher-serve auto picked but that does not start (here
// a cached file of the right size that is no model) is done without: serve
// warns and serves the demo model as its own teacher, where a teacher
// named by the flag would stop it.
func TestServeAutoTeacherFails(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the clawrl binary on the demo model")
	}
	demo := demotest.GGUF(t)
	dir := fakeCachedTeacher(t)
	if err := os.Symlink(demo, filepath.Join(dir, modelref.KnownModels[modelref.DefaultModel].File)); err != nil {
		t.Fatal(err)
	}
	exe := buildClawrl(t)
	p := startServeWith(t, exe, t.TempDir(), "", 2*time.Minute)
	log := p.logText()
	if !strings.Contains(log, "teacher server did not start") || !strings.Contains(log, "model="+autoTeacherModel) {
		t.Fatalf("serve started without the auto teacher but did not say so:\n%s", log)
	}
	resp := postJSON(t, "http://"+p.addr+"/v1/chat/completions", map[string]any{"max_tokens": 4,
		"messages": []any{map[string]any{"role": "user", "content": "What is the capital of France?"}}}, nil)
	if !strings.Contains(string(resp), `"choices"`) {
		t.Fatalf("no answer: %s", resp)
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
