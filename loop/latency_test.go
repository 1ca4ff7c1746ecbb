package loop

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/clawrl/clawrl/api"
	"github.com/clawrl/clawrl/engine/native"
	"github.com/clawrl/clawrl/engine/scripted"
	"github.com/clawrl/clawrl/judge"
	"github.com/clawrl/clawrl/rl"
)

// defaultSettings are the settings `clawrl serve` runs with when no flag is
// given.
func defaultSettings(t testing.TB) Settings {
	t.Helper()
	var s Settings
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	s.AddFlags(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	return s
}

// BenchmarkFirstVersion is the stall check of issue 11 as a report, not a
// test on a clock: `clawrl serve`'s default learning settings on the default
// random tiny model, 24 single-turn sessions rated through /v1/feedback
// (half 👍, half 👎 with written feedback), and the time from the last rating
// to a version serving. Before the judge read ratings and written feedback
// directly, each turn cost up to three 2,048-token hint generations and no
// version came within 3 minutes.
//
//	go test ./loop -run '^$' -bench FirstVersion -benchtime 1x
func BenchmarkFirstVersion(b *testing.B) {
	for range b.N {
		ctx, cancel := context.WithCancel(context.Background())
		dir := b.TempDir()
		modelDir := tinyModel(b)
		eng, err := native.Open(modelDir, native.Options{})
		if err != nil {
			b.Fatal(err)
		}
		st := openStore(b, dir)
		gate := rl.NewGate()
		gw, err := api.New(api.Config{Engine: rl.GatedEngine{Engine: eng, Gate: gate}, Store: st, Logger: quiet()})
		if err != nil {
			b.Fatal(err)
		}
		srv := httptest.NewServer(gw.Handler())
		r, err := defaultSettings(b).Build(Parts{Engine: eng, Publisher: eng, Store: st, Gate: gate, DataDir: dir, Model: eng.Model(), Log: quiet()})
		if err != nil {
			b.Fatal(err)
		}
		if err := r.Start(ctx); err != nil {
			b.Fatal(err)
		}
		c := client{t: b, url: srv.URL}
		start := time.Now()
		for i := range 24 {
			id, _ := c.chat(fmt.Sprintf("s%d", i), []msg{{"user", fmt.Sprintf("How do I boil an egg? (%d)", i)}})
			if i%2 == 0 {
				c.feedback(id, 1, "")
			} else {
				c.feedback(id, -1, "Too long. Answer in two or three plain sentences.")
			}
		}
		rated := time.Now()
		deadline := rated.Add(10 * time.Minute)
		for eng.Version() < 1 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if eng.Version() < 1 {
			b.Fatalf("no version 10 minutes after the 24th rating: counters %+v", r.Counters())
		}
		b.ReportMetric(time.Since(rated).Seconds(), "s-after-24th-rating")
		b.ReportMetric(rated.Sub(start).Seconds(), "s-for-24-turns")
		cancel()
		r.Wait()
		srv.Close()
		st.Close()
		eng.Close()
	}
}

// TestDefaultSettingsBuild: the flag defaults make a runner with the
// benchmark-chosen judging and advantages.
func TestDefaultSettingsBuild(t *testing.T) {
	s := defaultSettings(t)
	if s.Baseline != string(DefaultBaseline) || s.OPDClip != DefaultOPDClip || s.JudgeVerdict != "fewshot" || s.HintTokens != 64 || s.NoRetentionGate {
		t.Errorf("defaults %+v", s)
	}
	st := openStore(t, t.TempDir())
	defer st.Close()
	r, err := s.Build(Parts{Store: st, Engine: scripted.New(scripted.Options{}), DataDir: t.TempDir(), Log: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	jc := r.judge.Config()
	if jc.Verdict != judge.VerdictFewShot || jc.Calibration != judge.CalibrateNeutral || jc.NextHint != judge.NextHintCorrection ||
		jc.HintTokens != 64 || jc.Threshold != judge.DefaultThreshold || jc.NoWrittenHints {
		t.Errorf("judge defaults %+v", jc)
	}
	tr, err := s.nativeTrainer(nil, tinyModel(t))
	if err != nil {
		t.Fatal(err)
	}
	if lr := tr.(*rl.NativeTrainer).Trainer().Config().AdamW.LR; lr != DefaultLoRALearningRate {
		t.Errorf("LoRA learning rate %g, want the loop's default %g", lr, DefaultLoRALearningRate)
	}
	// Rehearsal anchors are on by default for an in-process trainer with an
	// engine to answer them.
	if s.Rehearsal != DefaultRehearsalPerBatch || DefaultRehearsalPerBatch == 0 {
		t.Errorf("rehearsal %d per step, want the default %d (> 0)", s.Rehearsal, DefaultRehearsalPerBatch)
	}
	eng, err := native.Open(tinyModel(t), native.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	served, err := s.nativeTrainer(eng.Model(), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Build(Parts{Store: st, Engine: eng, Publisher: eng, Trainer: served, DataDir: t.TempDir(), Log: quiet()}); err != nil {
		t.Fatal(err)
	}
	reh := served.(*rl.NativeTrainer).Rehearsal()
	if reh == nil {
		t.Fatal("no rehearsal anchors with the default settings")
	}
	if err := reh.Prepare(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(reh.Anchors()); n == 0 {
		t.Error("no anchors built")
	}
}
