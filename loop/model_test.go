package loop

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/clawrl/clawrl/api"
	"github.com/clawrl/clawrl/engine/native"
	"github.com/clawrl/clawrl/model"
	"github.com/clawrl/clawrl/rl"
	"github.com/clawrl/clawrl/safetensors"
	"github.com/clawrl/clawrl/store"
	"github.com/clawrl/clawrl/tokenizer/vocab"
)

// tinyModel writes a random tiny Qwen3 checkpoint with the real Qwen3
// tokenizer files, as `clawrl model new` does.
func tinyModel(tb testing.TB) string {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "qwen3-tiny")
	cfg, err := model.NewConfig(model.Qwen3, model.SizeTiny)
	if err != nil {
		tb.Fatal(err)
	}
	if err := model.WriteRandom(dir, cfg, 1, safetensors.F32); err != nil {
		tb.Fatal(err)
	}
	tj, tc, err := vocab.Files("qwen3")
	if err != nil {
		tb.Fatal(err)
	}
	for name, data := range map[string][]byte{"tokenizer.json": tj, "tokenizer_config.json": tc} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return dir
}

// TestModelBackedLoop runs everything real on a tiny checkpoint: the native
// engine serves behind the gateway and judges with its base weights (a
// random model's votes are noise, so the explicit /v1/feedback ratings
// decide the scores, but the judge's generations and the teacher's scoring
// go through the model), the native trainer trains, and the new adapter
// version serves the next request.
func TestModelBackedLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a tiny model")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	modelDir := tinyModel(t)
	eng, err := native.Open(modelDir, native.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	st := openStore(t, dir)
	defer st.Close()
	gate := rl.NewGate()
	gw, err := api.New(api.Config{Engine: rl.GatedEngine{Engine: eng, Gate: gate}, Store: st, Logger: quiet(), DefaultMaxTokens: 8})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()

	s := Settings{Method: "combine", JudgeVotes: 1, JudgeTimeout: time.Minute, JudgeTokens: 24, Feedback: "decide",
		Teacher: "policy", BatchSize: 2, MaxStaleness: 4, TrainMode: "lora", LoRARank: 4, LearningRate: 1e-3, WRL: 1, WOPD: 1}
	r, err := s.Build(Parts{Engine: eng, Publisher: eng, Store: st, Gate: gate, DataDir: dir, ModelDir: modelDir, Log: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	c := client{t: t, url: srv.URL}
	q := []msg{{"user", "What is 2+2?"}}
	plainID, a := c.chat("plain", q)
	c.chat("plain", append(q, msg{"assistant", a}, msg{"user", "No, it is 4."}))
	up, _ := c.chat("up", []msg{{"user", "Say hi."}})
	c.feedback(up, 1, "")
	down, _ := c.chat("down", []msg{{"user", "Write a haiku."}})
	c.feedback(down, -1, "Too long.")
	lastFeedback := time.Now()

	deadline := time.Now().Add(2 * time.Minute)
	for eng.Version() < 1 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if eng.Version() != 1 {
		rep, _ := st.Report(ctx)
		t.Fatalf("no version serving after 2 minutes: %+v, counters %+v", rep, r.Counters())
	}
	t.Logf("last feedback → version 1 serving: %s", time.Since(lastFeedback).Round(time.Millisecond))
	id, _ := c.chat("after", []msg{{"user", "And now?"}})
	turn, err := st.Turn(ctx, id)
	if err != nil || turn.PolicyVersion != 1 {
		t.Errorf("turn after training: version %d (%v), want 1", turn.PolicyVersion, err)
	}
	// The plain turn was judged by the model itself: its votes hold the
	// model's generations.
	var j store.Judgment
	for time.Now().Before(deadline) {
		if j, err = st.Judgment(ctx, plainID); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil || j.Judge != "engine:base" || len(j.Votes) == 0 {
		t.Fatalf("judgment of the plain turn: %+v %v", j, err)
	}
	for _, v := range j.Votes {
		if v.Source == "judge" && v.Raw == "" && v.Err == "" {
			t.Errorf("model vote without text: %+v", v)
		}
	}
	v, err := st.LatestVersion(ctx)
	if err != nil || v.Metrics.Tokens == 0 {
		t.Errorf("version 1: %+v %v", v, err)
	}
	cancel()
	r.Wait()
}
