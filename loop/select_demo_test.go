package loop

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/native"
	"github.com/clawrl/clawrl/judge"
	"github.com/clawrl/clawrl/modelref/demotest"
)

// demoEngine is the demo model on the native engine, closed at the end of
// the test; skipped under -short.
func demoEngine(t *testing.T) *native.Engine {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the demo model")
	}
	eng, err := native.Open(demotest.GGUF(t), native.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	return eng
}

// TestSelectorOnDemoModel: the answer selector on the demo model
// (SmolLM2-135M-Instruct), as the loop's local judge (the engine's base
// weights, one prefill) and as a --judge-url judge (the same model behind
// a real clawrl gateway, read through the chat completion's top_logprobs)
// gives the same score for every answer; the judge and the hint gain
// (judge.HintGain) pick the answer that does what the feedback asks in the
// cases this small model tells apart.
func TestSelectorOnDemoModel(t *testing.T) {
	eng := demoEngine(t)
	local := &judge.Selector{Scorer: &judge.EngineBackend{Engine: eng}, Threshold: math.Inf(-1)}
	remote := &judge.Selector{Scorer: judge.HTTPScorer{HTTPBackend: &judge.HTTPBackend{URL: teacherServer(t, eng), Model: "demo"}},
		Threshold: math.Inf(-1)}
	ctx := context.Background()
	// want, wantGain: the answer the judge and the hint gain (read by the
	// same model) pick; −1 where this small model picks wrong, kept for the
	// scores' agreement only (BENCHMARKS.md, "Best-of-N teacher answers").
	cases := []struct {
		name, question, feedback string
		answers                  []string
		want, wantGain           int
	}{
		{"french", "What is the capital of Italy?", "Réponds en français, s'il te plaît. Answer in French.",
			[]string{"The capital of Italy is Rome, a city with a long history.", "La capitale de l'Italie est Rome."}, 1, 1},
		{"concise", "How do I make good coffee?", "Too long. Answer in two or three plain sentences, with no lists and no bold.",
			[]string{"Here is how to make good coffee:\n\n1. **Beans:** buy fresh whole beans and grind them just before brewing.\n2. **Water:** use filtered water just off the boil.\n3. **Ratio:** use about 60 grams of coffee per litre.\n4. **Time:** brew for four minutes, then serve at once.",
				"Grind fresh beans just before brewing. Use about 60 grams of coffee per litre of water just off the boil, and brew for four minutes."}, 1, -1},
		{"signoff", "How do I boil an egg?", `Please always end your answer with "Hope this helps!"`,
			[]string{"Put the egg in boiling water for nine minutes, then cool it in cold water. Hope this helps!",
				"Put the egg in boiling water for nine minutes, then cool it in cold water."}, -1, 0},
	}
	for _, c := range cases {
		msgs := []chat.Message{{Role: chat.RoleUser, Content: c.question}}
		best, scores, err := local.Pick(ctx, msgs, c.feedback, c.answers, judge.Refusals(c.answers, c.feedback))
		if err != nil {
			t.Fatal(err)
		}
		for i, a := range c.answers {
			viaHTTP, err := remote.Score(ctx, msgs, c.feedback, a)
			if err != nil {
				t.Fatalf("%s: answer %d through the gateway: %v", c.name, i, err)
			}
			if math.Abs(viaHTTP-scores[i]) > 1e-3 {
				t.Errorf("%s: answer %d scores %.5f locally, %.5f through the gateway", c.name, i, scores[i], viaHTTP)
			}
		}
		gain := &judge.HintGain{Teacher: &judge.Teacher{Engine: eng, Adapter: engine.AdapterBase}}
		gains := make([]float64, len(c.answers))
		for i, a := range c.answers {
			ids := append(eng.Format().Encode(a), eng.Format().StopIDs()[0])
			if gains[i], err = gain.Score(ctx, msgs, nil, "", c.feedback, ids); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("%s: judge scores %.3f, pick %d; hint gains %.3f", c.name, scores, best, gains)
		if c.want >= 0 && best != c.want {
			t.Errorf("%s: picked answer %d (scores %.3f), want %d", c.name, best, scores, c.want)
		}
		if bestGain := slices.Index(gains, slices.Max(gains)); c.wantGain >= 0 && bestGain != c.wantGain {
			t.Errorf("%s: the hint gain picks answer %d (gains %.3f), want %d", c.name, bestGain, gains, c.wantGain)
		}
	}
}

// TestRelevanceOnDemoModel: read by the demo model, an answer to the
// question is likelier after it than with the feedback alone (relevance
// > 0), and a reply to the feedback itself is not (the French teacher's
// "Bien sûr, je serai ravi de vous aider.", which gains from the feedback
// as much as a French answer does), so --teacher-select-relevance keeps
// the answer and drops the reply. A reply that names the topic can pass
// the relevance; its opening is no likelier after the question
// (--teacher-select-opening 0.5 drops it), an answer's is.
func TestRelevanceOnDemoModel(t *testing.T) {
	eng := demoEngine(t)
	ctx := context.Background()
	gain := &judge.HintGain{Teacher: &judge.Teacher{Engine: eng, Adapter: engine.AdapterBase}}
	french := "Réponds en français, s'il te plaît. Answer in French."
	var ranks []float64 // --teacher-select-relevance's rank (judge.RelevantRank)
	for _, c := range []struct {
		question, feedback, answer string
		relevant, opens            bool
	}{
		{"What is a library?", french, "Une bibliothèque est un lieu où l'on emprunte et lit des livres.", true, true},
		{"What is a library?", french, "Bien sûr, je serai ravi de vous aider.", false, false},
		{"What do dogs eat?", french, "Les chiens mangent de la viande, des croquettes et parfois des légumes.", true, true},
		{"What do dogs eat?", french, "Bien sûr, je suis prêt à vous répondre en français.", false, false},
		{"What do dogs eat?", french, "Bien sûr, je peux vous parler de ce que mangent les chiens.", true, false},
		{"Tell me about birds.", french, "Les oiseaux sont des animaux à plumes qui pondent des œufs.", true, true},
		{"Tell me about birds.", french, "Bien sûr, je serai heureux de vous aider avec les informations sur les oiseaux.", false, false},
	} {
		msgs := []chat.Message{{Role: chat.RoleUser, Content: c.question}}
		ids := append(eng.Format().Encode(c.answer), eng.Format().StopIDs()[0])
		rd, err := gain.ScoreRelevant(ctx, msgs, nil, "", c.feedback, ids)
		if err != nil {
			t.Fatal(err)
		}
		g, rel := rd.Gain, rd.Relevance
		only, err := gain.Score(ctx, msgs, nil, "", c.feedback, ids)
		if err != nil || only != g {
			t.Errorf("%q: gain %v alone, %v beside the relevance (%v)", c.answer, only, g, err)
		}
		t.Logf("%q after %q: gain %.3f, relevance %.3f, opening %.3f", c.answer, c.question, g, rel, rd.Opening)
		ranks = append(ranks, judge.RelevantRank(rd, 0))
		if (rel > 0) != c.relevant {
			t.Errorf("%q after %q: relevance %.3f, want it above 0: %v", c.answer, c.question, rel, c.relevant)
		}
		if kept := !math.IsInf(judge.RelevantRank(rd, 0.5), -1); kept != c.opens {
			t.Errorf("%q after %q: opening %.3f, kept under --teacher-select-opening 0.5: %v, want %v", c.answer, c.question, rd.Opening, kept, c.opens)
		}
	}
	// A reply that names the topic is about the question, but the answer
	// ranks above it.
	if ranks[2] <= ranks[4] {
		t.Errorf("dogs: the answer ranks %.3f, the reply that names the topic %.3f", ranks[2], ranks[4])
	}
}
