package loop

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/native"
	"github.com/clawrl/clawrl/store"
)

// TestLoopLearnsFromRatings runs the whole loop on a real (random, tiny)
// model: answers sampled by the native engine are rated through feedback, 👍
// for one answer and 👎 with written feedback for another, batch after
// batch; the judge reads the ratings, the written feedback becomes the
// teacher's hint, the native trainer steps with the batch baseline, and each
// version is gated and published.
//
// "student" (--opd-response student): the teacher re-scores the rated
// answers and the ratings' reward term applies to them, so the liked answer
// must gain log-probability against the disliked one. "default" (the
// teacher writes the 👎 turns' answers, trained by cross-entropy): a 👎
// turn trains on the teacher's answer instead of its own, so the teacher's
// answers must gain log-probability.
func TestLoopLearnsFromRatings(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model")
	}
	for _, mode := range []string{"student", "default"} {
		t.Run(mode, func(t *testing.T) { loopLearnsFromRatings(t, mode) })
	}
}

func loopLearnsFromRatings(t *testing.T, mode string) {
	ctx := context.Background()
	dir := t.TempDir()
	modelDir := tinyModel(t)
	eng, err := native.Open(modelDir, native.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	st := openStore(t, dir)
	defer st.Close()
	s := defaultSettings(t)
	s.BatchSize, s.LearningRate, s.LoRARank = 4, 2e-3, 4
	if mode == "student" {
		s.OPDResponse = "student"
	}
	r, err := s.Build(Parts{Engine: eng, Publisher: eng, Store: st, DataDir: dir, Model: eng.Model(), Log: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Scheduler().Recover(ctx); err != nil {
		t.Fatal(err)
	}
	f := eng.Format()
	msgs := []chat.Message{{Role: chat.RoleUser, Content: "Say hi."}}
	text, err := f.Render(msgs, nil, engine.RenderOptions{AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	prompt := f.Encode(text)
	answer := func(seed int64) ([]int32, []float32) {
		var ids []int32
		var lps []float32
		_, err := eng.Generate(ctx, engine.GenerateRequest{PromptIDs: prompt, MaxTokens: 12, Sampling: engine.Sampling{Temperature: 1, Seed: &seed}},
			func(tok engine.Token) error { ids = append(ids, tok.ID); lps = append(lps, tok.Logprob); return nil })
		if err != nil {
			t.Fatal(err)
		}
		return ids, lps
	}
	liked, _ := answer(1)
	disliked, _ := answer(2)
	logp := func(ids []int32) float64 {
		sc, err := eng.Score(ctx, engine.ScoreRequest{PromptIDs: prompt, CompletionIDs: ids})
		if err != nil {
			t.Fatal(err)
		}
		sum := 0.0
		for _, lp := range sc.Logprobs {
			sum += float64(lp)
		}
		return sum
	}
	likedBase, dislikedBase := logp(liked), logp(disliked)
	record := func(key string, ids []int32, rating int, text string) {
		sess := store.Session{Key: key, KeySource: "header", CreatedAt: time.Now(), LastSeen: time.Now()}
		if err := st.CreateSession(ctx, &sess); err != nil {
			t.Fatal(err)
		}
		// The behaviour logprobs are those of the policy serving now.
		sc, err := eng.Score(ctx, engine.ScoreRequest{PromptIDs: prompt, CompletionIDs: ids})
		if err != nil {
			t.Fatal(err)
		}
		tr := store.Turn{ID: "t-" + key, SessionID: sess.ID, Type: store.Main, CreatedAt: time.Now(), Messages: msgs, PromptText: text,
			PromptIDs: prompt, ResponseIDs: ids, BehaviourLogprobs: sc.Logprobs, PolicyVersion: sc.PolicyVersion, Engine: "native",
			ResponseText: f.Decode(ids), Response: chat.Message{Role: chat.RoleAssistant, Content: f.Decode(ids)}}
		if err := st.InsertTurn(ctx, &tr); err != nil {
			t.Fatal(err)
		}
		if err := st.AddFeedback(ctx, tr.ID, store.Feedback{Rating: rating, Text: text, CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	for v := 1; v <= 4; v++ {
		for i := range 2 {
			record(fmt.Sprintf("up-%d-%d", v, i), liked, 1, "")
			record(fmt.Sprintf("down-%d-%d", v, i), disliked, -1, "Do not say that; greet me in one word.")
		}
		trained, err := r.RunOnce(ctx)
		if err != nil || !trained {
			t.Fatalf("version %d: trained %v, %v (counters %+v)", v, trained, err, r.Counters())
		}
	}
	if eng.Version() != 4 {
		t.Fatalf("engine serves v%d, want v4", eng.Version())
	}
	if mode == "student" {
		gap0 := likedBase - dislikedBase
		gap := logp(liked) - logp(disliked)
		t.Logf("log p(liked) − log p(disliked): %.3f → %.3f", gap0, gap)
		if gap < gap0+1 {
			t.Errorf("the liked answer gained %.3f nats on the disliked one, want at least 1", gap-gap0)
		}
	} else {
		samples, err := st.ListSamples(ctx, store.TurnFilter{})
		if err != nil {
			t.Fatal(err)
		}
		written := 0
		for _, smp := range samples {
			if smp.TeacherResponseIDs == nil {
				continue
			}
			written++
			base, err := eng.Score(ctx, engine.ScoreRequest{PromptIDs: prompt, CompletionIDs: smp.TeacherResponseIDs, Adapter: engine.AdapterBase})
			if err != nil {
				t.Fatal(err)
			}
			before, after := 0.0, logp(smp.TeacherResponseIDs)
			for _, lp := range base.Logprobs {
				before += float64(lp)
			}
			if after < before+1 {
				t.Errorf("turn %s: the teacher's answer went %.3f → %.3f nats, want a gain of at least 1", smp.TurnID, before, after)
			}
		}
		if written != 8 {
			t.Errorf("%d samples on a teacher-written answer, want 8 (one per 👎)", written)
		}
	}
	c := r.Counters()
	if c.HintsAccepted != 8 {
		t.Errorf("%d written hints accepted, want 8 (every 👎 carried text)", c.HintsAccepted)
	}
}
