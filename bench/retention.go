package bench

import "regexp"

// Fact is a retention question with the answers that count as correct:
// the answer is correct when any of Accept matches it as a whole word
// (case-insensitive).
type Fact struct {
	Question string
	Accept   []string
}

// Correct reports whether answer contains one of the accepted answers as a
// whole word.
func (f Fact) Correct(answer string) bool {
	for _, a := range f.Accept {
		re := regexp.MustCompile(`(?i)(^|[^\pL\pN])` + regexp.QuoteMeta(a) + `($|[^\pL\pN])`)
		if re.MatchString(answer) {
			return true
		}
	}
	return false
}

// Retention is the retention set: simple facts the demo model
// (SmolLM2-135M-Instruct) answers correctly at temperature 0 before any
// training (checked by `clawrl bench learn`, which reports the base model's
// score next to every version's). Training on a persona must not lose them.
// The French name of an answer counts too: a user who asked for French
// answers and is told "Londres" was told the fact.
var Retention = []Fact{
	{"What is the capital of France?", []string{"Paris"}},
	{"What is the capital of Japan?", []string{"Tokyo"}},
	{"What is the capital of Germany?", []string{"Berlin"}},
	{"What is the capital of England?", []string{"London", "Londres"}},
	{"What is the capital of Russia?", []string{"Moscow", "Moscou"}},
	{"What is the capital of China?", []string{"Beijing", "Pékin"}},
	{"What is the capital of Egypt?", []string{"Cairo", "Le Caire"}},
	{"What is the capital of Canada?", []string{"Ottawa"}},
	{"What is 2 plus 2?", []string{"4", "four", "quatre"}},
	{"How many days are in a week?", []string{"7", "seven", "sept"}},
	{"What color is the sky on a clear day?", []string{"blue", "bleu"}},
	{"Who wrote Romeo and Juliet?", []string{"Shakespeare"}},
	{"What is the opposite of hot?", []string{"cold", "froid"}},
	{"What is the chemical symbol for water?", []string{"H2O"}},
	{"What is the largest ocean on Earth?", []string{"Pacific", "Pacifique"}},
	{"What language is spoken in Spain?", []string{"Spanish", "espagnol"}},
}
