package loop

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/scripted"
	"github.com/clawrl/clawrl/judge"
	"github.com/clawrl/clawrl/model"
	"github.com/clawrl/clawrl/rl"
	"github.com/clawrl/clawrl/safetensors"
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
			if r.cfg.Method != rl.MethodCombine || r.judge.Config().EvalVotes != 1 || r.teacher.Adapter != engine.AdapterCurrent || r.scheduler != nil {
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
		{name: "native trainer from the model folder", args: []string{"--batch-size", "4", "--lora-rank", "4"}, model: modelDir,
			check: func(t *testing.T, r *Runner) {
				if r.scheduler == nil {
					t.Error("no train loop")
				}
			}},
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
