package judge

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine/scripted"
	"github.com/clawrl/clawrl/store"
)

// recordBackend answers every prompt with answer and records the prompts
// and sampling settings it was asked with.
type recordBackend struct {
	answer string
	err    error
	msgs   [][]chat.Message
	params []Params
}

func (b *recordBackend) Name() string { return "record" }
func (b *recordBackend) Complete(ctx context.Context, msgs []chat.Message, p Params) (string, error) {
	b.msgs, b.params = append(b.msgs, msgs), append(b.params, p)
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return b.answer, b.err
}

func tldrInput() Input {
	return Input{
		TurnID: "t1", SessionID: "s1",
		Messages: []chat.Message{{Role: chat.RoleUser, Content: "How do vaccines work?"}},
		Response: chat.Message{Role: chat.RoleAssistant, Content: "TL;DR: Vaccines train the immune system, using a weakened or inactivated germ or a piece of it, to recognise a pathogen and build antibodies and memory cells so that a later infection is fought off quickly."},
		NextKind: store.NextFeedback, FeedbackRating: -1, FeedbackText: "Your TL;DR: line was too long.",
	}
}

// TestWrittenHintRewrite: under --written-hint rewrite the written feedback
// is rewritten by the judge, greedily and bounded, from a prompt that shows
// the task, the answer and the feedback; a judge that writes no hint leaves
// the feedback as written; as-is asks nothing.
func TestWrittenHintRewrite(t *testing.T) {
	const rewritten = `Start with "TL;DR:" and a summary of at most 25 words, then explain.`
	t.Run("rewritten", func(t *testing.T) {
		b := &recordBackend{answer: "[HINT] " + rewritten + " [/HINT]"}
		j := New(b, Config{Written: WrittenRewrite, HintTokens: 48}, quietLog())
		in := tldrInput()
		in.FeedbackText = `Your TL;DR: line was too long. Keep the "TL;DR:" and cut it to 25 words.`
		got, err := j.Judge(context.Background(), in, Request{Score: true, Hint: true})
		if err != nil {
			t.Fatal(err)
		}
		if got.Score != -1 || got.Hint != rewritten || !got.HintAccepted {
			t.Fatalf("score %d, hint %q accepted %v", got.Score, got.Hint, got.HintAccepted)
		}
		if len(b.msgs) != 1 {
			t.Fatalf("%d judge calls, want 1 (the rating decides the score)", len(b.msgs))
		}
		if p := b.params[0]; p.Temperature != 0 || p.MaxTokens != 48 || len(p.Stop) != 1 || p.Stop[0] != HintEnd {
			t.Errorf("rewrite asked with %+v, want greedy, 48 tokens, stop at %s", p, HintEnd)
		}
		m := b.msgs[0]
		if m[0].Role != chat.RoleSystem || m[len(m)-1].Role != chat.RoleUser || m[len(m)-2].Role != chat.RoleAssistant {
			t.Fatalf("rewrite prompt roles: the rules, worked cases, then the case: %+v", m)
		}
		prompt := m[0].Content + m[len(m)-1].Content
		for _, want := range []string{"How do vaccines work?", "inactivated germ", in.FeedbackText, "WITHOUT the earlier answer", HintStart} {
			if !strings.Contains(prompt, want) {
				t.Errorf("rewrite prompt lacks %q", want)
			}
		}
		var rw []store.Vote
		for _, v := range got.Votes {
			if v.Kind == store.VoteHint {
				rw = append(rw, v)
			}
		}
		if len(rw) != 1 || rw[0].Source != "rewrite" || !rw[0].Valid || rw[0].Hint != rewritten || rw[0].Raw == "" {
			t.Errorf("hint votes %+v, want the one rewrite", rw)
		}
	})
	for name, b := range map[string]*recordBackend{
		"no hint written":   {answer: "The answer was too long."},
		"hint too short":    {answer: "[HINT]Shorter.[/HINT]"},
		"backend down":      {err: errors.New("connection refused")},
		"quoted words lost": {answer: `[HINT]Start with a short summary line, then explain.[/HINT]`},
	} {
		t.Run(name, func(t *testing.T) {
			j := New(b, Config{Written: WrittenRewrite, Retries: NoRetries}, quietLog())
			in := tldrInput()
			in.FeedbackText = `Your summary line was too long; begin with “TL;DR:” as before.`
			got, err := j.Judge(context.Background(), in, Request{Score: true, Hint: true})
			if err != nil {
				t.Fatal(err)
			}
			if got.Hint != in.FeedbackText || !got.HintAccepted {
				t.Fatalf("hint %q, want the feedback as written", got.Hint)
			}
			var sources []string
			for _, v := range got.Votes {
				if v.Kind == store.VoteHint {
					sources = append(sources, v.Source)
					if v.Source == "rewrite" && (v.Valid || v.Err == "") {
						t.Errorf("failed rewrite recorded as %+v", v)
					}
				}
			}
			if strings.Join(sources, ",") != "rewrite,feedback" {
				t.Errorf("hint votes from %v, want the failed rewrite then the feedback", sources)
			}
		})
	}
	t.Run("a correcting next message", func(t *testing.T) {
		b := &recordBackend{answer: "[HINT] Answer in kilometres with two decimals. [/HINT]"}
		j := New(b, Config{Written: WrittenRewrite, NextHint: NextHintAlways}, quietLog())
		in := testInput()
		in.Next = []chat.Message{{Role: chat.RoleUser, Content: "no, in km and exact please"}}
		got, err := j.Judge(context.Background(), in, Request{Hint: true})
		if err != nil {
			t.Fatal(err)
		}
		m := b.msgs[len(b.msgs)-1]
		if got.Hint != "Answer in kilometres with two decimals." || !strings.Contains(m[len(m)-1].Content, "no, in km and exact please") {
			t.Errorf("hint %q", got.Hint)
		}
	})
	t.Run("as-is asks nothing", func(t *testing.T) {
		b := &recordBackend{answer: "[HINT] anything at all [/HINT]"}
		j := New(b, Config{}, quietLog())
		in := tldrInput()
		got, err := j.Judge(context.Background(), in, Request{Score: true, Hint: true})
		if err != nil {
			t.Fatal(err)
		}
		if got.Hint != in.FeedbackText || len(b.msgs) != 0 {
			t.Errorf("hint %q after %d judge calls", got.Hint, len(b.msgs))
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		j := New(&recordBackend{answer: "[HINT] " + rewritten + " [/HINT]"}, Config{Written: WrittenRewrite, Retries: NoRetries}, quietLog())
		if _, err := j.Judge(ctx, tldrInput(), Request{Hint: true}); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want canceled", err)
		}
	})
}

func TestParseWrittenHintMode(t *testing.T) {
	for in, want := range map[string]WrittenHintMode{"": WrittenAsIs, "as-is": WrittenAsIs, "rewrite": WrittenRewrite} {
		if got, err := ParseWrittenHintMode(in); err != nil || got != want {
			t.Errorf("%q: %q, %v", in, got, err)
		}
	}
	if _, err := ParseWrittenHintMode("judge"); err == nil || !strings.Contains(err.Error(), "as-is or rewrite") {
		t.Errorf("err = %v", err)
	}
}

// TestRewriteOnEngine: the rewrite through the in-process engine backend
// (the loop's default judge): the worked cases render through the model's
// chat template, and the generation stops at the end marker.
func TestRewriteOnEngine(t *testing.T) {
	j := New(&EngineBackend{Engine: scripted.New(scripted.Options{})}, Config{Written: WrittenRewrite, Retries: NoRetries}, quietLog())
	in := tldrInput()
	in.FeedbackText = `Too long. [[say:[HINT] Start with "TL;DR:" and at most 25 words. [/HINT] and a tail]]`
	got, err := j.Judge(context.Background(), in, Request{Score: true, Hint: true})
	if err != nil {
		t.Fatal(err)
	}
	if got.Hint != `Start with "TL;DR:" and at most 25 words.` {
		t.Fatalf("hint %q, votes %+v", got.Hint, got.Votes)
	}
}

func TestLostQuote(t *testing.T) {
	for _, c := range []struct{ feedback, rewrite, lost string }{
		{`Be brief. Your last words must be "Hope this helps!"`, `Answer briefly and end with the exact words "Hope this helps!".`, ``},
		{`Be brief. Your last words must be "Hope this helps!"`, `Provide a brief answer to the question.`, `"Hope this helps!"`},
		{`Start with “TL;DR:” and one line`, `Begin with "TL;DR:" and a one-line summary.`, ``},
		{`Too long.`, `Answer in two sentences.`, ``},
		{`Use "a" and "b"`, `Use "a" only`, `"b"`},
		{`An odd " quote`, `anything`, ``},
	} {
		if got := lostQuote(c.feedback, c.rewrite); got != c.lost {
			t.Errorf("lostQuote(%q, %q) = %q, want %q", c.feedback, c.rewrite, got, c.lost)
		}
	}
}

// FuzzLostQuote: feedback text is outside input. A text keeps its own
// quotes, and a lost quote is one the rewrite does not contain.
func FuzzLostQuote(f *testing.F) {
	f.Add(`Your last words must be "Hope this helps!"`, `End with "Hope this helps!".`)
	f.Add(`“TL;DR:” first`, `no`)
	f.Add(`"" " "`, `"`)
	f.Fuzz(func(t *testing.T, feedback, rewrite string) {
		if got := lostQuote(feedback, feedback); got != "" {
			t.Fatalf("%q loses its own quote %s", feedback, got)
		}
		if got := lostQuote(feedback, rewrite); got != "" && strings.Contains(normQuotes(rewrite), strings.Trim(got, `"`)) {
			t.Fatalf("%s reported lost but is in %q", got, rewrite)
		}
	})
}

func TestWantedQuotes(t *testing.T) {
	for feedback, want := range map[string]string{
		`Be brief. Your last words must be "Hope this helps!"`:               `Hope this helps!`,
		`Never say "As an AI". End with “Cheers”.`:                           `Cheers`,
		`Don't forget to end with "Hope this helps!"`:                        `Hope this helps!`,
		`Please don't write "Sure!" first, start with "TL;DR:" instead.`:     `TL;DR:`,
		`Drop the "In conclusion" paragraph. Start with "TL;DR:" and a line`: `TL;DR:`,
		`Too long.`: ``,
	} {
		if got := strings.Join(WantedQuotes(feedback), "|"); got != want {
			t.Errorf("WantedQuotes(%q) = %q, want %q", feedback, got, want)
		}
	}
}

func TestPreferQuoted(t *testing.T) {
	texts := []string{"Boil it for nine minutes. Good luck!", "Boil it. Hope this helps!", "Hope this helps!", "Boil it for ten minutes. Hope this helps!"}
	wanted := []string{"Hope this helps!"}
	inf := math.Inf(-1)
	for _, c := range []struct {
		name   string
		scores []float64
		best   int
		pick   int
		masked []float64
	}{
		{"the best does not say them", []float64{0.9, 0.5, inf, 0.7}, 0, 3, []float64{inf, 0.5, inf, 0.7}},
		{"the best says them; the others are masked all the same", []float64{0.1, 0.9, inf, 0.7}, 1, 1, []float64{inf, 0.9, inf, 0.7}},
		{"none above the threshold says them", []float64{0.9, -0.5, inf, -0.1}, 0, 0, []float64{0.9, -0.5, inf, -0.1}},
		{"no pick stays no pick", []float64{-1, -1, -1, -1}, NoPick, NoPick, []float64{-1, -1, -1, -1}},
	} {
		pick, masked := PreferQuoted(c.best, c.scores, 0, texts, wanted)
		if pick != c.pick || !slices.Equal(masked, c.masked) {
			t.Errorf("%s: pick %d, scores %v; want %d, %v", c.name, pick, masked, c.pick, c.masked)
		}
	}
	if pick, _ := PreferQuoted(0, []float64{0.9, 0.5}, 0, texts[:2], nil); pick != 0 {
		t.Errorf("no wanted words: pick %d", pick)
	}
}
