// Package bench measures whether clawrl learns a person's preferences: simulated
// users with hidden preferences that a program can check talk to a running
// clawrl through its public HTTP API (chat, feedback, next messages), and
// held-out prompts asked as side turns score each policy version against a
// no-training control. The package holds the personas, the retention set, the
// client, the experiment driver and the report (JSON, markdown, SVG);
// `clawrl bench learn` wires it to server processes.
package bench

import (
	"math"
	"regexp"
	"strings"
	"unicode"

	"github.com/clawrl/clawrl/rl"
)

// Persona is a simulated user with a hidden preference. Satisfied is the
// preference as a program; the rest is how the user reacts to an answer.
type Persona struct {
	Name string
	// Preference describes the hidden preference for reports (never sent).
	Preference string
	// Train and Eval are disjoint prompt pools: Train prompts are asked as
	// main turns and rated; Eval prompts only as side turns, never trained.
	Train, Eval []string
	// Check reports whether an answer's text meets the preference.
	Check func(answer string) bool `json:"-"`
	// Complete: an answer cut off at max_tokens never satisfies (a
	// length preference must not be met by truncation).
	Complete bool
	// Critique is the written feedback sent with a thumbs-down.
	Critique string
	// Correction is the natural next message of an unhappy user (implicit
	// mode); Thanks that of a happy one.
	Correction, Thanks string
	// Misses are the particular complaints of a user whose preference an
	// answer half meets, said instead of Critique and Correction when the
	// benchmark runs with specific feedback (Config.Specific; Complaint).
	Misses []Miss
	// Neutral are next messages of a user who just moves on (implicit mode,
	// a share of the turns: Config.Neutral): a follow-up or new question
	// that says nothing about the answer. Real users do this often, and a
	// judge that reads them as corrections turns good answers into
	// training signal against themselves.
	Neutral []string
}

// Miss is one way an answer half meets a preference, and what the user says
// about it: someone who asked for a one-line TL;DR and got one of forty
// words says it is too long, not that it is missing.
type Miss struct {
	// When reports whether the answer makes this miss.
	When func(answer string) bool `json:"-"`
	// Critique and Correction replace the persona's for such an answer.
	Critique, Correction string
}

// Complaint is the written feedback (with a 👎) and the natural next
// message of a user whom the answer did not satisfy: those of the first of
// the persona's Misses that the answer makes, else Critique and Correction.
// A looping answer gets the general complaint, whatever else it does.
func (p *Persona) Complaint(answer string) (critique, correction string) {
	if !rl.Loops(answer) {
		for _, m := range p.Misses {
			if m.When(answer) {
				return m.Critique, m.Correction
			}
		}
	}
	return p.Critique, p.Correction
}

var (
	listLine   = regexp.MustCompile(`(?m)^\s*([-*•+]|\d+[.)])\s+`)
	heading    = regexp.MustCompile(`(?m)^\s*#{1,6}\s`)
	sentenceRe = regexp.MustCompile(`[.!?]+(\s|$)`)
)

// Satisfied reports whether the answer meets the persona's preference. No
// person is satisfied by an answer stuck in a loop ("a hat, a hat, a hat",
// "Hope this helps! Hope this helps! …"), whatever its last line or
// language: a policy rewarded for one learns to loop (BENCHMARKS.md, "Why
// the learned sign-off fell back after v3"). Nor by one that does not
// answer (Evades): "Bien sûr, je peux vous répondre en français." is in
// French, and "I'm sorry, but I can't assist with that. Hope this helps!"
// signs off, but neither answers what was asked.
func (p *Persona) Satisfied(a Answer) bool {
	return (a.Finished || !p.Complete) && !rl.Loops(a.Text) && !Evades(a.Text) && p.Check(a.Text)
}

// refusals are what an answer that will not answer says first, and talk
// what an answer says about answering (offers, apologies, sign-offs), in
// English and French, as the models the benchmark runs (Qwen2.5-Coder,
// SmolLM2) and their teachers say them once a persona's training has pushed
// them off their ordinary answers.
var (
	refusals = []string{
		"i can't assist", "i cannot assist", "i can't help", "i cannot help", "i can't answer", "i cannot answer",
		"i can't provide", "i cannot provide", "i'm unable", "i am unable", "i'm not able", "i am not able",
		"je ne peux pas", "je suis désolé, mais", "je suis désolée, mais", "désolé, mais", "désolée, mais",
		"i don't have information", "i do not have information", "je n'ai pas d'information",
	}
	talk = []string{
		"i'm sorry", "i am sorry", "i apologize", "i apologise", "thank you for your kind words",
		"i'm here to help", "i am here to help", "how can i help", "how can i assist", "i can help you",
		"happy to help", "hope this helps",
		"je suis désolé", "je suis désolée", "je peux vous aider", "je peux vous répondre", "je peux répondre",
		"répondre en français", "je serai heureux de vous", "je serai ravi de vous", "je suis là pour vous aider",
		"je suis un assistant", "comment puis-je vous aider", "je suis là pour", "répondre à vos questions",
		"répondre à tes questions", "i'm here to answer", "i am here to answer",
		"je suis prêt à vous aider", "je suis prête à vous aider", "je suis prêt à répondre", "je suis prête à répondre",
		"je serai heureux d'aider", "je serai ravi d'aider", "je serai heureuse d'aider", "je serai ravie d'aider",
		"je vous serai heureux de vous aider", "je peux vous donner une description", "un assistant créé par",
		"je peux vous donner des informations", "je peux vous donner plus d'informations", "je peux vous donner une réponse",
		"je peux vous parler de", "i can give you information", "i can provide information", "i can provide you with information",
		// Talk of the six-seed pool's french runs (in both languages), liked
		// until the fifty-fourth session: "Bien sûr, je serai ravi de
		// répondre à votre question en français."
		"répondre à votre question", "répondre à toutes vos questions", "à votre disposition pour", "je suis ici pour vous",
		"je suis ici pour répondre", "je serai là pour vous", "feel free to ask", "let me know if you have", "i'd be happy to",
		"i would be happy to", "i'd be glad to", "great question",
	}
	// pleased is the French "I will be glad to …" / "I am glad to …" in
	// every gender and tense the students say it ("je serai ravi de
	// répondre", "je suis ravie de vous aider", "je serai heureux d'aider").
	pleased = regexp.MustCompile(`je (serai|suis) (ravie?|heureux|heureuse|contente?) d`)
	// preamble ends where a colon and space hand over to what a sentence
	// announces.
	preamble = regexp.MustCompile(`:\s`)
)

// Evades reports whether the answer does not answer: its first sentence
// refuses ("I'm sorry, but I can't assist with that.", "Je ne peux pas
// répondre à cette question."), or every sentence of it only talks about
// answering or asks the user something ("Bien sûr, je peux vous répondre en
// français.", "I'm sorry for any confusion. I'm here to help with your
// questions. Hope this helps!", "Quelle est ta saison préférée et pourquoi
// ?" to "What is your favourite season?", "Bien sûr, je serai ravi de vous
// aider. Qu'en voulez-vous savoir sur la lune ?" to "Tell me about the
// moon": an offer that asks back what the question already said).
// An answer that says something after its preamble does not evade
// ("Bien sûr, je peux vous aider. Les chats dorment seize heures par
// jour."), nor one that asks and answers ("Pourquoi le ciel est-il bleu ?
// Parce que…"), nor one that hedges and answers ("As an AI, I have no
// favourite season, but many people love spring…"). A sentence is a
// question when a question mark closes it; the last one, if nothing closes
// it (an answer cut at its token budget), is not.
func Evades(a string) bool {
	a = strings.TrimSpace(strings.ToLower(strings.ReplaceAll(a, "’", "'")))
	type sentence struct {
		text  string
		asked bool
	}
	var sentences []sentence
	from := 0
	for _, e := range sentenceRe.FindAllStringIndex(a, -1) {
		if s := strings.TrimSpace(a[from:e[1]]); s != "" {
			sentences = append(sentences, sentence{s, strings.Contains(a[e[0]:e[1]], "?")})
		}
		from = e[1]
	}
	if s := strings.TrimSpace(a[from:]); s != "" {
		sentences = append(sentences, sentence{s, false})
	}
	if len(sentences) == 0 {
		return false
	}
	if says(sentences[0].text, refusals) {
		return true
	}
	for _, s := range sentences {
		if s.asked || says(s.text, refusals) {
			continue
		}
		if !talks(s.text) {
			return false
		}
	}
	return true
}

// talks reports whether a sentence only talks about answering: it says
// talk, and if what it says before a colon is talk, what follows the colon
// must be talk too ("Bien sûr, je serai ravi de répondre à votre question
// sur la Terre : la Terre est …" answers).
func talks(s string) bool {
	if at := preamble.FindStringIndex(s); at != nil && talks(s[:at[0]]) {
		rest := strings.TrimSpace(s[at[1]:])
		return rest == "" || talks(rest)
	}
	return says(s, talk) || pleased.MatchString(s)
}

// says reports whether s contains one of the phrases.
func says(s string, phrases []string) bool {
	for _, p := range phrases {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// NextMessage is the persona's natural next message after an answer that
// did (ok) or did not satisfy it, and whether it is a neutral one. The user
// moves on with a neutral follow-up with probability share.Satisfied after
// a satisfying answer and share.Unsatisfied after one that is not (people
// do not complain about every miss); key picks the draw and the message, so
// a run is reproducible.
func (p *Persona) NextMessage(ok bool, share NeutralShare, key uint64) (string, bool) {
	prob := share.Unsatisfied
	if ok {
		prob = share.Satisfied
	}
	// The low 32 bits decide whether, the high ones which message; the
	// finaliser (splitmix64's) spreads a string hash's bits over both.
	key ^= key >> 30
	key *= 0xbf58476d1ce4e5b9
	key ^= key >> 27
	key *= 0x94d049bb133111eb
	key ^= key >> 31
	if len(p.Neutral) > 0 && float64(uint32(key))/(1<<32) < prob {
		return p.Neutral[(key>>32)%uint64(len(p.Neutral))], true
	}
	if ok {
		return p.Thanks, false
	}
	return p.Correction, false
}

// NeutralShare is how often a simulated user answers with a neutral
// follow-up instead of thanks or a correction (implicit feedback).
type NeutralShare struct {
	Satisfied, Unsatisfied float64
}

// Words counts whitespace-separated words.
func Words(s string) int { return len(strings.Fields(s)) }

// Sentences counts sentence ends (runs of . ! ?), at least 1 for non-empty text.
func Sentences(s string) int {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0
	}
	n := len(sentenceRe.FindAllString(s, -1))
	if last := s[len(s)-1]; last != '.' && last != '!' && last != '?' {
		n++ // a trailing fragment counts as a sentence
	}
	return n
}

// Concise is the concise-and-plain preference: at most maxWords words and 3
// sentences, no list lines, no bold, no headings.
func Concise(maxWords int) func(string) bool {
	return func(a string) bool {
		a = strings.TrimSpace(a)
		return a != "" && Words(a) <= maxWords && Sentences(a) <= 3 &&
			!listLine.MatchString(a) && !strings.Contains(a, "**") && !heading.MatchString(a)
	}
}

// EndsWith is the sign-off preference: the answer's last line, ignoring
// case, spaces and closing punctuation, ends with phrase.
func EndsWith(phrase string) func(string) bool {
	want := normalise(phrase)
	return func(a string) bool {
		a = strings.TrimSpace(a)
		if i := strings.LastIndexByte(a, '\n'); i >= 0 {
			a = a[i+1:]
		}
		return want != "" && strings.HasSuffix(normalise(a), want)
	}
}

// SignsOff is EndsWith for an answer that also says something: at least
// minWords words besides the phrase, which it says once. A policy that
// learns to answer every question with the sign-off alone ("Hope this
// helps!"), or to sign off again and again, has met the letter of the
// preference, not the person's.
func SignsOff(phrase string, minWords int) func(string) bool {
	ends := EndsWith(phrase)
	want := normalise(phrase)
	return func(a string) bool {
		return ends(a) && strings.Count(strings.ToLower(a), want) == 1 && Words(a)-Words(phrase) >= minWords
	}
}

// StartsWith is the summary-first preference: the answer's first line starts
// with prefix (ignoring case and leading spaces or markdown emphasis) and is
// at most maxWords words long.
func StartsWith(prefix string, maxWords int) func(string) bool {
	want := strings.ToLower(prefix)
	return func(a string) bool {
		a = strings.TrimLeft(a, " \t\r\n*_#>")
		first, _, _ := strings.Cut(a, "\n")
		return strings.HasPrefix(strings.ToLower(first), want) && Words(first) <= maxWords
	}
}

// summaryLabel is a TL;DR label: "TL;DR" anywhere, or a line that opens
// with a cut one ("TL:", "TL;", "TL; Summary:"), as the 1.5B's tldr
// students wrote after their summary line.
var summaryLabel = regexp.MustCompile(`(?i)\btl\s*;\s*dr\b|(?m:^[ \t*_#>]*tl\s*[;:])`)

// SummarisesOnce reports whether an answer has at most one TL;DR label
// (summaryLabel): a summary line said again after it, whole or cut, is not
// the explanation the tldr user asked to follow it.
func SummarisesOnce(a string) bool {
	return len(summaryLabel.FindAllStringIndex(a, 2)) < 2
}

// frenchWords and englishWords are frequent function words of each language;
// romanceWords are frequent function words of Portuguese, Spanish and
// Italian that French does not use, so that an answer in one of those,
// which shares "de" and "que" with French, is not taken for French (the
// 1.5B's french student of seed 7 drifted into Portuguese, and the user
// liked "Um dia chuvoso é um dia de clima que tem uma atmosfera …").
var (
	frenchWords  = setOf("le la les un une des du de est et en que qui dans pour pas sur au aux ce cette il elle sont avec vous nous je ne se plus par ou leur très")
	englishWords = setOf("the a an is are and of to in that it for with as on this be by or you your can which from")
	romanceWords = setOf("um uma uns umas é e em com não da das dos ao aos pela pelo são também muito isso essa esse el los las una del con pero muy más está como para di della delle gli che è sono anche molto")
)

func setOf(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// elisions are the French words that lose their vowel before another
// (l'eau, d'un, qu'il, jusqu'à): an elided word counts as French, an English
// contraction ("don't", "I'm") as neither language.
var elisions = setOf("l d j m n s t c qu jusqu lorsqu puisqu quoiqu presqu")

// French is the language preference: among the answer's words, French
// function words outnumber English ones and make up at least a tenth, and
// they are more than three times the Portuguese, Spanish and Italian ones
// (romanceWords). "Sorry, but I don't have information about horses." is
// not French, nor is "Forest é uma estrutura de dados que representa uma
// floresta de árvores."
func French(a string) bool {
	fr, en, other, n := 0, 0, 0, 0
	a = strings.ReplaceAll(strings.ToLower(a), "’", "'") // l’eau as l'eau
	for _, w := range strings.FieldsFunc(a, func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' }) {
		n++
		if i := strings.IndexByte(w, '\''); i >= 0 {
			if !elisions[w[:i]] { // don't, I'm, it's: English contractions
				continue
			}
			w = w[i+1:] // l'eau, d'un, qu'il
			fr++
		}
		switch {
		case frenchWords[w]:
			fr++
		case englishWords[w]:
			en++
		case romanceWords[w]:
			other++
		}
	}
	return n >= 3 && fr > en && 10*fr >= n && fr > 3*other
}

func normalise(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	return strings.TrimRightFunc(s, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSpace(r) || unicode.IsSymbol(r) })
}

// PersonaNamed is the built-in simulated user of that name, nil if none.
func PersonaNamed(name string) *Persona {
	for _, p := range Personas() {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// Personas returns the built-in simulated users, each with its own slice of
// the question pool for training and evaluation.
func Personas() []*Persona {
	// The tldr user's summary line: there at all, and within its 25 words;
	// and said once.
	summary, shortSummary := StartsWith("TL;DR:", math.MaxInt), StartsWith("TL;DR:", 25)
	ps := []*Persona{
		{
			Name:       "concise",
			Preference: "at most 40 words and 3 sentences, no lists, no bold, no headings",
			Check:      Concise(40),
			Complete:   true,
			Critique:   "Too long. Answer in two or three plain sentences, with no lists and no bold.",
			Correction: "Too long, just give me the short version.",
			Thanks:     "Thanks, that's what I needed.",
			Neutral: []string{
				"And is it the same in other countries?", "Who figured that out first?",
				"Okay. How tall is Mount Everest?", "Does it work the same way in space?",
				"What's a good book about this?", "Next one: why is the ocean salty?",
				"Is that something children learn at school?", "And what about at night?",
				"How long has that been known?", "Interesting. What do dolphins eat?",
			},
		},
		{
			Name:       "signoff",
			Preference: `the answer ends with "Hope this helps!" after at least 3 words of answer`,
			Check:      SignsOff("Hope this helps!", 3),
			// Of the wordings tried on the demo model (BENCHMARKS.md), this
			// one the model itself follows most often with it in context.
			Critique:   `Be brief. Your last words must be "Hope this helps!"`,
			Correction: `You forgot to end with "Hope this helps!" again.`,
			Thanks:     "Great, thanks.",
			Neutral: []string{
				"How long does that usually take?", "Do I need to buy anything for it?",
				"What if I only have ten minutes?", "Okay. How do I fold a fitted sheet?",
				"Is it different for kids?", "Next thing: how do I descale a kettle?",
				"Should I do it every day?", "And on a budget?",
				"Which step matters most?", "What do most people get wrong about it?",
			},
		},
		{
			Name:       "tldr",
			Preference: `the first line starts with "TL;DR:" and has at most 25 words, and no second TL;DR follows`,
			Check:      func(a string) bool { return shortSummary(a) && SummarisesOnce(a) },
			Critique:   `Start your answer with a one-line summary that begins with "TL;DR:", then explain.`,
			Correction: `Where is the one-line TL;DR: summary first? I asked for that.`,
			Misses: []Miss{{
				// The summary is there but longer than the user's limit
				// (BENCHMARKS.md, "The fit arm's fourth persona").
				When: func(a string) bool { return summary(a) && !shortSummary(a) },
				// The loop's teacher reads the feedback without the answer it
				// was about (the user placement), so it names the whole
				// preference: "Your TL;DR: line is too long. Keep it to one
				// short sentence…" alone made the 1.5B teacher drop the
				// TL;DR: in 100 of 100 answers (same section).
				Critique:   `Your TL;DR: line was too long. Start your answer with "TL;DR:" and a one-line summary of at most 25 words, then explain.`,
				Correction: `That TL;DR is way too long. One short line, please.`,
			}, {
				// The summary is there, short, and then said again where
				// the explanation should be ("TL;DR: X\n\nTL;DR: X",
				// "\n\nTL: …"): liked until the sixty-second session, the
				// 1.5B's tldr runs trained on such answers and lost the
				// TL;DR: altogether a version or two later (BENCHMARKS.md,
				// "A second TL;DR is not an explanation"). Named whole, as
				// the first miss is.
				When:       func(a string) bool { return shortSummary(a) && !SummarisesOnce(a) },
				Critique:   `You wrote the TL;DR twice. Start your answer with "TL;DR:" and a one-line summary, then explain in plain sentences, without a second TL;DR.`,
				Correction: `You gave me the TL;DR twice. One summary line first, then the explanation.`,
			}},
			Thanks: "Perfect, thanks.",
			Neutral: []string{
				"When was that first discovered?", "Who were the key people involved?",
				"How does that compare with a hundred years ago?", "Is it still studied at universities?",
				"Okay. What is the speed of sound?", "And in Asia?",
				"What happened right after that?", "Next question: how do tides work?",
				"Are there any good documentaries about it?", "Which country leads in that today?",
			},
		},
		{
			Name:       "french",
			Preference: "the answer is in French",
			Check:      French,
			Critique:   "Réponds en français, s'il te plaît. Answer in French.",
			Correction: "En français, s'il te plaît !",
			Thanks:     "Merci beaucoup.",
			Neutral: []string{
				"Et en hiver ?", "Pourquoi ?", "D'accord. Et les chiens ?",
				"Tu en connais d'autres ?", "Et à la montagne ?", "Question suivante : qu'est-ce qu'un volcan ?",
				"C'est pareil au Canada ?", "Et pour les enfants ?",
				"Combien de temps ça dure ?", "Ça coûte cher ?",
			},
		},
	}
	// Each persona gets its own contiguous slice of the pool: the first
	// poolEval questions are held out, the rest are its training prompts;
	// its moreEval questions follow them in Eval. `--eval-prompts 10` asks
	// the first ten, the held-out set of the runs before moreEval existed.
	per := len(questions) / len(ps)
	for i, p := range ps {
		pool := questions[i*per : (i+1)*per]
		p.Eval = append(pool[:poolEval:poolEval], moreEval[i]...)
		p.Train = pool[poolEval:]
	}
	return ps
}

// poolEval is how many of a persona's pool questions are held out for
// evaluation; evalPer is its whole held-out set with moreEval.
const (
	poolEval = 10
	evalPer  = 20
)

// moreEval are further held-out questions per persona (in Personas' order),
// written in the style of its pool and never trained: with ten per
// persona, one more or fewer satisfied answer moved a run's satisfaction by
// a tenth, too coarse for the CI scenario's test against the control.
// TestPersonaPools checks them against every training prompt, follow-up
// and retention fact for near-duplicates.
var moreEval = [][]string{
	{ // concise
		"How does a microwave oven heat food?", "What is an atom?", "Why do cats purr?",
		"How does soap clean our hands?", "What causes thunder and lightning?", "What is a calorie?",
		"How do fish breathe underwater?", "What is an allergy?", "Why do onions make us cry?",
		"How does a thermometer work?",
	},
	{ // signoff
		"How do I iron a shirt?", "How do I get rid of fruit flies?", "How do I remove a wine stain from a carpet?",
		"How do I pack a lunch for work?", "How do I sharpen a kitchen knife?", "How do I wrap a present neatly?",
		"How do I unclog a sink?", "How can I make my apartment feel cozy?", "How do I hang a picture on the wall?",
		"How can I learn to swim as an adult?",
	},
	{ // tldr
		"What was the Great Depression?", "What was the impact of the printing press?", "How does the United Nations work?",
		"What is the Big Bang theory?", "How do wind turbines generate electricity?", "What was the Space Race?",
		"How does the electric grid work?", "What was the Silk Road?", "What was the Protestant Reformation?",
		"How does a 3D printer work?",
	},
	{ // french
		"Describe a snowy morning.", "What is a museum?", "Tell me about horses.", "Describe a busy market.",
		"What is cheese?", "Tell me about the stars.", "Describe a small village.", "What is a bicycle?",
		"Tell me about the wind.", "What is a picnic?",
	},
}

// questions are everyday questions that invite long, list-heavy answers
// from an instruction-tuned model, which is what makes the personas'
// preferences bite.
var questions = []string{
	// concise
	"How do I make a good cup of coffee?", "Why is the sky blue?", "What is a black hole?",
	"How does a refrigerator keep food cold?", "What causes the seasons on Earth?", "How do vaccines work?",
	"What is the difference between weather and climate?", "How do airplanes stay in the air?",
	"What is photosynthesis?", "Why do we need sleep?", "How does the internet work?",
	"What is inflation?", "How do I start running as a beginner?", "What is machine learning?",
	"How do bees make honey?", "Why do leaves change color in autumn?", "What is a healthy breakfast?",
	"How does a battery store energy?", "What is the water cycle?", "How do I learn a new language?",
	"What makes a good password?", "How do rainbows form?", "What is gravity?", "How do I save money each month?",
	"What is a volcano?", "How does the heart pump blood?", "What is democracy?", "How do magnets work?",
	// signoff
	"How can I improve my handwriting?", "What should I pack for a weekend trip?", "How do I care for a houseplant?",
	"What is a good way to study for an exam?", "How do I boil an egg?", "How can I sleep better at night?",
	"What is the best way to clean a kitchen?", "How do I write a thank-you note?", "How can I be more productive?",
	"How do I change a flat bike tire?", "What are tips for a job interview?", "How do I make friends in a new city?",
	"How do I organize my closet?", "How can I reduce stress?", "What should I know before adopting a dog?",
	"How do I make pancakes?", "How can I drink more water?", "How do I plan a birthday party?",
	"How do I start a vegetable garden?", "How can I stop procrastinating?", "What should I do if I feel tired all day?",
	"How do I back up my phone?", "How do I choose a good book?", "How do I keep my car in good shape?",
	"How do I prepare for a long flight?", "How can I learn to cook?", "How do I write a good email?",
	"How do I keep a journal?",
	// tldr
	"What is the history of the Roman Empire?", "How does the stock market work?", "What is climate change?",
	"What is the theory of evolution?", "How does a computer work?", "What is the French Revolution?",
	"How do elections work?", "What is quantum physics?", "How does the immune system work?",
	"What is the Industrial Revolution?", "How do solar panels work?", "What is artificial intelligence?",
	"How does a car engine work?", "What is the Renaissance?", "How do earthquakes happen?",
	"What is cryptocurrency?", "How does the human brain learn?", "What is the Cold War?",
	"How do hurricanes form?", "What is DNA?", "How does a nuclear power plant work?",
	"What is the economy?", "How does GPS work?", "What are the causes of World War I?",
	"How does recycling work?", "What is the solar system?", "How do antibiotics work?", "What is social media?",
	// french
	"What is your favorite season and why?", "Describe a beautiful city.", "What is a good meal for dinner?",
	"Tell me about the ocean.", "What do cats like to do?", "Describe a sunny day at the beach.",
	"What is a good hobby?", "Tell me about the moon.", "What is music?", "Describe a forest.",
	"What is friendship?", "Tell me about trees.", "What is a good gift for a friend?", "Describe your ideal house.",
	"What is bread made of?", "Tell me about the mountains.", "What is a library?", "Describe a rainy day.",
	"What is a family?", "Tell me about the sun.", "What do dogs eat?", "Describe a garden in spring.",
	"What is a school?", "Tell me about rivers.", "What is chocolate?", "Describe a train journey.",
	"What is a good breakfast?", "Tell me about birds.",
}
