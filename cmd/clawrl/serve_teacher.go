package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/clawrl/clawrl/modelref"
	"github.com/spf13/pflag"
)

// teacherServeModel is the served model name serve gives the teacher
// server it starts (--teacher-serve), which its requests name.
const teacherServeModel = "clawrl-teacher"

// teacherServeAuto is --teacher-serve's default: the demo model's teacher
// when it is in the model cache (autoTeacher).
const teacherServeAuto = "auto"

// autoTeacherModel is the model --teacher-serve auto starts: the largest
// known model, the one the demo model was measured learning from.
const autoTeacherModel = "qwen2.5-coder-1.5b"

// teacherServeHelp is serve's --teacher-serve flag help.
const teacherServeHelp = "start a second clawrl (serve --method off) of this model (what --model takes: a known name such as qwen2.5-coder-1.5b is fetched first) on a free loopback port, its store and log under DATA/teacher, as this server's --teacher-url: the larger model writes the hint-conditioned answers OPD distils, which a small policy cannot write itself; it stops with this server, and --distill-focus becomes 1 unless given (BENCHMARKS.md, \"The demo model on the issue's protocol\"). auto: " + autoTeacherModel + " when the policy is the demo model (no --model, or --model " + modelref.DefaultModel + "), the method trains on hints, no --teacher-url is given and " + autoTeacherModel + " is already in the model cache (clawrl model pull " + autoTeacherModel + "); else none. --teacher-serve= : none"

// autoTeacher resolves --teacher-serve auto for o: the model to start
// (autoTeacherModel, or "" for none) and why, for the log ("" where
// nothing is worth saying: a server that is not the demo model's, or one
// that trains on no hints). The demo model cannot write what most users
// ask for even with the hint in context, so as its own teacher it learns
// little beyond brevity; taught by the 1.5B it learned 48 of 80 held-out
// answers against 19 (BENCHMARKS.md, "The demo model on the issue's
// protocol"). The teacher is started only from the cache, so a first start
// fetches nothing beyond the demo model.
func autoTeacher(o serveOptions) (model, why string) {
	named := o
	named.teacherServe = autoTeacherModel
	switch {
	case checkTeacherServe(named) != nil: // a setup a named teacher is refused in
		return "", ""
	case o.model != "" && o.model != modelref.DefaultModel, o.engineURL != "", os.Getenv(testEngineEnv) == "scripted":
		return "", ""
	}
	if _, ok, err := modelref.KnownModels[autoTeacherModel].Cached(); err != nil || !ok {
		return "", "the demo model is its own OPD teacher and learns little beyond brevity that way; `clawrl model pull " + autoTeacherModel +
			"` (1.1 GB, once) and a restart let the larger model teach it (--teacher-serve; BENCHMARKS.md, \"The demo model on the issue's protocol\")"
	}
	return autoTeacherModel, autoTeacherModel + " is in the model cache: it teaches the demo model (--teacher-serve= to turn off)"
}

// teacherServeDefaults resolves --teacher-serve auto (autoTeacher) and
// sets what --teacher-serve changes in serve's defaults where fs was not
// given it: --distill-focus 1, measured with a teacher larger than the
// policy, whose style the policy does not share (the words that do what
// the feedback asks then weigh more than the rest of the teacher's text;
// BENCHMARKS.md, "The demo model on the protocol"). It returns
// autoTeacher's why, for the log.
func teacherServeDefaults(fs *pflag.FlagSet, o *serveOptions) (why string) {
	if o.teacherServe == teacherServeAuto {
		o.teacherServe, why = autoTeacher(*o)
		o.teacherAuto, o.focusAlone = o.teacherServe != "", o.learning.DistillFocus
	}
	if o.teacherServe != "" && !fs.Changed("distill-focus") {
		o.learning.DistillFocus = 1
	}
	return why
}

// checkTeacherServe says why --teacher-serve cannot apply to o, if it
// cannot: its answers are OPD's teacher-written responses, which only a
// learning server of combine or opd trains.
func checkTeacherServe(o serveOptions) error {
	switch {
	case o.teacherServe == "":
		return nil
	case o.learning.RemoteTeacher.URL != "":
		return errors.New("--teacher-serve and --teacher-url both name the teacher: give one")
	case o.noLearn:
		return errors.New("--teacher-serve writes the loop's teacher answers, and --no-learn runs no loop")
	case o.method != "combine" && o.method != "opd":
		return fmt.Errorf("--teacher-serve writes OPD's teacher answers: it needs --method combine or opd, not %s", o.method)
	}
	return nil
}

// startServeTeacher starts the --teacher-serve model and points o's
// learning loop at it (--teacher-url, --teacher-model), once
// checkTeacherServe has passed. It returns the function that stops it (a
// no-op without --teacher-serve).
func startServeTeacher(ctx context.Context, o *serveOptions, log *slog.Logger) (func(), error) {
	if o.teacherWhy != "" {
		log.Info("teacher: " + o.teacherWhy)
	}
	if o.teacherServe == "" {
		return func() {}, nil
	}
	stop, err := startTeacherServer(ctx, o, log)
	if err != nil && o.teacherAuto {
		log.Warn("teacher server did not start: the policy is its own teacher", "model", o.teacherServe, "err", err)
		o.teacherServe, o.learning.DistillFocus = "", o.focusAlone
		return func() {}, nil
	}
	return stop, err
}

// startTeacherServer is startServeTeacher's start of o.teacherServe.
func startTeacherServer(ctx context.Context, o *serveOptions, log *slog.Logger) (func(), error) {
	if err := pullKnownModel(ctx, "--teacher-serve", o.teacherServe, log); err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	data := filepath.Join(o.data, "teacher")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, fmt.Errorf("--teacher-serve: %w", err)
	}
	addr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	// The teacher's model keeps its weights its own way: --weights names
	// the policy's.
	args := []string{"serve", "--model", o.teacherServe, "--method", "off", "--data", data, "--addr", addr,
		"--log-level", o.logLevel}
	cl, stop, err := startChildServer(ctx, exe, "teacher", addr, filepath.Join(data, "serve.log"), args, teacherEnv(os.Environ(), o.apiKey), log)
	if err != nil {
		return nil, fmt.Errorf("--teacher-serve %s: %w", o.teacherServe, err)
	}
	o.learning.RemoteTeacher.URL = cl.BaseURL + "/v1"
	o.learning.RemoteTeacher.Key = o.apiKey
	if o.learning.RemoteTeacher.Model == "" {
		o.learning.RemoteTeacher.Model = teacherServeModel
	}
	log.Info("teacher server started", "model", o.teacherServe, "url", o.learning.RemoteTeacher.URL, "log", filepath.Join(data, "serve.log"))
	return func() {
		if err := stop(); err != nil {
			log.Warn("teacher server", "err", err)
		}
	}, nil
}

// teacherEnv is the teacher server's environment: environ with
// CLAWRL_API_KEY set to key, the key this server requires (by --api-key
// or CLAWRL_API_KEY; the loop sends it to the teacher), so the teacher is
// as closed as this server is and the key is never on its command line;
// or unset where this server requires none.
func teacherEnv(environ []string, key string) []string {
	env := make([]string, 0, len(environ)+1)
	for _, kv := range environ {
		if !strings.HasPrefix(kv, "CLAWRL_API_KEY=") {
			env = append(env, kv)
		}
	}
	if key != "" {
		env = append(env, "CLAWRL_API_KEY="+key)
	}
	return env
}
