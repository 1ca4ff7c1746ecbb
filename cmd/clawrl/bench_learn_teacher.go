package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/clawrl/clawrl/bench"
)

// teacherURLMark is what an arm's or --serve-arg's flag value names the
// teacher server started by --teacher-serve with, e.g.
// --arms 'ext:combine:--opd-response=teacher:--teacher-url={teacher}:--teacher-model=q'.
const teacherURLMark = "{teacher}"

// startBenchTeacher starts the --teacher-serve model once for the whole
// run (`clawrl serve --method off`, its log beside the others) and puts
// its OpenAI base URL where the arms and --serve-arg flags say
// teacherURLMark. It returns the function that stops it (a no-op when no
// teacher server was asked for).
func startBenchTeacher(ctx context.Context, o *benchLearnOptions, arms []bench.Arm, log *slog.Logger) (func(), error) {
	uses := strings.Contains(strings.Join(o.serveArgs, " "), teacherURLMark)
	for _, a := range arms {
		uses = uses || strings.Contains(strings.Join(a.Args, " "), teacherURLMark)
	}
	switch {
	case o.teacherServe == "" && uses:
		return nil, fmt.Errorf("%s in a flag needs --teacher-serve MODEL", teacherURLMark)
	case o.teacherServe == "":
		return func() {}, nil
	case !uses:
		return nil, fmt.Errorf("--teacher-serve %s: no arm or --serve-arg names it (--teacher-url=%s)", o.teacherServe, teacherURLMark)
	}
	if err := pullKnownModel(ctx, "--teacher-serve", o.teacherServe, log); err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	to := *o
	to.model, to.serveArgs, to.feedback = o.teacherServe, nil, bench.FeedbackText
	cl, stop, err := serverLauncher(exe, to, log)(ctx, bench.Arm{Name: "teacher", Method: "off"}, &bench.Persona{Name: "server"}, 0)
	if err != nil {
		return nil, fmt.Errorf("--teacher-serve %s: %w", o.teacherServe, err)
	}
	url := cl.BaseURL + "/v1"
	log.Info("teacher server started", "model", o.teacherServe, "url", url)
	for i := range o.serveArgs {
		o.serveArgs[i] = strings.ReplaceAll(o.serveArgs[i], teacherURLMark, url)
	}
	for i := range arms {
		for j := range arms[i].Args {
			arms[i].Args[j] = strings.ReplaceAll(arms[i].Args[j], teacherURLMark, url)
		}
	}
	return func() {
		if err := stop(); err != nil {
			log.Warn("teacher server", "err", err)
		}
	}, nil
}
