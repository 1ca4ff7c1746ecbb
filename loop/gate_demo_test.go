package loop

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/native"
	"github.com/clawrl/clawrl/modelref/demotest"
	"github.com/clawrl/clawrl/rl"
	"github.com/clawrl/clawrl/train"
)

// TestBehaviouralGateDemo trains the demo model (SmolLM2-135M-Instruct)
// two ways, on questions outside the retention set, and runs both retention
// checks on each candidate:
//   - a harmless style version (its own answers cut to the first sentence,
//     the concise persona's preference) passes the behavioural gate;
//   - a drifting version (trained towards French filler, one step at a
//     time) is rejected by the behavioural gate as soon as its greedy
//     answers lose a fact, while the log-probability check, which scores
//     the word after the base model's own opening, still passes it — the
//     hole that let a gibberish version be served. (On this model the
//     first step already answers "What is the capital of France?" with
//     "L'Étoile, la Marseillaise, la femme, …", and "Paris" after "The
//     capital of France is" scores as well as before.)
//
// The candidate answers with the model's own forward and is never
// published to the engine. It logs both checks' times.
func TestBehaviouralGateDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("trains the demo model")
	}
	ctx := context.Background()
	eng, err := native.Open(demotest.GGUF(t), native.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	f := eng.Format()
	probes, err := RetentionProbes(ctx, eng, DefaultFacts)
	if err != nil {
		t.Fatal(err)
	}
	if len(probes) < 10 {
		t.Fatalf("the base model knows %d of %d facts, want ≥ 10", len(probes), len(DefaultFacts))
	}
	cfg := rl.RetentionConfig{Probes: probes, Decode: f.Decode, Stop: f.StopIDs()}

	newTrainer := func(lr float64) *rl.NativeTrainer {
		n, err := rl.NewNativeTrainerFor(eng.Model(), train.Config{LoRA: train.DefaultLoRA(), AdamW: train.DefaultAdamW(lr), Seed: 1},
			rl.DefaultStepConfig())
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	var base []float64
	check := func(name string, n *rl.NativeTrainer) (behaviour, scored rl.RetentionResult) {
		start := time.Now()
		behaviour, err := rl.CheckAnswers(ctx, n, cfg)
		if err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		start = time.Now()
		scored, err = rl.CheckRetention(ctx, n, cfg, base)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: behavioural pass %v in %v (%s); log-prob pass %v in %v (%s)", name, behaviour.Pass, took.Round(time.Millisecond),
			behaviour.Reason, scored.Pass, time.Since(start).Round(time.Millisecond), scored.Reason)
		return behaviour, scored
	}
	// Questions outside the retention set, to train on.
	questions := []string{"What is the capital of Spain?", "What is the capital of Portugal?", "How many hours are in a day?",
		"What color is grass?", "Who painted the Mona Lisa?", "What is 3 plus 3?", "What is the largest planet?", "What do bees make?"}
	prompts := make([][]int32, len(questions))
	for i, q := range questions {
		text, err := f.Render([]chat.Message{{Role: chat.RoleUser, Content: q}}, nil, engine.RenderOptions{AddGenerationPrompt: true})
		if err != nil {
			t.Fatal(err)
		}
		prompts[i] = f.Encode(text)
	}
	// step takes one SFT step of n towards answers (one per question).
	step := func(n *rl.NativeTrainer, answers []string) {
		seqs := make([]train.Sequence, len(answers))
		for i, a := range answers {
			seqs[i] = train.Sequence{PromptIDs: prompts[i], ResponseIDs: append(f.Encode(a), f.StopIDs()[0])}
		}
		if _, err := n.Trainer().Step(ctx, seqs, rl.SFTObjective()); err != nil {
			t.Fatal(err)
		}
	}
	answer := func(n *rl.NativeTrainer, i int) string {
		got, err := n.Answer(ctx, [][]int32{prompts[i]}, 48, f.StopIDs(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return f.Decode(got[0])
	}

	// Untrained (zero adapters): the trainer's greedy answers are the
	// engine's, so every fact is kept and both checks pass.
	n := newTrainer(1e-3)
	if base, err = n.ProbeLogprobs(ctx, probes, true); err != nil {
		t.Fatal(err)
	}
	if b, s := check("untrained", n); !b.Pass || b.Lost != 0 || !s.Pass {
		t.Fatalf("the untrained candidate fails: behavioural %+v, log-prob %+v", b, s)
	}

	// A style change: the base model's own answers cut to their first
	// sentence (the concise persona's preference, which the loop learns),
	// trained until the first question's answer is that sentence alone.
	style := newTrainer(3e-4)
	short := make([]string, len(questions))
	for i := range questions {
		a := strings.TrimSpace(answer(n, i))
		if end := strings.IndexAny(a, ".!?"); end >= 0 {
			a = a[:end+1]
		}
		short[i] = a
	}
	for i := 0; ; i++ {
		if i == 20 {
			t.Fatal("short answers not learned in 20 steps")
		}
		step(style, short)
		if got := strings.TrimSpace(answer(style, 0)); got == short[0] {
			t.Logf("short answers learned after %d steps: %q", i+1, got)
			break
		}
	}
	if b, _ := check("style", style); !b.Pass {
		t.Errorf("a harmless style version is rejected: %s", b.Reason)
	}

	// Drift: answers become French-sounding filler. Trained one step at a
	// time until the behavioural gate rejects the candidate; at that
	// point the log-probability check, which scores the word after the
	// base model's own opening, still passes it.
	drift := newTrainer(3e-4)
	filler := make([]string, len(questions))
	for i := range filler {
		filler[i] = "Oui oui, la la la, c'est la vie, mon ami."
	}
	for i := 0; ; i++ {
		if i == 20 {
			t.Fatal("the drifting candidate still passes the behavioural gate after 20 steps")
		}
		step(drift, filler)
		b, s := check(fmt.Sprintf("drift step %d", i+1), drift)
		if b.Pass {
			continue
		}
		if !s.Pass {
			t.Errorf("the log-probability check rejects the drift as soon as the behavioural gate does: no hole shown")
		}
		break
	}
}
