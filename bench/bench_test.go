package bench

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
)

func TestPersonaChecks(t *testing.T) {
	ps := map[string]*Persona{}
	for _, p := range Personas() {
		ps[p.Name] = p
	}
	cases := []struct {
		persona, answer string
		finished, want  bool
	}{
		{"concise", "Paris is the capital of France.", true, true},
		{"concise", "Paris is the capital of France.", false, false}, // cut off
		{"concise", "One. Two. Three. Four.", true, false},
		{"concise", "Here:\n- a\n- b", true, false},
		{"concise", "Here:\n1. a", true, false},
		{"concise", "It is **very** short.", true, false},
		{"concise", "## Title\nShort.", true, false},
		{"concise", strings.Repeat("word ", 41), true, false},
		{"concise", "", true, false},
		{"signoff", "Boil it for 7 minutes.\n\nHope this helps!", true, true},
		{"signoff", "Boil it. hope this helps :)", true, true},
		{"signoff", "Hope this helps! Boil it.", true, false},
		{"signoff", "Hope this helps!", true, false},   // the sign-off alone answers nothing
		{"signoff", "I hope this helps!", true, false}, // nor with one word more
		// The fall-back of the 1.5B-taught student (BENCHMARKS.md, "Why the
		// learned sign-off fell back after v3"): the sign-off again and again.
		{"signoff", "Try practicing your handwriting with a pen or a stylus. Hope this helps! Hope this helps! Hope this helps!", false, false},
		{"signoff", "Pack a map and a charger. Hope this helps! Hope this helps!", true, false},
		{"signoff", "Pack a backpack, a hat, a hat, a hat, a hat. Hope this helps!", true, false},
		{"concise", "Pack a backpack, a towel, a hat, a hat, a hat.", true, false},
		{"tldr", "TL;DR: pack light.\nA pair of hiking poles, a pair of hiking shoes, a pair of hiking poles, a pair of hiking shoes, a pair of hiking poles, a pair of hiking shoes", false, false},
		{"french", "Le ciel est bleu, le ciel est bleu, le ciel est bleu.", true, false},
		// v3 of the focused tldr seed 3 (1.5B, BENCHMARKS.md "A word that
		// stutters is a loop"): the first line right, then one word that
		// stutters to the token limit.
		{"tldr", "TL;DR: A car engine uses pistons and cylinders to compress and ignite fuel to produce energy.\n\nTL:TLTLTLTLTLTLTLTLTLTLTL", false, false},
		{"tldr", "TL;DR: boil for 7 minutes.\nMore detail follows.", true, true},
		// Liked answers the 1.5B's tldr seed 3 trained v4 on (focused, the
		// sixty-first session's rerun), and one of the pool's seed 3 at v6:
		// the summary said again, whole or cut, where the explanation goes.
		{"tldr", "TL;DR: The Cold War was a period of global political tension.\n\nTL: The Cold War was a period of global political tension.", true, false},
		{"tldr", "TL;DR: Solar panels convert sunlight into electrical energy.\n\nTL:TL;DR: Solar panels work by absorbing sunlight.", true, false},
		{"tldr", "TL;DR: GPS uses satellites.\n\nTL;DR: GPS uses satellites.", true, false},
		{"tldr", "TL;DR: Earthquakes come from moving plates.\n\n**TL; Summary:** plates move.", true, false},
		// A second label counts wherever it is said; a word that only
		// begins like one ("TLS") is no label.
		{"tldr", "TL;DR: TLS encrypts web traffic.\nTLS 1.3 needs one round trip; tl;dr-style notes aside, that is it.", true, false},
		{"tldr", "TL;DR: TLS encrypts web traffic.\nTLS 1.3 needs one round trip.", true, true},
		{"tldr", "**TL;DR:** boil it.", true, true},
		{"tldr", "Boil it. TL;DR: boil.", true, false},
		{"tldr", "TL;DR: " + strings.Repeat("long ", 30), true, false},
		{"french", "Le ciel est bleu parce que la lumière du soleil est diffusée.", true, true},
		{"french", "The sky is blue because of the scattering of light.", true, false},
		{"french", "Oui", true, false},
		// Answers that do not answer, in the persona's style (held-out
		// answers of the 6 × 8 runs, BENCHMARKS.md "Answers that do not
		// answer").
		{"french", "Bien sûr, je peux vous répondre en français.", true, false},
		{"french", "Je suis désolé, mais je ne peux pas répondre à cette question en français.", true, false},
		{"french", "Je ne peux pas répondre à cette question.", true, false},
		{"signoff", "I'm sorry, but I can't assist with that. Hope this helps!", true, false},
		{"signoff", "I’m sorry for any confusion. I'm here to help with your questions. Hope this helps!", true, false},
		{"concise", "I'm sorry, but I can't assist with that.", true, false},
		{"tldr", "TL;DR: I'm sorry, but I can't assist with that.", true, false},
		{"concise", "As an AI, I have no favourite season, but many people love spring for its flowers.", true, true},
		{"concise", "Soap lifts grease. I'm sorry if that is too short.", true, true}, // an apology after the answer
		{"french", "Bien sûr, je peux vous aider à comprendre comment les chats dorment.", true, false},
		{"french", "Bien sûr, je serai ravi de vous aider. Comment puis-je vous aider aujourd'hui ?", true, false},
		{"french", "Bien sûr, je peux vous aider. Les chats dorment seize heures par jour.", true, true},
		{"signoff", "Thank you for your kind words! Hope this helps!", true, false},
		// The nineteenth and twentieth sessions' teacher answers.
		{"french", "Bien sûr, je suis là pour répondre à tes questions en français. Comment puis-je vous aider aujourd'hui ?", true, false},
		{"french", "Quel est votre saison préférée et pourquoi ?", true, false},
		// Recorded held-out answers of the 2026-11-29 runs that the check let through:
		// an English refusal whose "don't" was read as a French elision, and talk.
		{"french", "Sorry, but I don't have information about horses.", true, false},
		{"french", "Bien sûr, je suis prêt à vous aider.", true, false},
		{"french", "Bien sûr, je suis prêt à répondre.", true, false},
		{"french", "Bien sûr, je serai heureux d'aider.", true, false},
		{"french", "Je vous serai heureux de vous aider.", true, false},
		{"french", "Je peux vous donner une description d'un arbre.", true, false},
		{"french", "Bonjour, je suis Qwen, un assistant créé par Alibaba Cloud. Comment puis-je vous aider aujourd'hui ?", true, false},
		{"french", "L'eau est bleue parce qu'elle absorbe le rouge.", true, true},
		{"french", "L’eau est là.", true, true}, // a curly apostrophe elides too
		{"french", "Sorry, I don’t know.", true, false},
		{"french", "Pourquoi le ciel est-il bleu ? Parce que la lumière du soleil est diffusée par l'air.", true, true},
		{"concise", "Why? Because soap lifts grease!", true, true},
		// Answers of the seventy-seventh session's french student of seed 7
		// in Portuguese and Spanish, which share "de" and "que" with French:
		// the first and last were taken for French (BENCHMARKS.md, "Pushed
		// down until the gate passes").
		{"french", "Um dia chuvoso é um dia de clima que tem uma atmosfera de sensação de estar dentro de um carro de fogo, com nuvens, chuva e sol.", true, false},
		{"french", "Uma cidade bela é uma cidade que é atraente e alegre para os visitantes, com uma vibe de paz, satisfação e diversidade.", true, false},
		{"french", "Los perros comen variedades de comida, pero generalmente comen alimento sencillo y saludable.", true, false},
		{"french", "Forest é uma estrutura de dados que representa uma floresta de árvores.", true, false},
		{"french", "Un bon cadeau pour un ami est un livre, comme dit le proverbe italien « che sarà sarà ».", true, true},
		// Offers of the thirty-first session's french students (held-out
		// answers at v6 of 2026-11-30-opening/french-15-relfitqgo-s1).
		{"french", "Bien sûr, je peux vous donner des informations sur l'océan.", true, false},
		{"french", "Bien sûr, je peux vous donner une réponse en français sur le Soleil.", true, false},
		{"french", "Bien sûr, je peux vous parler de ce que mangent les chiens.", true, false},
		{"french", "Bien sûr, je peux vous donner des informations sur l'océan. Il couvre 71 % de la Terre.", true, true},
		{"concise", "I can give you information about the moon.", true, false},
		// Offers that ask back what the question already said, which the
		// simulated french users liked until the fifty-fourth session
		// (trained as liked answers in all six seeds of the six-seed pool;
		// BENCHMARKS.md, "Talk that does not answer").
		{"french", "Bien sûr, je serai ravi de vous aider. Qu'en voulez-vous savoir sur la lune ?", true, false},
		{"french", "Bien sûr, je serai ravi de vous aider. Quel est votre question sur le océan ?", true, false},
		{"french", "// Bien sûr, je serai ravi de vous aider. Qu'en voulez-vous savoir sur la wind ?", true, false},
		{"french", "Bien sûr, je peux vous aider à répondre à votre question en français. Quel est votre question sur les rivières ? Est-ce sur leur histoire, leur importance ou leurs caractéristiques ?", true, false},
		{"concise", "I'd be happy to help. What would you like to know about the moon?", true, false},
		// ... but an answer after the question answers, and so does one cut
		// mid-sentence after it (the cut sentence is not a question).
		{"french", "Bien sûr, je serai ravi de vous aider. Qu'en voulez-vous savoir sur la lune ? Elle tourne autour de la Terre en 27 jours.", true, true},
		{"french", "Bien sûr ! Que voulez-vous savoir ? La lune est le seul satellite naturel de la Terre et elle", false, true},
		// Liked until the sixty-second session: a second TL;DR is not the
		// explanation the user asked to follow the summary (SummarisesOnce).
		{"tldr", "TL;DR: What is rain?TL;DR: Rain is water falling from clouds.", true, false},
		// Talk the french students of the same session said, liked until
		// then, and an answer that follows talk after a colon.
		{"french", "Bien sûr, je serai ravi de répondre à votre question en français.", true, false},
		{"french", "Bien sûr, je serai ravi de répondre à votre question.", true, false},
		{"french", "Bien sûr, je suis ravie de vous aider.", true, false},
		{"french", "Je suis toujours à votre disposition pour répondre à toutes vos questions.", true, false},
		{"concise", "Sure, I'd be happy to tell you about trees!", true, false},
		{"concise", "Great question! If you have other questions, feel free to ask.", true, false},
		{"french", "Bien sûr, je serai ravi de répondre à votre question sur la Terre, en français : la Terre est la seule planète habitée du système solaire.", true, true},
		{"french", "Bien sûr, je peux vous répondre en français :\n\nLa Terre tourne autour du Soleil.", true, true},
		{"signoff", "Subject: Writing a Good Email\n\nDear [Recipient's Name],\n\nI hope this helps!", true, false}, // a colon after no talk splits nothing
	}
	for _, c := range cases {
		if got := ps[c.persona].Satisfied(Answer{Text: c.answer, Finished: c.finished}); got != c.want {
			t.Errorf("%s(%q, finished %v) = %v, want %v", c.persona, c.answer, c.finished, got, c.want)
		}
	}
}

// FuzzEvades: Evades never panics, and neither the space around an
// answer nor its apostrophes' typography change it.
func FuzzEvades(f *testing.F) {
	for _, s := range []string{"I'm sorry, but I can't assist with that.", "Bien sûr, je peux vous répondre en français.", "Paris.", "", "éééé’’’", "İ sorry",
		"Bien sûr, je peux vous aider. Les chats dorment.", "Quoi ? Pourquoi ?", "?",
		"Bien sûr, je serai ravi de vous aider. Qu'en voulez-vous savoir sur la lune ?", "Que voulez-vous savoir ? La lune tourne",
		"Bien sûr, je serai ravi de répondre : la Terre est ronde.", "Voici : \n", ": a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Evades(s)
		if padded := Evades(" \n" + s + "\n "); padded != got {
			t.Fatalf("Evades(%q) = %v, %v with space around it", s, got, padded)
		}
		if curly := Evades(strings.ReplaceAll(s, "'", "’")); curly != got {
			t.Fatalf("Evades(%q) = %v, %v with curly apostrophes", s, got, curly)
		}
	})
}

func TestPersonaPools(t *testing.T) {
	seen := map[string]string{}
	for _, p := range Personas() {
		if len(p.Eval) != evalPer || len(p.Train) < 16 {
			t.Errorf("%s: %d eval, %d train prompts", p.Name, len(p.Eval), len(p.Train))
		}
		for _, q := range append(append([]string{}, p.Train...), p.Eval...) {
			if other, dup := seen[q]; dup {
				t.Errorf("%q is in %s and %s", q, other, p.Name)
			}
			seen[q] = p.Name
		}
	}
	// Held-out questions must not be near-duplicates of anything the loop
	// trains on or the retention set asks: no two share half their
	// content words.
	if contentOverlap("What is a black hole?", "What are black holes?") != 1 || contentOverlap("How do magnets work?", "How does a thermometer work?") != 0 {
		t.Error("contentOverlap does not see a reworded question as the same one")
	}
	var others []string
	for _, p := range Personas() {
		others = append(append(others, p.Train...), p.Neutral...)
	}
	for _, f := range Retention {
		others = append(others, f.Question)
	}
	for _, p := range Personas() {
		for i, q := range p.Eval {
			for _, o := range append(append([]string{}, others...), p.Eval[i+1:]...) {
				if sim := contentOverlap(q, o); sim >= 0.5 {
					t.Errorf("%s: held-out %q and %q share %.2f of their content words", p.Name, q, o, sim)
				}
			}
		}
	}
	for _, f := range Retention {
		if !f.Correct("The answer: " + f.Accept[0] + ".") {
			t.Errorf("%q does not accept its own answer %q", f.Question, f.Accept[0])
		}
	}
	if (Fact{Accept: []string{"4"}}).Correct("It is 42.") {
		t.Error("4 matched inside 42")
	}
}

func TestWilson(t *testing.T) {
	// Reference values: the Wilson score interval (Wilson 1927; the same as
	// statsmodels proportion_confint(k, n, method="wilson")), computed by hand.
	for _, c := range []struct {
		k, n      int
		low, high float64
	}{
		{5, 10, 0.236593, 0.763407},
		{0, 10, 0, 0.277533},
		{10, 10, 0.722467, 1},
		{76, 100, 0.667677, 0.833087},
	} {
		p := Wilson(c.k, c.n)
		if math.Abs(p.Low-c.low) > 5e-4 || math.Abs(p.High-c.high) > 5e-4 {
			t.Errorf("Wilson(%d, %d) = [%.6f, %.6f], want [%.6f, %.6f]", c.k, c.n, p.Low, p.High, c.low, c.high)
		}
	}
	if p := Wilson(0, 0); p.N != 0 || p.String() != "–" {
		t.Errorf("Wilson(0, 0) = %+v", p)
	}
}

func TestSummariseAndRender(t *testing.T) {
	runs := []Run{
		{Arm: "off", Method: "off", Persona: "concise", Seed: 1, Evals: []Eval{{Round: 0, Satisfied: 2, Asked: 10, RetentionRight: 8, RetentionAsked: 8},
			{Round: 1, Satisfied: 2, Asked: 10, RetentionRight: 8, RetentionAsked: 8}}},
		{Arm: "rl", Method: "rl", Persona: "concise", Seed: 1, Evals: []Eval{{Round: 0, Satisfied: 2, Asked: 10, RetentionRight: 8, RetentionAsked: 8},
			{Round: 1, Satisfied: 6, Asked: 10, RetentionRight: 7, RetentionAsked: 8, Unfocused: true, Short: true}}},
		{Arm: "rl", Method: "rl", Persona: "concise", Seed: 2, Stalled: "round 2", Evals: []Eval{{Round: 0, Satisfied: 3, Asked: 10, RetentionRight: 8, RetentionAsked: 8},
			{Round: 1, Satisfied: 3, Asked: 10, RetentionRight: 8, RetentionAsked: 8, Held: true}}},
	}
	sums := Summarise(runs)
	if len(sums) != 2 || sums[0].Arm != "off" || sums[1].Arm != "rl" {
		t.Fatalf("arms %+v", sums)
	}
	rl := sums[1]
	if rl.Stalled != 1 || rl.Held != 1 || rl.Short != 1 || rl.Unfocused != 1 || rl.Cells[0].Satisfied.K != 5 || rl.Cells[0].Satisfied.N != 20 || rl.Last().Satisfied.K != 9 || rl.Last().Runs != 2 {
		t.Errorf("rl summary %+v", rl)
	}
	md := Markdown(sums)
	if !strings.Contains(md, "| rl | 0.25 [") || !strings.Contains(md, "| v0 | v1 |") || !strings.Contains(md, "| 1 | 0 (1 held, 1 short of samples, 1 retaken unfocused) |") {
		t.Errorf("markdown:\n%s", md)
	}
	svg := SVG(sums, "a & b")
	dec := xml.NewDecoder(strings.NewReader(svg))
	for {
		if _, err := dec.Token(); err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("svg is not well-formed XML: %v\n%s", err, svg)
			}
			break
		}
	}
	if !strings.Contains(svg, "<polyline") || !strings.Contains(svg, "a &amp; b") {
		t.Errorf("svg:\n%s", svg)
	}
}

func TestFisherGreater(t *testing.T) {
	// Reference values: the hypergeometric tail summed exactly in Python,
	// sum(Fraction(comb(an, x)*comb(bn, k-x), comb(an+bn, k)) for x ≥ ak) —
	// scipy.stats.fisher_exact's alternative="greater".
	for _, c := range []struct {
		ak, an, bk, bn int
		want           float64
	}{
		{5, 10, 0, 10, 0.016253869969040255},
		{3, 10, 1, 10, 0.29102167182662536},
		{0, 10, 5, 10, 1},
		{8, 20, 2, 20, 0.032416580803677576},
	} {
		got := FisherGreater(Wilson(c.ak, c.an), Wilson(c.bk, c.bn))
		if math.Abs(got-c.want) > 1e-9 {
			t.Errorf("FisherGreater(%d/%d, %d/%d) = %.12f, want %.12f", c.ak, c.an, c.bk, c.bn, got, c.want)
		}
	}
}

func TestParseArm(t *testing.T) {
	a, err := ParseArm("opd-fast:opd:--lr=1e-3:--opd-clip=2")
	if err != nil || a.Name != "opd-fast" || a.Method != "opd" || len(a.Args) != 2 || a.Args[1] != "--opd-clip=2" {
		t.Errorf("ParseArm = %+v, %v", a, err)
	}
	// A flag's value may hold colons.
	a, err = ParseArm("ext:combine:--teacher-url=http://127.0.0.1:31801/v1:--teacher-model=q")
	if err != nil || len(a.Args) != 2 || a.Args[0] != "--teacher-url=http://127.0.0.1:31801/v1" || a.Args[1] != "--teacher-model=q" {
		t.Errorf("ParseArm(URL) = %+v, %v", a, err)
	}
	if a, err := ParseArm("rl"); err != nil || a.Name != "rl" || a.Method != "rl" || a.Args != nil {
		t.Errorf("ParseArm(rl) = %+v, %v", a, err)
	}
	for _, bad := range []string{"", "grpo", "x:rl:lr=1", ":rl"} {
		if _, err := ParseArm(bad); err == nil {
			t.Errorf("ParseArm(%q) accepted", bad)
		}
	}
}

func TestParseLoopMetrics(t *testing.T) {
	m := parseLoopMetrics(`# HELP clawrl_loop_judged_total Turns judged.
clawrl_loop_judged_total{score="-1"} 8
clawrl_loop_judged_total{score="1"} 3
clawrl_loop_judged_total{score="0"} 2
clawrl_loop_hints_accepted_total 6
clawrl_loop_revised_total 1
clawrl_loop_samples_built_total{kind="signal"} 7
clawrl_loop_samples_built_total{kind="at_least_one"} 1
clawrl_loop_samples_trained 8
clawrl_loop_samples_ready 2
clawrl_loop_train_steps_total 1
clawrl_loop_train_steps_held_total 2
clawrl_loop_train_steps_unfocused_total 1
clawrl_loop_policy_version 1
garbage line
clawrl_loop_samples_trained NaNx
`)
	if m != (LoopMetrics{Judged: 13, SamplesBuilt: 8, SamplesTrained: 8, SamplesReady: 2, TrainSteps: 1, HeldSteps: 2, UnfocusedSteps: 1,
		Verdicts: Verdicts{Negative: 8, Neutral: 2, Positive: 3, Hints: 6, Revised: 1}}) {
		t.Errorf("parseLoopMetrics = %+v", m)
	}
}

// FuzzParseLoopMetrics: /metrics text is read from a server; no input may
// panic the parser.
func FuzzParseLoopMetrics(f *testing.F) {
	f.Add("clawrl_loop_judged_total{score=\"1\"} 3\nclawrl_loop_samples_trained 8\n")
	f.Add("clawrl_loop_train_steps_total 1e308\n{ }\n")
	f.Fuzz(func(t *testing.T, text string) { _ = parseLoopMetrics(text) })
}

// PersonaMarkdown pools each persona × arm over seeds: first and last
// evaluation, retention, and the control's teacher ceiling on every row of
// that persona.
func TestPersonaMarkdown(t *testing.T) {
	runs := []Run{
		{Arm: "off", Method: "off", Persona: "tldr", Seed: 1, Evals: []Eval{
			{Round: 0, Asked: 10, RetentionRight: 8, RetentionAsked: 8, HintSatisfied: 3, HintAsked: 10},
			{Round: 1, Asked: 10, RetentionRight: 8, RetentionAsked: 8}}},
		{Arm: "c", Method: "combine", Persona: "tldr", Seed: 1, Evals: []Eval{
			{Round: 0, Asked: 10, RetentionRight: 8, RetentionAsked: 8},
			{Round: 2, Satisfied: 6, Asked: 10, RetentionRight: 7, RetentionAsked: 8}}},
		{Arm: "c", Method: "combine", Persona: "tldr", Seed: 2, Evals: []Eval{
			{Round: 0, Asked: 10, RetentionRight: 8, RetentionAsked: 8},
			{Round: 2, Satisfied: 4, Asked: 10, RetentionRight: 8, RetentionAsked: 8}}},
	}
	md := PersonaMarkdown(runs)
	for _, want := range []string{
		"| tldr | off | 0.00 [0.00, 0.28] | 0.00 [0.00, 0.28] (v1) | 8/8 → 8/8 | 0.30 [0.11, 0.60] |",
		"| tldr | c | 0.00 [0.00, 0.16] | 0.50 [0.30, 0.70] (v2) | 16/16 → 15/16 | 0.30 [0.11, 0.60] |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("missing row %q in\n%s", want, md)
		}
	}
}

// TeacherMarkdown lists the teacher measured after each round beside the
// control's base ceiling, and nothing when no run measured it.
func TestTeacherMarkdown(t *testing.T) {
	runs := []Run{
		{Arm: "off", Method: "off", Persona: "french", Seed: 1, Evals: []Eval{{Round: 0, Asked: 10, HintSatisfied: 9, HintAsked: 10}}},
		{Arm: "c", Method: "combine", Persona: "french", Seed: 2, Evals: []Eval{{Round: 0, Asked: 10},
			{Round: 1, TeacherSatisfied: 9, TeacherAsked: 10}, {Round: 2, TeacherSatisfied: 10, TeacherAsked: 10}}},
	}
	md := TeacherMarkdown(runs)
	if want := "| french | c | 2 | 9/10 | v1 9/10, v2 10/10 |"; !strings.Contains(md, want) {
		t.Fatalf("missing row %q in\n%s", want, md)
	}
	if md := TeacherMarkdown(runs[:1]); md != "" {
		t.Fatalf("no run measured the teacher after a round, got\n%s", md)
	}
}

// A retention answer counts in English, French and the other languages a
// user may ask for (a French-speaking persona's answers are still right),
// with or without accents, as a whole word only.
func TestFactCorrectLanguages(t *testing.T) {
	byQ := map[string]Fact{}
	for _, f := range Retention {
		byQ[f.Question] = f
	}
	for _, tc := range []struct {
		q, a string
		want bool
	}{
		{"What is the capital of England?", "La capitale de l'Angleterre est Londres.", true},
		{"What is the capital of England?", "The capital of England is London.", true},
		{"How many days are in a week?", "Il y a sept jours dans une semaine.", true},
		{"How many days are in a week?", "En septembre, il fait beau.", false},
		{"What is the capital of Egypt?", "La capitale de l'Égypte est Le Caire.", true},
		{"What is the capital of China?", "C'est Pékin.", true},
		// The French student's answer the gate refused on 2026-12-01
		// (french seed 3): right, in rough French.
		{"What is the capital of Egypt?", "Le capital de l'Egypte est Caire.", true},
		{"What is the capital of China?", "La capitale de la Chine est Pekin.", true},
		{"What is the capital of China?", "La capital de China es Pekín.", true},
		{"What is the capital of China?", "La capitale de la Chine est Shanghai.", false},
		{"What is the capital of Russia?", "Die Hauptstadt Russlands ist Moskau.", true},
		{"What is the capital of England?", "La capitale dell'Inghilterra è Londra.", true},
		{"What is the largest ocean on Earth?", "El océano más grande es el Pacífico.", true},
		{"What is the largest ocean on Earth?", "El oceano mas grande es el Pacifico.", true},
		{"What is the largest ocean on Earth?", "L'océan le plus grand est l'Atlantique.", false},
		{"What is the opposite of hot?", "Lo contrario de caliente es frío.", true},
		{"How many days are in a week?", "Eine Woche hat sieben Tage.", true},
		{"How many days are in a week?", "Eine Woche hat sechs Tage.", false},
		// A French-trained student drifted into Spanish here; the fact
		// is right whatever the language.
		{"What language is spoken in Spain?", "La lengua oficial de España es español.", true},
		{"What language is spoken in Spain?", "On y parle espagnol.", true},
		{"What language is spoken in Spain?", "La lengua oficial de España es el catalán.", false},
		// The 1.5B student's answer that the gate refused three times
		// (2026-11-30): subscript digits are digits.
		{"What is the chemical symbol for water?", "H₂O", true},
		{"What is the chemical symbol for water?", "The chemical symbol for water is H₂O.", true},
		{"What is the chemical symbol for water?", "H₂O₂ is hydrogen peroxide.", false},
		{"What is 2 plus 2?", "２ plus ２ is ４.", true},
	} {
		f, ok := byQ[tc.q]
		if !ok {
			t.Fatalf("no fact %q", tc.q)
		}
		if got := f.Correct(tc.a); got != tc.want {
			t.Errorf("%q → %q: %v, want %v", tc.q, tc.a, got, tc.want)
		}
	}
}

// TestNextMessage: a simulated user moves on with a neutral follow-up at
// the configured shares, reproducibly, and otherwise thanks or corrects.
func TestNextMessage(t *testing.T) {
	for _, p := range Personas() {
		if len(p.Neutral) < 8 {
			t.Errorf("%s: %d neutral follow-ups, want ≥ 8", p.Name, len(p.Neutral))
		}
		if m, n := p.NextMessage(true, NeutralShare{}, 7); m != p.Thanks || n {
			t.Errorf("%s: share 0, satisfied: %q %v", p.Name, m, n)
		}
		if m, n := p.NextMessage(false, NeutralShare{Satisfied: 1}, 7); m != p.Correction || n {
			t.Errorf("%s: share 0 unsatisfied, not satisfied: %q %v", p.Name, m, n)
		}
		share := NeutralShare{Satisfied: 0.3, Unsatisfied: 0.1}
		const n = 4000
		var sat, unsat int
		used := map[string]bool{}
		for i := range n {
			key := hashString(fmt.Sprintf("bench-%s-1-r1-0-%d/next", p.Name, i))
			m, neutral := p.NextMessage(true, share, key)
			if m2, n2 := p.NextMessage(true, share, key); m2 != m || n2 != neutral {
				t.Fatalf("%s: key %d gives %q then %q", p.Name, key, m, m2)
			}
			if neutral {
				sat++
				used[m] = true
			} else if m != p.Thanks {
				t.Fatalf("%s: satisfied, not neutral: %q", p.Name, m)
			}
			if m, neutral := p.NextMessage(false, share, key); neutral {
				unsat++
			} else if m != p.Correction {
				t.Fatalf("%s: unsatisfied, not neutral: %q", p.Name, m)
			}
		}
		// Binomial: 4 standard deviations either side.
		if f := float64(sat) / n; math.Abs(f-0.3) > 4*math.Sqrt(0.3*0.7/n) {
			t.Errorf("%s: satisfied users moved on %.3f of the time, want 0.3", p.Name, f)
		}
		if f := float64(unsat) / n; math.Abs(f-0.1) > 4*math.Sqrt(0.1*0.9/n) {
			t.Errorf("%s: unsatisfied users moved on %.3f of the time, want 0.1", p.Name, f)
		}
		if len(used) != len(p.Neutral) {
			t.Errorf("%s: %d of %d neutral follow-ups drawn", p.Name, len(used), len(p.Neutral))
		}
	}
	cfg := Config{Arms: []Arm{{Name: "off", Method: ArmControl}}, Personas: Personas()[:1], Seeds: []int64{1}, Versions: 1, PerVersion: 1,
		MaxTokens: 8, Concurrency: 1, Feedback: FeedbackImplicit, Neutral: NeutralShare{Satisfied: 1.5}}
	if err := cfg.check(); err == nil || !strings.Contains(err.Error(), "neutral share") {
		t.Errorf("neutral share 1.5: %v", err)
	}
}

// TestComplaint: the tldr user says the summary is too long when it is there
// but over 25 words, that it came twice when a second TL;DR follows it, and
// what it always says otherwise; the other personas always say their one
// critique.
func TestComplaint(t *testing.T) {
	words := func(n int) string { // n different words
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "w%d ", i)
		}
		return b.String()
	}
	long := "TL;DR: " + words(25) + "\nThen the rest."
	for _, p := range Personas() {
		for _, c := range []struct {
			answer string
			miss   bool
		}{
			{"The Cold War was a rivalry.\nTL;DR: a rivalry.", false},
			{long, p.Name == "tldr"},
			{"  **TL;DR:** " + words(30), p.Name == "tldr"},
			{"TL;DR: a short one.\nThen the rest.", false},                                // satisfies: never asked, general if it were
			{strings.Repeat("TL;DR: the war. ", 12), false},                               // a loop
			{"TL;DR: " + strings.Repeat("a b c d e f ", 2) + words(14), p.Name == "tldr"}, // 27 words, said twice is no loop
			{"TL;DR: a short one.\n\nTL: a short one.", p.Name == "tldr"},                 // the summary twice
		} {
			critique, correction := p.Complaint(c.answer)
			if got := critique != p.Critique; got != c.miss {
				t.Errorf("%s %.40q: critique %q, want the miss's: %v", p.Name, c.answer, critique, c.miss)
			}
			if got := correction != p.Correction; got != c.miss {
				t.Errorf("%s %.40q: correction %q, want the miss's: %v", p.Name, c.answer, correction, c.miss)
			}
			if c.miss && (p.Satisfied(Answer{Text: c.answer, Finished: true}) || !strings.Contains(critique, "too long") && !strings.Contains(critique, "twice")) {
				t.Errorf("%s %.40q: a miss the user is satisfied by, or %q", p.Name, c.answer, critique)
			}
		}
	}
}

// contentOverlap is the Jaccard similarity of two questions' content words
// (lower case, function words and a plural s dropped).
func contentOverlap(a, b string) float64 {
	words := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			if !questionStop[w] {
				m[strings.TrimSuffix(w, "s")] = true
			}
		}
		return m
	}
	x, y := words(a), words(b)
	inter := 0
	for w := range x {
		if y[w] {
			inter++
		}
	}
	if union := len(x) + len(y) - inter; union > 0 {
		return float64(inter) / float64(union)
	}
	return 1 // both only function words: treat as the same question
}

var questionStop = setOf("what is are was were the a an of how do does did i can my me to in on for and or why who which tell about describe your you it that this at with from good best way should there our we work")

func TestVerdictMarkdown(t *testing.T) {
	v := func(neg, zero, pos, hints int) Verdicts {
		return Verdicts{Negative: neg, Neutral: zero, Positive: pos, Hints: hints}
	}
	runs := []Run{
		{Arm: "off", Method: "off", Persona: "concise", Seed: 1, Evals: []Eval{{}, {Round: 1, TrainRated: 8}}},
		{Arm: "comb", Method: "combine", Persona: "concise", Seed: 1, Evals: []Eval{{},
			{Round: 1, TrainRated: 8, TrainSatisfied: 1, TrainVerdicts: v(7, 0, 1, 7)},
			{Round: 2, TrainRated: 12, TrainSatisfied: 6, TrainNeutral: 2, TrainVerdicts: v(5, 3, 4, 5)}}},
		{Arm: "comb", Method: "combine", Persona: "concise", Seed: 2, Evals: []Eval{{},
			{Round: 1, TrainRated: 8, TrainSatisfied: 2, TrainNeutral: 1, TrainVerdicts: Verdicts{Negative: 6, Neutral: 1, Positive: 1, Hints: 6, Revised: 2}}}},
	}
	md := VerdictMarkdown(runs)
	if want := "| comb | 28 | 9 | 3 | 28 | 18 | 4 | 6 | 18 | 2 |"; !strings.Contains(md, want) {
		t.Errorf("want row %q in\n%s", want, md)
	}
	if strings.Contains(md, "| off |") {
		t.Errorf("the control judges nothing and should have no row:\n%s", md)
	}
	if got := VerdictMarkdown(runs[:1]); got != "" {
		t.Errorf("control only: %q, want no table", got)
	}
	if d := v(5, 3, 4, 5).Sub(v(1, 1, 1, 1)); d != v(4, 2, 3, 4) || d.Judged() != 9 {
		t.Errorf("Sub = %+v", d)
	}
}

// fakeLoop is a clawrl server as awaitVersion polls it: /healthz reports
// *version and /metrics what metrics returns, each under mu.
func fakeLoop(mu *sync.Mutex, version *int, metrics func() string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch r.URL.Path {
		case "/healthz":
			fmt.Fprintf(w, `{"status":"ok","policy_version":%d}`, *version)
		case "/metrics":
			fmt.Fprint(w, metrics())
		}
	}))
}

// TestAwaitVersionTopsUpPastUnjudgedTurns: a round whose turns are not all
// judged (one expired before the user's next message came) and whose loop
// holds too few samples for a step gets more turns once nothing has moved
// for stuckPolls polls, instead of waiting out VersionTimeout.
func TestAwaitVersionTopsUpPastUnjudgedTurns(t *testing.T) {
	defer func(p time.Duration) { pollEvery = p }(pollEvery)
	pollEvery = time.Millisecond
	var mu sync.Mutex
	judged, built, version := 15, 15, 0
	srv := fakeLoop(&mu, &version, func() string {
		return fmt.Sprintf("clawrl_loop_judged_total{score=\"-1\"} %d\nclawrl_loop_samples_built_total{kind=\"signal\"} %d\nclawrl_loop_samples_ready %d\n", judged, built, built)
	})
	defer srv.Close()
	sent, topUps := 16, 0
	send := func(n int) error {
		mu.Lock()
		defer mu.Unlock()
		topUps++
		sent += n
		judged, built = judged+n, built+n
		if built >= 16 {
			version = 1 // the step the extra samples complete
		}
		return nil
	}
	cfg := Config{PerVersion: 16, VersionTimeout: time.Minute}
	v, kept, err := awaitVersion(context.Background(), cfg, &Client{BaseURL: srv.URL}, 0, LoopMetrics{}, &sent, send)
	if err != nil || v != 1 || kept != keptNone || topUps != 1 || sent != 17 {
		t.Errorf("awaitVersion = %d, %v, %v after %d top-ups (%d sent): want version 1 after one top-up of the 1 turn the step lacks", v, kept, err, topUps, sent)
	}
}

// TestAwaitVersionTopsUpTheLack: a top-up sends as many rated turns as the
// step lacks, counting those the teacher still writes, so the step takes
// the same samples however fast each was built; one whose sample is
// refused draws one more, and the round's user stops at topUpBudget ×
// PerVersion turns past PerVersion.
func TestAwaitVersionTopsUpTheLack(t *testing.T) {
	defer func(p time.Duration) { pollEvery = p }(pollEvery)
	pollEvery = time.Millisecond
	var mu sync.Mutex
	// Eight sent: five ready, one pending that will be refused, two
	// refused already.
	judged, ready, pending, version := 8, 5, 1, 0
	var sends []int
	refuse := 1 // the first turn of the next top-up is refused too
	srv := fakeLoop(&mu, &version, func() string {
		if pending > 0 { // the pending sample is refused after a poll
			pending--
		}
		return fmt.Sprintf("clawrl_loop_judged_total{score=\"-1\"} %d\nclawrl_loop_samples_built_total{kind=\"signal\"} %d\nclawrl_loop_samples_ready %d\nclawrl_loop_samples_pending %d\n", judged, ready, ready, pending)
	})
	defer srv.Close()
	sent := 8
	send := func(n int) error {
		mu.Lock()
		defer mu.Unlock()
		sends = append(sends, n)
		sent, judged = sent+n, judged+n
		took := min(n, refuse)
		refuse -= took
		if ready += n - took; ready >= 8 {
			version = 1
		}
		return nil
	}
	cfg := Config{PerVersion: 8, VersionTimeout: time.Minute}
	v, _, err := awaitVersion(context.Background(), cfg, &Client{BaseURL: srv.URL}, 0, LoopMetrics{}, &sent, send)
	if err != nil || v != 1 || !slices.Equal(sends, []int{3, 1}) || ready != 8 {
		t.Errorf("awaitVersion = %d, %v after top-ups %v (%d ready): want version 1 after top-ups of 3 and 1 and exactly 8 ready", v, err, sends, ready)
	}

	// Nothing is ever built (OPD's users like every answer): the user
	// stops at 3 × 8 turns past the round's, and the round ends short at
	// once, not after the version timeout.
	mu.Lock()
	sends, version, refuse, ready = nil, 0, 1<<30, 0
	mu.Unlock()
	start := time.Now()
	v, kept, err := awaitVersion(context.Background(), cfg, &Client{BaseURL: srv.URL}, 0, LoopMetrics{}, &sent, send)
	total := 0
	for _, n := range sends {
		total += n
	}
	if err != nil || v != 0 || kept != keptShort || total != topUpBudget*cfg.PerVersion {
		t.Errorf("awaitVersion = %d, %v, %v after top-ups %v: want no version, short, after %d turns", v, kept, err, sends, topUpBudget*cfg.PerVersion)
	}
	if took := time.Since(start); took >= cfg.VersionTimeout {
		t.Errorf("the short round took %v, the version timeout", took)
	}
}

// TestAwaitVersionWaitsForTheTeacher: every rated turn is judged and half
// the step's samples are built, but the teacher is still writing the
// other half (clawrl_loop_samples_pending): the user waits for the step
// instead of talking on, however long the teacher takes between samples.
// Before, a teacher slower than five polls a sample drew a top-up each
// time (64 rated turns a round in the 8 × 16 protocol, not 16).
func TestAwaitVersionWaitsForTheTeacher(t *testing.T) {
	defer func(p time.Duration) { pollEvery = p }(pollEvery)
	pollEvery = time.Millisecond
	var mu sync.Mutex
	polls, version := 0, 0
	srv := fakeLoop(&mu, &version, func() string {
		polls++
		built, pending := 8, 8
		if polls > 40 { // the teacher's eight samples, all at once after 40 polls
			built, pending, version = 16, 0, 1
		}
		return fmt.Sprintf("clawrl_loop_judged_total{score=\"-1\"} 16\nclawrl_loop_samples_built_total{kind=\"signal\"} %d\nclawrl_loop_samples_ready %d\nclawrl_loop_samples_pending %d\n", built, built, pending)
	})
	defer srv.Close()
	sent, topUps := 16, 0
	send := func(n int) error {
		topUps++
		sent += n
		return nil
	}
	cfg := Config{PerVersion: 16, VersionTimeout: time.Minute}
	v, kept, err := awaitVersion(context.Background(), cfg, &Client{BaseURL: srv.URL}, 0, LoopMetrics{}, &sent, send)
	if err != nil || v != 1 || kept != keptNone || topUps != 0 || sent != 16 {
		t.Errorf("awaitVersion = %d, %v, %v after %d top-ups (%d sent): want version 1 and no top-up", v, kept, err, topUps, sent)
	}
}

// TestAwaitVersionHeld: the loop held the round's step (--hold-liked): no
// version comes, clawrl_loop_train_steps_held_total moves, and the round
// is evaluated on the version still served at once, not after
// VersionTimeout and not as a stall. In the next round the held turns,
// dropped, are not ready: with four samples ready the user talks on
// (samples built − trained had counted the held ones as waiting forever).
func TestAwaitVersionHeld(t *testing.T) {
	defer func(p time.Duration) { pollEvery = p }(pollEvery)
	pollEvery = time.Millisecond
	var mu sync.Mutex
	// after polls > holdAt the loop holds a step: held becomes heldTo
	// and nothing is ready.
	polls, holdAt, version, held, heldTo, ready, built := 0, 5, 3, 0, 1, 8, 24
	srv := fakeLoop(&mu, &version, func() string {
		polls++
		if polls > holdAt {
			held, ready = heldTo, 0
		}
		return fmt.Sprintf("clawrl_loop_judged_total{score=\"1\"} %d\nclawrl_loop_samples_built_total{kind=\"signal\"} %d\nclawrl_loop_samples_trained 16\nclawrl_loop_samples_ready %d\nclawrl_loop_train_steps_total 2\nclawrl_loop_train_steps_held_total %d\n", built, built, ready, held)
	})
	defer srv.Close()
	sent, topUps := 24, 0
	send := func(n int) error {
		mu.Lock()
		defer mu.Unlock()
		topUps++
		sent += n
		built += n
		polls, ready = 0, ready+n // the step comes and is held
		return nil
	}
	cfg := Config{PerVersion: 8, VersionTimeout: time.Minute}
	m0 := LoopMetrics{TrainSteps: 2}
	v, kept, err := awaitVersion(context.Background(), cfg, &Client{BaseURL: srv.URL}, 3, m0, &sent, send)
	if err != nil || v != 3 || kept != keptHeld || topUps != 0 {
		t.Fatalf("awaitVersion = %d, %v, %v after %d top-ups: want version 3 kept, held, no top-up", v, kept, err, topUps)
	}

	// The next round: eight more turns judged and built, four of them
	// ready (the others were not made samples), and no step until the
	// user talks on.
	mu.Lock()
	polls, holdAt, heldTo, ready, built = 0, 1<<30, 2, 4, 32
	mu.Unlock()
	m0.HeldSteps, sent = 1, sent+8
	v, kept, err = awaitVersion(context.Background(), cfg, &Client{BaseURL: srv.URL}, 3, m0, &sent, func(n int) error {
		mu.Lock()
		holdAt = 5
		mu.Unlock()
		return send(n)
	})
	if err != nil || v != 3 || kept != keptHeld || topUps != 1 || sent != 36 {
		t.Errorf("second round: awaitVersion = %d, %v, %v after %d top-ups (%d sent): want version 3 kept, held, after one top-up of 4", v, kept, err, topUps, sent)
	}
}

// TestExperimentInterrupted: a bench stopped in the middle of a run (Ctrl-C,
// SIGTERM: ctx ends) returns that run with the rounds it evaluated and
// ctx's error, so `bench learn` still writes them. Before, the run in hand
// was dropped, and a single-run bench stopped in round 6 wrote nothing.
func TestExperimentInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/healthz":
			fmt.Fprint(w, `{"status":"ok","policy_version":0}`)
		case "/metrics":
		case "/v1/chat/completions":
			if r.Header.Get("X-Turn-Type") != "side" {
				cancel() // the first rated turn: the user presses Ctrl-C
			}
			fmt.Fprint(w, `{"id":"c1","choices":[{"message":{"role":"assistant","content":"Paris."},"finish_reason":"stop"}]}`)
		default:
			w.WriteHeader(http.StatusOK)
		}
	}))
	defer srv.Close()
	launch := func(context.Context, Arm, *Persona, int64) (*Client, func() error, error) {
		return &Client{BaseURL: srv.URL}, func() error { return nil }, nil
	}
	cfg := Config{Arms: []Arm{{Name: "combine", Method: "combine"}}, Personas: Personas()[:1], Seeds: []int64{1},
		Versions: 3, PerVersion: 4, MaxTokens: 8, RetentionTokens: 8, Concurrency: 2, Feedback: FeedbackText,
		EvalPrompts: 2, Retention: 2, VersionTimeout: time.Minute}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	runs, err := Experiment(ctx, cfg, launch, log)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Experiment: err %v, want context.Canceled", err)
	}
	if len(runs) != 1 || len(runs[0].Evals) != 1 || runs[0].Evals[0].Asked != 2 || !strings.HasPrefix(runs[0].Err, "interrupted") {
		t.Fatalf("runs = %+v, want the run in hand with its round-0 evaluation, marked interrupted", runs)
	}
}

// TestTopUpsIgnoreChunks: a round's rated turns are named, and seeded, by
// their place in the round, so a round topped up in other chunks (16, then
// 1 and 2; or 16, then 3) asks the same turns under the same sessions and
// seeds; its first turns keep the names the runs recorded before had.
func TestTopUpsIgnoreChunks(t *testing.T) {
	type asked struct {
		session string
		seed    int64
		prompt  string
	}
	var mu sync.Mutex
	var got []asked
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/chat/completions" {
			var body struct {
				Seed     int64     `json:"seed"`
				Messages []Message `json:"messages"`
			}
			if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
				t.Error(err)
			}
			mu.Lock()
			got = append(got, asked{r.Header.Get("X-Session-Id"), body.Seed, body.Messages[0].Content})
			mu.Unlock()
			fmt.Fprint(w, `{"id":"c1","choices":[{"message":{"role":"assistant","content":"Boil it. Hope this helps!"},"finish_reason":"stop"}]}`)
		}
	}))
	defer srv.Close()
	cl := &Client{BaseURL: srv.URL}
	p := Personas()[1]
	cfg := Config{MaxTokens: 8, Concurrency: 4, Feedback: FeedbackText, Temperature: 1}
	round := func(chunks ...int) []asked {
		got = nil
		first := 0
		for _, n := range chunks {
			prompts := make([]string, n)
			for i := range prompts {
				prompts[i] = p.Train[(first+i)%len(p.Train)]
			}
			if _, _, _, err := interact(context.Background(), cfg, cl, p, 1, 2, first, prompts); err != nil {
				t.Fatal(err)
			}
			first += n
		}
		out := slices.Clone(got)
		slices.SortFunc(out, func(a, b asked) int { return strings.Compare(a.session, b.session) })
		return out
	}
	a, b := round(16, 1, 2), round(16, 3)
	if len(a) != 19 || !slices.Equal(a, b) {
		t.Fatalf("16+1+2 asked %v\n16+3 asked %v", a, b)
	}
	seen := map[int64]bool{}
	for _, x := range a {
		seen[x.seed] = true
	}
	if len(seen) != 19 {
		t.Errorf("%d seeds for 19 turns", len(seen))
	}
	for i := range 16 {
		if want := fmt.Sprintf("bench-%s-1-r2-0-%d", p.Name, i); !slices.ContainsFunc(a, func(x asked) bool { return x.session == want }) {
			t.Errorf("no turn in session %s (the name the first send's turns had)", want)
		}
	}
}
