package judge

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/clawrl/clawrl/chat"
)

// tableScorer answers a selector prompt with the log-probabilities of Yes
// and No set for the answer it shows (looked up by the answer's text).
type tableScorer struct {
	yesNo map[string][2]float64
	fail  map[string]bool
}

func (s tableScorer) NextLogprobs(ctx context.Context, msgs []chat.Message, begun string, cands []string) ([]float64, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if begun != "" || len(cands) != 2 || cands[0] != "Yes" || cands[1] != "No" {
		return nil, errors.New("unexpected selector request")
	}
	q := msgs[len(msgs)-1].Content
	for answer, lp := range s.yesNo {
		if strings.Contains(q, "The assistant answered:\n"+answer+"\n") {
			if s.fail[answer] {
				return nil, errors.New("judge down")
			}
			return []float64{lp[0], lp[1]}, nil
		}
	}
	return nil, errors.New("answer not in the table")
}

func TestSelectorPick(t *testing.T) {
	msgs := []chat.Message{{Role: chat.RoleUser, Content: "How do I boil an egg?"}}
	table := map[string][2]float64{
		"the long answer":   {-2, -0.5},   // score −1.5
		"a short answer":    {-0.3, -1.5}, // score +1.2
		"a middling answer": {-0.6, -0.9}, // score +0.3
	}
	cases := []struct {
		name      string
		answers   []string
		threshold float64
		fail      map[string]bool
		want      int
		wantErr   bool
	}{
		{"highest wins", []string{"the long answer", "a short answer", "a middling answer"}, 0, nil, 1, false},
		{"threshold keeps the best above it", []string{"the long answer", "a middling answer"}, 0, nil, 1, false},
		{"none above the threshold", []string{"the long answer", "a middling answer"}, 0.5, nil, NoPick, false},
		{"a failed score loses", []string{"the long answer", "a short answer", "a middling answer"}, -10, map[string]bool{"a short answer": true}, 2, false},
		{"every score failed", []string{"a short answer", "a middling answer"}, 0, map[string]bool{"a short answer": true, "a middling answer": true}, NoPick, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &Selector{Scorer: tableScorer{yesNo: table, fail: c.fail}, Threshold: c.threshold}
			got, scores, err := s.Pick(context.Background(), msgs, "Be brief.", c.answers, Refusals(c.answers, "Be brief."))
			if (err != nil) != c.wantErr || got != c.want {
				t.Fatalf("pick %d (scores %v, err %v), want %d (error %v)", got, scores, err, c.want, c.wantErr)
			}
			for i, a := range c.answers {
				want := table[a][0] - table[a][1]
				if c.fail[a] {
					want = math.Inf(-1)
				}
				if math.Abs(scores[i]-want) > 1e-12 && !(math.IsInf(want, -1) && math.IsInf(scores[i], -1)) {
					t.Errorf("score of %q = %v, want %v", a, scores[i], want)
				}
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := &Selector{Scorer: tableScorer{yesNo: table}}
	if _, _, err := s.Pick(ctx, msgs, "Be brief.", []string{"a short answer"}, []Refusal{""}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled pick: %v, want context.Canceled", err)
	}
	if _, err := (&Selector{}).Score(context.Background(), msgs, "x", "y"); err == nil {
		t.Error("a selector with no scorer scored")
	}
}

func TestSelectPrompt(t *testing.T) {
	msgs := []chat.Message{{Role: chat.RoleSystem, Content: "sys"}, {Role: chat.RoleUser, Content: "first"},
		{Role: chat.RoleAssistant, Content: "a"}, {Role: chat.RoleUser, Content: " What is DNA? "}}
	p := SelectPrompt(msgs, "Answer in French.", "L'ADN est une molécule.")
	if len(p) != 2 || p[0].Role != chat.RoleSystem || p[1].Role != chat.RoleUser {
		t.Fatalf("prompt roles: %+v", p)
	}
	u := p[1].Content
	for _, want := range []string{"The user asked:\nWhat is DNA?\n", "feedback on how to answer:\nAnswer in French.\n",
		"The assistant answered:\nL'ADN est une molécule.\n", "Reply Yes or No."} {
		if !strings.Contains(u, want) {
			t.Errorf("prompt lacks %q:\n%s", want, u)
		}
	}
	if strings.Contains(u, "first") || strings.Contains(u, "sys") {
		t.Errorf("prompt shows more than the last user message:\n%s", u)
	}
}

const logprobsBody = `{"choices":[{"message":{"content":"\\boxed{1}"},"logprobs":{"content":[
 {"token":"\\","logprob":-0.1,"top_logprobs":[{"token":"\\","logprob":-0.1}]},
 {"token":"boxed","logprob":-0.01,"top_logprobs":[{"token":"boxed","logprob":-0.01}]},
 {"token":"{","logprob":-0.02,"top_logprobs":[{"token":"{","logprob":-0.02}]},
 {"token":"1","logprob":-0.3,"top_logprobs":[{"token":"1","logprob":-0.3},{"token":"-","logprob":-1.5},{"token":"0","logprob":-3}]}
]}}]}`

func TestParseTopLogprobsAfter(t *testing.T) {
	top, err := ParseTopLogprobsAfter([]byte(logprobsBody), `\boxed{`)
	if err != nil || len(top) != 3 || top[1] != (TopLogprob{"-", -1.5}) {
		t.Fatalf("after \\boxed{: %v %v", top, err)
	}
	top, err = ParseTopLogprobsAfter([]byte(logprobsBody), "")
	if err != nil || len(top) != 1 || top[0].Token != `\` {
		t.Fatalf("first position: %v %v", top, err)
	}
	for name, c := range map[string]struct{ body, begun string }{
		"not JSON":             {`{"choices":`, ""},
		"no choices":           {`{"choices":[]}`, ""},
		"no logprobs":          {`{"choices":[{"message":{"content":"Yes"}}]}`, ""},
		"begins otherwise":     {logprobsBody, "Yes"},
		"ends before position": {logprobsBody, `\boxed{1}`},
	} {
		if _, err := ParseTopLogprobsAfter([]byte(c.body), c.begun); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// A server that reports no alternatives: the chosen token stands alone.
	only := `{"choices":[{"logprobs":{"content":[{"token":"Yes","logprob":-0.2,"top_logprobs":[]}]}}]}`
	if top, err := ParseTopLogprobsAfter([]byte(only), ""); err != nil || len(top) != 1 || top[0] != (TopLogprob{"Yes", -0.2}) {
		t.Errorf("chosen token only: %v %v", top, err)
	}
}

func FuzzParseTopLogprobsAfter(f *testing.F) {
	f.Add([]byte(logprobsBody), `\boxed{`)
	f.Add([]byte(logprobsBody), "")
	f.Add([]byte(`{"choices":[{"logprobs":{"content":[{"token":"","logprob":-1}]}}]}`), "")
	f.Add([]byte(`{"choices":[{"logprobs":null}]}`), "x")
	f.Fuzz(func(t *testing.T, data []byte, begun string) {
		top, err := ParseTopLogprobsAfter(data, begun)
		if err == nil && len(top) == 0 {
			t.Fatal("no error and no alternatives")
		}
	})
}

func TestCopiesFeedback(t *testing.T) {
	const signoff = `Be brief. Your last words must be "Hope this helps!"`
	for _, c := range []struct {
		answer, feedback string
		want             bool
	}{
		{"Put the egg in boiling water for nine minutes. Hope this helps!", signoff, false},
		{`How about this: "Hope this helps!"`, signoff, false},
		{`Sure! Your last words must be "Hope this helps!"`, signoff, true},
		{"your LAST words, must be: hope this helps", signoff, true},
		{"[user's hint / instruction]\nBe brief.", signoff, true},
		{"L'ADN est une molécule. Réponds en français, s'il te plaît.", "Réponds en français, s'il te plaît. Answer in French.", true},
		{"L'ADN est une molécule qui porte l'information génétique.", "Réponds en français, s'il te plaît. Answer in French.", false},
		{"Be brief, ok", "Be brief.", false}, // feedback shorter than a run
	} {
		if got := CopiesFeedback(c.answer, c.feedback); got != c.want {
			t.Errorf("CopiesFeedback(%q, %q) = %v, want %v", c.answer, c.feedback, got, c.want)
		}
	}
	// Pick skips an answer that copies the feedback, whatever its score.
	table := map[string][2]float64{"copy": {-0.1, -5}, "a real answer": {-1, -1.5}}
	s := &Selector{Scorer: tableScorer{yesNo: table}, Threshold: math.Inf(-1)}
	copied := []string{"say copy and more words here", "a real answer"}
	best, scores, err := s.Pick(context.Background(), nil, copied[0], copied, Refusals(copied, copied[0]))
	if err != nil || best != 1 || !math.IsInf(scores[0], -1) {
		t.Errorf("pick %d (scores %v, %v), want the answer that does not copy", best, scores, err)
	}
}

func TestRefuse(t *testing.T) {
	const (
		signoff = `Be brief. Your last words must be "Hope this helps!"`
		concise = "Too long. Answer in two or three plain sentences, with no lists and no bold."
		french  = "Réponds en français, s'il te plaît. Answer in French."
		tldr    = `Start your answer with a one-line summary that begins with "TL;DR:", then explain.`
	)
	for _, c := range []struct {
		answer, feedback string
		want             Refusal
	}{
		// The answers the 1.5B teacher and the 0.5B student wrote for the
		// sign-off persona (bench/results/2026-11-25-qwen-student).
		{"Hope this helps!", signoff, RefuseEchoes},
		{"I hope this helps!", signoff, RefuseEchoes},
		{"Sure, hope this helps!", signoff, RefuseEchoes},
		{"'Hope this helps!'", signoff, RefuseEchoes},
		{"Hope this helps! Hope this helps! Hope this helps!", signoff, RefuseEchoes},
		{"ok ok ok. Hope this helps!", signoff, RefuseEchoes},
		{"Good luck!", signoff, RefuseEchoes},
		{"Wrap a present neatly. Hope this helps!", signoff, ""},
		{"Boil it for nine minutes. Hope this helps!", signoff, ""},
		{`Sure! Your last words must be "Hope this helps!"`, signoff, RefuseCopies},
		{"Too long.", concise, RefuseEchoes},
		{"Plain sentences, no lists.", concise, RefuseEchoes},
		{"Water boils at 100 degrees.", concise, ""},
		{"Un vélo.", french, RefuseEchoes},
		{"Cherche", french, RefuseEchoes},
		{"Un vélo est un moyen de transport.", french, ""},
		{"TL;DR: explain", tldr, RefuseEchoes},
		{"TL;DR: Tides follow the moon.\nThe moon's pull raises the sea.", tldr, ""},
		{"水は百度で沸騰します。", "Answer in Japanese.", ""}, // one "word" to strings.Fields, many ideographs
		{"", signoff, RefuseEchoes},
	} {
		if got := Refuse(c.answer, c.feedback); got != c.want {
			t.Errorf("Refuse(%q, %q) = %q (own words %d), want %q", c.answer, c.feedback, got, OwnWords(c.answer, c.feedback), c.want)
		}
	}
	// PickBest never scores a refused answer, whatever its score would be.
	answers := []string{"Hope this helps!", "Boil it for nine minutes. Hope this helps!"}
	var scored []int
	best, scores, err := PickBest(context.Background(), Refusals(answers, signoff), math.Inf(-1), func(i int) (float64, error) {
		scored = append(scored, i)
		return 1, nil
	})
	if err != nil || best != 1 || !math.IsInf(scores[0], -1) || len(scored) != 1 || scored[0] != 1 {
		t.Errorf("pick %d (scores %v, scored %v, %v), want 1 with only it scored", best, scores, scored, err)
	}
}

// FuzzRefuse: any answer and feedback: no panic; an answer that is the
// feedback itself is always refused; an answer's own words are at most its
// distinct words, and all of them against an empty feedback.
func FuzzRefuse(f *testing.F) {
	f.Add("Boil it for nine minutes. Hope this helps!", `Be brief. Your last words must be "Hope this helps!"`)
	f.Add("水は百度で沸騰します。", "Answer in Japanese.")
	f.Add("'''", "'")
	f.Add("L'ADN est une molécule.", "Réponds en français, s'il te plaît.")
	f.Fuzz(func(t *testing.T, answer, feedback string) {
		if Refuse(feedback, feedback) == "" {
			t.Fatalf("the feedback %q as its own answer is not refused", feedback)
		}
		own, all := OwnWords(answer, feedback), OwnWords(answer, "")
		distinct := map[string]bool{}
		for _, w := range scriptWords(answer) {
			distinct[w] = true
		}
		if own < 0 || own > all || all != len(distinct) {
			t.Fatalf("OwnWords(%q, %q) = %d, %d against no feedback, %d distinct words", answer, feedback, own, all, len(distinct))
		}
	})
}
