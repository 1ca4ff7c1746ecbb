package bench

import "github.com/clawrl/clawrl/rl"

// Fact is a retention question with the answers that count as correct,
// judged by the promotion gate's own matcher (rl.Fact.Correct): an answer is
// correct when any of Accept appears in it as a whole word
// (case-insensitive).
type Fact = rl.Fact

// Retention is the retention set: simple facts the demo model
// (SmolLM2-135M-Instruct) answers correctly at temperature 0 before any
// training (checked by `clawrl bench learn`, which reports the base model's
// score next to every version's). Training on a persona must not lose them.
// The French name of an answer counts too: a user who asked for French
// answers and is told "Londres" was told the fact. So does Spain's language
// by its own name ("español"), which a French-trained student answered.
var Retention = []Fact{
	{Question: "What is the capital of France?", Accept: []string{"Paris"}},
	{Question: "What is the capital of Japan?", Accept: []string{"Tokyo"}},
	{Question: "What is the capital of Germany?", Accept: []string{"Berlin"}},
	{Question: "What is the capital of England?", Accept: []string{"London", "Londres"}},
	{Question: "What is the capital of Russia?", Accept: []string{"Moscow", "Moscou"}},
	{Question: "What is the capital of China?", Accept: []string{"Beijing", "Pékin"}},
	{Question: "What is the capital of Egypt?", Accept: []string{"Cairo", "Le Caire"}},
	{Question: "What is the capital of Canada?", Accept: []string{"Ottawa"}},
	{Question: "What is 2 plus 2?", Accept: []string{"4", "four", "quatre"}},
	{Question: "How many days are in a week?", Accept: []string{"7", "seven", "sept"}},
	{Question: "What color is the sky on a clear day?", Accept: []string{"blue", "bleu"}},
	{Question: "Who wrote Romeo and Juliet?", Accept: []string{"Shakespeare"}},
	{Question: "What is the opposite of hot?", Accept: []string{"cold", "froid"}},
	{Question: "What is the chemical symbol for water?", Accept: []string{"H2O"}},
	{Question: "What is the largest ocean on Earth?", Accept: []string{"Pacific", "Pacifique"}},
	{Question: "What language is spoken in Spain?", Accept: []string{"Spanish", "espagnol", "español"}},
}
