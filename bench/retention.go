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
// An answer counts in the languages a user is likely to ask for (English,
// French, Spanish, German, Italian, Portuguese) and with or without its
// accents: a user who asked for French answers and is told "Londres" was
// told the fact, and so was one told "Pekin".
var Retention = []Fact{
	{Question: "What is the capital of France?", Accept: []string{"Paris", "Parigi"}},
	{Question: "What is the capital of Japan?", Accept: []string{"Tokyo", "Tokio", "Tóquio"}},
	{Question: "What is the capital of Germany?", Accept: []string{"Berlin", "Berlino"}},
	{Question: "What is the capital of England?", Accept: []string{"London", "Londres", "Londra"}},
	{Question: "What is the capital of Russia?", Accept: []string{"Moscow", "Moscou", "Moscú", "Moskau", "Mosca"}},
	{Question: "What is the capital of China?", Accept: []string{"Beijing", "Pékin", "Peking", "Pechino", "Pequim"}},
	{Question: "What is the capital of Egypt?", Accept: []string{"Cairo", "Caire", "Kairo"}},
	{Question: "What is the capital of Canada?", Accept: []string{"Ottawa"}},
	{Question: "What is 2 plus 2?", Accept: []string{"4", "four", "quatre", "cuatro", "vier", "quattro", "quatro"}},
	{Question: "How many days are in a week?", Accept: []string{"7", "seven", "sept", "siete", "sieben", "sette", "sete"}},
	{Question: "What color is the sky on a clear day?", Accept: []string{"blue", "bleu", "azul", "blau", "blu", "azzurro"}},
	{Question: "Who wrote Romeo and Juliet?", Accept: []string{"Shakespeare"}},
	{Question: "What is the opposite of hot?", Accept: []string{"cold", "froid", "frío", "kalt", "freddo"}},
	{Question: "What is the chemical symbol for water?", Accept: []string{"H2O"}},
	{Question: "What is the largest ocean on Earth?", Accept: []string{"Pacific", "Pacifique", "Pacífico", "Pazifik"}},
	{Question: "What language is spoken in Spain?", Accept: []string{"Spanish", "espagnol", "español", "castellano", "Spanisch", "spagnolo", "espanhol"}},
}
