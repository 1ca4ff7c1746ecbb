package loop

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/scripted"
	"github.com/clawrl/clawrl/judge"
	"github.com/clawrl/clawrl/model"
	"github.com/clawrl/clawrl/rl"
	"github.com/clawrl/clawrl/safetensors"
	"github.com/clawrl/clawrl/store"
)

func TestSettingsBuild(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	defer st.Close()
	eng := scripted.New(scripted.Options{})
	modelDir := filepath.Join(dir, "model")
	cfg, err := model.NewConfig(model.Family("qwen3"), model.SizeTiny)
	if err != nil {
		t.Fatal(err)
	}
	if err := model.WriteRandom(modelDir, cfg, 1, safetensors.F32); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		model   string
		wantErr string
		check   func(t *testing.T, r *Runner)
	}{
		{name: "defaults", check: func(t *testing.T, r *Runner) {
			if r.cfg.Method != rl.MethodCombine || r.judge.Config().EvalVotes != 1 || r.teacher.Adapter != engine.AdapterCurrent || r.scheduler != nil ||
				!r.cfg.TeacherWrites || r.cfg.TeacherAlsoWrites {
				t.Errorf("defaults: %+v votes %d teacher %q", r.cfg, r.judge.Config().EvalVotes, r.teacher.Adapter)
			}
		}},
		{name: "rl votes three", args: []string{"--method", "rl"}, check: func(t *testing.T, r *Runner) {
			if r.judge.Config().EvalVotes != 3 || r.teacher != nil {
				t.Errorf("rl: votes %d teacher %v", r.judge.Config().EvalVotes, r.teacher)
			}
		}},
		{name: "http judge, base teacher, feedback votes", args: []string{"--judge-url", "http://127.0.0.1:1/v1", "--judge-model", "j", "--teacher", "base", "--feedback", "vote"},
			check: func(t *testing.T, r *Runner) {
				if r.judge.Config().Feedback != judge.FeedbackVotes || r.teacher.Adapter != engine.AdapterBase {
					t.Errorf("judge %+v teacher %q", r.judge.Config(), r.teacher.Adapter)
				}
			}},
		{name: "written hints rewritten", args: []string{"--written-hint", "rewrite"}, check: func(t *testing.T, r *Runner) {
			if c := r.judge.Config(); c.Written != judge.WrittenRewrite || c.HintTokens != 64 {
				t.Errorf("judge %+v", c)
			}
		}},
		{name: "written hints as-is by default", check: func(t *testing.T, r *Runner) {
			if c := r.judge.Config(); c.Written != judge.WrittenAsIs {
				t.Errorf("judge %+v", c)
			}
		}},
		{name: "teacher answers that say the quoted words", args: []string{"--opd-response", "teacher", "--teacher-samples", "4", "--teacher-select-quoted"}, check: func(t *testing.T, r *Runner) {
			if !r.cfg.TeacherSelectQuoted {
				t.Errorf("config %+v", r.cfg)
			}
		}},
		{name: "lone teacher answers written again for the quoted words", args: []string{"--opd-response", "teacher", "--teacher-quoted-retry", "4"}, check: func(t *testing.T, r *Runner) {
			if r.cfg.TeacherQuotedRetry != 4 || r.cfg.TeacherSamples != 1 {
				t.Errorf("config %+v", r.cfg)
			}
		}},
		{name: "quoted retry on by default", check: func(t *testing.T, r *Runner) {
			if r.cfg.TeacherQuotedRetry != DefaultQuotedRetry || r.cfg.TeacherSamples != 1 {
				t.Errorf("config %+v", r.cfg)
			}
		}},
		{name: "quoted retry's default steps aside for best of N", args: []string{"--opd-response", "teacher", "--teacher-samples", "4"}, check: func(t *testing.T, r *Runner) {
			if r.cfg.TeacherQuotedRetry != 0 || r.cfg.TeacherSamples != 4 {
				t.Errorf("config %+v", r.cfg)
			}
		}},
		{name: "quoted retry's default steps aside for the judge's choice", args: []string{"--opd-response", "teacher", "--teacher-select", "judge"}, check: func(t *testing.T, r *Runner) {
			if r.cfg.TeacherQuotedRetry != 0 {
				t.Errorf("config %+v", r.cfg)
			}
		}},
		{name: "quoted retry's default steps aside without teacher answers", args: []string{"--opd-response", "student"}, check: func(t *testing.T, r *Runner) {
			if r.cfg.TeacherQuotedRetry != 0 {
				t.Errorf("config %+v", r.cfg)
			}
		}},
		{name: "quoted retry off", args: []string{"--teacher-quoted-retry", "0"}, check: func(t *testing.T, r *Runner) {
			if r.cfg.TeacherQuotedRetry != 0 {
				t.Errorf("config %+v", r.cfg)
			}
		}},
		{name: "quoted retry of one answer", args: []string{"--opd-response", "teacher", "--teacher-quoted-retry", "1"}, wantErr: "≥ 2"},
		{name: "quoted retry beside best of N", args: []string{"--opd-response", "teacher", "--teacher-samples", "4", "--teacher-quoted-retry", "4"}, wantErr: "best of N already"},
		{name: "quoted retry by the judge", args: []string{"--opd-response", "teacher", "--teacher-select", "judge", "--teacher-quoted-retry", "4"}, wantErr: "needs --teacher-select gain"},
		{name: "quoted retry without teacher answers", args: []string{"--opd-response", "student", "--teacher-quoted-retry", "4"}, wantErr: "--opd-response teacher or both"},
		{name: "fit retry's default", check: func(t *testing.T, r *Runner) {
			if r.cfg.TeacherFitRetry != DefaultFitRetry || r.cfg.TeacherFitRetry < 2 || r.cfg.TeacherSamples != 1 || r.cfg.TeacherFitScope != FitScopeQuoted {
				t.Errorf("config %+v", r.cfg)
			}
		}},
		{name: "fit retry's default steps aside for best of N", args: []string{"--opd-response", "teacher", "--teacher-samples", "4"}, check: func(t *testing.T, r *Runner) {
			if r.cfg.TeacherFitRetry != 0 || r.cfg.TeacherSamples != 4 {
				t.Errorf("config %+v", r.cfg)
			}
		}},
		{name: "fit retry's default steps aside for the judge", args: []string{"--teacher-select", "judge"}, check: func(t *testing.T, r *Runner) {
			if r.cfg.TeacherFitRetry != 0 {
				t.Errorf("config %+v", r.cfg)
			}
		}},
		{name: "fit retry's default steps aside without teacher answers", args: []string{"--opd-response", "student"}, check: func(t *testing.T, r *Runner) {
			if r.cfg.TeacherFitRetry != 0 {
				t.Errorf("config %+v", r.cfg)
			}
		}},
		{name: "fit retry off", args: []string{"--teacher-fit-retry", "0"}, check: func(t *testing.T, r *Runner) {
			if r.cfg.TeacherFitRetry != 0 {
				t.Errorf("config %+v", r.cfg)
			}
		}},
		{name: "fit retry given", args: []string{"--teacher-fit-retry", "6"}, check: func(t *testing.T, r *Runner) {
			if r.cfg.TeacherFitRetry != 6 {
				t.Errorf("config %+v", r.cfg)
			}
		}},
		{name: "fit retry of any answer past the budget", args: []string{"--teacher-fit-retry-scope", "any"}, check: func(t *testing.T, r *Runner) {
			if r.cfg.TeacherFitScope != FitScopeAny {
				t.Errorf("config %+v", r.cfg)
			}
		}},
		{name: "fit retry's unknown scope", args: []string{"--teacher-fit-retry-scope", "all"}, wantErr: "want quoted or any"},
		{name: "fit retry of one answer", args: []string{"--teacher-fit-retry", "1"}, wantErr: "≥ 2"},
		{name: "fit retry beside best of N", args: []string{"--opd-response", "teacher", "--teacher-samples", "4", "--teacher-fit-retry", "4"}, wantErr: "best of N already"},
		{name: "fit retry by the judge", args: []string{"--teacher-select", "judge", "--teacher-fit-retry", "4"}, wantErr: "needs --teacher-select gain"},
		{name: "fit retry without teacher answers", args: []string{"--opd-response", "student", "--teacher-fit-retry", "4"}, wantErr: "--opd-response teacher or both"},
		{name: "bad written-hint mode", args: []string{"--written-hint", "summarise"}, wantErr: "as-is or rewrite"},
		{name: "native trainer from the model folder", args: []string{"--batch-size", "4", "--lora-rank", "4"}, model: modelDir,
			check: func(t *testing.T, r *Runner) {
				if r.scheduler == nil {
					t.Error("no train loop")
				}
			}},
		{name: "teacher concurrency's default", check: func(t *testing.T, r *Runner) {
			if r.cfg.TeacherConcurrency != DefaultTeacherConcurrency || r.cfg.JudgeConcurrency != 2 {
				t.Errorf("config %+v", r.cfg)
			}
		}},
		{name: "teacher concurrency", args: []string{"--teacher-concurrency", "3"}, check: func(t *testing.T, r *Runner) {
			if r.cfg.TeacherConcurrency != 3 {
				t.Errorf("--teacher-concurrency 3: %+v", r.cfg)
			}
		}},
		{name: "teacher concurrency below one", args: []string{"--teacher-concurrency", "-1"}, wantErr: "--teacher-concurrency -1: want ≥ 1"},
		{name: "teacher writes", args: []string{"--opd-response", "teacher", "--teacher-max-tokens", "32"}, check: func(t *testing.T, r *Runner) {
			if !r.cfg.TeacherWrites || r.cfg.TeacherTokens != 32 {
				t.Errorf("--opd-response teacher: %+v", r.cfg)
			}
		}},
		{name: "both responses", args: []string{"--opd-response", "both", "--ppo-epochs", "4"}, check: func(t *testing.T, r *Runner) {
			if r.cfg.TeacherWrites || !r.cfg.TeacherAlsoWrites {
				t.Errorf("--opd-response both: %+v", r.cfg)
			}
		}},
		{name: "revise placement", args: []string{"--hint-placement", "revise"}, check: func(t *testing.T, r *Runner) {
			if r.teacher.Placement != judge.HintAsRevision {
				t.Errorf("placement %q", r.teacher.Placement)
			}
		}},
		{name: "continue placement", args: []string{"--hint-placement", "continue"}, check: func(t *testing.T, r *Runner) {
			if r.teacher.Placement != judge.HintAsContinuation {
				t.Errorf("placement %q", r.teacher.Placement)
			}
		}},
		{name: "user-first placement", args: []string{"--hint-placement", "user-first"}, check: func(t *testing.T, r *Runner) {
			if r.teacher.Placement != judge.HintBeforeQuestion {
				t.Errorf("placement %q", r.teacher.Placement)
			}
		}},
		{name: "remote teacher cannot continue", args: []string{"--hint-placement", "continue", "--teacher-url", "http://127.0.0.1:1/v1", "--teacher-model", "m"},
			wantErr: "cannot continue"},
		{name: "mixed placement", args: []string{"--hint-placement", "mixed", "--opd-response", "teacher", "--teacher-samples", "2"}, check: func(t *testing.T, r *Runner) {
			if r.teacher.Placement != judge.HintMixed || r.cfg.TeacherSamples != 2 {
				t.Errorf("placement %q, %d answers", r.teacher.Placement, r.cfg.TeacherSamples)
			}
		}},
		{name: "mixed placement needs answers to choose among", args: []string{"--hint-placement", "mixed", "--opd-response", "teacher"}, wantErr: "--teacher-samples ≥ 2"},
		{name: "mixed placement needs the teacher to write", args: []string{"--hint-placement", "mixed", "--teacher-samples", "2", "--opd-response", "student"}, wantErr: "--opd-response teacher or both"},
		{name: "running baseline", args: []string{"--baseline", "running", "--baseline-window", "16", "--baseline-clip", "1"}, check: func(t *testing.T, r *Runner) {
			if r.cfg.Train.RunningBaseline != 16 || r.cfg.Train.RunningClip != 1 {
				t.Errorf("--baseline running --baseline-window 16 --baseline-clip 1: scheduler window %d, clip %g", r.cfg.Train.RunningBaseline, r.cfg.Train.RunningClip)
			}
		}},
		{name: "running baseline, default window", args: []string{"--baseline", "running"}, check: func(t *testing.T, r *Runner) {
			if r.cfg.Train.RunningBaseline != rl.DefaultRatingWindow {
				t.Errorf("--baseline running: scheduler window %d, want %d", r.cfg.Train.RunningBaseline, rl.DefaultRatingWindow)
			}
		}},
		{name: "batch baseline leaves the scheduler's off", args: []string{"--baseline", "batch", "--baseline-window", "16"}, check: func(t *testing.T, r *Runner) {
			if r.cfg.Train.RunningBaseline != 0 {
				t.Errorf("--baseline batch: scheduler window %d, want 0", r.cfg.Train.RunningBaseline)
			}
		}},
		{name: "bad baseline", args: []string{"--baseline", "ewm"}, wantErr: "reward baseline"},
		{name: "bad baseline window", args: []string{"--baseline", "running", "--baseline-window", "-1"}, wantErr: "--baseline-window"},
		{name: "bad baseline clip", args: []string{"--baseline", "running", "--baseline-clip", "-0.5"}, wantErr: "--baseline-clip"},
		{name: "hold liked", args: []string{"--hold-liked", "0.75"}, check: func(t *testing.T, r *Runner) {
			if r.cfg.Train.HoldLiked != 0.75 || r.cfg.Train.HoldMinRated != DefaultHoldMinRated || DefaultHoldMinRated != 8 {
				t.Errorf("--hold-liked 0.75: scheduler %g, at least %d rated", r.cfg.Train.HoldLiked, r.cfg.Train.HoldMinRated)
			}
		}},
		{name: "hold by default", args: nil, check: func(t *testing.T, r *Runner) {
			if r.cfg.Train.HoldLiked != DefaultHoldLiked || DefaultHoldLiked != 0.75 || r.cfg.Train.HoldMinRated != 8 {
				t.Errorf("defaults: hold at %g, at least %d rated; want 0.75, 8", r.cfg.Train.HoldLiked, r.cfg.Train.HoldMinRated)
			}
		}},
		{name: "hold off", args: []string{"--hold-liked", "0"}, check: func(t *testing.T, r *Runner) {
			if r.cfg.Train.HoldLiked != 0 {
				t.Errorf("--hold-liked 0: scheduler %g", r.cfg.Train.HoldLiked)
			}
		}},
		{name: "hold min rated", args: []string{"--hold-liked", "0.75", "--hold-min-rated", "1"}, check: func(t *testing.T, r *Runner) {
			if r.cfg.Train.HoldMinRated != 1 {
				t.Errorf("--hold-min-rated 1: scheduler %d", r.cfg.Train.HoldMinRated)
			}
		}},
		{name: "bad hold min rated", args: []string{"--hold-min-rated", "-1"}, wantErr: "--hold-min-rated"},
		{name: "rollback on the users' verdict", args: []string{"--rollback-drop", "0.3", "--rollback-alpha", "0.05"}, check: func(t *testing.T, r *Runner) {
			if r.cfg.Train.RollbackDrop != 0.3 || r.cfg.Train.RollbackAlpha != 0.05 {
				t.Errorf("--rollback-drop 0.3 --rollback-alpha 0.05: scheduler %g, %g", r.cfg.Train.RollbackDrop, r.cfg.Train.RollbackAlpha)
			}
		}},
		{name: "rollback by default", args: nil, check: func(t *testing.T, r *Runner) {
			if r.cfg.Train.RollbackDrop != DefaultRollbackDrop || DefaultRollbackDrop != 0.6 || r.cfg.Train.RollbackAlpha != 0.01 {
				t.Errorf("defaults: rollback at a fall of %g, α %g; want %g, 0.01", r.cfg.Train.RollbackDrop, r.cfg.Train.RollbackAlpha, DefaultRollbackDrop)
			}
		}},
		{name: "bad rollback drop", args: []string{"--rollback-drop", "1.5"}, wantErr: "--rollback-drop"},
		{name: "teacher answers that loop refused", args: []string{"--teacher-loops", "refuse"}, check: func(t *testing.T, r *Runner) {
			if r.cfg.TeacherLoops != LoopsRefuse {
				t.Errorf("--teacher-loops refuse: the runner has %q", r.cfg.TeacherLoops)
			}
		}},
		{name: "teacher answers that loop refused, old spelling", args: []string{"--teacher-refuse-loops"}, check: func(t *testing.T, r *Runner) {
			if r.cfg.TeacherLoops != LoopsRefuse {
				t.Errorf("--teacher-refuse-loops: the runner has %q", r.cfg.TeacherLoops)
			}
		}},
		{name: "teacher answers that loop cut", args: []string{"--teacher-loops", "cut"}, check: func(t *testing.T, r *Runner) {
			if r.cfg.TeacherLoops != LoopsCut {
				t.Errorf("--teacher-loops cut: the runner has %q", r.cfg.TeacherLoops)
			}
		}},
		{name: "teacher answers that loop by default", args: nil, check: func(t *testing.T, r *Runner) {
			if r.cfg.TeacherLoops != DefaultTeacherLoops {
				t.Errorf("defaults: the runner has %q, want %q", r.cfg.TeacherLoops, DefaultTeacherLoops)
			}
		}},
		{name: "bad teacher loops", args: []string{"--teacher-loops", "skip"}, wantErr: "--teacher-loops"},
		{name: "teacher loops spelled twice", args: []string{"--teacher-refuse-loops", "--teacher-loops", "cut"}, wantErr: "choose one"},
		{name: "bad rollback alpha", args: []string{"--rollback-drop", "0.3", "--rollback-alpha", "2"}, wantErr: "--rollback-alpha"},
		{name: "backtrack by default", args: nil, model: modelDir, check: func(t *testing.T, r *Runner) {
			if r.cfg.Train.Retention == nil || r.cfg.Train.Retention.Shrinks != DefaultGateBacktrack || DefaultGateBacktrack != 2 {
				t.Errorf("defaults: gate %+v; want %d halvings", r.cfg.Train.Retention, DefaultGateBacktrack)
			}
		}},
		{name: "backtrack off", args: []string{"--gate-backtrack", "0"}, model: modelDir, check: func(t *testing.T, r *Runner) {
			if r.cfg.Train.Retention == nil || r.cfg.Train.Retention.Shrinks != 0 {
				t.Errorf("--gate-backtrack 0: gate %+v", r.cfg.Train.Retention)
			}
		}},
		{name: "bad hold liked", args: []string{"--hold-liked", "1.5"}, wantErr: "--hold-liked"},
		{name: "hold keep disliked", args: []string{"--hold-liked", "0.75", "--hold-keep-disliked"}, check: func(t *testing.T, r *Runner) {
			if !r.cfg.Train.HoldKeepsDisliked || r.cfg.Train.HoldLiked != 0.75 {
				t.Errorf("--hold-keep-disliked: scheduler keeps %v, holds at %g", r.cfg.Train.HoldKeepsDisliked, r.cfg.Train.HoldLiked)
			}
		}},
		{name: "keep disliked without hold", args: []string{"--hold-liked", "0", "--hold-keep-disliked"}, wantErr: "needs --hold-liked"},
		{name: "hold train disliked", args: []string{"--hold-liked", "0.75", "--hold-train-disliked"}, check: func(t *testing.T, r *Runner) {
			if !r.cfg.Train.HoldTrainsDisliked || r.cfg.Train.HoldKeepsDisliked || r.cfg.Train.HoldLiked != 0.75 {
				t.Errorf("--hold-train-disliked: scheduler trains %v, keeps %v, holds at %g", r.cfg.Train.HoldTrainsDisliked, r.cfg.Train.HoldKeepsDisliked, r.cfg.Train.HoldLiked)
			}
		}},
		{name: "train disliked without hold", args: []string{"--hold-liked", "0", "--hold-train-disliked"}, wantErr: "needs --hold-liked"},
		{name: "train and keep disliked", args: []string{"--hold-liked", "0.75", "--hold-train-disliked", "--hold-keep-disliked"}, wantErr: "choose one"},
		{name: "bad placement", args: []string{"--hint-placement", "assistant"}, wantErr: "--hint-placement"},
		{name: "bad opd response", args: []string{"--opd-response", "mixed"}, wantErr: "--opd-response"},
		{name: "bad epochs", args: []string{"--ppo-epochs", "-1"}, wantErr: "--ppo-epochs"},
		{name: "bad first epochs", args: []string{"--first-epochs", "-1"}, wantErr: "--first-epochs"},
		{name: "bad lr warmup", args: []string{"--lr-warmup", "-2"}, wantErr: "--lr-warmup"},
		{name: "bad first lr", args: []string{"--first-lr", "-1e-3"}, wantErr: "--first-lr"},
		{name: "answers without open questions", args: []string{"--gate-answers", "--gate-loops", "0"}, wantErr: "--gate-answers"},
		{name: "bad distill coef", args: []string{"--distill-coef", "-1"}, wantErr: "--distill-coef"},
		{name: "bad rehearsal", args: []string{"--rehearsal", "-1"}, wantErr: "--rehearsal"},
		{name: "bad gate loops", args: []string{"--gate-loops", "-1"}, wantErr: "--gate-loops"},
		{name: "follow hint without hints", args: []string{"--rehearsal-follow-hint", "--method", "rl"}, wantErr: "--rehearsal-follow-hint"},
		{name: "avoid and follow", args: []string{"--rehearsal-avoid", "--rehearsal-avoid-wrong=false", "--rehearsal-follow-hint"}, model: modelDir, check: func(t *testing.T, r *Runner) {
			ret := r.cfg.Train.Retention
			if ret == nil || ret.Caught == nil || r.rehearsal == nil {
				t.Fatalf("--rehearsal-avoid: retention %+v, rehearsal %v: want the gate's catches fed to the anchors", ret, r.rehearsal)
			}
			f := eng.Format()
			ret.Caught(rl.Probe{Name: "Who wrote Romeo and Juliet?"}, f.Encode("I'm sorry, but I can't assist with that."))
			ret.Caught(rl.Probe{Name: "Who wrote Romeo and Juliet?"}, f.Encode("Romeo et Juliet ont été écrits par Tolkien."))
			if n := r.rehearsal.Avoided(); n != 1 {
				t.Errorf("%d answers avoided, want the refusal alone", n)
			}
		}},
		{name: "avoid wrong", args: []string{"--rehearsal-avoid", "--rehearsal-avoid-wrong"}, model: modelDir, check: func(t *testing.T, r *Runner) {
			f := eng.Format()
			r.cfg.Train.Retention.Caught(rl.Probe{Name: "What is the capital of Germany?"}, f.Encode("Le capital de la France est Paris."))
			r.cfg.Train.Retention.Caught(rl.Probe{Name: "How many days are in a week?"}, f.Encode("2"))
			if n := r.rehearsal.Avoided(); n != 1 {
				t.Errorf("%d answers avoided, want the wrong capital alone", n)
			}
		}},
		{name: "avoid wrong without avoid", args: []string{"--rehearsal-avoid=false", "--rehearsal-avoid-wrong"}, wantErr: "needs --rehearsal-avoid"},
		{name: "avoid passes", args: []string{"--rehearsal-avoid-passes", "1"}, model: modelDir, check: func(t *testing.T, r *Runner) {
			ret := r.cfg.Train.Retention
			if ret == nil || ret.Passed == nil {
				t.Fatalf("--rehearsal-avoid-passes 1: retention %+v: want the gate's passes told to the anchors", ret)
			}
			f := eng.Format()
			ret.Caught(rl.Probe{Name: "What is the capital of Germany?"}, f.Encode("La capitale de la France est Paris."))
			if n := r.rehearsal.Avoided(); n != 1 {
				t.Fatalf("%d answers avoided, want the wrong capital", n)
			}
			ret.Passed(3)
			if n := r.rehearsal.Avoided(); n != 0 {
				t.Errorf("%d answers avoided after a version passed the gate, want none", n)
			}
		}},
		{name: "avoid relative", args: []string{"--rehearsal-avoid-relative"}, model: modelDir, check: func(t *testing.T, r *Runner) {
			r.cfg.Train.Retention.Caught(rl.Probe{Name: "What is the capital of Germany?"}, eng.Format().Encode("La capitale de la France est Paris."))
			s, err := r.rehearsal.Samples(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var pushed int
			for _, x := range s {
				if x.Anchor < 0 && x.Bound == DefaultRehearsalAvoidBound && x.BoundStart != nil {
					pushed++
				}
			}
			if pushed == 0 {
				t.Fatalf("--rehearsal-avoid-relative: %d samples, none pushed down with a start to read the bound against", len(s))
			}
		}},
		{name: "avoid relative without bound", args: []string{"--rehearsal-avoid-relative", "--rehearsal-avoid-bound", "0"}, wantErr: "--rehearsal-avoid-relative"},
		{name: "avoid passes without avoid", args: []string{"--rehearsal-avoid=false", "--rehearsal-avoid-passes", "1"}, wantErr: "--rehearsal-avoid-passes"},
		{name: "negative avoid passes", args: []string{"--rehearsal-avoid-passes", "-1"}, wantErr: "--rehearsal-avoid-passes"},
		{name: "gate loops", args: []string{"--gate-loops", "3"}, model: modelDir, check: func(t *testing.T, r *Runner) {
			ret := r.cfg.Train.Retention
			if ret == nil || ret.BuildOpen == nil || ret.OpenTokens != 64 {
				t.Fatalf("--gate-loops 3: retention %+v: want open questions built to 64 tokens", ret)
			}
			open, err := ret.BuildOpen(context.Background())
			if err != nil || len(open) != 3 || open[0].Name != DefaultOpen[0] || len(open[2].PromptIDs) == 0 {
				t.Fatalf("open probes %+v %v: want the first three questions, rendered", open, err)
			}
		}},
		{name: "gate loops by default", model: modelDir, check: func(t *testing.T, r *Runner) {
			ret := r.cfg.Train.Retention
			if ret == nil || ret.BuildOpen == nil {
				t.Fatalf("retention %+v: want open questions by default", ret)
			}
			if open, err := ret.BuildOpen(context.Background()); err != nil || len(open) != DefaultGateLoops {
				t.Fatalf("open probes %+v %v: want %d", open, err, DefaultGateLoops)
			}
		}},
		{name: "gate answers", args: []string{"--gate-answers"}, model: modelDir, check: func(t *testing.T, r *Runner) {
			if ret := r.cfg.Train.Retention; ret == nil || ret.BuildOpen == nil || !ret.OpenAnswered {
				t.Fatalf("--gate-answers: retention %+v: want the open questions held to their topics", ret)
			}
		}},
		{name: "gate answers off by default", model: modelDir, check: func(t *testing.T, r *Runner) {
			if ret := r.cfg.Train.Retention; ret == nil || ret.OpenAnswered {
				t.Fatalf("retention %+v: want --gate-answers off by default", ret)
			}
		}},
		{name: "gate loops off", args: []string{"--gate-loops", "0"}, model: modelDir, check: func(t *testing.T, r *Runner) {
			if ret := r.cfg.Train.Retention; ret == nil || ret.BuildOpen != nil {
				t.Fatalf("retention %+v: want the gate without open questions under --gate-loops 0", ret)
			}
		}},
		{name: "avoid bound", args: []string{"--rehearsal-avoid", "--rehearsal-avoid-bound", "2"}, model: modelDir, check: func(t *testing.T, r *Runner) {
			f := eng.Format()
			r.cfg.Train.Retention.Caught(rl.Probe{Name: "Who wrote Romeo and Juliet?"}, f.Encode("I'm sorry, but I can't assist with that."))
			s, err := r.rehearsal.Samples(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			bounded := 0
			for _, x := range s {
				if x.Anchor < 0 && x.Bound == 2 {
					bounded++
				}
			}
			if bounded == 0 {
				t.Errorf("--rehearsal-avoid-bound 2: no pushed-down sample carries the bound in %d samples", len(s))
			}
		}},
		{name: "avoid bound without avoid", args: []string{"--rehearsal-avoid=false", "--rehearsal-avoid-bound", "2"}, wantErr: "--rehearsal-avoid-bound"},
		{name: "negative avoid bound", args: []string{"--rehearsal-avoid", "--rehearsal-avoid-bound", "-1"}, wantErr: "--rehearsal-avoid-bound"},
		{name: "avoid bound in full mode", args: []string{"--rehearsal-avoid", "--rehearsal-avoid-bound", "2", "--train-mode", "full"}, wantErr: "--rehearsal-avoid-bound"},
		{name: "avoid without anchors", args: []string{"--rehearsal-avoid", "--rehearsal", "0"}, wantErr: "--rehearsal-avoid"},
		{name: "avoid without the gate", args: []string{"--rehearsal-avoid", "--no-retention-gate"}, wantErr: "--rehearsal-avoid"},
		{name: "avoid by default", model: modelDir, check: func(t *testing.T, r *Runner) {
			ret := r.cfg.Train.Retention
			if ret == nil || ret.Caught == nil || r.rehearsal == nil {
				t.Fatalf("defaults: retention %+v, rehearsal %v: want the gate's catches fed to the anchors", ret, r.rehearsal)
			}
			f := eng.Format()
			// --rehearsal-avoid-wrong: the wrong capital is pushed down;
			// --rehearsal-avoid-bound 2: at most 2 nats below the base.
			ret.Caught(rl.Probe{Name: "What is the capital of Germany?"}, f.Encode("Le capital de la France est Paris."))
			if n := r.rehearsal.Avoided(); n != 1 {
				t.Fatalf("%d answers avoided, want the wrong capital", n)
			}
			s, err := r.rehearsal.Samples(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			bounded := 0
			for _, x := range s {
				if x.Anchor < 0 && x.Bound == DefaultRehearsalAvoidBound && DefaultRehearsalAvoidBound == 2 {
					bounded++
				}
			}
			if bounded == 0 {
				t.Errorf("defaults: no pushed-down sample carries the bound 2 in %d samples", len(s))
			}
		}},
		{name: "avoid off", args: []string{"--rehearsal-avoid=false"}, model: modelDir, check: func(t *testing.T, r *Runner) {
			if ret := r.cfg.Train.Retention; ret == nil || ret.Caught != nil {
				t.Errorf("--rehearsal-avoid=false: retention %+v: want no catches fed to the anchors", ret)
			}
		}},
		// The defaults step aside where they cannot apply; a flag given
		// there is an error (the cases above).
		{name: "avoid by default without anchors", args: []string{"--rehearsal", "0"}, model: modelDir, check: func(t *testing.T, r *Runner) {
			if ret := r.cfg.Train.Retention; ret == nil || ret.Caught != nil || r.rehearsal != nil {
				t.Errorf("--rehearsal 0: retention %+v, rehearsal %v: want neither anchors nor catches", ret, r.rehearsal)
			}
		}},
		{name: "avoid by default without the gate", args: []string{"--no-retention-gate"}, model: modelDir, check: func(t *testing.T, r *Runner) {
			if r.cfg.Train.Retention != nil {
				t.Errorf("--no-retention-gate: retention %+v", r.cfg.Train.Retention)
			}
		}},
		{name: "avoid by default in full mode", args: []string{"--train-mode", "full"}, model: modelDir, check: func(t *testing.T, r *Runner) {
			if ret := r.cfg.Train.Retention; ret == nil || ret.Caught != nil {
				t.Errorf("--train-mode full: retention %+v: want no catches pushed down (no bound can be read)", ret)
			}
		}},
		{name: "avoid given in full mode", args: []string{"--train-mode", "full", "--rehearsal-avoid"}, model: modelDir, check: func(t *testing.T, r *Runner) {
			if ret := r.cfg.Train.Retention; ret == nil || ret.Caught == nil {
				t.Errorf("--train-mode full --rehearsal-avoid: retention %+v: want catches pushed down, unbounded", ret)
			}
		}},
		{name: "follow hint without anchors", args: []string{"--rehearsal-follow-hint", "--rehearsal", "0"}, wantErr: "--rehearsal-follow-hint"},
		{name: "bad method", args: []string{"--method", "ppo"}, wantErr: "training method"},
		{name: "judge url without model", args: []string{"--judge-url", "http://x"}, wantErr: "--judge-model"},
		{name: "bad teacher", args: []string{"--teacher", "oracle"}, wantErr: "--teacher"},
		{name: "bad feedback", args: []string{"--feedback", "ignore"}, wantErr: "--feedback"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Settings
			fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
			s.AddFlags(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			r, err := s.Build(Parts{Engine: eng, Publisher: eng, Store: st, DataDir: dir, ModelDir: tt.model, Log: quiet()})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, r)
		})
	}
}

// TestJudgeEndpointDown: with --judge-url pointing at a dead endpoint, turns
// are judged 0 with the reason kept (after bounded retries), the rated ones
// still train on their feedback, and nothing blocks.
func TestJudgeEndpointDown(t *testing.T) {
	ctx := context.Background()
	dead := httptest.NewServer(http.NotFoundHandler())
	url := dead.URL + "/v1"
	dead.Close()
	f := newFixture(t, t.TempDir(), rl.MethodRL, 16)
	s := Settings{Method: "rl", JudgeURL: url, JudgeModel: "judge", JudgeRetries: 1, JudgeTimeout: time.Second, Feedback: "decide", BatchSize: 16}
	r, err := s.Build(Parts{Engine: f.engine, Store: f.store, DataDir: f.dir, Log: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	plain := f.serve(t, "down1", []chat.Message{{Role: chat.RoleUser, Content: "q"}})
	f.reply(t, plain, "thanks")
	rated := f.serve(t, "down2", []chat.Message{{Role: chat.RoleUser, Content: "q2"}})
	if err := f.store.AddFeedback(ctx, rated.ID, store.Feedback{Rating: 1, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := r.judgeRound(ctx); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 20*time.Second {
		t.Errorf("a dead judge held the round for %s", el)
	}
	tr, j := f.turn(t, plain.ID)
	if tr.State != store.Judged || j.Score != 0 || !strings.HasPrefix(j.Reason, "judge unavailable: ") || j.Judge != "http:judge" {
		t.Errorf("plain turn with the judge down: %s, %+d, %q, %q", tr.State, j.Score, j.Reason, j.Judge)
	}
	if tr, j := f.turn(t, rated.ID); tr.State != store.Ready || j.Score != 1 {
		t.Errorf("rated turn with the judge down: %s, %+d (%s)", tr.State, j.Score, j.Reason)
	}
}

// TestDistillCoefFlag: --distill-coef reaches the trainer's step
// configuration (rl.StepConfig.DistillCoef).
func TestDistillCoefFlag(t *testing.T) {
	var s Settings
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	s.AddFlags(fs)
	if err := fs.Parse([]string{"--opd-response", "teacher", "--distill-coef", "2.5"}); err != nil {
		t.Fatal(err)
	}
	step, err := s.stepConfig()
	if err != nil || step.DistillCoef != 2.5 {
		t.Fatalf("step config %+v, %v; want DistillCoef 2.5", step, err)
	}
}

// TestStepFlags: --momentum-reset, --loss-mean, --rehearsal-scale and --distill-focus
// reach the step configuration; unset they are the defaults (keep, the token mean,
// fixed, 0); a bad value is refused with the flag's name.
func TestStepFlags(t *testing.T) {
	for _, c := range []struct {
		args     []string
		momentum rl.MomentumReset
		mean     rl.LossMean
		anchors  rl.AnchorScale
		focus    float64
		first    int
	}{
		{nil, rl.MomentumKeep, rl.MeanToken, rl.AnchorFixed, 0, 0},
		{[]string{"--momentum-reset", "no-signal"}, rl.MomentumNoSignal, rl.MeanToken, rl.AnchorFixed, 0, 0},
		{[]string{"--momentum-reset", "every-step", "--loss-mean", "sample", "--rehearsal-scale", "signal", "--distill-focus", "1.5", "--first-epochs", "2"}, rl.MomentumEveryStep, rl.MeanSample, rl.AnchorSignal, 1.5, 2},
	} {
		var s Settings
		fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		s.AddFlags(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		step, err := s.stepConfig()
		if err != nil || step.MomentumReset != c.momentum || step.LossMean != c.mean || step.AnchorScale != c.anchors || step.DistillFocus != c.focus || step.FirstEpochs != c.first {
			t.Fatalf("%v: momentum reset %q, loss mean %q, anchors %q, focus %g, first epochs %d, %v; want %q, %q, %q, %g, %d", c.args, step.MomentumReset, step.LossMean, step.AnchorScale, step.DistillFocus, step.FirstEpochs, err, c.momentum, c.mean, c.anchors, c.focus, c.first)
		}
	}
	for flag, bad := range map[string]Settings{"--momentum-reset": {MomentumReset: "sometimes"}, "--loss-mean": {LossMean: "median"}, "--rehearsal-scale": {RehearsalScale: "loud"}, "--distill-focus": {DistillFocus: -1}} {
		if _, err := bad.stepConfig(); err == nil || !strings.Contains(err.Error(), flag) {
			t.Fatalf("a bad %s: %v", flag, err)
		}
	}
}

// TestTrainerFlags: --recompute, --micro-batch-tokens and
// --activation-budget-mib reach the trainer's configuration (train.Config);
// unset, the trainer keeps every block's activations within the default
// budget and its default micro-batch.
func TestTrainerFlags(t *testing.T) {
	for _, c := range []struct {
		args      []string
		recompute bool
		micro     int
		lr        float64
		warmup    int
		firstLR   float64
		first     int
		budget    int64
	}{
		{nil, false, 0, DefaultLoRALearningRate, 0, 0, 0, 0},
		{[]string{"--activation-budget-mib", "512"}, false, 0, DefaultLoRALearningRate, 0, 0, 0, 512 << 20},
		{[]string{"--activation-budget-mib", "-1"}, false, 0, DefaultLoRALearningRate, 0, 0, 0, -1},
		{[]string{"--recompute", "--micro-batch-tokens", "512"}, true, 512, DefaultLoRALearningRate, 0, 0, 0, 0},
		{[]string{"--lr", "5e-4", "--lr-warmup", "3"}, false, 0, 5e-4, 3, 0, 0, 0},
		{[]string{"--lr-warmup", "4"}, false, 0, DefaultLoRALearningRate, 4, 0, 0, 0},
		// The first rate covers the first batch's steps: --first-epochs, else --ppo-epochs.
		{[]string{"--first-epochs", "2", "--first-lr", "1e-3", "--lr", "5e-4"}, false, 0, 5e-4, 0, 1e-3, 2, 0},
		{[]string{"--ppo-epochs", "3", "--first-lr", "2e-3"}, false, 0, DefaultLoRALearningRate, 0, 2e-3, 3, 0},
		{[]string{"--first-lr", "2e-3"}, false, 0, DefaultLoRALearningRate, 0, 2e-3, 1, 0},
	} {
		var s Settings
		fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		s.AddFlags(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		if cfg := s.trainConfig(); cfg.ActivationBudget != c.budget {
			t.Errorf("%v: activation budget %d, want %d", c.args, cfg.ActivationBudget, c.budget)
		}
		if cfg := s.trainConfig(); cfg.Recompute != c.recompute || cfg.MicroBatchTokens != c.micro || cfg.AdamW.LR != c.lr || cfg.AdamW.Warmup != c.warmup ||
			cfg.AdamW.FirstLR != c.firstLR || cfg.AdamW.FirstSteps != c.first {
			t.Errorf("%v: recompute %v, micro-batch %d tokens, lr %g, warmup %d, first lr %g over %d steps; want %v, %d, %g, %d, %g over %d", c.args,
				cfg.Recompute, cfg.MicroBatchTokens, cfg.AdamW.LR, cfg.AdamW.Warmup, cfg.AdamW.FirstLR, cfg.AdamW.FirstSteps,
				c.recompute, c.micro, c.lr, c.warmup, c.firstLR, c.first)
		}
	}
}
