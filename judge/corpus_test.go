package judge_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clawrl/clawrl/bench"
	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine/native"
	"github.com/clawrl/clawrl/judge"
	"github.com/clawrl/clawrl/modelref/demotest"
	"github.com/clawrl/clawrl/store"
)

// labelled is one next message with the score a person would give it.
type labelled struct {
	Label int
	Text  string
	// HeldOut: below the corpus's "# held-out" line, never used to fit
	// anything (demonstrations, the neutral bias).
	HeldOut bool
}

// readCorpus reads testdata/next_messages.tsv (label TAB message; the
// lines after "# held-out" are the held-out split).
func readCorpus(t testing.TB) []labelled {
	t.Helper()
	f, err := os.Open("testdata/next_messages.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []labelled
	heldOut := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "# held-out" {
			heldOut = true
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		label, text, ok := strings.Cut(line, "\t")
		l, err := strconv.Atoi(label)
		if !ok || err != nil || l < -1 || l > 1 || strings.TrimSpace(text) == "" {
			t.Fatalf("next_messages.tsv:%d: want label (-1, 0, 1) TAB message, got %q", n, line)
		}
		out = append(out, labelled{l, text, heldOut})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// corpusContexts are the conversations the corpus's messages answer, in
// turn: a long list-heavy answer (the demo model's habit), a short factual
// one, a piece of code, an everyday explanation.
var corpusContexts = []struct{ Task, Answer string }{
	{"How do I make a good cup of coffee?", "Making a great cup of coffee starts with a few key steps:\n\n1. **Choose fresh beans.** Buy whole beans and grind them just before brewing.\n2. **Use the right ratio.** About 2 tablespoons of coffee per 6 ounces of water.\n3. **Mind the water temperature.** Aim for 195–205°F.\n4. **Brew for the right time.** 4 minutes for a French press.\n\nEnjoy your coffee!"},
	{"What is the capital of Australia?", "The capital of Australia is Canberra."},
	{"Write a Python function that returns the largest number in a list.", "def largest(xs):\n    best = xs[0]\n    for x in xs:\n        if x > best:\n            best = x\n    return best"},
	{"Why do we need sleep?", "Sleep lets the body and brain recover. During sleep the brain sorts memories, the body repairs tissue, and hormones that control hunger and stress are balanced. Adults need about seven to nine hours a night."},
}

func corpusInput(i int, next string) judge.Input {
	c := corpusContexts[i%len(corpusContexts)]
	return judge.Input{
		TurnID: fmt.Sprintf("c%d", i), SessionID: "corpus",
		Messages: []chat.Message{{Role: chat.RoleUser, Content: c.Task}},
		Response: chat.Message{Role: chat.RoleAssistant, Content: c.Answer},
		Next:     []chat.Message{{Role: chat.RoleUser, Content: next}}, NextKind: store.NextUser,
	}
}

// confusion counts verdicts by label: m[label+1][score+1].
type confusion [3][3]int

func (m *confusion) add(label, score int) { m[label+1][score+1]++ }

func (m confusion) accuracy() float64 {
	ok, n := 0, 0
	for i := range m {
		for k := range m[i] {
			n += m[i][k]
			if i == k {
				ok += m[i][k]
			}
		}
	}
	return float64(ok) / float64(max(n, 1))
}

// correction is precision and recall of the -1 verdict: what decides
// whether a correction becomes the hint.
func (m confusion) correction() (precision, recall float64) {
	tp := m[0][0]
	predicted := m[0][0] + m[1][0] + m[2][0]
	actual := m[0][0] + m[0][1] + m[0][2]
	return float64(tp) / float64(max(predicted, 1)), float64(tp) / float64(max(actual, 1))
}

func (m confusion) String() string {
	var b strings.Builder
	b.WriteString("label \\ verdict   -1    0   +1\n")
	for i, name := range []string{"correction (-1)", "neutral (0)   ", "satisfied (+1)"} {
		fmt.Fprintf(&b, "%s  %4d %4d %4d\n", name, m[i][0], m[i][1], m[i][2])
	}
	p, r := m.correction()
	fmt.Fprintf(&b, "accuracy %.3f; recall: correction %.3f, neutral %.3f, satisfied %.3f; correction precision %.3f",
		m.accuracy(), r, m.recall(0), m.recall(1), p)
	return b.String()
}

// recall is the share of messages labelled label read as label.
func (m confusion) recall(label int) float64 {
	row := m[label+1]
	return float64(row[label+1]) / float64(max(1, row[0]+row[1]+row[2]))
}

// personaMessages are the benchmark personas' own next messages, never used
// to choose a reader: a correction per persona (-1), its thanks (+1) and its
// neutral follow-ups (0).
func personaMessages() []labelled {
	var out []labelled
	for _, p := range bench.Personas() {
		out = append(out, labelled{-1, p.Correction, true}, labelled{1, p.Thanks, true})
		for _, n := range p.Neutral {
			out = append(out, labelled{0, n, true})
		}
	}
	return out
}

// TestNextMessageCorpus measures the judge's verdicts on a labelled corpus
// of next messages with the demo model as its own judge: the few-shot
// reader (the loop's default), and with CLAWRL_JUDGE_CORPUS_BEFORE=1 also
// the zero-shot prefill verdict it replaced (two prefills of the whole case
// per message: ten minutes on a shared 2-core box, so not in CI). It
// reports the corpus's training split (what the reader's demonstrations and
// neutral bias were chosen on), its held-out split and the benchmark
// personas' own messages apart, with each class's recall. The bounds are
// well below what was measured (BENCHMARKS.md, "A judge of next messages"
// and "Neutral follow-ups") and far above the prefill verdict's.
func TestNextMessageCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("scores the corpus with the demo model")
	}
	eng, err := native.Open(demotest.GGUF(t), native.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	corpus := readCorpus(t)
	nHeld := 0
	for _, m := range corpus {
		if m.HeldOut {
			nHeld++
		}
	}
	if len(corpus)-nHeld < 150 || nHeld < 50 {
		t.Fatalf("corpus has %d training and %d held-out messages, want ≥ 150 and ≥ 50", len(corpus)-nHeld, nHeld)
	}
	backend := &judge.EngineBackend{Engine: eng}
	type reader struct {
		name string
		cfg  judge.Config
	}
	readers := []reader{{"fewshot", judge.Config{Verdict: judge.VerdictFewShot}}}
	if os.Getenv("CLAWRL_JUDGE_CORPUS_BEFORE") == "1" {
		readers = append(readers, reader{"prefill, neutral calibration (before)", judge.Config{Verdict: judge.VerdictPrefill}})
	}
	ctx := context.Background()
	type result struct{ train, held, personas confusion }
	results := map[string]result{}
	for _, r := range readers {
		cfg := r.cfg
		cfg.NoGeneratedHints, cfg.Retries = true, judge.NoRetries
		j := judge.New(backend, cfg, nil)
		var res result
		start := time.Now()
		score := func(i int, m labelled) int {
			got, err := j.Judge(ctx, corpusInput(i, m.Text), judge.Request{Score: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Votes) == 0 || !got.Votes[0].Valid {
				t.Fatalf("%s: %q: no valid verdict: %+v", r.name, m.Text, got.Votes)
			}
			if testing.Verbose() && os.Getenv("CLAWRL_CORPUS_DETAIL") == "1" {
				t.Logf("%s\t%+d\t%+d\t%s\t%s", r.name, m.Label, got.Score, m.Text, got.Votes[0].Raw)
			}
			return got.Score
		}
		for i, m := range corpus {
			if m.HeldOut {
				res.held.add(m.Label, score(i, m))
			} else {
				res.train.add(m.Label, score(i, m))
			}
		}
		personas := personaMessages()
		for i, m := range personas {
			// The personas' messages follow the long answer, as in the benchmark.
			res.personas.add(m.Label, score(i*len(corpusContexts), m))
		}
		results[r.name] = res
		t.Logf("%s: %d messages in %.1f s\ncorpus, training split:\n%v\ncorpus, held-out split:\n%v\nheld out, the benchmark personas' messages:\n%v",
			r.name, len(corpus)+len(personas), time.Since(start).Seconds(), res.train, res.held, res.personas)
	}
	fs := results["fewshot"]
	var all confusion
	for i := range all {
		for k := range all[i] {
			all[i][k] = fs.train[i][k] + fs.held[i][k]
		}
	}
	h := fs.held
	p, _ := all.correction()
	if h.accuracy() < 0.65 || h.recall(-1) < 0.55 || h.recall(0) < 0.6 || h.recall(1) < 0.8 {
		t.Errorf("few-shot verdict, held-out split: accuracy %.3f, recall: correction %.3f, neutral %.3f, satisfied %.3f; want ≥ 0.65, 0.55, 0.6, 0.8",
			h.accuracy(), h.recall(-1), h.recall(0), h.recall(1))
	}
	if p < 0.6 || fs.personas.recall(0) < 0.6 {
		t.Errorf("few-shot verdict: correction precision %.3f on the corpus, neutral recall %.3f on the personas' follow-ups; want ≥ 0.6 and 0.6",
			p, fs.personas.recall(0))
	}
}
