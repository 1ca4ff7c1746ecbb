package loop

import (
	"context"
	"fmt"
	"sync"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/rl"
)

// Fact is a retention question and the words that make an answer correct
// (rl.Fact: the gate's matcher is the benchmark's).
type Fact = rl.Fact

// DefaultFacts is the promotion gate's retention set: simple facts a small
// instruct model (SmolLM2-135M-Instruct) answers right at temperature 0.
// Only the facts the served base model gets right are checked. A version
// may answer in another style or language (a user may have asked for
// French), so each fact's answer counts in the languages a user is likely
// to ask for (English, French, Spanish, German, Italian, Portuguese), and
// with or without its accents (rl.Fact.Correct): "Le capital de l'Egypte
// est Caire." is right, and a gate that refused it pushed a right French
// answer down (BENCHMARKS.md, french seed 3).
var DefaultFacts = []Fact{
	{Question: "What is the capital of France?", Accept: []string{"Paris", "Parigi"}},
	{Question: "What is the capital of Japan?", Accept: []string{"Tokyo", "Tokio", "Tóquio"}},
	{Question: "What is the capital of Germany?", Accept: []string{"Berlin", "Berlino"}},
	{Question: "What is the capital of Italy?", Accept: []string{"Rome", "Roma", "Rom"}},
	{Question: "What is the capital of Egypt?", Accept: []string{"Cairo", "Caire", "Kairo"}},
	{Question: "What is the capital of Russia?", Accept: []string{"Moscow", "Moscou", "Moscú", "Moskau", "Mosca"}},
	{Question: "What is 2 plus 2?", Accept: []string{"4", "four", "quatre", "cuatro", "vier", "quattro", "quatro"}},
	{Question: "How many days are in a week?", Accept: []string{"7", "seven", "sept", "siete", "sieben", "sette", "sete"}},
	{Question: "What color is the sky on a clear day?", Accept: []string{"blue", "bleu", "azul", "blau", "blu", "azzurro"}},
	{Question: "Who wrote Romeo and Juliet?", Accept: []string{"Shakespeare"}},
	{Question: "What is the opposite of hot?", Accept: []string{"cold", "froid", "frío", "kalt", "freddo"}},
	{Question: "What is the largest ocean on Earth?", Accept: []string{"Pacific", "Pacifique", "Pacífico", "Pazifik"}},
	{Question: "What language is spoken in Spain?", Accept: []string{"Spanish", "espagnol", "español", "castellano", "Spanisch", "spagnolo", "espanhol"}},
	{Question: "What is the chemical symbol for water?", Accept: []string{"H2O"}},
	{Question: "What planet do we live on?", Accept: []string{"Earth", "Terre", "Tierra", "Erde", "Terra"}},
	{Question: "How many legs does a spider have?", Accept: []string{"8", "eight", "huit", "ocho", "acht", "otto", "oito"}},
}

// DefaultOpen are the gate's open questions (`--gate-loops`): how-to
// questions answered in a few sentences, where a version that learned to
// end with a phrase but not to stop after it shows the loop a one-line fact
// does not. Disjoint from the retention facts, the rehearsal anchors and
// the bench personas' prompts (TestOpenDisjoint).
var DefaultOpen = []string{
	"How do I make a cup of tea?",
	"How do I tie a tie?",
	"How can I get better at public speaking?",
	"How do I fold a fitted sheet?",
	"How do I clean white sneakers?",
	"How can I remember people's names?",
	"How do I paint a room?",
	"How do I teach a puppy to sit?",
}

// OpenTopics are the words of each open question's topic, in English and
// the languages the retention facts accept (French, Spanish, German,
// Italian, Portuguese), whole words: an answer that names none of them
// does not answer (`--gate-answers`), in whatever language the person
// asked for. A refusal or an "As an AI" names none.
var OpenTopics = map[string][]string{
	"How do I make a cup of tea?": {"tea", "teas", "teabag", "tea bag", "kettle", "steep", "thé", "théière", "infusion", "infusión",
		"Tee", "Teebeutel", "chá", "bolsita"},
	"How do I tie a tie?": {"tie", "ties", "tying", "necktie", "knot", "knots", "cravate", "nœud", "noeud", "corbata", "nudo",
		"Krawatte", "Knoten", "cravatta", "nodo", "gravata", "nó"},
	"How can I get better at public speaking?": {"speaking", "speech", "speeches", "speaker", "audience", "public", "presentation",
		"discours", "parler", "público", "discurso", "hablar", "Rede", "Publikum", "sprechen", "pubblico", "discorso", "parlare", "falar"},
	"How do I fold a fitted sheet?": {"sheet", "sheets", "fold", "folding", "corners", "drap", "plier", "coins", "sábana", "doblar",
		"esquinas", "Laken", "Spannbettlaken", "falten", "lenzuolo", "piegare", "lençol", "dobrar"},
	"How do I clean white sneakers?": {"sneakers", "sneaker", "shoes", "shoe", "clean", "cleaning", "baskets", "chaussures", "nettoyer",
		"zapatillas", "limpiar", "Turnschuhe", "Schuhe", "reinigen", "scarpe", "pulire", "tênis", "limpar"},
	"How can I remember people's names?": {"names", "name", "remember", "remembering", "memory", "noms", "nom", "souvenir", "mémoire",
		"nombres", "nombre", "recordar", "memoria", "Namen", "Name", "merken", "Gedächtnis", "nomi", "ricordare", "nomes", "lembrar"},
	"How do I paint a room?": {"paint", "painting", "walls", "wall", "room", "peinture", "peindre", "murs", "pièce", "pintar", "pintura",
		"paredes", "habitación", "streichen", "Farbe", "Wände", "Zimmer", "dipingere", "pittura", "pareti", "stanza", "parede", "quarto"},
	"How do I teach a puppy to sit?": {"puppy", "puppies", "dog", "sit", "treat", "chiot", "chien", "assis", "cachorro", "perro", "sentarse",
		"Welpe", "Hund", "Sitz", "cucciolo", "cane", "seduto", "filhote", "cão", "sentar"},
}

// OpenProbes asks eng's base weights each question at temperature 0, to
// maxTokens, and keeps as an open probe each one the base model answers
// without looping (a loop the base model makes is no regression). A probe
// gets its question's topic words (topics, e.g. OpenTopics) as Accept when
// the base answer names one of them (an answer the base model did not give
// is no regression either).
func OpenProbes(ctx context.Context, eng engine.Engine, questions []string, topics map[string][]string, maxTokens int) ([]rl.Probe, error) {
	f := eng.Format()
	prompts, answers, err := baseAnswers(ctx, eng, f, "open question", questions, maxTokens)
	if err != nil {
		return nil, err
	}
	var out []rl.Probe
	for i, q := range questions {
		text := f.Decode(answers[i])
		if rl.Loops(text) {
			continue
		}
		p := rl.Probe{Name: q, PromptIDs: prompts[i]}
		if topic := (rl.Fact{Accept: topics[q]}); topic.Correct(text) {
			p.Accept = topic.Accept
		}
		out = append(out, p)
	}
	return out, nil
}

// retentionAnswerTokens bounds the base model's answer to a fact.
const retentionAnswerTokens = 40

// RetentionProbes asks eng's base weights each fact at temperature 0 and
// keeps, for those it answers right, the answer up to the first accepted
// word: the prompt, the prefix before the word, and the word's tokens.
func RetentionProbes(ctx context.Context, eng engine.Engine, facts []Fact) ([]rl.Probe, error) {
	f := eng.Format()
	questions := make([]string, len(facts))
	for i, fact := range facts {
		questions[i] = fact.Question
	}
	prompts, answers, err := baseAnswers(ctx, eng, f, "retention fact", questions, retentionAnswerTokens)
	if err != nil {
		return nil, err
	}
	var out []rl.Probe
	for i, fact := range facts {
		if p := probe(f, fact, prompts[i], answers[i]); p != nil {
			out = append(out, *p)
		}
	}
	return out, nil
}

// probe is fact's probe from the base model's answer ids to its prompt, or
// nil when that answer does not name the fact.
func probe(f engine.Format, fact Fact, prompt, ids []int32) *rl.Probe {
	answer := f.Decode(ids)
	start, end := fact.Find(answer)
	if start < 0 {
		return nil // the base model does not know it: nothing to keep
	}
	// The tokens that cover the word: from the one whose text runs past the
	// word's start to the one that reaches its end.
	first, last := -1, -1
	for i := range ids {
		n := len(f.Decode(ids[:i+1]))
		if first < 0 && n > start {
			first = i
		}
		if n >= end {
			last = i
			break
		}
	}
	if first < 0 || last < first {
		return nil
	}
	return &rl.Probe{Name: fact.Question, PromptIDs: prompt, PrefixIDs: ids[:first], AnswerIDs: ids[first : last+1], Accept: fact.Accept}
}

// baseAnswers asks every question at once (the engine batches concurrent
// generations) and returns each one's rendered prompt and base answer, as
// baseAnswer does; a failure names the question as what (a "retention
// fact", an "open question", …).
func baseAnswers(ctx context.Context, eng engine.Engine, f engine.Format, what string, questions []string, maxTokens int) (prompts, answers [][]int32, err error) {
	prompts, answers = make([][]int32, len(questions)), make([][]int32, len(questions))
	errs := make([]error, len(questions))
	var wg sync.WaitGroup
	for i, q := range questions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			prompts[i], answers[i], errs[i] = baseAnswer(ctx, eng, f, q, maxTokens)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, nil, fmt.Errorf("%s %q: %w", what, questions[i], err)
		}
	}
	return prompts, answers, nil
}

// baseAnswer is the base model's greedy answer to one question asked alone
// (as the gate and the rehearsal anchors ask): the rendered prompt's ids
// and up to maxTokens answer ids, the stop token left out.
func baseAnswer(ctx context.Context, eng engine.Engine, f engine.Format, question string, maxTokens int) (prompt, ids []int32, err error) {
	text, err := f.Render([]chat.Message{{Role: chat.RoleUser, Content: question}}, nil, engine.RenderOptions{AddGenerationPrompt: true})
	if err != nil {
		return nil, nil, err
	}
	prompt = f.Encode(text)
	stop := f.StopIDs()
	_, err = eng.Generate(ctx, engine.GenerateRequest{PromptIDs: prompt, MaxTokens: maxTokens, Adapter: engine.AdapterBase},
		func(t engine.Token) error {
			for _, s := range stop {
				if t.ID == s {
					return engine.ErrStop
				}
			}
			ids = append(ids, t.ID)
			return nil
		})
	if err != nil {
		return nil, nil, err
	}
	return prompt, ids, nil
}
